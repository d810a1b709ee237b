"""The one training loop and the steps it is made of (AdamW, schedules, clipping, accumulation),
which TAPT, token fine-tuning and the CRF head share."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from labelaudit._errors import InvalidParameterError  # noqa: E402
from labelaudit.models import (  # noqa: E402
    EmbeddingInputs,
    LoopConfig,
    Method,
    head_factory,
    predict_proba,
    train_networks,
)
from labelaudit.models._loop import (  # noqa: E402
    TrainingSteps,
    autocast_dtype,
    linear_schedule,
    transformers_linear_schedule,
)


def test_accumulation_and_clipping_options_of_the_loop():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(120, 8)).astype(np.float32)
    y = (x[:, 0] > 0).astype(int)
    inputs = EmbeddingInputs(x)

    def run(**options):
        config = LoopConfig(epochs=5, batch_size=16, random_state=0, **options)
        nets, log = train_networks(head_factory(8, 2, hidden=0), inputs, y, 2, Method(),
                                   config)
        return predict_proba(nets[0], inputs), log

    plain, _ = run()
    clipped, _ = run(max_grad_norm=1e-6)  # tiny steps: the model barely moves
    assert np.abs(clipped - 0.5).max() < np.abs(plain - 0.5).max()
    accumulated, log = run(accumulate=4)
    assert len(log.losses) == 5 and not np.allclose(accumulated, plain)
    with pytest.raises(InvalidParameterError, match="accumulate"):
        run(accumulate=0)


@pytest.mark.parametrize(("total", "warmup_steps"), [(10, 0), (10, 1), (7, 3), (1, 0), (4, 4)])
def test_the_transformers_schedule_is_transformers_own(total, warmup_steps):
    from transformers import get_linear_schedule_with_warmup

    ours = transformers_linear_schedule(total, warmup_steps)
    theirs = get_linear_schedule_with_warmup(
        torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0), warmup_steps, total)
    assert [ours(s) for s in range(total + 2)] == [
        f(s) for f in theirs.lr_lambdas for s in range(total + 2)]


def test_the_loop_schedule_warms_up_then_decays_to_zero():
    factor = linear_schedule(8, 0.25)
    assert [factor(s) for s in range(8)] == [0.5, 1.0, 1.0, 5 / 6, 4 / 6, 3 / 6, 2 / 6, 1 / 6]
    assert {linear_schedule(8, 0.0)(s) for s in range(8)} == {1.0}


def test_training_steps_equal_adamw_with_clipping_by_hand():
    def data():
        torch.manual_seed(0)
        net = torch.nn.Linear(3, 2)
        x, y = torch.randn(20, 3), torch.randint(0, 2, (20,))
        return net, x, y

    net, x, y = data()
    steps = TrainingSteps.adamw(net.parameters(), learning_rate=0.1, weight_decay=0.01,
                                lr_factor=transformers_linear_schedule(4, 1),
                                max_grad_norm=0.5)
    for _ in range(4):
        steps.backward(torch.nn.functional.cross_entropy(net(x), y))
        steps.step()
    ours = [p.detach().clone() for p in net.parameters()]

    net, x, y = data()
    from transformers import get_linear_schedule_with_warmup

    optimizer = torch.optim.AdamW(net.parameters(), lr=0.1, weight_decay=0.01)
    schedule = get_linear_schedule_with_warmup(optimizer, 1, 4)
    for _ in range(4):
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(net(x), y).backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 0.5)
        optimizer.step()
        schedule.step()
    for a, b in zip(ours, net.parameters(), strict=True):
        assert torch.equal(a, b.detach())


def test_mixed_precision_only_on_a_gpu():
    cpu = torch.device("cpu")
    assert autocast_dtype(cpu) is None and autocast_dtype(cpu, enabled=False) is None
    steps = TrainingSteps.adamw([torch.zeros(1, requires_grad=True)], learning_rate=1e-3,
                                weight_decay=0.0, lr_factor=linear_schedule(1, 0.0))
    assert steps.scaler is None
