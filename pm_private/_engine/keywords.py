"""Keywords renamed across the public API, accepted under their old names for one release."""

from __future__ import annotations

import functools
import warnings

__all__ = ["name_first", "renamed_keywords"]


def renamed_keywords(**renames: str):
    """Decorator: accept each old keyword (``old="new"``) for the new one, with a ``FutureWarning``.

    The decorated function keeps its signature (``inspect.signature`` follows ``__wrapped__``).
    Passing both spellings is a ``TypeError``, as Python raises for a keyword given twice.

    Parameters
    ----------
    **renames : str
        Old keyword name → new keyword name.

    Examples
    --------
    >>> @renamed_keywords(prob="interval")
    ... def band(x, *, interval=0.95):
    ...     return interval
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     band(1, prob=0.5)
    0.5
    """

    def decorate(function):
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            for old, new in renames.items():
                if old in kwargs:
                    if new in kwargs:
                        raise TypeError(f"{function.__name__}() got both {old!r} and its new name {new!r}")
                    warnings.warn(
                        f"{function.__name__}: the keyword {old!r} is now {new!r}; {old!r} will be removed in the "
                        "next release",
                        FutureWarning,
                        stacklevel=2,
                    )
                    kwargs[new] = kwargs.pop(old)
            return function(*args, **kwargs)

        return wrapper

    return decorate


def name_first(keyword: str):
    """Decorator: accept the old call ``f(<name>, *args)``, whose first argument was a string now
    given as the keyword ``keyword``, with a ``FutureWarning``.

    Parameters
    ----------
    keyword : str
        The keyword the old first argument now goes to.

    Examples
    --------
    >>> @name_first("name")
    ... def update(stats, model=None, *, name="likelihood"):
    ...     return name, stats
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     update("other", 3)
    ('other', 3)
    """

    def decorate(function):
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            if args and isinstance(args[0], str):
                warnings.warn(
                    f"{function.__name__}({keyword}, ...) is now {function.__name__}(..., {keyword}=...); the "
                    "old order will be removed in the next release",
                    FutureWarning,
                    stacklevel=2,
                )
                kwargs[keyword] = args[0]
                args = args[1:]
            return function(*args, **kwargs)

        return wrapper

    return decorate
