"""review push, pull and import when Label Studio, its address, the token or an export is
not what it should be: one line each (exit 1 from the CLI), the token never in it, and a
Label Studio project that another review database filled is refused rather than given
every item twice. The stand-in server is conftest's FakeLabelStudio."""

from __future__ import annotations

import json

import pytest

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.cli import main
from labelaudit.review import import_answers, init_review, pull_answers, push_items

TOKEN = "0123456789abcdef"  # the token the stand-in accepts (conftest: FakeLabelStudio.token)


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def cli(step: str, db, url: str, *extra: str) -> int:
    way = "--to" if step == "push" else "--from"
    return main(["review", step, "--db", str(db), way, "label-studio", "--url", url,
                 "--project", "Audit", *extra])


# -- answers that are not Label Studio's JSON ---------------------------------------------
@pytest.mark.parametrize(("answer", "said"), [
    ((200, "text/html", b"<!DOCTYPE html><html><body>Sign in</body></html>"),
     r"GET /api/projects\?page_size=1000 answered HTTP 200 with text/html, not JSON "
     r"\(it begins '<!DOCTYPE html><html>"),
    ((200, "application/json", b'{"count": 1, "results": [{"id": 1, "tit'),
     r"answered HTTP 200 with application/json, not JSON \(it begins '\{\"count\": 1"),
    ((200, "application/json", b'{"count": 1, "results": [{"id": 1}]}', 400),
     r"the answer to GET /api/projects\?page_size=1000 broke off \(IncompleteRead\)"),
    ((200, "application/json", b'{"detail": "this is not the API"}'),
     r"answered null where a list of projects was expected"),
    ((200, "application/json", b'[{"title": "no id"}]'),
     r"answered an object without a project id"),
])
def test_an_answer_that_is_not_the_api_is_one_line_with_a_hint(label_studio, project, answer,
                                                               said, capsys, monkeypatch):
    label_studio.answers["GET /api/projects?"] = answer
    with pytest.raises(InvalidInputError, match=said + r".*is http://127.0.0.1:\d+ the Label "
                       r"Studio root, the address its start page opens at"):
        push_items(project, url=label_studio.url, project="Audit", token=TOKEN)
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", TOKEN)
    for step in ("push", "pull"):
        assert cli(step, project.path, label_studio.url) == 1
        line = one_line(capsys.readouterr().err)
        assert line.startswith("labelaudit review: error: Label Studio at") and TOKEN not in line


def test_an_export_that_is_not_json_is_one_line(label_studio, project):
    push_items(project, url=label_studio.url, project="Audit", token=TOKEN)
    label_studio.answers["GET /api/projects/1/export"] = (200, "text/html", b"<html>oops")
    with pytest.raises(InvalidInputError, match=r"GET /api/projects/1/export\?exportType=JSON"
                       r"&download_all_tasks=true answered HTTP 200 with text/html, not JSON"):
        pull_answers(project, url=label_studio.url, project="Audit", token=TOKEN)


def test_a_wrong_address_404_names_the_url_tried_and_what_to_check(label_studio, project,
                                                                   capsys, monkeypatch):
    url = label_studio.url + "/label-studio/projects"
    with pytest.raises(InvalidInputError, match=(
            rf"GET {url}/api/projects\?page_size=1000 failed with HTTP 404 \(not found: "
            rf"{{\"detail\": \"Not found.\"}}\): check that {url} is the Label Studio root.*"
            "and that the project exists")):
        push_items(project, url=url, project="Audit", token=TOKEN)
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", TOKEN)
    assert cli("pull", project.path, url) == 1
    assert "HTTP 404" in one_line(capsys.readouterr().err)


# -- the token --------------------------------------------------------------------------
@pytest.mark.parametrize(("key", "said"), [
    ("0123456789\rabcdef", "contains a line break at position 11"),
    ("0123456789abcdef\r\nmore", "contains a line break at position 17"),
    ("  01234\t56789abcdef", "contains a tab at position 6"),
    ("0123 456789abcdef", "contains a space at position 5"),
    ("0123456789abcdéf", "contains a non-ASCII character at position 15"),
    ("01234567\x0089abcdef", "contains a control character at position 9"),
])
def test_a_token_with_a_control_or_non_ascii_character_is_refused_before_any_request(
        label_studio, project, key, said, capsys, monkeypatch):
    with pytest.raises(InvalidParameterError, match=f"the token {said}") as caught:
        push_items(project, url=label_studio.url, project="Audit", token=key)
    assert key.strip() not in str(caught.value) and "01234" not in str(caught.value)
    if "\x00" not in key:  # the environment cannot hold a NUL
        monkeypatch.setenv("LABEL_STUDIO_API_KEY", key)
        for step in ("push", "pull"):
            assert cli(step, project.path, label_studio.url) != 0
            out, err = capsys.readouterr()
            line = one_line(err)
            assert f"LABEL_STUDIO_API_KEY {said}" in line and "01234" not in out + err
        with pytest.raises(InvalidParameterError) as debug:  # --debug: the traceback
            cli("push", project.path, label_studio.url, "--debug")
        assert "01234" not in str(debug.value)
    assert label_studio.requests == []


def test_a_pasted_token_with_a_trailing_line_break_works(label_studio, project, monkeypatch,
                                                         capsys):
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", f" {TOKEN}\r\n")
    assert cli("push", project.path, label_studio.url) == 0
    assert set(label_studio.headers_seen) == {f"Token {TOKEN}"}
    assert TOKEN not in capsys.readouterr().err


def test_no_error_repeats_the_token(label_studio, project):
    label_studio.answers["GET /api/projects?"] = (
        500, "text/plain", f"crashed on header Authorization: Token {TOKEN}".encode())
    with pytest.raises(InvalidInputError, match=r"HTTP 500: crashed on header Authorization: "
                       r"Token \*\*\*$"):
        push_items(project, url=label_studio.url, project="Audit", token=TOKEN)
    label_studio.answers["GET /api/projects?"] = (200, "text/html", f"<p>{TOKEN}</p>".encode())
    with pytest.raises(InvalidInputError, match=r"it begins '<p>\*\*\*</p>'") as caught:
        push_items(project, url=label_studio.url, project="Audit", token=TOKEN)
    assert TOKEN not in str(caught.value)
    with pytest.raises(InvalidParameterError, match=r"url http://\.\.\.@127.0.0.1:\d+: put no user "
                       r"name or password in the address; the token goes in "
                       r"LABEL_STUDIO_API_KEY") as caught:
        push_items(project, url=label_studio.url.replace("//", "//me:s3cret@"), project="A",
                   token=TOKEN)
    assert "s3cret" not in str(caught.value)


def test_a_refresh_answer_without_an_access_token_is_one_line(label_studio, project):
    label_studio.answers["POST /api/token/refresh"] = (200, "application/json", b'{"ok": 1}')
    with pytest.raises(InvalidInputError, match=r"POST /api/token/refresh answered null where "
                       "an access token was expected"):
        push_items(project, url=label_studio.url, project="Audit", token="a.b.c")


@pytest.mark.parametrize("url", ["http://127.0.0.1:99999", "http://127.0.0.1:80 /",
                                 "http://:8080"])
def test_an_address_http_cannot_use_is_refused_in_one_line(project, url):
    with pytest.raises(InvalidParameterError, match=r"give the Label Studio address"):
        push_items(project, url=url, project="Audit", token=TOKEN)


# -- malformed tasks in an import or a pull ----------------------------------------------
def _task(**annotation) -> dict:
    return {"id": 4, "data": {"item_id": "d0", "kind": "review", "text": "t"},
            "annotations": [{"id": 7, "completed_by": 1, "was_cancelled": False,
                             "result": [{"from_name": "label", "to_name": "text",
                                         "type": "choices", "value": {"choices": ["pos"]}}],
                             **annotation}]}


BAD = {
    "result is a string": (_task(result="pos"),
                           "task id 4 (item d0), annotation id 7: its result is a string, "
                           "expected a list"),
    "a result entry is a string": (_task(result=["pos"]),
                                   "annotation id 7: a result entry is a string, expected an "
                                   "object"),
    "value is a list": (_task(result=[{"from_name": "label", "value": ["pos"]}]),
                        "annotation id 7: the value of its 'label' result is a list, expected "
                        "an object"),
    "choices is a string": (_task(result=[{"from_name": "label", "value": {"choices": "pos"}}]),
                            "the choices of its 'label' result is a string, expected a list"),
    "annotations is an object": ({**_task(), "annotations": {"id": 7}},
                                 "task id 4 (item d0): its annotations is an object, expected a "
                                 "list"),
    "an annotation is a number": ({**_task(), "annotations": [3]},
                                  "task id 4 (item d0), annotation #1: the annotation is a "
                                  "number, expected an object"),
    "data is a string": ({"id": 4, "data": "d0", "annotations": []},
                         "task id 4: its data is a string, expected an object"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_a_malformed_label_studio_export_is_one_line_naming_the_task(project, tmp_path, capsys,
                                                                     case):
    task, said = BAD[case]
    path = tmp_path / "export.json"
    path.write_text(json.dumps([task]), encoding="utf-8")
    before = path.read_bytes()
    with pytest.raises(InvalidInputError, match=f"^{path}: ") as caught:
        import_answers(project, path, source="label-studio")
    assert said in str(caught.value)
    assert main(["review", "import", "--db", str(project.path), str(path)]) == 1
    assert said in one_line(capsys.readouterr().err)
    assert path.read_bytes() == before


def test_a_pulled_task_of_another_shape_is_one_line_naming_it(label_studio, project):
    push_items(project, url=label_studio.url, project="Audit", token=TOKEN)
    label_studio.tasks[1][0]["annotations"] = [{"id": 9, "result": "neg"}]
    with pytest.raises(InvalidInputError, match=r"^Label Studio project 'Audit' at "
                       r"http://127.0.0.1:\d+: task id 1 \(item d0\), annotation id 9: its "
                       "result is a string, expected a list"):
        pull_answers(project, url=label_studio.url, project="Audit", token=TOKEN)


# -- a project another review database filled --------------------------------------------
def test_push_into_a_project_of_another_review_database_is_refused(label_studio, project, scan,
                                                                   tmp_path, capsys,
                                                                   monkeypatch):
    push_items(project, url=label_studio.url, project="Audit", token=TOKEN)
    marks = {t["data"]["review_db"] for t in label_studio.tasks[1]}
    assert marks == {project.review_id} and len(label_studio.tasks[1]) == 9
    other = init_review(scan, tmp_path / "other.sqlite", top=6, n_reviewers=3,
                        n_qualification=2, n_sentinels=3)
    assert other.review_id != project.review_id
    for call in (push_items, pull_answers):
        with pytest.raises(InvalidInputError, match=(
                r"Label Studio project 'Audit' \(id 1\) at http://127.0.0.1:\d+ holds 9 tasks "
                r"\(ids 1, 2, 3\.\.\.\) that review database other.sqlite did not send: it "
                "belongs to another review")):
            call(other, url=label_studio.url, project="Audit", token=TOKEN)
    assert len(label_studio.tasks[1]) == 9  # nothing sent twice
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", TOKEN)
    assert cli("push", other.path, label_studio.url) == 1
    assert "push to a new project: give another title" in one_line(
        capsys.readouterr().err)
    assert cli("push", other.path, label_studio.url, "--project", "Audit 2") == 0
    assert set(label_studio.projects) == {1, 2} and len(label_studio.tasks[2]) == 9


def test_push_refuses_unmarked_tasks_it_did_not_send(label_studio, project, tmp_path):
    """Tasks imported by hand (from `review export`) or by another database before tasks
    were marked: pushing would add each item a second time."""
    push_items(project, url=label_studio.url, project="Audit", token=TOKEN)
    label_studio.tasks[1].append({"id": 10, "annotations": [],
                                  "data": {"item_id": "x1", "kind": "review", "text": "t"}})
    with pytest.raises(InvalidInputError, match=r"holds 1 task \(id 10\) that review database "
                       "review.sqlite did not send"):
        push_items(project, url=label_studio.url, project="Audit", token=TOKEN)


def test_push_after_a_lost_record_sends_nothing_twice(label_studio, project):
    """A push that sent its tasks but died before recording it: the marks say they are ours."""
    push_items(project, url=label_studio.url, project="Audit", token=TOKEN)
    project.set_setting("label_studio", {})
    again = push_items(project, url=label_studio.url, project="Audit", token=TOKEN)
    assert again.n_sent == 0 and again.n_already == 9 and len(label_studio.tasks[1]) == 9
