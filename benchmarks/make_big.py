"""Build big short-text classification datasets with planted label errors, seeded.

Every row is a window of 12 to 40 consecutive words from the body (headers dropped) of a
20 Newsgroups test post (``../shared/data/labelerrors_20news/test.jsonl``), labelled with
the post's verified newsgroup (``true_label``), then perturbed so rows are not copies of
each other: each word is dropped with probability 0.1 and replaced by a random word of the
corpus with probability 0.05. A fraction ``--flip-rate`` of rows (default 5%) gets a label
drawn uniformly from the 19 other groups: those are the planted errors. The same ``--seed``
and ``--rows`` always give the same files, and the rows of a smaller size are not a prefix
of a larger one (each size is drawn on its own).

Writes, in chunks (memory does not grow with ``--rows``):

- ``<out>/big_<rows>.parquet``: ``id`` (int), ``text``, ``label`` (group name);
- ``<out>/big_<rows>.truth.parquet``: ``id``, ``is_error``, ``true_label``.

Usage::

    python -m benchmarks.make_big --rows 1000000            # into /tmp/labelaudit_big
    python -m benchmarks.make_big --rows 10000 --out /tmp/x --flip-rate 0.1 --seed 1

The output folder must be outside the project (the data are derived from research data with
their own terms; see the data README).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data"
DEFAULT_OUT = Path("/tmp/labelaudit_big")
SOURCE = "labelerrors_20news/test.jsonl"
MIN_WORDS, MAX_WORDS = 12, 40
DROP, REPLACE = 0.10, 0.05
CHUNK = 100_000


def _body(text: str) -> list[str]:
    """The words of a post after its header block (up to the first blank line)."""
    _, sep, body = text.partition("\n\n")
    return (body if sep else text).split()


def load_posts(data_root: Path) -> tuple[list[list[str]], np.ndarray, list[str]]:
    """Posts with at least ``MAX_WORDS`` body words: their words, true class index, and the
    class names (in class-index order)."""
    path = data_root / SOURCE
    if not path.exists():
        raise SystemExit(f"missing {path}; nothing to build from")
    posts, classes, names = [], [], {}
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            if row["label"] == row["true_label"]:
                names[row["true_label"]] = row["label_name"]
            words = _body(row["text"])
            if len(words) >= MAX_WORDS:
                posts.append(words)
                classes.append(row["true_label"])
    return posts, np.asarray(classes), [names[k] for k in sorted(names)]


def paths(rows: int, out: Path) -> tuple[Path, Path]:
    """The data and truth files of a size."""
    return out / f"big_{rows}.parquet", out / f"big_{rows}.truth.parquet"


def build(rows: int, *, out: Path = DEFAULT_OUT, data_root: Path = DEFAULT_DATA,
          flip_rate: float = 0.05, seed: int = 0) -> tuple[Path, Path]:
    """Write the dataset of ``rows`` rows (see the module docstring); returns its paths."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = out.resolve()
    if out == REPO or REPO in out.parents:
        raise SystemExit(f"{out} is inside the project; write the data elsewhere (/tmp)")
    out.mkdir(parents=True, exist_ok=True)
    posts, classes, names = load_posts(data_root)
    vocabulary = np.array(sorted({w for words in posts for w in words}), dtype=object)
    n_classes = len(names)
    rng = np.random.default_rng([seed, rows])
    data_path, truth_path = paths(rows, out)
    data_tmp, truth_tmp = data_path.with_suffix(".tmp"), truth_path.with_suffix(".tmp")
    schema = pa.schema([("id", pa.int64()), ("text", pa.string()), ("label", pa.string())])
    truth_schema = pa.schema([("id", pa.int64()), ("is_error", pa.bool_()),
                              ("true_label", pa.string())])
    with pq.ParquetWriter(data_tmp, schema) as data, \
            pq.ParquetWriter(truth_tmp, truth_schema) as truth:
        for start in range(0, rows, CHUNK):
            n = min(CHUNK, rows - start)
            post = rng.integers(len(posts), size=n)
            length = rng.integers(MIN_WORDS, MAX_WORDS + 1, size=n)
            where = rng.random(n)
            texts = []
            for i in range(n):
                words = posts[post[i]]
                first = int(where[i] * (len(words) - length[i] + 1))
                window = words[first:first + length[i]]
                draw = rng.random(len(window))
                kept = [w if d >= DROP + REPLACE else str(rng.choice(vocabulary))
                        for w, d in zip(window, draw, strict=True) if d >= DROP]
                texts.append(" ".join(kept) or window[0])
            true = classes[post]
            is_error = rng.random(n) < flip_rate
            given = np.where(is_error, (true + rng.integers(1, n_classes, size=n)) % n_classes,
                             true)
            ids = np.arange(start, start + n, dtype=np.int64)
            label_names = np.asarray(names, dtype=object)
            data.write_table(pa.table({"id": ids, "text": texts,
                                       "label": label_names[given].tolist()}, schema=schema))
            truth.write_table(pa.table({"id": ids, "is_error": is_error,
                                        "true_label": label_names[true].tolist()},
                                       schema=truth_schema))
    data_tmp.replace(data_path)
    truth_tmp.replace(truth_path)
    return data_path, truth_path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, required=True, help="rows to write")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder")
    parser.add_argument("--data-root", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--flip-rate", type=float, default=0.05, help="planted error rate")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    data_path, truth_path = build(args.rows, out=args.out, data_root=args.data_root,
                                  flip_rate=args.flip_rate, seed=args.seed)
    print(f"wrote {data_path} and {truth_path} in {time.perf_counter() - started:.1f}s",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
