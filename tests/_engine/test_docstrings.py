"""Docstring entries written once: what a reader gets from ``help()`` is every parameter, once."""

import dataclasses
import importlib
import inspect
import pkgutil

import pytest

import pm_private
from pm_private._engine.docstrings import SharedParameterDocs, inherit_parameters, parameter_entries, parameters_from
from pm_private.privacy.release import release_type


def _documented(doc) -> list[str]:
    return [name.strip() for names in parameter_entries(doc) for name in names.split(",")]


def _release_types():
    for module in pkgutil.walk_packages(pm_private.__path__, "pm_private."):
        if not module.name.endswith("__main__"):
            importlib.import_module(module.name)
    from pm_private.privacy.release import _REGISTRY

    return sorted(_REGISTRY)


@pytest.mark.parametrize("kind", _release_types())
def test_every_release_documents_each_of_its_fields_once(kind):
    cls = release_type(kind)
    documented = _documented(cls.__doc__)
    fields = [f.name for f in dataclasses.fields(cls) if f.init]
    assert sorted(documented) == sorted(fields)
    assert len(set(documented)) == len(documented)


def test_a_release_reads_the_base_text_of_a_field_it_does_not_describe():
    from pm_private.logistic.release import LogisticStatsRelease
    from pm_private.privacy.release import Release

    base = parameter_entries(Release.__doc__)
    own = parameter_entries(LogisticStatsRelease.__doc__)
    assert own["neighbours"] == base["neighbours"]
    assert own["epsilon"] != base["epsilon"]  # it describes its own: the ε OpenDP certifies


def test_a_subclass_keeps_its_own_entry_and_gains_the_missing_ones():
    class Base(SharedParameterDocs):
        """Base.

        Parameters
        ----------
        n : int
            Records.
        d : int
            Covariates.
        """

    class Sub(Base):
        """Sub.

        Parameters
        ----------
        n : int
            Persons.
        """

    assert parameter_entries(Sub.__doc__) == {"n": "n : int\n    Persons.", "d": "d : int\n    Covariates."}


def test_parameters_from_follows_the_signature_and_adds_missing_sections():
    shared = """
    Parameters
    ----------
    epsilon : float
        ε > 0.
    X : array_like
        Private rows.
    """

    def source(X, epsilon):
        """Source.

        Returns
        -------
        float
            A value.
        """

    @parameters_from(shared)
    @parameters_from(source, sections=("Returns",))
    def target(X, epsilon, *, unit=None):
        """Target.

        Parameters
        ----------
        unit : array_like, optional
            Persons.

        Notes
        -----
        A note.
        """

    assert _documented(target.__doc__) == ["X", "epsilon", "unit"]
    lines = inspect.cleandoc(target.__doc__).splitlines()
    assert lines.index("Returns") < lines.index("Notes")


def test_a_docstring_without_parameters_gains_the_section_before_its_first_one():
    doc = inherit_parameters(
        "Summary.\n\n    More.\n\n    Returns\n    -------\n    int\n        V.\n", {"x": "x : int\n    X."}
    )
    assert doc.splitlines()[4:8] == ["Parameters", "----------", "x : int", "    X."]
    assert inherit_parameters(None, {"x": "x : int"}) is None


def test_a_text_source_gives_its_sections_too():
    shared = """
    Parameters
    ----------
    x : int
        A value.

    Returns
    -------
    int
        The value.
    """

    @parameters_from(shared, sections=("Returns",))
    def target(x):
        """Target."""

    lines = inspect.cleandoc(target.__doc__).splitlines()
    assert lines[lines.index("Returns") + 2 :] == ["int", "    The value."]


def test_a_new_parameters_section_goes_before_a_class_attributes_section():
    doc = inherit_parameters("Summary.\n\n    Attributes\n    ----------\n    a : int\n        A.\n", {"x": "x : int"})
    lines = doc.splitlines()
    assert lines.index("Parameters") < lines.index("Attributes")
