"""NUTS on one model, its step built once and reused for many data sets (after ``pm.set_data``).

Monte Carlo studies (calibration, repeated releases) fit the same model to many statistics:
building the model and its NUTS step once and swapping the data between fits avoids a
recompilation per fit.  :class:`RefittableNUTS` is the NUTS counterpart of
:class:`pm_private.sampling.advi.RefittableADVI`.
"""

from __future__ import annotations

import time

import pymc as pm

__all__ = ["RefittableNUTS"]


class RefittableNUTS:
    """One NUTS chain on ``model`` per call of ``fit``, reusing the compiled step.

    PyMC's convergence checks run after every fit, as for ``pm.sample``: divergences and, with one
    chain, the warning that r̂ needs several.  A study that reports its own summary may turn them
    off (``compute_convergence_checks=False``); the number of divergent draws of every fit is
    recorded in ``divergences`` either way.

    Parameters
    ----------
    model : pm.Model
        The model; its ``pm.Data`` may be changed between fits (same shapes).
    draws, tune : int
        Kept and tuning draws per fit.
    target_accept : float, default 0.95
        NUTS's target acceptance rate: smaller steps than PyMC's 0.8, for the strongly correlated
        posteriors of noise-aware models of small releases.  If ``divergences`` exceed 1 % of
        the draws, raise it further.
    random_seed : int
        Seed of the first fit; each fit uses the next one.
    compute_convergence_checks : bool, default True
        Run PyMC's convergence checks (and their warnings) after every fit.

    Attributes
    ----------
    times : list of float
        Wall time of each fit, in seconds.
    divergences : list of int
        Number of divergent draws (after tuning) of each fit.
    """

    def __init__(
        self,
        model: pm.Model,
        *,
        draws: int = 300,
        tune: int = 300,
        target_accept=0.95,
        random_seed=0,
        compute_convergence_checks: bool = True,
    ):
        self.model = model
        with model:
            self.step = pm.NUTS(target_accept=target_accept)
        self.draws, self.tune, self.seed = int(draws), int(tune), int(random_seed)
        self.checks = bool(compute_convergence_checks)
        self.times: list[float] = []
        self.divergences: list[int] = []

    def fit(self):
        """Sample one chain on the model's current data; returns the DataTree of ``pm.sample``.

        Returns
        -------
        xarray.DataTree
            The draws of one chain (``draws`` after ``tune`` tuning steps).
        """
        start = time.perf_counter()
        with self.model:
            idata = pm.sample(
                self.draws,
                tune=self.tune,
                step=self.step,
                chains=1,
                cores=1,
                progressbar=False,
                random_seed=self.seed,
                compute_convergence_checks=self.checks,
            )
        self.times.append(time.perf_counter() - start)
        self.divergences.append(int(idata["sample_stats"]["diverging"].sum()))
        self.seed += 1
        return idata
