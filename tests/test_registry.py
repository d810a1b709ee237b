"""Property tests over every member of every registry (scikit-learn's all_estimators idea)."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from tests.conftest import make_topic_frame

from labelaudit.registry import (
    FORMATS,
    NOISE_METHODS,
    RANKING_METHODS,
    SCORERS,
    TOKEN_SCORERS,
    all_registries,
)

MEMBERS = [(family, name) for family, r in all_registries().items() for name in r]


@pytest.mark.parametrize(("family", "name"), MEMBERS)
def test_every_member_loads(family, name):
    assert callable(all_registries()[family].load(name))


def test_unknown_names_list_the_members():
    from labelaudit import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="unknown scorer 'bm25'; choose from tfidf"):
        SCORERS.load("bm25")


def test_the_registry_module_is_light():
    import subprocess
    import sys

    code = ("import sys, labelaudit.registry; "
            "print('pandas' in sys.modules, 'sklearn' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
    assert out.split() == ["False", "False"]


@pytest.mark.parametrize("name", SCORERS.names())
def test_scorers_are_scorers_named_as_registered(name):
    from labelaudit.models import Scorer, make_scorer

    cls = SCORERS.load(name)
    assert issubclass(cls, Scorer) and cls.name == name
    assert make_scorer(name).name == name


@pytest.mark.parametrize("name", TOKEN_SCORERS.names())
def test_token_scorers_are_scorers_and_clone_unfitted(name):
    from labelaudit.models import Scorer, TokenScorer, make_token_scorer

    cls = TOKEN_SCORERS.load(name)
    assert isinstance(cls, type) and issubclass(cls, TokenScorer) and issubclass(cls, Scorer)
    scorer = make_token_scorer(name, random_state=3)
    assert isinstance(scorer, cls) and scorer.name.startswith(name)
    scorer.head_ = "fitted"  # learned state ends in "_" and is not cloned
    fresh = scorer.clone()
    assert fresh.random_state == 3 and not hasattr(fresh, "head_")


@pytest.mark.parametrize("name", NOISE_METHODS.names())
def test_noise_registry_matches_the_library(name):
    from labelaudit.noise import NOISE_METHODS as LIBRARY_NAMES

    assert name in LIBRARY_NAMES


@pytest.fixture(scope="module")
def crowd_frame():
    rng = np.random.default_rng(0)
    frame = make_topic_frame(8, n_errors=3)
    frame["votes"] = [[lab if rng.random() < 0.8 else "food" for _ in range(3)]
                      for lab in frame["true_label"]]
    return frame


@pytest.mark.parametrize("method", RANKING_METHODS.names())
def test_ranking_methods_are_finite_and_row_order_invariant(crowd_frame, method):
    from labelaudit import scan

    kwargs = {"annotations": "votes"} if method == "crowdlab" else {}
    result = scan(crowd_frame, scorers=["tfidf"], methods=[method], rank_by=method, **kwargs)
    scores = pd.Series(result.scores[method], index=result.ids)
    assert len(scores) == len(crowd_frame) and np.isfinite(scores).all()
    shuffled = crowd_frame.sample(frac=1.0, random_state=1).reset_index(drop=True)
    again = scan(shuffled, scorers=["tfidf"], methods=[method], rank_by=method, **kwargs)
    other = pd.Series(again.scores[method], index=again.ids)
    # folds differ with row order, so scores move a little; the errors stay on top
    top = set(scores.nsmallest(3).index)
    assert len(top & set(other.nsmallest(6).index)) >= 2


@pytest.mark.parametrize("fmt", [f for f in FORMATS.names() if f != "table"])
def test_every_file_format_round_trips(tmp_path, fmt):
    from labelaudit.io import read_table, write_table

    frame = pd.DataFrame({"id": [1, 2], "text": ["a\u2028b", "c,\"d\""], "p": [0.5, 0.25]})
    out = write_table(frame, tmp_path / f"x.{fmt}")
    pd.testing.assert_frame_equal(read_table(out), frame)


@pytest.mark.parametrize("fmt", [f for f in FORMATS.names() if f != "parquet"])
def test_every_text_format_goes_to_stdout(fmt):
    from labelaudit.io import emit

    stream = io.StringIO()
    emit(pd.DataFrame({"id": [7], "text": ["hello"]}), format=fmt, stdout=stream)
    assert "hello" in stream.getvalue()


def test_the_cli_help_loads_no_heavy_library():
    """Every command's parser reads names from the registry, so --help stays fast."""
    import subprocess
    import sys

    code = ("import sys; from labelaudit.cli import build_parser; build_parser(); "
            "print('pandas' in sys.modules, 'numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
    assert out.split() == ["False", "False"]
