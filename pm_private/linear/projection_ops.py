"""The factor of the projected rows' second moment (``clipping="model"``) as an Op with a
hand-written gradient.

:func:`pm_private.linear.noise_aware.projected_second_moment` gives C̃ = (1/M) Σₘ z̃ₘz̃ₘᵀ over the
fixed points wₘ, zₘ = L_C wₘ projected as the release projected its rows; the model of the clipping
needs its Cholesky factor L̃.  As a graph, the M × (d+1) products, the projection and the
factorisation with their gradients are some thirty nodes, each a Numba compilation on an empty
cache; here they are two Numba kernels compiled with ``cache=True``.

The gradient, with cotangent L̄ of L̃: the factorisation's (Murray 2016),
C̄ = ½·(S + Sᵀ), S = L̃⁻ᵀ·Φ(L̃ᵀL̄)·L̃⁻¹ with Φ the lower triangle with its diagonal halved; then
z̄̃ₘ = (2/M)·C̄ z̃ₘ; through the projection z̃ = (c·x, clip(c'·y)) with the scale c = min(1, Bx/‖x‖)
(``"row"``, ``"row-scaled"``; ‖·‖∞ for ``"entry-scaled"``; c' = c where responses are scaled too,
else 1) or the entrywise clip (``"entry"``); and L̄_C = Σₘ z̄ₘwₘᵀ.
"""

from __future__ import annotations

import numba
import numpy as np
import pytensor.tensor as pt
from pytensor.gradient import DisconnectedType, grad_not_implemented, grad_undefined
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op
from pytensor.link.numba.dispatch.basic import numba_njit

from .._engine.jax_dispatch import register_jax_funcify
from .._engine.numba_arrays import copy_into
from .._engine.numba_cache import register_numba_funcify, runtime_value

__all__ = ["X_CLIPS", "projected_moment_cholesky"]

#: How a release bounds covariate rows (a release's ``x_clip``): entrywise clipping (Laplace), projection
#: of the covariates onto the ℓ2 ball (Gaussian), or scaling of the whole row, responses included, onto
#: that ball (Gaussian) or into the cube |xⱼ| ≤ Bx (Laplace).
#: The kernels take a clip kind as its position here.
X_CLIPS = ("entry", "row", "row-scaled", "entry-scaled")


@numba.njit(cache=True)
def _projected_rows(chol, draws, x_bound, y_bound, clip, rows, projected, scales):  # pragma: no cover
    """The rows z = L_C w (M, p), their projections z̃ = (c·x, clip(c'·y)) and scales c (1 for
    the entrywise clip), into the last three arguments, in passes over the whole array."""
    np.dot(draws, np.ascontiguousarray(chol.T), rows)
    m, p = rows.shape
    d = p - 1
    scales[:] = 1.0
    if clip == 0:
        for r in range(m):
            for j in range(d):
                projected[r, j] = min(max(rows[r, j], -x_bound), x_bound)
    else:
        sizes = np.zeros(m)
        for r in range(m):
            for j in range(d):
                sizes[r] = max(sizes[r], abs(rows[r, j])) if clip == 3 else sizes[r] + rows[r, j] * rows[r, j]
        if clip != 3:
            sizes = np.sqrt(sizes)
        for r in range(m):
            scales[r] = min(1.0, x_bound / sizes[r])
            for j in range(d):
                projected[r, j] = rows[r, j] * scales[r]
    for r in range(m):
        y = rows[r, d] * scales[r] if clip >= 2 else rows[r, d]
        projected[r, d] = min(max(y, -y_bound), y_bound)


@numba.njit(cache=True)
def projected_moment_cholesky_kernel(chol, draws, x_bound, y_bound, clip):  # pragma: no cover
    """L̃ of each regression of a batch: chol (B, p, p), draws (M, p), bounds (B,) → (B, p, p); then
    the rows, their projections (B, M, p) and scales (B, M), which the gradient reuses."""
    batch, (m, p) = chol.shape[0], draws.shape
    factor, rows, projected, scales = (
        np.empty(chol.shape),
        np.empty((batch, m, p)),
        np.empty((batch, m, p)),
        np.empty((batch, m)),
    )
    for b in range(batch):
        _projected_rows(chol[b], draws, x_bound[b], y_bound[b], clip, rows[b], projected[b], scales[b])
        copy_into(factor[b], np.linalg.cholesky((projected[b].T @ projected[b]) / m))
    return factor, rows, projected, scales


@numba.njit(cache=True)
def _moment_cotangent(factor, g):  # pragma: no cover
    """C̄ = ½(S + Sᵀ), S = L̃⁻ᵀΦ(L̃ᵀL̄)L̃⁻¹ (module notes)."""
    p = factor.shape[0]
    phi = np.tril(factor.T @ g)
    for i in range(p):
        phi[i, i] *= 0.5
    inverse = np.linalg.inv(factor)
    s = inverse.T @ phi @ inverse
    return 0.5 * (s + s.T)


@numba.njit(cache=True, inline="always")
def _row_cotangent(z, scale, bar, out, x_bound, y_bound, clip):  # pragma: no cover
    """z̄ of one row from z̄̃ (module notes), into ``out``."""
    d = z.shape[0] - 1
    y_scale = scale if clip >= 2 else 1.0
    y_bar = bar[d] if abs(z[d] * y_scale) < y_bound else 0.0  # the cotangent of c'·y
    out[d] = y_scale * y_bar
    if clip == 0:
        for j in range(d):
            out[j] = bar[j] if abs(z[j]) < x_bound else 0.0
        return
    scale_bar = z[d] * y_bar if clip >= 2 else 0.0
    for j in range(d):
        out[j] = scale * bar[j]
        scale_bar += z[j] * bar[j]
    if scale < 1.0:  # c = Bx/‖x‖: ∂c/∂x = −c·x/‖x‖² (Euclidean), −c/xₖ at the largest |xₖ|
        if clip == 3:
            k = np.argmax(np.abs(z[:d]))
            out[k] -= scale_bar * scale / z[k]
        else:
            norm2 = 0.0
            for j in range(d):
                norm2 += z[j] * z[j]
            for j in range(d):
                out[j] -= scale_bar * scale * z[j] / norm2


@numba.njit(cache=True)
def projected_moment_cholesky_vjp_kernel(
    draws, x_bound, y_bound, clip, factor, rows, projected, scales, g
):  # pragma: no cover
    """∂/∂L_C of ⟨L̄, L̃⟩ for a batch (module notes), from the forward kernel's outputs."""
    m, p = draws.shape
    out = np.empty(factor.shape)
    z_bar = np.empty((m, p))
    for b in range(factor.shape[0]):
        moment_bar = (2.0 / m) * _moment_cotangent(factor[b], g[b])
        bars = projected[b] @ moment_bar  # z̄̃ₘ = (2/M)·C̄ z̃ₘ (C̄ symmetric)
        for r in range(m):
            _row_cotangent(rows[b, r], scales[b, r], bars[r], z_bar[r], x_bound[b], y_bound[b], clip)
        copy_into(out[b], z_bar.T @ draws)
    return out


def _inputs(chol, draws, x_bound, y_bound):
    chol, draws, x_bound, y_bound = (pt.as_tensor(v).astype("float64") for v in (chol, draws, x_bound, y_bound))
    if chol.ndim != 3 or draws.ndim != 2 or x_bound.ndim != 1 or y_bound.ndim != 1:
        raise ValueError("projected_moment_cholesky: chol (B, p, p), draws (M, p) and bounds (B,)")
    return [chol, draws, x_bound, y_bound]


class ProjectedMomentCholesky(Op):
    """(L_C, w, Bx, By) ↦ L̃, the factor of the projected rows' second moment, for a batch; then
    the rows, projections and scales that its gradient reuses."""

    __props__ = ("clip",)

    def __init__(self, clip: int):
        self.clip = int(clip)

    def make_node(self, chol, draws, x_bound, y_bound):
        inputs = _inputs(chol, draws, x_bound, y_bound)
        rows = pt.tensor(dtype="float64", shape=(None, None, None)).type
        return Apply(self, inputs, [inputs[0].type(), rows(), rows(), inputs[2].type.clone(shape=(None, None))()])

    def perform(self, node, inputs, output_storage):
        arrays = [np.ascontiguousarray(x, dtype=np.float64) for x in inputs]
        for storage, value in zip(output_storage, projected_moment_cholesky_kernel(*arrays, self.clip), strict=True):
            storage[0] = value

    def infer_shape(self, node, shapes):
        (batch, p, _), (m, _) = shapes[0], shapes[1]
        return [tuple(shapes[0]), (batch, m, p), (batch, m, p), (batch, m)]

    def pullback(self, inputs, outputs, cotangents):
        if any(not isinstance(c.type, DisconnectedType) for c in cotangents[1:]):
            return [grad_not_implemented(self, i, x, "the gradient's intermediates") for i, x in enumerate(inputs)]
        chol_bar = ProjectedMomentCholeskyVJP(self.clip)(*inputs, *outputs, cotangents[0])
        data = [grad_undefined(self, i, x, "the points and bounds are data") for i, x in enumerate(inputs) if i]
        return [chol_bar, *data]


class ProjectedMomentCholeskyVJP(Op):
    """(L_C, w, Bx, By, the forward's outputs, L̄) ↦ ∂/∂L_C of ⟨L̄, L̃⟩.  No second derivatives."""

    __props__ = ("clip",)

    def __init__(self, clip: int):
        self.clip = int(clip)

    def make_node(self, chol, draws, x_bound, y_bound, factor, rows, projected, scales, g):
        rest = [pt.as_tensor(x).astype("float64") for x in (factor, rows, projected, scales, g)]
        return Apply(self, [*_inputs(chol, draws, x_bound, y_bound), *rest], [chol.type()])

    def perform(self, node, inputs, output_storage):
        _, draws, x_bound, y_bound, *rest = (np.ascontiguousarray(x, dtype=np.float64) for x in inputs)
        output_storage[0][0] = projected_moment_cholesky_vjp_kernel(draws, x_bound, y_bound, self.clip, *rest)

    def infer_shape(self, node, shapes):
        return [tuple(shapes[0])]

    def pullback(self, inputs, outputs, cotangents):
        return [grad_not_implemented(self, i, x, "second derivatives") for i, x in enumerate(inputs)]


@register_numba_funcify(ProjectedMomentCholesky)
def _numba_funcify_projected(op, node=None, **kwargs):
    """Numba implementation for PyTensor's default backend: the cached kernel."""
    clip = op.clip

    @numba_njit
    def projected_moment_cholesky_op(chol, draws, x_bound, y_bound):
        c = np.ascontiguousarray
        return projected_moment_cholesky_kernel(c(chol), c(draws), c(x_bound), c(y_bound), runtime_value(clip))

    return projected_moment_cholesky_op


@register_numba_funcify(ProjectedMomentCholeskyVJP)
def _numba_funcify_projected_vjp(op, node=None, **kwargs):
    """Numba implementation for PyTensor's default backend: the cached kernel."""
    clip = op.clip

    @numba_njit
    def projected_moment_cholesky_vjp_op(chol, draws, x_bound, y_bound, factor, rows, projected, scales, g):
        c = np.ascontiguousarray
        return projected_moment_cholesky_vjp_kernel(
            c(draws), c(x_bound), c(y_bound), runtime_value(clip), c(factor), c(rows), c(projected), c(scales), c(g)
        )

    return projected_moment_cholesky_vjp_op


def _jax_projected(clip: int):
    """The forward map in ``jax.numpy`` (JAX differentiates it)."""
    import jax.numpy as jnp

    def forward(chol, draws, x_bound, y_bound):
        z = jnp.einsum("mj,bij->bmi", draws, chol)
        x, y = z[..., :-1], z[..., -1]
        xb, yb = x_bound[:, None], y_bound[:, None]
        if clip == 0:
            x = jnp.clip(x, -xb[..., None], xb[..., None])
        else:
            size = jnp.abs(x).max(axis=-1) if clip == 3 else jnp.sqrt((x * x).sum(axis=-1))
            scale = jnp.minimum(1.0, xb / size)
            x = x * scale[..., None]
            y = y * scale if clip >= 2 else y
        projected = jnp.concatenate([x, jnp.clip(y, -yb, yb)[..., None]], axis=-1)
        moment = jnp.einsum("bmi,bmj->bij", projected, projected) / draws.shape[0]
        return jnp.linalg.cholesky(moment), z, projected, scale if clip else jnp.ones(z.shape[:-1])

    return forward


@register_jax_funcify(ProjectedMomentCholesky)
def _jax_funcify_projected(op, node=None, **kwargs):
    """JAX implementation: the same map in ``jax.numpy``."""
    forward = _jax_projected(op.clip)

    def projected_moment_cholesky_op(chol, draws, x_bound, y_bound):
        return forward(chol, draws, x_bound, y_bound)

    return projected_moment_cholesky_op


@register_jax_funcify(ProjectedMomentCholeskyVJP)
def _jax_funcify_projected_vjp(op, node=None, **kwargs):
    """JAX implementation: JAX's own VJP of the forward map."""
    import jax

    forward = _jax_projected(op.clip)

    def projected_moment_cholesky_vjp_op(chol, draws, x_bound, y_bound, factor, rows, projected, scales, g):
        _, pull = jax.vjp(lambda c: forward(c, draws, x_bound, y_bound)[0], chol)
        return pull(g)[0]

    return projected_moment_cholesky_vjp_op


def projected_moment_cholesky(chol_c, draws, x_bound, y_bound, x_clip: str):
    """Cholesky factor of :func:`pm_private.linear.noise_aware.projected_second_moment`, with the
    gradient of the module notes (an Op of Numba kernels).

    Parameters
    ----------
    chol_c : tensor (..., d+1, d+1)
        A factor of C (:func:`pm_private.linear.released_stats_ops.augmented_cholesky`).
    draws : array or tensor (M, d+1)
        The fixed points of :func:`pm_private.linear.noise_aware.projection_draws`.
    x_bound, y_bound : tensor (...)
        The release's public bounds Bx and By.
    x_clip : {"entry", "row", "row-scaled", "entry-scaled"}
        How the release clipped covariates.

    Returns
    -------
    tensor (..., d+1, d+1)
        L̃ with L̃L̃ᵀ = C̃.
    """
    chol_c = pt.as_tensor(chol_c, dtype="float64")
    batch = tuple(chol_c.shape[i] for i in range(chol_c.ndim - 2))
    p = chol_c.shape[-1]
    flat = chol_c.reshape((-1, p, p))
    bounds = [pt.broadcast_to(pt.as_tensor(b, dtype="float64"), batch).reshape((-1,)) for b in (x_bound, y_bound)]
    factor = ProjectedMomentCholesky(X_CLIPS.index(x_clip))(flat, draws, *bounds)[0]
    return factor.reshape((*batch, p, p))
