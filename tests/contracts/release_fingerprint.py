"""Fingerprints of one seeded release per mechanism: run it on two commits and compare, to show
that a refactor leaves every release byte-for-byte as it was.

Each mechanism card (:mod:`cards` beside this module: one valid cheap call per private mechanism)
whose mechanism takes ``rng`` is run once with ``numpy.random.default_rng(7)``
(seeded noise: reproducible, and marked not private).  Printed per card:

* a SHA-256 prefix of the release's public fields (numeric arrays by their bytes, everything
  else by its ``repr``), so that a changed value, dtype, field name or field order shows;
* where the card's release can be written to a release file, a SHA-256 prefix of that file's
  text with its ``created`` time stamp removed (the only part that changes from run to run).

A card without a release (``dp_sgld`` returns draws) prints the hash of an empty field list.  The
fingerprints depend on the library's dependencies as well (NumPy's generators, OpenDP), so compare
two commits in the same environment (copy this file into an older commit's tree that lacks it):

    git worktree add /tmp/before <commit>
    (cd /tmp/before && /path/to/.venv/bin/python -m tests.contracts.release_fingerprint) > before.txt
    .venv/bin/python -m tests.contracts.release_fingerprint > after.txt
    diff before.txt after.txt

It is a tool, not a test (pytest does not collect it): the fingerprints of one commit are not a
specification, only the equality of two commits' fingerprints is.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
SEED = 7


def field_digest(release) -> str:
    """SHA-256 prefix of a release's public fields, nested containers walked four levels deep."""
    digest = hashlib.sha256()

    def walk(value, depth: int = 0) -> None:
        if depth > 4:
            return
        if isinstance(value, np.ndarray):
            digest.update(np.ascontiguousarray(value).tobytes())
        elif isinstance(value, (int, float, str, bool, type(None), np.generic)):
            digest.update(repr(value).encode())
        elif isinstance(value, (list, tuple)):
            for item in value:
                walk(item, depth + 1)
        elif isinstance(value, dict):
            for key, item in value.items():
                digest.update(str(key).encode())
                walk(item, depth + 1)
        elif hasattr(value, "__dict__"):
            for key in sorted(vars(value)):
                if not key.startswith("_"):
                    digest.update(key.encode())
                    walk(vars(value)[key], depth + 1)

    walk(release)
    return digest.hexdigest()[:16]


def file_digest(release) -> str:
    """SHA-256 prefix of the release file of ``release``, its ``created`` time stamp removed."""
    from pm_private.release_file import release_to_dict, write_release_file

    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "release.json")
        write_release_file(path, [release_to_dict(release)])
        text = re.sub(r'"created": "[^"]*"', "", Path(path).read_text(encoding="utf-8"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def fingerprints() -> list[str]:
    """One line per seeded card: its name, the field digest and, where it has one, the file digest."""
    sys.path.insert(0, str(ROOT))
    from tests.contracts.cards import CARDS, release_of

    lines, seen = [], {}
    for card in CARDS:
        if "rng" not in card.kinds:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            release = release_of(card.run(None, rng=np.random.default_rng(SEED)))
        seen[card.name] = seen.get(card.name, 0) + 1
        name = card.name if seen[card.name] == 1 else f"{card.name}#{seen[card.name]}"
        line = f"{name} {field_digest(release)}"
        if card.release_kind and not card.not_in_files:
            line += f" file {file_digest(release)}"
        lines.append(line)
    return lines


if __name__ == "__main__":
    print("\n".join(fingerprints()))
