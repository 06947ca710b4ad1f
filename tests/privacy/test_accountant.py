import pytest

from pm_private import REPLACE_ONE, BudgetExceededError, PrivacyAccountant
from pm_private.privacy.release import release_guard


def test_ledger_spent_and_remaining():
    acct = PrivacyAccountant(epsilon=1.0, delta=1e-6)
    acct.record("a", 0.6, label="first")
    acct.record("b", 0.35, 5e-7)
    acct.record("c", 0.05)
    assert acct.spent == pytest.approx((1.0, 5e-7))
    assert acct.remaining == pytest.approx((0.0, 5e-7))
    assert [e.mechanism for e in acct.ledger] == ["a", "b", "c"]
    assert acct.ledger[0].label == "first" and acct.ledger[0].neighbours == REPLACE_ONE
    assert acct.ledger[0].time <= acct.ledger[2].time


def test_overspend_refused_and_records_nothing():
    acct = PrivacyAccountant(epsilon=1.0)
    acct.record("a", 0.7)
    with pytest.raises(BudgetExceededError, match="nothing was released"):
        acct.record("b", 0.31)
    with pytest.raises(BudgetExceededError):
        acct.check(0.5)
    assert len(acct.ledger) == 1 and acct.spent == (0.7, 0.0)


def test_delta_budget_is_enforced():
    acct = PrivacyAccountant(epsilon=10.0)  # δ = 0: pure DP only
    with pytest.raises(BudgetExceededError, match="δ"):
        acct.record("gauss", 1.0, 1e-9)
    assert acct.ledger == ()


def test_charge_records_on_success_only():
    acct = PrivacyAccountant(epsilon=2.0)
    with pytest.raises(RuntimeError):
        with acct.charge("failing", 1.0):
            raise RuntimeError("noise sampler crashed")
    assert acct.ledger == ()
    with acct.charge("ok", 1.0, label="x"):
        pass
    assert acct.spent == (1.0, 0.0)
    # refused before the body runs
    ran = []
    with pytest.raises(BudgetExceededError):
        with acct.charge("too much", 1.5):
            ran.append(True)
    assert ran == [] and len(acct.ledger) == 1


def test_release_guard_without_accountant_is_a_no_op():
    with release_guard(None, "m", 1.0) as reservation:
        assert reservation is None


@pytest.mark.parametrize("eps, delta", [(0, 0), (-1, 0), (float("nan"), 0), (float("inf"), 0), (1, -0.1), (1, 1.0)])
def test_invalid_budgets(eps, delta):
    with pytest.raises(ValueError):
        PrivacyAccountant(eps, delta)


def test_invalid_charges():
    acct = PrivacyAccountant(1.0)
    for eps in (0, -0.1, float("nan")):
        with pytest.raises(ValueError, match="epsilon"):
            acct.record("m", eps)
    assert acct.ledger == ()


def test_ledger_note_is_stored_with_every_entry_settled_in_its_block(tmp_path):
    from pm_private.privacy.accountant import ledger_note

    for accountant in (PrivacyAccountant(5.0), PrivacyAccountant.open(tmp_path / "l.db", epsilon=5.0)):
        with ledger_note("asked by study 7"):
            accountant.record("Laplace", 1.0)
            with pytest.raises(RuntimeError), accountant.charge("Laplace", 1.0) as reservation:
                reservation.noise_drawn()
                raise RuntimeError("after the noise")
        accountant.record("Laplace", 1.0)  # outside the block: no note
        notes = [entry.note for entry in accountant.history]
        assert notes == ["asked by study 7", "asked by study 7; failed after noise was drawn (RuntimeError)", ""]
    with pytest.raises(TypeError, match="note must be a str"), ledger_note(7):
        pass


def test_a_noise_description_inconsistent_with_the_declared_epsilon_is_refused():
    # The audit: ε = 5 and ε = 3 declared with σ/Δ = 100 on a budget of 1 were recorded (8, 0).
    from pm_private.privacy.budget import NoiseEvent

    acct = PrivacyAccountant(1.0, 1e-5)
    for epsilon in (5.0, 3.0):
        with pytest.raises(ValueError, match=rf"'audit' implies ε = 0\.0\d+ .*declared ε = {epsilon:g}"):
            acct.record("audit", epsilon, 1e-6, noise=(NoiseEvent("gaussian", 100.0, 1.0),))
        with (
            pytest.raises(ValueError, match="declared"),
            acct.charge("audit", epsilon, 1e-6, noise=(NoiseEvent("gaussian", 100.0, 1.0),)),
        ):
            pytest.fail("the body ran")
    assert acct.spent == (0.0, 0.0) and acct.history == ()


def test_spent_remaining_and_cost_are_named_tuples():
    from pm_private.privacy.budget import Budget, Cost

    acct = PrivacyAccountant(epsilon=1.0, delta=1e-6)
    acct.record("a", 0.25, 1e-7)
    spent, remaining = acct.spent, acct.remaining
    assert isinstance(spent, Budget) and isinstance(remaining, Budget)
    assert (spent.epsilon, spent.delta) == (0.25, 1e-7) and spent == (0.25, 1e-7)
    eps, delta = remaining  # still unpacks like (ε, δ)
    assert (eps, delta) == pytest.approx((0.75, 9e-7)) and remaining == pytest.approx((0.75, 9e-7))
    assert repr(Budget(1.0, 1e-6)) == "Budget(epsilon=1.0, delta=1e-06)"
    assert repr(spent) == "Budget(epsilon=0.25, delta=1e-07)"
    cost = acct.cost(0.5)
    assert isinstance(cost, Cost) and cost == (0.75, 0.75) and (cost.basic, cost.tight) == (0.75, 0.75)
    assert repr(cost) == "Cost(basic=0.75, tight=0.75)"
