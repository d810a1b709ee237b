"""The base model: cross-entropy on the given labels, or for label sets binary cross-entropy
of one sigmoid per class."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit.models import Method

if TYPE_CHECKING:
    import torch

    from labelaudit.models import Step


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


class MultiLabelBase(Method):
    r"""Binary cross-entropy of one sigmoid per class against the given label sets
    (``label_sets`` of shape (n_samples, n_classes), 0 or 1).

    .. math:: \mathcal{L} = -\frac{1}{bk} \sum_{i, j} y_{ij} \log \sigma(z_{ij})
       + (1 - y_{ij}) \log (1 - \sigma(z_{ij}))

    Examples
    --------
    >>> MultiLabelBase(np.array([[1, 0], [0, 1]])).name
    'base'
    """

    name = "base"

    def __init__(self, label_sets: np.ndarray) -> None:
        self.label_sets = np.asarray(label_sets, dtype=np.float32)
        self._on: Any = None

    def loss(self, step: Step) -> torch.Tensor:
        import torch
        import torch.nn.functional as F

        logits = step.logits(0)
        if self._on is None or self._on.device != logits.device:
            self._on = torch.as_tensor(self.label_sets, device=logits.device)
        return F.binary_cross_entropy_with_logits(logits.float(), self._on[step.index])
