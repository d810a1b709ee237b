"""The project store and the protocol's bookkeeping: qualification, sentinels, N reviewers."""

from __future__ import annotations

import sqlite3

import pandas as pd
import pytest

from labelaudit import InvalidInputError, InvalidParameterError
from labelaudit.review import (
    ReviewStore,
    init_review,
    next_item,
    progress,
    record_answer,
    review_results,
)


def truth(item):
    """An honest reviewer: the known answer where there is one, else the given label."""
    return item["known_label"] or item["given_label"]


# -- init -------------------------------------------------------------------------------
def test_init_selects_the_most_suspect_and_the_least_suspect_as_known(project, scan):
    items = project.items_frame()
    review = items[items["kind"] == "review"].sort_values("position")
    assert review["item_id"].tolist() == scan["id"].tolist()[:6]
    # known items: the bottom of the ranking, least suspect first; labels taken as correct
    quals = items[items["kind"] == "qualification"].sort_values("position")
    sentinels = items[items["kind"] == "sentinel"].sort_values("position")
    assert quals["item_id"].tolist() == ["d39", "d38"]
    assert sentinels["item_id"].tolist() == ["d37", "d36", "d35"]
    assert (sentinels["known_label"] == sentinels["given_label"]).all()
    config = project.config
    assert (config.n_reviewers, config.majority, config.show_label) == (3, 2, False)
    assert config.classes == ["neg", "pos"]
    assert config.options == ["neg", "pos", "none of these", "unsure"]
    assert config.n_flagged == 10 and config.n_rows == 40


def test_init_is_wal_and_refuses_to_overwrite(project, scan):
    conn = sqlite3.connect(project.path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()
    with pytest.raises(InvalidInputError, match="already exists"):
        init_review(scan, project.path, top=3)
    again = init_review(scan, project.path, top=3, overwrite=True)
    assert len(again.items_frame()) == 3


def test_init_orders_by_rank_and_defaults_to_flagged(tmp_path, scan):
    shuffled = scan.sample(frac=1.0, random_state=0)
    store = init_review(shuffled, tmp_path / "a.sqlite")
    review = store.items_frame().sort_values("position")
    assert review["item_id"].tolist() == [f"d{i}" for i in range(10)]
    assert review["rank"].tolist() == list(range(1, 11))


def test_init_random_sample_of_flagged(tmp_path, scan):
    store = init_review(scan, tmp_path / "a.sqlite", top=5, select="random", random_state=3)
    ids = store.items_frame()["item_id"].tolist()
    assert len(ids) == 5 and set(ids) <= {f"d{i}" for i in range(10)}
    again = init_review(scan, tmp_path / "b.sqlite", top=5, select="random", random_state=3)
    assert again.items_frame()["item_id"].tolist() == ids
    assert store.config.selection == "random"


def test_init_with_a_sentinels_file(tmp_path, scan):
    known = pd.DataFrame({"id": ["s1", "s2", "s3", "s4", "s5"], "text": list("abcde"),
                          "label": ["pos", "neg", "pos", "neg", "pos"]})
    store = init_review(scan, tmp_path / "a.sqlite", top=4, sentinels=known, n_qualification=2)
    items = store.items_frame()
    assert items.loc[items["kind"] == "qualification", "item_id"].tolist() == ["s1", "s2"]
    assert items.loc[items["kind"] == "sentinel", "item_id"].tolist() == ["s3", "s4", "s5"]
    with pytest.raises(InvalidInputError, match="sentinels file has 5 items"):
        init_review(scan, tmp_path / "b.sqlite", top=4, sentinels=known, n_sentinels=10)


def test_init_refuses_flagged_items_as_known_answers(tmp_path, scan_factory):
    truncated = scan_factory(12, n_flagged=12)  # a scan written with --top: all flagged
    with pytest.raises(InvalidInputError, match="flagged themselves"):
        init_review(truncated, tmp_path / "a.sqlite", top=5, n_sentinels=2)


@pytest.mark.parametrize(("change", "error", "match"), [
    (lambda s: s.drop(columns="text"), InvalidInputError, "lacks column 'text'"),
    (lambda s: s.assign(id="same"), InvalidInputError, "duplicate ids"),
    (lambda s: s.assign(text=[""] + s["text"].tolist()[1:]), InvalidInputError, "empty 'text'"),
    (lambda s: s.assign(label=["unsure"] + s["label"].tolist()[1:]), InvalidInputError,
     "reserves"),
])
def test_init_rejects_bad_scans(tmp_path, scan, change, error, match):
    with pytest.raises(error, match=match):
        init_review(change(scan), tmp_path / "a.sqlite", top=5)


def test_init_rejects_bad_options(tmp_path, scan):
    with pytest.raises(InvalidParameterError, match="more items than"):
        init_review(scan, tmp_path / "a.sqlite", top=41)
    with pytest.raises(InvalidParameterError, match="majority"):
        init_review(scan, tmp_path / "a.sqlite", top=4, n_reviewers=5, majority=2)
    with pytest.raises(InvalidParameterError, match="bottom of the scan"):
        init_review(scan, tmp_path / "a.sqlite", top=38, n_sentinels=5)
    with pytest.raises(InvalidParameterError, match="--top"):
        init_review(scan.drop(columns="flagged"), tmp_path / "a.sqlite")


# -- reviewers and the queue ------------------------------------------------------------
def test_tokens_are_stored_hashed(project):
    reviewer, token = project.add_reviewer("alice")
    raw = project.path.read_bytes()
    assert token.encode() not in raw
    assert project.reviewer_by_token(token) == reviewer
    assert project.reviewer_by_token("nope") is None and project.reviewer_by_token(None) is None
    with pytest.raises(InvalidInputError, match="already exists"):
        project.add_reviewer("alice")
    _, new = project.add_reviewer("alice", new_token=True)
    assert project.reviewer_by_token(token) is None
    assert project.reviewer_by_token(new).name == "alice"


def test_qualification_comes_first_then_sentinels_are_mixed_in(project, answer_until_done):
    alice, _ = project.add_reviewer("alice")
    assert alice.status == "qualifying"
    seen = answer_until_done(project, alice, truth)
    kinds = [k for k, _ in seen]
    assert kinds[:2] == ["qualification", "qualification"]
    # sentinel_every=2: a sentinel after every two review answers
    assert kinds[2:] == ["review", "review", "sentinel"] * 2 + ["review", "review"]
    assert project.reviewer(alice.reviewer_pk).status == "active"


def test_failing_the_qualification(project):
    bob, _ = project.add_reviewer("bob")
    for _ in range(2):
        item = next_item(project, bob.reviewer_pk).item
        wrong = "pos" if item["known_label"] == "neg" else "neg"
        assert record_answer(project, bob.reviewer_pk, item["item_pk"], wrong).recorded
    assert project.reviewer(bob.reviewer_pk).status == "failed"
    assert next_item(project, bob.reviewer_pk).state == "failed"


def test_each_item_goes_to_n_distinct_reviewers(project, answer_until_done):
    names = ["r1", "r2", "r3", "r4"]
    reviewers = [project.add_reviewer(n)[0] for n in names]
    counts = {}
    for reviewer in reviewers:
        for kind, item_id in answer_until_done(project, reviewer, truth):
            if kind == "review":
                counts[item_id] = counts.get(item_id, 0) + 1
    assert counts == {f"d{i}": 3 for i in range(6)}
    assert next_item(project, reviewers[-1].reviewer_pk).state == "done"
    done = progress(project)
    assert (done.n_complete, done.n_answers, done.n_needed) == (6, 18, 18)


def test_a_shown_item_is_leased_and_comes_back_on_reload(tmp_path, scan):
    store = init_review(scan, tmp_path / "a.sqlite", top=2, n_reviewers=2)
    a, b, c = (store.add_reviewer(n)[0] for n in "abc")
    first = next_item(store, a.reviewer_pk, now=1000.0).item
    assert next_item(store, a.reviewer_pk, now=1001.0).item["item_pk"] == first["item_pk"]
    # b and c both see item 1 (2 reviewers each), then nothing for c on item 2 before a answers
    assert next_item(store, b.reviewer_pk, now=1002.0).item["item_pk"] == first["item_pk"]
    second = next_item(store, c.reviewer_pk, now=1003.0).item
    assert second["item_pk"] != first["item_pk"]
    # once the lease (600 s) runs out the item can go to someone else
    later = next_item(store, c.reviewer_pk, now=1003.0 + 5).item
    assert later["item_pk"] == second["item_pk"]


def test_answers_are_checked(project):
    alice, _ = project.add_reviewer("alice")
    item = next_item(project, alice.reviewer_pk).item
    items = project.items_frame()
    other = int(items.loc[items["kind"] == "review", "item_pk"].iloc[0])
    assert record_answer(project, alice.reviewer_pk, item["item_pk"], "maybe").status == \
        "invalid_answer"
    assert record_answer(project, alice.reviewer_pk, other, "neg").status == "not_allowed"
    assert record_answer(project, alice.reviewer_pk, 9999, "neg").status == "unknown_item"
    assert record_answer(project, alice.reviewer_pk, item["item_pk"], truth(item)).recorded
    again = record_answer(project, alice.reviewer_pk, item["item_pk"], truth(item))
    assert again.status == "duplicate"
    assert len(project.answers_frame()) == 1


def test_an_item_never_gets_more_than_n_answers(tmp_path, scan):
    store = init_review(scan, tmp_path / "a.sqlite", top=1, n_reviewers=1)
    a, b = (store.add_reviewer(n)[0] for n in "ab")
    item_a = next_item(store, a.reviewer_pk, now=0.0).item
    item_b = next_item(store, b.reviewer_pk, now=10_000.0).item  # a's lease ran out
    assert item_a["item_pk"] == item_b["item_pk"]
    assert record_answer(store, b.reviewer_pk, item_b["item_pk"], "pos").recorded
    assert record_answer(store, a.reviewer_pk, item_a["item_pk"], "neg").status == "item_full"
    assert len(store.answers_frame()) == 1


def test_sentinel_failures_suspend_and_exclude(project, answer_until_done):
    liar, _ = project.add_reviewer("liar")

    def lie_on_sentinels(item):
        if item["kind"] == "sentinel":
            return "none of these"
        return truth(item)

    seen = answer_until_done(project, liar, lie_on_sentinels)
    # min_sentinels=2: suspended at the second wrong sentinel, after four review answers
    assert [k for k, _ in seen].count("sentinel") == 2
    assert project.reviewer(liar.reviewer_pk).status == "suspended"
    answers = project.answers_frame()
    mine = answers[answers["reviewer"] == "liar"]
    assert len(mine) == 2 + 4 + 2 and mine["excluded"].all()
    assert next_item(project, liar.reviewer_pk).state == "suspended"
    # the excluded answers free their items for honest reviewers
    honest = [project.add_reviewer(n)[0] for n in ("h1", "h2", "h3")]
    for reviewer in honest:
        answer_until_done(project, reviewer, truth)
    results = review_results(project)
    assert results.items["n_votes"].tolist() == [3] * 6
    stats = results.reviewers.set_index("reviewer")
    assert stats.loc["liar", "status"] == "suspended"
    assert stats.loc["liar", "n_excluded"] == 4
    assert stats.loc["liar", "sentinel_accuracy"] == 0.0


def test_open_refuses_other_files(tmp_path):
    with pytest.raises(InvalidInputError, match="no such review database"):
        ReviewStore.open(tmp_path / "missing.sqlite")
    bogus = tmp_path / "bogus.sqlite"
    bogus.write_text("not a database at all, just text" * 10)
    with pytest.raises(InvalidInputError, match="not a labelaudit review database"):
        ReviewStore.open(bogus)


def test_waiting_while_others_hold_the_last_items(tmp_path, scan):
    store = init_review(scan, tmp_path / "a.sqlite", top=1, n_reviewers=1)
    a, b = (store.add_reviewer(n)[0] for n in "ab")
    item = next_item(store, a.reviewer_pk, now=50.0).item
    assert next_item(store, b.reviewer_pk, now=60.0).state == "waiting"
    assert record_answer(store, a.reviewer_pk, item["item_pk"], "pos", now=70.0).recorded
    assert next_item(store, b.reviewer_pk, now=80.0).state == "done"
    assert next_item(store, a.reviewer_pk, now=90.0).state == "done"
