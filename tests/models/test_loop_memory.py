"""Running out of GPU memory: a batch is retried once in two halves, then one clear error.

CUDA is not needed: a network raises ``torch.cuda.OutOfMemoryError`` itself when a batch
is larger than it allows, as a GPU would.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from labelaudit._errors import InvalidParameterError  # noqa: E402
from labelaudit.models import (  # noqa: E402
    EmbeddingInputs,
    LoopConfig,
    Method,
    predict_proba,
    train_networks,
)

# the training loop trains networks: `make test-fast` leaves these out
pytestmark = pytest.mark.heavy


class Fussy(torch.nn.Module):
    """A linear classifier that 'runs out of memory' on batches above ``limit`` items."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(4, 2)
        self.limit = limit
        self.sizes: list[int] = []

    def features(self, batch):
        self.sizes.append(len(batch))
        if len(batch) > self.limit:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2 GiB")
        return batch

    def classify(self, features):
        return self.linear(features)


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 4)).astype(np.float32)
    return EmbeddingInputs(x), (x[:, 0] > 0).astype(int)


def _train(data, limit: int, **config):
    inputs, labels = data
    made: list[Fussy] = []

    def make():
        made.append(Fussy(limit))
        return made[-1]

    nets, _ = train_networks(make, inputs, labels, 2, Method(),
                             LoopConfig(epochs=2, batch_size=16, **config))
    return nets[0], made[-1].sizes


def test_a_batch_too_big_is_retried_in_halves_with_the_same_update(data):
    fitted, sizes = _train(data, limit=10)
    # the first batch fails at 16, then it and every later batch run as two halves of 8
    assert sizes[0] == 16 and set(sizes[1:]) == {8} and len(sizes) == 1 + 2 * 8
    plain, plain_sizes = _train(data, limit=1000)
    assert set(plain_sizes) == {16}
    # two halves weighted by their share give the same gradient as the whole batch
    for a, b in zip(fitted.parameters(), plain.parameters(), strict=True):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=1e-6)


def test_half_size_still_too_big_is_one_clear_error(data):
    with pytest.raises(InvalidParameterError, match=r"batch of 16 items.*--batch-size \(now 16"):
        _train(data, limit=5)


def test_prediction_retries_at_half_the_batch_once(data):
    inputs, _ = data
    net = Fussy(limit=1000)
    expected = predict_proba(net, inputs, batch_size=32)
    net.limit = 20
    np.testing.assert_allclose(predict_proba(net, inputs, batch_size=32), expected)
    assert net.sizes[-1] == 16
    net.limit = 10
    with pytest.raises(InvalidParameterError, match="predicting batches of 32 items"):
        predict_proba(net, inputs, batch_size=32)
