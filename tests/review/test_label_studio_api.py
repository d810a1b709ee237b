"""review push and pull against a stand-in for Label Studio's REST API (a local HTTP server
speaking the endpoints and JSON that Label Studio 1.23.2 answers with, as the live test in
test_label_studio_live.py checks against the real server): push is idempotent, pull never
stores an answer twice, and an unreachable address, a wrong token or a changed labelling
config are one line each."""

from __future__ import annotations

import time

import pandas as pd
import pytest

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.cli import main
from labelaudit.review import init_review, pull_answers, push_items, review_results

TOKEN = "0123456789abcdef"  # the token the stand-in accepts (conftest: label_studio.token)


@pytest.fixture
def server(label_studio):
    """The stand-in's address (``label_studio``: its class, holding what it was sent)."""
    return label_studio.url


@pytest.fixture
def project(tmp_path):
    frame = pd.DataFrame({"id": range(30), "text": [f"text {i}" for i in range(30)],
                          "label": ["pos", "neg"] * 15, "suggested_label": ["neg", "pos"] * 15,
                          "rank": range(1, 31), "flagged": [i < 6 for i in range(30)]})
    return init_review(frame, tmp_path / "review.sqlite", top=6, n_reviewers=5, n_sentinels=2)


def _annotate(task_list: list[dict], answers: dict[str, list[str]]) -> None:
    """Each listed item's task gets one annotation per answer, from users 1, 2..."""
    for task in task_list:
        for user, answer in enumerate(answers.get(task["data"]["item_id"], []), start=1):
            task["annotations"].append({
                "id": len(task["annotations"]) + 1, "completed_by": user,
                "was_cancelled": False, "lead_time": 3.5,
                "created_at": "2026-11-26T21:02:00.961251Z",
                "result": [{"from_name": "label", "to_name": "text", "type": "choices",
                            "value": {"choices": [answer]}}]})


def test_push_creates_the_project_once_and_pull_records_each_answer_once(server, project,
                                                                          label_studio,
                                                                          monkeypatch):
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", TOKEN)
    first = push_items(project, url=server, project="IMDB audit")
    assert first.created and first.n_sent == 8 and first.project_id == 1  # 6 + 2 sentinels
    created = label_studio.projects[1]
    assert created["maximum_annotations"] == 5 and '<Choice value="unsure"' in \
        created["label_config"]
    again = push_items(project, url=server, project="IMDB audit")
    assert not again.created and again.n_sent == 0 and again.n_already == 8
    assert len(label_studio.tasks[1]) == 8
    kinds = {t["data"]["kind"] for t in label_studio.tasks[1]}
    assert kinds == {"review", "sentinel"}
    _annotate(label_studio.tasks[1], {"0": ["neg"] * 5, "1": ["neg", "neg", "pos", "pos",
                                                              "unsure"]})
    report = pull_answers(project, url=server, project="IMDB audit")
    assert report.n_recorded == 10 and report.n_reviewers == 5
    repeat = pull_answers(project, url=server, project="IMDB audit")
    assert repeat.n_recorded == 0 and repeat.n_duplicate == 10
    verdicts = review_results(project).to_frame().set_index("id")
    assert verdicts.loc["0", "verdict"] == "Correctable"  # 5 of 5 say neg, given pos
    assert verdicts.loc["1", "verdict"] == "Non-Agreement"  # no 3 of 5


def test_a_personal_access_token_is_exchanged_for_an_access_token(server, project,
                                                                  label_studio):
    push_items(project, url=server, project="T", token="a.b.c")
    assert "POST /api/token/refresh" in label_studio.requests


def test_bad_address_token_and_changed_config_are_one_line(server, project, monkeypatch,
                                                           label_studio):
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", TOKEN)
    started = time.perf_counter()
    with pytest.raises(InvalidInputError, match=r"cannot reach Label Studio at "
                                                r"http://127.0.0.1:9 .*is it running"):
        push_items(project, url="http://127.0.0.1:9", project="T")
    assert time.perf_counter() - started < 10
    with pytest.raises(InvalidInputError, match=r"refused the token \(401\): check "
                                                r"LABEL_STUDIO_API_KEY"):
        push_items(project, url=server, project="T", token="wrong")
    with pytest.raises(InvalidParameterError, match="give the Label Studio address"):
        push_items(project, url="localhost:8080", project="T")
    monkeypatch.delenv("LABEL_STUDIO_API_KEY")
    with pytest.raises(InvalidParameterError, match="set LABEL_STUDIO_API_KEY"):
        push_items(project, url=server, project="T")
    push_items(project, url=server, project="T", token=TOKEN)
    label_studio.projects[1]["label_config"] = (
        '<View><Text name="text" value="$text"/><Choices name="label" toName="text">'
        '<Choice value="neg"/><Choice value="pos"/></Choices></View>')
    with pytest.raises(InvalidInputError, match=r"was changed: its labelling config lacks "
                                                r"the answers 'none of these', 'unsure'"):
        pull_answers(project, url=server, project="T", token=TOKEN)
    with pytest.raises(InvalidInputError, match="no project titled 'Other': push it first"):
        pull_answers(project, url=server, project="Other", token=TOKEN)


def test_cli_push_and_pull(server, project, monkeypatch, capsys, label_studio):
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", TOKEN)
    db = str(project.path)
    assert main(["review", "push", "--db", db, "--to", "label-studio", "--url", server,
                 "--project", "Audit"]) == 0
    assert "created Label Studio project 'Audit' (id 1)" in capsys.readouterr().err
    _annotate(label_studio.tasks[1], {"2": ["pos"] * 3})
    assert main(["review", "pull", "--db", db, "--from", "label-studio", "--url", server,
                 "--project", "Audit"]) == 0
    assert "3 answers recorded from 3 reviewers" in capsys.readouterr().err
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", "wrong")
    assert main(["review", "pull", "--db", db, "--from", "label-studio", "--url", server,
                 "--project", "Audit"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "refused the token" in err[0]
