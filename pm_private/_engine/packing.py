"""Several arrays as one labelled vector: how a model keeps the constants computed from a release
in one data node (``pm.Data`` with a dim whose labels name each entry, ``gram[0,1]``, ``x_clip``)
instead of one node per array, and reads them back."""

from __future__ import annotations

import numpy as np

__all__ = ["entry_labels", "layout_of", "pack", "unpack"]


def entry_labels(key: str, shape: tuple[int, ...]) -> list[str]:
    """``key`` for a scalar, ``key[i,j]`` for each entry of an array (C order)."""
    if not shape:
        return [key]
    return [f"{key}[{','.join(map(str, index))}]" for index in np.ndindex(*shape)]


def pack(arrays: dict, batch: int = 0) -> tuple[np.ndarray, list[str], list]:
    """The arrays (``batch`` leading axes, shared) as one vector per batch entry, the labels of its
    entries and its layout [(key, shape), …]."""
    arrays = {key: np.asarray(value, dtype=np.float64) for key, value in arrays.items()}
    lead = next(iter(arrays.values())).shape[:batch]
    layout = [(key, value.shape[batch:]) for key, value in arrays.items()]
    vector = np.concatenate([np.reshape(value, (*lead, -1)) for value in arrays.values()], axis=-1)
    return vector, [label for key, shape in layout for label in entry_labels(key, shape)], layout


def unpack(vector, layout, lead: tuple = ()) -> dict:
    """The arrays of a packed vector (NumPy or PyTensor) with leading shape ``lead``."""
    out, start = {}, 0
    for key, shape in layout:
        size = int(np.prod(shape, dtype=int))
        out[key] = vector[..., start : start + size].reshape((*lead, *shape))
        start += size
    return out


def layout_of(labels) -> list:
    """The layout of a packed vector from the labels of its entries (:func:`entry_labels`)."""
    indices: dict[str, list[tuple[int, ...]]] = {}
    for label in labels:
        key, _, index = str(label).partition("[")
        indices.setdefault(key, []).append(tuple(int(i) for i in index.rstrip("]").split(",")) if index else ())
    return [
        (key, tuple(int(n) + 1 for n in np.max(found, axis=0)) if found[0] else ()) for key, found in indices.items()
    ]
