"""argparse types for the command line: every value is checked while the arguments are parsed,
so a bad value ends in a usage error (exit code 2) before any data is read or budget spent."""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path

from .validation import BOUND_RANGE, MAX_EPSILON, MIN_EPSILON, check_delta


def _number(text: str, kind=float):
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a{'n integer' if kind is int else ' number'}: {text!r}") from None
    if kind is float and not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be finite, got {text!r}")
    return value


def positive_float(text: str) -> float:
    """A finite number > 0."""
    value = _number(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text!r}")
    return value


def bound(text: str) -> float:
    """A public scale (a bound, range or horizon) in BOUND_RANGE: squares and noise scales stay finite."""
    value = positive_float(text)
    low, high = BOUND_RANGE
    if not low <= value <= high:
        raise argparse.ArgumentTypeError(f"must lie in [{low:g}, {high:g}] (rescale the data), got {text!r}")
    return value


def epsilon(text: str) -> float:
    """ε of a release: a number in [MIN_EPSILON, MAX_EPSILON]."""
    value = positive_float(text)
    if value < MIN_EPSILON:
        raise argparse.ArgumentTypeError(f"must be ≥ {MIN_EPSILON:g}, got {text!r}")
    if value > MAX_EPSILON:
        raise argparse.ArgumentTypeError(f"must be ≤ 2**53 ≈ {MAX_EPSILON:.3g}, got {text!r}")
    return value


def unit_interval(text: str) -> float:
    """A number in [0, 1) (a total δ)."""
    value = _number(text)
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"must be in [0, 1), got {text!r}")
    return value


def open_unit_interval(text: str) -> float:
    """A number in (0, 1)."""
    value = _number(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1), got {text!r}")
    return value


def delta(text: str) -> float:
    """δ of a release: what the library's ``check_delta`` accepts, a normal number in (0, 1)."""
    value = _number(text)
    try:
        return check_delta(value)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error).removeprefix("delta ")) from None


def positive_int(text: str) -> int:
    """An integer ≥ 1."""
    value = _number(text, int)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be ≥ 1, got {text!r}")
    return value


def nonnegative_int(text: str) -> int:
    """An integer ≥ 0."""
    value = _number(text, int)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be ≥ 0, got {text!r}")
    return value


def existing_file(text: str) -> Path:
    """A path to an existing, readable file."""
    path = Path(text)
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"no such file: {text!r}")
    if not os.access(path, os.R_OK):
        raise argparse.ArgumentTypeError(f"cannot read {text!r}")
    return path


def output_folder(text: str) -> Path:
    """A folder that exists or can be created, and is writable."""
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} exists and is not a folder")
    parent = next((p for p in (path, *path.parents) if p.exists()), Path("."))
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"cannot write into {str(parent)!r}")
    return path


def output_file(text: str) -> Path:
    """A file path in an existing writable folder that is not itself a folder."""
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a folder, not a file")
    folder = path.parent
    if not folder.is_dir():
        raise argparse.ArgumentTypeError(f"folder {str(folder)!r} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise argparse.ArgumentTypeError(f"cannot write {text!r}")
    return path


def new_file(text: str) -> Path:
    """Like :func:`output_file`, and the file must not exist yet (never overwritten)."""
    path = output_file(text)
    if path.exists():
        raise argparse.ArgumentTypeError(f"{text!r} exists; a release file is never overwritten")
    return path


def ledger_path(text: str) -> Path:
    """A ledger file: an existing file, or a new one in an existing writable folder."""
    path = Path(text)
    if path.exists():
        return existing_file(text)
    return output_file(text)


def finite_float(text: str) -> float:
    """A finite number (a public centre)."""
    return _number(text)
