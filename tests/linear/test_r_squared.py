"""Held-out R²: 1 for perfect predictions, 0 for the test mean, the textbook ratio otherwise."""

import numpy as np
import pytest

from pm_private.linear.predict import r_squared


def test_r_squared_values_and_refusals():
    y = np.array([1.0, 2.0, 4.0, 7.0])
    assert r_squared(y, y) == 1.0
    assert r_squared(y, np.full(4, y.mean())) == 0.0
    pred = np.array([2.0, 2.0, 3.0, 9.0])  # residuals 1, 0, 1, 2: 6 against Σ(y − ȳ)² = 21
    assert r_squared(y, pred) == pytest.approx(1 - 6 / 21)
    assert r_squared(y, 2 * y) < 0  # the right ranks on the wrong scale
    with pytest.raises(ValueError, match="equal length"):
        r_squared(y, y[:3])
    with pytest.raises(ValueError, match="all equal"):
        r_squared(np.ones(3), np.arange(3.0))
