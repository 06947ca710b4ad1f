"""Privacy budget accounting by basic sequential composition.

A :class:`PrivacyAccountant` holds a total budget (ε, δ) and a ledger of the releases made
against it.  Under basic sequential composition, releases with (εᵢ, δᵢ) on the same data
compose to (Σεᵢ, Σδᵢ)-DP (Dwork & Roth 2014, Thm 3.16).  Every release function of
pm_private takes ``accountant=`` and charges it through :meth:`PrivacyAccountant.charge`,
which checks the budget *before* any noise is drawn and writes the ledger entry only once the
release has succeeded, so a refused or failed release spends nothing.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime

__all__ = [
    "REPLACE_ONE",
    "BudgetExceededError",
    "LedgerEntry",
    "PrivacyAccountant",
    "charge",
]

#: Bounded DP: neighbouring data sets have the same size n and differ in one record.
REPLACE_ONE = "replace-one"

# Budget shares such as 0.6·ε + 0.35·ε + 0.05·ε do not add up to ε exactly in floating
# point; sums are compared with this relative slack (far below any meaningful ε).
_RELATIVE_SLACK = 1e-9


class BudgetExceededError(RuntimeError):
    """A release would exceed the accountant's remaining budget; nothing was released."""


@dataclass(frozen=True)
class LedgerEntry:
    """One release recorded by an accountant."""

    mechanism: str
    epsilon: float
    delta: float
    neighbours: str
    label: str
    time: datetime


def _check_budget_value(name: str, value: float, *, allow_zero: bool) -> float:
    value = float(value)
    if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        bound = "≥ 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be finite and {bound}, got {value!r}")
    return value


class PrivacyAccountant:
    """Total (ε, δ) budget with a ledger and basic sequential composition.

    Parameters
    ----------
    epsilon : float
        Total ε of the budget, > 0.
    delta : float, default 0
        Total δ of the budget, in [0, 1).

    Examples
    --------
    >>> acct = PrivacyAccountant(epsilon=1.0)
    >>> stats = release_suff_stats(X, y, epsilon=0.5, x_bound=1, y_bound=1,
    ...                            accountant=acct)             # doctest: +SKIP
    >>> acct.spent, acct.remaining                              # doctest: +SKIP
    ((0.5, 0.0), (0.5, 0.0))
    """

    def __init__(self, epsilon: float, delta: float = 0.0):
        self.epsilon = _check_budget_value("epsilon", epsilon, allow_zero=False)
        self.delta = _check_budget_value("delta", delta, allow_zero=True)
        if self.delta >= 1:
            raise ValueError(f"delta must be < 1, got {delta!r}")
        self._ledger: list[LedgerEntry] = []
        self._lock = threading.Lock()

    @property
    def ledger(self) -> tuple[LedgerEntry, ...]:
        """The releases made so far, oldest first."""
        return tuple(self._ledger)

    @property
    def spent(self) -> tuple[float, float]:
        """(ε, δ) spent so far: the sums over the ledger."""
        return (
            math.fsum(e.epsilon for e in self._ledger),
            math.fsum(e.delta for e in self._ledger),
        )

    @property
    def remaining(self) -> tuple[float, float]:
        """(ε, δ) still available, never negative."""
        eps, delta = self.spent
        return max(0.0, self.epsilon - eps), max(0.0, self.delta - delta)

    def _refusal(self, epsilon: float, delta: float) -> str | None:
        eps_spent, delta_spent = self.spent
        if eps_spent + epsilon > self.epsilon * (1 + _RELATIVE_SLACK):
            return (
                f"ε = {epsilon:g} requested but only {self.epsilon - eps_spent:g} of "
                f"{self.epsilon:g} remains"
            )
        if delta_spent + delta > self.delta * (1 + _RELATIVE_SLACK):
            return (
                f"δ = {delta:g} requested but only {self.delta - delta_spent:g} of "
                f"{self.delta:g} remains"
            )
        return None

    def check(self, epsilon: float, delta: float = 0.0) -> None:
        """Raise :class:`BudgetExceededError` if (ε, δ) does not fit in the remaining budget."""
        epsilon = _check_budget_value("epsilon", epsilon, allow_zero=False)
        delta = _check_budget_value("delta", delta, allow_zero=True)
        with self._lock:
            reason = self._refusal(epsilon, delta)
        if reason:
            raise BudgetExceededError(reason + "; nothing was released")

    def record(
        self,
        mechanism: str,
        epsilon: float,
        delta: float = 0.0,
        *,
        neighbours: str = REPLACE_ONE,
        label: str = "",
    ) -> LedgerEntry:
        """Check the budget and append one release to the ledger (atomically)."""
        epsilon = _check_budget_value("epsilon", epsilon, allow_zero=False)
        delta = _check_budget_value("delta", delta, allow_zero=True)
        with self._lock:
            reason = self._refusal(epsilon, delta)
            if reason:
                raise BudgetExceededError(reason + "; nothing was released")
            entry = LedgerEntry(
                mechanism=mechanism,
                epsilon=epsilon,
                delta=delta,
                neighbours=neighbours,
                label=label,
                time=datetime.now(UTC),
            )
            self._ledger.append(entry)
        return entry

    @contextmanager
    def charge(
        self,
        mechanism: str,
        epsilon: float,
        delta: float = 0.0,
        *,
        neighbours: str = REPLACE_ONE,
        label: str = "",
    ) -> Iterator[None]:
        """Guard one release: refuse on entry if over budget, record on successful exit.

        The body draws the noise and builds the result.  If it raises, nothing is recorded
        (nothing was returned, so nothing was released).
        """
        self.check(epsilon, delta)
        yield
        self.record(mechanism, epsilon, delta, neighbours=neighbours, label=label)

    def __repr__(self) -> str:
        eps, delta = self.spent
        return (
            f"PrivacyAccountant(ε {eps:g}/{self.epsilon:g}, δ {delta:g}/{self.delta:g}, "
            f"{len(self._ledger)} releases)"
        )


@contextmanager
def charge(
    accountant: PrivacyAccountant | None,
    mechanism: str,
    epsilon: float,
    delta: float = 0.0,
    *,
    neighbours: str = REPLACE_ONE,
    label: str = "",
) -> Iterator[None]:
    """:meth:`PrivacyAccountant.charge` that is a no-op when ``accountant`` is None."""
    if accountant is None:
        yield
        return
    with accountant.charge(mechanism, epsilon, delta, neighbours=neighbours, label=label):
        yield
