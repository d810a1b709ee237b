"""The tutorial notebook (docs/tutorials/find-and-fix.ipynb) runs top to bottom, and is kept
in git without outputs (the documentation site executes it when it is built)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "docs" / "tutorials").glob("*.ipynb"))
KERNEL = "labelaudit-tests"


@pytest.fixture
def kernel(tmp_path, monkeypatch) -> str:
    """A kernelspec running this interpreter (the .venv's), found first on JUPYTER_PATH, so
    no other ``python3`` kernel installed for the user is picked up instead."""
    folder = tmp_path / "jupyter" / "kernels" / KERNEL
    folder.mkdir(parents=True)
    (folder / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "labelaudit tests", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    return KERNEL


def test_there_is_a_tutorial():
    assert [p.name for p in NOTEBOOKS] == ["find-and-fix.ipynb"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_committed_without_outputs(path):
    import nbformat

    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code
    assert all(cell.outputs == [] and cell.execution_count is None for cell in code), (
        f"{path.name} has outputs: clear them before committing (Jupyter: Edit > Clear "
        "Outputs of All Cells, or `jupyter nbconvert --clear-output --inplace`)")
    assert notebook.metadata.get("kernelspec", {}).get("name") == "python3"


@pytest.mark.heavy  # starts a kernel
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs_top_to_bottom(path, kernel, tmp_path, monkeypatch):
    import nbformat
    from nbclient import NotebookClient

    # a copy in a folder of its own: the notebook finds the data through the environment,
    # and whatever it writes stays in temporary folders
    work = tmp_path / "run"
    work.mkdir()
    shutil.copy(path, work / path.name)
    monkeypatch.setenv("LABELAUDIT_EXAMPLES", str(ROOT / "examples"))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    notebook = nbformat.read(work / path.name, as_version=4)
    client = NotebookClient(notebook, kernel_name=kernel, timeout=300,
                            resources={"metadata": {"path": str(work)}})
    client.execute()  # raises CellExecutionError, naming the cell, on any error

    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) >= 3  # the three plots
    html = "".join(o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {}))
    assert "<strong>ScanResult</strong>" in html and "<iframe srcdoc=" in html
    assert sorted(p.name for p in work.iterdir()) == [path.name]  # nothing written beside it
