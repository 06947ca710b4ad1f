"""Mean-field ADVI compiled once and refitted many times (after ``pm.set_data``).

``pm.fit`` compiles a new step function on every call (seconds each).  Monte Carlo studies
such as Honkela et al.'s (2018) fit the same model to hundreds of data sets: :class:`RefittableADVI`
compiles the ADVI step once, and :meth:`RefittableADVI.fit` resets the variational
parameters and the optimiser state, runs ``n`` Adam steps with a learning rate decaying as
lr₀·(1 + t/τ)^(−1/2) (Robbins–Monro), and returns the approximation at the *average* of the
iterates over the last half of the run (Polyak–Ruppert averaging).  The last iterate of a
stochastic-gradient run jitters around the optimum by a fraction of a posterior sd; the
average does not, so repeated fits to the same data agree.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor
from pytensor.tensor.random.type import RandomGeneratorType

__all__ = ["RefittableADVI"]


class RefittableADVI:
    """ADVI (mean-field) on ``model`` whose compiled step is reused across :meth:`~RefittableADVI.fit` calls.

    Parameters
    ----------
    model : pm.Model
        The model; its ``pm.Data`` may be changed between fits (same shapes).
    learning_rate : float
        Initial Adam learning rate lr₀.
    decay_steps : float
        τ of the decay lr₀·(1 + t/τ)^(−1/2).
    random_seed : int, optional
        Seed of the Monte Carlo draws of the ELBO gradient.
    compile_kwargs : dict, optional
        Passed to PyTensor (default: the C backend, ``mode="CVM"``; which backend compiles
        faster on an empty cache depends on the model: the Samplers page of the documentation
        compares them).
    """

    def __init__(
        self,
        model: pm.Model,
        *,
        learning_rate: float = 0.05,
        decay_steps: float = 500.0,
        random_seed: int | None = None,
        compile_kwargs: dict | None = None,
    ):
        self.model = model
        self.learning_rate = float(learning_rate)
        self.decay_steps = float(decay_steps)
        self._lr = pytensor.shared(np.float64(learning_rate), name="advi_learning_rate")
        self.inference = pm.ADVI(model=model, random_seed=random_seed)
        self._seed, self._compile_kwargs, self._expectations = random_seed, compile_kwargs or {"mode": "CVM"}, {}
        self._step = self.inference.objective.step_function(
            obj_optimizer=pm.adam(learning_rate=self._lr),
            compile_kwargs=self._compile_kwargs,
            # score=False compiles a step without outputs whose updates come out wrong
            # (diverging iterates) with PyMC 6.4 / PyTensor 3.3; returning the loss avoids it.
            score=True,
        )
        data = set(model.data_vars)
        self._initial = [
            (var, var.get_value(borrow=False))
            for var in self._step.get_shared()
            if var not in data and var is not self._lr and not isinstance(var.type, RandomGeneratorType)
        ]

    def fit(self, n: int = 5000):
        """Reset the variational parameters and optimiser, run ``n`` steps and return the
        approximation with its parameters (means and log-sd parameters ρ) averaged over the
        last ⌈n/2⌉ iterates.

        Parameters
        ----------
        n : int, default 5000
            The number of optimisation steps, ≥ 1.

        Returns
        -------
        pymc.variational.approximations.MeanField
            The fitted approximation (the same object at every fit).

        Raises
        ------
        ValueError
            If ``n`` < 1.
        """
        n = int(n)
        if n < 1:
            raise ValueError(f"n must be ≥ 1 step, got {n}")
        for var, value in self._initial:
            var.set_value(value.copy())
        params = self.inference.approx.params
        sums = [np.zeros_like(p.get_value(borrow=True)) for p in params]
        start = n // 2
        for t in range(n):
            self._lr.set_value(self.learning_rate / np.sqrt(1.0 + t / self.decay_steps))
            self._step()
            if t >= start:
                for total, p in zip(sums, params, strict=True):
                    total += p.get_value(borrow=True)
        for total, p in zip(sums, params, strict=True):
            p.set_value(total / (n - start))
        return self.inference.approx

    def mean(self, name: str) -> np.ndarray:
        """Variational mean of the untransformed free variable ``name`` after :meth:`fit`.

        For a transformed variable (e.g. a log-transformed precision) the mean of its value
        variable is not the mean of the variable, so this refuses those.

        Parameters
        ----------
        name : str
            The name of an untransformed free variable of the model.

        Returns
        -------
        numpy.ndarray
            Its variational mean, in the variable's shape.

        Raises
        ------
        KeyError
            If ``name`` is not an untransformed free variable.
        """
        ordering = self.inference.approx.groups[0].ordering
        if name not in ordering:
            raise KeyError(f"{name!r} is not an untransformed free variable; have {list(ordering)}")
        _, where, shape, _ = ordering[name]
        return self.inference.approx.mean.eval()[where].reshape(shape)

    def expectation(self, name: str, draws: int = 500) -> np.ndarray:
        """Monte Carlo mean of any model variable ``name`` (a deterministic too, e.g. β of the
        noise-aware regression, a non-linear function of the free variables) over ``draws``
        draws from the approximation after :meth:`fit`.  The sampling function is compiled once
        per (name, draws) and reused across fits.

        Parameters
        ----------
        name : str
            The name of any variable of the model.
        draws : int, default 500
            The number of Monte Carlo draws.

        Returns
        -------
        numpy.ndarray
            The Monte Carlo mean, in the variable's shape.
        """
        key = (name, int(draws))
        if key not in self._expectations:
            node = self.inference.approx.sample_node(self.model[name], size=int(draws))
            self._expectations[key] = pm.pytensorf.compile(
                [], node.mean(axis=0), random_seed=self._seed, **self._compile_kwargs
            )
        return np.asarray(self._expectations[key]())
