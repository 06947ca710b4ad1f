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

    Parameters
    ----------
    model : pm.Model
        The model; its ``pm.Data`` may be changed between fits (same shapes).
    draws, tune : int
        Kept and tuning draws per fit.
    target_accept : float
        NUTS's target acceptance rate.
    random_seed : int
        Seed of the first fit; each fit uses the next one.

    Attributes
    ----------
    times : list of float
        Wall time of each fit, in seconds.
    """

    def __init__(self, model: pm.Model, *, draws: int = 300, tune: int = 300, target_accept=0.9, random_seed=0):
        self.model = model
        with model:
            self.step = pm.NUTS(target_accept=target_accept)
        self.draws, self.tune, self.seed = int(draws), int(tune), int(random_seed)
        self.times: list[float] = []

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
                compute_convergence_checks=False,
            )
        self.times.append(time.perf_counter() - start)
        self.seed += 1
        return idata
