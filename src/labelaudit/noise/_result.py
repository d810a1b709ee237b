"""The result of a noise injection: noisy labels, what changed, and achieved rates."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from labelaudit._errors import InvalidInputError
from labelaudit.io import ResultFiles, render_table
from labelaudit.noise._common import target_count

if TYPE_CHECKING:
    import pandas as pd


_MATRIX_CLASSES = 20  # the largest noise matrix a summary prints


@dataclass(frozen=True)
class NoiseResult(ResultFiles):
    """Noisy labels (values of ``classes``) and a record of every change.

    Per item: ``clean_labels``, ``is_noisy`` (label flipped, or text swapped), the
    ``noise_method`` that noised it (None for clean items), ``ids`` (row numbers unless
    given), ``text_source`` (the row whose text replaced its own with ``swap_input``, else
    -1), its noise source and ``split`` when given, and ``similarity`` (hardness ``s_x``,
    instance-dependent noise only). ``target_matrix`` is the noise matrix class-dependent noise
    followed, ``rate`` the requested rate (None: crowd-majority with every disagreement) and
    ``recipe`` the methods with their shares.
    """

    labels: np.ndarray
    clean_labels: np.ndarray
    is_noisy: np.ndarray
    noise_method: np.ndarray
    classes: np.ndarray
    ids: np.ndarray
    text_source: np.ndarray
    sources: np.ndarray | None
    split: np.ndarray | None
    similarity: np.ndarray | None
    target_matrix: np.ndarray | None
    rate: float | None
    recipe: tuple[tuple[str, float], ...]
    random_state: int | None

    @property
    def n_noisy(self) -> int:
        """Number of noised items."""
        return int(self.is_noisy.sum())

    @property
    def n_requested(self) -> int | None:
        """Items the rate asks for, ``round(rate * n_samples)`` with halves up (None: no
        rate); a cap for crowd-majority noise."""
        return None if self.rate is None else target_count(self.rate, len(self.labels))

    @property
    def achieved_rate(self) -> float:
        """Share of items noised."""
        return self.n_noisy / len(self.labels) if len(self.labels) else 0.0

    @property
    def transition_counts(self) -> np.ndarray:
        """Counts of (clean class, noisy class), shape (n_classes, n_classes)."""
        index = {v: i for i, v in enumerate(self.classes.tolist())}
        clean = np.array([index[v] for v in self.clean_labels.tolist()], dtype=np.int64)
        noisy = np.array([index[v] for v in self.labels.tolist()], dtype=np.int64)
        counts = np.zeros((len(self.classes), len(self.classes)), dtype=np.int64)
        np.add.at(counts, (clean, noisy), 1)
        return counts

    @property
    def noise_matrix(self) -> np.ndarray:
        """The achieved ``P(noisy = j | clean = i)``, shape (n_classes, n_classes);
        identity rows for classes with no items."""
        counts = self.transition_counts.astype(float)
        totals = counts.sum(axis=1, keepdims=True)
        empty = totals[:, 0] == 0
        counts[empty] = np.eye(len(self.classes))[empty]
        totals[empty] = 1.0
        return counts / totals

    def to_frame(self) -> pd.DataFrame:
        """One row per item: ``id, label, clean_label, is_noisy, noise_method`` and, when
        present, ``noise_source``, ``split`` and ``text_from`` (id of the swapped-in text)."""
        import pandas as pd
        frame = pd.DataFrame({
            "id": self.ids, "label": self.labels, "clean_label": self.clean_labels,
            "is_noisy": self.is_noisy, "noise_method": self.noise_method})
        if self.sources is not None:
            frame["noise_source"] = self.sources
        if self.split is not None:
            frame["split"] = self.split
        if (self.text_source >= 0).any():
            frame["text_from"] = self._text_from()
        return frame

    def apply_to(self, frame: pd.DataFrame, *, label: str = "label", text: str | None = None,
                 text_pair: str | None = None) -> pd.DataFrame:
        """The noised copy of ``frame``, the table these labels came from (row for row).

        Column ``label`` holds the noisy label; ``clean_label``, ``is_noisy`` and
        ``noise_method`` are added, and ``noise_source`` with sources. Where a text was
        swapped in (``swap_input``), ``text`` (and ``text_pair``) hold the new text,
        ``clean_<column>`` the original one and ``text_from`` the id of the item it came from.

        Examples
        --------
        >>> from labelaudit.noise import inject_noise
        >>> import pandas as pd
        >>> frame = pd.DataFrame({"text": list("abcd"), "label": ["x", "y", "x", "y"]})
        >>> result = inject_noise(frame["label"], method="uniform", rate=0.25, random_state=1)
        >>> result.apply_to(frame).columns.tolist()
        ['text', 'label', 'clean_label', 'is_noisy', 'noise_method']
        """
        if len(frame) != len(self.labels):
            raise InvalidInputError(
                f"the table has {len(frame)} rows but {len(self.labels)} labels were noised; "
                "apply the result to the table its labels came from")
        out = frame.copy()
        out[label] = self.labels
        out["clean_label"] = self.clean_labels
        out["is_noisy"] = self.is_noisy
        out["noise_method"] = self.noise_method
        if self.sources is not None:
            out["noise_source"] = self.sources
        swapped = self.text_source >= 0
        if swapped.any():
            for column in (text, text_pair):
                if column:
                    out[f"clean_{column}"] = frame[column]
                    out.loc[swapped, column] = frame[column].to_numpy()[self.text_source[swapped]]
            out["text_from"] = self._text_from()
        return out

    def _text_from(self) -> np.ndarray:
        """The id of the item whose text was swapped in; None where the text is kept."""
        return np.array([self.ids[j] if j >= 0 else None for j in self.text_source.tolist()],
                        dtype=object)

    def to_dict(self) -> dict:
        """JSON-ready record: the recipe, requested and achieved rates, the rates table and
        the target and achieved noise matrices."""
        return {
            "method": self.recipe[0][0] if len(self.recipe) == 1 else None,
            "recipe": [{"method": m, "share": s} for m, s in self.recipe],
            "requested_rate": self.rate, "n_requested": self.n_requested, "seed": self.random_state,
            "n_items": len(self.labels), "n_noisy": self.n_noisy,
            "achieved_rate": self.achieved_rate,
            "rates": self.achieved_rates().to_dict(orient="records"),
            "classes": self.classes.tolist(), "noise_matrix": self.noise_matrix.tolist(),
            "transition_counts": self.transition_counts.tolist(),
            "target_matrix": None if self.target_matrix is None else self.target_matrix.tolist()}

    def summary(self) -> str:
        """What was noised, for a person: counts, rates, the rates table and the achieved
        noise matrix (up to 20 classes)."""
        import pandas as pd

        what = (self.recipe[0][0] if len(self.recipe) == 1
                else ", ".join(f"{m} {s:g}" for m, s in self.recipe))
        items = f"{self.n_requested} item{'' if self.n_requested == 1 else 's'}"
        if self.rate is None:
            asked = "every disagreement"
        elif self.recipe == (("crowd-majority", 1.0),):
            asked = f"requested rate {self.rate:g} as a cap -> at most {items}"
        else:
            asked = f"requested rate {self.rate:g} -> {items}"
        swapped = int((self.text_source >= 0).sum())
        kept = f"; {swapped} by a text swap, label kept" if swapped else ""
        rates = self.achieved_rates()
        rates["rate"] = rates["rate"].map(lambda v: f"{v:.4f}")
        names = [str(c) for c in self.classes.tolist()]
        head = [f"noised {self.n_noisy} of {len(self.labels)} items with {what} ({asked}; "
                f"achieved rate {self.achieved_rate:.4f}{kept})", render_table(rates)]
        if len(names) > _MATRIX_CLASSES:  # a K x K matrix is unreadable on a terminal
            return "\n".join(head + [
                f"achieved noise matrix: {len(names)} x {len(names)} classes, not shown "
                f"(more than {_MATRIX_CLASSES}); it is the noise_matrix attribute, and "
                "`labelaudit noise --summary-out FILE.json` writes it"])
        matrix = pd.DataFrame(self.noise_matrix, index=names, columns=names).round(4)
        return "\n".join(head + [
            "achieved noise matrix (row = clean label, column = noisy label):",
            matrix.to_string()])

    def achieved_rates(self) -> pd.DataFrame:
        """Achieved rates by ``overall``, ``class``, ``method``, ``source`` and ``split``
        (columns ``by, value, n_items, n_noisy, rate``); a method's ``n_items`` is the whole
        dataset, so its rates add up to the overall rate."""
        import pandas as pd
        n = len(self.labels)
        rows: list[tuple[str, object, int, int]] = [("overall", "all", n, self.n_noisy)]
        for value in self.classes.tolist():
            members = self.clean_labels == value
            rows.append(("class", value, int(members.sum()), int(self.is_noisy[members].sum())))
        for method, _ in self.recipe:
            rows.append(("method", method, n, int((self.noise_method == method).sum())))
        for by, groups in (("source", self.sources), ("split", self.split)):
            if groups is None:
                continue
            for value in pd.unique(pd.Series(groups, dtype=object)).tolist():
                members = np.asarray([g == value for g in groups.tolist()])
                rows.append((by, value, int(members.sum()), int(self.is_noisy[members].sum())))
        frame = pd.DataFrame(rows, columns=["by", "value", "n_items", "n_noisy"])
        frame["value"] = frame["value"].astype(object)
        frame["rate"] = frame["n_noisy"] / frame["n_items"].where(frame["n_items"] > 0, 1)
        return frame
