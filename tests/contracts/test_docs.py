"""The documentation builds with warnings as errors (what ``scripts/docs`` runs).

A fresh build into a temporary folder: every public name gets an API page, the notebooks are
rendered from their stored outputs (not executed), and any docstring that Sphinx, numpydoc or
MyST cannot parse fails the test with the warning in the message.
"""

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("sphinx")
pytest.importorskip("pydata_sphinx_theme")
pytest.importorskip("numpydoc")
pytest.importorskip("myst_nb")

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """One build shared by the tests of this module: (HTML folder, the finished sphinx run)."""
    tmp_path = tmp_path_factory.mktemp("docs")
    html = tmp_path / "html"
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-W",
            "--keep-going",
            "-q",
            "-b",
            "html",
            "-d",
            str(tmp_path / "doctrees"),
            str(ROOT / "docs"),
            str(html),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return html, build


@pytest.mark.slow
def test_docs_build_without_warnings(built):
    html, build = built
    assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-8000:]

    import pm_private.linear

    pages = {p.name for p in (html / "api" / "generated").glob("*.html")}
    assert "pm_private.linear.release_linear_stats_laplace.html" in pages
    documented = {p.split(".")[2] for p in pages if p.startswith("pm_private.linear.")}
    assert set(pm_private.linear.__all__) <= documented
    # A public name that is also a module's name must still document the function.
    assert '<dl class="py function">' in (html / "api" / "generated" / "pm_private.linear.adassp.html").read_text()
    privacy = (html / "privacy.html").read_text(encoding="utf-8")
    for mechanism in (
        "release_linear_stats",
        "adassp",
        "weibull_private",
        "output_perturbation",
        "objective_perturbation",
        "sanitized_loss",
        "DPElasticNetLogisticRegression",
        "select_penalty",
        "data_perturbation_sgd",
    ):
        assert mechanism in privacy
    assert (html / "examples" / "survival.html").exists()
    assert (html / "examples" / "private_logistic_regression.html").exists()

    api_menu = (html / "api" / "pm_private.linear.html").read_text(encoding="utf-8")
    assert "pm_private._engine" not in api_menu and "pm_private._dask" not in api_menu  # private modules
    assert "mathjax" in (html / "privacy.html").read_text(encoding="utf-8").lower()


@pytest.mark.slow
def test_docs_pages_fit_the_window(built):
    """The landing page, the privacy page and the longest API title, rendered in headless
    Chromium at 1280 and 1400 px: no horizontal overflow and nothing clipped sideways."""
    layout = _layout_script()
    browser = layout.find_browser()
    if browser is None:
        pytest.skip("no Chromium on this machine (apt-get install chromium)")
    html, build = built
    assert build.returncode == 0, build.stderr[-4000:]
    problems = layout.check(html, browser)
    assert not problems, "\n".join(problems[:30])


def _layout_script():
    import importlib.util

    spec = importlib.util.spec_from_file_location("docs_layout", ROOT / "scripts" / "docs_layout.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
