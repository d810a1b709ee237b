"""Export review items to Label Studio, Argilla or CSV (``labelaudit review export``).

* **Label Studio**: a JSON list of tasks, ``data`` holding ``item_id, kind, text,
  [text_pair,] given_label``, with ``predictions`` carrying the detector's suggestion
  (``score`` = its probability). :func:`label_studio_config` writes the matching
  labeling config. For blind review, do not let Label Studio pre-fill answers from the
  predictions.
* **Argilla** (2.x): a JSON list of records in ``rg.Record.from_dict`` form: ``fields``,
  ``metadata`` and ``suggestions`` keyed by the question name ``label``.
* **CSV**: one row per item.

The answers come back through :mod:`labelaudit.review._import`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from xml.sax.saxutils import quoteattr

from labelaudit._errors import InvalidParameterError
from labelaudit._validation import check_choice
from labelaudit.io import atomic_path, write_json
from labelaudit.review._store import ReviewStore, as_store

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["QUESTION", "export_items", "label_studio_config", "label_studio_tasks"]

ExportFormat = Literal["label-studio", "argilla", "csv"]
QUESTION = "label"  # the question's name in both tools


def _items(store: ReviewStore, kinds: Iterable[str]) -> list[dict[str, Any]]:
    frame = store.items_frame()
    frame = frame[frame["kind"].isin(list(kinds))]
    order = {"review": 0, "sentinel": 1, "qualification": 2}
    frame = frame.assign(_o=frame["kind"].map(order)).sort_values(["_o", "position"])
    records = []
    for row in frame.drop(columns="_o").to_dict("records"):
        clean = {k: (None if isinstance(v, float) and math.isnan(v) else v)
                 for k, v in row.items()}
        if clean["rank"] is not None:
            clean["rank"] = int(clean["rank"])
        records.append(clean)
    return records


def label_studio_config(store: ReviewStore | str | Path) -> str:
    """The Label Studio labeling config (XML) for a project's items.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from labelaudit.review import init_review
    >>> scan = pd.DataFrame({"id": [1, 2], "text": ["a", "b"], "label": ["x", "y"],
    ...                      "rank": [1, 2]})
    >>> db = pathlib.Path(tempfile.mkdtemp()) / "r.sqlite"
    >>> print(label_studio_config(init_review(scan, db, top=2)))  # doctest: +ELLIPSIS
    <View>
      <Text name="text" value="$text"/>
      <Choices name="label" toName="text" choice="single" showInline="true">
        <Choice value="x" hotkey="1"/>
    ...
    """
    store = as_store(store)
    config = store.config
    has_pair = any(r["text_pair"] is not None for r in _items(store, ["review"])[:1])
    lines = ["<View>", '  <Text name="text" value="$text"/>']
    if has_pair:
        lines.append('  <Text name="text_pair" value="$text_pair"/>')
    if config.show_label:
        lines.append('  <Header value="Given label: $given_label"/>')
    lines.append('  <Choices name="label" toName="text" choice="single" showInline="true">')
    for number, option in enumerate(config.options, start=1):
        hotkey = f' hotkey="{number}"' if number <= 9 else ""
        lines.append(f"    <Choice value={quoteattr(option)}{hotkey}/>")
    lines += ["  </Choices>", "</View>"]
    return "\n".join(lines)


# a file name that says another format than the one written is a mistake, not a wish
_SUFFIX_FORMATS = {".json": "JSON", ".jsonl": "JSON lines", ".ndjson": "JSON lines",
                   ".csv": "CSV", ".tsv": "TSV", ".tab": "TSV", ".parquet": "Parquet",
                   ".pq": "Parquet", ".xml": "XML"}


def _check_suffix(path: Path, to: str) -> None:
    written = "CSV" if to == "csv" else "JSON"
    said = _SUFFIX_FORMATS.get(path.suffix.lower())
    if said is not None and said != written:
        raise InvalidParameterError(
            f"{path}: --to {to} writes {written}, but the name says {said}; name the file "
            f"{path.with_suffix('.csv' if to == 'csv' else '.json').name}"
        )


def export_items(store: ReviewStore | str | Path, path: str | Path, *,
                 to: ExportFormat = "label-studio",
                 kinds: Iterable[str] = ("review", "sentinel"), predictions: bool = True,
                 label_config: str | Path | None = None) -> Path:
    """Write the project's items for another annotation tool.

    Parameters
    ----------
    store : ReviewStore or path
    path : path
        Output file: JSON for Label Studio and Argilla, CSV (comma-separated, UTF-8) for
        ``csv``, whatever the name; a suffix that says another format (``.json`` for CSV,
        ``.csv`` for JSON...) is refused.
    to : {"label-studio", "argilla", "csv"}
    kinds : iterable of str
        Which items: ``review``, ``sentinel``, ``qualification``.
    predictions : bool, default=True
        Include the detector's suggested label and its probability (Label Studio
        ``predictions``, Argilla ``suggestions``, the CSV's ``suggested_label`` and
        ``suggested_prob``). False for a blind review that shows reviewers no suggestion.
    label_config : path, optional
        Also write the Label Studio labeling config (XML, :func:`label_studio_config`) here.

    Returns
    -------
    Path
    """
    check_choice(to, "to", ("label-studio", "argilla", "csv"))
    store = as_store(store)
    path = Path(path)
    _check_suffix(path, to)
    items = _items(store, kinds)
    if to == "csv":
        with atomic_path(path) as tmp:
            _csv_frame(items, predictions).to_csv(tmp, index=False, encoding="utf-8")
    else:
        write = _label_studio_task if to == "label-studio" else _argilla_record
        write_json([write(item, predictions) for item in items], path)
    if label_config is not None:
        with atomic_path(label_config) as tmp:
            tmp.write_text(label_studio_config(store) + "\n", encoding="utf-8")
    return path


def label_studio_tasks(store: ReviewStore | str | Path, *,
                       kinds: Iterable[str] = ("review", "sentinel"),
                       predictions: bool = True) -> list[dict[str, Any]]:
    """The project's items as Label Studio tasks (``data`` with ``item_id``, ``kind``, the
    text and the given label; the suggestion as a prediction)."""
    return [_label_studio_task(item, predictions) for item in _items(as_store(store), kinds)]


def _suggests(item: dict[str, Any], predictions: bool) -> bool:
    return predictions and item["kind"] == "review" and item["suggested_label"] is not None


def _label_studio_task(item: dict[str, Any], predictions: bool) -> dict[str, Any]:
    data = {"item_id": item["item_id"], "kind": item["kind"], "text": item["text"],
            "given_label": item["given_label"]}
    if item["text_pair"] is not None:
        data["text_pair"] = item["text_pair"]
    task: dict[str, Any] = {"data": data}
    if _suggests(item, predictions):
        task["predictions"] = [{
            "model_version": "labelaudit",
            "score": item["suggested_prob"],
            "result": [{"from_name": QUESTION, "to_name": "text", "type": "choices",
                        "value": {"choices": [item["suggested_label"]]}}],
        }]
    task["meta"] = {"rank": item["rank"], "label_quality_score": item["score"]}
    return task


def _argilla_record(item: dict[str, Any], predictions: bool) -> dict[str, Any]:
    fields = {"text": item["text"]}
    if item["text_pair"] is not None:
        fields["text_pair"] = item["text_pair"]
    record: dict[str, Any] = {
        "id": f"{item['kind']}-{item['item_id']}",
        "fields": fields,
        "metadata": {"item_id": item["item_id"], "kind": item["kind"],
                     "given_label": item["given_label"], "rank": item["rank"],
                     "label_quality_score": item["score"]},
        "suggestions": {},
        "responses": {},
    }
    if _suggests(item, predictions):
        record["suggestions"][QUESTION] = {"value": item["suggested_label"],
                                           "score": item["suggested_prob"],
                                           "agent": "labelaudit"}
    return record


def _csv_frame(items: list[dict[str, Any]], predictions: bool) -> pd.DataFrame:
    import pandas as pd
    columns = ["kind", "item_id", "text", "text_pair", "given_label", "suggested_label",
               "suggested_prob", "score", "rank"]
    frame = pd.DataFrame(items, columns=columns)
    if frame["text_pair"].isna().all():
        frame = frame.drop(columns="text_pair")
    frame["rank"] = frame["rank"].astype("Int64")  # empty for known items, not 1.0
    if not predictions:
        frame = frame.drop(columns=["suggested_label", "suggested_prob"])
    return frame
