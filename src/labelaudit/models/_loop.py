"""One training loop for every learning-with-noisy-labels method and the ``finetune`` scorer.

:func:`train_networks` trains ``method.n_networks`` networks with AdamW over the batches an
:class:`~labelaudit.models.Inputs` gives, asking a :class:`~labelaudit.models.Method` for
the loss of every batch. The methods differ only in their hooks; the loop, the seeding, the
learning rate schedule and the device handling are the same for all of them (the optimiser,
schedule, mixed precision and clipping are :class:`~labelaudit.models.TrainingSteps`).

Examples
--------
>>> import numpy as np
>>> from labelaudit.models import EmbeddingInputs, Method, head_factory
>>> rng = np.random.default_rng(0)
>>> x = rng.normal(size=(40, 4)).astype(np.float32)
>>> y = (x[:, 0] > 0).astype(int)
>>> nets, log = train_networks(head_factory(4, 2, hidden=8), EmbeddingInputs(x), y, 2,
...                            Method(), LoopConfig(epochs=3, batch_size=16))
>>> len(nets), log.epochs, len(log.losses)
(1, 3, 3)
>>> predict_proba(nets[0], EmbeddingInputs(x)).shape
(40, 2)
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from labelaudit._errors import InvalidParameterError
from labelaudit.models._loop_steps import (
    TrainingSteps,
    autocast,
    autocast_dtype,
    check_config,
    check_labels,
    eval_out_of_memory,
    free_gpu_memory,
    halves,
    linear_schedule,
    out_of_memory,
)
from labelaudit.models._loop_types import Inputs, LoopConfig, Method, Network, Step, TrainingLog

__all__ = ["predict_proba", "train_networks"]


def train_networks(make_network: Callable[[], Network], inputs: Inputs, labels: np.ndarray,
                   n_classes: int, method: Method,
                   config: LoopConfig) -> tuple[list[Network], TrainingLog]:
    """Train ``method.n_networks`` networks on ``inputs`` with the given ``labels``.

    Each round (``method.rounds()``, 1 for all methods but SEAL) makes fresh networks with
    ``make_network()``, each after ``torch.manual_seed`` with a seed drawn from
    ``np.random.default_rng(config.random_state)``, and trains them with AdamW for
    ``config.epochs`` epochs; the loss of each batch comes from ``method.loss``.

    When a batch runs out of GPU memory, it is run again in two halves (each half's loss
    weighted by its share of the batch, so the update is the same), and so is every later
    batch; a half that still does not fit is one error naming ``--batch-size``.

    Parameters
    ----------
    make_network : callable
        Returns a new, untrained network (a ``torch.nn.Module`` with ``features`` and
        ``classify``).
    inputs : Inputs
        The training items.
    labels : np.ndarray of shape (n_samples,)
        The given, possibly wrong, labels in ``0 .. n_classes - 1``.
    n_classes : int
        Number of classes.
    method : Method
        The hooks of the learning-with-noisy-labels method; one instance per run
        (``Method()`` itself: plain cross-entropy).
    config : LoopConfig
        Loop options.

    Returns
    -------
    networks : list
        The networks of the last round, in eval mode, on the training device.
    log : TrainingLog
        Losses per epoch and the method's records.
    """
    import torch

    from labelaudit.models._progress import progress_bar
    from labelaudit.models._runtime import resolve_device, torch_setup

    check_config(config)
    targets_all = check_labels(labels, n_classes, len(inputs))
    torch_setup()
    device = resolve_device(config.device)
    rng = np.random.default_rng(config.random_state)
    precision = autocast_dtype(device, enabled=config.bf16)
    n_rounds = int(method.rounds())
    n_batches = math.ceil(len(inputs) / config.batch_size)
    total_steps = config.epochs * math.ceil(n_batches / config.accumulate)
    losses: list[float] = []
    networks: list[Any] = []
    oom = torch.cuda.OutOfMemoryError
    halved = False  # set after a batch ran out of GPU memory: batches then run in halves

    with progress_bar(config.epochs * n_rounds, f"training ({method.name})", unit=" epochs",
                      enabled=config.progress) as bar:
        for round_index in range(n_rounds):
            method.start(targets_all, int(n_classes), config, round_index)
            networks = []
            for _ in range(method.n_networks):
                torch.manual_seed(int(rng.integers(2**62)))
                module: Any = make_network()
                networks.append(module.to(device))
            extra = method.extra_optimizer()
            params = [p for net in networks for p in net.parameters() if p.requires_grad]
            if extra is None:
                params += list(method.parameters())
            steps = TrainingSteps.adamw(
                params, learning_rate=config.learning_rate, weight_decay=config.weight_decay,
                lr_factor=linear_schedule(total_steps, float(config.warmup)), dtype=precision,
                max_grad_norm=config.max_grad_norm, extra=extra)

            def run_piece(piece: np.ndarray, size: int, context: tuple[int, int], *,
                          networks: list[Any] = networks, steps: TrainingSteps = steps) -> float:
                """Loss and gradients of ``piece`` of a batch of ``size`` items, weighted by
                its share of the batch; returns its share of the batch's mean loss."""
                step = Step(
                    index=piece, batch=inputs.batch(piece, device),
                    targets=torch.as_tensor(targets_all[piece], device=device),
                    networks=networks, epoch=context[0], n_epochs=config.epochs,
                    round_index=context[1], rng=rng)
                with autocast(precision):
                    out = method.loss(step)
                parts = out if isinstance(out, list) else [out]
                loss = parts[0] if len(parts) == 1 else torch.stack(parts).sum()
                share = len(piece) / size
                steps.backward(loss * (share / config.accumulate))
                method.after_step(step)
                return float(loss.detach()) * share / len(parts)

            for epoch in range(config.epochs):
                epoch_started = time.perf_counter()
                for net in networks:
                    net.train()
                total, count = 0.0, 0
                batches = inputs.batches(rng, config.batch_size, shuffle=True)
                for position, index in enumerate(batches):
                    index = np.asarray(index)
                    context = (epoch, round_index)
                    try:
                        value = sum(run_piece(piece, len(index), context)
                                    for piece in halves(index, halved))
                    except oom as error:
                        if halved or len(index) < 2:
                            raise out_of_memory(len(index), config.batch_size) from error
                        # once: this batch again in two halves, and every later batch too
                        halved = True
                        steps.zero_grad()
                        free_gpu_memory()
                        try:
                            value = sum(run_piece(piece, len(index), context)
                                        for piece in halves(index, halved))
                        except oom as again:
                            raise out_of_memory(len(index), config.batch_size) from again
                    if ((position + 1) % config.accumulate == 0
                            or position + 1 == len(batches)):
                        steps.step()
                    total += value
                    count += 1
                losses.append(total / max(count, 1))
                method.end_epoch(epoch, networks, inputs, targets_all)
                bar.set_postfix_str(
                    f"{len(inputs) / max(time.perf_counter() - epoch_started, 1e-9):,.0f} ex/s",
                    refresh=False)
                bar.update(1)
            method.end_round(networks, inputs, targets_all)

    for net in networks:
        net.eval()
    log = TrainingLog(epochs=config.epochs * n_rounds, losses=losses,
                      info=dict(method.records()))
    return networks, log


def predict_proba(network: Network, inputs: Inputs, *, batch_size: int = 256,
                  device: str | None = None, multi_label: bool = False) -> np.ndarray:
    """Softmax outputs of ``network`` on ``inputs``, shape ``(n_samples, n_classes)``
    (with ``multi_label``, one sigmoid per class: each class's own probability).

    Runs in eval mode without gradients, rows in input order, as float64. ``device`` None
    keeps the network where it is; otherwise the network moves to ``device``. The
    network's train/eval mode is restored afterwards. A batch that runs out of GPU memory
    is tried once more at half the size.
    """
    import torch

    from labelaudit.models._runtime import resolve_device

    if not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise InvalidParameterError(f"batch_size must be an integer >= 1, got {batch_size!r}")
    module: Any = network
    if device is None:
        first = next(iter(module.parameters()), None)
        where = first.device if first is not None else torch.device("cpu")
    else:
        where = resolve_device(device)
        module.to(where)
    was_training = bool(module.training)
    module.eval()
    parts: list[tuple[np.ndarray, np.ndarray]] = []

    def run(size: int) -> None:
        parts.clear()
        with torch.no_grad():
            for index in inputs.batches(np.random.default_rng(0), size, shuffle=False):
                index = np.asarray(index)
                logits = network.classify(network.features(inputs.batch(index, where)))
                probs = (torch.sigmoid(logits.double()) if multi_label
                         else torch.softmax(logits.double(), dim=1))
                parts.append((index, probs.cpu().numpy()))

    try:
        try:
            run(batch_size)
        except torch.cuda.OutOfMemoryError as error:
            if batch_size < 2:
                raise eval_out_of_memory(batch_size) from error
            free_gpu_memory()  # once more at half the batch size
            try:
                run(batch_size // 2)
            except torch.cuda.OutOfMemoryError as again:
                raise eval_out_of_memory(batch_size) from again
    finally:
        module.train(was_training)
    if not parts:
        return np.zeros((0, 0), dtype=np.float64)
    out = np.empty((len(inputs), parts[0][1].shape[1]), dtype=np.float64)
    for index, probs in parts:
        out[index] = probs
    return out
