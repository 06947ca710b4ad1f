"""Privacy budget accounting, in memory or in a ledger file, by basic and tight composition.

A :class:`PrivacyAccountant` holds a total budget (ε, δ) and a ledger of the releases made
against it.  Under basic sequential composition, releases with (εᵢ, δᵢ) on the same data
compose to (Σεᵢ, Σδᵢ)-DP (Dwork & Roth 2014, Thm 3.16).  A release that states its noise
(``noise=`` of :meth:`PrivacyAccountant.charge`: Gaussian σ or Laplace b, and the sensitivity)
is also composed through privacy-loss distributions (Meiser & Mohammadi 2018; Koskela, Jälkö &
Honkela 2020), which for Gaussian noise is much tighter; a release is refused only when both
totals would exceed the budget (see :mod:`pm_private.privacy.budget`).

Reservation protocol
--------------------
Every release function of pm_private takes ``accountant=`` and goes through
:func:`~pm_private.privacy.release_guard` (a no-op without an accountant), a context manager that

1. **reserves** (ε, δ) in one atomic step: the budget check and the ledger entry (status
   ``"reserved"``) are one transaction, so concurrent releases can never overspend, and a
   refusal (:class:`BudgetExceededError`) happens before any noise is drawn;
2. runs the body, which draws the noise and builds the result;
3. **commits** the entry (status ``"spent"``) when the body returns, or when it raises *after*
   noise was drawn (a failure after the noise could otherwise be retried with fresh noise for
   free); it **releases** the entry (status ``"released"``, not counted) only when the body
   raises before any noise was drawn.

A reservation counts as spent from the moment it is made: a process that dies between the
reservation and the commit leaves a ``"reserved"`` entry that stays counted (crash-safe:
never unspent).  Noise drawn through :class:`~pm_private.privacy.noise.NoiseSource` in the
thread that holds the reservation is detected automatically; noise drawn elsewhere must be
declared with :meth:`Reservation.noise_drawn`.

Persistence
-----------
``PrivacyAccountant(epsilon, delta)`` keeps the ledger in memory, for one process: a copy made
by ``fork`` or by pickling (e.g. to a spawned process) shows the ledger but refuses to spend,
because the original and every copy would each spend the whole budget (``copy.copy`` and
``copy.deepcopy`` return the accountant itself).  ``PrivacyAccountant.open(path, epsilon=…, delta=…)`` keeps it in an SQLite
file (write-ahead log; each reservation is flushed to disk before the noise is drawn): reservations are made in ``BEGIN IMMEDIATE``
transactions, so threads and processes sharing the file share one budget; reopening the file
with a different total is refused; an open accountant can be pickled to a spawned process (it
reopens the file there) and survives ``fork`` (the connection is closed before the fork and
reopened on first use in each process).
"""

from __future__ import annotations

import os
from pathlib import Path

from .._engine.docstrings import parameters_from
from .budget import (
    REPLACE_ONE,
    RESERVED,
    Budget,
    BudgetExceededError,
    Cost,
    LedgerEntry,
    NoiseEvent,
    check_noise,
    check_total,
    noise_events,
    now,
    process_id,
    refusal,
    tight_epsilon,
)
from .ledger import DamagedLedgerError, MemoryStore, SQLiteStore
from .relations import as_replace_one
from .reservation import Reservation, _Charge, ledger_note, note_noise_drawn
from .validation import check_nonnegative, check_positive

__all__ = [
    "REPLACE_ONE",
    "Budget",
    "BudgetExceededError",
    "Cost",
    "DamagedLedgerError",
    "LedgerEntry",
    "NoiseEvent",
    "PrivacyAccountant",
    "Reservation",
    "check_accountant",
    "ledger_note",
    "note_noise_drawn",
]


def _reopen(path: str, epsilon: float, delta: float, durable: bool) -> PrivacyAccountant:
    return PrivacyAccountant.open(path, epsilon=epsilon, delta=delta, durable=durable)


def _snapshot(epsilon: float, delta: float, entries: tuple[LedgerEntry, ...]) -> PrivacyAccountant:
    copy = PrivacyAccountant(epsilon, delta)
    copy._store._entries = list(entries)
    copy._store._pid = None  # never the current process: spending is refused
    return copy


class PrivacyAccountant:
    """Total (ε, δ) budget with a ledger, composed by basic and by tight composition.

    :attr:`spent` is Σεᵢ, Σδᵢ over the entries that count (spent or reserved: basic composition,
    Dwork & Roth 2014); :meth:`tight_epsilon` composes the entries that stated their noise
    through privacy-loss distributions (Meiser & Mohammadi 2018).  A release is refused when it
    would take the basic total above the budget (up to a relative 10⁻⁹ for float rounding of
    budget shares) *and* the tight ε at the remaining δ above the remaining ε.  See the module
    docstring for the reservation protocol.

    Parameters
    ----------
    epsilon : float
        Total ε of the budget, > 0.
    delta : float, default 0
        Total δ of the budget, in [0, 1).

    Raises
    ------
    ValueError
        If ``epsilon`` or ``delta`` is not a valid total.

    Notes
    -----
    This constructor keeps the ledger in memory, for one process (copies made by ``fork`` or
    pickling refuse to spend); use :meth:`open` for a ledger file shared by threads and
    processes and kept across crashes.  The file must be on a local file system (SQLite's
    write-ahead log needs shared memory between the processes that open it).

    Examples
    --------
    >>> acct = PrivacyAccountant(epsilon=1.0)
    >>> stats = release_linear_stats(X, y, epsilon=0.5, x_bound=1, y_bound=1, noise="laplace",
    ...                              accountant=acct)             # doctest: +SKIP
    >>> acct.spent, acct.remaining                              # doctest: +SKIP
    (Budget(epsilon=0.5, delta=0.0), Budget(epsilon=0.5, delta=0.0))
    """

    def __init__(self, epsilon: float, delta: float = 0.0):
        self._store = MemoryStore(check_total(epsilon, delta))

    @classmethod
    def open(
        cls, path, epsilon: float | None = None, delta: float | None = None, *, durable: bool = True
    ) -> PrivacyAccountant:
        """Open (or create) a persistent ledger file: an SQLite database in WAL mode.

        Parameters
        ----------
        path : str or os.PathLike
            The ledger file.  Processes that open the same file share one budget.
        epsilon, delta : float, optional
            The total budget.  Required (``epsilon``; ``delta`` defaults to 0) to create the
            file; when the file exists they are optional and, if given, must equal the stored
            total, else ValueError (a budget cannot be re-declared).
        durable : bool, default True
            True: every reservation is flushed to disk (fsync) before its noise is drawn, so it
            survives a power loss or an operating-system crash (costs one fsync per release,
            about 2–8 ms on a virtual-machine disk).  False: a reservation survives the crash
            or kill of the process (the operating system still writes it) but not a power loss;
            the overhead is then about 0.1 ms.

        Returns
        -------
        PrivacyAccountant
            Spending through it reserves in the file before any noise is drawn
            (``BEGIN IMMEDIATE``), so a crash leaves the spend counted.

        Raises
        ------
        TypeError
            If ``path`` is not a path or ``durable`` not a bool.
        ValueError
            If a new file is created without ``epsilon``, or the given total differs from the
            stored one.
        DamagedLedgerError
            If the file is empty, truncated, corrupt, edited (its chained digests do not match),
            not a ledger, or of the earlier format 1 (the message says how to upgrade it); as
            :class:`~pm_private.privacy.ledger.LedgerRollbackError` if it is behind its witness (an
            earlier state of the ledger: see :func:`~pm_private.privacy.ledger.recover_ledger`), as
            ``pm_private.privacy.ledger.LedgerForkError`` if its history parted from the
            witnessed one (another copy of the ledger was written), as
            :class:`~pm_private.privacy.ledger.DamagedWitnessError` if its witness is damaged.
        PermissionError
            If the file or its folder cannot be written.
        FileNotFoundError
            If the folder of ``path`` does not exist.
        IsADirectoryError
            If ``path`` is a folder.

        Notes
        -----
        Every open checks the whole file (SQLite's integrity check and the chained digests of
        every record, see :mod:`pm_private.privacy.ledger`); times are kept to the UTC day.  The
        head (records, last digest, basic spent) is witnessed outside the file, in
        ``$PM_PRIVATE_STATE_DIR`` (default ``~/.local/state/pm_private/ledgers``), at creation and
        after every append; a missing witness is re-created with a ``LedgerWitnessWarning``.  A
        durable ledger is also flushed at each settlement, before its witness is written.
        """
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a str or path, got {type(path).__name__}")
        self = cls.__new__(cls)
        if not isinstance(durable, bool):
            raise TypeError(f"durable must be True or False, got {durable!r}")
        self._store = SQLiteStore(Path(path), epsilon, delta, durable)
        return self

    @property
    def epsilon(self) -> float:
        """Total ε."""
        return self._store.total[0]

    @property
    def delta(self) -> float:
        """Total δ."""
        return self._store.total[1]

    @property
    def path(self) -> Path | None:
        """The ledger file, or None for an in-memory accountant."""
        return self._store.path

    @property
    def history(self) -> tuple[LedgerEntry, ...]:
        """Every entry, oldest first, including released ones (failed before any noise)."""
        return tuple(self._store.entries())

    @property
    def ledger(self) -> tuple[LedgerEntry, ...]:
        """The entries that count (spent, or reserved by a release in progress or by a process
        that died), oldest first."""
        return tuple(e for e in self._store.entries() if e.counted)

    @property
    def spent(self) -> Budget:
        """``Budget(epsilon, delta)`` spent so far, reservations included (a named tuple: it
        unpacks and compares like ``(ε, δ)``)."""
        eps, delta = self._store.spent()
        return Budget(float(eps), float(delta))

    @property
    def remaining(self) -> Budget:
        """``Budget(epsilon, delta)`` still available, never negative."""
        eps, delta = self.spent
        return Budget(max(0.0, self.epsilon - eps), max(0.0, self.delta - delta))

    def tight_epsilon(self, delta: float | None = None) -> float:
        """ε of the releases so far at ``delta`` by the tighter of basic and PLD composition.

        Releases that stated their noise are composed through privacy-loss distributions
        (``dp_accounting``, pessimistic estimates), the others by basic composition, and the
        result is the smaller of that and the basic total Σεᵢ (valid when Σδᵢ ≤ ``delta``).

        Parameters
        ----------
        delta : float, optional
            The δ at which ε is stated; default the budget's total δ.

        Returns
        -------
        float
            The composed ε (0 without releases; inf when no composition reaches ``delta``).
        """
        delta = self.delta if delta is None else check_nonnegative("delta", delta)
        return tight_epsilon(self.ledger, delta)

    def person_epsilon(self, rows: int, delta: float | None = None) -> float:
        """ε at ``delta`` of the releases so far for a person with ``rows`` rows.

        Person-level entries count as they are; record-level entries are converted by group
        privacy over the person's ``rows`` rows (:func:`pm_private.privacy.person_entry`, which
        states when that holds), then composed by the tighter of basic and PLD composition.

        Parameters
        ----------
        rows : int
            m ≥ 1, the most rows a person has (a public declaration).
        delta : float, optional
            The δ at which ε is stated; default the budget's total δ.

        Returns
        -------
        float
            The composed ε for a person (inf when no composition reaches ``delta``).

        Examples
        --------
        >>> from pm_private import PrivacyAccountant
        >>> accountant = PrivacyAccountant(5.0)
        >>> entry = accountant.record("a count", 0.5)
        >>> accountant.person_epsilon(3)
        1.5
        """
        from .units import person_epsilon

        return person_epsilon(self.ledger, rows, self.delta if delta is None else delta)

    def cost(self, epsilon: float, delta: float = 0.0, *, noise: tuple[NoiseEvent, ...] = ()) -> Cost:
        """Dry run: the basic and tight ε the ledger would hold after one more release.

        Nothing is reserved or recorded; the tight ε is stated at the budget's total δ.  Stated
        noise is checked as by :meth:`reserve`.

        Parameters
        ----------
        epsilon : float
            The ε the release would charge, > 0.
        delta : float, default 0.0
            The δ it would charge, ≥ 0.
        noise : tuple of NoiseEvent, default ()
            Its noise draws (empty: composed by basic composition); they must give (ε, δ).

        Returns
        -------
        Cost
            ``Cost(basic, tight)``: Σεᵢ by basic composition and ε by the tighter composition,
            the new release included; the release fits when either is at most the total ε (with
            Σδᵢ within the total δ for the first).

        Raises
        ------
        ValueError
            If ``epsilon`` or ``delta`` is not valid, or ``noise`` does not give (ε, δ).
        """
        entry = LedgerEntry(
            "dry run",
            check_positive("epsilon", epsilon),
            check_nonnegative("delta", delta),
            REPLACE_ONE,
            "",
            now(),
            noise=noise_events(noise),
        )
        check_noise(entry.mechanism, entry.epsilon, entry.delta, entry.noise)
        entries = [*self.ledger, entry]
        return Cost(float(sum(e.epsilon for e in entries)), tight_epsilon(entries, self.delta))

    def check(self, epsilon: float, delta: float = 0.0) -> None:
        """Raise :class:`BudgetExceededError` if (ε, δ) does not fit in the remaining budget now.

        Advisory only: another thread or process may spend in between; releases use
        :meth:`reserve` (through :meth:`charge`), which checks and records atomically.

        Parameters
        ----------
        epsilon : float
            The ε a release would charge, > 0.
        delta : float, default 0.0
            The δ a release would charge, ≥ 0.

        Raises
        ------
        BudgetExceededError
            If (ε, δ) does not fit in the remaining budget.
        ValueError
            If ``epsilon`` or ``delta`` is not a valid budget value.
        """
        epsilon = check_positive("epsilon", epsilon)
        delta = check_nonnegative("delta", delta)
        entry = LedgerEntry("check", epsilon, delta, REPLACE_ONE, "", now())
        reason = refusal(self._store.total, self.ledger, entry)
        if reason:
            raise BudgetExceededError(reason + "; nothing was released")

    def reserve(
        self,
        mechanism: str,
        epsilon: float,
        delta: float = 0.0,
        *,
        neighbours: str = REPLACE_ONE,
        label: str = "",
        noise: tuple[NoiseEvent, ...] = (),
    ) -> Reservation:
        """Check the budget and record a ``"reserved"`` entry in one atomic step.

        Raises :class:`BudgetExceededError` (and records nothing) if (ε, δ) does not fit.  The
        reservation counts as spent until it is released; prefer :meth:`charge`.

        Parameters
        ----------
        mechanism : str
            The mechanism's name, written to the ledger entry.
        epsilon : float
            The ε to charge, > 0.
        delta : float, default 0.0
            The δ to charge, ≥ 0.
        neighbours : str, default REPLACE_ONE
            The neighbour relation of the release's guarantee: ``"replace-one"`` or
            ``"add-remove"``, each optionally followed by ``" person"``.  An add/remove release is
            charged as the replace-one release it also is (:mod:`pm_private.privacy.relations`).
        label : str, default ""
            A free-text label for the ledger entry.
        noise : tuple of NoiseEvent, default ()
            The release's noise draws (Gaussian σ or Laplace b, and sensitivity), stored with the
            entry for tight composition; empty: the entry is composed by basic composition.
            Verified, not trusted: composed alone they must give (ε, δ) (see Raises).

        Returns
        -------
        Reservation
            The open reservation; settle it with :meth:`Reservation.commit` or
            :meth:`Reservation.release`.

        Raises
        ------
        BudgetExceededError
            If (ε, δ) does not fit in the remaining budget (nothing is recorded).
        ValueError
            If ``epsilon`` or ``delta`` is not a valid budget value, or ``noise`` implies another
            ε at ``delta`` than ``epsilon`` (Laplace: Σ Δ/b; otherwise the privacy-loss
            distribution of the tight totals; relative tolerance 10⁻³ plus 10⁻⁶), or
            ``neighbours`` names no relation: nothing is recorded.
        LedgerForkError
            For a ledger file, if another copy of the same ledger has recorded since this file
            was opened (two copies in use at once): nothing is recorded.
        """
        epsilon = check_positive("epsilon", epsilon)
        delta = check_nonnegative("delta", delta)
        noise = noise_events(noise)
        check_noise(str(mechanism), epsilon, delta, noise)
        entry = LedgerEntry(
            mechanism=str(mechanism),
            epsilon=epsilon,
            delta=delta,
            neighbours=str(neighbours),
            label=str(label),
            time=now(),
            status=RESERVED,
            process=process_id(),
            noise=noise,
        )
        entry = as_replace_one(entry)
        return Reservation(self, self._store.reserve(entry), entry.mechanism, entry.epsilon, entry.delta)

    @parameters_from(reserve)
    def record(
        self,
        mechanism: str,
        epsilon: float,
        delta: float = 0.0,
        *,
        neighbours: str = REPLACE_ONE,
        label: str = "",
        noise: tuple[NoiseEvent, ...] = (),
    ) -> LedgerEntry:
        """Check the budget and record a spent release (made outside pm_private) atomically.

        Parameters
        ----------
        noise : tuple of NoiseEvent, default ()
            The release's noise draws (Gaussian σ or Laplace b, and sensitivity), stored with the
            entry for tight composition; empty: the entry is composed by basic composition.

        Returns
        -------
        LedgerEntry
            The ledger entry written (status ``"spent"``).

        Raises
        ------
        BudgetExceededError
            If (ε, δ) does not fit in the remaining budget (nothing is recorded).
        ValueError
            If ``noise`` does not give (ε, δ) (see :meth:`reserve`; nothing is recorded).
        """
        reservation = self.reserve(mechanism, epsilon, delta, neighbours=neighbours, label=label, noise=noise)
        reservation.commit()
        return next(e for e in reversed(self._store.entries()) if e.id == reservation.id)

    @parameters_from(record)
    def charge(
        self,
        mechanism: str,
        epsilon: float,
        delta: float = 0.0,
        *,
        neighbours: str = REPLACE_ONE,
        label: str = "",
        noise: tuple[NoiseEvent, ...] = (),
    ) -> _Charge:
        """Context manager guarding one release: reserve on entry, settle on exit.

        ``with acct.charge(...) as reservation:`` reserves (ε, δ) (or raises
        :class:`BudgetExceededError` before the body runs), then commits when the body returns
        or raises after noise was drawn, and releases only when it raises before any noise.

        Returns
        -------
        contextmanager
            A context manager whose value is the :class:`Reservation`.

        Raises
        ------
        BudgetExceededError
            On entering the ``with`` block, if (ε, δ) does not fit in the remaining budget.
        ValueError
            If ``noise`` does not give (ε, δ) (see :meth:`reserve`; nothing is recorded).
        """
        noise = noise_events(noise)
        check_noise(str(mechanism), check_positive("epsilon", epsilon), check_nonnegative("delta", delta), noise)
        return _Charge(self, mechanism, epsilon, delta, neighbours, label, noise)

    def close(self) -> None:
        """Close the ledger file's connection (reopened on next use); no-op in memory."""
        self._store.close()

    def __enter__(self) -> PrivacyAccountant:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # An accountant is one budget: copies would each spend it in full.
    def __copy__(self) -> PrivacyAccountant:
        return self

    def __deepcopy__(self, memo) -> PrivacyAccountant:
        return self

    def __reduce__(self):
        if self.path is None:  # a read-only snapshot: it shows the ledger, refuses to spend
            return _snapshot, (self.epsilon, self.delta, self.history)
        return _reopen, (str(self.path.resolve()), self.epsilon, self.delta, self._store.durable)

    def __repr__(self) -> str:
        eps, delta = self.spent
        where = "" if self.path is None else f"{str(self.path)!r}, "
        return (
            f"PrivacyAccountant({where}ε {eps:g}/{self.epsilon:g}, δ {delta:g}/{self.delta:g}, "
            f"{len(self.ledger)} releases)"
        )


def check_accountant(accountant) -> PrivacyAccountant | None:
    """``accountant`` itself if it is None or a :class:`PrivacyAccountant`, else TypeError.

    Parameters
    ----------
    accountant : PrivacyAccountant or None
        The ``accountant`` argument of a release function.

    Returns
    -------
    PrivacyAccountant or None
        ``accountant`` unchanged.

    Raises
    ------
    TypeError
        If ``accountant`` is neither None nor a :class:`PrivacyAccountant`.
    """
    if accountant is not None and not isinstance(accountant, PrivacyAccountant):
        raise TypeError(f"accountant must be a PrivacyAccountant or None, got {type(accountant).__name__}")
    return accountant
