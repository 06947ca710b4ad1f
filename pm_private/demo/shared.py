"""What the parts of ``pm-private demo`` share: the ledger's budget, the sampling settings, quiet
output, and NUTS compiled in a step of its own before it samples."""

from __future__ import annotations

import logging
import warnings
from contextlib import contextmanager
from dataclasses import dataclass

from .display import Display
from .drug_sensitivity import quiet_sampler

__all__ = [
    "COMPILE",
    "LEDGER",
    "LEDGER_TOTAL",
    "LINEAR_BUDGET",
    "SURVIVAL_BUDGET",
    "Sampling",
    "print_ledger",
    "quiet",
    "sample",
]

#: The ledger's file name in the output folder, its total and what each release of the demo spends.
LEDGER = "demo.ledger"
LEDGER_TOTAL = (3.0, 1e-5)
LINEAR_BUDGET = (2.0, 1e-6)
SURVIVAL_BUDGET = (1.0, 1e-6)

#: PyTensor's compile modes: the model's log-density and gradient (NUTS calls them at every
#: leapfrog step) with Numba, PyMC's functions called once a draw without compiling.
COMPILE = {"mode": "NUMBA"}
AUXILIARY = {"mode": "FAST_COMPILE"}


@dataclass(frozen=True)
class Sampling:
    """NUTS settings of the demo's fits: kept draws and tuning iterations per chain, chains."""

    draws: int
    tune: int
    chains: int

    @property
    def total(self) -> int:
        """Iterations of all chains together."""
        return self.chains * (self.draws + self.tune)


def _no_info(record: logging.LogRecord) -> bool:
    return record.levelno >= logging.WARNING


@contextmanager
def quiet():
    """The demo's own lines only: no BLAS-link or experimental-adaptation warnings, no PyMC log
    lines and no library notice that a first fit compiles (the demo's step lines say so).  Import
    PyMC before entering: importing it sets its logger's level."""
    notices = logging.getLogger("pm_private")
    notices.addFilter(_no_info)
    try:
        with warnings.catch_warnings(), quiet_sampler():
            warnings.filterwarnings("ignore", message="PyTensor could not link to a BLAS")
            warnings.filterwarnings("ignore", message="QuadPotentialFullAdapt is an experimental feature")
            yield
    finally:
        notices.removeFilter(_no_info)


def sample(display: Display, model, sampling: Sampling, seed: int, what: str, *, target_accept: float = 0.9):
    """Compile NUTS for ``model`` (a step of its own), then sample it (a step with PyMC's progress
    bar on a terminal, lines into a log).

    Parameters
    ----------
    display : Display
    model : pymc.Model
    sampling : Sampling
    seed : int
        Seed of the initial points and of the sampler.
    what : str
        The model's name in the step lines.
    target_accept : float, default 0.9
        NUTS's target acceptance rate (higher: smaller steps, fewer divergences).

    Returns
    -------
    idata : xarray.DataTree
        What ``pm.sample`` returned.
    divergent : int
        The number of divergent draws.
    """
    import pymc as pm

    from ..released.sampling import laplace_nuts, laplace_start

    clock = display.sampler_clock(sampling.total)
    text = (
        f"NUTS on the {what}: compiling (once per machine), the posterior mode, then {sampling.chains} chains × "
        f"({sampling.tune} tuning + {sampling.draws} draws)"
    )
    with display.step(text, spinner=False):
        # Started at the posterior mode with the Laplace approximation's dense mass matrix (the
        # released statistics tie the parameters together): from the initial point and the
        # identity, the first tuning windows take deep trees of tiny steps.
        step = laplace_nuts(model, target_accept=target_accept, compile_kwargs=COMPILE)
        idata = pm.sample(
            sampling.draws,
            tune=sampling.tune,
            chains=sampling.chains,
            cores=1,
            step=step,
            initvals=laplace_start(step, model),
            model=model,
            random_seed=seed,
            progressbar=display.live,
            callback=clock,
            compute_convergence_checks=False,  # print_summary shows R̂ and ESS
            # PyMC's own small functions (initial point, trace): no compiling, they run once a draw
            compile_kwargs=AUXILIARY,
        )
    divergent = int(idata["sample_stats"]["diverging"].sum())
    display.print(
        f"    compiling and the mode {clock.compiling:.0f} s, sampling {clock.sampling:.0f} s; {divergent} divergent draws"
    )
    return idata, divergent


def print_ledger(display: Display, ledger) -> str:
    """Print the ledger's entries and totals; returns the totals in a few words, for a headline."""
    for entry in ledger.history:
        display.print(
            f"    {entry.status:8} ε = {entry.epsilon:g}, δ = {entry.delta:g}  {entry.mechanism}: {entry.note}"
        )
    spent, tight = ledger.spent, ledger.tight_epsilon()
    display.print(
        f"    spent ε = {spent.epsilon:g} of {ledger.epsilon:g} by basic composition, ε = {tight:.2f} composed "
        f"tightly at δ = {ledger.delta:g}; δ = {spent.delta:g} of {ledger.delta:g}"
    )
    return f"ledger: ε = {spent.epsilon:g} of {ledger.epsilon:g} spent ({tight:.2f} composed tightly)"
