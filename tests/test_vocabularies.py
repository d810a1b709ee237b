"""Property tests over every member of every list of names (scikit-learn's all_estimators
idea): each list lives in the package that implements it, and is what dispatches."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from tests.conftest import make_topic_frame

from labelaudit import InvalidParameterError, scan
from labelaudit.agreement import AGGREGATION_METHODS
from labelaudit.detect import RANKING_METHODS
from labelaudit.impact import SWEEP_SCORERS
from labelaudit.io import FORMATS, emit, read_table, write_table
from labelaudit.models import (
    DEFAULT_SCORERS,
    SCORERS,
    TOKEN_SCORERS,
    Scorer,
    TokenScorer,
    make_scorer,
    make_token_scorer,
)
from labelaudit.noise import NOISE_METHODS
from labelaudit.scanning import LABEL_SET_METHODS, PRESETS
from labelaudit.training import method_names

LISTS = {"scorer": SCORERS, "token scorer": TOKEN_SCORERS, "ranking method": RANKING_METHODS,
         "label-set method": LABEL_SET_METHODS, "noise method": NOISE_METHODS,
         "aggregation method": AGGREGATION_METHODS, "sweep scorer": SWEEP_SCORERS}
MEMBERS = [(family, name) for family, names in LISTS.items() for name in names]


@pytest.mark.parametrize(("family", "name"), MEMBERS)
def test_every_member_is_what_dispatches(family, name):
    assert callable(LISTS[family][name])


def test_unknown_names_list_the_members():
    with pytest.raises(InvalidParameterError, match="unknown scorer 'bm25'; choose from tfidf"):
        make_scorer("bm25")
    with pytest.raises(InvalidParameterError, match="unknown token scorer 'x'; choose from "
                       "encoder, finetune"):
        make_token_scorer("x")
    with pytest.raises(InvalidParameterError, match="unknown ranking method 'nope'; choose "
                       "from loss, ensemble"):
        scan(make_topic_frame(8), scorers=["tfidf"], methods=["nope"])


def test_defaults_and_presets_name_members():
    assert set(DEFAULT_SCORERS) <= set(SCORERS)
    assert {n for names in PRESETS.values() for n in names or ()} <= set(SCORERS)
    assert set(SWEEP_SCORERS) <= set(SCORERS) and {"base", "filter"} <= set(method_names())


@pytest.mark.parametrize("name", SCORERS)
def test_scorers_are_scorers_named_as_listed(name):
    cls = SCORERS[name]
    assert issubclass(cls, Scorer) and cls.name == name
    assert make_scorer(name).name == name


@pytest.mark.parametrize("name", TOKEN_SCORERS)
def test_token_scorers_are_scorers_and_clone_unfitted(name):
    cls = TOKEN_SCORERS[name]
    assert isinstance(cls, type) and issubclass(cls, TokenScorer) and issubclass(cls, Scorer)
    scorer = make_token_scorer(name, random_state=3)
    assert isinstance(scorer, cls) and scorer.name.startswith(name)
    scorer.head_ = "fitted"  # learned state ends in "_" and is not cloned
    fresh = scorer.clone()
    assert fresh.random_state == 3 and not hasattr(fresh, "head_")


@pytest.fixture(scope="module")
def crowd_frame():
    rng = np.random.default_rng(0)
    frame = make_topic_frame(8, n_errors=3)
    frame["votes"] = [[lab if rng.random() < 0.8 else "food" for _ in range(3)]
                      for lab in frame["true_label"]]
    return frame


@pytest.mark.parametrize("method", RANKING_METHODS)
def test_ranking_methods_are_finite_and_row_order_invariant(crowd_frame, method):
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


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f != "table"])
def test_every_file_format_round_trips(tmp_path, fmt):
    frame = pd.DataFrame({"id": [1, 2], "text": ["a\u2028b", "c,\"d\""], "p": [0.5, 0.25]})
    out = write_table(frame, tmp_path / f"x.{fmt}")
    pd.testing.assert_frame_equal(read_table(out), frame)


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f != "parquet"])
def test_every_text_format_goes_to_stdout(fmt):
    stream = io.StringIO()
    emit(pd.DataFrame({"id": [7], "text": ["hello"]}), format=fmt, stdout=stream)
    assert "hello" in stream.getvalue()


HEAVY = ("pandas", "sklearn", "scipy", "cleanlab", "torch", "transformers", "ray", "fastapi",
         "matplotlib", "datasets", "pyarrow")


def test_the_package_and_every_parser_load_no_heavy_library():
    """`import labelaudit`, every command's package and every command's parser (which reads the
    packages' lists) load no heavy third-party library: those are imported inside the
    functions that use them, so `labelaudit --help` and the pure functions start fast."""
    import subprocess
    import sys

    code = ("import sys, labelaudit, labelaudit.training, labelaudit.consistency_check, "
            "labelaudit.impact, labelaudit.noise, labelaudit.agreement, labelaudit.review, "
            "labelaudit.report; from labelaudit.cli import COMMANDS, build_parser; "
            f"build_parser(*COMMANDS); print([m for m in {HEAVY!r} if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "[]", out.stderr
