"""The data-map section: the training dynamics of the ``dynamics`` member, drawn as the
data map of Swayamdipta et al. (2020), from the ``dynamics_*`` columns of a scan output."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from labelaudit.report._html import cell, fmt_count, fmt_num, table
from labelaudit.report._plots import data_map

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["MAX_POINTS", "cartography_section", "has_dynamics"]

MAX_POINTS = 5000  # points drawn at most (flagged items first), so the page stays small
_COLUMNS = ("dynamics_confidence", "dynamics_variability")


def has_dynamics(frame: pd.DataFrame) -> bool:
    """Whether the scan output carries the data map's two columns."""
    return all(c in frame.columns for c in _COLUMNS)


def _drawn(flagged: np.ndarray, usable: np.ndarray) -> np.ndarray:
    """Positions to draw: every usable flagged item, then a fixed random sample of the
    others, ``MAX_POINTS`` in all."""
    hit = np.flatnonzero(usable & flagged)[:MAX_POINTS]
    rest = np.flatnonzero(usable & ~flagged)
    room = MAX_POINTS - len(hit)
    if len(rest) > room:
        rest = np.sort(np.random.default_rng(0).choice(rest, size=room, replace=False))
    return np.r_[hit, rest].astype(int)


def cartography_section(frame: pd.DataFrame) -> str:
    """The data map (variability against confidence, flagged items in red) and the median
    statistics of flagged and other items."""
    import pandas as pd
    confidence = pd.to_numeric(frame["dynamics_confidence"], errors="coerce").to_numpy(float)
    variability = pd.to_numeric(frame["dynamics_variability"], errors="coerce").to_numpy(float)
    flagged = frame["flagged"].to_numpy(dtype=bool)
    usable = np.isfinite(confidence) & np.isfinite(variability)
    drawn = _drawn(flagged, usable)
    svg = data_map(variability[drawn], confidence[drawn], flagged[drawn], prefix="datamap")
    sampled = (f" A random sample of {fmt_count(len(drawn))} of the {fmt_count(usable.sum())} "
               "items is drawn, every flagged item among them." if len(drawn) < usable.sum()
               else "")
    columns = [("confidence", confidence), ("variability", variability)]
    if "dynamics_aum" in frame.columns:
        columns.insert(0, ("AUM", pd.to_numeric(frame["dynamics_aum"], errors="coerce")
                           .to_numpy(float)))
    rows = []
    for name, mask in (("flagged", flagged), ("not flagged", ~flagged)):
        medians = [np.nanmedian(v[mask]) if (mask & np.isfinite(v)).any() else None
                   for _, v in columns]
        rows.append((name, cell(fmt_count(mask.sum()), cls="num"),
                     *[cell(fmt_num(m) if m is not None else "–", cls="num") for m in medians]))
    summary = table(["items", "count", *[f"median {n}" for n, _ in columns]], rows,
                    numeric=[False, True, *[True] * len(columns)])
    note = (
        '<p class="note">Each point is an item: its confidence is the mean, over the epochs '
        "of the <code>dynamics</code> member's training, of the probability of its given "
        "label, and its variability the standard deviation of that probability "
        "(Swayamdipta et al. 2020). Easy items sit top left (high confidence, low "
        "variability), ambiguous ones to the right, and hard-to-learn ones bottom left, "
        "where label errors gather. The probabilities are those of held-out items (each "
        "fold's model, after every epoch), so no point comes from a model that saw its "
        "label. AUM is the mean margin of the given label's logit over the largest other "
        f"logit (Pleiss et al. 2020); lower is more suspect.{sampled}</p>")
    return f'<div class="plot" id="data-map">{svg}</div>{note}{summary}'
