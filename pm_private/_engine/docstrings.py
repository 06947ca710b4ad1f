"""Numpydoc parameter entries shared by a base class and its subclasses, written once.

A base class derived from :class:`SharedParameterDocs` documents the fields every subclass
carries; each subclass's ``Parameters`` section gains those entries where the subclass does not
describe the field itself (:func:`inherit_parameters`, as pandas' ``doc`` decorator and SciPy's
``doccer`` fill shared text in).  The subclass's docstring in the source then lists only its own
fields; ``help()`` and the rendered documentation show them all.
"""

from __future__ import annotations

import inspect

__all__ = ["SharedParameterDocs", "inherit_parameters", "parameter_entries", "parameters_from"]


def _header(lines: list[str], i: int) -> bool:
    """Whether line i of cleaned ``lines`` is a numpydoc section header (a name over dashes)."""
    return i + 1 < len(lines) and bool(lines[i]) and lines[i][0] != " " and set(lines[i + 1]) == {"-"}


def _section(lines: list[str], name: str) -> tuple[int, int] | None:
    """(first entry line, end) of the numpydoc section ``name`` in cleaned ``lines``, or None."""
    headers = [i for i in range(len(lines)) if _header(lines, i)]
    for position, i in enumerate(headers):
        if lines[i] == name:
            end = headers[position + 1] if position + 1 < len(headers) else len(lines)
            while end > i + 2 and not lines[end - 1].strip():
                end -= 1
            return i + 2, end
    return None


#: numpydoc's order of sections (``Attributes`` and ``Methods`` in a class's docstring).
SECTIONS = (
    "Parameters",
    "Attributes",
    "Methods",
    "Returns",
    "Yields",
    "Receives",
    "Other Parameters",
    "Raises",
    "Warns",
    "Warnings",
    "See Also",
    "Notes",
    "References",
    "Examples",
)


def _insert_section(lines: list[str], name: str, body: list[str]) -> None:
    """Insert the section ``name`` with ``body`` into cleaned ``lines`` where numpydoc's order puts
    it: before the first section that follows it in ``SECTIONS``, else at the end."""
    later = SECTIONS[SECTIONS.index(name) + 1 :]
    at = next((i for i in range(len(lines)) if _header(lines, i) and lines[i] in later), len(lines) + 1) - 1
    lines[at:at] = ["", name, "-" * len(name), *body]


def _doc_of(source) -> str | None:
    """The docstring of a function or class, or ``source`` itself when it is a text."""
    return source if isinstance(source, str) else source.__doc__


def _with_section(doc: str, name: str, source: str | None) -> str:
    """``doc`` (cleaned) with the section ``name`` of ``source`` added where ``doc`` lacks it, in
    numpydoc's order; ``doc`` as it is where it has the section or ``source`` has none."""
    lines = inspect.cleandoc(doc).splitlines()
    body = inspect.cleandoc(source or "").splitlines()
    span = _section(body, name)
    if _section(lines, name) is None and span is not None:
        _insert_section(lines, name, body[span[0] : span[1]])
    return "\n".join(lines)


def parameter_entries(doc: str | None) -> dict[str, str]:
    """The entries of the ``Parameters`` section of ``doc``, by parameter name.

    Parameters
    ----------
    doc : str or None
        A numpydoc docstring.

    Returns
    -------
    dict of str to str
        Each entry's lines (its ``name : type`` line and its indented description), dedented.

    Examples
    --------
    >>> parameter_entries("Summary.\\n\\nParameters\\n----------\\nx : int\\n    A value.\\n")
    {'x': 'x : int\\n    A value.'}
    """
    lines = inspect.cleandoc(doc or "").splitlines()
    span = _section(lines, "Parameters")
    entries: dict[str, list[str]] = {}
    for line in lines[span[0] : span[1]] if span else ():
        if line and line[0] != " ":
            names = line.split(" : ")[0]
            entries[names] = [line]
            current = entries[names]
        elif entries:
            current.append(line)
    return {name: "\n".join(entry).rstrip() for name, entry in entries.items()}


def inherit_parameters(doc: str | None, inherited: dict[str, str], order: list[str] | None = None) -> str | None:
    """``doc`` with the ``inherited`` entries it lacks added to its ``Parameters`` section.

    Parameters
    ----------
    doc : str or None
        A subclass's numpydoc docstring; None (``python -OO``) is returned as is.
    inherited : dict of str to str
        Entries by name (:func:`parameter_entries` of the base class's docstring).
    order : list of str, optional
        Parameter names in the order the section should list them (a signature's); entries it
        does not name follow those it does.  None: the inherited entries follow the docstring's own.

    Returns
    -------
    str or None
        The cleaned docstring with the missing entries in its ``Parameters`` section (a new
        section where numpydoc's order puts it, where it has none).

    Examples
    --------
    >>> base = parameter_entries("Base.\\n\\nParameters\\n----------\\nepsilon : float\\n    The ε.\\n")
    >>> print(inherit_parameters("Sub.\\n\\nParameters\\n----------\\nx : int\\n    A value.\\n", base))
    Sub.
    <BLANKLINE>
    Parameters
    ----------
    x : int
        A value.
    epsilon : float
        The ε.
    """
    if doc is None:
        return None
    lines = inspect.cleandoc(doc).splitlines()
    own = parameter_entries(doc)
    described = {name.strip() for names in own for name in names.split(",")}
    entries = list(own.items()) + [(name, entry) for name, entry in inherited.items() if name not in described]
    if order is not None:
        rank = {name: i for i, name in enumerate(order)}
        entries.sort(key=lambda item: rank.get(item[0].split(",")[0].strip(), len(rank)))
    if _section(lines, "Parameters") is None:
        _insert_section(lines, "Parameters", [])
    span = _section(lines, "Parameters")
    section = "\n".join(entry for _, entry in entries).splitlines()
    return "\n".join(lines[: span[0]] + section + lines[span[1] :])


def parameters_from(*sources, sections: tuple[str, ...] = ()):
    """Decorator: the function's ``Parameters`` section gains, for each parameter of its signature
    that it does not describe, the entry of the first of ``sources`` that does, and lists the
    parameters in the signature's order; each of ``sections`` it lacks is copied from the first
    source.

    For sibling functions that take the same arguments (two mechanisms on the same data): the
    second describes only what differs, and reads in full in ``help()`` and the documentation.

    Parameters
    ----------
    *sources : callable or str
        Functions (or classes) whose docstrings describe the shared parameters, or texts with a
        ``Parameters`` section (the entries a family of functions shares, written once beside
        the code they share).
    sections : tuple of str, default ()
        Whole sections (``"Returns"``, ``"Raises"``) to take from the first source where the
        function's docstring has none.

    Returns
    -------
    callable
        The decorator; it returns the function itself, its ``__doc__`` completed.

    Examples
    --------
    >>> def release(X, epsilon):
    ...     '''Release.
    ...
    ...     Parameters
    ...     ----------
    ...     X : array_like
    ...         Private rows.
    ...     epsilon : float
    ...         ε > 0.
    ...     '''
    >>> @parameters_from(release)
    ... def other_release(X, epsilon):
    ...     '''Another release.
    ...
    ...     Parameters
    ...     ----------
    ...     epsilon : float
    ...         ε > 0, split in two.
    ...     '''
    >>> print(other_release.__doc__)
    Another release.
    <BLANKLINE>
    Parameters
    ----------
    X : array_like
        Private rows.
    epsilon : float
        ε > 0, split in two.
    """

    def decorate(function):
        names = list(inspect.signature(function).parameters)
        entries: dict[str, str] = {}
        for source in reversed(sources):
            entries.update(parameter_entries(_doc_of(source)))
        inherited = {name: entries[name] for name in names if name in entries}
        doc = inherit_parameters(function.__doc__, inherited, order=names)
        for name in sections if doc is not None else ():  # None under python -OO
            doc = _with_section(doc, name, _doc_of(sources[0]))
        function.__doc__ = doc
        return function

    return decorate


class SharedParameterDocs:
    """Mixin: the ``Parameters`` entries of every base derived from it are appended to a
    subclass's docstring where the subclass does not describe those parameters itself.

    Examples
    --------
    >>> class Base(SharedParameterDocs):
    ...     '''Base.
    ...
    ...     Parameters
    ...     ----------
    ...     n : int
    ...         The number of records.
    ...     '''
    >>> class Sub(Base):
    ...     '''Sub.'''
    >>> print(Sub.__doc__)
    Sub.
    <BLANKLINE>
    Parameters
    ----------
    n : int
        The number of records.
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for base in cls.__mro__[1:]:
            if issubclass(base, SharedParameterDocs) and base is not SharedParameterDocs and "__doc__" in vars(base):
                cls.__doc__ = inherit_parameters(cls.__doc__, parameter_entries(base.__doc__))
