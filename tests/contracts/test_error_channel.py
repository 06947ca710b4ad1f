"""Nothing leaves a mechanism but its release: the error channel is part of the mechanism.

Every card of a charged mechanism (tests/contracts/cards.py) is called on pairs of neighbouring
data sets (record 0 replaced), under its valid public arguments and under adversarial ones (a
public map that would overflow, a public row equal to a private one, cells that leave a label
out, a horizon below the private times, bounds at the ends of the floats).  Everything a caller
observes is recorded: success or refusal, the exception's type and message, every warning,
everything written to the process's stdout and stderr (file descriptors 1 and 2), and the
ledger's spend.  On the two neighbours all of it must be identical, noisy values aside, unless
both calls were charged (a refusal raised inside the reservation, whose message names no row
and no count: it costs what a release costs, so the budget bounds the probes).

The neighbours are in-domain: finite records, for the discrete-time mechanisms in the fixed
domain of their paper (rows in the unit ball, times in [0, 1]), which no public argument moves.
The command line is held to the same contract, with its exit code.
"""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from cards import CARDS, DATA, NEIGHBOUR, D

from pm_private.cli import main
from pm_private.privacy.accountant import PrivacyAccountant
from pm_private.privacy.release import ChargedRefusal
from pm_private.released.preprocessing import Preprocessing

CHARGED = [card for card in CARDS if card.takes_accountant]

#: The records whose domain the paper fixes (no public argument moves it), by mechanism.
FIXED_DOMAIN = {"output_perturbation": {"X", "time"}, "objective_perturbation": {"X", "time"}}

#: Record 0 replaced by values at the ends of the floats, by column of DATA (finite: in the domain).
EXTREME = {
    "X": np.array([1e300, -1e300, 1e300])[:D],
    "y": 1e300,
    "counts": 10**15,
    "time": 1e300,
    "cell": "zzz",
}


def _with(records: dict, column: str, value) -> dict:
    out = {name: (v.copy() if hasattr(v, "copy") else v) for name, v in records.items()}
    if column == "cell":
        out["cell"] = out["cell"].astype(object)
    out[column][0] = value
    return out


def _neighbour_pairs(card) -> list[tuple[str, dict, dict]]:
    """(name, D, D′): the cards' corner neighbour, and record 0 moved to an extreme value."""
    pairs = [("corner", DATA, NEIGHBOUR)]
    fixed = FIXED_DOMAIN.get(card.name, set())
    for column in sorted(set(card.data.values()) & set(EXTREME)):
        if column not in fixed:
            pairs.append((f"{column} extreme", DATA, _with(DATA, column, EXTREME[column])))
            pairs.append((f"{column} extreme, reversed", _with(DATA, column, EXTREME[column]), DATA))
    return pairs


def _probes(card) -> list[tuple[str, dict]]:
    """(name, public overrides): the valid call and public arguments chosen to steer a refusal."""
    params = card.parameters()
    probes = [("valid", {})]
    if "preprocessing" in params:
        centre = DATA["X"][0]
        probes += [
            ("tiny x_scale", {"preprocessing": Preprocessing(x_center=np.zeros(D), x_scale=1e-300)}),
            ("centre at a private value", {"preprocessing": Preprocessing(x_center=centre, x_scale=5e-324)}),
            (
                "a private row among the public ones",
                {"preprocessing": Preprocessing(x_public=np.vstack([DATA["X"][:1], DATA["X"][:1] + 0.25]))},
            ),
        ]
    if "cells" in params and "cell" in card.data:
        probes.append(("cells leave a label out", {"cells": ["a"]}))
    if "horizon" in params:
        probes.append(("horizon below the private times", {"horizon": 1e-3}))
    for bound in ("x_bound", "y_bound"):
        if bound in params and card.kinds.get(bound) == "bound":
            probes += [(f"{bound} tiny", {bound: 1e-300}), (f"{bound} huge", {bound: 1e300})]
    return probes


def _mask(text: str) -> str:
    """Output with its numbers masked: the noisy values may differ, the words may not."""
    return re.sub(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", "#", text)


def _observed(card, records: dict, overrides: dict, capfd) -> dict:
    """Everything a caller sees of one call."""
    accountant = PrivacyAccountant(1e5, 1e-3)
    kwargs = {arg: records[column] for arg, column in card.data.items()} | card.params | overrides
    kwargs["accountant"] = accountant
    capfd.readouterr()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            card.invoke(**kwargs)
            outcome = ("released", "")
        except Exception as error:  # noqa: BLE001 - the type and words of any refusal are the observation
            outcome = (type(error).__name__, str(error))
    out, err = capfd.readouterr()
    return {
        "outcome": outcome,
        "warnings": sorted(f"{w.category.__name__}: {_mask(str(w.message))}" for w in caught),
        "stdout": _mask(out),
        "stderr": _mask(err),
        "spent": accountant.spent.epsilon > 0,
    }


CASES = [
    pytest.param(card, probe, pair, id=f"{card.name}-{probe[0]}-{pair[0]}")
    for card in CHARGED
    for probe in _probes(card)
    for pair in _neighbour_pairs(card)
]


@pytest.mark.parametrize(("card", "probe", "pair"), CASES)
def test_neighbours_are_indistinguishable_but_for_the_noise(card, probe, pair, capfd):
    _, overrides = probe
    _, first, second = pair
    a, b = _observed(card, first, overrides, capfd), _observed(card, second, overrides, capfd)
    if a["outcome"][0] == "released" and b["outcome"][0] == "released":
        assert a == b
        return
    if a["outcome"] == b["outcome"] and a["spent"] == b["spent"]:  # refused alike (public arguments)
        assert a == b
        return
    # The outcomes differ: allowed only when both calls were charged and the refusal names nothing.
    assert a["spent"] and b["spent"], (a, b)
    for seen in (a, b):
        assert seen["outcome"][0] in ("released", ChargedRefusal.__name__), seen
        assert not re.search(r"\d", seen["outcome"][1]), seen  # no count, no row, no value


def test_the_contract_covers_every_charged_mechanism_and_its_adversarial_arguments():
    names = {card.name for card in CHARGED}
    probed = {(param.values[0].name, param.values[1][0]) for param in CASES}
    assert len(names) >= 15 and names == {name for name, _ in probed}
    for name in ("release_logistic_stats", "release_survival_regression_stats", "release_linear_stats"):
        assert (name, "tiny x_scale") in probed and (name, "a private row among the public ones") in probed
    assert ("release_survival_stats", "cells leave a label out") in probed
    assert ("weibull_private", "horizon below the private times") in probed


# ------------------------------------------------------------------------------------------------
# The command line: exit code, stdout and stderr
# ------------------------------------------------------------------------------------------------


def _cli_observed(argv, capsys) -> tuple:
    capsys.readouterr()
    try:
        code = main(argv)
    except SystemExit as stop:
        code = stop.code
    out, err = (text.replace(argv[2], "DATA") for text in capsys.readouterr())
    return code, _mask(out), _mask(err)


#: Each command with its private columns, and the flags of a public map that would overflow.
COMMANDS = {
    "linear-stats": (["--target", "y", "--features", "a", "b", "--y-bound", "2", "--noise", "gaussian"], True),
    "logistic-stats": (["--target", "label", "--features", "a", "b"], False),
    "survival-regression": (["--time", "t", "--event", "e", "--features", "a", "b", "--edges", "0.5,1,2"], False),
}
TINY_SCALES = ["--x-center", "0", "0", "--x-scale", "5e-324", "1e-300"]


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_the_command_line_answers_neighbours_alike(tmp_path, monkeypatch, capsys, command):
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"a": rng.uniform(-1, 1, 2000), "b": rng.uniform(-1, 1, 2000)})
    frame["y"] = frame["a"] - frame["b"] + 0.1 * rng.normal(size=2000)
    frame["label"] = (frame["y"] > 0).astype(int)
    frame["t"], frame["e"] = rng.exponential(1.0, 2000), rng.integers(0, 2, 2000)
    frame.to_csv("d.csv", index=False)
    frame.loc[0, ["a", "y", "t"]] = [math.ldexp(1.0, 1000), -1e300, 1e300]  # record 0 replaced, far out
    frame.to_csv("n.csv", index=False)
    columns, response = COMMANDS[command]
    flags = TINY_SCALES + (["--y-center", "0", "--y-scale", "1e-300"] if response else [])
    seen = []
    for data in ("d.csv", "n.csv"):
        argv = ["release", command, data, *columns, "--x-bound", "1", "--epsilon", "1", "--delta", "1e-6"]
        argv += ["--out", f"{data}.json", *flags, "--ledger", f"{data}.db"]
        argv += ["--total-epsilon", "2", "--total-delta", "1e-5"]
        seen.append(_cli_observed(argv, capsys))
    assert seen[0] == seen[1] and seen[0][0] == 0, seen
