"""The linear releases under add/remove neighbours: n released with the counts, the sensitivity under
both relations (attained, never exceeded by random neighbours), the ledger's converted charge against
dp-accounting, the record, the model that marginalises the noisy n, the command line and the
refusals."""

import numpy as np
import pytest
from dp_accounting import GaussianDpEvent, NeighboringRelation
from dp_accounting.pld.pld_privacy_accountant import PLDAccountant

from pm_private import PrivacyAccountant, adassp, linear_model, release_linear_stats
from pm_private.cli import main
from pm_private.linear.adaptive_ssp import adassp_sensitivities
from pm_private.linear.model import set_linear_stats
from pm_private.linear.noise_aware import noise_aware_arrays
from pm_private.linear.release import gaussian_release_vector, linear_noise_plan, sensitivities
from pm_private.linear.stats import frobenius_weights, stat_vector
from pm_private.privacy.relations import ADD_REMOVE, REPLACE_ONE
from pm_private.release_file import read_release_file, release_from_dict, release_to_dict
from pm_private.released.summary import _release_lines

D, X_BOUND, Y_BOUND, SHARE = 3, 1.5, 2.0, 0.05


def _rows(rng, n):
    """Rows inside the bounds (so that the release's projection leaves them as they are)."""
    x = rng.normal(size=(n, D))
    x *= (X_BOUND / np.linalg.norm(x, axis=1))[:, None] * rng.uniform(0.3, 1.0, size=(n, 1))
    return x, rng.uniform(-Y_BOUND, Y_BOUND, size=n)


def _gaussian_vector(x, y, weight, private_n=True):
    """What the Gaussian release with an intercept noises: w ⊙ upper(S) of z = (1, x, y), then the
    counts weighted by ``weight``: none changed or clipped for rows inside the bounds, Σcᵢ² = n, and
    n where it is private."""
    z = np.column_stack([np.ones(len(y)), x])
    stats = stat_vector(z.T @ z, z.T @ y, y @ y) * frobenius_weights(D + 1)
    counts = [0.0, 0.0, float(len(y))] + ([float(len(y))] if private_n else [])
    return np.concatenate([stats, weight * np.asarray(counts)])


def test_gaussian_sensitivity_per_relation_never_exceeded_and_the_statistics_part_attained():
    """10⁴ random neighbours of each relation stay within the stated sensitivity of the whole vector
    (counts included); the statistics' part reaches R² (an added row on the bounds) and √2·R²
    (replaced by an orthogonal one)."""
    _, both, weight = gaussian_release_vector(D, X_BOUND, Y_BOUND, SHARE, scale_response=True, intercept=True,
                                              relation=ADD_REMOVE)  # fmt: skip
    rng = np.random.default_rng(0)
    worst = dict.fromkeys((ADD_REMOVE, REPLACE_ONE), 0.0)
    for _ in range(500):
        x, y = _rows(rng, 25)
        base = _gaussian_vector(x, y, weight)
        for _ in range(20):
            i = rng.integers(25)
            removed = _gaussian_vector(np.delete(x, i, axis=0), np.delete(y, i), weight)
            new_x, new_y = _rows(rng, 1)
            x2, y2 = x.copy(), y.copy()
            x2[i], y2[i] = new_x[0], new_y[0]
            worst[ADD_REMOVE] = max(worst[ADD_REMOVE], np.linalg.norm(base - removed))
            worst[REPLACE_ONE] = max(worst[REPLACE_ONE], np.linalg.norm(base - _gaussian_vector(x2, y2, weight)))
    for relation, change in worst.items():
        assert 0.3 * both.under(relation) < change <= both.under(relation) * (1 + 1e-12)
    square = 1.0 + X_BOUND**2 + Y_BOUND**2  # R² of z = (1, x, y) on the bounds
    m = frobenius_weights(D + 1).size
    x, y = _rows(rng, 10)
    edge_x, edge_y = np.array([[X_BOUND, 0.0, 0.0]]), np.array([Y_BOUND])
    added = _gaussian_vector(np.vstack([x, edge_x]), np.append(y, edge_y), weight)[:m]
    assert np.linalg.norm(added - _gaussian_vector(x, y, weight)[:m]) == pytest.approx(square, rel=1e-12)


def test_laplace_sensitivities_per_relation_never_exceeded_and_attained():
    """ℓ1 changes of upper(Sxx), Sxy and Syy under 10⁴ random neighbours of each relation stay within
    :func:`sensitivities`; an added row of entries ±Bx with |y| = By attains the add/remove ones, and
    under replace-one that row replaced by the zero row attains Sxx's (the add/remove value, half
    Honkela et al.'s bound), flipping y attains Sxy's and a zero response Syy's."""
    rng = np.random.default_rng(1)
    upper = np.triu_indices(D)

    def change(x, y, x2=None, y2=None):  # an added row, or one replaced by (x2, y2)
        xx, xy, yy = np.outer(x, x)[upper], x * y, y * y
        if x2 is not None:
            xx, xy, yy = xx - np.outer(x2, x2)[upper], xy - x2 * y2, yy - y2 * y2
        return np.abs(xx).sum(), np.abs(xy).sum(), abs(yy)

    for relation in (ADD_REMOVE, REPLACE_ONE):
        bound = sensitivities(D, X_BOUND, Y_BOUND, relation)
        for _ in range(10_000):
            x, x2 = rng.uniform(-X_BOUND, X_BOUND, size=(2, D))
            y, y2 = rng.uniform(-Y_BOUND, Y_BOUND, size=2)
            moved = change(x, y) if relation == ADD_REMOVE else change(x, y, x2, y2)
            assert all(c <= b * (1 + 1e-12) for c, b in zip(moved, bound, strict=True))
    edge = np.full(D, X_BOUND)
    assert change(edge, Y_BOUND) == pytest.approx(sensitivities(D, X_BOUND, Y_BOUND, ADD_REMOVE))
    replaced = (
        change(edge, Y_BOUND, np.zeros(D), Y_BOUND)[0],  # the corner row replaced by the zero row
        change(edge, Y_BOUND, edge, -Y_BOUND)[1],  # y flipped
        change(edge, Y_BOUND, edge, 0.0)[2],  # the response replaced by 0
    )
    assert replaced == pytest.approx(sensitivities(D, X_BOUND, Y_BOUND, REPLACE_ONE))


def _release(relation, noise="gaussian", accountant=None, n=400, seed=1, **options):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, D))
    y = x @ [0.5, -0.3, 0.2] + 0.4 + rng.normal(size=n)
    kwargs = dict(delta=1e-6) if noise == "gaussian" else {}
    return release_linear_stats(x, y, epsilon=1.0, x_bound=3.0, y_bound=4.0, noise=noise, rng=2, relation=relation,
                                accountant=accountant, **kwargs, **options)  # fmt: skip


def test_gaussian_add_remove_release_keeps_n_private_and_is_charged_as_replace_one():
    accountant = PrivacyAccountant(5.0, 1e-5)
    stats = _release(ADD_REMOVE, accountant=accountant)
    (record,) = stats.releases
    assert stats.n is None and record.n is None and record.neighbours == ADD_REMOVE
    assert abs(record.n_noisy - 400) < 6 * record.clip_noise
    assert stats.n_estimate == pytest.approx(max(record.n_noisy, 1.0))
    assert stats.n_noise_var == pytest.approx(record.clip_noise**2)
    _, both, _ = gaussian_release_vector(D, 3.0, 4.0, SHARE, scale_response=True, intercept=True, relation=ADD_REMOVE)
    assert record.sensitivity == pytest.approx(both.add_remove)
    (entry,) = accountant.ledger
    assert entry.neighbours == "add-remove as replace-one" and "n=" not in entry.label
    (event,) = entry.noise
    assert event.sensitivity == pytest.approx(both.replace_one)  # the vector's own, not 2Δ
    independent = PLDAccountant(NeighboringRelation.ADD_OR_REMOVE_ONE)
    independent.compose(GaussianDpEvent(event.scale / event.sensitivity))
    assert entry.epsilon == pytest.approx(independent.get_epsilon(1e-6), rel=2e-3)
    assert 1.0 < entry.epsilon < 2.0
    assert dict(_release_lines(stats))["n"] == "private (add/remove neighbours)"
    assert "n private" in repr(stats)
    public = _release(REPLACE_ONE)
    assert public.n == 400 and public.releases[0].n_noisy is None


def test_laplace_add_remove_release_is_charged_query_by_query():
    accountant = PrivacyAccountant(5.0, 1e-5)
    stats = _release(ADD_REMOVE, noise="laplace", accountant=accountant)
    (record,) = stats.releases
    assert stats.n is None and abs(record.n_noisy - 400) < 10 * record.count_sd
    assert record.sensitivities == pytest.approx(sensitivities(D + 1, 3.0, 4.0, ADD_REMOVE))
    (entry,) = accountant.ledger
    # Sxy twice its ε (half the replace-one sensitivity), Sxx and Syy once (the same under both),
    # the counts 2/3 (ℓ1 3 → 2)
    parts = record.epsilon_parts
    expected = parts[0] + 2 * parts[1] + parts[2] + SHARE * 1.0 * 2 / 3
    assert entry.epsilon == pytest.approx(expected, rel=1e-9)
    assert entry.neighbours == "add-remove as replace-one"


def test_the_records_round_trip_and_refuse_a_public_n_under_add_remove():
    for noise in ("gaussian", "laplace"):
        stats = _release(ADD_REMOVE, noise=noise)
        record = release_to_dict(stats)
        back = release_from_dict(record)
        assert back.n is None and back.releases[0].n_noisy == stats.releases[0].n_noisy
    public = release_to_dict(_release(REPLACE_ONE))
    assert release_from_dict(public).releases[0].n_noisy is None


def test_empty_data_are_released_under_add_remove_and_refused_under_replace_one():
    empty_x, empty_y = np.zeros((0, D)), np.zeros(0)
    for noise, extra in (("gaussian", {"delta": 1e-6}), ("laplace", {})):
        stats = release_linear_stats(empty_x, empty_y, epsilon=1.0, x_bound=3.0, y_bound=4.0, noise=noise, rng=0,
                                     relation=ADD_REMOVE, **extra)  # fmt: skip
        assert stats.n is None and stats.n_estimate >= 1.0
        with pytest.raises(ValueError, match="at least one row"):
            release_linear_stats(empty_x, empty_y, epsilon=1.0, x_bound=3.0, y_bound=4.0, noise=noise, rng=0, **extra)


def test_bad_relations_and_shares_are_refused_before_anything_is_spent():
    accountant = PrivacyAccountant(5.0, 1e-5)
    with pytest.raises(ValueError, match="relation"):
        _release("add-one", accountant=accountant)
    for noise in ("gaussian", "laplace"):
        with pytest.raises(ValueError, match="clip_share must be > 0 under add/remove"):
            _release(ADD_REMOVE, noise=noise, accountant=accountant, clip_share=0.0)
    assert not accountant.ledger


def test_the_noise_plan_names_the_relation_and_n():
    plan = linear_noise_plan(D, epsilon=1.0, delta=1e-6, x_bound=3.0, y_bound=4.0, relation=ADD_REMOVE)
    assert "add-remove neighbours" in plan.lines()[0]
    assert any("n (private" in group for group in plan.noise_sd)
    laplace = linear_noise_plan(D, epsilon=1.0, x_bound=3.0, y_bound=4.0, noise="laplace", relation=ADD_REMOVE)
    assert laplace.queries[-1].size == 3 and laplace.queries[-1].sensitivity == 3.0


def test_the_integrated_model_marginalises_the_noisy_n_and_covariate_models_refuse_it():
    private, public = _release(ADD_REMOVE, n=2000), _release(REPLACE_ONE, n=2000)
    arrays = noise_aware_arrays(private)
    assert arrays["private_n"] == pytest.approx(private.n_estimate)
    # Σcᵢ² is released (scale_response), so the residual weight's noise is that count's, not n's
    assert arrays["private_residual_var"] == pytest.approx(private.releases[0].clip_noise ** 2)
    projected = _release(ADD_REMOVE, n=2000, scale_response=False)
    assert noise_aware_arrays(projected)["private_residual_var"] == pytest.approx(projected.n_noise_var)
    model = linear_model(private)
    set_linear_stats(public, model)  # the integrated likelihood takes either relation's statistics
    set_linear_stats(private, model)
    with pytest.raises(ValueError, match="n is private"):
        linear_model(private, x_cov="wishart")
    wishart = linear_model(public, x_cov="wishart")
    with pytest.raises(ValueError, match="n is private"):
        set_linear_stats(private, wishart)


def test_the_command_line_releases_under_add_remove(tmp_path, monkeypatch, capsys):
    import pandas as pd

    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    frame = pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "y": X @ [1.0, -0.5] + rng.normal(size=300)})
    frame.assign(p=np.repeat(np.arange(100), 3)).to_csv("d.csv", index=False)
    argv = ["release", "linear-stats", "d.csv", "--target", "y", "--features", "a", "b", "--noise", "gaussian"]
    argv += ["--delta", "1e-6", "--epsilon", "1", "--relation", "add-remove", "--x-center", "0", "0"]
    argv += ["--x-scale", "1", "1", "--y-center", "0", "--y-scale", "1"]
    argv += ["--ledger", "l.db", "--total-epsilon", "3", "--total-delta", "1e-4", "--out", "r.json"]
    with pytest.raises(SystemExit):  # n private: the bounds cannot be chosen from it
        main(argv)
    assert "--relation add-remove keeps n private" in capsys.readouterr().err
    argv += ["--x-bound", "3", "--y-bound", "4"]
    assert main([*argv, "--dry-run"]) == 0
    assert "add-remove neighbours" in capsys.readouterr().out
    assert main(argv) == 0
    (entry,) = read_release_file("r.json")
    assert entry["release"].n is None and entry["release"].releases[0].neighbours == ADD_REMOVE
    argv[argv.index("r.json")] = "p.json"
    with pytest.raises(SystemExit):
        main([*argv, "--max-rows", "2"])
    assert "--max-rows above 1 needs --unit-column" in capsys.readouterr().err
    assert main([*argv, "--unit-column", "p", "--max-rows", "2"]) == 0
    (entry,) = read_release_file("p.json")
    assert entry["release"].releases[0].max_rows == 2 and entry["release"].releases[0].unit == "person"


def test_adassp_under_add_remove_has_the_add_remove_sensitivities_and_is_charged_by_group_privacy():
    """λ_min, XᵀX and Xᵀy move by at most (Bx², Bx², BxBy) when a row is added (10⁴ random rows on or
    inside the ball, attained on its boundary), n is private, data of no row are released, and the
    ledger converts the release by group privacy (its releases are composed basically)."""
    rng = np.random.default_rng(3)
    bound = adassp_sensitivities(D, X_BOUND, Y_BOUND, ADD_REMOVE)
    assert bound == pytest.approx((X_BOUND**2, X_BOUND**2, X_BOUND * Y_BOUND))
    x, y = _rows(rng, 30)
    base = x.T @ x
    for _ in range(10_000):
        row, response = _rows(rng, 1)
        grown = base + row.T @ row
        moved = (
            np.linalg.eigvalsh(grown)[0] - np.linalg.eigvalsh(base)[0],
            np.linalg.norm((row.T @ row)[np.triu_indices(D)]),
            np.linalg.norm(row[0] * response[0]),
        )
        assert all(0 <= m <= b * (1 + 1e-12) for m, b in zip(moved, bound, strict=True))
    edge = np.array([X_BOUND, 0.0, 0.0])
    assert np.linalg.norm(np.outer(edge, edge)[np.triu_indices(D)]) == pytest.approx(bound[1])
    accountant = PrivacyAccountant(5.0, 1e-4)
    result = adassp(x, y, epsilon=1.0, delta=1e-6, x_bound=X_BOUND, y_bound=Y_BOUND, rng=0, relation=ADD_REMOVE,
                    accountant=accountant)  # fmt: skip
    assert result.n is None and result.neighbours == ADD_REMOVE and "n=private" in repr(result)
    assert result.sensitivities == pytest.approx(bound)
    (entry,) = accountant.ledger
    assert entry.neighbours == "add-remove as replace-one" and entry.epsilon == pytest.approx(2.0)
    assert entry.delta == pytest.approx((1 + np.e) * 1e-6)
    empty = adassp(x[:0], y[:0], epsilon=1.0, delta=1e-6, x_bound=X_BOUND, y_bound=Y_BOUND, rng=0, relation=ADD_REMOVE)
    assert empty.n is None and np.isfinite(empty.coef).all()
    assert release_from_dict(release_to_dict(result)).n is None


def test_a_person_of_up_to_k_rows_moves_the_statistics_by_k_rows_and_no_more():
    """max_rows=k under add/remove: a person of k equal rows on the bounds moves the statistics by k·R²
    (attained), random persons of 1…k rows never move the whole vector by more than the stated
    sensitivity, k times the row's; the record and the ledger say so, and k > 1 is refused under
    replace-one or without a unit, before anything is spent."""
    k = 3
    _, row, weight = gaussian_release_vector(D, X_BOUND, Y_BOUND, SHARE, scale_response=True, intercept=True,
                                             relation=ADD_REMOVE)  # fmt: skip
    _, person, _ = gaussian_release_vector(D, X_BOUND, Y_BOUND, SHARE, scale_response=True, intercept=True,
                                           relation=ADD_REMOVE, max_rows=k)  # fmt: skip
    assert person.add_remove == pytest.approx(k * row.add_remove)
    rng = np.random.default_rng(5)
    x, y = _rows(rng, 20)
    base = _gaussian_vector(x, y, weight)
    for _ in range(2_000):
        new_x, new_y = _rows(rng, rng.integers(1, k + 1))
        grown = _gaussian_vector(np.vstack([x, new_x]), np.append(y, new_y), weight)
        assert np.linalg.norm(grown - base) <= person.add_remove * (1 + 1e-12)
    edge_x, edge_y = np.tile([X_BOUND, 0.0, 0.0], (k, 1)), np.full(k, Y_BOUND)
    m = frobenius_weights(D + 1).size
    moved = _gaussian_vector(np.vstack([x, edge_x]), np.append(y, edge_y), weight)[:m] - base[:m]
    assert np.linalg.norm(moved) == pytest.approx(k * (1.0 + X_BOUND**2 + Y_BOUND**2), rel=1e-12)
    unit = np.repeat(np.arange(150), 3)
    accountant = PrivacyAccountant(5.0, 1e-5)
    stats = _release(ADD_REMOVE, n=450, unit=unit, max_rows=k, accountant=accountant)
    (record,) = stats.releases
    assert record.max_rows == k and record.unit == "person" and abs(stats.n_estimate - 450) < 6 * record.count_sd
    stated = gaussian_release_vector(D, 3.0, 4.0, SHARE, scale_response=True, intercept=True, relation=ADD_REMOVE,
                                     max_rows=k)[1]  # fmt: skip
    assert record.sensitivity == pytest.approx(stated.add_remove)
    assert accountant.ledger[0].noise[0].sensitivity == pytest.approx(stated.replace_one)  # converted
    assert accountant.ledger[0].neighbours == "add-remove person as replace-one person"
    for options in ({"unit": unit}, {"relation": ADD_REMOVE}):
        relation = options.pop("relation", REPLACE_ONE)
        with pytest.raises(ValueError, match="max_rows|unit"):
            _release(relation, accountant=accountant, n=450, max_rows=k, **options)
    assert len(accountant.ledger) == 1
