"""The base model: cross-entropy on the given labels."""

from __future__ import annotations

from typing import TYPE_CHECKING

from labelaudit.training._methods._base import Method

if TYPE_CHECKING:
    import torch

    from labelaudit.models import Step

__all__ = ["Base"]


class Base(Method):
    r"""Plain cross-entropy training on the given labels, the baseline every method is
    compared with.

    .. math:: \mathcal{L} = -\frac{1}{b} \sum_{i=1}^{b} \log p_{\tilde y_i}(x_i)

    References
    ----------
    .. [1] T. Wu, X. Wang et al., "NoisywikiHow: A Benchmark for Learning with Real-world
       Noisy Labels in Natural Language Processing", Findings of ACL 2023 (the "base
       model" row of its Tables 8 and 10).

    Examples
    --------
    >>> Base().n_networks
    1
    """

    name = "base"

    def loss(self, step: Step) -> torch.Tensor:
        import torch.nn.functional as F

        return F.cross_entropy(step.logits(0), step.targets)
