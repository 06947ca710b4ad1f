import os
import tempfile

import pytest

# Ledger witnesses of the suite's ledgers go to a folder of their own (inherited by the processes the
# tests spawn), never to the developer's state folder.
os.environ["PM_PRIVATE_STATE_DIR"] = tempfile.mkdtemp(prefix="pm-private-witness-")


#: Goodness-of-fit thresholds.  Seeded noise is deterministic: a test either always passes or
#: always fails, so 10⁻⁴ costs nothing.  Secure noise (``rng=None``) cannot be seeded: every run
#: is a new draw, so its tests use 10⁻⁹ (a correct mechanism fails once in 10⁹ runs), with
#: samples large enough that this threshold still rejects a noise scale wrong by half.
P_SEEDED, P_SECURE = 1e-4, 1e-9


@pytest.fixture
def p_min():
    """``p_min(secure)``: the p-value a goodness-of-fit test of seeded or secure noise must exceed."""
    return lambda secure: P_SECURE if secure else P_SEEDED
