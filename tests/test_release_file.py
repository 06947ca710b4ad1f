"""Release files: round trip of both release kinds, no records written, malformed files refused."""

import io
import json

import numpy as np
import pytest

from pm_private import Preprocessing, linear_stats, predict_linear, release_linear_stats
from pm_private.privacy.release import release_type
from pm_private.release_file import (
    FORMAT,
    VERSION,
    read_release_file,
    release_from_dict,
    release_to_dict,
    write_release_file,
)
from pm_private.survival.weibull.mechanisms import weibull_private


@pytest.fixture(scope="module")
def releases():
    rng = np.random.default_rng(3)
    X, y = rng.uniform(-1, 1, (200, 3)), rng.uniform(-1, 1, 200)
    stats = release_linear_stats(
        X, y, noise="laplace", epsilon=1.0, x_bound=1.0, y_bound=1.0, split=(0.5, 0.3, 0.2), intercept=False
    )
    t = rng.weibull(1.5, 300)
    weibull = weibull_private(np.minimum(t, 3.0), (t < 3.0).astype(int), epsilon=1.0, horizon=3.0, K=50)
    return X, y, stats, weibull


def test_round_trip_of_both_kinds(releases, tmp_path):
    _, _, stats, weibull = releases
    path = tmp_path / "release.json"
    entries = [
        release_to_dict(stats, features=["a", "b", "c"], target="y", preprocessing={"rows": "all"}),
        release_to_dict(weibull, time="t", event="e"),
    ]
    write_release_file(path, entries)
    with pytest.raises(FileExistsError):
        write_release_file(path, entries)  # never overwritten
    first, second = read_release_file(path)
    back = first["release"]
    np.testing.assert_array_equal(back.xx, stats.xx)
    np.testing.assert_array_equal(back.xy, stats.xy)
    assert (back.yy, back.n, back.releases) == (stats.yy, stats.n, stats.releases)
    assert first["features"] == ["a", "b", "c"] and first["target"] == "y" and first["epsilon"] == 1.0
    assert first["neighbours"] == "replace-one" and first["private"] is True
    assert first["releases"][0]["noise_scales"] == list(stats.releases[0].noise_scales)
    assert first["releases"][0]["split"] == [0.5, 0.3, 0.2] and first["releases"][0]["x_bound"] == 1.0
    assert second["release"] == weibull and second["outputs"] == {"shape": weibull.shape, "scale": weibull.scale}
    assert second["kind"] == "weibull" and second["parameters"]["horizon"] == weibull.horizon
    assert release_from_dict(json.loads(json.dumps(entries[1]))) == weibull


def test_gaussian_release_and_its_preprocessing_round_trip(releases):
    X, y, _, _ = releases
    prep = Preprocessing(x_center=[0.1, 0.0, -0.1], x_scale=0.5, y_center=0.2, y_scale=2.0)
    stats = release_linear_stats(
        X, y, epsilon=1.0, delta=1e-6, x_bound=2.0, y_bound=1.0, preprocessing=prep, intercept=False
    )
    back = release_from_dict(json.loads(json.dumps(release_to_dict(stats))))
    (info,), (read,) = stats.releases, back.releases
    assert type(read) is type(info) and read.noise_scale == info.noise_scale and read.sensitivity == info.sensitivity
    np.testing.assert_array_equal(read.noise_variance(3), info.noise_variance(3))
    # The preprocessing comes back as one, so predictions from the file map new rows alike.
    draws = np.array([[0.3, -0.2, 0.5]])
    np.testing.assert_array_equal(
        predict_linear(draws, X[:5], stats=back)["mean"], predict_linear(draws, X[:5], stats=stats)["mean"]
    )
    # The record type follows the record's kind; its citation is the kind's constant, nothing else.
    entry = release_to_dict(stats)
    entry["releases"][0]["mechanism"] = "something else"
    with pytest.raises(ValueError, match="field 'mechanism' must be 'Gaussian sufficient statistics"):
        release_from_dict(entry)
    entry = release_to_dict(stats)
    entry["releases"][0]["kind"] = "linear_stats_laplace"
    with pytest.raises(ValueError, match="field 'mechanism' must be 'Laplace"):  # a Gaussian record is no Laplace one
        release_from_dict(entry)
    entry["releases"][0]["mechanism"] = release_type("linear_stats_laplace").__dataclass_fields__["mechanism"].default
    with pytest.raises(ValueError, match="field 'split' is missing"):
        release_from_dict(entry)
    entry["releases"][0]["kind"] = "nope"
    with pytest.raises(ValueError, match="unknown release kind"):
        release_from_dict(entry)


def test_releases_without_clipping_counts_round_trip(releases):
    X, y, _, _ = releases
    for stats in (
        release_linear_stats(
            X, y, noise="laplace", epsilon=1.0, x_bound=1.0, y_bound=1.0, clip_share=0.0, intercept=False
        ),
        release_linear_stats(X, y, epsilon=1.0, delta=1e-6, x_bound=2.0, y_bound=1.0, clip_share=0.0, intercept=False),
    ):
        back = release_from_dict(json.loads(json.dumps(release_to_dict(stats))))
        assert back.releases == stats.releases and back.releases[0].clip_share == 0.0


def test_no_record_and_nothing_unnoised_is_written(releases):
    X, y, stats, _ = releases
    buffer = io.StringIO()
    write_release_file(buffer, [release_to_dict(stats)])
    text = buffer.getvalue()
    exact = linear_stats(np.clip(X, -1, 1), y, intercept=False)
    for value in [*X.ravel()[:50], *y[:50], *exact.xx.ravel(), *exact.xy, exact.yy]:
        assert repr(float(value)) not in text
    assert json.loads(text)["format"] == FORMAT


def test_refusals(releases, tmp_path):
    X, y, stats, _ = releases
    with pytest.raises(ValueError, match="exact statistics"):
        release_to_dict(linear_stats(X, y, intercept=False))
    with pytest.raises(TypeError, match="LinearStats or a Release"):
        release_to_dict({"xx": 1})
    with pytest.raises(TypeError, match="unknown context"):
        release_to_dict(stats, rows=X)
    bad = tmp_path / "bad.json"
    for content, message in [
        ("not json", "not a release file"),
        ('{"format": "other"}', "not a pm_private release file"),
        (f'{{"format": "{FORMAT}", "version": 99}}', "version 99"),
        (f'{{"format": "{FORMAT}", "version": 1}}', "version 1; this version reads 2"),
        (
            f'{{"format": "{FORMAT}", "version": {VERSION}, "releases": [{{"kind": "linear_stats"}}]}}',
            "release 0 is malformed",
        ),
        (f'{{"format": "{FORMAT}", "version": {VERSION}, "releases": [{{"kind": "nope"}}]}}', "unknown release kind"),
    ]:
        bad.write_text(content)
        with pytest.raises(ValueError, match=message):
            read_release_file(bad)


def test_repeated_feature_names_are_refused_when_written_and_when_read(releases, tmp_path):
    _, _, stats, _ = releases
    with pytest.raises(ValueError, match=r"field 'features' must name each column once, got \['a'\]"):
        release_to_dict(stats, features=["a", "a", "c"])  # refused before a file is handed out
    entry = json.loads(json.dumps(release_to_dict(stats, features=["a", "b", "c"])))
    entry["features"] = ["a", "a", "c"]
    path = tmp_path / "edited.json"
    path.write_text(json.dumps({"format": FORMAT, "version": VERSION, "releases": [entry]}), encoding="utf-8")
    with pytest.raises(ValueError, match="field 'features' must name each column once"):
        read_release_file(path)


def test_linear_statistics_must_hold_at_least_their_releases_people(releases):
    _, _, stats, _ = releases
    entry = json.loads(json.dumps(release_to_dict(stats)))
    entry["statistics"]["n"] = stats.releases[0].n - 1
    with pytest.raises(ValueError, match="fewer than the 200 people of its releases"):
        release_from_dict(entry)


def test_the_noise_sum_bound_and_its_false_refusal_probability():
    """The bound on a sum of m noise draws is the Chernoff bound at probability 1e-9: about 6.5
    s.d. for Gaussian noise (the exact normal quantile is 6.1), more for a sum of few Laplace
    draws, whose tails are heavier; an unedited release is refused with probability < 1e-9."""
    from scipy import stats as scipy_stats

    from pm_private.privacy.tails import FALSE_REFUSAL, noise_sum_bound

    assert FALSE_REFUSAL == 1e-9
    for m in (1, 3, 21, 1000):
        gaussian = noise_sum_bound("gaussian", 2.0, m) / (2.0 * np.sqrt(m))
        assert scipy_stats.norm.isf(FALSE_REFUSAL / 2) < gaussian == pytest.approx(6.5447, abs=1e-4)
    multiples = [noise_sum_bound("laplace", 1.0, m) / np.sqrt(2 * m) for m in (3, 14, 100, 10**5)]
    np.testing.assert_allclose(multiples, [11.97, 8.30, 6.87, 6.55], atol=0.01)
    # The Laplace bound is conservative: 10⁶ sums of 3 draws never come near it, whose largest
    # is about the 1e-6 quantile (the exact 1e-9 tail lies below the Chernoff bound).
    draws = np.random.default_rng(0).laplace(size=(10**6, 3)).sum(axis=1)
    assert np.abs(draws).max() < 0.7 * noise_sum_bound("laplace", 1.0, 3)
    with pytest.raises(ValueError, match="noise must be"):
        noise_sum_bound("uniform", 1.0, 3)
