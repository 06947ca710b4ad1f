"""The seal's key and sealing function are not module attributes, and the docs say what the seal
protects against and what it cannot (code in the same process)."""

from pathlib import Path
from unittest import mock

import numpy as np
import pymc as pm
import xarray as xr

import pm_private
from pm_private.sampling import publish, secure_sample
from pm_private.sampling.publish import SEAL_ATTR

PRIVACY_PAGE = Path(pm_private.__file__).resolve().parents[1] / "docs" / "privacy.md"


def _tree():
    values = np.random.default_rng(0).normal(size=(1, 4, 2))
    return xr.DataTree.from_dict({"posterior": xr.Dataset({"f": (("chain", "draw", "f_dim_0"), values)})})


def test_no_module_attribute_holds_the_key_or_seals():
    assert not hasattr(publish, "_SEAL_KEY") and not hasattr(publish, "_seal") and not hasattr(publish, "_tag")
    assert not [name for name, value in vars(publish).items() if isinstance(value, (bytes, bytearray))]
    # what remains at module level verifies and cannot seal: it answers no for unsealed draws, whatever they are
    tree = _tree()
    assert publish._sealed(tree["posterior"], ["f"]) is False
    assert SEAL_ATTR not in tree["posterior"].attrs


def test_secure_sample_still_seals_what_it_sampled():
    tree = _tree()
    with mock.patch.object(pm, "sample", lambda *args, **kwargs: tree):
        sealed = secure_sample()
    assert publish._sealed(sealed["posterior"], ["f"])
    assert secure_sample.__qualname__ == "secure_sample" and secure_sample.__module__ == publish.__name__


def test_the_docs_say_what_the_seal_holds_against():
    for text in (publish.__doc__, secure_sample.__doc__, PRIVACY_PAGE.read_text()):
        assert "never exposed" not in text
    for text in (publish.__doc__, PRIVACY_PAGE.read_text()):
        flat = " ".join(text.split())
        assert "code running in this process" in flat or "code running in the same process" in flat
        assert "another process" in flat
