"""Column names of a data frame travel with a release into the models' ``feature`` coordinates."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

from pm_private.linear import linear_model, linear_stats, release_linear_stats
from pm_private.logistic import logistic_model, release_logistic_stats
from pm_private.privacy.validation import column_names
from pm_private.release_file import read_release_file, release_to_dict, write_release_file

RNG = np.random.default_rng(3)
N = 60
FRAME = pd.DataFrame(RNG.uniform(-1, 1, (N, 3)), columns=["age", "bmi", "bp"])
Y = FRAME.to_numpy() @ [0.5, -0.2, 0.1] + 0.1 * RNG.normal(size=N)
LABELS = (Y > 0).astype(int)


def _gaussian(X, **kwargs):
    return release_linear_stats(
        X, Y, epsilon=1.0, delta=1e-5, x_bound=2.0, y_bound=2.0, rng=0, **kwargs, intercept=False
    )


def test_column_names_only_for_frames_with_distinct_string_columns():
    assert column_names(FRAME) == ("age", "bmi", "bp")
    assert column_names(FRAME.to_numpy()) is None
    assert column_names(pd.DataFrame(FRAME.to_numpy())) is None  # pandas' integer labels
    with pytest.raises(ValueError, match=r"X: the data frame repeats the columns \['a'\]"):
        column_names(FRAME.set_axis(["a", "a", "b"], axis=1))


@pytest.mark.parametrize("release", ["laplace", "gaussian"])
def test_release_records_the_columns_and_the_model_uses_them(release):
    if release == "laplace":
        stats = release_linear_stats(
            FRAME, Y, noise="laplace", epsilon=1.0, x_bound=1.0, y_bound=2.0, rng=0, intercept=False
        )
    else:
        stats = _gaussian(FRAME)
    assert stats.releases[0].features == ("age", "bmi", "bp")
    assert stats.feature_names == ("age", "bmi", "bp")
    model = linear_model(stats, x_cov="release")
    assert list(model.coords["feature"]) == ["age", "bmi", "bp"]
    explicit = linear_model(stats, x_cov="release", feature_names=["a", "b", "c"])
    assert list(explicit.coords["feature"]) == ["a", "b", "c"]


def test_arrays_sums_and_batches():
    plain = _gaussian(FRAME.to_numpy())
    assert plain.releases[0].features is None
    assert list(linear_model(plain, x_cov="release").coords["feature"]) == ["x0", "x1", "x2"]
    named = _gaussian(FRAME)
    # public rows and a release without names keep the named release's names
    combined = linear_stats(FRAME.to_numpy()[:10], Y[:10], intercept=False) + named + plain
    assert combined.feature_names == ("age", "bmi", "bp")
    renamed = _gaussian(FRAME.rename(columns={"bp": "pressure"}))
    assert (named + renamed).feature_names is None  # disagreeing names: none is chosen
    assert list(linear_model([named, named], x_cov="release").coords["feature"]) == ["age", "bmi", "bp"]
    assert list(linear_model([named, renamed], x_cov="release").coords["feature"]) == ["x0", "x1", "x2"]
    with pytest.raises(ValueError, match="3 distinct names"):
        linear_model(named, x_cov="release", feature_names=["a", "a", "b"])


def test_release_file_round_trip_and_files_without_names(tmp_path):
    stats = _gaussian(FRAME)
    buffer = io.StringIO()
    write_release_file(buffer, [release_to_dict(stats)])
    document = json.loads(buffer.getvalue())
    assert document["releases"][0]["releases"][0]["features"] == ["age", "bmi", "bp"]
    old = json.loads(buffer.getvalue())
    del old["releases"][0]["releases"][0]["features"]  # a file written before names were recorded
    for number, content in enumerate((document, old)):
        path = tmp_path / f"release{number}.json"
        path.write_text(json.dumps(content), encoding="utf-8")
        (entry,) = read_release_file(path)
        expected = ["age", "bmi", "bp"] if number == 0 else ["x0", "x1", "x2"]
        assert list(linear_model(entry["release"], x_cov="release").coords["feature"]) == expected


def test_logistic_release_carries_the_columns():
    release = release_logistic_stats(FRAME, LABELS, epsilon=1.0, delta=1e-5, x_bound=2.0, rng=0)
    assert release.features == ("age", "bmi", "bp")
    assert list(logistic_model(release).coords["feature"]) == ["age", "bmi", "bp"]
    assert list(logistic_model(release, feature_names=["a", "b", "c"]).coords["feature"]) == ["a", "b", "c"]
    plain = release_logistic_stats(FRAME.to_numpy(), LABELS, epsilon=1.0, delta=1e-5, x_bound=2.0, rng=0)
    assert list(logistic_model(plain).coords["feature"]) == ["x0", "x1", "x2"]


@pytest.mark.parametrize("names", [["age", "bmi"], ["age", "age", "bp"]])
def test_release_files_with_wrong_names_are_refused(tmp_path, names):
    linear = release_to_dict(_gaussian(FRAME))
    linear["releases"][0]["features"] = names
    logistic = release_to_dict(release_logistic_stats(FRAME, LABELS, epsilon=1.0, delta=1e-5, x_bound=2.0, rng=0))
    logistic["parameters"]["features"] = names
    for number, entry in enumerate((linear, logistic)):
        path = tmp_path / f"edited{number}.json"
        write_release_file(path, [entry])
        with pytest.raises(ValueError, match="field 'features' must hold d = 3 distinct column names"):
            read_release_file(path)
