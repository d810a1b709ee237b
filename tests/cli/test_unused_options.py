"""One rule for the options a run would ignore, and for options that do not go together or
are missing: a usage error (exit 2) before any work, in one line that names the flag, and
no file touched. A refused path (a cache folder that is a file, a file given twice) is
not a usage error: one line, exit 1."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

from labelaudit._errors import InvalidInputError
from labelaudit.cli import main
from labelaudit.io import OverlapWarning
from labelaudit.models._encoder import EmbeddingCache, TokenVectorCache
from labelaudit.training import read_eval_table


@pytest.fixture
def reviews(tmp_path, monkeypatch):
    """A folder with a small reviews.csv of id,text,label, the working directory."""
    words = {"pos": "great fun loved", "neg": "dull awful hated"}
    rows = [(i, f"{words[label]} {i}", label) for i, label in enumerate(["pos", "neg"] * 12)]
    pd.DataFrame(rows, columns=["id", "text", "label"]).to_csv(tmp_path / "reviews.csv",
                                                                 index=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path / "reviews.csv"


def _run(argv, capsys):
    """(exit code, stderr lines) of one command line through the real entry point."""
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    return code, capsys.readouterr().err.strip().splitlines()


def _files(folder):
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


@pytest.mark.parametrize(("flags", "says"), [
    (["--device", "cuda:0"], "--device sets the fine-tuning of the finetune scorer; the "
     "members (tfidf, tfidf-char) take none: add finetune to --scorers, or drop --device"),
    (["--epochs", "3"], "--epochs sets the fine-tuning of the finetune scorer"),
    (["--lr", "-1"], "--lr sets the fine-tuning of the finetune scorer"),
    (["--epochs", "3", "--lr", "1e-5"], "--epochs, --lr set the fine-tuning of the finetune "
     "scorer; the members (tfidf, tfidf-char) take none: add finetune to --scorers, or drop "
     "them"),
    (["--long-texts", "windows"], "--long-texts sets how the embed scorer reads texts "
     "longer than its encoder's window; the members (tfidf, tfidf-char) take none: add "
     "embed to --scorers, or drop --long-texts"),
    (["--sweep", "2"], "--sweep sets the fine-tuning sweep of the finetune scorer"),
    (["--classes", "a,b"], "--classes names the columns of --pred-probs; give --pred-probs "
     "too, or drop --classes"),
    (["--weights=abc"], "--weights must be auto, equal or numbers; got 'abc'"),
    (["--cache-dir", "reviews.csv"], "--cache-dir sets where the embed, knn and dynamics "
     "scorers keep their embeddings; the members (tfidf, tfidf-char) take none: add one to "
     "--scorers, or drop --cache-dir"),
    (["--keep", "3"], "--keep sets how many configurations of the sweep are kept, and no "
     "sweep runs: give --sweep, or drop --keep"),
    (["--ray-address", "auto"], "--ray-address connects to a Ray cluster: give --engine ray too"),
    (["--engine", "local"], "--engine writes its output in chunks: give --out"),
    (["--preset", "fast", "--epochs", "2"], "--epochs sets the fine-tuned member, which "
     "--preset fast does not have"),
    (["--methods", "crowdlab"], "the crowdlab method needs several annotators' labels: give "
     "--annotations COLUMN"),
])
def test_a_scan_option_no_member_uses_is_a_usage_error(reviews, capsys, flags, says):
    before = _files(reviews.parent)
    code, err = _run(["scan", "reviews.csv", *flags], capsys)
    assert code == 2, err
    assert len(err) == 1 and err[0].startswith("labelaudit scan: error: ") and says in err[0], err
    assert _files(reviews.parent) == before


def test_keep_with_a_sweep_is_not_refused_as_unused(reviews, capsys):
    """--keep with --sweep goes on to the sweep's own check (here: more than it runs)."""
    code, err = _run(["scan", "reviews.csv", "--scorers", "finetune", "--sweep", "2",
                      "--keep", "5"], capsys)
    assert code == 2 and err == ["labelaudit scan: error: --keep must be between 1 and "
                                 "--sweep 2; got 5"]


@pytest.mark.parametrize("flags", [["--scorers", "embed"],
                                   ["--datalab", "--datalab-features", "embed"]])
def test_a_cache_dir_that_is_a_file_is_refused_before_any_work(reviews, capsys, flags):
    before = _files(reviews.parent)
    code, err = _run(["scan", "reviews.csv", *flags, "--cache-dir", "reviews.csv"], capsys)
    assert code == 1
    assert err == ["labelaudit scan: error: --cache-dir 'reviews.csv' is a file, not a "
                   "folder: give a folder for the embedding cache (created if missing)"]
    assert _files(reviews.parent) == before


@pytest.mark.parametrize("cache", [EmbeddingCache, TokenVectorCache])
def test_the_embedding_caches_refuse_a_file_as_their_folder(reviews, cache):
    with pytest.raises(InvalidInputError, match="is a file, not a folder") as caught:
        cache(reviews, "model")
    assert caught.value.params == ("cache_dir",)  # a refused path (exit 1) that names its flag


@pytest.mark.parametrize(("recipe", "says"), [
    ("nonsense", "--recipe part 'nonsense' is not METHOD:SHARE; write e.g. "
     "'dissenting-worker:0.8,dissenting-label:0.2'"),
    ("uniform:0.5", "--recipe shares must sum to 1; they sum to 0.5"),
    ("uniform:x", "--recipe share 'x' of 'uniform' is not a number"),
])
def test_a_recipe_that_does_not_parse_says_so_before_the_rate(reviews, capsys, recipe, says):
    code, err = _run(["noise", "inject", "reviews.csv", "--recipe", recipe, "--out", "n.csv"],
                     capsys)
    assert code == 2
    assert err == [f"labelaudit noise: error: {says}"]
    assert not (reviews.parent / "n.csv").exists()


def test_noise_options_of_another_method_are_usage_errors(reviews, capsys):
    (reviews.parent / "m.json").write_text('{"pos": {"pos": 0.5, "neg": 0.5}, '
                                           '"neg": {"pos": 0.5, "neg": 0.5}}')
    code, err = _run(["noise", "inject", "reviews.csv", "--method", "uniform", "--rate", "0.1",
                      "--noise-matrix", "m.json", "--out", "n.csv"], capsys)
    assert code == 2 and len(err) == 1
    assert "--noise-matrix is only used by class-dependent noise" in err[0]
    assert not (reviews.parent / "n.csv").exists()


def test_train_refuses_its_own_training_file_as_eval(reviews, capsys):
    before = _files(reviews.parent)
    code, err = _run(["train", "reviews.csv", "--out", "m", "--eval", "./reviews.csv"], capsys)
    assert code == 1
    assert err == ["labelaudit train: error: data and --eval are the same file "
                   "(reviews.csv): the model is trained on data and measured on --eval, so "
                   "--eval needs items of its own"]
    assert not (reviews.parent / "m").exists() and _files(reviews.parent) == before


def test_an_eval_table_of_training_items_is_warned_about(reviews):
    frame = pd.read_csv(reviews)
    frame.iloc[:10].to_csv(reviews.parent / "eval.csv", index=False)
    with pytest.warns(OverlapWarning, match=r"10 of the 10 evaluation items \(100%\) are "
                      r"also in the training set \(the same text\): the model has seen them"):
        read_eval_table(reviews.parent / "eval.csv", training=reviews)
    pd.DataFrame({"text": ["new words"] * 9 + [frame["text"][0]], "label": ["pos"] * 10}
                 ).to_csv(reviews.parent / "held.csv", index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", OverlapWarning)  # 10 %: not more than a tenth
        read_eval_table(reviews.parent / "held.csv", training=reviews)


@pytest.mark.parametrize(("argv", "says"), [
    (["impact", "corrected.csv", "--label", "label", "--corrected-label", "corrected"],
     "labelaudit impact: error: give --predictions NAME=FILE or --train FILE --text COL"),
    (["impact", "corrected.csv", "--train", "reviews.csv"],
     "labelaudit impact: error: --train needs --text, the text column"),
    (["train", "reviews.csv"], "labelaudit train: error: give --out FOLDER to save the model "
     "and/or --metrics-out FILE (with --eval) to measure it"),
])
def test_a_missing_required_option_is_a_usage_error(reviews, capsys, argv, says):
    (reviews.parent / "corrected.csv").write_text("id,text,label,corrected\n1,a,x,y\n2,b,y,y\n")
    code, err = _run(argv, capsys)
    assert code == 2
    assert err == [says]
