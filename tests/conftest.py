import json
import os
import tempfile
from datetime import datetime
from pathlib import Path

import pytest

# Ledger witnesses of the suite's ledgers go to a folder of their own (inherited by the processes the
# tests spawn), never to the developer's state folder.
os.environ["PM_PRIVATE_STATE_DIR"] = tempfile.mkdtemp(prefix="pm-private-witness-")
# No compile worker beside the suite's two workers (its own test turns it back on): the cores are
# busy, though the load average may lag behind at the start of a run.
os.environ["PM_PRIVATE_COMPILE_WORKER"] = "0"


#: Goodness-of-fit thresholds.  Seeded noise is deterministic: a test either always passes or
#: always fails, so 10⁻⁴ costs nothing.  Secure noise (``rng=None``) cannot be seeded: every run
#: is a new draw, so its tests use 10⁻⁹ (a correct mechanism fails once in 10⁹ runs), with
#: samples large enough that this threshold still rejects a noise scale wrong by half.
P_SEEDED, P_SECURE = 1e-4, 1e-9


@pytest.fixture
def p_min():
    """``p_min(secure)``: the p-value a goodness-of-fit test of seeded or secure noise must exceed."""
    return lambda secure: P_SECURE if secure else P_SEEDED


# --- Distribution over ``pytest -n 2`` workers -------------------------------------------------
#
# xdist's default ("load") hands each worker long runs of consecutive tests, so the notebooks
# (minutes each) can all land on one worker while the other finishes early, and a module's tests
# can be split between workers that then both compile its models cold.  Here every module is one
# unit of work (its module-scoped fixtures and compiled models serve all its tests, on one
# worker), each notebook run is a unit of its own, and units are dealt longest first (notebooks by
# their stored run time, then modules with tests marked ``slow``, then the rest, each group in
# collection order), so that the two workers finish together.

NOTEBOOK_RUNS = "tests/contracts/test_notebooks.py::test_notebook_runs["
NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def _unit(nodeid: str) -> str:
    """The unit of work of a test: its own id for a notebook run, else its module."""
    return nodeid if nodeid.startswith(NOTEBOOK_RUNS) else nodeid.split("::", 1)[0]


def _stored_run_time(name: str) -> float:
    """Seconds the notebook's cells took when its outputs were last stored (0 if not recorded)."""
    cells = json.loads((NOTEBOOKS / name).read_text(encoding="utf-8"))["cells"]
    times = [cell.get("metadata", {}).get("execution", {}) for cell in cells]
    return sum(
        (
            datetime.fromisoformat(t["shell.execute_reply"]) - datetime.fromisoformat(t["iopub.execute_input"])
        ).total_seconds()
        for t in times
        if "shell.execute_reply" in t and "iopub.execute_input" in t
    )


def pytest_collection_modifyitems(config, items):
    """On xdist workers, order the collection longest first (a stable sort: a module's tests keep
    their order); every worker sorts the same collection the same way, as xdist requires."""
    if not hasattr(config, "workerinput"):
        return
    slow_modules = {_unit(item.nodeid) for item in items if item.get_closest_marker("slow")}
    run_time = {
        item.nodeid: _stored_run_time(item.nodeid[len(NOTEBOOK_RUNS) : -1])
        for item in items
        if item.nodeid.startswith(NOTEBOOK_RUNS)
    }

    def rank(item) -> tuple:
        if item.nodeid in run_time:
            return (0, -run_time[item.nodeid])
        return (1 if _unit(item.nodeid) in slow_modules else 2, 0.0)

    items.sort(key=rank)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """Deal the units of :func:`_unit` to the workers in collection order, as each asks for work
    (in place of xdist's default ``--dist load``; another ``--dist`` given is left to xdist)."""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class UnitScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _unit(nodeid)

    config.option.loadscopereorder = False  # keep the longest-first order of the collection
    return UnitScheduling(config, log)
