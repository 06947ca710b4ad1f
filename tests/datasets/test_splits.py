"""Splits that keep identical rows (a person's records) in one part."""

import numpy as np
import pytest

from pm_private.datasets import split_keeping_identical_rows


def test_identical_rows_fall_in_one_part_and_the_parts_cover_the_rows():
    rng = np.random.default_rng(0)
    people = rng.normal(size=(300, 3))
    X = people[rng.integers(0, 300, size=2000)]  # about 6–7 records per person
    for count, sizes in (("rows", [100, 400]), ("groups", [20, 60])):
        parts = split_keeping_identical_rows(X, np.random.default_rng(1), sizes, count=count)
        assert len(parts) == 3
        assert np.array_equal(np.sort(np.concatenate(parts)), np.arange(len(X)))
        keys = [{row.tobytes() for row in X[part]} for part in parts]
        assert not (keys[0] & keys[1] or keys[0] & keys[2] or keys[1] & keys[2])
        for part, size in zip(parts, sizes, strict=False):
            held = len(part) if count == "rows" else len({row.tobytes() for row in X[part]})
            assert size <= held < size + (13 if count == "rows" else 1)  # at most one group more


def test_a_plain_random_split_of_such_a_table_shares_people_and_this_one_does_not():
    rng = np.random.default_rng(2)
    X = np.repeat(rng.normal(size=(100, 2)), 7, axis=0)
    order = rng.permutation(len(X))
    plain = {row.tobytes() for row in X[order[:50]]} & {row.tobytes() for row in X[order[50:]]}
    public, private = split_keeping_identical_rows(X, rng, [50])
    kept = {row.tobytes() for row in X[public]} & {row.tobytes() for row in X[private]}
    assert len(plain) > 10 and not kept


def test_bad_arguments_are_refused():
    X = np.zeros((5, 2))
    with pytest.raises(ValueError, match="2-D"):
        split_keeping_identical_rows(np.zeros(5), np.random.default_rng(0), [1])
    with pytest.raises(ValueError, match="at most the 1 groups"):
        split_keeping_identical_rows(X, np.random.default_rng(0), [2], count="groups")
    with pytest.raises(ValueError, match="count"):
        split_keeping_identical_rows(X, np.random.default_rng(0), [2], count="people")
