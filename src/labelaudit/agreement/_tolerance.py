"""How many disagreements an annotation can afford: :func:`tolerable_disagreements` with
its inputs, as a result with the same three faces as the other agreement results."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from labelaudit.agreement._noise_model import tolerable_disagreements
from labelaudit.agreement._text import key_value_text, percent
from labelaudit.io import ResultFiles

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Tolerance", "tolerance"]


@dataclass(frozen=True)
class Tolerance(ResultFiles):
    """The most disagreements (``max_disagreements``, -1 for none) among ``n_items`` that
    keep the agreed subset's noise bound at most ``gamma`` at ``confidence``."""

    n_items: int
    p_chance: float
    gamma: float
    confidence: float
    max_disagreements: int

    def to_dict(self) -> dict[str, float]:
        return asdict(self)

    def to_frame(self) -> pd.DataFrame:
        """One row with the fields."""
        import pandas as pd
        return pd.DataFrame([self.to_dict()])

    def summary(self) -> str:
        """The inputs and the answer as aligned ``name  value`` lines."""
        d = self.max_disagreements
        return key_value_text([
            ("items (n)", self.n_items),
            ("p, chance agreement on a hard item", self.p_chance),
            ("target gamma", percent(self.gamma)),
            ("confidence", self.confidence),
            ("most disagreements tolerated", d if d >= 0 else "none (even 0 exceeds gamma)"),
        ])


def tolerance(n_items: int, p_chance: float, *, gamma: float = 0.05,
              confidence: float = 0.95) -> Tolerance:
    """:func:`tolerable_disagreements` with its inputs, as a :class:`Tolerance`.

    Examples
    --------
    >>> tolerance(1000, 0.5).max_disagreements
    33
    """
    d = tolerable_disagreements(n_items, p_chance, gamma=gamma, confidence=confidence)
    return Tolerance(n_items, p_chance, gamma, confidence, d)
