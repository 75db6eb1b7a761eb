"""Every notebook in notebooks/ runs top to bottom (outputs are not committed), in the current
vocabulary (no deprecated argument or name)."""

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path, tmp_path):
    nb = nbformat.read(path, as_version=4)
    assert all(not cell.get("outputs") for cell in nb.cells if cell.cell_type == "code"), (
        f"{path.name} has committed outputs; clear them")
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    shown = "".join(out.get("text", "") for cell in nb.cells for out in cell.get("outputs", []))
    assert "the old name will be removed" not in shown, f"{path.name} uses a deprecated name"


def test_there_are_notebooks():
    assert NOTEBOOKS, "notebooks/ holds no notebook"
