"""The seams an attacker's audit went through, fuzzed so that no defect class can come back.

Registry-driven: every registered family with a release (``pm_private.families.FAMILIES``, its
release's card in tests/contracts/cards.py), every card's release, every card that states its noise.

* Predictors (defect class 6): X with columns shuffled, renamed, duplicated, missing or extra,
  NaN/inf cells, arrays of the wrong width; posteriors with NaN, ±inf or huge values in any
  variable, or of another family.  Either a ValueError naming the argument (``X`` or
  ``posterior``), or a finite answer equal to the prediction on the columns in their order.
* Release files (defect class 5): every numeric field of every card's release record is
  perturbed (sign flipped, times 1e6, 0).  Either refused naming the field, or read back as
  written (the file means what it says).  A public number (ε, δ, a bound, a noise scale, a
  sensitivity) sets what the noise means: a change of it must be refused.
* The accountant (defect class 3): every ledger entry a card writes with stated noise, restated
  with σ (or b) times 2 and times 0.5, is refused before anything is recorded.

The ledger's rollback attacks (defect class 1) are in benchmarks/audit_ledger_damage.py's table.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import re
import warnings

import numpy as np
import pandas as pd
import pymc as pm
import pytest
import xarray as xr
from cards import CARD, CARDS, DATA, D, release_of

import pm_private as pp
from pm_private import PrivacyAccountant
from pm_private.families import FAMILIES
from pm_private.privacy.release import OUTPUT, PUBLIC, field_kinds
from pm_private.release_file import SUFF_STATS, all_release_types, read_release_file, release_to_dict

#: Prior draws that stand in for a posterior in checks of names, records and refusals: PyTensor's
#: Python mode draws them without compiling (the Ops' Python implementations call the same kernels).
PYTHON_MODE = {"mode": "FAST_COMPILE"}

COLUMNS = ["age", "dose", "sex"][:D]  # names, not the defaults x0, x1, … (which count as unnamed)
FRAME = pd.DataFrame(DATA["X"], columns=COLUMNS)
ROWS = FRAME.iloc[:5]


RELEASED = sorted(name for name, family in FAMILIES.items() if family.release is not None)
#: The families whose predictor answers for covariate rows X (the exit-table survival family answers for times).
REGRESSIONS = [name for name in RELEASED if FAMILIES[name].link.name != "survival"]


def _card_of(family) -> object:
    cards = [card for card in CARDS if card.name == family.release.name]
    assert cards, f"no card in cards.py for {family.release}: add one"
    return cards[0]


def _posterior(model, draws: int = 30) -> xr.DataTree:
    with model:
        prior = pm.sample_prior_predictive(draws=draws, random_seed=2, compile_kwargs=PYTHON_MODE)
    return xr.DataTree.from_dict(
        {"posterior": prior["prior"].to_dataset(), "constant_data": prior["constant_data"].to_dataset()}
    )


@pytest.fixture(scope="module")
def fitted() -> dict:
    """family -> posterior of its model (prior draws), one model per family; and ``weibull``."""
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in RELEASED:
            family = FAMILIES[name]
            card = _card_of(family)
            stats = card.run(X=FRAME) if "X" in card.data else card.run()
            out[name] = _posterior(family.builder(stats))
    from pm_private.survival import weibull_model

    out["weibull"] = _posterior(weibull_model(DATA["time"][:10], DATA["event"][:10], DATA["X"][:10]), 10)
    return out


def _predict(name, posterior, X):
    return FAMILIES[name].predictor(posterior, X)


def _outcome(name, posterior, X, argument: str, expected=None) -> str | None:
    """None when the call meets the contract, else what went wrong."""
    try:
        table = _predict(name, posterior, X)
    except ValueError as error:
        if argument not in str(error):
            return f"ValueError not naming {argument!r}: {error}"
        return None
    except Exception as error:  # noqa: BLE001  anything else is a defect
        return f"{type(error).__name__}: {error}"
    values = table.to_numpy(dtype=float)
    if not np.isfinite(values).all():
        return f"silent non-finite output {values.ravel()[:4]}"
    if expected is not None and not np.array_equal(values, expected):
        return f"a different answer: {values.ravel()[:4]} instead of {expected.ravel()[:4]}"
    return None


def _x_variants():
    """(label, X, must it equal the prediction on ROWS?) for the columns and cells of X."""
    for order in itertools.permutations(COLUMNS):
        yield f"columns {order}", ROWS[list(order)], True
    yield "array in the fit's order", ROWS.to_numpy(), True
    for column in COLUMNS:
        yield f"{column} renamed", ROWS.rename(columns={column: "weight"}), False
        yield f"{column} missing", ROWS.drop(columns=column), False
        yield f"{column} duplicated", ROWS[[*COLUMNS, column]], False
        other = COLUMNS[(COLUMNS.index(column) + 1) % D]
        yield f"{column} twice, {other} missing", ROWS[[column if c == other else c for c in COLUMNS]], False
    yield "an extra column", ROWS.assign(weight=1.0), False
    yield "columns renamed to the defaults", ROWS.set_axis([f"x{j}" for j in range(D)], axis=1), False
    for width in (D - 1, D + 1, 0):
        yield f"array of width {width}", np.ones((5, width)), False
    yield "1-d array", ROWS.to_numpy()[0], False
    for value in (np.nan, np.inf, -np.inf):
        for column in COLUMNS:
            bad = ROWS.copy()
            bad.iloc[2, COLUMNS.index(column)] = value
            yield f"{value} in {column}", bad, False
            yield f"{value} in {column} (array)", bad.to_numpy(), False
    yield "strings", ROWS.astype(str), False


@pytest.mark.slow
@pytest.mark.parametrize("name", REGRESSIONS)
def test_a_predictor_answers_for_the_columns_by_name_or_refuses_X(name, fitted):
    posterior = fitted[name]
    expected = _predict(name, posterior, ROWS).to_numpy(dtype=float)
    assert np.isfinite(expected).all()
    problems = []
    for label, X, same in _x_variants():
        problem = _outcome(name, posterior, X, "X", expected if same else None)
        if problem is None and not same and "1-d" not in label:
            # accepted although not the fitted columns: only where the answer is the same
            problem = _outcome(name, posterior, X, "X", expected)
            problem = problem and f"accepted: {problem}"
        if problem:
            problems.append(f"{label}: {problem}")
    assert not problems, "\n".join(problems)


def _posterior_variants(posterior):
    """(label, a posterior with one value of one variable replaced)."""
    data = posterior["posterior"].to_dataset()
    for variable in data.data_vars:
        for value in (np.nan, np.inf, -np.inf, 1e300, -1e300):
            array = data[variable].copy()
            array.values.reshape(-1)[array.size // 2] = value
            edited = posterior.copy()
            edited["posterior"] = data.assign({variable: array})
            yield f"{variable} = {value}", edited
            yield f"{variable} = {value} (bare)", data.assign({variable: array})


@pytest.mark.slow
@pytest.mark.parametrize("name", REGRESSIONS)
def test_a_predictor_refuses_a_posterior_it_cannot_answer_for(name, fitted):
    problems = []
    for label, posterior in _posterior_variants(fitted[name]):
        problem = _outcome(name, posterior, ROWS, "idata")
        if problem:
            problems.append(f"{label}: {problem}")
    for other, posterior in fitted.items():
        if other != name:
            try:
                _predict(name, posterior, ROWS)
                problems.append(f"the posterior of {other}: accepted")
            except ValueError as error:
                if "idata" not in str(error) or other not in str(error):
                    problems.append(f"the posterior of {other}: the error names neither: {error}")
    assert not problems, "\n".join(problems)


@pytest.mark.slow
def test_the_survival_predictor_refuses_a_posterior_it_cannot_answer_for(fitted):
    """predict_survival answers for times: a posterior with a non-finite or huge value in any
    variable is refused naming the posterior, or answered finitely; another family's is refused by name."""
    times = [0.1, 0.5, 1.0]
    problems = []
    for label, posterior in _posterior_variants(fitted["survival"]):
        try:
            values = pp.predict_survival(posterior, times=times).to_numpy(dtype=float)
            if not np.isfinite(values).all():
                problems.append(f"{label}: silent non-finite output")
        except ValueError as error:
            if "idata" not in str(error):
                problems.append(f"{label}: ValueError not naming the argument idata: {error}")
        except Exception as error:  # noqa: BLE001
            problems.append(f"{label}: {type(error).__name__}: {error}")
    for other, posterior in fitted.items():
        if other != "survival":
            with pytest.raises(ValueError, match=f"posterior.*{other}"):
                pp.predict_survival(posterior, times=times)
    assert not problems, "\n".join(problems)


# --------------------------------------------------------------------------------------------
# Release files: numeric fields perturbed
# --------------------------------------------------------------------------------------------

WRITTEN = [card for card in CARDS if card.release_kind and not card.not_in_files]
#: (release kind, field) pairs whose edits a reader cannot tell from a legitimate release: the
#: field enters no recorded noise scale or sensitivity (n), or the noise was calibrated on
#: something the file does not record (n for data perturbation, the data for the Weibull ladder),
#: or a larger value is still a valid release (the elastic net's penalty), or n is bound from
#: below only (an exit table with cells: people whose label is outside the cells are in n and in
#: no cell, and whether anyone is is private).  Release files are not signed; these stay
#: xfailed, naming the field, and the privacy page says so.
PENDING = {
    (kind, field)
    for kind, fields in {
        "adassp": "n",
        "data_perturbation": "batch_size epsilon steps",
        "elastic_net": "alpha lam",
        "linear_stats_gaussian": "n",
        "linear_stats_laplace": "n",
        "logistic_stats": "n",
        "poisson_stats": "n",
        "survival_stats": "n",
        "weibull": "gamma horizon n",
    }.items()
    for field in fields.split()
}


def _entry(card) -> tuple[dict, dict]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if card.stand_in is not None:
            release = card.stand_in()
        else:
            frame = "features" in field_kinds(all_release_types()[card.release_kind])
            release = release_of(card.run(**({"X": FRAME} if frame else {})))
    context = dict(features=COLUMNS, target="y") if card.release_kind.startswith(SUFF_STATS) else {}
    return json.loads(json.dumps(release_to_dict(release, **context))), context


def _numbers(value, path=()):
    """Paths of the numbers below ``value`` (the first two items of a list stand for the rest)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _numbers(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value[:2]):
            yield from _numbers(item, (*path, i))
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield path


def _kind_of(entry: dict, path: tuple) -> tuple[str, str | None]:
    """(the release kind, the declared kind of the field) at ``path`` (None: not a declared field)."""
    record = entry
    if entry["kind"] == SUFF_STATS:
        if path[0] != "releases":
            return SUFF_STATS, OUTPUT if path[0] == "statistics" else PUBLIC
        record, path = entry["releases"][path[1]], path[2:]
    elif path[0] in ("parameters", "outputs"):
        path = path[1:]
    kinds = field_kinds(all_release_types()[record["kind"]])
    return record["kind"], kinds.get(path[0], PUBLIC if path[0] in ("epsilon", "delta") else None)


def _perturbed(value):
    for label, new in (("sign flipped", -value), ("times 1e6", value * 10**6), ("0", 0 * value)):
        if new != value:
            yield label, new


def _edited(entry: dict, path: tuple, value) -> dict:
    document = json.loads(json.dumps(entry))
    target = document
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    if document["kind"] == SUFF_STATS and path[0] == "releases" and path[-1] in ("epsilon", "delta"):
        # keep the entry's total that of its releases, to reach the record's own check
        document[path[-1]] = math.fsum(r.get(path[-1], 0.0) for r in document["releases"])
    return document


def _write(tmp_path, document) -> object:
    file = tmp_path / "edited.json"
    file.unlink(missing_ok=True)
    file.write_text(
        json.dumps({"format": "pm_private-release", "version": 2, "created": "now", "releases": [document]}),
        encoding="utf-8",
    )
    return file


@pytest.mark.slow
@pytest.mark.parametrize("card", WRITTEN, ids=lambda card: card.name)
def test_a_perturbed_release_record_is_refused_naming_the_field_or_means_what_it_says(card, tmp_path):
    entry, context = _entry(card)
    file = _write(tmp_path, entry)
    back = read_release_file(file)[0]["release"]
    assert json.loads(json.dumps(release_to_dict(back, **context))) == entry, "an unedited record reads back as written"
    problems, pending = [], []
    for path in _numbers(entry):
        if path[0] in ("features", "target"):
            continue
        kind, declared = _kind_of(entry, path)
        for label, value in _perturbed(_at(entry, path)):
            document = _edited(entry, path, value)
            name = ".".join(map(str, path))
            try:
                back = read_release_file(_write(tmp_path, document))[0]["release"]
            except ValueError as error:
                names = [p for p in path if isinstance(p, str) and p not in ("parameters", "outputs", "releases")]
                if not any(
                    re.search(rf"(?<![A-Za-z0-9_]){n}(?![A-Za-z0-9_])", str(error)) for n in names
                ):  # a check of it or of a relation
                    (pending if (kind, names[-1]) in PENDING else problems).append(
                        f"{name} {label}: refused without naming it: {error}"
                    )
                continue
            except Exception as error:  # noqa: BLE001
                problems.append(f"{name} {label}: {type(error).__name__}: {error}")
                continue
            read = json.loads(json.dumps(release_to_dict(back, **context)))
            if read != document:
                problems.append(f"{name} {label}: accepted and read back as something else")
            elif declared != OUTPUT:  # a public number: the noise now means something else
                field = next(p for p in reversed(path) if isinstance(p, str))
                (pending if (kind, field) in PENDING else problems).append(
                    f"{name} {label}: a {declared or 'undeclared'} field accepted with another meaning [{kind}:{field}]"
                )
    assert not problems, "\n".join(problems)
    if pending:
        pytest.xfail("not detectable in an unsigned file: " + "; ".join(pending))


def _at(entry, path):
    for key in path:
        entry = entry[key]
    return entry


# --------------------------------------------------------------------------------------------
# The accountant: restated noise
# --------------------------------------------------------------------------------------------

ACCOUNTED = [card for card in CARDS if card.takes_accountant]
#: Cards whose valid call takes more than a few seconds.
SLOW_CARDS = {"data_perturbation_sgd", "select_penalty", "DPElasticNetLogisticRegression"}


def _speed(card):
    return pytest.param(card, id=card.name, marks=[pytest.mark.slow] if card.name in SLOW_CARDS else [])


@pytest.mark.parametrize("card", [_speed(card) for card in ACCOUNTED])
@pytest.mark.parametrize("factor", [2.0, 0.5])
def test_noise_restated_with_another_scale_is_refused_before_anything_is_recorded(card, factor):
    acct = PrivacyAccountant(epsilon=1e5, delta=1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        card.run(acct, neighbour=0)
    stated = [entry for entry in acct.ledger if entry.noise]
    if not stated:
        pytest.skip(f"{card.name} states no noise events")
    for entry in stated:
        restated = tuple(dataclasses.replace(event, scale=event.scale * factor) for event in entry.noise)
        before = (acct.spent, acct.ledger, acct.history)
        for how in ("record", "reserve", "charge"):
            with pytest.raises(ValueError, match="implies"):
                arguments = (entry.mechanism, entry.epsilon, entry.delta)
                options = dict(neighbours=entry.neighbours, noise=restated)
                if how == "charge":
                    with acct.charge(*arguments, **options):
                        pytest.fail("the body ran")
                else:
                    getattr(acct, how)(*arguments, **options)
            assert (acct.spent, acct.ledger, acct.history) == before, (card.name, how)


def test_the_harness_reaches_every_kind_of_card():
    assert {card.name for card in WRITTEN} >= {"release_linear_stats", "release_logistic_stats", "weibull_private"}
    assert RELEASED and all(FAMILIES[n].release.name in CARD for n in RELEASED)
