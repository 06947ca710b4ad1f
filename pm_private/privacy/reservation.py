"""Reservations of an accountant's budget and the noise they track: a :class:`Reservation` is (ε, δ)
held for one release until it is committed or released, and every draw of a
:class:`~pm_private.privacy.noise.NoiseSource` marks the reservations open in its thread or task
(:func:`note_noise_drawn`), so that a release that fails after its noise was drawn stays spent."""

from __future__ import annotations

import contextvars
from contextlib import contextmanager

from .budget import (
    RELEASED,
    RESERVED,
    SPENT,
)

__all__ = ["NoiseWatch", "Reservation", "ledger_note", "note_noise_drawn", "note_seeded_draw"]


# --------------------------------------------------------------------------------------------
# Noise tracking: the reservations open in the current thread/context.

_ACTIVE: contextvars.ContextVar[tuple[Reservation, ...]] = contextvars.ContextVar("pm_private_reservations", default=())
_NOTE: contextvars.ContextVar[str] = contextvars.ContextVar("pm_private_ledger_note", default="")
_WATCHES: contextvars.ContextVar[tuple[NoiseWatch, ...]] = contextvars.ContextVar("pm_private_watches", default=())


@contextmanager
def ledger_note(note: str):
    """Store ``note`` with every ledger entry settled by a reservation made inside the block.

    The release functions write their own ``label`` (sizes, bounds); this is the caller's word
    on who asked for the release and why, kept in the entry's ``note`` (before any note of the
    settlement itself, such as a failure after the noise was drawn).  Notes are public text in
    the ledger: never put a private value in one.

    Parameters
    ----------
    note : str
        Free text, e.g. ``"requested by the cardiology study, ticket 12"``.

    Yields
    ------
    None
        Reservations made in the block (in this thread or task) carry the note.

    Raises
    ------
    TypeError
        If ``note`` is not a str.

    Examples
    --------
    >>> from pm_private import PrivacyAccountant
    >>> acct = PrivacyAccountant(epsilon=1.0)
    >>> with ledger_note("asked by the analysis team"):
    ...     acct.record("Laplace", 0.5).note
    'asked by the analysis team'
    """
    if not isinstance(note, str):
        raise TypeError(f"note must be a str, got {type(note).__name__}")
    token = _NOTE.set(note)
    try:
        yield
    finally:
        _NOTE.reset(token)


def note_noise_drawn() -> None:
    """Mark every reservation open in the current context as having drawn noise.

    Called by :class:`~pm_private.privacy.noise.NoiseSource` on every draw (and by the OpenDP
    path of :func:`~pm_private.privacy.noise.laplace_mechanism`), so a release that fails after
    its noise was drawn stays spent.
    """
    for reservation in _ACTIVE.get():
        reservation._noise = True
    for watch in _WATCHES.get():
        watch.noise = True


def note_seeded_draw() -> None:
    """Mark the open :class:`NoiseWatch` blocks: the noise just drawn came from a seeded generator
    (reproducible, not private).  Called by :class:`~pm_private.privacy.noise.NoiseSource`."""
    for watch in _WATCHES.get():
        watch.seeded = True


class NoiseWatch:
    """What a block drew: ``noise`` (any draw noted by :func:`note_noise_drawn`) and ``seeded``
    (a draw from a seeded generator); :attr:`secure` when it drew private noise only.  Used as
    ``with NoiseWatch() as watch:`` (in this thread or task)."""

    __slots__ = ("noise", "seeded", "_token")

    def __init__(self):
        self.noise = self.seeded = False
        self._token = None

    @property
    def secure(self) -> bool:
        """True when the block drew noise, none of it seeded."""
        return self.noise and not self.seeded

    def __enter__(self) -> NoiseWatch:
        self._token = _WATCHES.set(_WATCHES.get() + (self,))
        return self

    def __exit__(self, *exc) -> bool:
        _WATCHES.reset(self._token)
        return False


class Reservation:
    """(ε, δ) reserved against an accountant for one release; counted from its creation.

    Obtained from :meth:`~pm_private.privacy.accountant.PrivacyAccountant.reserve` (then settle it with :meth:`commit` or
    :meth:`release`) or, preferably, as the value of ``with accountant.charge(...)`` /
    ``with release_guard(accountant, ...)``, which settles it on exit.

    Parameters
    ----------
    accountant : PrivacyAccountant
        The accountant whose ledger holds the reservation.
    entry_id : int
        The ledger entry's number.
    mechanism : str
        The mechanism's name.
    epsilon, delta : float
        The (ε, δ) reserved.
    """

    def __init__(self, accountant, entry_id: int, mechanism: str, epsilon: float, delta: float):
        self.accountant = accountant
        self.id = entry_id
        self.mechanism = mechanism
        self.epsilon = epsilon
        self.delta = delta
        self.status = RESERVED
        self._noise = False
        self._note = _NOTE.get()

    @property
    def has_drawn_noise(self) -> bool:
        """True once noise was drawn for this release (it can then only be committed)."""
        return self._noise

    def noise_drawn(self) -> None:
        """Declare that noise was drawn (needed only for noise not drawn through a NoiseSource
        in this thread); the reservation can then no longer be released."""
        self._noise = True

    def commit(self, note: str = "") -> None:
        """Mark the reservation spent (final).

        Parameters
        ----------
        note : str, default ""
            A note stored with the ledger entry.

        Raises
        ------
        RuntimeError
            If the reservation was already committed or released.
        """
        self._settle(SPENT, note)

    def release(self) -> None:
        """Return the reservation to the budget; refused once noise was drawn.

        Raises
        ------
        RuntimeError
            If noise was drawn for this release, or the reservation is already settled.
        """
        if self._noise:
            raise RuntimeError("noise was drawn for this release: its budget stays spent")
        self._settle(RELEASED, "")

    def _settle(self, status: str, note: str) -> None:
        if self.status != RESERVED:
            raise RuntimeError(f"this reservation is already {self.status}")
        note = "; ".join(part for part in (self._note, note) if part)
        self.accountant._store.settle(self.id, status, note)
        self.status = status

    def __repr__(self) -> str:
        return f"Reservation({self.mechanism!r}, ε={self.epsilon:g}, δ={self.delta:g}, {self.status})"


class _Charge:
    """Context manager of :meth:`~pm_private.privacy.accountant.PrivacyAccountant.charge`: reserve on entry, settle on exit."""

    def __init__(self, accountant, mechanism, epsilon, delta, neighbours, label, noise):
        self._args = (accountant, mechanism, epsilon, delta, neighbours, label, noise)
        self._reservation: Reservation | None = None
        self._token = None

    def __enter__(self) -> Reservation:
        accountant, mechanism, epsilon, delta, neighbours, label, noise = self._args
        reservation = accountant.reserve(mechanism, epsilon, delta, neighbours=neighbours, label=label, noise=noise)
        self._reservation = reservation
        self._token = _ACTIVE.set(_ACTIVE.get() + (reservation,))
        return reservation

    def __exit__(self, kind, error, traceback) -> bool:
        _ACTIVE.reset(self._token)
        reservation = self._reservation
        if reservation.status != RESERVED:  # settled by the body
            return False
        if kind is None:
            reservation.commit()
        elif reservation.has_drawn_noise:
            reservation.commit(note=f"failed after noise was drawn ({kind.__name__})")
        else:
            reservation.release()
        return False
