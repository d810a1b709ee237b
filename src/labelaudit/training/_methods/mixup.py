"""Mixup: train on convex combinations of pairs of items and of their labels."""

from __future__ import annotations

from typing import TYPE_CHECKING

from labelaudit._validation import check_number
from labelaudit.models import Method

if TYPE_CHECKING:
    import torch

    from labelaudit.models import Step


class Mixup(Method):
    r"""Mixup on the network's features (for the embedding head: the input embeddings).

    For every batch, draw :math:`\lambda \sim \mathrm{Beta}(\alpha, \alpha)` and a random
    permutation :math:`\pi` of the batch, mix :math:`\tilde h_i = \lambda h_i + (1 - \lambda)
    h_{\pi(i)}` and train on

    .. math:: \mathcal{L} = \lambda\, \mathrm{CE}(f(\tilde h), \tilde y)
              + (1 - \lambda)\, \mathrm{CE}(f(\tilde h), \tilde y_{\pi}),

    which is the paper's loss on the mixed label :math:`\lambda y_i + (1-\lambda) y_{\pi(i)}`
    ("mixup trains a neural network on convex combinations of pairs of examples and their
    labels"). Prediction uses the unmixed network.

    Parameters
    ----------
    alpha : float, default=1.0
        Beta distribution parameter (NoisywikiHow's tuned value, Tables 9 and 11).

    References
    ----------
    .. [1] H. Zhang, M. Cisse, Y. N. Dauphin and D. Lopez-Paz, "mixup: Beyond Empirical Risk
       Minimization", ICLR 2018.

    Examples
    --------
    >>> Mixup(alpha=0.4).alpha
    0.4
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
