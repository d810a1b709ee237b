"""``labelaudit consistency`` reads tagged files unless --text names a text column: a table
given without --text is refused in one line that says to give it."""

from __future__ import annotations

import pandas as pd
import pytest

from labelaudit.cli import main


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_a_table_without_text_says_to_give_text(tmp_path, capsys, suffix):
    frame = pd.DataFrame({"id": range(6), "text": [f"item {i}" for i in range(6)],
                          "label": list("ababab")})
    for name in ("train", "suspect"):
        path = tmp_path / f"{name}{suffix}"
        if suffix == ".csv":
            frame.to_csv(path, index=False)
        else:
            frame.to_json(path, orient="records", lines=True)
    assert main(["consistency", str(tmp_path / f"train{suffix}"), "--suspect",
                 str(tmp_path / f"suspect{suffix}")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].endswith("(without --text the files are read as tagged files, CoNLL or "
                           "token JSONL; for tables of texts, give --text COLUMN)")
