"""The base model: cross-entropy, or binary cross-entropy of one sigmoid per label-set class."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit.models import Method

if TYPE_CHECKING:
    import torch

    from labelaudit.models import Step


class Base(Method):
    r"""Plain cross-entropy on the given labels, the baseline every method is compared with
    (the "base model" of NoisywikiHow, Wu et al., Findings of ACL 2023, Tables 8 and 10):

    .. math:: \mathcal{L} = -\frac{1}{b} \sum_{i=1}^{b} \log p_{\tilde y_i}(x_i)
    """

    name = "base"

    def loss(self, step: Step) -> torch.Tensor:
        import torch.nn.functional as F

        return F.cross_entropy(step.logits(0), step.targets)


class MultiLabelBase(Method):
    r"""Binary cross-entropy of one sigmoid per class against the given ``label_sets`` (shape
    (n_samples, n_classes), 0 or 1):

    .. math:: \mathcal{L} = -\frac{1}{bk} \sum_{i, j} y_{ij} \log \sigma(z_{ij})
       + (1 - y_{ij}) \log (1 - \sigma(z_{ij}))
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
