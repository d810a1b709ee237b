"""Progress a user sees anywhere: bars on a terminal, plain lines on stderr elsewhere (a file,
a pipe, nohup, CI), at most one line per interval, nothing with --quiet."""

from __future__ import annotations

import re
import sys

import pytest
from tests.conftest import make_topic_frame

from labelaudit.cli import main
from labelaudit.cli._common import show_progress
from labelaudit.engine import HashingOptions
from labelaudit.models import default_progress, progress_bar
from labelaudit.scanning import scan

LINE = re.compile(r"labelaudit \[\d+:\d\d(:\d\d)?\] .+: [\d,]+(/[\d,]+)? \w.*")


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _lines(capsys) -> list[str]:
    return capsys.readouterr().err.splitlines()


def test_a_line_at_the_start_then_at_most_one_per_interval_and_the_last_state(capsys):
    clock = FakeClock()
    with progress_bar(5, "cross-fitting 5 folds (tfidf)", unit=" folds", enabled=True,
                      interval=30, clock=clock) as bar:
        for step in (10, 25, 31, 20, 5):  # seconds each fold takes
            clock.now += step
            bar.update(1)
    assert _lines(capsys) == [
        "labelaudit [0:00] cross-fitting 5 folds (tfidf): 0/5 folds",
        "labelaudit [0:35] cross-fitting 5 folds (tfidf): 2/5 folds",  # 30 s since the last
        "labelaudit [1:06] cross-fitting 5 folds (tfidf): 3/5 folds",
        "labelaudit [1:31] cross-fitting 5 folds (tfidf): 5/5 folds",  # the stage's end
    ]


def test_a_short_stage_prints_only_its_start(capsys):
    clock = FakeClock()
    with progress_bar(4, "encoding 4 texts", unit=" texts", enabled=True, clock=clock) as bar:
        for _ in range(4):
            clock.now += 2
            bar.update(1)
    assert _lines(capsys) == ["labelaudit [0:00] encoding 4 texts: 0/4 texts"]


def test_many_quick_steps_do_not_flood_the_log(capsys):
    clock = FakeClock()
    with progress_bar(None, "hashing", unit=" rows", enabled=True, interval=30,
                      clock=clock) as bar:
        for _ in range(12_800):  # 200 s of 1/64 s chunks of 1,000 rows
            clock.now += 1 / 64
            bar.update(1000)
    lines = _lines(capsys)
    assert 2 <= len(lines) <= 1 + 200 // 30 + 1
    assert lines[0] == "labelaudit [0:00] hashing: 0 rows"
    assert lines[-1] == "labelaudit [3:20] hashing: 12,800,000 rows"
    assert all(LINE.fullmatch(line) for line in lines), lines


def test_interval_zero_prints_every_step_with_its_postfix_and_hours(capsys):
    clock = FakeClock()
    with progress_bar(2, "training (ce)", unit=" epochs", enabled=True, interval=0,
                      clock=clock) as bar:
        clock.now += 3725
        bar.set_postfix_str("1,234 ex/s", refresh=False)
        bar.update(1)
        bar.update(1)
    assert _lines(capsys) == ["labelaudit [0:00] training (ce): 0/2 epochs",
                              "labelaudit [1:02:05] training (ce): 1/2 epochs, 1,234 ex/s",
                              "labelaudit [1:02:05] training (ce): 2/2 epochs, 1,234 ex/s"]


def test_a_stage_that_fails_still_shows_where_it_stopped(capsys):
    clock = FakeClock()
    with pytest.raises(KeyError), progress_bar(3, "folds", unit=" folds", enabled=True,
                                               clock=clock) as bar:
        clock.now += 40
        bar.update(1)  # printed: 40 s since the start line
        clock.now += 5
        bar.update(1)  # not yet
        raise KeyError("boom")
    assert _lines(capsys) == ["labelaudit [0:00] folds: 0/3 folds",
                              "labelaudit [0:40] folds: 1/3 folds",
                              "labelaudit [0:45] folds: 2/3 folds"]


def test_disabled_progress_is_silent(capsys):
    with progress_bar(3, "folds", unit=" folds", enabled=False, interval=0) as bar:
        bar.update(3)
    assert capsys.readouterr().err == ""


def test_a_terminal_keeps_its_bar(capsys, monkeypatch):
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    with progress_bar(3, "cross-fitting 3 folds", unit=" folds", enabled=True,
                      interval=0) as bar:
        bar.update(3)
    err = capsys.readouterr().err
    assert "cross-fitting 3 folds:" in err and "%|" in err and "\r" in err  # a tqdm bar
    assert "labelaudit [" not in err


def test_progress_is_on_by_default_off_the_terminal(monkeypatch):
    assert not sys.stderr.isatty()  # pytest captures stderr
    assert default_progress() is True
    monkeypatch.setattr(sys, "stderr", None)
    assert default_progress() is False


def test_cli_progress_means_not_quiet():
    from argparse import Namespace

    assert show_progress(Namespace(quiet=False)) is True  # stderr is not a terminal here
    assert show_progress(Namespace(quiet=True)) is False


@pytest.fixture
def data_file(tmp_path):
    path = tmp_path / "reviews.csv"
    make_topic_frame(12, n_errors=3).drop(columns=["true_label", "is_error"]).to_csv(
        path, index=False)
    return path


def test_scan_off_the_terminal_prints_lines_and_quiet_prints_nothing(data_file, tmp_path,
                                                                     capsys):
    assert main(["scan", str(data_file), "--scorers", "tfidf", "--out",
                 str(tmp_path / "a.csv")]) == 0
    err = capsys.readouterr().err
    assert "labelaudit [0:00] cross-fitting 5 folds (tfidf): 0/5 folds" in err.splitlines()
    assert main(["scan", str(data_file), "--scorers", "tfidf", "--out",
                 str(tmp_path / "b.csv"), "--quiet"]) == 0
    assert capsys.readouterr().err == ""


def test_streamed_scan_prints_its_stages_as_lines(data_file, tmp_path, capsys):
    scan(data_file, scorers=["tfidf"], out=tmp_path / "issues.csv", chunk_size=10,
         tfidf="hashing", hashing=HashingOptions(n_features=2**10, n_buckets=4))
    lines = capsys.readouterr().err.splitlines()
    assert "labelaudit [0:00] hashing: 0 rows" in lines
    assert any(re.fullmatch(r"labelaudit \[0:00\] fitting \d folds \(tfidf \(hashed\)\): "
                            r"0/\d folds", line) for line in lines), lines
    assert "labelaudit [0:00] writing: 0/36 rows" in lines
    assert all(LINE.fullmatch(line) for line in lines), lines
