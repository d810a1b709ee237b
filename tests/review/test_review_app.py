"""The web app through FastAPI's test client: tokens, CSRF, double answers, escaping."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("fastapi", reason="the review web app needs the [review] extra")
from fastapi.testclient import TestClient  # noqa: E402

from labelaudit.review import create_app, init_review, review_results  # noqa: E402
from labelaudit.review._app import COOKIE  # noqa: E402


@pytest.fixture
def store(tmp_path, scan):
    return init_review(scan, tmp_path / "r.sqlite", top=3, n_reviewers=2, n_qualification=1,
                       n_sentinels=1, sentinel_every=10, title="News <review>")


@pytest.fixture
def client(store):
    return TestClient(create_app(store))


def login_form(html):
    return re.search(r'id="login-form".*?name="csrf" value="([0-9a-f]+)"', html, re.S).group(1)


def login(client, token):
    """Open the invite link, then press its sign-in button (a POST with the form's CSRF)."""
    landing = client.get("/login", params={"token": token}, follow_redirects=False)
    assert landing.status_code == 200 and COOKIE not in landing.cookies
    response = client.post("/login", data={"token": token, "csrf": login_form(landing.text)},
                           follow_redirects=False)
    assert response.status_code == 303
    return response


def form_of(html):
    item = re.search(r'name="item" value="(\d+)"', html).group(1)
    csrf = re.search(r'id="answer-form".*?name="csrf" value="([0-9a-f]+)"', html, re.S).group(1)
    return {"item": item, "csrf": csrf}


def known_answer(store, item_pk):
    items = store.items_frame().set_index("item_pk")
    row = items.loc[int(item_pk)]
    return row["known_label"] if isinstance(row["known_label"], str) else row["given_label"]


@pytest.mark.parametrize("path", ["/", "/admin"])
def test_no_page_without_a_token(client, path):
    response = client.get(path)
    assert response.status_code == 401
    assert "personal review link" in response.text
    bad = client.get(path, cookies={COOKIE: "forged-token"})
    assert bad.status_code == 401
    assert client.get("/login", params={"token": "forged"}).status_code == 401
    assert client.post("/login", data={"token": "forged", "csrf": "x"}).status_code == 401
    assert client.post("/answer", data={"item": "1", "answer": "neg"}).status_code == 401


def test_login_sets_a_strict_http_only_cookie_and_drops_the_token_from_the_url(store, client):
    _, token = store.add_reviewer("alice")
    response = login(client, token)
    assert response.headers["location"] == "/"
    cookie = next(c for c in response.headers.get_list("set-cookie")
                  if c.startswith(COOKIE + "=")).lower()
    assert "httponly" in cookie and "samesite=strict" in cookie
    page = client.get("/")
    assert page.status_code == 200
    assert token not in page.text
    for header in ("content-security-policy", "x-frame-options", "x-content-type-options",
                   "referrer-policy"):
        assert header in page.headers
    assert "script-src 'self'" in page.headers["content-security-policy"]


def test_bearer_token_works_too(store, client):
    _, token = store.add_reviewer("alice")
    page = client.get("/", headers={"Authorization": f"Bearer {token}"})
    assert page.status_code == 200 and "Qualification test" in page.text


def test_dataset_html_is_escaped(store, client):
    _, token = store.add_reviewer("alice")
    login(client, token)
    html = client.get("/").text
    assert "<script>alert(" not in html
    assert "&lt;script&gt;alert(" in html and "&lt;b&gt;bold&lt;/b&gt; &amp;" in html
    assert "News &lt;review&gt;" in html
    # the only script is the static file
    assert re.findall(r"<script[^>]*>", html) == ['<script src="/static/review.js" defer>']


def test_answer_flow_csrf_and_double_answers(store, client):
    _, token = store.add_reviewer("alice")
    login(client, token)
    html = client.get("/").text
    assert "Qualification test: question 1 of 1" in html
    form = form_of(html)
    answer = known_answer(store, form["item"])
    # no CSRF token, a wrong one, a foreign Origin: refused, nothing recorded
    assert client.post("/answer", data={"item": form["item"], "answer": answer}).status_code == 403
    assert client.post("/answer", data={**form, "csrf": "0" * 64,
                                        "answer": answer}).status_code == 403
    foreign = client.post("/answer", data={**form, "answer": answer},
                          headers={"Origin": "http://evil.example"})
    assert foreign.status_code == 403
    assert store.answers_frame().empty
    ok = client.post("/answer", data={**form, "answer": answer}, follow_redirects=False)
    # blind: the next page may show the answered item's evidence
    assert ok.status_code == 303 and ok.headers["location"] == f"/?after={form['item']}"
    again = client.post("/answer", data={**form, "answer": answer}, follow_redirects=False)
    assert again.status_code == 409 and "already answered" in again.text
    assert len(store.answers_frame()) == 1
    # now a review item; its CSRF token does not fit another item
    html = client.get("/").text
    assert "Qualification" not in html
    form2 = form_of(html)
    assert form2["item"] != form["item"]
    crossed = client.post("/answer", data={"item": form2["item"], "csrf": form["csrf"],
                                           "answer": "neg"})
    assert crossed.status_code == 403
    bad_option = client.post("/answer", data={**form2, "answer": "<b>maybe</b>"})
    assert bad_option.status_code == 400 and "<b>maybe</b>" not in bad_option.text


def test_a_reviewer_cannot_answer_an_item_they_were_not_shown(store, client):
    from labelaudit.review._app import csrf_token, hash_token

    reviewer, token = store.add_reviewer("alice", role="reviewer")
    login(client, token)
    form = form_of(client.get("/").text)
    client.post("/answer", data={**form, "answer": known_answer(store, form["item"])})
    items = store.items_frame()
    hidden = int(items.loc[(items["kind"] == "review") & (items["position"] == 2), "item_pk"]
                 .iloc[0])
    csrf = csrf_token(store.secret, reviewer.reviewer_pk, hash_token(token), f"answer:{hidden}")
    response = client.post("/answer", data={"item": hidden, "csrf": csrf, "answer": "neg"})
    assert response.status_code == 403 and "not shown" in response.text


def test_two_reviewers_complete_the_project_and_the_admin_sees_it(store, tmp_path):
    tokens = [store.add_reviewer(name)[1] for name in ("alice", "bob")]
    _, admin_token = store.add_reviewer("boss", role="admin")
    for token in tokens:
        client = TestClient(create_app(store))
        login(client, token)
        for _ in range(20):
            html = client.get("/").text
            if 'id="answer-form"' not in html:
                break
            form = form_of(html)
            answer = known_answer(store, form["item"])
            posted = client.post("/answer", data={**form, "answer": answer},
                                 follow_redirects=False)
            assert posted.status_code == 303
        assert 'data-state="done"' in html
        # a reviewer is not an admin
        assert client.get("/admin").status_code == 403
    results = review_results(store)
    assert (results.items["verdict"] == "Non-Error").all()
    assert results.items["n_votes"].tolist() == [2, 2, 2]
    admin = TestClient(create_app(store))
    assert login(admin, admin_token).headers["location"] == "/admin"
    page = admin.get("/admin")
    assert page.status_code == 200
    assert 'data-verdict="Non-Error">3<' in page.text
    assert "alice" in page.text and "bob" in page.text
    assert "&lt;script&gt;" in page.text and "<script>alert" not in page.text
    assert admin.get("/", follow_redirects=False).status_code == 303


def test_logout_needs_csrf_and_clears_the_cookie(store, client):
    _, token = store.add_reviewer("alice")
    login(client, token)
    html = client.get("/").text
    csrf = re.search(r'action="/logout">\s*<input type="hidden" name="csrf" value="([0-9a-f]+)"',
                     html).group(1)
    assert client.post("/logout", data={"csrf": "x"}).status_code == 403
    out = client.post("/logout", data={"csrf": csrf})
    assert out.status_code == 200
    assert client.get("/").status_code == 401


def test_show_label_mode(tmp_path, scan):
    store = init_review(scan, tmp_path / "s.sqlite", top=2, n_reviewers=1, show_label=True)
    _, token = store.add_reviewer("alice")
    client = TestClient(create_app(store))
    login(client, token)
    html = client.get("/").text
    assert 'id="given-label"' in html
    blind = init_review(scan, tmp_path / "b.sqlite", top=2, n_reviewers=1)
    _, token = blind.add_reviewer("alice")
    client = TestClient(create_app(blind))
    login(client, token)
    assert 'id="given-label"' not in client.get("/").text


def test_a_replaced_token_stops_working(store, client):
    _, old = store.add_reviewer("alice")
    login(client, old)
    store.add_reviewer("alice", new_token=True)
    assert client.get("/").status_code == 401


def test_a_missing_extra_names_it(store, monkeypatch, capsys):
    import sys

    from labelaudit import MissingExtraError
    from labelaudit.cli import main

    monkeypatch.setitem(sys.modules, "fastapi", None)
    with pytest.raises(MissingExtraError, match=r"labelaudit\[review\]"):
        create_app(store)
    monkeypatch.setitem(sys.modules, "uvicorn", None)
    assert main(["review", "serve", "--db", str(store.path)]) == 1
    err = capsys.readouterr().err
    assert "pip install 'labelaudit[review]'" in err and "Traceback" not in err
