"""Every list of names in labelaudit, one registry per family, in one light module.

Each registry maps a name to the object that implements it, written as
``"module:attribute"`` and imported only when asked for, so this module needs nothing but
the standard library and the CLI can read the names without loading scikit-learn or
torch. Adding a scorer, a noise method or a ranking method is one new file plus one line
here; the test suite runs its property tests over every member
(``tests/test_registry.py``), as scikit-learn's ``all_estimators()`` does.

Examples
--------
>>> from labelaudit.registry import SCORERS
>>> SCORERS.names()
('tfidf', 'embed', 'finetune', 'tfidf-char', 'knn', 'dynamics')
>>> SCORERS.load("tfidf").__name__
'TfidfScorer'
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "AGGREGATION_METHODS",
    "FILTER_DETECTORS",
    "FORMATS",
    "LABEL_SET_METHODS",
    "LABEL_SET_SCORERS",
    "LNL_METHODS",
    "NOISE_METHODS",
    "PRESETS",
    "RANKING_METHODS",
    "Registry",
    "SCORERS",
    "STREAMED_SCORERS",
    "SWEEP_SCORERS",
    "TOKEN_SCORERS",
    "all_registries",
]


@dataclass(frozen=True)
class Registry:
    """Names of one family mapped to where their implementation lives.

    Attributes
    ----------
    family : str
        What a member is, for messages ("scorer", "noise method").
    entries : dict of str to str
        ``name -> "module:attribute"``, in the order users see them.
    default : tuple of str
        The members used when the user names none.
    """

    family: str
    entries: dict[str, str]
    default: tuple[str, ...] = ()

    def names(self) -> tuple[str, ...]:
        """Every member's name, in order."""
        return tuple(self.entries)

    def __iter__(self) -> Iterator[str]:
        return iter(self.entries)

    def __contains__(self, name: object) -> bool:
        return name in self.entries

    def __len__(self) -> int:
        return len(self.entries)

    def check(self, name: str) -> str:
        """``name`` if it is a member, else an error that lists the members."""
        if name not in self.entries:
            from labelaudit._errors import InvalidParameterError

            raise InvalidParameterError(
                f"unknown {self.family} {name!r}; choose from {', '.join(self.entries)}")
        return name

    def load(self, name: str) -> Any:
        """Import and return the implementation of ``name``."""
        module, _, attribute = self.entries[self.check(name)].partition(":")
        return getattr(importlib.import_module(module), attribute)


SCORERS = Registry("scorer", {
    "tfidf": "labelaudit.models._tfidf:TfidfScorer",
    "embed": "labelaudit.models._embed:EmbedScorer",
    "finetune": "labelaudit.models._finetune:FinetuneScorer",
    "tfidf-char": "labelaudit.models._tfidf:CharTfidfScorer",
    "knn": "labelaudit.models._knn:KnnScorer",
    "dynamics": "labelaudit.models._dynamics:DynamicsScorer",
}, default=("tfidf", "tfidf-char"))

# Named sets of scan members (labelaudit.scanning._presets): None is the default above.
PRESETS: Mapping[str, tuple[str, ...] | None] = {
    "fast": ("tfidf",),
    "default": None,
    "best": ("tfidf", "finetune"),
}

# The members a streamed scan runs (word TF-IDF hashed out of core, embeddings through a
# cache), which are its default too: character n-grams are not streamed.
STREAMED_SCORERS: tuple[str, ...] = ("tfidf", "embed")

# The scorer families `select` sweeps over on a CPU (fine-tuning sweeps need a GPU).
SWEEP_SCORERS: tuple[str, ...] = ("tfidf", "embed")

# Multi-label scans: the members that score label sets (a one-vs-rest head on each one's
# features) and the label-set quality scores, lower = more suspect
# (benchmarks/multilabel_detection.py).
LABEL_SET_SCORERS: tuple[str, ...] = ("tfidf", "tfidf-char", "embed")
LABEL_SET_METHODS: tuple[str, ...] = ("log_likelihood", "worst_class", "cleanlab")

TOKEN_SCORERS = Registry("token scorer", {
    "encoder": "labelaudit.models._token_encoder:EncoderTokenScorer",
    "finetune": "labelaudit.models._token_finetune:FinetuneTokenScorer",
}, default=("encoder",))

# Label-quality scores of a whole text dataset (lower = more suspect), as `scan` computes
# them; each entry is the function behind the method.
RANKING_METHODS = Registry("ranking method", {
    "loss": "labelaudit.detect._scores:label_quality_scores",
    "ensemble": "labelaudit.detect._scores:label_quality_scores",
    "self_confidence": "labelaudit.detect._scores:label_quality_scores",
    "margin": "labelaudit.detect._scores:label_quality_scores",
    "entropy": "labelaudit.detect._scores:label_quality_scores",
    "max_prob": "labelaudit.detect._scores:label_quality_scores",
    "confident_learning": "labelaudit.detect._confident:confident_learning",
    "crowdlab": "labelaudit.detect._multiannotator:crowdlab",
}, default=("loss", "ensemble", "margin", "entropy", "max_prob", "confident_learning"))

NOISE_METHODS = Registry("noise method", {
    "uniform": "labelaudit.noise._uniform:uniform_flips",
    "class-dependent": "labelaudit.noise._class_dependent:class_dependent_flips",
    "dissenting-label": "labelaudit.noise._dissenting_label:dissenting_label_flips",
    "dissenting-worker": "labelaudit.noise._dissenting_worker:dissenting_worker_flips",
    "crowd-majority": "labelaudit.noise._crowd_majority:crowd_majority_flips",
    "minority-split": "labelaudit.noise._minority_split:minority_split_flips",
    "instance-dependent": "labelaudit.noise._instance_dependent:instance_dependent_flips",
})

# Label aggregation of crowd annotations (`agreement --method`): the function behind each
# method, whose __name__ is the method's name in labelaudit.agreement.aggregate.
AGGREGATION_METHODS = Registry("aggregation method", {
    "majority": "labelaudit.agreement._majority:majority_vote",
    "dawid-skene": "labelaudit.agreement._latent:dawid_skene",
    "glad": "labelaudit.agreement._latent:glad",
    "mace": "labelaudit.agreement._latent:mace",
}, default=("majority",))

# Output formats of every command that writes a table (`--format`, `--out` suffix).
FORMATS = Registry("output format", {
    "table": "labelaudit.io._write:render_table",
    "csv": "labelaudit.io._write:write_table",
    "tsv": "labelaudit.io._write:write_table",
    "jsonl": "labelaudit.io._write:write_table",
    "json": "labelaudit.io._write:write_table",
    "parquet": "labelaudit.io._write:write_table",
}, default=("table",))


# Training methods of `labelaudit train` (learning with noisy labels): the hook class of
# each published method, and `filter`, ours, which is a step of `train` itself, with its
# detect-then-train forms (the plan each name stands for; labelaudit.training._filter).
LNL_METHODS = Registry("training method", {
    "base": "labelaudit.training._methods.base:Base",
    "mixup": "labelaudit.training._methods.mixup:Mixup",
    "data-parameters": "labelaudit.training._methods.data_parameters:DataParameters",
    "sr": "labelaudit.training._methods.sr:SparseRegularization",
    "co-teaching": "labelaudit.training._methods.co_teaching:CoTeaching",
    "cnlcu": "labelaudit.training._methods.cnlcu:CNLCU",
    "seal": "labelaudit.training._methods.seal:SEAL",
    "filter": "labelaudit.training._train:train",
    **{name: "labelaudit.training._filter:FilterPlan" for name in (
        "filter-relabel", "filter-iterate", "filter+seal", "filter+co-teaching",
        "filter+mixup", "filter-relabel+seal", "filter-relabel-iterate+seal")},
}, default=("base",))


# The detectors of a filter method: the scan, or a head trained with one of these methods
# (co-teaching and CNLCU need a noise rate before any is estimated, so they are not offered).
FILTER_DETECTORS = ("scan", "seal", "base", "mixup")


def all_registries() -> dict[str, Registry]:
    """Every registry by its family name (for property tests and docs)."""
    return {r.family: r for r in (SCORERS, TOKEN_SCORERS, RANKING_METHODS, NOISE_METHODS,
                                  AGGREGATION_METHODS, FORMATS, LNL_METHODS)}
