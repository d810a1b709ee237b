"""End to end in headless Chromium (Debian's ``chromium``, driven by Playwright): two
reviewers open their invite links, pass the qualification question, answer every item
with keyboard shortcuts (each review item's evidence appearing only once it is answered),
and ``labelaudit review results`` shows the verdicts."""

from __future__ import annotations

import pandas as pd
import pytest
from tests.browser import ARGS, CHROMIUM, needs_chromium

pytestmark = [needs_chromium, pytest.mark.heavy]
playwright_api = pytest.importorskip("playwright.sync_api",
                                     reason="the browser test needs the playwright package")
pytest.importorskip("uvicorn", reason="the review server needs the [review] extra")

from labelaudit.cli import main  # noqa: E402
from labelaudit.review import init_review  # noqa: E402


def test_two_reviewers_in_a_browser(tmp_path, scan, live_server, capsys):
    db = tmp_path / "review.sqlite"
    scan = scan.assign(evidence=[  # as a scan gives it for the flagged items
        {"toward": "neg", "against": label, "words": [{"term": f"why-{i}", "weight": 0.8,
                                                        "side": "text"}],
         "words_from": "tfidf", "neighbours": [], "duplicate_of": []} if flagged else None
        for i, label, flagged in zip(scan["id"], scan["label"], scan["flagged"], strict=True)])
    # 3 items, 2 reviewers each (both must agree), 1 qualification and 1 sentinel question
    store = init_review(scan, db, top=3, n_reviewers=2, n_qualification=1, n_sentinels=1,
                        sentinel_every=2, min_sentinels=1)
    items = store.items_frame().set_index("item_pk")
    classes = store.config.class_keys
    server = live_server(db)
    assert main(["review", "invite", "--db", str(db), "--name", "alice",
                 "--base-url", server.url]) == 0
    links = {"alice": capsys.readouterr().out.strip()}
    assert links["alice"].startswith(server.url + "/login?token=")
    links["bob"] = f"{server.url}/login?token={store.add_reviewer('bob')[1]}"

    def choose(name: str, item_pk: int) -> str:
        """The key to press: the known answer for known items; on review items position 0
        both relabel, position 1 both confirm, position 2 they split."""
        row = items.loc[item_pk]
        if row["kind"] != "review":
            label = row["known_label"]
        else:
            other = classes[1 - classes.index(row["given_label"])]
            label = {0: other, 1: row["given_label"],
                     2: row["given_label"] if name == "alice" else other}[row["position"]]
        return str(classes.index(label) + 1)

    dialogs: list[str] = []
    with playwright_api.sync_playwright() as pw:
        # one browser with a fresh profile; each reviewer starts without cookies
        context = pw.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=str(CHROMIUM), headless=True,
            args=ARGS, timeout=60_000)
        try:
            for name, link in links.items():
                context.clear_cookies()
                page = context.new_page()
                page.set_default_timeout(15_000)
                page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
                page.goto(link)
                # the link alone signs nobody in (no login CSRF): a button does, by POST
                assert page.locator("#login-name").inner_text() == name
                assert page.locator("#answer-form").count() == 0
                with page.expect_navigation():
                    page.click("#sign-in")
                assert page.url == server.url + "/"  # the token left the address bar
                seen = []
                for _ in range(10):
                    if page.locator("#answer-form").count() == 0:
                        break
                    item_pk = int(page.locator("article.item").get_attribute("data-item"))
                    text = page.inner_text("#item-text")
                    assert "<script>alert(" in text  # shown as text, not run
                    assert "Given label" not in page.content()  # blind mode
                    seen.append(items.loc[item_pk, "kind"])
                    why = f"why-{items.loc[item_pk, 'item_id']}"
                    assert why not in page.content()  # blind: not before the answer
                    with page.expect_navigation():
                        page.keyboard.press(choose(name, item_pk))
                    if seen[-1] == "review":  # after it, beside the next item or the end
                        assert why in page.inner_text("#answered-evidence")
                assert page.locator('#state[data-state="done"]').count() == 1
                assert "project" in page.inner_text("#progress")
                assert seen == ["qualification", "review", "review", "sentinel", "review"]
                page.close()
        finally:
            context.close()
    assert dialogs == []  # no script from the dataset ran

    out = tmp_path / "verdicts.csv"
    assert main(["review", "results", "--db", str(db), "--out", str(out), "--quiet"]) == 0
    verdicts = pd.read_csv(out)
    assert verdicts["id"].tolist() == ["d0", "d1", "d2"]
    assert verdicts["verdict"].tolist() == ["Correctable", "Non-Error", "Non-Agreement"]
    assert verdicts["n_votes"].tolist() == [2, 2, 2]
    given = scan.set_index("id")["label"]
    assert verdicts.loc[0, "majority_label"] != given["d0"]
