"""Write a scan's output chunks as a folder of Parquet parts, local or remote."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from labelaudit._errors import InvalidParameterError
from labelaudit.engine._target import is_local, out_filesystem, out_info, path_key, to_arrow
from labelaudit.engine._uri import one_line, split_query, storage_hint

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FolderWriter"]


class FolderWriter:
    """Write output chunks as ``part-00000.parquet``, ``part-00001.parquet``, ... in a
    folder, local or remote (any URI :func:`pyarrow.fs.FileSystem.from_uri` opens, such
    as ``s3://bucket/issues/``), in order: reading the folder gives the rows most suspect
    first. A local folder is written beside the target and renamed into place. A remote
    one (object stores have no rename) loses its ``_SUCCESS`` marker first, gets its parts
    (replacing earlier ones of the same name), then loses the earlier parts past the last
    one and gets ``_SUCCESS`` back: a remote folder without ``_SUCCESS`` is unfinished. An
    existing folder is replaced only if it holds nothing but such parts, and a local one
    only if labelaudit wrote each of them, unchanged since (or changed, with ``overwrite``):
    the rule of every output file (:func:`labelaudit.io.check_replaceable`).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = str(pathlib.Path(tempfile.mkdtemp()) / "issues") + "/"
    >>> with FolderWriter(folder) as writer:
    ...     writer.write(pd.DataFrame({"rank": [1, 2]}))
    ...     writer.write(pd.DataFrame({"rank": [3]}))
    >>> pd.read_parquet(folder)["rank"].tolist()
    [1, 2, 3]
    """

    def __init__(self, out: str | Path, *, schema: Any = None) -> None:
        where, self._query = split_query(str(out))
        self.out = where.rstrip("/")
        self.remote = "://" in self.out
        self.schema = schema
        self._parts = 0
        self._staging: Path | None = None
        self._old: set[str] = set()

    def _filesystem(self) -> tuple[Any, str]:
        import pyarrow.fs as pafs

        if not self.remote:
            return pafs.LocalFileSystem(), str(Path(self.out).resolve())
        return out_filesystem(self.out + self._query)

    def check(self, inputs: Sequence[str] = (), *, overwrite: bool = False) -> None:
        """Refuse a folder that holds an input file, and an existing folder that holds
        anything but labelaudit parts (locally: parts it wrote, unchanged since or, with
        ``overwrite``, changed)."""
        import pyarrow.fs as pafs

        from labelaudit.io import check_replaceable

        inside = [p for p in inputs if path_key(p).startswith(path_key(self.out) + "/")]
        if inside:
            raise InvalidParameterError(
                f"out {self.out} holds the input file {split_query(inside[0])[0]}; labelaudit "
                "never overwrites an input: choose another folder")
        fs, path = self._filesystem()
        info = out_info(fs, path, self.out)
        if info.type == pafs.FileType.NotFound:
            return
        if info.type != pafs.FileType.Directory:
            raise InvalidParameterError(
                f"out {self.out} is a file; give a folder for parts (ending in /) or a file "
                "with a suffix")
        names = [Path(i.path).name for i in fs.get_file_info(pafs.FileSelector(path))]
        foreign = [n for n in names if not (n == "_SUCCESS" or (n.startswith("part-")
                                                                and n.endswith(".parquet")))]
        if foreign:
            raise InvalidParameterError(
                f"out {self.out} exists and is not a labelaudit output folder (it holds "
                f"{', '.join(sorted(foreign)[:3])}); remove it or choose another folder")
        if not self.remote:
            for name in sorted(names):
                check_replaceable(Path(self.out) / name, name="out", overwrite=overwrite,
                                  what="choose another folder")

    def __enter__(self) -> FolderWriter:
        if not self.remote:
            target = Path(self.out)
            target.parent.mkdir(parents=True, exist_ok=True)
            self._staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.",
                                                  dir=target.parent))
            return self
        import pyarrow.fs as pafs

        fs, path = self._filesystem()
        with self._writing():
            if is_local(fs):  # object stores have no folders to make
                fs.create_dir(path, recursive=True)
            listed = fs.get_file_info(pafs.FileSelector(path, allow_not_found=True))
            self._old = {Path(i.path).name for i in listed if i.type == pafs.FileType.File}
            if "_SUCCESS" in self._old:
                fs.delete_file(f"{path}/_SUCCESS")
        return self

    def _writing(self) -> Any:
        """A context that turns pyarrow's errors while writing into one line."""
        from contextlib import contextmanager

        @contextmanager
        def writing() -> Iterator[None]:
            try:
                yield
            except OSError as exc:
                raise InvalidParameterError(f"out {self.out}: cannot write ({one_line(exc)})"
                                            f"{storage_hint(self.out)}") from None
        return writing()

    def write(self, frame: pd.DataFrame) -> None:
        self.write_table(to_arrow(frame, self.schema))

    def write_table(self, table: Any) -> None:
        import pyarrow.parquet as pq

        self.schema = self.schema or table.schema
        if table.schema != self.schema:
            table = table.select(self.schema.names).cast(self.schema)
        name = f"part-{self._parts:05d}.parquet"
        self._parts += 1
        if self._staging is not None:
            pq.write_table(table, self._staging / name)
        else:
            fs, path = self._filesystem()
            with self._writing():
                pq.write_table(table, f"{path}/{name}", filesystem=fs)

    def __exit__(self, kind: object, value: object, traceback: object) -> None:
        from labelaudit.io import record_output, replace_folder

        if kind is None and self._parts == 0 and self.schema is not None:
            self.write_table(self.schema.empty_table())
        if self._staging is not None:
            if kind is None:
                target = replace_folder(self._staging, Path(self.out))
                for part in sorted(target.glob("part-*.parquet")):
                    record_output(part)  # ours: a rerun may replace it, unless it is edited
            else:
                shutil.rmtree(self._staging, ignore_errors=True)
        elif kind is None:
            fs, path = self._filesystem()
            written = {f"part-{i:05d}.parquet" for i in range(self._parts)}
            with self._writing():
                for name in sorted(self._old - written - {"_SUCCESS"}):
                    fs.delete_file(f"{path}/{name}")
                with fs.open_output_stream(f"{path}/_SUCCESS"):
                    pass

