"""The empty data set under both neighbour relations: under add/remove it is a neighbour of every
data set of one person, so a release must release it (noise alone) rather than refuse it, which
would tell the two apart with certainty; under replace-one (n public) it is refused before anything
is spent.  Checked for the four releases that take add/remove: with the same seeded noise, the
release of one person minus the release of nobody is that person's statistics, exactly, with or
without ``unit=``."""

import numpy as np
import pytest

from pm_private import PrivacyAccountant, release_logistic_stats, release_poisson_stats, release_survival_stats
from pm_private.survival import release_survival_regression_stats

X1, Y1, T1, E1 = np.array([[0.6, -0.8]]), np.array([1.0]), np.array([1.5]), np.array([1])
EMPTY_X = np.zeros((0, 2))
COMMON = dict(epsilon=1.0, delta=1e-6)


def _glm(release, y):
    def fields(x, labels, **kw):
        r = release(x, labels, x_bound=1.0, **COMMON, **kw)
        return np.concatenate([[r.n_noisy], r.x_sum, [r.y_sum], r.xx.ravel(), r.yx])

    exact = np.concatenate([[1.0], X1[0], [y], np.outer(X1[0], X1[0]).ravel(), y * X1[0]])
    return fields, exact


def _exit(x, labels, **kw):
    r = release_survival_stats(labels[0], labels[1], edges=[1.0, 2.0], **COMMON, **kw)
    return np.concatenate([r.events.ravel(), r.censored.ravel(), np.ravel(r.survivors)])


def _regression(x, labels, **kw):
    r = release_survival_regression_stats(labels[0], labels[1], x, edges=[1.0, 2.0], x_bound=1.0, **COMMON, **kw)
    return np.concatenate([r.counts.ravel(), r.x_sums.ravel(), r.xx.ravel()])


logistic_fields, logistic_exact = _glm(release_logistic_stats, 1.0)
poisson_fields, poisson_exact = _glm(lambda *a, **kw: release_poisson_stats(*a, y_bound=3, **kw), 1.0)
# one person with an event in the second of two intervals: exit 1 of (event 1, event 2, censored 1,
# censored 2, event-free), with Σx on that exit and xxᵀ in the cell
exit_exact = np.array([0.0, 1.0, 0.0, 0.0, 0.0])
regression_exact = np.concatenate(
    [[0, 1, 0, 0, 0], np.outer([0, 1, 0, 0, 0], X1[0]).ravel(), np.outer(X1[0], X1[0]).ravel()]
)

CASES = {
    "logistic": (logistic_fields, (X1, Y1), (EMPTY_X, np.zeros(0)), logistic_exact),
    "poisson": (poisson_fields, (X1, Y1), (EMPTY_X, np.zeros(0)), poisson_exact),
    "exit table": (_exit, (None, (T1, E1)), (None, (np.zeros(0), np.zeros(0))), exit_exact),
    "survival regression": (_regression, (X1, (T1, E1)), (EMPTY_X, (np.zeros(0), np.zeros(0))), regression_exact),
}


@pytest.mark.parametrize("case", CASES)
def test_add_remove_releases_the_empty_data_set_as_the_same_mechanism(case):
    fields, one, empty, exact = CASES[case]
    accountant = PrivacyAccountant(10.0, 1e-3)
    released_one = fields(*one, relation="add-remove", rng=3)
    released_empty = fields(*empty, relation="add-remove", rng=3, accountant=accountant)
    np.testing.assert_allclose(released_one - released_empty, exact, atol=1e-9)
    assert len(accountant.ledger) == 1  # charged as any release
    # grouped by person (unit=), nobody is the same empty data set, released the same way
    by_person = fields(*empty, relation="add-remove", rng=3, unit=np.array([], dtype=int))
    np.testing.assert_array_equal(by_person, released_empty)


@pytest.mark.parametrize("case", CASES)
def test_replace_one_refuses_the_empty_data_set_before_spending(case):
    fields, _, empty, _ = CASES[case]
    accountant = PrivacyAccountant(10.0, 1e-3)
    with pytest.raises(ValueError, match="time|X"):
        fields(*empty, relation="replace-one", rng=3, accountant=accountant)
    assert not accountant.ledger


def test_the_command_line_releases_a_file_of_no_rows_under_add_remove_only(tmp_path, monkeypatch, capsys):
    from pm_private.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.csv").write_text("a,b,label\n")  # no rows: pandas reads columns of no type
    argv = ["release", "logistic-stats", "d.csv", "--target", "label", "--features", "a", "b", "--x-bound", "3"]
    argv += ["--delta", "1e-6", "--epsilon", "1", "--raw-covariates", "--total-epsilon", "3", "--total-delta", "1e-4"]
    assert main([*argv, "--relation", "add-remove", "--ledger", "l.db", "--out", "r.json"]) == 0
    assert (tmp_path / "r.json").exists() and PrivacyAccountant.open("l.db").spent[0] > 0
    with pytest.raises(SystemExit):
        main([*argv, "--ledger", "l2.db", "--out", "r2.json"])
    assert "at least one row" in capsys.readouterr().err
    assert not (tmp_path / "r2.json").exists() and PrivacyAccountant.open("l2.db").spent[0] == 0
