"""ScanOptions: what the options of a scan decide before any work; result_table: its table."""

import warnings

import pandas as pd
import pytest
from tests.conftest import make_topic_frame

from labelaudit import InvalidParameterError, scan
from labelaudit.models import FinetuneScorer
from labelaudit.scanning import ScanOptions, SlowPresetWarning, result_table, streams
from labelaudit.scanning._options import check_options


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "data.csv"
    make_topic_frame(6).to_csv(path, index=False)
    return str(path)


def check(data, **options):
    return check_options(data, ScanOptions(**options))


def streams_(data, engine=None, report=False, **options):
    return streams(data, ScanOptions(**options), engine=engine, report=report)


def test_the_default_runs_in_memory_with_the_default_members(data):
    options = check(data)
    assert not streams_(data)
    assert (options.scorers, options.weights) == (None, "auto")


def test_a_streamed_scan_embeds_with_the_first_model(data, tmp_path):
    options = check(data, out=str(tmp_path / "o.csv"), model=["a"], text_pair="text",
                    pair_mode="joint", cache_dir="c")
    assert (options.first_model, options.pair_mode, options.cache_dir) == ("a", "joint", "c")


def test_a_tfidf_scan_of_a_file_written_to_out_streams(data, tmp_path):
    assert streams_(data, scorers=["tfidf"], out=str(tmp_path / "o.csv"))
    assert not streams_(data, scorers=["tfidf"])
    assert streams_(data, engine="local", out=str(tmp_path / "o.csv"))


def test_what_needs_memory_runs_in_memory_on_ray_and_is_refused_locally(data):
    assert not streams_(data, engine="ray", datalab=True, out="o.csv")
    with pytest.raises(InvalidParameterError, match=r"datalab=, scorers=finetune need every "
                       r"item in memory; drop them, drop engine="):
        streams_(data, engine="local", datalab=True, scorers=["finetune"], out="o.csv")
    with pytest.raises(InvalidParameterError, match="give out="):
        streams_(data, engine="local")
    with pytest.raises(InvalidParameterError, match="only a streamed scan writes to a folder"):
        streams_(data, scorers=["tfidf"], datalab=True, out="s3://bucket/issues.csv")


def test_given_probabilities_refuse_the_options_of_the_models(data):
    with pytest.raises(InvalidParameterError, match="so epochs=, n_seeds= cannot be given"):
        check(data, pred_probs="p.npy", epochs=2, n_seeds=2)
    with pytest.raises(InvalidParameterError, match="classes= names the columns"):
        check(data, classes=["a", "b"])
    assert check(data, pred_probs="p.npy").scorers is None


def test_fine_tuning_options_configure_the_finetune_member(data):
    members = check(data, scorers=["tfidf", "finetune"], model=["a", "b"], epochs=2).scorers
    assert members[0] == "tfidf"
    assert [(m.model, m.epochs) for m in members[1:]] == [("a", 2), ("b", 2)]
    with pytest.raises(InvalidParameterError, match="^epochs=, learning_rate= set the "
                       "fine-tuning of the finetune scorer") as caught:
        check(data, scorers=["tfidf"], epochs=2, learning_rate=1e-5)
    assert caught.value.params == ("epochs", "learning_rate", "scorers")  # a usage error


def test_a_preset_gives_its_members_and_settings_the_given_ones_first(data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SlowPresetWarning)
        members = check(data, preset="best", epochs=1).scorers
    assert members[0] == "tfidf"
    tuned = members[1]
    assert isinstance(tuned, FinetuneScorer) and (tuned.epochs, tuned.max_length) == (1, 512)
    with pytest.raises(InvalidParameterError, match="give preset= or scorers=, not both"):
        check(data, preset="fast", scorers=["tfidf"])


def test_weights_are_read_from_text(data):
    assert check(data, scorers=["tfidf", "tfidf-char"], weights=" 1, 2").weights == [1, 2]
    with pytest.raises(InvalidParameterError, match="must be auto, equal or numbers; got '1,x'"):
        check(data, weights="1,x")


def test_result_table_is_every_item_or_the_table_view():
    result = scan(make_topic_frame(6), scorers=["tfidf"])
    pd.testing.assert_frame_equal(result_table(result), result.to_frame())
    pd.testing.assert_frame_equal(result_table(result, rows=3), result.to_table(3))
    sets = make_topic_frame(6)
    other = {"sport": "food", "food": "tech", "tech": "sport"}
    sets["label"] = [f"{a}|{other[a]}" if i % 3 == 0 else a for i, a in enumerate(sets["label"])]
    multi = scan(sets, scorers=["tfidf"], label_sep="|")
    assert result_table(multi, sep="|")["label"].str.contains("|", regex=False).any()
    assert len(result_table(multi, rows=4)) == 4 and len(result_table(multi, rows=0)) == 18


def test_the_screen_skips_classes_its_sample_holds_once():
    """With many classes the screening sample holds some classes once, or more classes than
    items: those are left out of the screen instead of failing the scan."""
    import numpy as np
    import pandas as pd

    from labelaudit import scan
    from labelaudit.scanning._pipeline import screen_sample

    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(60), 5)
    frame = pd.DataFrame({"text": [f"key{c} word{rng.integers(30)}" for c in labels],
                          "label": [f"c{c}" for c in labels]})
    result = scan(frame, screen=70, progress=False, evidence=False)
    assert len(result.labels) == 300 and set(result.weights) <= {"tfidf", "tfidf-char"}
    assert screen_sample(labels, size=40, random_state=0).size == 40  # 60 classes > 40


def test_the_screen_names_itself_and_its_few_folds_warn_nothing(capsys):
    """The screen's fold lines follow a line that says they are the screen's, and a sample
    too small for five folds takes fewer without a FoldWarning that would read as the
    data's (every class of the data holds five items)."""
    import numpy as np

    from labelaudit.models import FoldWarning

    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(60), 5)
    frame = pd.DataFrame({"text": [f"key{c} word{rng.integers(30)}" for c in labels],
                          "label": [f"c{c}" for c in labels]})
    with warnings.catch_warnings():
        warnings.simplefilter("error", FoldWarning)
        scan(frame, screen=150, progress=True, evidence=False)
    lines = capsys.readouterr().err.splitlines()
    said = [i for i, line in enumerate(lines) if "screening 2 members on" in line]
    assert said and "of the 300 items: 0/2 members" in lines[said[0]]
    assert "cross-fitting 2 folds (tfidf)" in lines[said[0] + 1]
    assert any("cross-fitting 5 folds (tfidf)" in line for line in lines[said[0] + 2:])
