"""nutpie's NUTS on one model, compiled once and refitted after ``pm.set_data``.

``pm.sample(nuts_sampler="nutpie")`` compiles the model afresh on every call: nutpie builds its
Numba wrappers around PyTensor's compiled log-density each time (most of the 5–20 s a call
takes on the library's models before the first draw).  Refitting one model to many releases (a
study, a release per site, a sensitivity analysis) needs that only once: nutpie's compiled model
carries the model's data, and ``with_data`` swaps them without recompiling.
:class:`RefittableNutpie` is the nutpie counterpart of
:class:`pm_private.sampling.RefittableNUTS`.
"""

from __future__ import annotations

import time

import numpy as np
import pymc as pm

from .._engine.compile_notice import record_compiled

__all__ = ["RefittableNutpie"]


class RefittableNutpie:
    """nutpie's NUTS on ``model``, compiled once (Numba backend); each ``fit`` samples the model's
    current data.

    Parameters
    ----------
    model : pm.Model
        The model; its ``pm.Data`` may be changed between fits (same ranks), e.g. by
        :func:`pm_private.survival.set_survival_stats` or :func:`pm_private.set_logistic_stats`.
    draws, tune : int, default 1000
        Kept and tuning draws per chain.
    chains : int, default 2
        Chains per fit.
    cores : int, default 1
        Chains run at once (threads of one process).
    random_seed : int, default 0
        Seed of the first fit; each fit uses the next one.
    target_accept : float, default 0.8
        NUTS's target acceptance rate.

    Attributes
    ----------
    times : list of float
        Wall time of each fit, in seconds (compilation excluded: it happens once, in the
        constructor, and takes ``compile_time`` seconds).

    Raises
    ------
    ImportError
        If nutpie is not installed.

    Examples
    --------
    >>> import numpy as np
    >>> from pm_private import release_survival_stats, survival_model
    >>> from pm_private.sampling import RefittableNutpie
    >>> from pm_private.survival import set_survival_stats
    >>> rng = np.random.default_rng(0)
    >>> arm = rng.choice(["a", "b"], 500)
    >>> time = rng.exponential(np.where(arm == "b", 3.0, 2.0))
    >>> release = release_survival_stats(time, np.ones(500), arm, edges=[1.0, 2.0, 3.0], cells=["a", "b"],
    ...                                  epsilon=1.0, delta=1e-6, rng=0)
    >>> fitter = RefittableNutpie(survival_model(release), draws=200, tune=200)  # doctest: +SKIP
    >>> first = fitter.fit()  # doctest: +SKIP
    >>> set_survival_stats(release_survival_stats(time, np.ones(500), arm, edges=[1.0, 2.0, 3.0],
    ...                    cells=["a", "b"], epsilon=1.0, delta=1e-6, rng=1), fitter.model)  # doctest: +SKIP
    >>> second = fitter.fit()  # no recompilation  # doctest: +SKIP
    """

    def __init__(
        self,
        model: pm.Model,
        *,
        draws: int = 1000,
        tune: int = 1000,
        chains: int = 2,
        cores: int = 1,
        random_seed: int = 0,
        target_accept: float = 0.8,
    ):
        import nutpie

        self.model = model
        start = time.perf_counter()
        self.compiled = nutpie.compile_pymc_model(model, backend="numba")
        record_compiled(model)
        self.compile_time = time.perf_counter() - start
        self._data = sorted({var.name for var in self.compiled.shared_var_keys} & {var.name for var in model.data_vars})
        self.draws, self.tune, self.chains, self.cores = int(draws), int(tune), int(chains), int(cores)
        self.seed, self.target_accept = int(random_seed), float(target_accept)
        self.times: list[float] = []

    def fit(self):
        """Sample the model's current data; returns nutpie's result (``posterior``, ``sample_stats``).

        Returns
        -------
        arviz or xarray data tree
            nutpie's draws of the model's variables, deterministics included.
        """
        import nutpie

        start = time.perf_counter()
        data = {name: np.asarray(self.model[name].get_value()) for name in self._data}
        idata = nutpie.sample(
            self.compiled.with_data(**data),
            draws=self.draws,
            tune=self.tune,
            chains=self.chains,
            cores=self.cores,
            seed=self.seed,
            target_accept=self.target_accept,
            progress_bar=False,
        )
        self.times.append(time.perf_counter() - start)
        self.seed += 1
        return idata
