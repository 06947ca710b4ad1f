"""What the LSP ladder tests share: the public constants, the ladder constraint and random data sets."""

import math

import numpy as np
from hypothesis import strategies as st

from pm_private.privacy.relations import REPLACE_ONE
from pm_private.survival.weibull.mechanisms import lsp_ladder
from pm_private.survival.weibull.simulate import simulate_weibull

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


def check_a_large_data_set(neighbour, relation: str = REPLACE_ONE, K: int = 100) -> None:
    """The ladder constraint both ways between 5,000 simulated records and each of their
    neighbours ``neighbour(t, d, new_t, new_d)`` by an extreme record (event or not, at the floor
    or at 1)."""
    sim = simulate_weibull(5000, shape=1.3, scale=0.5, censor=(0.1, 1.0), horizon=1.0, rng=2)
    t, d = np.maximum(sim.time, FLOOR), sim.event
    a = lsp_ladder(t, d, K=K, relation=relation)
    for new_t, new_d in [(FLOOR, 1), (1.0, 1), (1.0, 0), (FLOOR, 0)]:
        b = lsp_ladder(*neighbour(t, d, new_t, new_d), K=K, relation=relation)
        assert ladder_holds(a, b, K) and ladder_holds(b, a, K)


def check_a_drawn_data_set(data, neighbour, relation: str = REPLACE_ONE, K: int = 12) -> None:
    """The ladder constraint both ways between a data set of :func:`data_sets` and its neighbour
    ``neighbour(t, d)``; K = 12 is beyond n for the small sets, where every record can change."""
    z, d, spread = data
    t = np.exp(-np.asarray(z) * spread)  # spread < 1 packs the times together
    d = np.asarray(d)
    a = lsp_ladder(t, d, K=K, gamma=GAMMA, omega=OMEGA, relation=relation)
    b = lsp_ladder(*neighbour(t, d), K=K, gamma=GAMMA, omega=OMEGA, relation=relation)
    assert ladder_holds(a, b, K) and ladder_holds(b, a, K)
