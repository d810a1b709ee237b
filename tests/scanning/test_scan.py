import numpy as np
import pandas as pd
import pytest
from tests.conftest import make_topic_frame

from labelaudit import InvalidInputError, InvalidParameterError, ScanResult, scan
from labelaudit.scanning._options import DEFAULT_METHODS, UNANNOTATED_METHODS


def test_scan_finds_planted_errors_and_suggests_true_labels(topic_frame):
    result = scan(topic_frame, text="text", label="label", id="id", scorers=["tfidf"])
    assert isinstance(result, ScanResult)
    frame = result.to_frame()
    errors = set(topic_frame.loc[topic_frame["is_error"], "id"])
    top = frame.head(len(errors))
    assert set(top["id"]) == errors
    truth = topic_frame.set_index("id")["true_label"]
    assert (top["suggested_label"] == top["id"].map(truth)).all()
    assert frame["rank"].tolist() == list(range(1, len(frame) + 1))
    assert set(frame["label"]) <= {"sport", "food", "tech"}  # the user's label values
    assert UNANNOTATED_METHODS == tuple(m for m in DEFAULT_METHODS if m != "crowdlab")
    expected = {f"score_{m}" for m in UNANNOTATED_METHODS if m != "loss"}
    assert expected | {"score_loss_tfidf"} <= set(frame.columns)
    assert "score_crowdlab" not in frame.columns  # it needs annotations
    # self_confidence ranks exactly as ensemble does: only computed when asked for
    assert "score_self_confidence" not in frame.columns
    assert frame["flagged"].sum() == result.n_issues_estimate


def test_ensemble_members_and_weights(topic_frame, tiny_st_dir, tmp_path):
    result = scan(topic_frame, scorers=["tfidf", "embed"], model=str(tiny_st_dir),
                  cache_dir=tmp_path, id="id")
    assert set(result.member_probs) == {"tfidf", "embed"}
    assert sum(result.weights.values()) == pytest.approx(1.0)
    from labelaudit.detect import apply_temperature

    expected = sum(result.weights[k] * apply_temperature(result.member_probs[k],
                                                         result.temperatures[k])
                   for k in result.member_probs)
    np.testing.assert_allclose(result.pred_probs, expected)
    # loss is the first member's (FML); ensemble is the weighted average's (FME)
    np.testing.assert_allclose(result.scores["loss"],
                               np.log(np.clip(result.member_probs["tfidf"][
                                   np.arange(len(topic_frame)), result.labels], 1e-12, 1)))


def test_same_seed_same_result_and_seeds_repeat_members(topic_frame):
    a = scan(topic_frame, scorers=["tfidf"], random_state=7).to_frame()
    b = scan(topic_frame, scorers=["tfidf"], random_state=7).to_frame()
    pd.testing.assert_frame_equal(a, b)
    repeated = scan(topic_frame, scorers=["tfidf"], n_seeds=3)
    assert list(repeated.member_probs) == ["tfidf", "tfidf#1", "tfidf#2"]
    assert list(repeated.weights) == ["tfidf"]  # repeats are averaged, then weighted
    from labelaudit.detect import apply_temperature

    average = np.mean(list(repeated.member_probs.values()), axis=0)
    np.testing.assert_allclose(repeated.pred_probs,
                               apply_temperature(average, repeated.temperatures["tfidf"]))


def test_row_order_does_not_change_scores(topic_frame):
    base = scan(topic_frame, scorers=["tfidf"], id="id").to_frame().set_index("id")
    shuffled = topic_frame.sample(frac=1.0, random_state=1)
    other = scan(shuffled, scorers=["tfidf"], id="id").to_frame().set_index("id")
    # folds differ with the order, but the planted errors stay on top
    errors = set(topic_frame.loc[topic_frame["is_error"], "id"])
    assert set(other.index[:len(errors)]) == set(base.index[:len(errors)]) == errors


def test_fit_on_train_score_on_test():
    train = make_topic_frame(20, seed=1)
    test = make_topic_frame(8, seed=2, n_errors=3)
    result = scan(train, score=test, scorers=["tfidf"], id="id")
    frame = result.to_frame()
    assert len(frame) == len(test) and result.mode.startswith("fit-on-train")
    assert set(frame.head(3)["id"]) == set(test.loc[test["is_error"], "id"])


def test_flag_rules(topic_frame):
    top = scan(topic_frame, scorers=["tfidf"], top=5).to_frame()
    assert top["flagged"].tolist() == [True] * 5 + [False] * (len(top) - 5)
    low = scan(topic_frame, scorers=["tfidf"], threshold=0.2)
    given = low.pred_probs[np.arange(len(low.labels)), low.labels]
    assert (low.flagged == (given < 0.2)).all()


def test_integer_labels_come_back_as_integers():
    frame = make_topic_frame(10)
    frame["label"] = frame["label"].map({"sport": 10, "food": 20, "tech": 30})
    out = scan(frame, scorers=["tfidf"]).to_frame()
    assert set(out["label"]) == {10, 20, 30} and out["suggested_label"].dtype.kind == "i"


@pytest.mark.parametrize("kwargs", [
    {"methods": ["nope"]}, {"rank_by": "nope"}, {"top": 3, "threshold": 0.1},
    {"threshold": 2.0}, {"top": -1}, {"n_seeds": 0}, {"scorers": []}, {"scorers": ["bm25"]},
])
def test_bad_options(topic_frame, kwargs):
    with pytest.raises(InvalidParameterError):
        scan(topic_frame, **kwargs)


@pytest.mark.slow
def test_real_minilm_on_a_few_hundred_items():
    frame = make_topic_frame(70, n_errors=10)
    result = scan(frame, id="id")  # defaults: tfidf + embed with the packaged MiniLM
    errors = set(frame.loc[frame["is_error"], "id"])
    assert len(set(result.to_frame().head(20)["id"]) & errors) >= 8


def test_chance_level_model_warns():
    from labelaudit import ChanceLevelWarning

    frame = make_topic_frame(15)
    rng = np.random.default_rng(0)
    frame["label"] = rng.permutation(frame["label"].to_numpy())  # labels unrelated to text
    with pytest.warns(ChanceLevelWarning, match="always predicting the most common class"):
        scan(frame, scorers=["tfidf"])


def test_mode_reports_the_folds_actually_used_when_a_class_is_small():
    frame = make_topic_frame(3, n_errors=0)  # 3 items per class: 5 folds become 3
    from labelaudit.models import FoldWarning

    with pytest.warns(FoldWarning, match="using 3 folds"):
        result = scan(frame, scorers=["tfidf"])  # the default, 5 folds
    assert result.mode == "3-fold cross-fit"
    assert scan(make_topic_frame(10), scorers=["tfidf"], n_folds=4).mode == "4-fold cross-fit"


def test_seeds_with_a_score_split_refit_each_member():
    train = make_topic_frame(10, seed=1)
    test = make_topic_frame(4, seed=2)
    result = scan(train, score=test, scorers=["tfidf"], n_seeds=2)
    assert list(result.member_probs) == ["tfidf", "tfidf#1"]
    # TF-IDF + logistic regression is deterministic: the repeat is the same model
    np.testing.assert_allclose(result.member_probs["tfidf"], result.member_probs["tfidf#1"])


def _crowd(frame, *, rng, n_annotators=5, accuracy=0.9, with_ids=True):
    """Annotations for each item: mostly its true label, sometimes another class."""
    classes = sorted(frame["true_label"].unique())
    cells = []
    for truth in frame["true_label"]:
        votes = []
        for k in range(n_annotators):
            label = truth if rng.random() < accuracy else rng.choice(
                [c for c in classes if c != truth])
            votes.append({"worker": f"w{k}", "label": str(label)} if with_ids else str(label))
        cells.append(votes)
    return cells


@pytest.mark.filterwarnings("ignore::labelaudit.scanning.ChanceLevelWarning")  # on purpose here
def test_crowdlab_uses_annotators_and_becomes_the_default_ranking():
    rng = np.random.default_rng(0)
    frame = make_topic_frame(15, n_errors=5)
    # the text cannot tell the classes apart; only the annotators can
    frame["text"] = [f"item {i} words" for i in range(len(frame))]
    frame["votes"] = _crowd(frame, rng=rng)
    result = scan(frame, scorers=["tfidf"], annotations="votes", id="id")
    assert result.rank_by == "crowdlab"
    out = result.to_frame()
    errors = set(frame.loc[frame["is_error"], "id"])
    majority = {row.id: max(set(v := [x["label"] for x in row.votes]), key=v.count)
                for row in frame.itertuples()}
    outvoted = {i for i, label in frame.set_index("id")["label"].items() if majority[i] != label}
    assert errors <= outvoted  # every planted error is outvoted by the annotators...
    assert set(out.head(len(outvoted))["id"]) == outvoted  # ...and outvoted labels rank first
    truth = frame.set_index("id")["true_label"]
    assert (out["consensus_label"] == out["id"].map(truth)).mean() > 0.9
    without = scan(frame, scorers=["tfidf"], id="id").to_frame()
    assert len(set(without.head(5)["id"]) & errors) < 5  # the text alone does not find them


def test_crowdlab_accepts_plain_label_lists_and_checks_them():
    rng = np.random.default_rng(1)
    frame = make_topic_frame(8, n_errors=2)
    frame["votes"] = _crowd(frame, rng=rng, with_ids=False)
    result = scan(frame, scorers=["tfidf"], annotations="votes")
    assert "crowdlab" in result.scores
    bad = frame.copy()
    bad.at[3, "votes"] = ["sport", "weather"]
    with pytest.raises(InvalidInputError, match="outside the label set"):
        scan(bad, scorers=["tfidf"], annotations="votes")
    bad.at[3, "votes"] = []
    with pytest.raises(InvalidInputError, match="without annotations in row 't3'"):
        scan(bad, scorers=["tfidf"], annotations="votes")
    with pytest.raises(InvalidInputError, match="missing column 'nope'"):
        scan(frame, scorers=["tfidf"], annotations="nope")
    with pytest.raises(InvalidParameterError, match="needs several annotators"):
        scan(frame, scorers=["tfidf"], rank_by="crowdlab")
