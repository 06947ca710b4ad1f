"""Every notebook in ``notebooks/`` runs from top to bottom without an error.

Each notebook is executed with nbclient in a fresh kernel of *this* Python (the kernel spec is
looked up only in ``sys.prefix``, and jupyter_client starts a spec whose command is ``python``
with ``sys.executable``), with the repository root as working directory.  The kernel inherits
the environment, so it compiles into the tests' PyTensor cache (PyTensor's default folder, or the
``PYTENSOR_FLAGS`` the run was started with).
The executed copy is not written back: the stored outputs, which the documentation renders,
are refreshed with ``scripts/notebooks``.

A notebook whose run is mostly the length of one computation runs here with that length cut
(``TEST_PARAMETERS``, injected as a cell after the cell tagged ``parameters``, as papermill does):
every cell still runs on the same code paths, the stored outputs keep the notebook's own sizes.
"""

import shutil
import sys
import tempfile
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
from jupyter_client.kernelspec import KernelSpecManager  # noqa: E402  (a dependency of nbclient)
from jupyter_client.manager import KernelManager  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

#: Sizes the notebook runs here use in place of their own (the notebook's parameters cell says what
#: each is), where a run is mostly the length of one computation rather than its compiling: the
#: pSGLD chains of private_sampling (1.5 million updates each; 100,000 still pass the burn-in and
#: fill every diagnostic), the NUTS and ADVI fits of survival (fewer draws and steps of the same
#: calls), drug_sensitivity's ADVI experiment and its real-data releases per ε (fewer steps and
#: repeats of the same calls).
TEST_PARAMETERS = {
    "private_sampling.ipynb": "UPDATES = 100_000",
    "survival.ipynb": "WEIBULL_TUNE, WEIBULL_DRAWS, WEIBULL_ADVI_STEPS = 200, 200, 1000\nDT_TUNE, DT_DRAWS = 100, 200",
    "drug_sensitivity.ipynb": "ADVI_STEPS = 500\nREAL_RELEASES = 2",
}


def _kernel_manager(folder: Path) -> KernelManager:
    """A manager for the ``python3`` kernel of this interpreter, whatever user kernels exist, whose
    channels are Unix sockets in ``folder`` (transport ``ipc``) rather than TCP ports: kernels that
    the two test workers start at once cannot then pick the same free port (one died with "Address
    already in use" in a run of the suite)."""
    specs = KernelSpecManager(kernel_dirs=[str(Path(sys.prefix) / "share" / "jupyter" / "kernels")])
    return KernelManager(kernel_name="python3", kernel_spec_manager=specs, transport="ipc", ip=str(folder / "kernel"))


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path):
    nb = nbformat.read(path, as_version=4)
    if path.name in TEST_PARAMETERS:
        tagged = [i for i, cell in enumerate(nb.cells) if "parameters" in cell.get("metadata", {}).get("tags", [])]
        assert len(tagged) == 1, f"{path.name}: one cell tagged 'parameters' is needed, found {len(tagged)}"
        nb.cells.insert(tagged[0] + 1, nbformat.v4.new_code_cell(TEST_PARAMETERS[path.name]))
    probe = nbformat.v4.new_code_cell("import sys; print(sys.prefix)")
    nb.cells.insert(0, probe)
    folder = Path(tempfile.mkdtemp(prefix="pm-kernel-"))  # short: a Unix socket path has ≤ 107 bytes
    manager = _kernel_manager(folder)
    client = nbclient.NotebookClient(
        nb,
        km=manager,
        kernel_name="python3",
        timeout=600,
        resources={"metadata": {"path": str(ROOT)}},
    )
    try:
        client.execute()  # raises CellExecutionError (cell source and traceback) if any cell fails
    finally:  # a client given its manager leaves the kernel running: stop it, with its memory
        manager.shutdown_kernel(now=True)
        shutil.rmtree(folder, ignore_errors=True)
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
