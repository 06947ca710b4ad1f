"""Sanitized-loss exponential mechanism (Nguyên & Hui 2017a, §5, Alg. 3) as a term of a ``pm.Model``.

For a per-record loss ℓ(f; dᵢ) ≥ 0 the utility is

    U(f; D) = −(σ/2)·‖f‖² − Σᵢ C_v(ℓ(f; dᵢ)),    C_v(x) = v·tanh(x/v),

and :func:`sanitized_loss` adds ε/(2v)·U(f; D) to the model's log-density, so that with a flat
prior on f (``pm.Flat``) the model's density is Alg. 3's exp(ε·U/(2v)).  Defaults as the paper
(§6.2): v = 2·log n, σ = 10⁻²·2v/ε.  σ > 0 is required: with σ = 0 the density tends to a
positive constant as ‖f‖ → ∞ and cannot be normalised.

Privacy.  Neighbouring data sets differ by replacing one record (n is public, and so are v and
σ, which depend on n and ε only).  ℓ is clipped at 0 before the sanitizer (a no-op for the
non-negative losses the mechanism is defined for), so 0 ≤ C_v(ℓ) < v for any loss callable and
replacing one record changes U by less than v at every f: Δ_U ≤ v.  One draw from
exp(ε·U/(2Δ_U)) is then ε-DP (McSherry & Talwar 2007; paper Thm 5.1); a prior on f that does not
look at the data is part of the base measure and keeps the guarantee.  The guarantee holds
**only for exact sampling** and for **one** draw: an MCMC chain (PyMC's NUTS, or
:class:`pm_private.PSGLD` as in paper Alg. 4) only approximates the density, so its output is
approximately private, and releasing m draws costs m·ε by sequential composition (Dwork & Roth
2014, Thm 3.16).

Accounting.  Building the term charges the accountant ε, with the label
``"approximate (MCMC)"``: the price of one published draw.  Every further draw is charged when
it is published: :func:`pm_private.sampling.publishable` charges (m − p)·ε for m draws when p
prepaid draws are left (p = 1 after building, 0 once used), to the accountant the term was
charged to, before it returns anything.  Publishing the same draws twice charges twice.

Robustness of the bound.  The per-record term is v when ℓ is NaN (a non-finite or overflowing
record, or a loss that fails), and C_v(max(ℓ, 0)) ∈ [0, v] otherwise (ℓ = +∞ gives v), so
Δ_U ≤ v holds for every input, not only for well-behaved ones: a NaN utility would be read by a
sampler as zero density, and the ratio of densities of neighbours would be unbounded.  Records
must be finite numbers, and the loss must return one value per record; both are checked when
the term is built, before the accountant is charged.

What may be published.  Only the parameter draws are the mechanism's output.  What else a
sampler records is a function of the records: NUTS stores ``sample_stats.lp`` = ε/(2v)·U(f; D) at
every draw (with the draws and the other records, a handful of draws determine a record
exactly), and ``sampling_time`` and step statistics depend on the data as well.  Sample with
:func:`pm_private.sampling.secure_sample` (seeded from ``os.urandom``: a run with a known seed
can be replayed against candidate data sets) and pass the result through
:func:`pm_private.sampling.publishable`, which keeps only the posterior draws of the model's
free random variables and charges for them.  The records are held in PyTensor shared
variables that are *not* registered as ``pm.Data``, so they never reach the ``DataTree``; they
are part of the model's graph, so a pickled model contains them, and :class:`SanitizedLoss`,
which holds that graph, refuses to be pickled.

A multiplier of the record sum
(1 in the model) lets :class:`pm_private.PSGLD` swap the records for a minibatch of k of them and
the multiplier for n/k, which gives an unbiased estimate of the record sum and leaves the
regulariser (σ/2)‖f‖² unscaled.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt
from pytensor.raise_op import Assert

from ..privacy.accountant import PrivacyAccountant
from ..privacy.budget import REPLACE_ONE
from ..privacy.release import release_guard
from ..privacy.validation import check_bound, check_epsilon

__all__ = [
    "SanitizedLoss",
    "bounded_terms",
    "logistic_loss",
    "sanitizer",
    "sanitized_loss",
    "sanitized_utility",
]

MECHANISM = "sanitized-loss exponential mechanism (Nguyên & Hui 2017a, Alg. 3)"
LABEL = "approximate (MCMC)"


class MinibatchRecords(NamedTuple):
    """What a minibatching step method needs from a sanitized term: the record arrays (leading
    axis n), the shared multiplier of the record sum (1 in the model) and n."""

    records: tuple
    scale: pytensor.compile.SharedVariable
    n: int


class DrawBudget:
    """What publishing draws of one sanitized term costs, and what was paid for already.

    Kept on the term's potential (``potential.tag.draw_budget``) so that
    :func:`pm_private.sampling.publishable` finds it in the model.  ``prepaid`` is the number of
    draws already paid for and not yet published: 1 when the term was charged to an
    accountant (the ε charged when it was built), 0 without one.

    Parameters
    ----------
    name : str
        The term's name.
    epsilon : float
        ε per published draw.
    accountant : PrivacyAccountant or None
        The accountant the term was charged to.
    """

    def __init__(self, name: str, epsilon: float, accountant: PrivacyAccountant | None):
        self.name = name
        self.epsilon = epsilon
        self.accountant = accountant
        self.prepaid = 0 if accountant is None else 1

    def cost(self, draws: int) -> float:
        """ε still to charge for publishing ``draws`` draws now: (draws − prepaid)⁺·ε.

        Parameters
        ----------
        draws : int
            The number of draws to publish.

        Returns
        -------
        float
            The ε to charge (0 when the prepaid draws cover them).
        """
        return max(0, draws - self.prepaid) * self.epsilon

    #: True for a copy made by pickling (e.g. for a sampler in a spawned process): it refuses to publish.
    detached = False

    def __reduce__(self):
        # The graph, and with it this budget, is pickled when chains run in spawned processes.
        # A copy must not publish: it would start from the prepaid draw without the accountant.
        return _detached_budget, (self.name, self.epsilon)


def _detached_budget(name: str, epsilon: float) -> DrawBudget:
    budget = DrawBudget(name, epsilon, None)
    budget.detached = True
    return budget


@dataclass(frozen=True)
class SanitizedLoss:
    """A sanitized-loss term added to a model: its parameters and the potential variable.

    ``epsilon`` is what the accountant was charged, the price of one published draw; it is an
    exact ε-DP guarantee only for one exact draw from the model (see the module docstring).
    :attr:`prepaid_draws` says how many draws may still be published without a further charge.  ``potential`` is a graph that holds
    the private records, so the term refuses to be pickled (or deep-copied): a pickle would
    write the records out.  Publish draws through :func:`pm_private.sampling.publishable`.

    Parameters
    ----------
    name : str
        The name of the potential.
    epsilon : float
        The ε charged to the accountant.
    v : float
        The sanitizer bound (public).
    sigma : float
        The regulariser σ (public).
    n : int
        The number of records (public).
    potential : pytensor.tensor.TensorVariable
        The model's potential ε/(2v)·U(f; D); it holds the records.
    neighbours : str, default REPLACE_ONE
        The neighbour relation of the guarantee.
    mechanism : str
        The mechanism's name, as written to the accountant's ledger.
    label : str, default "approximate (MCMC)"
        The ledger label: the guarantee holds for exact draws only.
    """

    name: str
    epsilon: float
    v: float
    sigma: float
    n: int
    potential: pt.TensorVariable
    neighbours: str = REPLACE_ONE
    mechanism: str = MECHANISM
    label: str = LABEL

    @property
    def prepaid_draws(self) -> int:
        """Draws paid for and not yet published (1 after building with an accountant, else 0)."""
        return self.potential.tag.draw_budget.prepaid

    def __reduce_ex__(self, protocol):
        raise TypeError(
            "a SanitizedLoss holds the private records in its graph and cannot be pickled or "
            "copied; publish the draws of pm.sample through pm_private.sampling.publishable"
        )


def sanitizer(x, v):
    """C_v(x) = v·tanh(x/v): ≈ x for x ≪ v, < v for all x.

    Parameters
    ----------
    x : pytensor.tensor.TensorLike
        The values to sanitize.
    v : float
        The bound v > 0.

    Returns
    -------
    pytensor.tensor.TensorVariable
        C_v(x), elementwise.
    """
    return v * pt.tanh(x / v)


def logistic_loss(f, X, y):
    """ℓ_LR(yᵢ·xᵢᵀf) = log(1 + exp(−yᵢ·xᵢᵀf)) per record, labels yᵢ ∈ {−1, +1} (Nguyên & Hui 2017a, Eq. 3).

    Parameters
    ----------
    f : pytensor.tensor.TensorVariable
        The coefficients, length d.
    X : array_like or pytensor.tensor.TensorVariable
        The covariates, n × d.
    y : array_like or pytensor.tensor.TensorVariable
        The labels in {−1, +1}, length n.

    Returns
    -------
    pytensor.tensor.TensorVariable
        The n per-record losses.
    """
    return pt.softplus(-pt.as_tensor(y) * (pt.as_tensor(X) @ f))


def _squared_norm(params) -> pt.TensorVariable:
    params = params if isinstance(params, Sequence) else [params]
    return pt.add(*[pt.sum(pt.square(p)) for p in params])


def _record_losses(loss: Callable, params, records) -> pt.TensorVariable:
    """ℓ(f; dᵢ) per record, with a run-time check that ℓ has one entry per record."""
    losses = pt.as_tensor(loss(params, *records))
    if losses.ndim != 1:
        raise ValueError(f"loss must return one value per record (a vector), got a {losses.ndim}-d tensor")
    return Assert("loss must return one value per record")(losses, pt.eq(losses.shape[0], records[0].shape[0]))


def bounded_terms(losses, v) -> pt.TensorVariable:
    """Per-record terms in [0, v] for any losses: v where ℓ is NaN, else C_v(max(ℓ, 0)).

    C_v(x) = v·tanh(x/v) (Nguyên & Hui 2017a, Alg. 3) maps [0, ∞] into [0, v]; ``max`` and
    ``tanh`` propagate NaN, so a NaN loss (a non-finite record, an overflow, a failing loss) is
    mapped to the largest value v.  Every term then lies in [0, v], and replacing one record
    changes Σᵢ terms by at most v: the bound Δ_U ≤ v of the mechanism holds for every input.

    Parameters
    ----------
    losses : pytensor.tensor.TensorLike
        The per-record losses ℓ.
    v : float
        The sanitizer bound v > 0.

    Returns
    -------
    pytensor.tensor.TensorVariable
        The per-record terms, each in [0, v].
    """
    losses = pt.as_tensor(losses)
    return pt.switch(pt.isnan(losses), v, sanitizer(pt.maximum(losses, 0.0), v))


def _check_one_per_record(losses, n: int, model: pm.Model) -> None:
    """Refuse a loss whose length is not n, before anything is charged.

    The length is read from PyTensor's shape inference (no record is evaluated); a loss whose
    Ops do not infer shapes is evaluated once at the model's initial point.
    """
    try:
        length = pytensor.function([], losses.shape[0], mode="FAST_COMPILE")()
    except Exception:  # shape not inferable without values: evaluate at the initial point
        try:
            (at_values,) = model.replace_rvs_by_values([losses.shape[0]])
            length = model.compile_fn(at_values, mode="FAST_COMPILE")(model.initial_point())
        except Exception as error:
            raise ValueError(
                "loss could not be evaluated at the model's initial point to check that it "
                f"returns one value per record ({type(error).__name__})"
            ) from None
    if int(length) != n:
        raise ValueError(f"loss must return one value per record: got {int(length)} values for n = {n} records")


def _record_terms(loss: Callable, params, records, v):
    """Bounded per-record terms (:func:`bounded_terms`) of ``loss`` on ``records``."""
    return bounded_terms(_record_losses(loss, params, records), v)


def sanitized_utility(loss: Callable, params, records, *, v, sigma, scale=1.0):
    """U(f; D) = −(σ/2)‖f‖² − scale·Σᵢ C_v(ℓ(f; dᵢ)) as a PyTensor expression (Nguyên & Hui 2017a).

    The per-record terms are :func:`bounded_terms`: a NaN loss counts as v.

    Parameters
    ----------
    loss : callable
        ``loss(params, *records)`` → PyTensor vector of the n per-record losses.
    params : pytensor.tensor.TensorVariable or sequence of them
        f; ‖f‖² sums over all of them.
    records : sequence of array_like
        The record arrays, first axis n.
    v : float
        The sanitizer bound.
    sigma : float
        The regulariser σ.
    scale : float or pytensor shared variable, default 1.0
        The weight of the sum of the per-record terms (n/k for a minibatch of k records).

    Returns
    -------
    pytensor.tensor.TensorVariable
        U(f; D), a scalar.

    Raises
    ------
    ValueError
        If ``loss`` does not return a vector.
    """
    terms = _record_terms(loss, params, records, v)
    return -0.5 * sigma * _squared_norm(params) - scale * pt.sum(terms)


def _as_records(data) -> tuple[np.ndarray, ...]:
    """The record arrays of ``data``: numeric (bool, integer or float), finite, same n ≥ 1.

    A non-finite record is refused by the row index of the first one (input validation happens
    before anything is released; the value itself is never printed).
    """
    if isinstance(data, np.ndarray) or not isinstance(data, Sequence) or isinstance(data, str):
        data = (data,)
    if not data:
        raise ValueError("data must hold at least one array of records")
    records = []
    for i, d in enumerate(data):
        try:
            array = np.asarray(d)
        except (TypeError, ValueError):
            raise ValueError(f"data array {i} is not an array of numbers") from None
        if array.dtype.kind not in "biuf":
            if array.dtype.kind != "O":
                raise ValueError(f"data array {i} must hold numbers, got dtype {array.dtype}")
            try:
                array = array.astype(np.float64)
            except (TypeError, ValueError):
                raise ValueError(f"data array {i} must hold numbers") from None
        if array.dtype.kind == "f" and array.ndim and array.size and not np.isfinite(array).all():
            row = int(np.flatnonzero(~np.isfinite(array.reshape(len(array), -1)).all(axis=1))[0])
            raise ValueError(f"data array {i} contains NaN or infinite values (first in record {row})")
        records.append(array)
    records = tuple(records)
    n = records[0].shape[0] if records[0].ndim else 0
    for i, array in enumerate(records):
        if array.ndim == 0 or array.shape[0] != n:
            raise ValueError(
                f"every data array needs the records on its first axis with the same n; "
                f"array 0 has shape {records[0].shape}, array {i} has shape {array.shape}"
            )
    if n < 1:
        raise ValueError("data must hold at least one record")
    if any(array.size == 0 for array in records):
        raise ValueError("every data array must hold at least one value per record")
    return records


def sanitized_loss(
    name: str,
    loss: Callable,
    params,
    data,
    *,
    epsilon: float,
    v: float | None = None,
    sigma: float | None = None,
    accountant: PrivacyAccountant | None = None,
    model: pm.Model | None = None,
) -> SanitizedLoss:
    """Add ε/(2v)·U(f; D) (Nguyên & Hui 2017a, Alg. 3) to the model as ``pm.Potential(name, ...)``.

    Parameters
    ----------
    name : str
        Name of the potential.
    loss : callable
        ``loss(params, *data)`` → PyTensor vector of the n per-record losses ℓ(f; dᵢ) ≥ 0; record
        i must be row i of every data array (a minibatch is ``data[idx]``), e.g.
        :func:`logistic_loss` or ``functools.partial(record_loss, basis=..., link=...)`` from
        ``pm_private.survival``.
    params : TensorVariable or sequence of them
        f; passed to ``loss`` as given; ‖f‖² sums over all of them.  Use ``pm.Flat`` for Alg. 3.
    data : array or sequence of arrays
        The private records, first axis n.
    epsilon : float
        ε > 0 of the mechanism.
    v, sigma : float, optional
        Sanitizer bound (default 2·log n) and regulariser (default 10⁻²·2v/ε); both > 0.
    accountant : PrivacyAccountant, optional
        Charged ε with label ``"approximate (MCMC)"``, the price of the first published draw
        (refused before anything is built if over budget); :func:`~pm_private.sampling.publishable`
        charges it for the other draws.
    model : pymc.Model, optional
        The model to add the term to (default: the model of the enclosing ``with`` block).

    Returns
    -------
    SanitizedLoss
        The term's public parameters and its potential (not picklable: it holds the records).

    Raises
    ------
    ValueError
        Before anything is charged: bad ε, v or σ; ``data`` not numeric, not finite, or without a
        common first axis n; a ``loss`` that does not return one value per record.
    BudgetExceededError
        If ``accountant`` cannot afford ε (nothing is added to the model).

    Notes
    -----
    Privacy: ε-DP (pure) for one exact draw from the density exp(ε·U/(2v)) under replace-one
    neighbours (n is public), since replacing one record changes U by less than v; m draws cost
    m·ε.  ``accountant`` is charged ε here, for the first published draw; publishing m draws
    with :func:`pm_private.sampling.publishable` charges the other (m − 1)·ε.  Public: v and σ (functions of n and ε only), the per-record loss, the prior, n.
    Approximate (MCMC): a Markov chain (NUTS, or :class:`~pm_private.sampling.PSGLD`) only
    approximates the density, so its draws are approximately private; the ledger entry is
    labelled ``"approximate (MCMC)"``.  Floating-point safety does not apply: the guarantee
    already assumes exact sampling.  References: Nguyên & Hui 2017a (Alg. 3); McSherry &
    Talwar 2007.

    **Publish only the draws, and pay for them.**  ``pm.sample`` records more than the draws,
    and that is a function of the records (``sample_stats.lp`` is ε/(2v)·U(f; D) at every draw,
    from which a record can be rebuilt).  Sample with
    :func:`pm_private.sampling.secure_sample` (a run with a known seed can be replayed) and pass
    the result through :func:`pm_private.sampling.publishable`, which keeps only the posterior
    draws of the model's free random variables and charges the accountant for every draw
    beyond the one already paid for::

        idata = secure_sample(...)
        release = publishable(idata, model=model, accountant=accountant)

    Examples
    --------
    >>> import numpy as np
    >>> import pymc as pm
    >>> from pm_private import PrivacyAccountant
    >>> from pm_private.sampling import logistic_loss, sanitized_loss
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(100, 2))
    >>> y = np.where(X[:, 0] > 0, 1.0, -1.0)
    >>> accountant = PrivacyAccountant(1.0)
    >>> with pm.Model() as model:
    ...     f = pm.Flat("f", shape=2)
    ...     term = sanitized_loss("U", logistic_loss, f, (X, y), epsilon=1.0, accountant=accountant)
    >>> round(term.v, 2), term.n, term.label  # v = 2·log n
    (9.21, 100, 'approximate (MCMC)')
    >>> accountant.spent
    Budget(epsilon=1.0, delta=0.0)

    Sampling it from the secure source (slow, so not run here) and publishing 100 draws, which
    charges the other 99·ε:

    >>> from pm_private.sampling import PSGLD, publishable, secure_sample
    >>> with model:  # doctest: +SKIP
    ...     idata = secure_sample(draws=100, step=PSGLD(batch_size=50), chains=1)
    >>> release = publishable(idata, model=model, accountant=accountant)  # doctest: +SKIP
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"name must be a non-empty string, got {name!r:.40}")
    if not callable(loss):
        raise TypeError(f"loss must be a callable loss(params, *data), got {type(loss).__name__}")
    if model is not None and not isinstance(model, pm.Model):
        raise TypeError(f"model must be a pymc Model or None, got {type(model).__name__}")
    try:
        params_tensor = pt.as_tensor_variable(params)
    except (TypeError, ValueError, NotImplementedError):
        raise TypeError(f"params must be a tensor of model parameters, got {type(params).__name__}") from None
    if not params_tensor.dtype.startswith(("float", "int", "uint")):
        raise TypeError(f"params must be a real tensor of model parameters, got dtype {params_tensor.dtype}")
    if 0 in params_tensor.type.shape:
        raise ValueError("params must hold at least one model parameter")
    epsilon = check_epsilon(epsilon)
    records = _as_records(data)
    n = records[0].shape[0]
    if v is None:
        if n < 2:
            raise ValueError("the default v = 2·log n needs n ≥ 2 records; pass v")
        v = 2.0 * np.log(n)
    v = check_bound("v", v)
    if not np.isfinite(epsilon / (2.0 * v)):
        raise ValueError(f"v = {v!r} is too small for epsilon = {epsilon!r}: ε/(2v) overflows")
    if sigma is None:
        sigma = check_bound("the default sigma = 10⁻²·2v/epsilon (pass sigma)", 1e-2 * 2.0 * v / epsilon)
    sigma = check_bound("sigma", sigma)
    model = pm.modelcontext(model)
    if name in model.named_vars:
        raise ValueError(f"name {name!r} is already a variable of the model")
    shared = tuple(pytensor.shared(array, name=f"{name}_records_{i}") for i, array in enumerate(records))
    try:
        losses = _record_losses(loss, params, shared)
    except (TypeError, NotImplementedError) as error:
        raise ValueError(
            f"loss(params, *data) cannot be built from these params and data ({type(error).__name__})"
        ) from None
    _check_one_per_record(losses, n, model)
    scale = pytensor.shared(np.float64(1.0), name=f"{name}_record_scale")
    utility = sanitized_utility(loss, params, shared, v=v, sigma=sigma, scale=scale)

    with release_guard(accountant, MECHANISM, epsilon, neighbours=REPLACE_ONE, label=LABEL):
        with model:
            potential = pm.Potential(name, epsilon / (2.0 * v) * utility)
        potential.tag.minibatch_records = MinibatchRecords(shared, scale, n)
        potential.tag.draw_budget = DrawBudget(name, epsilon, accountant)
    return SanitizedLoss(name=name, epsilon=epsilon, v=v, sigma=sigma, n=n, potential=potential)
