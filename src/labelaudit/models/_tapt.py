"""Task-adaptive pre-training (TAPT): continued masked-LM training on a dataset's own texts."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit._html_table import result_html
from labelaudit._validation import check_fraction, check_int, check_number
from labelaudit.io import (
    check_output_folder,
    read_table,
    replace_folder,
    require_columns,
    write_manifest,
)
from labelaudit.models._base import progress_bar
from labelaudit.models._encoder import (
    clamp_length,
    keep_umask,
    load_pretrained,
    quiet_loading,
    resolve_device,
    torch_setup,
)
from labelaudit.models._loop import TrainingSteps, autocast, autocast_dtype, linear_schedule
from labelaudit.models._networks import length_sorted_batches


@dataclass(frozen=True)
class TaptResult:
    """What :func:`tapt` did: where the model went, on how many texts, and its losses.

    Attributes
    ----------
    out : Path
        The adapted model and its tokenizer (``FinetuneScorer(model=str(out))`` loads it).
    n_texts, epochs : int
        Distinct texts (or text pairs) trained on; epochs.
    losses, first_losses, last_losses : list of float
        Per epoch: the mean masked-LM loss, and that of its first and last batch.
    seconds : float
        Wall-clock time of training and saving.
    n_batches : list of int
        Batches trained on in each epoch (a batch with no masked token is skipped).

    Examples
    --------
    >>> r = TaptResult(out=Path("tapt"), n_texts=40, epochs=2, losses=[4.2, 3.1], seconds=1.5,
    ...                first_losses=[4.6, 3.4], last_losses=[3.7, 2.9], n_batches=[3, 3])
    >>> print(r.summary())
    adapted on 40 texts for 2 epochs in 1.5 s; saved to tapt
      epoch 1: MLM loss 4.600 -> 3.700 (first -> last batch; mean 4.200)
      epoch 2: MLM loss 3.400 -> 2.900 (first -> last batch; mean 3.100)
    >>> r.to_frame()["loss"].tolist()
    [4.2, 3.1]
    """

    out: Path
    n_texts: int
    epochs: int
    losses: list[float] = field(default_factory=list)
    seconds: float = 0.0
    first_losses: list[float] = field(default_factory=list)
    last_losses: list[float] = field(default_factory=list)
    n_batches: list[int] = field(default_factory=list)

    def _repr_html_(self) -> str:
        """The losses per epoch in a notebook."""
        return result_html(self)

    def summary(self) -> str:
        """Texts, epochs, time and folder; per epoch its first, last and mean batch loss."""
        lines = [f"adapted on {self.n_texts} texts for {self.epochs} epoch"
                 f"{'s' if self.epochs != 1 else ''} in {self.seconds:.1f} s; saved to "
                 f"{self.out}"]
        for epoch, (first, last, mean, n) in enumerate(zip(
                self.first_losses, self.last_losses, self.losses, self.n_batches,
                strict=False), start=1):
            lines.append(f"  epoch {epoch}: MLM loss {first:.3f} (one batch)" if n == 1 else
                         f"  epoch {epoch}: MLM loss {first:.3f} -> {last:.3f} "
                         f"(first -> last batch; mean {mean:.3f})")
        return "\n".join(lines)

    def to_frame(self):
        """Columns ``epoch`` (from 1), ``loss`` (mean), ``first_loss`` and ``last_loss``."""
        import pandas as pd

        n = len(self.losses)
        pad = [float("nan")] * n
        return pd.DataFrame({"epoch": np.arange(1, n + 1),
                             "loss": np.asarray(self.losses, dtype=float),
                             "first_loss": np.asarray((self.first_losses or pad)[:n], float),
                             "last_loss": np.asarray((self.last_losses or pad)[:n], float)})


def _sources(data: Any) -> list[tuple[str, Any]]:
    """``(name, table or path)`` of every split in ``data``."""
    import pandas as pd

    if isinstance(data, (pd.DataFrame, str, os.PathLike)):
        items = [data]
    elif isinstance(data, Sequence) and not isinstance(data, bytes):
        items = list(data)
    else:
        raise InvalidParameterError(
            "data must be a DataFrame, a path, or a list of them; "
            f"got {type(data).__name__}")
    if not items:
        raise InvalidInputError("no data given: pass a table or at least one path")
    out = []
    for i, item in enumerate(items):
        if isinstance(item, pd.DataFrame):
            out.append((f"table {i}" if len(items) > 1 else "the table", item))
        elif isinstance(item, (str, os.PathLike)):
            out.append((str(item), item))
        else:
            raise InvalidParameterError(
                f"data[{i}] must be a DataFrame or a path; got {type(item).__name__}")
    return out


def collect_texts(data: Any, *, text: str = "text",
                  text_pair: str | None = None) -> list[tuple[str, ...]]:
    """The distinct texts (``(text,)``) or text pairs of every split, in first-seen order;
    missing and blank texts skipped."""
    import pandas as pd

    columns = [text] + ([text_pair] if text_pair is not None else [])
    seen: dict[tuple[str, ...], None] = {}
    for name, item in _sources(data):
        frame = item if isinstance(item, pd.DataFrame) else read_table(item)
        try:
            require_columns(frame, columns)
        except InvalidInputError as error:
            raise InvalidInputError(f"{name}: {error}") from None
        values = []
        for column in columns:
            cells = frame[column]
            keep = cells.notna().to_numpy()
            as_text = cells.where(keep, "").astype(str).str.strip()
            values.append((as_text.tolist(), keep & (as_text != "").to_numpy()))
        ok = np.logical_and.reduce([v[1] for v in values])
        for i in np.flatnonzero(ok):
            seen.setdefault(tuple(v[0][i] for v in values), None)
    return list(seen)


def _check_out(out: str | os.PathLike[str]) -> Path:
    if out is None:
        raise InvalidParameterError("out must name a folder for the adapted model")
    return check_output_folder(out, kind="tapt", name="out")


def _move_into_place(tmp: Path, out: Path) -> None:
    """Mark the finished ``tmp`` folder as labelaudit's and rename it to ``out`` (checked
    again: another program may have written there while training ran)."""
    check_output_folder(out, kind="tapt", name="out")
    write_manifest(tmp, kind="tapt")
    replace_folder(tmp, out)


def tapt(data: Any, *, text: str = "text", text_pair: str | None = None,
         model: str | None = None, out: str | os.PathLike[str], epochs: int = 3,
         max_length: int = 256, batch_size: int = 16, learning_rate: float = 5e-5,
         mlm_probability: float = 0.15, warmup: float = 0.06, random_state: int = 0,
         device: str | None = None, overwrite: bool = False,
         progress: bool = False) -> TaptResult:
    """Continue masked-LM pre-training of an encoder on a dataset's own texts (TAPT).

    Every distinct text (or pair) of every split is tokenised once. Each epoch masks
    ``mlm_probability`` of the tokens afresh (BERT's 80/10/10 rule) and minimises the
    cross-entropy of the original tokens there, with the training loop's steps: AdamW
    (weight decay 0.01), linear warm-up then decay, gradients clipped at 1.0, bfloat16
    autocast where CUDA supports it. A batch with no masked token is skipped. A checkpoint
    without a masked-LM head (all-MiniLM-L6-v2) gets a fresh one, saved with the model.

    Parameters
    ----------
    data : DataFrame, path, or list of them
        Every split (train, dev, test...): all their texts are used, once each.
    text, text_pair : columns of the texts and of the second texts of pairs.
    model : a Hugging Face id or local folder; None is the packaged all-MiniLM-L6-v2.
    out : the folder for the model and its tokenizer (written beside, then renamed).
    epochs, max_length, batch_size, learning_rate, warmup : training settings.
    mlm_probability : share of tokens chosen for prediction, in (0, 1).
    random_state : seeds the head's initialisation, dropout, masking and batch order.
    device : ``"cuda"``, ``"cpu"``...; None picks CUDA when available.
    overwrite : ignored: a folder tapt wrote is replaced, any other non-empty one refused.
    progress : a progress bar over the batches on stderr.

    Returns
    -------
    TaptResult

    Raises
    ------
    InvalidInputError
        No texts, or a table without the ``text`` (or ``text_pair``) column.
    InvalidParameterError
        An empty ``out``, an existing non-empty ``out`` labelaudit did not write, a tokenizer
        without a mask token, or a setting out of range.

    References
    ----------
    Gururangan, Marasović, Swayamdipta, Lo, Beltagy, Downey & Smith (2020), Don't Stop
    Pretraining: Adapt Language Models to Domains and Tasks, ACL, section 4: "task-adaptive
    pretraining ... pretraining on the unlabeled training set for a given task". Devlin et
    al. (2019), BERT, section 3.1 (the masked-LM objective). Chong, Hong & Manning (2022),
    Detecting Label Errors by Using Pre-Trained Language Models, appendix E.4 (TAPT on the
    texts of all splits before fine-tuning).

    Examples
    --------
    >>> import pandas as pd, tempfile
    >>> frame = pd.DataFrame({"text": ["the goal of the match", "a spicy pasta sauce"] * 4})
    >>> result = tapt(frame, out=tempfile.mkdtemp() + "/tapt", epochs=1,
    ...               max_length=16)  # doctest: +SKIP
    >>> result.n_texts  # doctest: +SKIP
    2
    """
    start = time.perf_counter()
    epochs = check_int(epochs, "epochs", minimum=1)
    max_length = check_int(max_length, "max_length", minimum=4)
    batch_size = check_int(batch_size, "batch_size", minimum=1)
    learning_rate = check_number(learning_rate, "learning_rate", low=0.0, low_open=True)
    mlm_probability = check_fraction(mlm_probability, "mlm_probability", low_open=True,
                                     high_open=True)
    warmup = check_fraction(warmup, "warmup")
    random_state = check_int(random_state, "random_state")
    del overwrite
    out_path = _check_out(out)
    texts = collect_texts(data, text=text, text_pair=text_pair)
    if not texts:
        raise InvalidInputError(
            f"no texts to train on: column {text!r}"
            + (f" (with {text_pair!r})" if text_pair else "") + " is empty or blank in "
            "every row")

    import torch
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    torch_setup()
    target = resolve_device(device)
    torch.manual_seed(random_state)
    tokenizer = load_pretrained(AutoTokenizer, model, bars=progress)
    network = load_pretrained(AutoModelForMaskedLM, model, bars=progress)
    if tokenizer.mask_token is None:
        raise InvalidParameterError(
            f"the tokenizer of {model or 'the default model'!r} has no mask token, so it "
            "cannot be trained as a masked language model; use an encoder such as BERT or RoBERTa")
    limit = clamp_length(max_length, tokenizer, network.config, model=model or "default")
    firsts = [t[0] for t in texts]
    seconds = [t[1] for t in texts] if text_pair is not None else None
    encoded = tokenizer(firsts, seconds, truncation=True, max_length=limit,
                        return_special_tokens_mask=True)
    keys = [k for k in ("input_ids", "token_type_ids", "attention_mask",
                        "special_tokens_mask") if k in encoded]
    features = [{k: encoded[k][i] for k in keys} for i in range(len(texts))]
    lengths = np.array([len(f["input_ids"]) for f in features])
    collator = _collator(tokenizer, mlm_probability, random_state)

    network.to(target)
    network.train()
    steps_per_epoch = -(-len(features) // batch_size)
    # float16=False: TAPT has always trained in float32 on GPUs without bfloat16
    precision = autocast_dtype(target, float16=False)
    steps = TrainingSteps.adamw(
        network.parameters(), learning_rate=learning_rate, weight_decay=0.01,
        lr_factor=linear_schedule(epochs * steps_per_epoch, warmup), dtype=precision,
        max_grad_norm=1.0)
    rng = np.random.default_rng(random_state)
    losses: list[float] = []
    logged: list[list[float]] = []  # the loss of each batch trained on, per epoch
    with progress_bar(epochs * steps_per_epoch, "tapt", unit=" batches",
                      enabled=progress) as bar:
        for _ in range(epochs):
            total, count = 0.0, 0
            logged.append([])
            for index in length_sorted_batches(lengths, batch_size, rng):
                batch = collator([features[i] for i in index])
                batch = {k: v.to(target) for k, v in batch.items()}
                n_masked = int((batch["labels"] != -100).sum())
                if n_masked:
                    with autocast(precision):
                        loss = network(**batch).loss
                    steps.backward(loss)
                    steps.step()
                    logged[-1].append(float(loss.detach()))
                    total += logged[-1][-1] * n_masked
                    count += n_masked
                bar.update(1)
            losses.append(total / count if count else float("nan"))

    network.eval()
    out_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_path.name}.", suffix=".tmp",
                                dir=out_path.parent))
    try:
        with quiet_loading(bars=progress):
            network.save_pretrained(tmp)
            tokenizer.save_pretrained(tmp)
        keep_umask(tmp)  # safetensors writes the weights 0600
        _move_into_place(tmp, out_path)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    nan = float("nan")
    return TaptResult(out=out_path, n_texts=len(texts), epochs=epochs, losses=losses,
                      seconds=time.perf_counter() - start,
                      first_losses=[e[0] if e else nan for e in logged],
                      last_losses=[e[-1] if e else nan for e in logged],
                      n_batches=[len(e) for e in logged])


def _collator(tokenizer: Any, mlm_probability: float, random_state: int) -> Any:
    """BERT-style masking with its own seeded generator where transformers offers one
    (else the global torch RNG, seeded by :func:`tapt`)."""
    from transformers import DataCollatorForLanguageModeling

    try:
        return DataCollatorForLanguageModeling(tokenizer, mlm_probability=mlm_probability,
                                               seed=random_state, return_tensors="pt")
    except TypeError:  # transformers < 4.50 has no seed
        return DataCollatorForLanguageModeling(tokenizer, mlm_probability=mlm_probability,
                                               return_tensors="pt")
