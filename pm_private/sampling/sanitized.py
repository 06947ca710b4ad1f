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
approximately private, and releasing m draws costs m·ε by composition.  The accountant is
charged ε once, with the label ``"approximate (MCMC)"``, when the term is built.

The records are held in PyTensor shared variables that are *not* registered as ``pm.Data``, so
they never reach the ``DataTree`` that ``pm.sample`` returns.  A multiplier of the record sum
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

from ..privacy.accounting import REPLACE_ONE, PrivacyAccountant, charge
from ..privacy.validation import check_epsilon, check_positive

__all__ = ["SanitizedLoss", "logistic_loss", "sanitizer", "sanitized_loss", "sanitized_utility"]

MECHANISM = "sanitized-loss exponential mechanism (Nguyên & Hui 2017a, Alg. 3)"
LABEL = "approximate (MCMC)"


class MinibatchRecords(NamedTuple):
    """What a minibatching step method needs from a sanitized term: the record arrays (leading
    axis n), the shared multiplier of the record sum (1 in the model) and n."""

    records: tuple
    scale: pytensor.compile.SharedVariable
    n: int


@dataclass(frozen=True)
class SanitizedLoss:
    """A sanitized-loss term added to a model: its parameters and the potential variable.

    ``epsilon`` is what the accountant was charged; it is an exact ε-DP guarantee only for one
    exact draw from the model (see the module docstring).  No records are kept here.
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


def sanitizer(x, v):
    """C_v(x) = v·tanh(x/v): ≈ x for x ≪ v, < v for all x."""
    return v * pt.tanh(x / v)


def logistic_loss(f, X, y):
    """ℓ_LR(yᵢ·xᵢᵀf) = log(1 + exp(−yᵢ·xᵢᵀf)) per record, labels yᵢ ∈ {−1, +1} (Nguyên & Hui 2017a, Eq. 3)."""
    return pt.softplus(-pt.as_tensor(y) * (pt.as_tensor(X) @ f))


def _squared_norm(params) -> pt.TensorVariable:
    params = params if isinstance(params, Sequence) else [params]
    return pt.add(*[pt.sum(pt.square(p)) for p in params])


def _record_terms(loss: Callable, params, records, v):
    """C_v(max(ℓ, 0)) per record, with a run-time check that ℓ has one entry per record."""
    losses = pt.as_tensor(loss(params, *records))
    if losses.ndim != 1:
        raise ValueError(
            f"loss must return one value per record (a vector), got a {losses.ndim}-d tensor"
        )
    losses = Assert("loss must return one value per record")(
        losses, pt.eq(losses.shape[0], records[0].shape[0])
    )
    return sanitizer(pt.maximum(losses, 0.0), v)


def sanitized_utility(loss: Callable, params, records, *, v, sigma, scale=1.0):
    """U(f; D) = −(σ/2)‖f‖² − scale·Σᵢ C_v(ℓ(f; dᵢ)) as a PyTensor expression."""
    terms = _record_terms(loss, params, records, v)
    return -0.5 * sigma * _squared_norm(params) - scale * pt.sum(terms)


def _as_records(data) -> tuple[np.ndarray, ...]:
    if isinstance(data, np.ndarray) or not isinstance(data, Sequence):
        data = (data,)
    records = tuple(np.asarray(d) for d in data)
    if not records:
        raise ValueError("data must hold at least one array of records")
    n = records[0].shape[0] if records[0].ndim else 0
    for i, array in enumerate(records):
        if array.ndim == 0 or array.shape[0] != n:
            raise ValueError(
                f"every data array needs the records on its first axis with the same n; "
                f"array 0 has shape {records[0].shape}, array {i} has shape {array.shape}"
            )
    if n < 1:
        raise ValueError("data must hold at least one record")
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
        Charged ε with label ``"approximate (MCMC)"`` (refused before anything is built if over
        budget).

    Examples
    --------
    >>> with pm.Model():                                             # doctest: +SKIP
    ...     f = pm.Flat("f", shape=X.shape[1])
    ...     term = sanitized_loss("U", logistic_loss, f, (X, y), epsilon=1.0)
    ...     idata = pm.sample(step=PSGLD(batch_size=200), chains=1)
    """
    epsilon = check_epsilon(epsilon)
    records = _as_records(data)
    n = records[0].shape[0]
    if v is None:
        if n < 2:
            raise ValueError("the default v = 2·log n needs n ≥ 2 records; pass v")
        v = 2.0 * np.log(n)
    v = check_positive("v", v)
    sigma = check_positive("sigma", 1e-2 * 2.0 * v / epsilon if sigma is None else sigma)
    model = pm.modelcontext(model)

    with charge(accountant, MECHANISM, epsilon, neighbours=REPLACE_ONE, label=LABEL):
        shared = tuple(
            pytensor.shared(array, name=f"{name}_records_{i}") for i, array in enumerate(records)
        )
        scale = pytensor.shared(np.float64(1.0), name=f"{name}_record_scale")
        utility = sanitized_utility(loss, params, shared, v=v, sigma=sigma, scale=scale)
        with model:
            potential = pm.Potential(name, epsilon / (2.0 * v) * utility)
        potential.tag.minibatch_records = MinibatchRecords(shared, scale, n)
    return SanitizedLoss(name=name, epsilon=epsilon, v=v, sigma=sigma, n=n, potential=potential)
