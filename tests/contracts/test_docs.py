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


@pytest.mark.slow
def test_docs_build_without_warnings(tmp_path):
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
    assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-8000:]

    import pm_private.linear

    pages = {p.name for p in (html / "api" / "generated").glob("*.html")}
    assert "pm_private.linear.release_suff_stats.html" in pages
    documented = {p.split(".")[2] for p in pages if p.startswith("pm_private.linear.")}
    assert set(pm_private.linear.__all__) <= documented
    # A public name that is also a module's name must still document the function.
    assert '<dl class="py function">' in (html / "api" / "generated" / "pm_private.linear.adassp.html").read_text()
    privacy = (html / "privacy.html").read_text(encoding="utf-8")
    for mechanism in (
        "release_suff_stats",
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
