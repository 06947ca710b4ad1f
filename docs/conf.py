"""Sphinx configuration of the pm_private documentation (pydata-sphinx-theme, numpydoc, myst-nb).

Build: ``scripts/docs`` (or ``sphinx-build -W -b html docs docs/_build/html``).  Two parts are
generated here at every build and not stored: ``api/`` (one autosummary page per subpackage,
listing exactly the public names of that package's lazy ``_NAMES`` table, so the reference
cannot drift from what ``import pm_private.<package>`` exposes) and ``examples/`` (the
notebooks of ``notebooks/``, rendered from their stored outputs, never executed).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import re
import shutil
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))

import pm_private  # noqa: E402  (the checkout's package, put on the path above)

project = "pm_private"
author = "pm_private developers"
copyright = "pm_private developers"
release = importlib.metadata.version("pm_private")
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.intersphinx",
    "numpydoc",
    "myst_nb",
    "sphinx_copybutton",
]

source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "**.ipynb_checkpoints"]
templates_path = ["_templates"]

# API reference ------------------------------------------------------------------------------
nitpicky = True  # a cross-reference that resolves to nothing fails the build
nitpick_ignore = [
    ("py:func", "numpy.random.default_rng"),  # NumPy's docs are not linked (the build is offline)
]
# Links into other projects' docs from inventories stored in docs/_inventories (the build is
# offline): the Python standard library's and scikit-learn's, taken from Debian's python3.11-doc
# and python-sklearn-doc packages.  NumPy, PyMC and ArviZ publish theirs only online; a project
# whose file is absent is left out, and its names stay unlinked.
_INVENTORIES = {
    "python": "https://docs.python.org/3/",
    "scikit-learn": "https://scikit-learn.org/stable/",
    "numpy": "https://numpy.org/doc/stable/",
    "pymc": "https://www.pymc.io/projects/docs/en/stable/",
    "arviz": "https://python.arviz.org/en/stable/",
}
intersphinx_mapping = {
    name: (url, str(DOCS / "_inventories" / f"{name}.inv"))
    for name, url in _INVENTORIES.items()
    if (DOCS / "_inventories" / f"{name}.inv").is_file()
}
intersphinx_disabled_reftypes = ["std:doc"]
autosummary_generate = True
autosummary_imported_members = True
autodoc_typehints = "none"  # numpydoc's "Parameters" sections carry the types
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# Every documented public object is checked against numpydoc's standard: a docstring (GL08), every
# parameter documented (PR01) and no unknown one (PR02), a Returns section for functions and
# methods (RT01).  A failing check is a warning, hence a failed build.
numpydoc_validation_checks = {"GL08", "PR01", "PR02", "RT01"}
numpydoc_validation_exclude: set[str] = set()  # no exceptions: every public object is checked


# Notebooks -----------------------------------------------------------------------------------
nb_execution_mode = "off"  # rendered from the outputs stored in notebooks/*.ipynb
myst_enable_extensions = ["dollarmath", "amsmath"]
suppress_warnings = ["mystnb.unknown_mime_type"]

# HTML ----------------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = "pm_private"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    # The pages of wide tables (the privacy table, the samplers' measurements, the notebooks'
    # data frames) drop both side columns and give the article the page's width.
    "secondary_sidebar_items": {
        **dict.fromkeys(["index", "model-selection", "examples", "api/**"], ["page-toc"]),
        **dict.fromkeys(["privacy", "samplers", "examples/*"], []),
    },
}
html_sidebars = {
    **dict.fromkeys(["index", "model-selection", "examples", "api/**"], ["sidebar-nav-bs"]),
    **dict.fromkeys(["privacy", "samplers", "examples/*"], []),
}
html_static_path: list[str] = ["_static"]
html_css_files = ["layout.css"]  # long names wrap where they overflow, wide tables scroll, nothing split mid-word


def _local_mathjax() -> str | None:
    """Serve MathJax 3 with the pages, from the ``django-static-mathjax`` package (which only
    ships MathJax's files, no Django): the pages then typeset formulas without a network.

    Copies the single-file TeX component and its fonts into ``_static_mathjax/`` (generated,
    not stored) and returns the script's path under ``_static``; None when the package is not
    installed (Sphinx then loads MathJax from its public CDN).
    """
    spec = importlib.util.find_spec("mathjax")
    if spec is None or not spec.submodule_search_locations:
        return None
    es5 = Path(next(iter(spec.submodule_search_locations))) / "static" / "mathjax" / "es5"
    if not (es5 / "tex-chtml-full.js").is_file():
        return None
    target = DOCS / "_static_mathjax" / "mathjax"
    fonts = Path("output") / "chtml" / "fonts" / "woff-v2"
    (target / fonts).mkdir(parents=True, exist_ok=True)
    for source in [es5 / "tex-chtml-full.js", *sorted((es5 / fonts).iterdir())]:
        destination = target / source.relative_to(es5)
        if not destination.exists() or destination.stat().st_size != source.stat().st_size:
            shutil.copyfile(source, destination)
    html_static_path.append("_static_mathjax")
    return "mathjax/tex-chtml-full.js"


if (_mathjax := _local_mathjax()) is not None:
    mathjax_path = _mathjax


def _subpackages() -> dict[str, str]:
    """Every public subpackage of pm_private (those with lazy names) and public top-level module
    (those with ``__all__``, the registry aside: it has its own page), and its page title: the part
    of its docstring's first sentence before the colon, so that a new family, a folder or one
    module, gets a page without a list to edit."""
    import pkgutil

    import pm_private

    found = {}
    for info in pkgutil.iter_modules(pm_private.__path__):
        if not info.name.startswith("_") and info.name != "families":
            module = importlib.import_module(f"pm_private.{info.name}")
            if hasattr(module, "_NAMES" if info.ispkg else "__all__"):
                summary = " ".join((module.__doc__ or info.name).split())
                found[info.name] = summary.split(":")[0].split(". ")[0].rstrip(".")
    return found


SUBPACKAGES = _subpackages()


def _public_names(package: str) -> list[str]:
    """Autosummary entries for the public names of ``pm_private.<package>``.

    A name that is also a submodule's (``linear.adassp``) would make autosummary document the
    module: such entries name the defining module explicitly and display the short name.
    """
    module = importlib.import_module(f"pm_private.{package}")
    names = getattr(module, "_NAMES", None)
    if names is None:
        return list(module.__all__)
    entries = []
    for name, where in names.items():
        submodule = importlib.util.find_spec(f"pm_private.{package}.{name}") is not None
        entries.append(f"~{where.lstrip('.')}.{name}" if submodule else name)
    return entries


def _defining_modules(package: str) -> list[str]:
    """The submodules (relative, e.g. ``.adassp``) that define the public names of a package;
    none for a module."""
    module = importlib.import_module(f"pm_private.{package}")
    if not hasattr(module, "__path__"):
        return []
    names = getattr(module, "_NAMES", None)
    if names is not None:
        return sorted(set(names.values()))
    return sorted(
        {
            "." + getattr(module, name).__module__.rsplit(".", 1)[1]
            for name in module.__all__
            if hasattr(getattr(module, name), "__module__")
        }
    )


def _write_if_changed(path: Path, text: str) -> None:
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def _write_api_pages() -> None:
    """One page per subpackage (module docstring + autosummary of its public names) and an index."""
    api = DOCS / "api"
    for stale in ("generated", "modules"):  # pages of names or modules no longer public go too
        shutil.rmtree(api / stale, ignore_errors=True)
    for page in api.glob("pm_private.*.rst"):  # and pages of packages no longer public (or of another branch)
        if page.stem.removeprefix("pm_private.") not in SUBPACKAGES:
            page.unlink()
    (api / "modules").mkdir(parents=True)
    pages = []
    for package, title in SUBPACKAGES.items():
        full = f"pm_private.{package}"
        names = "\n".join(f"   {name}" for name in _public_names(package))
        heading = f"``{full}``: {title}"
        text = (
            f"{heading}\n{'=' * len(heading)}\n\n"
            f".. automodule:: {full}\n   :no-members:\n\n"
            f".. currentmodule:: {full}\n\n"
            f".. autosummary::\n   :toctree: generated/\n   :nosignatures:\n\n{names}\n"
        )
        modules = sorted(
            name
            for name in {importlib.util.resolve_name(where, full) for where in _defining_modules(package)}
            if not any(part.startswith("_") for part in name.split("."))  # private modules stay out of the menu
        )
        for name in modules:
            title_ = f"``{name}``"
            _write_if_changed(
                api / "modules" / f"{name}.rst",
                f"{title_}\n{'=' * len(title_)}\n\n.. automodule:: {name}\n   :no-members:\n",
            )
        listing = "\n".join(f"   modules/{name}" for name in modules)
        if modules:
            text += (
                "\nModules\n-------\n\nThe module docstrings state each mechanism's guarantee, its sensitivity proofs "
                f"and every departure from the cited papers.\n\n.. toctree::\n   :maxdepth: 1\n\n{listing}\n"
            )
        _write_if_changed(api / f"{full}.rst", text)
        pages.append(full)
    top = pm_private._NAMES
    rows = "\n".join(
        f"   * - ``pm_private.{name}``\n     - :obj:`{_canonical(name, module)}`" for name, module in top.items()
    )
    toctree = "\n".join(f"   {page}" for page in pages)
    index = (
        "API reference\n=============\n\n"
        ".. automodule:: pm_private\n   :no-members:\n\n"
        ".. list-table:: Names importable from ``pm_private`` and where they are documented\n"
        "   :header-rows: 1\n   :widths: 40 60\n\n"
        "   * - top-level name\n     - documented as\n"
        f"{rows}\n\n"
        f".. toctree::\n   :maxdepth: 1\n   :caption: Subpackages\n\n   families\n{toctree}\n"
    )
    _write_if_changed(api / "index.rst", index)
    _write_if_changed(api / "families.rst", _families_page())


def _families_page() -> str:
    """The family registry (:mod:`pm_private.families`) as a table: every family's verbs and facts."""
    from pm_private.families import FAMILIES

    def ref(hook) -> str:
        return "—" if hook is None else f":obj:`~{'.'.join(hook.module.split('.')[:2])}.{hook.name}`"

    def release(family) -> str:
        own = ref(family.release)
        return own if family.statistics_of is None else f"the {family.statistics_of} family's"

    rows = "\n".join(
        f"   * - ``{family.name}``\n     - {family.title}\n     - {release(family)}\n     - {ref(family.builder)}"
        f"\n     - {ref(family.setter)}\n     - {ref(family.predictor)}\n     - ``{family.link.name}``"
        f"\n     - {'``pm-private release ' + family.command + '``' if family.command else '—'}\n     - {family.start}"
        for family in FAMILIES.values()
    )
    return (
        "Model families\n==============\n\n.. automodule:: pm_private.families\n   :no-members:\n\n"
        ".. list-table:: The registry ``pm_private.families.FAMILIES``\n   :header-rows: 1\n\n"
        "   * - family\n     - fits\n     - release\n     - builder\n     - setter\n     - predictor\n"
        f"     - link\n     - command line\n     - NUTS start\n{rows}\n"
    )


def _canonical(name: str, module: str) -> str:
    """``pm_private.<package>.<name>`` for a top-level name defined in ``.<package>.<module>``."""
    return f"pm_private.{module.lstrip('.').split('.')[0]}.{name}"


def _copy_notebooks() -> None:
    examples = DOCS / "examples"
    examples.mkdir(exist_ok=True)
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        target = examples / notebook.name
        if not target.exists() or target.read_bytes() != notebook.read_bytes():
            shutil.copyfile(notebook, target)


_LITERAL = re.compile(r"(``.*?``)")


def _escape_bars(line: str) -> str:
    """``|x|`` in prose is an absolute value or a norm, not a substitution: escape its bars
    (outside inline literals)."""
    parts = _LITERAL.split(line)
    return "".join(part if part.startswith("``") else part.replace("|", "\\|") for part in parts)


def _docstring_bars(app, what, name, obj, options, lines) -> None:
    """Escape ``|`` in docstring prose; leave literal blocks (after ``::``) and table rows alone."""
    literal_indent = None
    for i, line in enumerate(lines):
        indent = len(line) - len(line.lstrip())
        if literal_indent is not None and line.strip() and indent <= literal_indent:
            literal_indent = None
        if literal_indent is None and "|" in line and not line.lstrip().startswith(("|", "+")):
            lines[i] = _escape_bars(line)
        if literal_indent is None and line.rstrip().endswith("::"):
            literal_indent = indent


def _resolve_short_reference(app, env, node, contnode):
    """Resolve ``:func:`pm_private.linear.release_linear_stats``` and friends to the documented object.

    Docstrings name objects as users import them: from the top level, from the defining module
    (``pm_private.privacy.noise.l2_gamma_vector``) or unqualified.  Each public object is
    documented once, under its subpackage; a reference resolves to it when exactly one
    documented object ends with the reference's dotted name (or, failing that, its last part),
    among all objects or among those of the referring module.
    """
    if node.get("refdomain") != "py":
        return None
    domain = env.get_domain("py")
    target = node["reftarget"].lstrip("~.")
    module = node.get("py:module") or ""
    context = ".".join(filter(None, (module, node.get("py:class"))))
    candidates = [f"{context}.{target}"] if context else []
    documented = [name for name, entry in domain.objects.items() if not entry.aliased]
    for suffix in (target, target.rsplit(".", 1)[-1]):
        matches = [name for name in documented if name == suffix or name.endswith("." + suffix)]
        local = [name for name in matches if module and name.startswith(module + ".")]
        candidates += matches if len(matches) == 1 else local if len(local) == 1 else []
    for name in candidates:
        if name in domain.objects:
            return domain.resolve_xref(env, node["refdoc"], app.builder, "obj", name, node, contnode)
    return None


def _skip_metadata_routing(app, what, name, obj, skip, options):
    """scikit-learn adds ``set_*_request`` methods (metadata routing) to every estimator; their
    docstrings link into scikit-learn's own docs, which this offline build does not reach."""
    return True if name.startswith("set_") and name.endswith("_request") else None


def setup(app):
    app.connect("autodoc-process-docstring", _docstring_bars)
    app.connect("autodoc-skip-member", _skip_metadata_routing)
    app.connect("missing-reference", _resolve_short_reference)


_write_api_pages()
_copy_notebooks()
