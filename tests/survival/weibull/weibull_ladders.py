"""What the LSP ladder tests share: the public constants, the ladder constraint and random data sets."""

import math

import numpy as np
from hypothesis import strategies as st

OMEGA, GAMMA = 6.0, 10.0
FLOOR = math.exp(-OMEGA)
TOL = 1e-9


def ladder_holds(a, b, K):
    """S⁽ᵏ⁾(a) ⊂ S⁽ᵏ⁺¹⁾(b) for k = 0…K−1, and the rungs of a are nested."""
    (la, ua), (lb, ub) = a, b
    nested = (np.diff(la) <= TOL).all() and (np.diff(ua) >= -TOL).all()
    return nested and (lb[1 : K + 1] <= la[:K] + TOL).all() and (ub[1 : K + 1] >= ua[:K] - TOL).all()


def data_sets(smallest: int, largest: int):
    """(−log times before spreading, events, spread): ``t = exp(−z·spread)``, packed together for a small spread."""
    return st.integers(smallest, largest).flatmap(
        lambda n: st.tuples(
            st.lists(st.floats(0.0, OMEGA), min_size=n, max_size=n),
            st.lists(st.integers(0, 1), min_size=n, max_size=n),
            st.floats(0.02, 1.0),
        )
    )


#: A new record's time: an extreme of [e^−ω, 1] or any time between.
NEW_TIMES = st.sampled_from([FLOOR, 1.0]) | st.floats(FLOOR, 1.0)
