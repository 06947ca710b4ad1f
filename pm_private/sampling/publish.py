"""What may leave the data holder after sampling a private posterior: the parameter draws only, paid for.

A sampler's output holds more than the draws of the parameters, and the rest is a function of
the private records: ``sample_stats`` (NUTS stores the model's log-density at every draw, which
for the sanitized-loss mechanism of Nguyên & Hui (2017a) is ε/(2v)·U(f; D), so a few draws and
the other records determine a record exactly; step sizes, tree depths, energies and timings
depend on the data too), ``log_likelihood``, ``observed_data`` and ``constant_data``,
deterministics (which may be functions of the data), the tuning draws, and the attributes
(``sampling_time`` is a timing side channel).  :func:`publishable` keeps the posterior draws of
the model's free random variables and nothing else.

Draws of a sanitized-loss term cost ε each (one exact draw is ε-DP; m draws compose to m·ε).
The term's accountant paid for one draw when the term was built; :func:`publishable` charges
the rest before it returns anything, and refuses when no accountant is given for it.

A run whose randomness is known can be replayed: with the seed, the draws are a deterministic
function of the data, and matching them against candidate data sets identifies the true one.
``pm.sample`` with a ``random_seed`` is such a run.  Without one, its chains' noise comes from
fresh operating-system entropy, but it reduces the seeds of the initial points (and all the
seeds of external NUTS samplers) to 30 bits, and nothing in its output tells the two apart.
:func:`secure_sample` samples from a generator seeded with 256 bits of the operating system's
secure generator that are never stored (:func:`pm_private.privacy.noise.secure_generator`),
and seals its result: an HMAC-SHA256 over each posterior variable's name, dtype, shape and
bytes, under a key drawn from ``os.urandom`` when this module is imported.  The key is never
written to a file, put in a result or returned by a function; it lives only in the memory of
this process, held by the closures that seal and verify (no module attribute names it or the
sealing function).  :func:`publishable` refuses draws of a sanitized term whose seal does not
verify unless told they are not private (``private=False``), which it then writes on the
result.  What the seal protects against: an attribute set by hand, a seal copied onto other
draws, draws edited after sampling, and a run saved and reloaded, or a file written or edited by
another process, which does not hold the key (publish in the sampling process).  What it cannot
protect against: code running in this process, which can read any of its memory (Python hides
nothing from code in the same interpreter); such code is trusted as the caller is.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import threading

import numpy as np
import xarray as xr

from ..privacy.accountant import PrivacyAccountant, check_accountant
from ..privacy.budget import REPLACE_ONE
from ..privacy.noise import secure_generator
from ..privacy.release import release_guard
from ..privacy.validation import check_bool
from .sanitized import LABEL, MECHANISM

__all__ = ["publishable", "secure_sample"]

#: Attribute of the ``posterior`` group by which :func:`secure_sample` marks its runs (for people:
#: :func:`publishable` trusts only the seal, :data:`SEAL_ATTR`).
RANDOM_SOURCE_ATTR = "pm_private_random_source"
#: Its value: the chains were seeded from the operating system's secure generator.
SECURE_SOURCE = "os.urandom"
#: Attribute of the ``posterior`` group holding the seal of :func:`secure_sample` (JSON: variable -> HMAC).
SEAL_ATTR = "pm_private_seal"

_PUBLISHING = threading.Lock()


def _seals():
    """(seal, verify): two closures sharing a per-process key drawn here from ``os.urandom``.

    The key is a local of this call, never written, put in a result or returned, and no module
    attribute names it or ``seal``: only :func:`secure_sample` holds ``seal``, and the module
    ``verify`` (which answers yes or no and cannot make a seal).  Code running in this process
    can still reach both through the functions' closures; see the module docstring.
    """
    key = os.urandom(32)

    def tag(name: str, values) -> str:
        array = np.ascontiguousarray(values)
        mac = hmac.new(key, digestmod=hashlib.sha256)
        mac.update(json.dumps([str(name), array.dtype.str, list(array.shape)]).encode())
        mac.update(array.tobytes())
        return mac.hexdigest()

    def seal(posterior) -> None:
        tags = {str(name): tag(name, posterior[name].values) for name in posterior.data_vars}
        posterior.attrs[RANDOM_SOURCE_ATTR] = SECURE_SOURCE
        posterior.attrs[SEAL_ATTR] = json.dumps(tags, sort_keys=True)

    def verify(posterior, names) -> bool:
        try:
            tags = json.loads(posterior.attrs.get(SEAL_ATTR, "{}"))
        except (TypeError, ValueError):
            return False
        if not isinstance(tags, dict) or not names:
            return False
        return all(
            isinstance(tags.get(str(name)), str)
            and hmac.compare_digest(tags[str(name)], tag(name, posterior[name].values))
            for name in names
        )

    return seal, verify


def _secure_sampler(seal):
    """:func:`secure_sample`, holding ``seal`` in its closure."""

    def secure_sample(*args, **kwargs) -> xr.DataTree:
        """``pm.sample`` with its randomness from the operating system's secure generator.

        All arguments are passed to ``pm.sample`` except ``random_seed``, which is refused: the run
        is seeded with :func:`pm_private.privacy.noise.secure_generator` (256 bits from
        ``os.urandom``, never stored), from which PyMC spawns one generator per chain for the
        initial points and the step methods' noise (NUTS momenta, :class:`~pm_private.sampling.PSGLD`
        minibatches and Langevin noise).  The ``posterior`` group is marked with the attribute
        ``pm_private_random_source = "os.urandom"`` and sealed (an HMAC of the draws under a key
        held in this process's memory only, see the module docstring), which :func:`publishable`
        requires of the draws of a sanitized-loss term.  The draws stay approximate (MCMC) and
        their noise floating point; only the seed is secure.

        Parameters
        ----------
        *args, **kwargs
            Passed to ``pm.sample``; ``random_seed`` is refused, ``nuts_sampler`` must be ``"pymc"``
            (external samplers reduce the seed to 30 bits) and ``return_inferencedata`` True.

        Returns
        -------
        xarray.DataTree
            The output of ``pm.sample``, marked; publish it only through :func:`publishable`.

        Raises
        ------
        TypeError
            If ``random_seed`` is given.
        ValueError
            If ``nuts_sampler`` is not ``"pymc"`` or ``return_inferencedata`` is False.

        Examples
        --------
        >>> with model:                                                 # doctest: +SKIP
        ...     idata = secure_sample(draws=200, step=PSGLD(batch_size=50), chains=2)
        """
        import pymc as pm

        if "random_seed" in kwargs:
            raise TypeError(
                "secure_sample seeds the run from os.urandom and refuses random_seed: a run with a "
                "known seed can be replayed against candidate data sets; for a reproducible run that "
                "is not private use pm.sample(random_seed=...) and publishable(..., private=False)"
            )
        if kwargs.setdefault("nuts_sampler", "pymc") != "pymc":
            raise ValueError(
                f"nuts_sampler must be 'pymc' (external samplers get 30-bit seeds), got {kwargs['nuts_sampler']!r}"
            )
        if kwargs.setdefault("return_inferencedata", True) is not True:
            raise ValueError(
                "return_inferencedata must be True: the mark of the secure source is an attribute of the result"
            )
        idata = pm.sample(*args, random_seed=secure_generator(), **kwargs)
        seal(idata["posterior"])
        return idata

    secure_sample.__qualname__ = "secure_sample"
    return secure_sample


_seal, _sealed = _seals()
secure_sample = _secure_sampler(_seal)
del _seal  # held by secure_sample alone


def _same_ledger(a: PrivacyAccountant, b: PrivacyAccountant) -> bool:
    return a is b or (a.path is not None and b.path is not None and a.path.resolve() == b.path.resolve())


def _draw_count(array: xr.DataArray) -> int:
    return int(array.sizes.get("chain", 1) * array.sizes.get("draw", 1))


def publishable(
    idata, var_names=None, *, model=None, accountant: PrivacyAccountant | None = None, private: bool = True
) -> xr.DataTree:
    """A ``DataTree`` with only the posterior draws of the model's free random variables, paid for.

    The draws of a private posterior (e.g. the sanitized-loss mechanism, Nguyên & Hui 2017a)
    are its output; everything else ``pm.sample`` returns may be a function of the records (see
    the module docstring).  The result has one group, ``posterior``, with the variables'
    (chain, draw, …) arrays and their coordinates.

    For a model with sanitized-loss terms (:func:`~pm_private.sampling.sanitized_loss`), m =
    chains × draws published draws cost m·ε per term, and:

    * **Charged.**  Each term prepaid one draw when it was built with an accountant.  The rest,
      Σ (m − prepaid)⁺·ε, is charged to ``accountant`` (which must be the accountant the terms
      were charged to) in one ledger entry labelled ``"approximate (MCMC)"``, before anything
      is returned; an over-budget publication raises and returns nothing.  Publishing the same
      draws again charges again.  A term built without an accountant is charged its m·ε to
      ``accountant`` when one is given, and nothing otherwise.
    * **Secure source.**  The draws must come from :func:`secure_sample`, unchanged, in this
      process (its seal must verify); draws from ``pm.sample`` (seeded or not), draws marked
      by hand or edited are refused unless ``private=False``.
    * **Marked.**  The ``posterior`` group's attributes state ``epsilon`` (m·Σε), ``draws`` (m),
      ``private``, ``mechanism``, ``label`` and ``neighbours``.

    Models without such terms get the draws and no attributes, with nothing charged.

    Parameters
    ----------
    idata : xarray.DataTree
        The output of :func:`secure_sample` or ``pm.sample`` (anything with a ``posterior``
        group).
    var_names : sequence of str, optional
        The free random variables to keep (default: all of the model's).  Deterministics,
        potentials and observed variables are refused.  Publishing some variables costs as
        much as publishing all of them.
    model : pm.Model, optional
        The sampled model (default: the model on the context stack); it tells which posterior
        variables are free random variables, and holds the sanitized terms.
    accountant : PrivacyAccountant, optional
        Charged for the draws beyond those prepaid; required when there are any and a term was
        charged to an accountant.
    private : bool, default True
        True: refuse draws of a sanitized term that :func:`secure_sample` did not make.  False:
        publish them marked ``private=False`` (reproducible runs for tests and simulations; such
        draws carry no guarantee).  Either way the draws are charged.

    Returns
    -------
    xarray.DataTree
        ``posterior`` only.

    Raises
    ------
    ValueError
        Before anything is charged: ``var_names`` names anything but free random variables;
        ``idata`` has no posterior group or lacks draws of a variable; the draws of a sanitized
        term were not made by :func:`secure_sample` and ``private`` is True; ``accountant`` is
        missing where a charge is due, or is not the one the terms were charged to.
    TypeError
        If ``accountant`` is not a PrivacyAccountant.
    BudgetExceededError
        If the accountant cannot afford the draws (nothing is returned).

    Notes
    -----
    Privacy: the draws are post-processing of the sampler's output; for a sanitized-loss term
    with ε per draw, m exact draws are m·ε-DP under replace-one neighbours by sequential
    composition (Dwork & Roth 2014, Thm 3.16).  Approximate (MCMC): a chain's draws only
    approximate exact draws (see :func:`~pm_private.sampling.sanitized_loss`).  Public: m and
    the variables' shapes and coordinates.

    Examples
    --------
    >>> with model:                                                 # doctest: +SKIP
    ...     idata = secure_sample(draws=100, step=PSGLD(batch_size=200), chains=2)
    >>> release = publishable(idata, model=model, accountant=accountant)  # doctest: +SKIP
    >>> release["posterior"].attrs["epsilon"]  # 200 draws at ε = 1     # doctest: +SKIP
    200.0
    """
    import pymc as pm

    model = pm.modelcontext(model)
    accountant = check_accountant(accountant)
    private = check_bool("private", private)
    free = [rv.name for rv in model.free_RVs]
    if var_names is None:
        names = free
    else:
        if isinstance(var_names, str):
            var_names = [var_names]
        names = list(var_names)
        other = [name for name in names if name not in free]
        if other:
            raise ValueError(f"var_names may only name free random variables of the model ({free}); refused: {other}")
    try:
        posterior = idata["posterior"]
    except (KeyError, TypeError):
        raise ValueError("idata must be the output of pm.sample, with a posterior group") from None
    missing = [name for name in names if name not in posterior.data_vars]
    if missing:
        raise ValueError(f"idata's posterior has no draws of {missing}")
    draws = xr.Dataset({name: xr.Variable(posterior[name].dims, posterior[name].values) for name in names})
    draws = draws.assign_coords({dim: posterior[dim].values for dim in draws.dims if dim in posterior.coords})

    budgets = [p.tag.draw_budget for p in model.potentials if hasattr(p.tag, "draw_budget")]
    if not budgets:
        return xr.DataTree.from_dict({"posterior": draws})

    detached = [budget.name for budget in budgets if budget.detached]
    if detached:
        raise ValueError(
            f"the sanitized terms {detached} are copies (pickled from the process that built them); "
            "publish their draws in that process, with the model that holds the originals"
        )
    secure = _sealed(posterior, names)
    if private and not secure:
        raise ValueError(
            "these draws were not sampled by pm_private.sampling.secure_sample in this process, or were "
            "changed since (their seal does not verify): a run of pm.sample "
            "may have a known random_seed, and such a run can be replayed against candidate data "
            "sets, so its draws are not private; sample with secure_sample, or pass private=False "
            "to publish them marked not private"
        )
    m = max((_draw_count(posterior[name]) for name in names), default=0)
    for budget in budgets:
        if budget.accountant is not None and accountant is not None and not _same_ledger(budget.accountant, accountant):
            raise ValueError(f"accountant must be the accountant the sanitized term {budget.name!r} was charged to")
    with _PUBLISHING:  # the prepaid draws are used once, also by concurrent publications
        cost = sum(budget.cost(m) for budget in budgets)
        unpaid = [budget.name for budget in budgets if budget.cost(m) > 0 and budget.accountant is not None]
        if unpaid and accountant is None:
            raise ValueError(
                f"publishing {m} draws costs {m}·ε per sanitized term, and {cost:g} of it is not "
                f"paid for (the terms {unpaid} prepaid one draw when they were built): pass "
                "accountant=, the accountant they were charged to"
            )
        if cost > 0 and accountant is not None:
            with release_guard(accountant, MECHANISM, cost, neighbours=REPLACE_ONE, label=LABEL) as reservation:
                reservation.commit(note=f"{m} draws published")
        for budget in budgets:
            budget.prepaid = max(0, budget.prepaid - m)
    draws.attrs = {
        "mechanism": MECHANISM,
        "label": LABEL,
        "neighbours": REPLACE_ONE,
        "epsilon": float(m * sum(budget.epsilon for budget in budgets)),
        "draws": m,
        "private": bool(private and secure),
    }
    return xr.DataTree.from_dict({"posterior": draws})
