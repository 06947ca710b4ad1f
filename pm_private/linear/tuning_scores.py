"""Monte Carlo scores of candidate budget splits and clip bounds on auxiliary synthetic data (Honkela
et al. 2018, §4.3, Eq. 10): the auxiliary data and noise, the regularised solves and the Spearman
rank correlation of the predictions, averaged over data sets and noise draws.  They read no private
data and spend no budget."""

from __future__ import annotations

import math
import os

import numpy as np

from .release import sensitivities

# Predictions are ranked in blocks of about this many values (rows × n): keeps the argsort,
# the gather and the prediction matrix in cache-friendly, bounded memory whatever n is.
_BLOCK_VALUES = 1 << 16


# Coefficients larger than this (in absolute value) count as a failed solve: X·β could overflow.
_MAX_COEF = 1e150


def _workers() -> int:
    """Threads for ranking (numpy's sort and take release the GIL): the usable cores, at most 4."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(4, cores))


def _aux_data(rng: np.random.Generator, n: int, d: int):
    """One auxiliary data set from Eq. (10) with λ = λ₀ = 1, and the centred ranks of its y."""
    X = rng.standard_normal((n, d))
    beta = rng.standard_normal(d)
    y = X @ beta + rng.standard_normal(n)
    ranks = np.empty(n)
    ranks[np.argsort(y, kind="stable")] = np.arange(n)
    return X, y, ranks - (n - 1) / 2.0


def _std_noise(rng: np.random.Generator, count: int, d: int):
    """``count`` standard Laplace draws: symmetric d×d (upper triangle iid, mirrored) and d-vector."""
    upper = np.triu_indices(d)
    lxx = np.zeros((count, d, d))
    lxx[:, upper[0], upper[1]] = rng.laplace(0.0, 1.0, size=(count, upper[0].size))
    lxx = lxx + np.triu(lxx, 1).transpose(0, 2, 1)
    lxy = rng.laplace(0.0, 1.0, size=(count, d))
    return lxx, lxy


def _solve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Batched LU solve; a singular system gives NaN (scored −1 later) instead of an error."""
    b = np.broadcast_to(b, a.shape[:-1] + b.shape[-1:])
    try:
        return np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        pass
    flat_a = a.reshape((-1,) + a.shape[-2:])
    flat_b = b.reshape((-1,) + b.shape[-2:])
    out = np.full(flat_b.shape, np.nan)
    for i in range(flat_a.shape[0]):
        try:
            out[i] = np.linalg.solve(flat_a[i], flat_b[i])
        except np.linalg.LinAlgError:
            pass
    return out.reshape(b.shape)


_SIGN_FLIP = np.int64(0x7FFF_FFFF_FFFF_FFFF)


def _spearman_block(coefs, xt, y_ranks, weights) -> np.ndarray:
    """Spearman scores of one block of coefficient rows (see :func:`_spearman`)."""
    n = xt.shape[1]
    bits = max(1, (n - 1).bit_length())
    # The order of each row of predictions, by one integer sort instead of an argsort (about
    # twice as fast): the float64 bit pattern, with the magnitude bits of negative numbers
    # flipped, is an int64 in the same order; its low ``bits`` bits are replaced by the column
    # index, which is read back after sorting.  Values equal in all but those last bits (a
    # relative difference below 2^(bits−52)) are ordered by index, i.e. counted as ties.
    key = (coefs @ xt).view(np.int64)
    np.bitwise_xor(key, np.right_shift(key, 63) & _SIGN_FLIP, out=key)
    np.right_shift(key, bits, out=key)
    np.left_shift(key, bits, out=key)
    np.bitwise_or(key, np.arange(n, dtype=np.int64), out=key)
    key.sort(axis=1)
    np.bitwise_and(key, np.int64((1 << bits) - 1), out=key)
    return np.take(y_ranks, key) @ weights


def _spearman(coefs: np.ndarray, X: np.ndarray, y_ranks: np.ndarray, pool=None) -> np.ndarray:
    """Spearman correlation between y and X·β for every row β of ``coefs`` (…, d) → (…).

    Spearman = Pearson correlation of ranks; with the order o = argsort(X·β) the prediction
    ranked k is o_k, so Σᵢ (rank_pred,i − m)(rank_y,i − m) = Σ_k (k − m)(rank_y[o_k] − m),
    m = (n − 1)/2, and the denominator is Σ_k (k − m)² = n(n² − 1)/12 (continuous data: no
    ties).  ``y_ranks`` are the centred ranks of y.  Rows with a non-finite or overflowing
    coefficient (a singular solve) score −1.  Blocks of rows go to ``pool`` (threads: the sort
    and the gather release the GIL) when given.
    """
    n = X.shape[0]
    shape = coefs.shape[:-1]
    coefs = coefs.reshape(-1, coefs.shape[-1])
    bad = ~(np.abs(coefs) <= _MAX_COEF).all(axis=1)  # also catches NaN
    if bad.any():
        coefs = np.where(bad[:, None], 0.0, coefs)
    weights = (np.arange(n) - (n - 1) / 2.0) / (n * (n * n - 1) / 12.0)
    xt = np.ascontiguousarray(X.T)
    rows = max(1, _BLOCK_VALUES // n)
    blocks = [coefs[start : start + rows] for start in range(0, coefs.shape[0], rows)]

    def run(block):
        return _spearman_block(block, xt, y_ranks, weights)

    parts = list(pool.map(run, blocks)) if pool is not None and len(blocks) > 1 else [run(b) for b in blocks]
    out = np.concatenate(parts)
    out[bad] = -1.0
    return out.reshape(shape)


def _mean_scores(generator, n, d, epsilon, p1, p2, omegas, n_datasets, n_noise, pool=None):
    """Mean Spearman score of every split (p1[s], p2[s]) and pair (ωx, ωy) ∈ omegas², shape (S, ω, ω),
    and its standard error (from the spread of the per-aux-set means; NaN for one aux set).

    Averaged over ``n_datasets`` aux sets × ``n_noise`` noise draws, with common random
    numbers: per aux set and noise draw one standard Laplace P₀ (symmetric) and Q₀ serve every
    candidate, scaled by its own b_xx = d(d+1)Bx²/(2p₁ε) and b_xy = 2dBxBy/(p₂ε).  For fixed ωx
    and draw, A(p₁) = Sxx + I + b_xx(p₁)·P₀ is factorised once per distinct p₁ (batched LU) and
    β̂ = A⁻¹Sxy(ωy) + b_xy(ωy, p₂)·A⁻¹Q₀ is linear in b_xy, so the solves take every ωy and
    Q₀ as right-hand sides and every p₂ costs only an axpy.
    """
    sigma_y = math.sqrt(d + 1.0)
    eye = np.eye(d)
    p1_values, p1_index = np.unique(p1, return_inverse=True)
    y_bounds = omegas * sigma_y
    total = np.zeros((omegas.size, p1.size, omegas.size))  # (ωx, split, ωy)
    total_sq = np.zeros_like(total)
    for _ in range(n_datasets):
        X, y, y_ranks = _aux_data(generator, n, d)
        lxx, lxy = _std_noise(generator, n_noise, d)
        y_clipped = np.clip(y[:, None], -y_bounds, y_bounds)  # (n, ny)
        coefs = np.empty((omegas.size, n_noise, p1.size, omegas.size, d))
        for jx, x_bound in enumerate(omegas):
            sens_xx, sens_xy, _ = sensitivities(d, x_bound, y_bounds)
            xc = np.clip(X, -x_bound, x_bound)
            a = (xc.T @ xc + eye) + (sens_xx / (p1_values * epsilon))[None, :, None, None] * lxx[:, None]
            sxy = np.broadcast_to(xc.T @ y_clipped, (n_noise, d, omegas.size))
            sol = _solve(a, np.concatenate([sxy, lxy[:, :, None]], axis=2)[:, None])
            base = sol[..., :-1].transpose(0, 1, 3, 2)[:, p1_index]  # (noise, S, ny, d)
            unit = sol[..., -1][:, p1_index]  # (noise, S, d)
            scale_xy = sens_xy[None, :] / (p2[:, None] * epsilon)  # (S, ny)
            coefs[jx] = base + scale_xy[None, :, :, None] * unit[:, :, None, :]
        per_set = _spearman(coefs, X, y_ranks, pool).mean(axis=1)
        total += per_set
        total_sq += per_set**2
    mean = total / n_datasets
    if n_datasets > 1:
        se = np.sqrt(np.maximum(total_sq / n_datasets - mean**2, 0.0) / (n_datasets - 1))
    else:
        se = np.full_like(mean, np.nan)
    return mean.transpose(1, 0, 2), se.transpose(1, 0, 2)


def _aux_scores(generator, n, d, epsilon, p1, p2, omegas_x, omegas_y, n_datasets, n_noise, goal):
    """Mean and s.e. (over aux sets) of the aux score of every split s and (ωx, ωy): shape
    (S, ωx, ωy); the score is the held-out R² (``goal="prediction"``) or 1 − ‖β̂ − β‖²/‖β‖²
    (``goal="coefficients"``)."""
    sigma_y = math.sqrt(2.0)
    n_test = max(2000, 20 * d)
    y_bounds = omegas_y * sigma_y
    upper = np.triu_indices(d)
    n_upper = upper[0].size
    eye = np.eye(d)
    per_set = np.empty((n_datasets, p1.size, omegas_x.size, omegas_y.size))
    for k in range(n_datasets):
        beta = generator.standard_normal(d) / math.sqrt(d)
        X = generator.standard_normal((n, d))
        y = X @ beta + generator.standard_normal(n)
        Xt = generator.standard_normal((n_test, d))
        yt = Xt @ beta + generator.standard_normal(n_test)
        y_clipped = np.clip(y[:, None], -y_bounds, y_bounds)  # (n, ny)
        lxx = generator.laplace(size=(n_noise, n_upper))
        lxy = generator.laplace(size=(n_noise, d))
        for jx, omega_x in enumerate(omegas_x):
            sens_xx, sens_xy, _ = sensitivities(d, omega_x, y_bounds)
            xc = np.clip(X, -omega_x, omega_x)
            xt = np.clip(Xt, -omega_x, omega_x)
            b_xx = sens_xx / (p1 * epsilon)  # (S,)
            b_xy = sens_xy[None, :] / (p2[:, None] * epsilon)  # (S, ny)
            noise = np.zeros((n_noise, p1.size, d, d))
            noise[:, :, upper[0], upper[1]] = lxx[:, None, :] * b_xx[None, :, None]
            noise = noise + np.triu(noise, 1).swapaxes(-1, -2)
            ridge = 2.0 * math.sqrt(2.0 * d) * b_xx + 1.0  # ≈ spectral norm of the noise, plus the prior
            a = xc.T @ xc + noise + ridge[None, :, None, None] * eye
            rhs = (xc.T @ y_clipped)[None, None] + lxy[:, None, :, None] * b_xy[None, :, None, :]  # (K, S, d, ny)
            coef = _solve(a, rhs)  # (K, S, d, ny)
            coef = np.where(np.isfinite(coef) & (np.abs(coef) < _MAX_COEF), coef, 0.0)
            if goal == "coefficients":  # relative squared error of β̂ against the population's β
                error = np.square(coef - beta[None, None, :, None]).sum(axis=2)  # (K, S, ny)
                per_set[k, :, jx, :] = 1.0 - error.mean(axis=0) / (beta @ beta)
                continue
            # Test MSE of the clipped-covariate predictions against the unclipped responses, in closed form.
            sxx_t, sxy_t, syy_t = xt.T @ xt, xt.T @ yt, yt @ yt
            mse = (
                np.einsum("ksiy,ij,ksjy->ksy", coef, sxx_t, coef) - 2 * np.einsum("ksiy,i->ksy", coef, sxy_t) + syy_t
            ) / n_test
            per_set[k, :, jx, :] = 1.0 - (mse / yt.var()).mean(axis=0)
    mean = per_set.mean(axis=0)
    se = per_set.std(axis=0, ddof=1) / math.sqrt(n_datasets) if n_datasets > 1 else np.full_like(mean, np.nan)
    return mean, se
