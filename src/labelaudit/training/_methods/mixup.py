"""Mixup: train on convex combinations of pairs of items and of their labels."""

from __future__ import annotations

from typing import TYPE_CHECKING

from labelaudit._validation import check_number
from labelaudit.models import Method

if TYPE_CHECKING:
    import torch

    from labelaudit.models import Step


class Mixup(Method):
    r"""Mixup on the network's features (for the head: the input embeddings; Zhang et al.,
    "mixup: Beyond Empirical Risk Minimization", ICLR 2018). Per batch, draw :math:`\lambda \sim
    \mathrm{Beta}(\alpha, \alpha)` and a permutation :math:`\pi`, mix :math:`\tilde h_i = \lambda
    h_i + (1 - \lambda) h_{\pi(i)}` and train on the paper's loss of the mixed label:

    .. math:: \mathcal{L} = \lambda\, \mathrm{CE}(f(\tilde h), \tilde y)
              + (1 - \lambda)\, \mathrm{CE}(f(\tilde h), \tilde y_{\pi}).

    ``alpha`` defaults to NoisywikiHow's tuned 1.0 (Tables 9 and 11); prediction is unmixed.
    """

    name = "mixup"

    def __init__(self, *, alpha: float = 1.0) -> None:
        self.alpha = check_number(alpha, "alpha", low=0, low_open=True)

    def loss(self, step: Step) -> torch.Tensor:
        import torch
        import torch.nn.functional as F

        net = step.networks[0]
        features = step.features(0)
        lam = float(step.rng.beta(self.alpha, self.alpha))
        perm = torch.as_tensor(step.rng.permutation(features.shape[0]), device=features.device)
        mixed = lam * features + (1.0 - lam) * features[perm]
        logits = net.classify(mixed)
        return (lam * F.cross_entropy(logits, step.targets)
                + (1.0 - lam) * F.cross_entropy(logits, step.targets[perm]))

    def __repr__(self) -> str:
        return f"Mixup(alpha={self.alpha})"
