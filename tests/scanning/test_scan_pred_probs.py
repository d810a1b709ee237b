"""scan with the user's own out-of-sample probabilities (``pred_probs=``, ``--pred-probs``)."""

import re

import datasets
import numpy as np
import pandas as pd
import pytest
from tests.conftest import make_topic_frame

from labelaudit import ChanceLevelWarning, InvalidInputError, InvalidParameterError, scan
from labelaudit.cli import main

CLASSES = ["food", "sport", "tech"]  # the sorted label values: the default column order


def noisy_probs(frame, *, seed=0, wrong=()):
    """Probabilities that favour each item's true label; rows ``wrong`` favour another."""
    rng = np.random.default_rng(seed)
    probs = rng.dirichlet(np.ones(3), size=len(frame)) * 0.3
    truth = frame["true_label"].map(CLASSES.index).to_numpy()
    probs[np.arange(len(frame)), truth] += 0.7
    for row in wrong:
        probs[row] = np.roll(probs[row], 1)
    return probs / probs.sum(axis=1, keepdims=True)


@pytest.fixture
def planted():
    frame = make_topic_frame(10, n_errors=3)
    return frame, noisy_probs(frame)


def test_planted_errors_rank_first(planted):
    frame, probs = planted
    result = scan(frame, pred_probs=probs)
    out = result.to_frame()
    errors = set(frame.loc[frame["is_error"], "id"])
    assert set(out["id"].head(len(errors))) == errors
    truth = frame.set_index("id")["true_label"]
    assert (out["suggested_label"].head(3) == out["id"].head(3).map(truth)).all()
    assert list(result.member_probs) == list(result.weights) == ["pred_probs"]
    assert result.weights == {"pred_probs": 1.0} and result.temperatures == {"pred_probs": 1.0}
    np.testing.assert_array_equal(result.pred_probs, probs)  # used as given
    assert {"score_ensemble", "score_confident_learning", "score_loss_pred_probs",
            "score_margin"} <= set(out.columns)
    assert "yours (pred_probs)" in result.summary() and "out-of-sample" in result.summary()


def test_flag_rules_work_on_given_probs(planted):
    frame, probs = planted
    assert scan(frame, pred_probs=probs, top=5).flagged.sum() == 5
    given = probs[np.arange(len(frame)), frame["label"].map(CLASSES.index)]
    flagged = scan(frame, pred_probs=probs, threshold=0.3).flagged
    np.testing.assert_array_equal(flagged, given < 0.3)


def test_a_perfect_model_flags_nothing():
    frame = make_topic_frame(10)
    perfect = np.eye(3)[frame["label"].map(CLASSES.index)]
    result = scan(frame, pred_probs=perfect)
    assert result.n_issues_estimate == 0 and not result.flagged.any()


def test_npy_table_and_classes_rank_as_the_array(planted, tmp_path):
    frame, probs = planted
    frame.to_csv(tmp_path / "data.csv", index=False)
    expected = scan(frame, pred_probs=probs).to_frame()
    np.save(tmp_path / "probs.npy", probs)
    named = pd.DataFrame(probs, columns=CLASSES)[["tech", "food", "sport"]]  # any order
    named.to_csv(tmp_path / "named.csv", index=False)
    unnamed = pd.DataFrame(probs, columns=["p0", "p1", "p2"])
    unnamed.to_parquet(tmp_path / "unnamed.parquet")
    runs = {
        "npy": scan(frame, pred_probs=tmp_path / "probs.npy"),
        "named csv": scan(frame, pred_probs=str(tmp_path / "named.csv")),
        "named frame": scan(frame, pred_probs=named),
        "classes": scan(frame, pred_probs=tmp_path / "unnamed.parquet", classes=CLASSES),
        "reordered": scan(frame, pred_probs=probs[:, [2, 0, 1]],
                          classes=["tech", "food", "sport"]),
    }
    for name, result in runs.items():
        out = result.to_frame()
        assert out["id"].tolist() == expected["id"].tolist(), name
        np.testing.assert_allclose(out["score_ensemble"], expected["score_ensemble"])
        assert out["suggested_label"].tolist() == expected["suggested_label"].tolist(), name
    for flags, name in ((["--pred-probs", tmp_path / "probs.npy"], "npy"),
                        (["--pred-probs", tmp_path / "named.csv"], "csv"),
                        (["--pred-probs", tmp_path / "unnamed.parquet", "--classes",
                          ",".join(CLASSES)], "classes")):
        out = tmp_path / f"{name}.csv"
        assert main(["scan", str(tmp_path / "data.csv"), *map(str, flags), "--out", str(out),
                     "-q"]) == 0
        assert pd.read_csv(out)["id"].tolist() == expected["id"].tolist(), name


def test_numeric_labels_match_columns_by_text(tmp_path):
    frame = make_topic_frame(8, n_errors=2)
    frame["label"] = frame["label"].map(CLASSES.index)
    frame["true_label"] = frame["true_label"].map(CLASSES.index)
    probs = np.eye(3)[frame["true_label"]] * 0.8 + 0.2 / 3
    table = pd.DataFrame(probs, columns=["0", "1", "2"])  # CSV headers are text
    a = scan(frame, pred_probs=table).to_frame()
    b = scan(frame, pred_probs=probs, classes=["0", "1", "2"]).to_frame()
    c = scan(frame, pred_probs=probs).to_frame()
    assert a["id"].tolist() == b["id"].tolist() == c["id"].tolist()
    assert set(a["id"].head(2)) == set(frame.loc[frame["is_error"], "id"])


def test_a_class_no_item_has_is_kept_as_a_column():
    frame = make_topic_frame(8, n_errors=1)
    probs = np.hstack([noisy_probs(frame) * 0.9, np.full((len(frame), 1), 0.1)])
    with pytest.raises(InvalidInputError, match=r"expected \(24, 3\).*name every column"):
        scan(frame, pred_probs=probs)
    result = scan(frame, pred_probs=probs, classes=[*CLASSES, "music"])
    assert result.classes.tolist() == [*CLASSES, "music"]
    assert result.to_frame()["id"].iloc[0] == frame.loc[frame["is_error"], "id"].iloc[0]


def test_classlabel_order_is_the_default_for_an_array():
    names = ["sport", "food", "tech"]  # id order, not sorted
    frame = make_topic_frame(8, n_errors=2)
    features = datasets.Features({"text": datasets.Value("string"),
                                  "label": datasets.ClassLabel(names=names)})
    dataset = datasets.Dataset.from_dict(
        {"text": frame["text"].tolist(), "label": frame["label"].map(names.index).tolist()},
        features=features)
    probs = noisy_probs(frame)[:, [1, 0, 2]]  # columns in ClassLabel (id) order
    from_dataset = scan(dataset, pred_probs=probs).to_frame()
    from_frame = scan(frame.drop(columns="id"), pred_probs=probs, classes=names).to_frame()
    assert from_dataset["id"].tolist() == from_frame["id"].tolist()
    assert set(from_dataset["id"].head(2)) == set(np.flatnonzero(frame["is_error"]))


def test_wrong_column_order_warns():
    frame = make_topic_frame(10)
    probs = noisy_probs(frame)[:, [1, 2, 0]]
    with pytest.warns(ChanceLevelWarning, match="class order"):
        scan(frame, pred_probs=probs)


@pytest.mark.parametrize("option", [{"scorers": ["tfidf"]}, {"model": "x"}, {"sweep": 2},
                                    {"score": "test.csv"}, {"n_seeds": 2},
                                    {"weights": "equal"}])
def test_conflicting_options(planted, option):
    frame, probs = planted
    with pytest.raises(InvalidParameterError, match=f"so {next(iter(option))}= cannot be"):
        scan(frame, pred_probs=probs, **option)


def test_classes_without_pred_probs(planted):
    with pytest.raises(InvalidParameterError, match="give pred_probs= too"):
        scan(planted[0], classes=CLASSES)


@pytest.fixture
def files(tmp_path):
    frame = make_topic_frame(4, n_errors=1)
    frame.to_csv(tmp_path / "data.csv", index=False)
    return tmp_path, frame, noisy_probs(frame)


def bad_cases(tmp_path, probs):
    """(file contents writer, extra flags, expected message) of each bad pred_probs."""
    nan, negative, unnormal = probs.copy(), probs.copy(), probs.copy()
    nan[[3, 5]] = np.nan
    negative[2] = [-0.1, 0.6, 0.5]
    unnormal[[1, 4]] *= 2
    pd.DataFrame(probs, columns=["food", "sport", "x"]).to_csv(tmp_path / "stray.csv",
                                                               index=False)
    pd.DataFrame(probs, columns=CLASSES).to_csv(tmp_path / "named.csv", index=False)
    np.savetxt(tmp_path / "headerless.csv", probs, delimiter=",")
    return {
        "shape": (probs[:-2], [], r"shape \(10, 3\); expected \(12, n_classes\)"),
        "columns": (probs[:, :2], [], r"shape \(12, 2\); expected \(12, 3\): one column per "
                    r"class \('food', 'sport', 'tech'\)"),
        "not 2-D": (probs[:, 0], [], r"must be 2-D, shape \(n_items, n_classes\); got 1-D"),
        "nan": (nan, [], r"NaN or infinite values in rows 3, 5"),
        "negative": (negative, [], "negative values in row 2"),
        "sums": (unnormal, [], r"rows 1, 4 \(0-based\) sum to 2, 2; pass probabilities "
                 r"\(softmax outputs\)"),
        "unknown labels": (probs, ["--classes", "food,sport,music"],
                           r"labels 'tech' \(in rows .*\) are not among the pred_probs "
                           r"(--classes|classes=) 'food', 'sport', 'music'"),
        "stray columns": (tmp_path / "stray.csv", [],
                          r"pred_probs columns 'x' are not label values \(the labels are "
                          r"'food', 'sport', 'tech'\)"),
        "contradiction": (tmp_path / "named.csv", ["--classes", "sport,food,tech"],
                          "orders the columns differently from their names"),
        "headerless": (tmp_path / "headerless.csv", [], "without a header row"),
        "missing": (tmp_path / "nope.npy", [], "nope.npy: no such file"),
        "classes alone": (None, ["--classes", "food,sport,tech"],
                          "--classes names the columns of --pred-probs"),
        "with scorers": (probs, ["--scorers", "tfidf"],
                         "--pred-probs replaces labelaudit's models, so --scorers cannot"),
        "with epochs": (probs, ["--epochs", "2", "--seeds", "2"],
                        "so --epochs, --seeds cannot be given"),
    }


def test_each_bad_pred_probs_is_one_line_exit_1_nothing_written(files, capsys):
    tmp_path, _, probs = files
    for name, (source, flags, message) in bad_cases(tmp_path, probs).items():
        if isinstance(source, np.ndarray):
            np.save(tmp_path / "probs.npy", source)
            source = tmp_path / "probs.npy"
        out = tmp_path / "issues.csv"
        args = ["scan", str(tmp_path / "data.csv"), "--out", str(out), *flags]
        code = main(args + (["--pred-probs", str(source)] if source is not None else []))
        err = capsys.readouterr().err
        # options that cannot go together are usage errors (exit 2), bad data exits 1
        usage = name in ("classes alone", "with scorers", "with epochs")
        assert code == (2 if usage else 1), (name, err)
        assert err.count("\n") == 1 and re.search(message, err), \
            (name, err)
        assert not out.exists(), name


def test_review_and_evaluate_read_the_output(files, tmp_path):
    _, frame, probs = files
    np.save(tmp_path / "probs.npy", probs)
    out = tmp_path / "issues.csv"
    assert main(["scan", str(tmp_path / "data.csv"), "--pred-probs",
                 str(tmp_path / "probs.npy"), "--out", str(out), "-q"]) == 0
    frame[["id", "is_error"]].to_csv(tmp_path / "truth.csv", index=False)
    metrics = tmp_path / "metrics.csv"
    assert main(["evaluate", str(out), "--eval", str(tmp_path / "truth.csv"),
                 "--out", str(metrics), "-q"]) == 0
    table = pd.read_csv(metrics)
    assert "ensemble" in table.to_string() and "pred_probs" in table.to_string()
    # the kept true_label/is_error columns are ordinary columns, not scores
    assert "true_label" not in table.to_string()
    assert main(["review", "init", str(out), "--db", str(tmp_path / "review.db"),
                 "--top", "3", "-q"]) == 0


def test_a_table_with_the_id_column_is_matched_by_id(files, tmp_path):
    _, frame, probs = files
    expected = scan(frame, pred_probs=probs).to_frame()
    table = pd.DataFrame(probs, columns=CLASSES).assign(id=frame["id"])
    shuffled = table[["id", "tech", "food", "sport"]].sample(frac=1.0, random_state=0)
    shuffled.to_csv(tmp_path / "by_id.csv", index=False)
    out = tmp_path / "issues.csv"
    assert main(["scan", str(tmp_path / "data.csv"), "--pred-probs",
                 str(tmp_path / "by_id.csv"), "--out", str(out), "-q"]) == 0
    got = pd.read_csv(out)
    pd.testing.assert_frame_equal(got[expected.columns[:8]], expected[expected.columns[:8]],
                                  check_dtype=False)
    # a custom --id column, from Python with a DataFrame
    renamed = frame.rename(columns={"id": "key"})
    by_key = shuffled.rename(columns={"id": "key"})
    result = scan(renamed, id="key", pred_probs=by_key).to_frame()
    assert result["id"].tolist() == expected["id"].tolist()  # the output's id column
    np.testing.assert_allclose(result["given_prob"], expected["given_prob"])


def test_bad_ids_in_a_pred_probs_table_are_one_line_exit_1(files, tmp_path, capsys):
    _, frame, probs = files
    table = pd.DataFrame(probs, columns=CLASSES)
    table.insert(0, "id", frame["id"])
    extra = pd.concat([table, table.iloc[:1].assign(id="zz9")])
    twice = pd.concat([table, table.iloc[:1]])
    blank = table.assign(id=table["id"].where(table.index != 2))
    cases = {
        "missing": (table.iloc[2:], r"pred_probs has no row for ids \['t0', 't1'\] of the "
                                    r"data \(matched by column 'id'\)"),
        "extra": (extra, r"pred_probs column 'id' has ids the data does not have: \['zz9'\]"),
        "duplicate": (twice, r"pred_probs column 'id' repeats ids \['t0'\]"),
        "blank": (blank, r"pred_probs column 'id' is blank in row 2"),
    }
    for name, (bad, message) in cases.items():
        bad.to_csv(tmp_path / "probs.csv", index=False)
        out = tmp_path / "issues.csv"
        code = main(["scan", str(tmp_path / "data.csv"), "--pred-probs",
                     str(tmp_path / "probs.csv"), "--out", str(out)])
        err = capsys.readouterr().err
        assert code == 1, (name, err)
        assert err.count("\n") == 1 and re.search(message, err), (name, err)
        assert not out.exists(), name


def test_label_set_probabilities_with_the_id_column_are_matched_by_id():
    sets = pd.DataFrame({"id": [f"s{i}" for i in range(6)],
                         "text": ["a b", "b c", "c d", "d e", "e f", "f g"],
                         "topics": [["x"], ["y"], ["x", "y"], ["x"], ["y"], ["x", "y"]]})
    probs = np.array([[0.9, 0.1], [0.1, 0.9], [0.9, 0.9], [0.1, 0.9], [0.1, 0.9], [0.9, 0.9]])
    expected = scan(sets, label="topics", pred_probs=probs, progress=False)
    table = pd.DataFrame(probs, columns=["x", "y"]).assign(id=sets["id"]).iloc[::-1]
    by_id = scan(sets, label="topics", pred_probs=table, progress=False)
    np.testing.assert_allclose(by_id.pred_probs, expected.pred_probs)
    with pytest.raises(InvalidInputError, match=r"no row for ids \['s5'\]"):
        scan(sets, label="topics", pred_probs=table.iloc[1:], progress=False)
