"""The witness of a ledger file's head, kept outside the file (used by :mod:`.ledger` only).

A ledger's hash chain shows that its rows were not edited, but an *earlier* state of the file
(an older copy put back, the newest rows cut, a copy made without its ``-wal`` file) is just as
consistent.  So after every committed append the library also writes the ledger's head (its
number of rows, the digest of the last one and the basic (ε, δ) counted at that row) to a small
JSON file of its own, one per ledger, in the user's state folder:

* ``$PM_PRIVATE_STATE_DIR`` if set, else
* ``$XDG_STATE_HOME/pm_private/ledgers``, else
* ``~/.local/state/pm_private/ledgers``.

The witness file is named after the ledger's identity (the digest that starts its chain, which
holds a random ledger id since format 3) and written atomically: a temporary file, fsync (for
durable ledgers), ``os.replace``.  Writers take a lock (``<identity>.lock``, POSIX record lock
plus a thread lock) and never move a witness backwards.

Witness file (version 1)::

    {"format": "pm_private-ledger-witness", "version": 1,
     "ledger": "<64 hex: the identity, also the file's name>",
     "rows": <int: the head's sequence number>, "head": "<64 hex: the head's digest>",
     "spent": [<ε>, <δ>],      # basic composition over the counted entries at the head
     "path": "<the ledger file last witnessed>", "updated": "<UTC time>",
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
_HEX = frozenset("0123456789abcdef")


@dataclass(frozen=True)
class Head:
    """A ledger's head: its identity, number of rows, last digest and basic (ε, δ) counted."""

    ledger: str
    rows: int
    digest: str
    spent: tuple[float, float]
    path: str = ""


class WitnessUnreadable(Exception):
    """The witness file exists but cannot be read or is not a witness of this ledger."""

    def __init__(self, file: Path, reason: str):
        super().__init__(reason)
        self.file, self.reason = file, reason


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


def _is_digest(value) -> bool:
    return isinstance(value, str) and len(value) == 64 and set(value) <= _HEX


def _check(document: dict) -> str:
    fields = {key: value for key, value in document.items() if key != "check"}
    return hashlib.sha256(json.dumps(fields, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


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
    return Head(ledger, rows, head, (float(spent[0]), float(spent[1])), path)


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


_LOCK = threading.Lock()


def _new_lock_in_child() -> None:
    global _LOCK
    _LOCK = threading.Lock()  # a fork from another thread may have copied it held


os.register_at_fork(after_in_child=_new_lock_in_child)


@contextlib.contextmanager
def _locked(folder: Path, ledger: str):
    with _LOCK:
        if fcntl is None:  # pragma: no cover
            yield
            return
        descriptor = os.open(folder / f"{ledger}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.lockf(descriptor, fcntl.LOCK_EX)  # per process: not inherited by fork
            yield
        finally:
            os.close(descriptor)


def write(head: Head, *, durable: bool, forward_only: bool = True) -> None:
    """Witness ``head`` atomically; with ``forward_only``, never replace a witness of more rows.

    Raises WitnessUnreadable (``forward_only``: the current witness is damaged) or OSError.
    """
    folder = state_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as error:
        raise PermissionError(
            f"cannot create the folder {folder} of the ledger witnesses ({error}); a ledger file is only "
            f"used with its witness: set {ENVIRONMENT} to a writable folder that is kept"
        ) from None
    with _locked(folder, head.ledger):
        if forward_only:
            current = read(head.ledger)
            if current is not None and current.rows >= head.rows:
                return
        document = {
            "format": FORMAT,
            "version": VERSION,
            "ledger": head.ledger,
            "rows": head.rows,
            "head": head.digest,
            "spent": [head.spent[0], head.spent[1]],
            "path": head.path,
            "updated": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        document["check"] = _check(document)
        file = witness_file(head.ledger)
        temporary = folder / f".{head.ledger}.{uuid.uuid4().hex}.tmp"
        try:
            with open(temporary, "w", encoding="utf-8") as stream:
                stream.write(json.dumps(document, indent=1, ensure_ascii=False) + "\n")
                stream.flush()
                if durable:
                    os.fsync(stream.fileno())
            os.replace(temporary, file)
        finally:
            temporary.unlink(missing_ok=True)
