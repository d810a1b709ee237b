"""URIs of datasets and outputs: their queries, their pyarrow filesystems, one-line errors.

URIs (``s3://``, ``gs://``, ``hdfs://``, ``file://``) are opened with
:func:`pyarrow.fs.FileSystem.from_uri`, which reads S3 credentials and an S3-compatible
endpoint from the environment (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``,
``AWS_ENDPOINT_URL``) or options from the URI's query
(``?endpoint_override=localhost:9000&scheme=http``); the ``S3FileSystem()`` constructor
does not read ``AWS_ENDPOINT_URL`` (pyarrow 26), so every filesystem here comes from a URI.
"""

from __future__ import annotations

import os
import re
from typing import Any

from labelaudit._errors import InvalidInputError

__all__ = ["filesystem", "not_found_hint", "one_line", "open_binary", "split_query",
           "storage_hint"]

# a URI's query: ``?endpoint_override=localhost:9000&scheme=http`` (a ``?`` before a name
# and ``=`` starts one; any other ``?`` is a glob's one-character wildcard)
_QUERY = re.compile(r"\?[A-Za-z_][A-Za-z0-9_]*=[^?/]*$")


def split_query(uri: str) -> tuple[str, str]:
    """A URI without its query, and the query (``""`` when there is none).

    pyarrow reads options such as ``endpoint_override`` from the query of a URI; every
    file of a source keeps the query of the URI it was listed from.

    Examples
    --------
    >>> split_query("s3://bucket/data/?endpoint_override=localhost:9000&scheme=http")
    ('s3://bucket/data/', '?endpoint_override=localhost:9000&scheme=http')
    >>> split_query("s3://bucket/data/part-?.parquet")
    ('s3://bucket/data/part-?.parquet', '')
    """
    if "://" not in uri:
        return uri, ""
    match = _QUERY.search(uri)
    return (uri[:match.start()], match.group()) if match else (uri, "")


def one_line(exc: BaseException) -> str:
    """An exception's message on one line (pyarrow's S3 errors span several)."""
    return " ".join(str(exc).split())


def storage_hint(uri: str) -> str:
    """What to check when an ``s3://`` URI cannot be reached or listed; ``""`` for other
    schemes."""
    if not uri.startswith("s3://"):
        return ""
    endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
    if "endpoint_override=" in uri or endpoint:
        where = "endpoint_override in the URI" if "endpoint_override=" in uri else endpoint
        return (f"; check that the storage at {where} is up, and the credentials in "
                "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
    return ("; for S3-compatible storage (MinIO, Ceph, R2) set AWS_ENDPOINT_URL "
            "(http://host:port) or add ?endpoint_override=host:port&scheme=http to the URI, "
            "and credentials in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")


def filesystem(uri: str) -> tuple[Any, str]:
    """The pyarrow filesystem of a URI (its query passed on) and the path inside it."""
    import pyarrow.fs as pafs

    try:
        return pafs.FileSystem.from_uri(uri)
    except Exception as exc:  # pyarrow raises several types
        raise InvalidInputError(
            f"{split_query(uri)[0]}: cannot open ({one_line(exc)}){storage_hint(uri)}") \
            from None


def not_found_hint(uri: str) -> str:
    if not uri.startswith("s3://"):
        return ""
    bucket = uri[len("s3://"):].split("/", 1)[0]
    return (f" (check the bucket {bucket!r} and the prefix, e.g. `aws s3 ls {uri}`; for "
            "S3-compatible storage set AWS_ENDPOINT_URL too)")


def open_binary(path: str) -> Any:
    """A binary file object for a local path or a URI."""
    if "://" in path:
        fs, inner = filesystem(path)
        try:
            return fs.open_input_file(inner)
        except OSError as exc:
            raise InvalidInputError(f"{split_query(path)[0]}: cannot read ({one_line(exc)})"
                                    f"{storage_hint(path)}") from None
    return open(path, "rb")  # noqa: SIM115 - the caller closes it
