"""Every notebook in ``notebooks/`` runs from top to bottom without an error.

Each notebook is executed with nbclient in a fresh kernel of *this* Python (the kernel spec is
looked up only in ``sys.prefix``, and jupyter_client starts a spec whose command is ``python``
with ``sys.executable``), with the repository root as working directory.  The kernel inherits
the environment, so ``PYTENSOR_FLAGS`` from ``conftest.py`` gives it the shared compile cache.
The executed copy is not written back: the stored outputs, which the documentation renders,
are refreshed with ``scripts/notebooks``.
"""

import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
from jupyter_client.kernelspec import KernelSpecManager  # noqa: E402  (a dependency of nbclient)
from jupyter_client.manager import KernelManager  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def _kernel_manager() -> KernelManager:
    """A manager for the ``python3`` kernel of this interpreter, whatever user kernels exist."""
    specs = KernelSpecManager(kernel_dirs=[str(Path(sys.prefix) / "share" / "jupyter" / "kernels")])
    return KernelManager(kernel_name="python3", kernel_spec_manager=specs)


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path):
    nb = nbformat.read(path, as_version=4)
    probe = nbformat.v4.new_code_cell("import sys; print(sys.prefix)")
    nb.cells.insert(0, probe)
    client = nbclient.NotebookClient(
        nb,
        km=_kernel_manager(),
        kernel_name="python3",
        timeout=600,
        resources={"metadata": {"path": str(ROOT)}},
    )
    client.execute()  # raises CellExecutionError (cell source and traceback) if any cell fails
    kernel_prefix = "".join(out.get("text", "") for out in probe.outputs).strip()
    assert Path(kernel_prefix) == Path(sys.prefix), f"kernel ran {kernel_prefix!r}, not this Python"


def test_notebooks_found():
    assert NOTEBOOKS, "no notebooks in notebooks/"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_is_valid_and_its_stored_outputs_name_no_machine_paths(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    outputs = str([cell.get("outputs", []) for cell in nb.cells if cell.cell_type == "code"])
    for local in (str(ROOT), str(Path.home()), sys.prefix):
        assert local not in outputs, f"{path.name} stores a path of this machine ({local}) in its outputs"
