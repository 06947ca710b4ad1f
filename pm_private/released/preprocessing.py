"""Public preprocessing of covariates before a release of sufficient statistics."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..privacy.validation import as_float_array, as_matrix, check_bool

#: The column kinds of ``Preprocessing.x_kinds``: "binary" (levels 0 and 1 on the original scale),
#: "continuous", and "categorical:<name>" for the 0/1 indicator of one level of the categorical
#: covariate <name> (its reference level dropped; the indicators of one name are never 1 together).
COLUMN_KINDS = ("binary", "continuous", "categorical:<name>")


def is_column_kind(kind) -> bool:
    """Whether ``kind`` is one of :data:`COLUMN_KINDS` ("categorical:" followed by a name)."""
    return isinstance(kind, str) and (
        kind in ("binary", "continuous") or (kind.startswith("categorical:") and len(kind) > 12)
    )


__all__ = [
    "COLUMN_KINDS",
    "FLOAT_MAX",
    "affine_vectors",
    "check_column_kinds",
    "check_glm_preprocessing",
    "inferred_kinds",
    "is_column_kind",
    "Preprocessing",
    "preprocess",
    "preprocessed_rows",
    "public_rows_refusal",
    "shared_row_count",
]


#: The largest finite float64: where a public map saturates instead of overflowing to ±inf.
FLOAT_MAX = float(np.finfo(np.float64).max)


def _saturated_affine(values: np.ndarray, center, scale, name: str) -> np.ndarray:
    """(values − center)/scale in place, saturated at ±``FLOAT_MAX``, after a ValueError naming
    ``name`` unless every value is finite: the domain of the data, checked on the original scale,
    where no public constant can move it (no row or count is named).  None: no centre or scale."""
    if not np.isfinite(values).all():
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    with np.errstate(over="ignore"):
        if center is not None:
            values -= center
        if scale is not None:
            values /= scale
    return np.clip(values, -FLOAT_MAX, FLOAT_MAX, out=values)


def preprocess(X, *, center=None) -> np.ndarray:
    """Subtract a **public** centre, then scale each row to unit L2 norm (Honkela et al. 2018).

    Honkela et al. (2018) removes each gene's mean over the data, ``x_ij := x_ij - mean_i(x_ij)``, then
    normalises each cell line to ``||x_i||_2 = 1``.  The normalisation is a per-row map that
    depends on nothing but the row itself, so it is harmless under differential privacy (and it
    gives the public bound ``|x_ij| <= 1``).  Centring with the *private* column means is not: it
    makes every preprocessed row depend on all other rows, so replacing one record moves every
    row (the sensitivity analysis of the released statistics no longer holds) and the means
    themselves leak.  Here ``center`` must therefore come from public or non-private data (e.g.
    the non-private cell lines, or published reference means); ``None`` means no centring.

    Parameters
    ----------
    X : array_like or pandas.DataFrame, shape (n, d)
        Finite covariates.
    center : array_like or pandas.Series, optional
        A public length-d centre; a Series is aligned to ``X``'s columns when ``X`` is a
        DataFrame.  None: no centring.

    Returns
    -------
    numpy.ndarray
        A new float64 array of unit-norm rows (rows that are zero after centring stay zero).

    Raises
    ------
    ValueError
        If ``X`` is not 2-D or not finite, or ``center`` has the wrong shape, misses a column or
        is not finite.
    """
    columns = X.columns if isinstance(X, pd.DataFrame) else None
    A = np.array(X, dtype=np.float64, copy=True)
    if A.ndim != 2:
        raise ValueError(f"X must be 2-D (rows = cell lines), got shape {A.shape}")
    if not np.isfinite(A).all():
        raise ValueError("X must be finite (no NaN or inf)")
    if center is not None:
        if isinstance(center, pd.Series) and columns is not None:
            absent = [c for c in columns if c not in center.index]
            if absent:
                raise ValueError(f"center has no value for columns {absent[:10]}")
            center = center.reindex(columns)
        c = np.asarray(center, dtype=np.float64)
        if c.shape != (A.shape[1],):
            raise ValueError(f"center must have shape ({A.shape[1]},), got {c.shape}")
        if not np.isfinite(c).all():
            raise ValueError("center must be finite")
        A -= c
    # Scale by the row's max |entry| first so that the norm cannot overflow.
    peak = np.abs(A).max(axis=1, initial=0.0)
    nonzero = peak > 0
    A[nonzero] /= peak[nonzero, None]
    A[nonzero] /= np.linalg.norm(A[nonzero], axis=1)[:, None]
    return A


@dataclass(frozen=True, eq=False)
class Preprocessing:
    """Public affine preprocessing that travels with a release: x ↦ (x − x_center)/x_scale,
    y ↦ (y − y_center)/y_scale.

    Every constant must be public (fixed in advance, or computed from non-private rows): the
    release applies the map before clipping, and :func:`pm_private.linear.predict_linear`
    applies the same map (and the release's clip bound) to new covariates and maps predictions
    back with ŷ = y_center + y_scale·xᵀβ, so coefficients fitted on the released scale are never
    multiplied by raw covariates.

    Parameters
    ----------
    x_center : float or array_like, optional
        A scalar or length-d public centre of the covariates (None: 0).
    x_scale : float or array_like, optional
        A scalar or length-d public scale of the covariates, > 0 (None: 1).
    y_center : float, default 0.0
        The public centre of the response.
    y_scale : float, default 1.0
        The public scale of the response, > 0.
    x_public : array_like, shape (m, d), optional
        Public covariate rows on the original scale (those the constants were estimated from:
        :meth:`from_public` keeps them).  They travel with the release and are written to release
        files as they are; the logistic and Poisson models take them as the covariates' law, and
        a release refuses private rows that are also among them.
    x_kinds : sequence of str, optional
        Each covariate's kind, ``"binary"`` (levels 0 and 1 on the original scale),
        ``"continuous"``, or ``"categorical:<name>"`` (the 0/1 indicator of one level of the
        categorical covariate <name>, its reference level dropped): a public declaration about
        the columns that travels with the release.  With it the logistic, Poisson and survival
        regression models take the reference law of the release
        (:func:`pm_private.released.reference_law`) as the covariates' law, the
        public rows shaping only the continuous columns' marginals.

    Raises
    ------
    ValueError
        If a constant is not finite, has more than one dimension or is an empty vector, a scale
        is not > 0, ``x_center`` and ``x_scale`` are vectors of different lengths,
        ``x_public`` is not a finite 2-D table of as many columns as the vector constants, or
        ``x_kinds`` names an unknown kind or a different number of columns.
    """

    x_center: np.ndarray | float | None = None
    x_scale: np.ndarray | float | None = None
    y_center: float = 0.0
    y_scale: float = 1.0
    x_public: np.ndarray | None = None
    x_kinds: tuple[str, ...] | None = None

    def __post_init__(self):
        for name in ("x_center", "x_scale"):
            value = getattr(self, name)
            if value is not None:
                value = np.array(value, dtype=np.float64)
                if value.ndim > 1 or value.size == 0 or not np.isfinite(value).all():
                    raise ValueError(
                        f"{name} must be a finite scalar or non-empty 1-D vector, got {getattr(self, name)!r}"
                    )
                if name == "x_scale" and not (value > 0).all():
                    raise ValueError("x_scale must be > 0")
                value.flags.writeable = False
                object.__setattr__(self, name, value)
        lengths = {
            name: getattr(self, name).shape[0] for name in ("x_center", "x_scale") if _is_vector(getattr(self, name))
        }
        if len(set(lengths.values())) > 1:
            raise ValueError(
                f"x_center and x_scale must have the same length, got {lengths['x_center']} and {lengths['x_scale']}"
            )
        if self.x_public is not None:
            rows = np.array(self.x_public, dtype=np.float64)
            if rows.ndim != 2 or rows.shape[0] == 0 or not np.isfinite(rows).all():
                raise ValueError(f"x_public must be a finite 2-D table of public rows (m, d), got shape {rows.shape}")
            if lengths and rows.shape[1] != next(iter(lengths.values())):
                raise ValueError(f"x_public has {rows.shape[1]} columns, x_center and x_scale {max(lengths.values())}")
            rows.flags.writeable = False
            object.__setattr__(self, "x_public", rows)
        if self.x_kinds is not None:
            object.__setattr__(self, "x_kinds", _checked_kinds(self.x_kinds, lengths, self.x_public))
        for name in ("y_center", "y_scale"):
            value = float(getattr(self, name))
            if not np.isfinite(value) or (name == "y_scale" and value <= 0):
                raise ValueError(f"{name} must be finite{' and > 0' if name == 'y_scale' else ''}, got {value!r}")
            object.__setattr__(self, name, value)

    @classmethod
    def from_public(cls, X, y=None, *, keep_rows: bool = True, kinds="infer") -> Preprocessing:
        """Centre and scale estimated from **public** rows: column means and standard deviations
        of ``X`` (a column without spread keeps scale 1) and the mean and standard deviation of
        ``y`` (without ``y``, the response is left as it is: the logistic and Poisson releases,
        whose labels and counts are not rescaled).

        The rows must be public (a published sample, rows whose owners consented, a pilot
        study): the constants, and with ``keep_rows`` the covariate rows themselves, are
        released with every release that uses them, without noise.  A release refuses private
        data that share a row with the kept public rows (so the private table itself cannot pass
        for public), but nothing can check that rows of other people are public (the command
        line's ``--standardize-from`` refuses its private input file and overlapping rows; see
        ``docs/privacy.md``).  A few dozen rows suffice; the estimate need not be good, only
        public, since the release's bounds are set on the scale it defines.

        Parameters
        ----------
        X : array_like or pandas.DataFrame, shape (m, d)
            Public covariates (m ≥ 2, finite).
        y : array_like, shape (m,), optional
            Public responses (finite, not all equal); None: y ↦ y.
        keep_rows : bool, default True
            Keep the covariate rows as ``x_public``: they travel with releases (and their files),
            the logistic and Poisson models take their continuous columns' marginal shapes into
            the covariates' law, and releases check the private rows against them.  False keeps
            only the constants.
        kinds : sequence of str, "infer" or None, default "infer"
            ``x_kinds``: each column's kind ("binary", "continuous" or "categorical:<name>"), or ``"infer"``: binary
            where every public value is 0 or 1, continuous elsewhere (facts of the public rows;
            declare the kinds where a column could take other values than the public rows
            show, e.g. a count seen only as 0 and 1).  None: no kinds (the GLMs then take the
            public rows themselves as the covariates' law).

        Returns
        -------
        Preprocessing
            x ↦ (x − mean)/sd, y ↦ (y − mean)/sd (y ↦ y without ``y``).

        Raises
        ------
        ValueError
            Naming ``X`` or ``y``: not numeric, ``X`` not 2-D, ``y`` not 1-D, their row counts
            differ, fewer than two rows are given, a value is not finite, or ``y`` has no spread.

        Examples
        --------
        >>> import numpy as np
        >>> prep = Preprocessing.from_public(np.array([[1.0, 5.0], [3.0, 5.0]]), np.array([0.0, 2.0]))
        >>> prep.transform_x([[2.0, 6.0]])
        array([[0., 1.]])
        """
        A = as_float_array(X, "X")
        if A.ndim != 2 or A.shape[1] == 0:
            raise ValueError(f"X must be a 2-D table of public rows (m, d) with d ≥ 1, got shape {A.shape}")
        if A.shape[0] < 2:
            raise ValueError(f"X: at least 2 public rows are needed, got {A.shape[0]}")
        if not np.isfinite(A).all():
            raise ValueError("X must be finite (no NaN or inf)")
        b = np.zeros(2) if y is None else as_float_array(y, "y")
        if y is not None:
            if b.ndim != 1:
                raise ValueError(f"y must be a 1-D array of public responses (m,), got shape {b.shape}")
            if b.shape[0] != A.shape[0]:
                raise ValueError(f"X and y must have the same number of public rows, got {A.shape[0]} and {b.shape[0]}")
            if not np.isfinite(b).all():
                raise ValueError("y must be finite (no NaN or inf)")
            if not b.std() > 0:
                raise ValueError("y has no spread in the public rows: its scale cannot be estimated")
        sd = A.std(axis=0)
        return cls(
            x_center=A.mean(axis=0),
            x_scale=np.where(sd > 0, sd, 1.0),
            y_center=0.0 if y is None else b.mean(),
            y_scale=1.0 if y is None else b.std(),
            x_public=A if check_bool("keep_rows", keep_rows) else None,
            x_kinds=inferred_kinds(A) if isinstance(kinds, str) and kinds == "infer" else kinds,
        )

    @property
    def standardises_x(self) -> bool:
        """True when a public covariate scale is applied (covariates then have about unit scale)."""
        return self.x_scale is not None

    def transform_x(self, X) -> np.ndarray:
        """(X − x_center)/x_scale as a new float64 array (n, d), saturated at ±``FLOAT_MAX``.

        The map is total on finite rows: a value whose image overflows (a tiny public scale, a
        centre far from the data) becomes ±``FLOAT_MAX`` instead of ±inf, so that no public
        constant can make a release's outcome depend on how far a private value lies from it;
        the release then projects or clips the row onto its public bound as it does any other.

        Parameters
        ----------
        X : array_like, shape (n, d)
            Finite covariates on the original scale.

        Returns
        -------
        numpy.ndarray
            The transformed covariates, finite.

        Raises
        ------
        ValueError
            If ``X`` is not 2-D, not finite (the data's domain, whatever the constants), or its
            width does not match the constants.
        """
        A = np.array(X, dtype=np.float64, copy=True)
        if A.ndim != 2:
            raise ValueError(f"X must be 2-D, got shape {A.shape}")
        for name, value in (("x_center", self.x_center), ("x_scale", self.x_scale)):
            if value is not None and value.ndim == 1 and value.shape[0] != A.shape[1]:
                raise ValueError(f"{name} has length {value.shape[0]}, X has {A.shape[1]} columns")
        return _saturated_affine(A, self.x_center, self.x_scale, "X")

    def transform_y(self, y) -> np.ndarray:
        """(y − y_center)/y_scale, saturated at ±``FLOAT_MAX`` as :meth:`transform_x` is.

        Parameters
        ----------
        y : array_like
            Finite responses on the original scale.

        Returns
        -------
        numpy.ndarray
            The transformed responses, finite.

        Raises
        ------
        ValueError
            If ``y`` is not finite.
        """
        return _saturated_affine(np.array(y, dtype=np.float64, copy=True), self.y_center, self.y_scale, "y")

    def inverse_y(self, values) -> np.ndarray:
        """y_center + y_scale·values: predictions back on the original response scale.

        Parameters
        ----------
        values : array_like
            Values on the transformed response scale.

        Returns
        -------
        numpy.ndarray
            The values on the original response scale.
        """
        return self.y_center + self.y_scale * np.asarray(values, dtype=np.float64)


def inferred_kinds(rows: np.ndarray) -> tuple[str, ...]:
    """The column kinds public rows show: "binary" for a column whose values are all 0 or 1,
    "continuous" for the others (a categorical's indicators are declared, not inferred).

    Parameters
    ----------
    rows : numpy.ndarray, shape (m, d)
        Public rows on the original scale.

    Returns
    -------
    tuple of str
        One kind per column.
    """
    return tuple("binary" if np.isin(column, (0.0, 1.0)).all() else "continuous" for column in rows.T)


def check_column_kinds(name: str, kinds) -> tuple[str, ...]:
    """``kinds`` as a tuple of :data:`COLUMN_KINDS`, refused with a ValueError naming ``name``
    where it is a single string, holds a non-string or names an unknown kind.

    Parameters
    ----------
    name : str
        The argument's name, for the message.
    kinds : sequence of str
        One kind per column.

    Returns
    -------
    tuple of str
        The kinds.
    """
    if isinstance(kinds, str) or not all(isinstance(kind, str) for kind in kinds):
        raise ValueError(f"{name} must be a sequence of column kinds {list(COLUMN_KINDS)}, got {kinds!r}")
    kinds = tuple(kinds)
    unknown = sorted(kind for kind in set(kinds) if not is_column_kind(kind))
    if unknown:
        raise ValueError(f"{name}: {unknown} are not column kinds; choose from {list(COLUMN_KINDS)}")
    return kinds


def affine_vectors(preprocessing, d: int) -> tuple[np.ndarray, np.ndarray]:
    """The public map's x_center and x_scale of a preprocessing (or None) as new length-d float64
    vectors, 0 and 1 where it sets none.

    Parameters
    ----------
    preprocessing : Preprocessing or None
        The release's public map.
    d : int
        The number of covariates.

    Returns
    -------
    center, scale : numpy.ndarray
        Shape (d,) each.
    """
    center = None if preprocessing is None else preprocessing.x_center
    scale = None if preprocessing is None else preprocessing.x_scale
    return (
        np.array(np.broadcast_to(0.0 if center is None else center, (d,)), dtype=np.float64),
        np.array(np.broadcast_to(1.0 if scale is None else scale, (d,)), dtype=np.float64),
    )


def _checked_kinds(kinds, lengths: dict, rows) -> tuple[str, ...]:
    """``x_kinds`` as a tuple (:func:`check_column_kinds`), refused (ValueError naming it) with a
    length other than the constants' or the public rows' width."""
    kinds = check_column_kinds("x_kinds", kinds)
    widths = set(lengths.values()) | ({rows.shape[1]} if rows is not None else set())
    if widths and widths != {len(kinds)}:
        raise ValueError(f"x_kinds names {len(kinds)} columns, the covariates have {max(widths)}")
    return kinds


def _is_vector(value) -> bool:
    return isinstance(value, np.ndarray) and value.ndim == 1


def check_glm_preprocessing(preprocessing) -> None:
    """ValueError unless ``preprocessing`` is None or a :class:`Preprocessing` of the covariates
    only (a logistic or Poisson release does not rescale its labels or counts).

    Parameters
    ----------
    preprocessing : Preprocessing or None
        What a release was given.

    Raises
    ------
    ValueError
        Naming the argument.
    """
    if preprocessing is None:
        return
    if not isinstance(preprocessing, Preprocessing):
        raise ValueError(f"preprocessing must be a Preprocessing, got {type(preprocessing).__name__}")
    if preprocessing.y_center != 0.0 or preprocessing.y_scale != 1.0:
        raise ValueError("preprocessing: labels and counts are not rescaled; give y_center=0 and y_scale=1")


def shared_row_count(public_rows, private_rows) -> int:
    """How many of ``public_rows`` a private table shows to be private rows: public rows equal to
    a private row that holds a value no other private row has in its column (an identifying row:
    a continuous measurement, an exact date), or all of them when the public table is contained
    in the private one (as a multiset) and has at least half its rows (the private table, or most
    of it, passed for public).  Values are compared to about 12 significant digits (40 bits of
    mantissa and the exponent), so that a copy written with other digits (a CSV re-saved) still
    matches; −0.0 and 0.0 alike.

    A row whose every value is shared with other private rows in its column (a pattern of binary
    or categorical covariates, even a pattern that occurs once) is not counted: public rows of
    such data meet it by chance.

    Parameters
    ----------
    public_rows, private_rows : array_like, shape (m, k) and (n, k)
        Numeric tables over the same columns in the same order.

    Returns
    -------
    int
        The number of public rows found to be private.

    Raises
    ------
    ValueError
        If the tables have different numbers of columns.

    Examples
    --------
    >>> shared_row_count([[1.0, 2.0], [3.0, 4.0]], [[3.0, 4.0 + 1e-15], [5.0, 6.0], [7.0, 8.0]])
    1
    >>> shared_row_count([[0.0, 1.0]], [[0.0, 1.0], [0.0, 0.0], [1.0, 1.0]])  # binary values: no row identifies
    0
    """

    def keys(rows):
        mantissa, exponent = np.frexp(np.atleast_2d(np.asarray(rows, dtype=np.float64)) + 0.0)
        return np.round(mantissa * 2.0**40).astype(np.int64) * 2048 + exponent  # |exponent| < 1100

    public, private = keys(public_rows), keys(private_rows)
    if public.shape[1] != private.shape[1]:
        raise ValueError(f"the tables have {public.shape[1]} and {private.shape[1]} columns")
    wanted: dict[bytes, int] = {}
    for row in np.ascontiguousarray(public):
        wanted[row.tobytes()] = wanted.get(row.tobytes(), 0) + 1
    candidates = np.ascontiguousarray(private[np.isin(private[:, 0], public[:, 0])])  # a cheap first pass
    counts: dict[bytes, int] = {}
    for row in candidates:
        counts[row.tobytes()] = counts.get(row.tobytes(), 0) + 1
    contained = all(counts.get(key, 0) >= times for key, times in wanted.items())
    if contained and 2 * public.shape[0] >= private.shape[0]:
        return public.shape[0]
    matched = [key for key in wanted if key in counts]
    if not matched:
        return 0
    rows = np.frombuffer(b"".join(matched), dtype=np.int64).reshape(len(matched), -1)
    identifying = np.zeros(len(matched), dtype=bool)
    for column, values in zip(private.T, rows.T, strict=True):  # a value once in its column identifies its row
        distinct, occurrences = np.unique(column, return_counts=True)
        identifying |= occurrences[np.searchsorted(distinct, values)] == 1
    return sum(wanted[key] for key, named in zip(matched, identifying, strict=True) if named)


def public_rows_refusal(preprocessing, X) -> str | None:
    """The refusal a release raises, charged, when ``preprocessing`` kept public rows
    (``x_public``) that the private covariates ``X`` show to be private (:func:`shared_row_count`:
    a public row equal to a private row holding a value no other private row has in its column,
    or the private table passed for public); None when there is nothing to refuse.

    The rows and the constants estimated from them are published without noise, so they must not
    be private.  Whether they are is a fact about the private data: refused for free, one call
    per candidate row would tell whether that person is in the data (a membership oracle).  The
    release therefore raises this refusal *inside* its reservation
    (``release_guard(..., refusal=...)``), so that it costs the release's (ε, δ) and the number of
    such probes is bounded by the budget, and the message names no row and no count.

    Parameters
    ----------
    preprocessing : Preprocessing or None
        What a release was given (None, or one without kept rows, has nothing to refuse).
    X : array_like, shape (n, d)
        The private covariates on their original scale.

    Returns
    -------
    str or None
        The message of the refusal (the same whichever and however many rows matched), or None.

    Raises
    ------
    ValueError
        Naming ``preprocessing`` when its public rows have another width than ``X`` (public
        shapes only, before anything is spent).
    """
    rows = getattr(preprocessing, "x_public", None)
    if rows is None:
        return None
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] != rows.shape[1]:
        raise ValueError(f"preprocessing: its public rows have {rows.shape[1]} columns, X has shape {X.shape}")
    if not shared_row_count(rows, X):
        return None
    return (
        "preprocessing: its public rows include rows of the private X; the public rows and constants are "
        "published without noise, so they must come from people not in the private data. Nothing was released, "
        "and the release's (epsilon, delta) was spent: a free refusal would tell whether given rows are private"
    )


def preprocessed_rows(preprocessing, X, *, allow_empty: bool = False) -> tuple[np.ndarray, str | None]:
    """The private covariates through ``preprocessing``, with the charged refusal they call for.

    Parameters
    ----------
    preprocessing : Preprocessing or None
        The public map (None: the rows as they are).
    X : array_like, shape (n, d)
        The private covariates on their original scale.
    allow_empty : bool, default False
        Take a table of no rows (a release under add/remove neighbours; see
        :func:`~pm_private.privacy.validation.as_matrix`).

    Returns
    -------
    rows : numpy.ndarray, shape (n, d)
        :meth:`Preprocessing.transform_x` of the rows (finite, saturated), or the rows as a
        float64 array.
    refusal : str or None
        ``public_rows_refusal``: for the release to raise inside its reservation.

    Raises
    ------
    ValueError
        Naming ``X`` (not a finite 2-D table) or ``preprocessing`` (public rows of another width).
    """
    rows = as_matrix(X, allow_empty=allow_empty)
    if preprocessing is None:
        return rows, None
    refusal = public_rows_refusal(preprocessing, rows)
    return preprocessing.transform_x(rows), refusal
