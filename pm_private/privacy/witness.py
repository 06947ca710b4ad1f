"""The witness of a ledger file's head, kept outside the file (used by the ledger modules only).

A ledger's hash chain shows that its rows were not edited, but an *earlier* state of the file
(an older copy put back, the newest rows cut, a copy made without its ``-wal`` file) is just as
consistent, and so is a *copy* of the file written at the same time as the original.  So after
every committed append the library also writes the ledger's head (its number of rows, the
digest of the last one and the basic (ε, δ) counted at that row) to a small JSON file of its
own, one per ledger, in the user's state folder:

* ``$PM_PRIVATE_STATE_DIR`` if set, else
* ``$XDG_STATE_HOME/pm_private/ledgers``, else
* ``~/.local/state/pm_private/ledgers``.

The witness also keeps the heads it has seen (their row and the first 32 hex digits of their
digest): every one of the last :data:`RECENT` rows, and the rows that are multiples of
:data:`SPACING` before them.  A file of the same length as a head seen, with another digest, is
a fork of the ledger's history; the row where two copies parted is what the recovery charges
from.

The witness file is named after the ledger's identity (the digest that starts its chain, which
holds a random ledger id since format 3) and written atomically: a temporary file, fsync (for
durable ledgers), ``os.replace``.  Writers take a lock (``<identity>.lock``, POSIX record lock
plus a thread lock), held by the ledger across its check of the witness, its commit and the
witness's update, so that two copies of one ledger cannot both append; a witness never moves
backwards nor onto another history.

Witness file (version 1; ``heads`` is absent from the witnesses of earlier versions)::

    {"format": "pm_private-ledger-witness", "version": 1,
     "ledger": "<64 hex: the identity, also the file's name>",
     "rows": <int: the head's sequence number>, "head": "<64 hex: the head's digest>",
     "spent": [<ε>, <δ>],      # basic composition over the counted entries at the head
     "path": "<the ledger file last witnessed>", "updated": "<UTC time>",
     "heads": [[<rows>, "<32 hex>"], ...],     # the heads seen, oldest first, ending at the head
     "check": "<64 hex: SHA-256 of the fields above>"}
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import threading
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: the thread lock only
    fcntl = None

ENVIRONMENT = "PM_PRIVATE_STATE_DIR"
FORMAT = "pm_private-ledger-witness"
VERSION = 1
#: Every head of the last RECENT rows is kept; before them, the rows that are multiples of SPACING.
RECENT, SPACING = 1024, 64
#: Hex digits of the digest kept for each head seen (the head itself keeps all 64).
PREFIX = 32
_HEX = frozenset("0123456789abcdef")


@dataclass(frozen=True)
class Head:
    """A ledger's head: its identity, number of rows, last digest and basic (ε, δ) counted.

    ``heads`` (read from a witness) are the (rows, digest prefix) pairs the witness has seen.
    """

    ledger: str
    rows: int
    digest: str
    spent: tuple[float, float]
    path: str = ""
    heads: tuple[tuple[int, str], ...] = ()


class WitnessUnreadable(Exception):
    """The witness file exists but cannot be read or is not a witness of this ledger."""

    def __init__(self, file: Path, reason: str):
        super().__init__(reason)
        self.file, self.reason = file, reason


class WitnessForked(Exception):
    """A head of the same length as one the witness has seen, with another digest."""

    def __init__(self, head: Head, recorded: str, witnessed: Head):
        super().__init__(f"row {head.rows}: digest {short(head.digest)}, witnessed {short(recorded)}")
        self.head, self.recorded, self.witnessed = head, recorded, witnessed


def short(digest: str) -> str:
    return digest[:12]


def state_dir() -> Path:
    """The folder of the witness files (see the module docstring)."""
    value = os.environ.get(ENVIRONMENT)
    if value:
        return Path(value).expanduser()
    xdg = os.environ.get("XDG_STATE_HOME")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".local" / "state"
    return base / "pm_private" / "ledgers"


def witness_file(ledger: str) -> Path:
    return state_dir() / f"{ledger}.json"


def _is_digest(value, length: int = 64) -> bool:
    return isinstance(value, str) and len(value) == length and set(value) <= _HEX


def _check(document: dict) -> str:
    fields = {key: value for key, value in document.items() if key != "check"}
    return hashlib.sha256(json.dumps(fields, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def thin(heads) -> tuple[tuple[int, str], ...]:
    """The heads kept: all of the last :data:`RECENT` rows, multiples of :data:`SPACING` before."""
    if not heads:
        return ()
    last = heads[-1][0]
    return tuple((rows, digest) for rows, digest in heads if rows > last - RECENT or rows % SPACING == 0)


def recorded(head: Head, rows: int) -> tuple[int, str] | None:
    """The latest head seen at or before row ``rows``: (its rows, its digest prefix); None if none."""
    for seen in reversed(head.heads):
        if seen[0] <= rows:
            return seen
    return None


def _heads(value, rows: int, head: str):
    """The heads of a witness document; those of a witness written before they were kept: its head."""
    if value is None:
        return ((rows, head[:PREFIX]),)
    if not isinstance(value, list) or not value:
        return None
    pairs = []
    for pair in value:
        if (
            not isinstance(pair, list)
            or len(pair) != 2
            or not isinstance(pair[0], int)
            or isinstance(pair[0], bool)
            or not _is_digest(pair[1], PREFIX)
            or (pairs and pair[0] <= pairs[-1][0])
        ):
            return None
        pairs.append((pair[0], pair[1]))
    return tuple(pairs) if pairs[0][0] >= 0 and pairs[-1] == (rows, head[:PREFIX]) else None


def read(ledger: str) -> Head | None:
    """The witnessed head of ``ledger``; None when there is no witness file."""
    file = witness_file(ledger)
    try:
        text = file.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise WitnessUnreadable(file, f"it cannot be read ({error})") from None
    try:
        document = json.loads(text)
    except (ValueError, UnicodeDecodeError):
        raise WitnessUnreadable(file, "it is not valid JSON (truncated or overwritten)") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise WitnessUnreadable(file, "it is not a pm_private ledger witness")
    if document.get("version") != VERSION:
        raise WitnessUnreadable(
            file, f"it has witness version {document.get('version')!r}; this version reads {VERSION}"
        )
    if document.get("check") != _check(document):
        raise WitnessUnreadable(file, "its check digest does not match its content (edited or damaged)")
    if document.get("ledger") != ledger:
        raise WitnessUnreadable(file, f"it witnesses another ledger ({str(document.get('ledger'))[:12]!r})")
    rows, head, spent, path = (document.get(key) for key in ("rows", "head", "spent", "path"))
    if (
        not isinstance(rows, int)
        or isinstance(rows, bool)
        or rows < 0
        or not _is_digest(head)
        or not isinstance(spent, list)
        or len(spent) != 2
        or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in spent)
        or not isinstance(path, str)
    ):
        raise WitnessUnreadable(file, "its fields are missing or of the wrong type")
    heads = _heads(document.get("heads"), rows, head)
    if heads is None:
        raise WitnessUnreadable(file, "its list of the heads seen is damaged")
    return Head(ledger, rows, head, (float(spent[0]), float(spent[1])), path, heads)


def find(path: Path) -> list[Head]:
    """The readable witnesses whose last witnessed file is ``path`` (for a ledger that cannot be opened)."""
    target = str(path.resolve())
    found = []
    with contextlib.suppress(OSError):
        for file in sorted(state_dir().glob("*.json")):
            with contextlib.suppress(WitnessUnreadable):
                head = read(file.stem)
                if head is not None and head.path == target:
                    found.append(head)
    return found


# The lock of a ledger's witness: a thread lock (reentrant: the ledger holds it around its own
# writes) and a POSIX record lock on <identity>.lock, taken once per process and ledger (closing
# any descriptor of the lock file would drop the process's lock).
_LOCK = threading.RLock()
_HELD: dict[str, list] = {}  # identity -> [descriptor, depth]; only read or changed under _LOCK


def _new_lock_in_child() -> None:
    global _LOCK
    _LOCK = threading.RLock()  # a fork from another thread may have copied it held
    while _HELD:
        descriptor, _ = _HELD.popitem()[1]
        with contextlib.suppress(OSError):
            os.close(descriptor)  # the parent's lock is not inherited; its descriptor is


os.register_at_fork(after_in_child=_new_lock_in_child)


def _folder() -> Path:
    folder = state_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as error:
        raise PermissionError(
            f"cannot create the folder {folder} of the ledger witnesses ({error}); a ledger file is only "
            f"used with its witness: set {ENVIRONMENT} to a writable folder that is kept"
        ) from None
    return folder


@contextlib.contextmanager
def locked(ledger: str):
    """Hold the witness lock of ``ledger`` (reentrant within a thread).

    Raises PermissionError if the witness folder cannot be created.
    """
    with _LOCK:
        held = _HELD.get(ledger)
        if held is not None:
            held[1] += 1
            try:
                yield
            finally:
                held[1] -= 1
            return
        folder = _folder()
        if fcntl is None:  # pragma: no cover
            yield
            return
        descriptor = os.open(folder / f"{ledger}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.lockf(descriptor, fcntl.LOCK_EX)  # per process: not inherited by fork
            _HELD[ledger] = [descriptor, 1]
            yield
        finally:
            _HELD.pop(ledger, None)
            os.close(descriptor)


def write(head: Head, *, durable: bool, forward_only: bool = True, common: int = -1) -> None:
    """Witness ``head`` atomically.

    With ``forward_only`` (a ledger appending), a head of at most as many rows as the witness is
    not written (already witnessed), or raises :class:`WitnessForked` when the witness saw
    another digest at its row; a longer head is added to the heads seen (the caller has checked,
    under :func:`locked`, that it continues the witnessed history).  Without (a recovery or an
    upgrade, which replace the history), the witness is replaced and keeps the heads seen up to
    row ``common`` (the rows the new history shares with the old one; -1: none).

    Raises WitnessUnreadable (the current witness is damaged), WitnessForked or OSError.
    """
    with locked(head.ledger):
        current = read(head.ledger) if forward_only or common >= 0 else None
        kept = ()
        if current is not None and forward_only:
            if current.rows >= head.rows:
                seen = recorded(current, head.rows)
                if seen is not None and seen[0] == head.rows and not head.digest.startswith(seen[1]):
                    raise WitnessForked(head, seen[1], current)
                return
            kept = current.heads
        elif current is not None:
            kept = tuple(seen for seen in current.heads if seen[0] <= common)
        _replace_file(head, thin((*kept, (head.rows, head.digest[:PREFIX]))), durable)


def _replace_file(head: Head, heads: tuple[tuple[int, str], ...], durable: bool) -> None:
    folder = _folder()
    document = {
        "format": FORMAT,
        "version": VERSION,
        "ledger": head.ledger,
        "rows": head.rows,
        "head": head.digest,
        "spent": [head.spent[0], head.spent[1]],
        "path": head.path,
        "updated": datetime.now(UTC).isoformat(timespec="seconds"),
        "heads": [list(seen) for seen in heads],
    }
    document["check"] = _check(document)
    file = witness_file(head.ledger)
    temporary = folder / f".{head.ledger}.{uuid.uuid4().hex}.tmp"
    try:
        with open(temporary, "w", encoding="utf-8") as stream:
            stream.write(json.dumps(document, ensure_ascii=False) + "\n")
            stream.flush()
            if durable:
                os.fsync(stream.fileno())
        os.replace(temporary, file)
    finally:
        temporary.unlink(missing_ok=True)
