"""Input checks shared by the release functions: they raise before anything is computed or spent.

Error messages name the argument and never print a private value (not a record, not a largest
norm, not an offending entry).  A message may give the *row index* of the first non-finite
record: that helps the data holder find a malformed row, and input validation is not a release,
since it happens before any noise is drawn and its outcome is seen only by the caller who holds
the data.  Results that leave the data holder must come from a mechanism, never from an error.
"""

from __future__ import annotations

import math
import numbers
import os
import sys
from collections import Counter

import numpy as np

__all__ = [
    "align_columns",
    "MIN_EPSILON",
    "CLIP_SHARE",
    "check_clip_share",
    "MAX_EPSILON",
    "as_float_array",
    "check_epsilon",
    "check_delta",
    "check_distinct_columns",
    "check_positive",
    "check_bound",
    "check_memory",
    "check_nonnegative",
    "BOUND_RANGE",
    "check_count",
    "check_bool",
    "check_fraction",
    "as_matrix",
    "as_vector",
    "column_names",
    "check_feature_names",
    "check_finite_rows",
    "check_release_consistent",
    "check_release_field",
    "check_release_guarantee",
    "check_symmetric",
]


#: Smallest ε a release accepts.  Noise scales are Δ/ε: below 10⁻⁶ the noise is at least a
#: million times the sensitivity (the release carries no information), and a subnormal ε such
#: as 1e-320 makes the scale overflow to infinity.
MIN_EPSILON = 1e-6
#: Largest ε a release accepts, 2⁵³: noise of scale Δ/ε is then below the rounding of any value
#: of magnitude Δ, so a larger ε releases nothing more, and its noise scales would underflow.
MAX_EPSILON = 2.0**53


#: Range of a public scale parameter (a clipping bound, a range, a horizon, a regularisation
#: strength): within it, squares and fourth powers of bounds, their products with one another,
#: with the dimension and with 1/ε (ε ≥ 10⁻⁶) stay normal floating-point numbers, so that no
#: sensitivity or noise scale overflows to infinity or underflows to zero.
BOUND_RANGE = (1e-50, 1e50)


def _as_float(name: str, value) -> float:
    """``float(value)`` for a real number; bool, str and bytes are refused (not numbers)."""
    if isinstance(value, (bool, np.bool_, str, bytes)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None


def check_positive(name: str, value) -> float:
    """A finite float > 0, or ValueError naming ``name`` (bool and str are not numbers).

    Parameters
    ----------
    name : str
        The argument's name, quoted in the error message.
    value : float
        The value to check.

    Returns
    -------
    float
        ``value`` as a float.

    Raises
    ------
    ValueError
        If ``value`` is not a number, not finite or not > 0.
    """
    value = _as_float(name, value)
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    return value


def check_bound(name: str, value) -> float:
    """A public scale parameter in :data:`BOUND_RANGE` ([10⁻⁵⁰, 10⁵⁰]), or ValueError naming ``name``.

    Parameters
    ----------
    name : str
        The argument's name, quoted in the error message.
    value : float
        The value to check: a clipping bound, a range, a horizon or a regularisation strength.

    Returns
    -------
    float
        ``value`` as a float.

    Raises
    ------
    ValueError
        If ``value`` is not a finite number in [10⁻⁵⁰, 10⁵⁰].
    """
    value = check_positive(name, value)
    low, high = BOUND_RANGE
    if not low <= value <= high:
        raise ValueError(
            f"{name} must lie in [{low:g}, {high:g}] (its squares and noise scales must stay finite and > 0), "
            f"got {value!r}; rescale the data"
        )
    return value


def memory_limit() -> int:
    """Bytes a single release may plan to allocate: half of the machine's physical memory."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2
    except (AttributeError, ValueError, OSError):  # no sysconf: assume 8 GiB
        return 4 * 2**30


def check_memory(names: str, nbytes: float) -> None:
    """Refuse, naming ``names``, a computation planned to need more than :func:`memory_limit` bytes.

    Parameters
    ----------
    names : str
        The arguments that set the size (quoted in the message).
    nbytes : float
        The memory the computation would need, from its sizes alone (public).

    Raises
    ------
    ValueError
        If ``nbytes`` is not finite or exceeds half of the physical memory.
    """
    limit = memory_limit()
    if not (math.isfinite(nbytes) and nbytes <= limit):
        raise ValueError(
            f"{names} would need about {nbytes / 2**30:.3g} GiB of memory, more than the {limit / 2**30:.3g} GiB "
            "allowed (half of this machine's memory); choose smaller values"
        )


def check_nonnegative(name: str, value) -> float:
    """A finite float ≥ 0, or ValueError naming ``name`` (bool and str are not numbers).

    Parameters
    ----------
    name : str
        The argument's name, for the message.
    value : float
        The value to check.

    Returns
    -------
    float
        ``float(value)``.

    Raises
    ------
    ValueError
        If ``value`` is not a finite number ≥ 0.
    """
    value = _as_float(name, value)
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be finite and ≥ 0, got {value!r}")
    return value


def check_count(name: str, value, minimum: int = 1, maximum: int | None = None) -> int:
    """An integer in [``minimum``, ``maximum``], or ValueError naming ``name``.

    Only integer types count (``int`` and numpy integers): ``3.0`` and ``True`` are refused, so a
    float that happens to be integral is not silently accepted where a count is meant.

    Parameters
    ----------
    name : str
        The argument's name, quoted in the error message.
    value : int
        The value to check.
    minimum : int, default 1
        The smallest value allowed.
    maximum : int, optional
        The largest value allowed (None: no upper bound).

    Returns
    -------
    int
        ``value`` as a Python int.

    Raises
    ------
    ValueError
        If ``value`` is not an integer or lies outside [``minimum``, ``maximum``].
    """
    bound = f"in [{minimum}, {maximum}]" if maximum is not None else f"≥ {minimum}"
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer {bound}, got {value!r}")
    if value < minimum or (maximum is not None and value > maximum):
        raise ValueError(f"{name} must be an integer {bound}, got {value!r}")
    return int(value)


def check_bool(name: str, value) -> bool:
    """``value`` if it is a bool (``bool`` or ``numpy.bool_``), or ValueError naming ``name``.

    Strings and numbers are refused: ``bool("no")`` is True, so a flag given as a string would
    silently mean the opposite of what it says.
    """
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_fraction(name: str, value, *, closed: bool = True) -> float:
    """A number in [0, 1] (``closed``) or in (0, 1), or ValueError naming ``name``."""
    value = _as_float(name, value)
    if not (0.0 <= value <= 1.0 if closed else 0.0 < value < 1.0):
        raise ValueError(f"{name} must be in {'[0, 1]' if closed else '(0, 1)'}, got {value!r}")
    return value


#: The default share of a release's privacy that buys counts of what its clipping changed.
CLIP_SHARE = 0.05


def check_clip_share(clip_share, epsilon: float) -> float:
    """A share of a release's privacy that buys counts of what its clipping changed: 0 (no counts)
    or in [0.001, 0.5], leaving both parts of ε ≥ the smallest ε; ValueError naming ``clip_share``."""
    if isinstance(clip_share, bool) or not isinstance(clip_share, numbers.Real):
        raise ValueError(f"clip_share must be a number, got {clip_share!r:.40}")
    value = float(clip_share)
    if not (value == 0.0 or 0.001 <= value <= 0.5):
        raise ValueError(f"clip_share must be 0 or in [0.001, 0.5], got {clip_share!r}")
    if value > 0 and value * epsilon < MIN_EPSILON:
        raise ValueError(f"clip_share {value!r} of epsilon {epsilon!r} is below the smallest ε {MIN_EPSILON!r}")
    return value


def check_epsilon(epsilon) -> float:
    """ε must be a number in [:data:`MIN_EPSILON`, ``MAX_EPSILON``] (10⁻⁶ to 2⁵³), so that noise scales Δ/ε stay finite and > 0.

    Parameters
    ----------
    epsilon : float
        The privacy parameter ε to check.

    Returns
    -------
    float
        ``epsilon`` as a float.

    Raises
    ------
    ValueError
        If ``epsilon`` is not a number in [10⁻⁶, 2⁵³].
    """
    value = check_positive("epsilon", epsilon)
    if value < MIN_EPSILON:
        raise ValueError(f"epsilon must be ≥ {MIN_EPSILON:g} (noise scales Δ/ε must stay finite), got {value!r}")
    if value > MAX_EPSILON:
        raise ValueError(
            f"epsilon must be ≤ 2**53 ≈ {MAX_EPSILON:.3g}: beyond it the noise is below the rounding of the "
            f"values and a larger ε releases nothing more, got {value!r}"
        )
    return value


def check_delta(delta) -> float:
    """δ of an (ε, δ) guarantee must be a number in (0, 1), not subnormal (≥ 2.2·10⁻³⁰⁸).

    Parameters
    ----------
    delta : float
        The privacy parameter δ to check.

    Returns
    -------
    float
        ``delta`` as a float.

    Raises
    ------
    ValueError
        If ``delta`` is not a number in the open interval (0, 1), or is subnormal.
    """
    value = _as_float("delta", delta)
    if not (math.isfinite(value) and 0.0 < value < 1.0):
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    if value < sys.float_info.min:
        raise ValueError(f"delta must be a normal floating-point number ≥ {sys.float_info.min:.3g}, got {delta!r}")
    return value


def first_bad_row(array: np.ndarray) -> int:
    bad = ~np.isfinite(array)
    return int(np.flatnonzero(bad.reshape(len(array), -1).any(axis=1))[0])


def as_float_array(values, name: str) -> np.ndarray:
    """float64 array of ``values`` (any shape), or ValueError naming ``name``.

    Strings, complex numbers, ragged lists and objects that are not numbers are refused without
    quoting them (numpy's own message would print the offending value).

    Parameters
    ----------
    values : array_like
        Real numbers, of any shape.
    name : str
        The argument's name, quoted in the error message.

    Returns
    -------
    numpy.ndarray
        ``values`` as a float64 array (no copy if already float64).

    Raises
    ------
    ValueError
        If ``values`` are not real numbers (strings, complex numbers, ragged lists, objects).
    """
    if isinstance(values, (str, bytes)):
        raise ValueError(f"{name} must be numeric, got a string")
    try:
        array = np.asarray(values)
        if array.dtype.kind in "USVc":
            raise TypeError
        return np.asarray(array, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be numeric (an array of real numbers)") from None


def as_matrix(X, name: str = "X", *, allow_empty: bool = False) -> np.ndarray:
    """A 2-D float64 array (numpy, pandas or nested lists); no copy if already float64.

    Strings, complex numbers and ragged lists are refused with a ValueError naming ``name``.
    Finiteness is not checked here: the release kernels check it chunk by chunk so that no
    full-size temporary is made.

    Parameters
    ----------
    X : array_like
        An n × d table of real numbers (numpy array, pandas data frame or nested lists).
    name : str, default "X"
        The argument's name, quoted in the error message.
    allow_empty : bool, default False
        Take a table of no rows (it still needs a column): a release under add/remove
        neighbours, where n is private, releases an empty data set as it does any other.

    Returns
    -------
    numpy.ndarray
        ``X`` as a 2-D float64 array.

    Raises
    ------
    ValueError
        If ``X`` is not numeric, not 2-D, or has no column, or no row (unless ``allow_empty``).
    """
    array = as_float_array(X, name)
    if array.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n records × d features), got shape {array.shape}")
    if (array.shape[0] == 0 and not allow_empty) or array.shape[1] == 0:
        rows = "" if allow_empty else " row and one"
        raise ValueError(f"{name} must have at least one{rows} column, got shape {array.shape}")
    return array


def column_names(X) -> tuple[str, ...] | None:
    """The column names of a data frame, the public schema a release carries into model coordinates.

    Parameters
    ----------
    X : object
        Covariates as given to a release: a pandas or Dask data frame, or any array.

    Returns
    -------
    tuple of str or None
        The names when ``X`` has columns (``X.columns``) that are strings; None for an array, or
        for columns that are not all strings (pandas' default integer labels among them).

    Raises
    ------
    ValueError
        Naming ``X`` when it repeats a column name (:func:`check_distinct_columns`): a release
        refuses it before anything is spent.
    """
    columns = getattr(X, "columns", None)
    if columns is None or isinstance(X, np.ndarray):
        return None
    names = tuple(columns)
    check_distinct_columns(names)
    if not names or not all(isinstance(name, str) for name in names):
        return None
    return names


def check_distinct_columns(labels, name: str = "X") -> None:
    """ValueError naming ``name`` when a data frame's column labels repeat one (compared as text).

    Two columns of one name cannot be told apart: not by a model's feature coordinates, nor by a
    release file, whose ``features`` must be distinct names, nor by the public preprocessing or
    new rows given by name.  Only the schema is read (no value).

    Parameters
    ----------
    labels : sequence
        The column labels.
    name : str, default "X"
        The argument's name, quoted in the error message.

    Raises
    ------
    ValueError
        Naming ``name`` and the repeated labels.
    """
    counts = Counter(str(label) for label in labels)
    repeated = sorted(label for label, count in counts.items() if count > 1)
    if repeated:
        raise ValueError(f"{name}: the data frame repeats the columns {repeated}; give each column its own name")


def align_columns(X, names) -> np.ndarray:
    """New public rows in the column order a fit recorded: a data frame is reordered by column name
    (as scikit-learn does); an array is taken in the fit's order.

    Parameters
    ----------
    X : array_like or pandas.DataFrame, shape (m, d)
        New rows.
    names : sequence of str or None
        The feature names the fit recorded (None: no names, X is taken as it is).

    Returns
    -------
    numpy.ndarray
        The rows as floats, columns in the order of ``names``.

    Raises
    ------
    ValueError
        If ``X`` is a data frame whose columns are not the recorded names (naming the missing and
        the unknown ones), or its number of columns is not the number of names.
    """
    columns = column_names(X)  # refuses a data frame that repeats a column name
    if names is not None and columns is not None:
        names = [str(v) for v in names]
        missing = [v for v in names if v not in columns]
        unknown = [v for v in columns if v not in names]
        if missing or unknown:
            raise ValueError(
                f"X: the fit's features are {names}; the data frame lacks {missing} and has unknown columns {unknown}"
            )
        X = X[names]
    X = as_matrix(X)
    if names is not None and X.shape[1] != len(names):
        raise ValueError(f"X has {X.shape[1]} columns, the fit {len(names)} features")
    return X


def check_feature_names(release, d: int) -> None:
    """ValueError unless the ``features`` a release recorded (if any) are d distinct names.

    Parameters
    ----------
    release : Release
        A release with a ``features`` field (tuple of str or None).
    d : int
        The number of covariates of its statistics.
    """
    names = release.features
    if names is not None and (len(names) != d or len(set(names)) != d):
        raise ValueError(f"field 'features' must hold d = {d} distinct column names, got {len(names)}")


def as_vector(y, n: int, name: str = "y") -> np.ndarray:
    """A 1-D float64 array of length ``n`` with finite entries ((n, 1) is accepted).

    Parameters
    ----------
    y : array_like
        n real numbers, as a vector or an (n, 1) column.
    n : int
        The required length (the number of rows of the matching X).
    name : str, default "y"
        The argument's name, quoted in the error message.

    Returns
    -------
    numpy.ndarray
        ``y`` as a float64 vector of length ``n``.

    Raises
    ------
    ValueError
        If ``y`` is not numeric, has the wrong shape, or holds a NaN or infinite value.
    """
    array = as_float_array(y, name)
    if array.ndim == 2 and array.shape[1] == 1:
        array = array[:, 0]
    if array.ndim != 1 or array.shape[0] != n:
        raise ValueError(f"{name} must have shape ({n},) to match X, got {array.shape}")
    if not np.isfinite(array).all():
        raise ValueError(f"{name} contains NaN or infinite values (first at index {first_bad_row(array)})")
    return array


def raise_non_finite(chunk: np.ndarray, offset: int, name: str = "X") -> None:
    """Raise the ValueError for a chunk of ``name`` known to hold a non-finite value."""
    raise ValueError(f"{name} contains NaN or infinite values (first in row {offset + first_bad_row(chunk)})")


def check_finite_rows(X: np.ndarray, name: str = "X") -> None:
    """Raise the ValueError naming the first row of ``name`` with a NaN or infinite value, if any.

    Parameters
    ----------
    X : numpy.ndarray
        A float array whose first axis indexes records.
    name : str, default "X"
        The argument's name, quoted in the error message.

    Raises
    ------
    ValueError
        If ``X`` holds a NaN or infinite value.
    """
    if not np.isfinite(X).all():
        raise_non_finite(X, 0, name)


def check_release_field(name: str, check, *args, **kwargs):
    """``check(*args, **kwargs)``, its ValueError re-raised naming the release field ``name``.

    The hook by which a release type checks its public fields with the very checks its mechanism
    applies to its arguments (one source of truth), e.g. ``check_release_field("y_bound",
    check_count, "y_bound", self.y_bound, 1, MAX_Y_BOUND)`` in ``__post_init__``: a release
    constructed (or read from a file) with a field out of the mechanism's limits is refused.

    Returns
    -------
    object
        What ``check`` returned.

    Raises
    ------
    ValueError
        ``field 'name': <the check's message>``.
    """
    try:
        return check(*args, **kwargs)
    except (TypeError, ValueError) as error:
        raise ValueError(f"field {name!r}: {error}") from None


def check_release_guarantee(release, *, needs_delta: bool = False) -> None:
    """The guarantee of a release checked as its mechanism checks its arguments: ε by
    :func:`check_epsilon`; δ by :func:`check_delta` where the mechanism has one (``needs_delta``),
    and exactly 0 where it has none (a pure ε-DP mechanism: a δ > 0 would claim a guarantee the
    mechanism does not give, and charge a ledger for it).

    Parameters
    ----------
    release : Release
        A release, built or read from a file.
    needs_delta : bool, default False
        True for a mechanism with a δ (Gaussian noise), False for a pure ε-DP one.

    Raises
    ------
    ValueError
        Naming the field ``'epsilon'`` or ``'delta'``.
    """
    check_release_field("epsilon", check_epsilon, release.epsilon)
    if needs_delta:
        check_release_field("delta", check_delta, release.delta)
    elif not (is_number(release.delta) and release.delta == 0):
        raise ValueError(
            f"field 'delta' must be 0: the mechanism is pure ε-DP (it has no δ), got {release.delta!r:.40}"
        )


def check_release_consistent(name: str, value, expected: float, how: str, *, rel_tol: float = 1e-9) -> None:
    """A derived public field of a release equal to what its public inputs imply, to ``rel_tol``.

    For fields a mechanism computes from its other public fields (a sensitivity from bounds, a
    noise scale from a sensitivity and ε): an edited value is refused naming the field.

    Parameters
    ----------
    name : str
        The release field.
    value : float
        Its value.
    expected : float
        What the other fields imply.
    how : str
        How it is implied, for the message, quoting the fields it is implied by (e.g.
        ``"2·'x_bound'·'y_bound'"``), so that an edit of one of those is refused naming it too.
    rel_tol : float, default 1e-9
        The relative tolerance.

    Raises
    ------
    ValueError
        ``field 'name' must be <how> = <expected>, got <value>``.
    """
    if not (is_number(value) and math.isclose(float(value), float(expected), rel_tol=rel_tol)):
        raise ValueError(f"field {name!r} must be {how} = {expected!r}, got {value!r:.40}")


def is_number(value) -> bool:
    """Whether ``value`` is a real number (a Python or NumPy integer or float), not a boolean."""
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def check_symmetric(name: str, matrix) -> np.ndarray:
    """A finite square symmetric matrix (to the rounding of a sum of outer products), or ValueError naming ``name``.

    Returns
    -------
    numpy.ndarray
        ``matrix`` as a float64 array.
    """
    array = as_float_array(matrix, name)
    if array.ndim != 2 or array.shape[0] != array.shape[1]:
        raise ValueError(f"{name} must be a square matrix, got shape {array.shape}")
    if not np.isfinite(array).all():
        raise ValueError(f"{name} must be finite (NaN or infinite entries given)")
    scale = float(np.abs(array).max(initial=0.0))
    if not np.all(np.abs(array - array.T) <= 1e-9 * scale):
        raise ValueError(f"{name} must be symmetric")
    return array
