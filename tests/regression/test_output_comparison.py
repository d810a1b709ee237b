"""The comparison of ``test_outputs_unchanged``: what another CPU changes passes, a real change
of an output fails.

Another CPU moves floats in their last digits (and, through iterative fits, a little further):
every stored expected file with its floats moved so still matches itself. A changed rounding,
a changed rank (two rows swapped), a changed label, a column added or dropped, a count or an
integer changed, a tensor moved by 1e-2, a PNG with a changed patch each fail.
"""

from __future__ import annotations

import io
import re
import sys
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_outputs_unchanged import (  # noqa: E402
    _NUMBER,
    EXPECTED,
    PNG,
    ROUNDED_DIGITS,
    RTOL,
    Case,
    Out,
    _digits,
    check,
    difference,
    regenerate,
    tokens_match,
)

STORED = sorted(p.relative_to(EXPECTED).as_posix() for p in EXPECTED.rglob("*") if p.is_file())
TEXT = [name for name in STORED if not name.endswith((".pt", ".png"))]
TENSORS = [name for name in STORED if name.endswith(".pt")]
IMAGES = [name for name in STORED if name.endswith(".png")]


def moved(token: str, factor: float) -> str:
    """A float token as another CPU may print it: a full-precision float times ``factor``; a
    float printed rounded to a few digits one unit further in its last digit (the worst a
    rounding the other way does)."""
    digits, _ = _digits(token)
    if not ROUNDED_DIGITS <= digits < 10:
        return repr(float(token) * factor)
    mantissa, e, exponent = token.partition("e") if "e" in token else token.partition("E")
    places = len(mantissa.partition(".")[2])
    shifted = Decimal(mantissa) + Decimal(1).scaleb(-places)
    return f"{shifted:.{places}f}{e}{exponent}"


def move_floats(text: str, factor: float) -> str:
    parts = _NUMBER.split(text)
    changed = [moved(t, factor) if i % 2 and any(c in t for c in ".eE") else t
               for i, t in enumerate(parts)]
    return "".join(changed)


def test_every_stored_file_is_checked_by_one_of_the_comparisons():
    assert TEXT and TENSORS and IMAGES
    assert not (EXPECTED / "sha256.json").exists()


@pytest.mark.parametrize("factor", [1 + 3e-7, 1 + RTOL / 2], ids=["last-digits", "other-fit"])
@pytest.mark.parametrize("name", TEXT)
def test_a_text_with_its_floats_moved_still_matches(name, factor):
    text = (EXPECTED / name).read_text(encoding="utf-8")
    other = move_floats(text, factor)
    floats = [t for t in _NUMBER.findall(text) if any(c in t for c in ".eE")]
    assert (other != text) == bool(floats)
    assert difference(name, text.encode(), other.encode()) is None


@pytest.mark.parametrize(("expected", "actual"), [
    ("0.9999999999999999", "1.0"),    # roc_auc of evaluate-tokens on two CPUs
    ("4.78609e-05", "4.78608e-05"),   # a token score of scan-tokens, 6 significant digits
    ("0.9599", "0.9600"),             # a table's 4 decimals rounding the other way
    ("4.79e-05", "4.78e-05"),         # a report's 3 significant digits
    ("0.9685062758726565", "0.96850424085229"),  # a fitted probability on two CPUs
    ("-0.0", "0.0"),
])
def test_last_digit_differences_match(expected, actual):
    assert tokens_match(expected, actual)
    line = '{"score": %s, "rank": 1}\n'
    assert difference("x.jsonl", (line % expected).encode(), (line % actual).encode()) is None


@pytest.mark.parametrize(("expected", "actual"), [
    ("0.5", "0.51"),      # a changed rounding
    ("0.5", "0.6"),
    ("0.25", "0.2"),
    ("12", "13"),         # counts, ranks, ids: exact
    ("1", "1.0"),         # an integer became a float
    ("0.0803", "0.0823"),
    ("4.546509550337418", "4.556509550337418"),
])
def test_changes_beyond_the_tolerance_do_not_match(expected, actual):
    assert not tokens_match(expected, actual)
    line = '{"score": %s, "rank": 1}\n'
    found = difference("x.jsonl", (line % expected).encode(), (line % actual).encode())
    assert found and f"number {expected} became {actual}" in found and "line 1" in found


ISSUES = "scan-stream/issues.csv"


def issues_lines() -> list[str]:
    return (EXPECTED / ISSUES).read_text(encoding="utf-8").splitlines(keepends=True)


def changed_rounding(lines: list[str]) -> list[str]:
    """Every float of the file rounded to 2 decimals."""
    return [re.sub(r"(?<![\w.])-?\d+\.\d{3,}(?:e-?\d+)?(?!\w)",
                   lambda m: f"{float(m.group(0)):.2f}", line) for line in lines]


def swapped_rows(lines: list[str]) -> list[str]:
    """Two rows swapped whole: the ranking changed."""
    return [lines[0], lines[2], lines[1], *lines[3:]]


def swapped_ids(lines: list[str]) -> list[str]:
    """Two items swapped in the ranking, every other cell as it was."""
    first, second = lines[1].split(",", 1), lines[2].split(",", 1)
    return [lines[0], f"{second[0]},{first[1]}", f"{first[0]},{second[1]}", *lines[3:]]


def changed_label(lines: list[str]) -> list[str]:
    cells = lines[1].split(",")
    cells[3] = "food" if cells[3] != "food" else "tech"  # suggested_label
    return [lines[0], ",".join(cells), *lines[2:]]


def extra_column(lines: list[str]) -> list[str]:
    return [line.rstrip("\n") + (",extra\n" if i == 0 else ",0.5\n")
            for i, line in enumerate(lines)]


def missing_column(lines: list[str]) -> list[str]:
    return [line.rstrip("\n").rsplit(",", 1)[0] + "\n" for line in lines]


def missing_row(lines: list[str]) -> list[str]:
    return lines[:-1]


def changed_flag(lines: list[str]) -> list[str]:
    """The top item's ``flagged`` cell (the evidence column follows it) turned False."""
    return [lines[0], lines[1].replace(",True,", ",False,", 1), *lines[2:]]


@pytest.mark.parametrize("change", [changed_rounding, swapped_rows, swapped_ids, changed_label,
                                    extra_column, missing_column, missing_row, changed_flag])
def test_real_changes_of_a_ranking_fail(change):
    lines = issues_lines()
    other = change(lines)
    assert other != lines
    found = difference(ISSUES, "".join(lines).encode(), "".join(other).encode())
    assert found is not None and found.startswith(f"{ISSUES}: line ")


def test_a_changed_rank_fails_even_with_the_floats_moved():
    lines = issues_lines()
    other = move_floats("".join(swapped_ids(lines)), 1 + 3e-7)
    found = difference(ISSUES, "".join(lines).encode(), other.encode())
    assert found and found.startswith(f"{ISSUES}: line 2: ")


def test_a_changed_word_of_a_report_fails():
    name = "report/report.html"
    text = (EXPECTED / name).read_text(encoding="utf-8")
    assert difference(name, text.encode(), text.replace("tech", "tehc", 1).encode())
    assert difference(name, text.encode(), text[:-10].encode())


def _moved_tensors(data: bytes, change) -> bytes:
    import torch

    state = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    for key, tensor in state.items():
        state[key] = change(key, tensor)
    buffer = io.BytesIO()
    torch.save(state, buffer)
    return buffer.getvalue()


@pytest.mark.parametrize("name", TENSORS)
def test_a_model_moved_in_the_last_digits_matches_and_by_1e_2_does_not(name):
    import torch

    data = (EXPECTED / name).read_bytes()
    assert difference(name, data, _moved_tensors(data, lambda k, t: t * (1 + 3e-7))) is None
    assert difference(name, data, _moved_tensors(data, lambda k, t: t + 1e-7)) is None
    first = next(iter(torch.load(io.BytesIO(data), weights_only=True)))

    def one_weight(key, tensor):
        if key != first:
            return tensor
        tensor = tensor.clone()
        tensor.view(-1)[0] += 1e-2
        return tensor

    found = difference(name, data, _moved_tensors(data, one_weight))
    assert found and first in found and "1 of" in found
    as_double = _moved_tensors(data, lambda k, t: t.double())
    assert "torch.float64" in difference(name, data, as_double)
    state = torch.load(io.BytesIO(data), weights_only=True)
    state["extra"] = torch.zeros(1)
    buffer = io.BytesIO()
    torch.save(state, buffer)
    assert "keys" in difference(name, data, buffer.getvalue())


def _png(pixels: np.ndarray) -> bytes:
    from matplotlib.image import imsave

    buffer = io.BytesIO()
    imsave(buffer, pixels, format="png")
    return buffer.getvalue()


@pytest.mark.parametrize("name", IMAGES)
def test_a_plot_with_pixels_moved_a_little_matches_and_a_changed_patch_does_not(name):
    from matplotlib.image import imread

    data = (EXPECTED / name).read_bytes()
    pixels = imread(io.BytesIO(data), format="png")
    rng = np.random.default_rng(0)
    noisy = pixels.copy()
    noisy[..., :3] = np.clip(noisy[..., :3] + rng.choice([-1, 0, 1], noisy[..., :3].shape) / 255,
                             0, 1)
    assert difference(name, data, _png(noisy)) is None
    patched = pixels.copy()
    patched[10:14, 10:14, :3] = 1 - patched[10:14, 10:14, :3]
    assert difference(name, data, _png(patched))
    assert "shape" in difference(name, data, _png(pixels[:-1]))


def test_regenerated_files_are_checked_back(tmp_path, monkeypatch):
    """What LABELAUDIT_REGEN_EXPECTED writes is what the next check reads: text, PNG and the
    normalisers, with no hash file beside them."""
    import test_outputs_unchanged as module

    monkeypatch.setattr(module, "EXPECTED", tmp_path / "expected")
    work = tmp_path / "work"
    (work / "model").mkdir(parents=True)
    (work / "a.csv").write_text("id,score\nx,0.25\n")
    png = _png(np.zeros((4, 4, 3)))
    (work / "model" / "p.png").write_bytes(png)
    case = Case("fake", lambda: None, (Out("a.csv"), Out("model/p.png", PNG)))
    written = {"a.csv", "model/p.png"}
    regenerate(case, written, work, tmp_path)
    assert sorted(p.name for p in (tmp_path / "expected").rglob("*") if p.is_file()) == \
        ["a.csv", "p.png"]
    assert check(case, written, work, tmp_path) == []
    (work / "a.csv").write_text("id,score\nx,0.2500001\n")
    assert check(case, written, work, tmp_path) == []
    (work / "a.csv").write_text("id,score\ny,0.25\n")
    (problem,) = check(case, written, work, tmp_path)
    assert problem.startswith("fake/a.csv: line 2: text differs")
    assert (tmp_path / "actual" / "fake" / "a.csv").read_text() == "id,score\ny,0.25\n"

