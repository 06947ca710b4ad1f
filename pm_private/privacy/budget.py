"""The budget's rules: the neighbour relation, ledger entries, and when a release is refused.

Shared by the accountant (:mod:`.accountant`) and the ledger stores (:mod:`.ledger`), which apply
``refusal()`` inside their own atomic step.  Basic sequential composition: releases with
(εᵢ, δᵢ) on the same data compose to (Σεᵢ, Σδᵢ)-DP (Dwork & Roth 2014, Thm 3.16).
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from datetime import UTC, datetime

from .validation import check_nonnegative, check_positive

__all__ = ["REPLACE_ONE", "BudgetExceededError", "LedgerEntry"]

#: Bounded DP: neighbouring data sets have the same size n and differ in one record.
REPLACE_ONE = "replace-one"

RESERVED, SPENT, RELEASED = "reserved", "spent", "released"

# Budget shares such as 0.6·ε + 0.35·ε + 0.05·ε do not add up to ε exactly in floating
# point; sums are compared with this relative slack (far below any meaningful ε).
RELATIVE_SLACK = 1e-9


class BudgetExceededError(RuntimeError):
    """A release would exceed the accountant's remaining budget; nothing was released."""


@dataclass(frozen=True)
class LedgerEntry:
    """One release recorded by an accountant.

    ``status`` is ``"spent"`` (committed), ``"reserved"`` (in progress, or left by a process
    that died: counted as spent) or ``"released"`` (failed before any noise was drawn: not
    counted).  ``process`` is ``"pid@host"`` of the process that made the reservation.

    Parameters
    ----------
    mechanism : str
        The mechanism's name, as its release states it.
    epsilon, delta : float
        The (ε, δ) charged.
    neighbours : str
        The neighbour relation of the guarantee (e.g. :data:`REPLACE_ONE`).
    label : str
        A free-text label given by the caller.
    time : datetime.datetime
        When the entry was written (UTC).
    status : str, default "spent"
        ``"spent"``, ``"reserved"`` or ``"released"``.
    note : str, default ""
        A note added when the entry was settled.
    process : str, default ""
        ``"pid@host"`` of the process that made the reservation.
    id : int, default 0
        The entry's number in its ledger.
    """

    mechanism: str
    epsilon: float
    delta: float
    neighbours: str
    label: str
    time: datetime
    status: str = SPENT
    note: str = ""
    process: str = ""
    id: int = 0

    @property
    def counted(self) -> bool:
        """True when the entry counts against the budget (spent or reserved)."""
        return self.status != RELEASED


def check_total(epsilon, delta) -> tuple[float, float]:
    epsilon = check_positive("epsilon", epsilon)
    delta = check_nonnegative("delta", delta)
    if delta >= 1:
        raise ValueError(f"delta must be < 1, got {delta!r}")
    return epsilon, delta


def refusal(total: tuple[float, float], spent: tuple[float, float], epsilon: float, delta: float) -> str | None:
    if spent[0] + epsilon > total[0] * (1 + RELATIVE_SLACK):
        return f"ε = {epsilon:g} requested but only {max(0.0, total[0] - spent[0]):g} of {total[0]:g} remains"
    if spent[1] + delta > total[1] * (1 + RELATIVE_SLACK):
        return f"δ = {delta:g} requested but only {max(0.0, total[1] - spent[1]):g} of {total[1]:g} remains"
    return None


def now() -> datetime:
    return datetime.now(UTC)


_PROCESS: tuple[int, str] = (0, "")


def process_id() -> str:
    global _PROCESS
    pid = os.getpid()
    if _PROCESS[0] != pid:
        _PROCESS = (pid, f"{pid}@{socket.gethostname()}")
    return _PROCESS[1]
