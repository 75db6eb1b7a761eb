"""Every notebook in notebooks/ runs top to bottom, in the current vocabulary (no deprecated
argument or name), and is stored with the outputs of a run from top to bottom (``make
notebooks``), which the documentation shows without running it again."""

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_stored_with_the_outputs_of_one_run(path):
    nb = nbformat.read(path, as_version=4)
    code = [cell for cell in nb.cells if cell.cell_type == "code" and cell.source.strip()]
    counts = [cell.get("execution_count") for cell in code]
    assert counts == list(range(1, len(code) + 1)), (
        f"{path.name} is not stored as one run from top to bottom; run `make notebooks`")
    errors = [out for cell in code for out in cell.get("outputs", [])
              if out.get("output_type") == "error"]
    assert not errors, f"{path.name} stores an error: {errors[0].get('ename')}"
    assert any(cell.get("outputs") for cell in code), f"{path.name} stores no output"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path, tmp_path):
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    shown = "".join(out.get("text", "") for cell in nb.cells for out in cell.get("outputs", []))
    assert "the old name will be removed" not in shown, f"{path.name} uses a deprecated name"


def test_there_are_notebooks():
    assert NOTEBOOKS, "notebooks/ holds no notebook"
