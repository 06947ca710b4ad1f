"""Release files: round trip of both release kinds, no records written, malformed files refused."""

import io
import json

import numpy as np
import pytest

from pm_private import Preprocessing, linear_stats, predict_linear, release_linear_stats, release_linear_stats_laplace
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
    stats = release_linear_stats_laplace(
        X, y, epsilon=1.0, x_bound=1.0, y_bound=1.0, split=(0.5, 0.3, 0.2), intercept=False
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
    # The record type follows the record's kind, not its citation, which may be reworded.
    entry = release_to_dict(stats)
    entry["releases"][0]["mechanism"] = "something else"
    assert type(release_from_dict(entry).releases[0]) is type(info)
    entry["releases"][0]["kind"] = "linear_stats_laplace"
    with pytest.raises(ValueError, match="field 'split' is missing"):  # a Gaussian record is not a Laplace one
        release_from_dict(entry)
    entry["releases"][0]["kind"] = "nope"
    with pytest.raises(ValueError, match="unknown release kind"):
        release_from_dict(entry)


def test_releases_without_clipping_counts_round_trip(releases):
    X, y, _, _ = releases
    for stats in (
        release_linear_stats_laplace(X, y, epsilon=1.0, x_bound=1.0, y_bound=1.0, clip_share=0.0, intercept=False),
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
