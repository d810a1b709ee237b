"""``python -m benchmarks.evidence``: what the evidence column costs, and what it says.

For each dev data set under the data root (``../shared/data``, as
:mod:`benchmarks.detection`; a missing one is skipped):

- **duplicates**: groups of items whose normalised text (lower-cased, punctuation dropped;
  pairs: both sides) is identical, and how many of them carry different labels; and the
  pairs of items that are nearly identical (cosine at least 0.95 on the evidence's neighbour
  features) with different labels, what the evidence names as ``duplicate_of`` besides;
- **cost** (``--cost-sets``, default the IMDB dev half): the default scan with and without
  evidence (``evidence=False``, the CLI's ``--no-evidence``), each in its own process,
  ``--repeats`` times in alternating order; wall time of each and the ratio;
- **examples**: from the scan with evidence, the flagged items in rank order, the first
  three verified errors and the first three false alarms, with their evidence line.

Writes ``benchmarks/results/evidence.md`` and ``evidence.json`` (a set whose cost this run
does not measure keeps the figures of the file's earlier run). The truth columns are read
only to pick the examples.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from benchmarks.detection import DEFAULT_DATA, DEFAULT_RESULTS, DEV_SETS, DevSet, _load


def duplicates(spec: DevSet, root: Path) -> dict[str, Any] | None:
    """Groups of identical normalised texts in ``spec``, and those with several labels."""
    import numpy as np

    from labelaudit.scanning._evidence import (
        NEAR_DUPLICATE,
        conflicting_groups,
        duplicate_groups,
        neighbour_features,
    )

    loaded = _load(spec, root)
    if loaded is None:
        return None
    frame, _ = loaded
    pairs = None if spec.text_pair is None else frame[spec.text_pair].astype(str).tolist()
    groups = duplicate_groups(frame[spec.text].astype(str).tolist(), pairs)
    labels = frame["label"].astype(str).astype("category").cat.codes.to_numpy()
    several, conflicting = conflicting_groups(groups, labels)
    features = neighbour_features(frame[spec.text].astype(str).tolist(), pairs)
    near = 0
    for start in range(0, len(frame), 512):
        similar = (features[start:start + 512] @ features.T).toarray()
        rows, cols = np.nonzero(similar >= NEAR_DUPLICATE)
        later = cols > rows + start  # each pair once, never an item with itself
        near += int((labels[rows[later] + start] != labels[cols[later]]).sum())
    return {"set": spec.name, "items": len(frame), "duplicate_groups": several,
            "conflicting_groups": conflicting, "near_conflicting_pairs": near}


def _cpu_seconds() -> float:
    """CPU time of this process and its children so far (user + system): what a scan costs
    whatever else the machine runs."""
    own, children = (resource.getrusage(w) for w in (resource.RUSAGE_SELF,
                                                      resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _timed_scan(spec: DevSet, root: str, evidence: bool) -> dict[str, Any]:
    """One default scan in this (child) process: its seconds, peak memory and examples."""
    from labelaudit import scan
    from labelaudit.io import evidence_text

    warnings.simplefilter("ignore")
    frame, is_error = _load(spec, Path(root))  # type: ignore[misc]
    started, cpu = time.perf_counter(), _cpu_seconds()
    result = scan(frame, text=spec.text, text_pair=spec.text_pair, label="label", id="id",
                  progress=False, keep_columns=False, evidence=evidence)
    seconds, cpu = time.perf_counter() - started, _cpu_seconds() - cpu
    examples: dict[str, list[dict[str, Any]]] = {"verified errors": [], "false alarms": []}
    if evidence:
        truth = dict(zip(frame["id"], is_error, strict=True))
        table = result.to_frame()
        for row in table[table["flagged"]].itertuples():
            kind = "verified errors" if truth[row.id] else "false alarms"
            if len(examples[kind]) < 3:
                examples[kind].append({"rank": int(row.rank), "id": row.id,
                                       "label": row.label, "text": str(row.text)[:300],
                                       "evidence": evidence_text(row.evidence)})
    return {"evidence": evidence, "seconds": seconds, "cpu_seconds": cpu,
            "flagged": int(result.flagged.sum()),
            "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
            "examples": examples}


def cost(spec: DevSet, root: Path, repeats: int) -> dict[str, Any] | None:
    """The default scan without and with evidence, alternating, each in a fresh process."""
    if _load(spec, root) is None:
        return None
    runs: dict[bool, list[dict[str, Any]]] = {False: [], True: []}
    for repeat in range(repeats):
        for evidence in ((False, True) if repeat % 2 == 0 else (True, False)):
            with ProcessPoolExecutor(1) as pool:
                run = pool.submit(_timed_scan, spec, str(root), evidence).result()
            runs[evidence].append(run)
            print(f"  {spec.name} evidence={evidence}: {run['seconds']:.1f} s "
                  f"({run['cpu_seconds']:.1f} s CPU)", file=sys.stderr)

    def mean(key: str, evidence: bool) -> float:
        return sum(r[key] for r in runs[evidence]) / repeats

    off, on = mean("seconds", False), mean("seconds", True)
    cpu_off, cpu_on = mean("cpu_seconds", False), mean("cpu_seconds", True)
    return {"set": spec.name, "seconds_without": off, "seconds_with": on,
            "ratio": on / off, "cpu_seconds_without": cpu_off, "cpu_seconds_with": cpu_on,
            "cpu_ratio": cpu_on / cpu_off, "flagged": runs[True][0]["flagged"],
            "peak_mb_without": max(r["peak_mb"] for r in runs[False]),
            "peak_mb_with": max(r["peak_mb"] for r in runs[True]),
            "examples": runs[True][0]["examples"]}


def markdown(dupes: list[dict[str, Any]], costs: list[dict[str, Any]], command: str) -> str:
    lines = [f"`{command}`", "", "## Duplicates (identical after lower-casing and dropping "
             "punctuation)", "", "| data | items | groups of duplicates | with different "
             "labels | pairs identical or nearly so (cosine >= 0.95) with different labels |",
             "|---|---|---|---|---|"]
    lines += [f"| {d['set']} | {d['items']:,} | {d['duplicate_groups']} | "
              f"{d['conflicting_groups']} | {d['near_conflicting_pairs']} |" for d in dupes]
    lines += ["", "## Cost of the evidence (default scan, each run its own process)", "",
              "| data | flagged | wall: without / with evidence | ratio | CPU: without / "
              "with | ratio | peak MB without / with |", "|---|---|---|---|---|---|---|"]
    lines += [f"| {c['set']} | {c['flagged']} | {c['seconds_without']:.1f} s / "
              f"{c['seconds_with']:.1f} s | {c['ratio']:.2f}x | {c['cpu_seconds_without']:.1f} s"
              f" / {c['cpu_seconds_with']:.1f} s | {c['cpu_ratio']:.2f}x | "
              f"{c['peak_mb_without']:.0f} / {c['peak_mb_with']:.0f} |" for c in costs]
    lines += ["", *(f"Measured by `{c.get('command', 'python -m benchmarks.evidence')}` "
                    f"({c['set']})." for c in costs)]
    for c in costs:
        for kind, rows in c["examples"].items():
            lines += ["", f"### {c['set']}: the first {len(rows)} {kind} among the flagged", ""]
            lines += [f"- rank {r['rank']}, `{r['id']}` (given {r['label']}): "
                      f"{r['evidence']}\n  > {r['text'][:200]}…" for r in rows]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.evidence",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--results", type=Path, default=DEFAULT_RESULTS)
    parser.add_argument("--sets", nargs="+", default=[s.name for s in DEV_SETS])
    parser.add_argument("--cost-sets", nargs="*", default=["imdb_dev"])
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args(argv)
    specs = [s for s in DEV_SETS if s.name in args.sets]
    dupes = [d for d in (duplicates(s, args.data) for s in specs) if d is not None]
    costs = [c for c in (cost(s, args.data, args.repeats) for s in specs
                         if s.name in args.cost_sets) if c is not None]
    command = "python -m benchmarks.evidence " + " ".join(argv or sys.argv[1:])
    for c in costs:
        c["command"] = command.strip()
    earlier = args.results / "evidence.json"
    if earlier.exists():  # the sets measured before and not now keep their figures
        measured = {c["set"] for c in costs}
        costs += [c for c in json.loads(earlier.read_text(encoding="utf-8")).get("cost", [])
                  if c["set"] not in measured]
    args.results.mkdir(parents=True, exist_ok=True)
    text = markdown(dupes, costs, command.strip())
    (args.results / "evidence.md").write_text(text, encoding="utf-8")
    (args.results / "evidence.json").write_text(json.dumps(
        {"command": command.strip(), "duplicates": dupes, "cost": costs}, indent=2,
        default=str) + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
