"""The pieces every training loop of labelaudit is made of, defined once.

AdamW and its learning-rate schedule, mixed precision (the autocast dtype and the gradient
scaler of float16), gradient clipping and accumulation (:class:`TrainingSteps`), and what to
do when a GPU runs out of memory. :func:`labelaudit.models.train_networks` (the loop of the
``finetune`` scorer and of every ``labelaudit train`` method) is built from them; so are the
loops whose contract is not "one label per item": masked-LM pre-training
(:func:`labelaudit.models.tapt`), token classification
(:class:`labelaudit.models.FinetuneTokenScorer`) and the CRF head of the token scorers.

Examples
--------
>>> factor = linear_schedule(10, 0.2)
>>> [round(factor(step), 2) for step in range(10)]
[0.5, 1.0, 1.0, 0.88, 0.75, 0.62, 0.5, 0.38, 0.25, 0.12]
>>> linear_schedule(10, 0.0)(7)
1.0
>>> factor = transformers_linear_schedule(10, 2)
>>> [round(factor(step), 2) for step in range(4)]
[0.0, 0.5, 1.0, 0.88]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError, format_rows

if TYPE_CHECKING:
    import torch

    from labelaudit.models._loop_types import LoopConfig

__all__ = [
    "TrainingSteps",
    "autocast",
    "autocast_dtype",
    "free_gpu_memory",
    "linear_schedule",
    "transformers_linear_schedule",
]


def linear_schedule(total_steps: int, warmup: float) -> Callable[[int], float]:
    """Learning-rate factor of each optimiser step (from 0): a linear warm-up over
    ``warmup`` of the ``total_steps`` (at least one step), reaching 1 at the end of it, then
    a linear decay to 0; 1 throughout if ``warmup`` is 0."""
    if warmup <= 0:
        return lambda step: 1.0
    warm = max(1, int(round(warmup * total_steps)))

    def factor(step: int) -> float:
        if step < warm:
            return (step + 1) / warm
        return max(0.0, (total_steps - step) / max(1, total_steps - warm))

    return factor


def transformers_linear_schedule(total_steps: int,
                                 warmup_steps: int) -> Callable[[int], float]:
    """The factor of transformers' ``get_linear_schedule_with_warmup``: ``step /
    warmup_steps`` during the warm-up (the first step at 0), then a linear decay to 0, also
    without warm-up. The token fine-tuning scorer trains with it (its results stay those of
    earlier versions)."""

    def factor(step: int) -> float:
        if step < warmup_steps:
            return float(step) / float(max(1, warmup_steps))
        return max(0.0, float(total_steps - step) / float(max(1, total_steps - warmup_steps)))

    return factor


def autocast_dtype(device: torch.device, *, enabled: bool = True,
                   float16: bool = True) -> torch.dtype | None:
    """The mixed-precision dtype of forward passes on ``device``: bfloat16 on CUDA GPUs
    that have it; on older GPUs float16 (which needs :class:`TrainingSteps`' gradient
    scaler), or None with ``float16=False``; None (float32) on a CPU or when not
    ``enabled``."""
    import torch

    if not enabled or device.type != "cuda":
        return None
    if torch.cuda.is_bf16_supported():
        return torch.bfloat16
    return torch.float16 if float16 else None


def autocast(dtype: torch.dtype | None) -> AbstractContextManager[Any]:
    """``torch.autocast`` on CUDA in ``dtype`` (from :func:`autocast_dtype`), or nothing
    when ``dtype`` is None."""
    import torch

    return torch.autocast("cuda", dtype=dtype) if dtype is not None else nullcontext()


@dataclass
class TrainingSteps:
    """AdamW with a learning-rate schedule, the gradient scaler of float16 autocast and
    gradient clipping: how each loop turns its losses into updates.

    Per batch: :meth:`backward` of the loss (scaled for float16), then, every
    ``accumulate`` batches, :meth:`step`: gradients unscaled, their global norm clipped to
    ``max_grad_norm``, the optimiser (and a method's own ``extra`` optimiser) stepped,
    gradients cleared, the schedule advanced. Build one with :meth:`adamw`.
    """

    optimizer: Any
    schedule: Any
    params: list[Any]
    scaler: Any = None
    max_grad_norm: float | None = None
    extra: Any = None

    @classmethod
    def adamw(cls, params: Iterable[Any], *, learning_rate: float, weight_decay: float,
              lr_factor: Callable[[int], float], dtype: torch.dtype | None = None,
              max_grad_norm: float | None = None, extra: Any = None) -> TrainingSteps:
        """AdamW over ``params`` with ``torch.optim.lr_scheduler.LambdaLR(lr_factor)``
        (:func:`linear_schedule` or :func:`transformers_linear_schedule`); a gradient
        scaler when ``dtype`` is float16."""
        import torch

        params = list(params)
        optimizer = torch.optim.AdamW(params, lr=learning_rate, weight_decay=weight_decay)
        schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_factor)
        scaler = torch.amp.GradScaler("cuda") if dtype == torch.float16 else None
        return cls(optimizer, schedule, params, scaler, max_grad_norm, extra)

    def backward(self, loss: torch.Tensor) -> None:
        """Add the gradients of ``loss`` (scaled when training in float16)."""
        (self.scaler.scale(loss) if self.scaler is not None else loss).backward()

    def zero_grad(self) -> None:
        """Drop the gradients gathered since the last step."""
        self.optimizer.zero_grad(set_to_none=True)

    def step(self) -> None:
        """One optimiser step (unscaling, clipping), gradients cleared, schedule advanced."""
        import torch

        if self.scaler is not None:
            self.scaler.unscale_(self.optimizer)
        if self.max_grad_norm is not None:
            torch.nn.utils.clip_grad_norm_(self.params, self.max_grad_norm)
        if self.scaler is not None:
            self.scaler.step(self.optimizer)
            self.scaler.update()
        else:
            self.optimizer.step()
        if self.extra is not None:
            self.extra.step()
            self.extra.zero_grad(set_to_none=True)
        self.optimizer.zero_grad(set_to_none=True)
        self.schedule.step()


def free_gpu_memory() -> None:
    """Collect garbage and return PyTorch's cached GPU memory (after running out of it, or
    before the next fold loads a model)."""
    import gc

    import torch

    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def halves(index: np.ndarray, halved: bool) -> list[np.ndarray]:
    """The batch itself, or its two halves after the GPU ran out of memory.

    Examples
    --------
    >>> [h.tolist() for h in halves(np.arange(5), True)]
    [[0, 1], [2, 3, 4]]
    """
    if not halved or len(index) < 2:
        return [index]
    middle = len(index) // 2
    return [index[:middle], index[middle:]]


def out_of_memory(size: int, batch_size: int) -> InvalidParameterError:
    """The error after a training batch of ``size`` items ran out of GPU memory twice."""
    return InvalidParameterError(
        f"the GPU ran out of memory on a batch of {size} items, and again at half that size; "
        f"lower --batch-size (now {batch_size}; batch_size in Python) or --max-length")


def eval_out_of_memory(size: int) -> InvalidParameterError:
    """The error after predicting batches of ``size`` items ran out of GPU memory twice."""
    return InvalidParameterError(
        f"the GPU ran out of memory predicting batches of {size} items, and again at half "
        "that size; lower the evaluation batch (eval_batch_size in Python) or --max-length")


def check_config(config: LoopConfig) -> None:
    """Refuse a :class:`LoopConfig` option out of range, naming it."""
    if not isinstance(config.epochs, (int, np.integer)) or config.epochs < 1:
        raise InvalidParameterError(f"epochs must be an integer >= 1, got {config.epochs!r}")
    if not isinstance(config.batch_size, (int, np.integer)) or config.batch_size < 1:
        raise InvalidParameterError(
            f"batch_size must be an integer >= 1, got {config.batch_size!r}")
    if not (float(config.learning_rate) > 0 and math.isfinite(config.learning_rate)):
        raise InvalidParameterError(
            f"learning_rate must be a number > 0, got {config.learning_rate!r}")
    if not float(config.weight_decay) >= 0:
        raise InvalidParameterError(
            f"weight_decay must be a number >= 0, got {config.weight_decay!r}")
    if not isinstance(config.accumulate, (int, np.integer)) or config.accumulate < 1:
        raise InvalidParameterError(
            f"accumulate must be an integer >= 1, got {config.accumulate!r}")
    if config.max_grad_norm is not None and not float(config.max_grad_norm) > 0:
        raise InvalidParameterError(
            f"max_grad_norm must be None or a number > 0, got {config.max_grad_norm!r}")
    if not 0.0 <= float(config.warmup) < 1.0:
        raise InvalidParameterError(f"warmup must be in [0, 1), got {config.warmup!r}")
    state = config.random_state
    if state is not None and (not isinstance(state, (int, np.integer)) or state < 0):
        raise InvalidParameterError(
            f"random_state must be None or an integer >= 0, got {state!r}")


def check_labels(labels: np.ndarray, n_classes: int, n_items: int) -> np.ndarray:
    """``labels`` as int64, after checking there is one in ``0 .. n_classes - 1`` per
    item."""
    if not isinstance(n_classes, (int, np.integer)) or n_classes < 2:
        raise InvalidParameterError(f"n_classes must be an integer >= 2, got {n_classes!r}")
    array = np.asarray(labels)
    if array.ndim != 1 or array.shape[0] != n_items:
        raise InvalidInputError(
            f"labels must be one integer per item, shape ({n_items},), got shape {array.shape}")
    if n_items == 0:
        raise InvalidInputError("there are no training items: pass at least one labelled item")
    if not np.issubdtype(array.dtype, np.integer):
        raise InvalidInputError(
            f"labels must be integers 0 .. n_classes - 1, got dtype {array.dtype}")
    bad = np.flatnonzero((array < 0) | (array >= n_classes))
    if bad.size:
        raise InvalidInputError(
            f"labels must be in 0 .. {n_classes - 1}: {format_rows(bad)} are not "
            f"(first value {array[bad[0]]!r}); encode classes as 0 .. n_classes - 1")
    return array.astype(np.int64, copy=False)
