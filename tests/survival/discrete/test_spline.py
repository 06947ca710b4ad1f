"""Tests of the natural cubic spline basis of paper 000 §3.2 (pm_private.survival.discrete.spline).

Checked: the basis is the SPEC §3 formula written out by hand for e = 3; every basis function is
a natural cubic spline (cubic between knots, C² at the knots, linear beyond the boundary knots);
it spans the same space as an independent natural-spline construction (patsy-free: a cubic
spline interpolant with natural end conditions); the interval rows sit at the midpoints.
"""

import numpy as np
import pytest
from scipy.interpolate import CubicSpline

from pm_private.survival.discrete.spline import interval_basis, interval_midpoints, natural_spline_basis


def test_e3_matches_the_formula_by_hand():
    t = np.linspace(0, 1, 101)
    # knots 0, ½, 1: d₁ = t³, d₂ = (t − ½)₊³ / ½, b₃ = d₁ − d₂
    expected = np.column_stack([np.ones_like(t), t, t**3 - 2 * np.maximum(t - 0.5, 0) ** 3])
    np.testing.assert_allclose(natural_spline_basis(t, 3), expected, atol=1e-15)


@pytest.mark.parametrize("e", [2, 3, 4, 6])
def test_basis_spans_the_natural_cubic_splines(e):
    """Any natural cubic spline with these knots (CubicSpline, bc 'natural') is a combination of
    the basis, exactly; and the basis has full rank e."""
    knots = np.linspace(0, 1, e)
    t = np.linspace(0, 1, 257)
    B = natural_spline_basis(t, e)
    assert np.linalg.matrix_rank(B) == e
    rng = np.random.default_rng(e)
    for _ in range(3):
        spline = CubicSpline(knots, rng.standard_normal(e), bc_type="natural")
        coef, *_ = np.linalg.lstsq(B, spline(t), rcond=None)
        np.testing.assert_allclose(B @ coef, spline(t), atol=1e-10)


def test_second_derivative_vanishes_at_the_boundary_knots():
    h = 1e-4

    def second(t, e):
        return (natural_spline_basis(t + h, e) - 2 * natural_spline_basis(t, e) + natural_spline_basis(t - h, e)) / h**2

    for e in (3, 5):
        np.testing.assert_allclose(second(np.array([h]), e), 0, atol=1e-2)
        np.testing.assert_allclose(second(np.array([1 - h]), e), 0, atol=1e-2)


def test_interval_rows_are_the_midpoints():
    q, e = 200, 3
    A = interval_basis(q, e)
    assert A.shape == (q, e)
    np.testing.assert_allclose(interval_midpoints(q), (np.arange(q) + 0.5) / q)
    np.testing.assert_allclose(A, natural_spline_basis((np.arange(q) + 0.5) / q, e))
    assert (A >= 0).all() and (A <= 1).all()
    assert np.linalg.norm(A, axis=1).max() == pytest.approx(1.5975, abs=1e-4)


@pytest.mark.parametrize("bad", [dict(e=1), dict(e=2.5), dict(t=[-0.1]), dict(t=[np.nan]), dict(t=[1.2])])
def test_bad_input(bad):
    args = {"t": [0.5], "e": 3, **bad}
    with pytest.raises(ValueError):
        natural_spline_basis(np.array(args["t"]), args["e"])
    with pytest.raises(ValueError):
        interval_midpoints(0)
