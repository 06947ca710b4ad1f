"""DP-SGLD against sanitized-loss pSGLD at the same total ε and number of published draws, on
flchain's discrete-time hazard model, both scored against the non-private posterior.

Data and model (those of the library's study, :mod:`models.discrete_time_survival`): FL
(``load_flchain``, n = 7874 people) through :func:`models.discrete_time_survival.load_fl_discrete`,
eight covariates mapped into the unit ball from public ranges, times over the public 15-year
horizon, q = 200 intervals, a natural-spline baseline with e = 3 knots, logit link:

    α ~ N(0, 10² I₃),  β ~ N(0, 10² I₈),  logit h_is = (Aα)_s + xᵢᵀβ,

built by :func:`pm_private.survival.discrete_time_model`.

Record unit.  That model's likelihood already splits per **person**: its observed variable holds
one row [kᵢ, δᵢ] per person (interval of death or censoring, event flag), its log-density is one
value per row, −ℓᵢ = −Σ_{s<kᵢ} c(z_is) − δᵢ a(z_ik) − (1 − δᵢ) c(z_ik), i.e. the person with all
their at-risk intervals, and its data arrays (``X``, ``survival``) have first axis n.  So
:func:`~pm_private.sampling.dp_sgld` runs on it unchanged, with no person-period table, and its
replace-one guarantee protects a person, not a person-interval.  (The basis A has first axis q;
``--n`` must differ from q so that it is not taken for a column of the records.)

Methods, per total ε (``--eps``, default 1 and 4) and replicate (``--reps``), each publishing D
draws of β (``--draws``, default 200):

* ``dp-sgld C=c``: :func:`pm_private.sampling.dp_sgld`, δ = 10⁻⁵, 2 chains of ``--sgld-tune`` +
  ``--sgld-draws`` steps, q = 200/n (q·n = 200); the whole run costs (ε, δ) once, and D/2 evenly
  spaced kept draws per chain are published (post-processing).  The clip C is chosen by a sweep
  over ``--clips`` at ε = ``--sweep-eps`` (replicate 0): the C with the smallest W2/sd.  The
  choice looks at the non-private posterior, so it is itself not private (a benchmark shortcut).
* ``psgld eps/D``: the sanitized-loss posterior of Nguyên & Hui (2017a) at ε/D
  (:func:`models.discrete_time_psgld.sanitized_model`, flat f = (α, β), v = 2 log n,
  σ = 10⁻²·2v/(ε/D)), sampled by :class:`~pm_private.sampling.psgld.PSGLD` through
  :func:`models.discrete_time_psgld.sample_psgld` (k = 200, λ = 10⁻⁵, μ = 0.99; the study's burn-in
  of 10⁴ updates, then ``--epochs``·n updates per chain, 2 chains, thinned so that D/2 draws per
  chain are spread over the run; step schedule ``--schedule``).  Each published draw is one
  exponential-mechanism release at ε/D, so the D draws cost ε by basic composition; that
  guarantee holds for exact, independent draws only (approximate: a chain's draws are neither).
  ``--no-psgld`` leaves these rows out.
* ``dp-sgld warm C=c`` (with ``--warm-start``): ε is split.  ε/2 buys a point estimate, the
  discrete-time output perturbation :func:`pm_private.survival.output_perturbation` (the
  regularised MLE f = (α, β) plus noise ∝ exp(−(ε/2)‖b‖/t), pure (ε/2, 0)-DP, person-level) at the
  study's fixed, public ridge Λ = 0.1 (``WARM_REGULARIZATION``), and its α and β become the
  ``initvals`` of both chains (post-processing); then DP-SGLD runs at (ε/2, δ) with the chosen C,
  the same q, run lengths and noise seed as the cold row.  By basic composition the pair costs
  (ε/2 + ε/2, 0 + δ) = (ε, δ), the budget of the cold ``dp-sgld C=c`` row, which starts both
  chains at the model's initial point (α = β = 0, about 5 units from the posterior in α₀ alone).
  Its s/fit includes the release.

Reference: plain PyMC NUTS (``nuts_sampler="pymc"``) on the same model, 2 chains × 1000 draws after
1000 tuning steps, once.  As the study does, it uses the Laplace approximation at the MLE as a
fixed dense mass matrix and starts the chains near the MLE (with a diagonal mass matrix NUTS
needs hundreds of leapfrog steps per draw here); the model is unchanged.

Metrics on the eight covariate coefficients β (the published draws against the reference's):
``cov90`` the share whose reference posterior mean lies in the private 90 % central interval
(mean ± s.e. over replicates), ``width`` the private 90 % width over the reference's, ``W2/sd``
the marginal 2-Wasserstein distance (quantiles on a common grid of 1000 levels) over the reference
s.d., averaged over coefficients; ``R-hat`` the largest rank-normalised split R-hat of β over the
published draws of the 2 chains; ``s/fit`` wall seconds per call (compilation included).  The
first three are those of :func:`benchmarks.bench_dp_sgld.scores`.

    nice -n 10 env OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \\
        .venv/bin/python -m benchmarks.bench_dp_sgld_discrete_time [--eps 1 4] [--reps 3] \\
        [--draws 200] [--clips 0.5 1 2] [--warm-start] [--no-psgld] [--quick]

Measured 2026-12-05 on a shared 2-core machine (load 1.5–3, under ``nice``), defaults, 3
replicates (452 s; reference NUTS 90 s); the C = 1 row at ε = 4 is from a second run with
``--eps 4 --sweep-eps 4 --clips 1`` (a sweep at ε = 4 over 0.5, 1, 2 gave W2/sd 4.82, 2.12, 3.44):

    | ε | method | reps | cov90 (± s.e.) | width ratio | W2/sd | max R-hat | s/fit |
    | 1 | dp-sgld C=0.5 | 3 | 0.38 ± 0.07 | 1.65 | 4.52 | 2.49 | 37.7 |
    | 1 | dp-sgld C=1 | 1 | 0.12 | 1.03 | 5.49 | 2.48 | 36.2 |
    | 1 | dp-sgld C=2 | 1 | 0.12 | 0.53 | 6.44 | 2.53 | 38.4 |
    | 1 | psgld eps/D | 3 | 1.00 ± 0.00 | 50.93 | 50.44 | 1.08 | 10.9 |
    | 4 | dp-sgld C=0.5 | 3 | 0.71 ± 0.04 | 1.87 | 4.83 | 2.18 | 34.9 |
    | 4 | dp-sgld C=1 | 3 | 0.71 ± 0.08 | 1.34 | 1.99 | 2.33 | 25.4 |
    | 4 | psgld eps/D | 3 | 1.00 ± 0.00 | 37.95 | 37.31 | 1.09 | 11.4 |

Neither is close.  At ε/D the sanitized-loss density weighs each person by ε/(2vD) ≈ 1.4·10⁻⁴
(ε = 1; about one person's worth of data in all), while its regulariser stays (ε/2v)·(σ/2) = 0.005
per unit ‖f‖² at any ε, a N(0, 10²) prior: pSGLD samples it well (R-hat ≤ 1.09) and its intervals are
38–51× the posterior's.  DP-SGLD's chains have not converged (R-hat > 2: the two chains disagree):
its Langevin time per chain (0.14, 0.036, 0.009 at ε = 1 and 1.7, 0.43, 0.11 at ε = 4 for
C = 0.5, 1, 2) is short against the posterior's largest variance (about 0.18) and the way from
the prior's start to the baseline (α₀ ≈ −5.3), and C ≤ 1 clips 19–36 % of the people's
gradients at the MLE (C = 2: 0.9 %).  Three replicates are indications, not estimates.

Warm start, measured 2026-12-05 on the same shared 2-core machine (load 1.2–3.0, under
``nice``, single-thread BLAS), 5 replicates, C = 1, ``--no-psgld``: ``--eps 1 4 16 --reps 5
--clips 1 --warm-start`` (855 s; reference NUTS 72 s), repeated for ε = 4, 16 with
``--sweep-eps 4`` (589 s, same numbers: every source is seeded) to print the paired per-replicate
W2/sd, and the cold rows at ε/2 as a control, ``--eps 0.5 2 8 --sweep-eps 0.5`` (457 s):

    | ε | method | reps | cov90 (± s.e.) | width ratio | W2/sd | max R-hat | s/fit |
    | 1 | dp-sgld C=1 | 5 | 0.20 ± 0.03 | 0.96 | 5.50 | 2.48 | 27.2 |
    | 1 | dp-sgld warm C=1 | 5 | 0.00 ± 0.00 | 0.96 | 18.43 | 2.49 | 26.2 |
    | 4 | dp-sgld C=1 | 5 | 0.62 ± 0.07 | 1.26 | 2.05 | 2.17 | 25.5 |
    | 4 | dp-sgld warm C=1 | 5 | 0.25 ± 0.07 | 1.32 | 3.86 | 2.30 | 26.0 |
    | 16 | dp-sgld C=1 | 5 | 0.75 ± 0.04 | 1.82 | 3.32 | 1.40 | 25.4 |
    | 16 | dp-sgld warm C=1 | 5 | 0.70 ± 0.05 | 1.31 | 2.17 | 1.79 | 26.0 |
    | 0.5 | dp-sgld C=1 (control) | 5 | 0.17 ± 0.03 | 0.55 | 6.45 | 2.45 | 26.1 |
    | 2 | dp-sgld C=1 (control) | 5 | 0.23 ± 0.06 | 1.31 | 3.33 | 2.30 | 26.1 |
    | 8 | dp-sgld C=1 (control) | 5 | 0.70 ± 0.05 | 1.31 | 2.17 | 1.79 | 25.5 |

The warm start does not help.  The start is poor: Out-Pert at the public Λ = 0.1 shrinks f (its
noise-free β lies 6.6 from the MLE's β, against 7.6 for β = 0), and its noise ‖b‖ has mean
11·t/(ε/2) ≈ 13 at ε/2 = 0.5: the released β lay 11.5–16.3 (ε = 1), 6.3–7.9 (ε = 4) and 6.4–6.8
(ε = 16) from the posterior mean (cold start: 7.6).  At ε = 1 and 4 the warm row is worse
(W2/sd 18.4 against 5.5 at ε = 1; at ε = 4 a paired difference of +1.8 ± 0.3, worse in 5 of
5).  At ε = 16 it is better (−1.14 ± 0.05, 5 of 5), but only because its DP-SGLD runs at
ε/2 = 8: the cold control at ε = 8 matches it replicate by replicate (difference 0.01 ± 0.004), so
the start is forgotten there, and cold DP-SGLD is worse at ε = 16 than at 8 (η = (2q/(Cz))² grows
about as ε², and the larger step widens the draws, width 1.82).  Splitting ε therefore buys a
smaller step, not a better start.

Nothing here is a release: every noise source is seeded.  References: Nguyên & Hui 2017a;
Welling & Teh 2011; Li, Chen, Liu & Carin 2019.
"""

from __future__ import annotations

import argparse
import time
import warnings

import arviz as az
import numpy as np
import pymc as pm

from benchmarks.bench_dp_sgld import scores
from models.discrete_time_psgld import BURN_IN, sample_psgld, sanitized_model
from models.discrete_time_survival import PRIOR_SIGMA, load_fl_discrete, posterior_covariance
from pm_private.sampling import dp_sgld
from pm_private.survival import discrete_time_model, fit_discrete_time, output_perturbation

DELTA = 1e-5
#: Expected records per DP-SGLD step: q = BATCH / n.
BATCH = 200
#: Λ of the warm start's output perturbation: the study's ridge, fixed in advance and public
#: (``notebooks/survival.ipynb``'s REGULARIZATION; Nguyên & Hui 2017a, Table 2), not tuned here.
WARM_REGULARIZATION = 0.1


def max_rhat(chains: np.ndarray) -> float:
    """The largest rank-normalised split R-hat over the coordinates of (chain, draw, k) draws.

    Parameters
    ----------
    chains : numpy.ndarray, shape (chain, draw, k)

    Returns
    -------
    float
    """
    return max(float(az.rhat(chains[..., j])) for j in range(chains.shape[-1]))


def spread(chains: np.ndarray, per_chain: int) -> np.ndarray:
    """``per_chain`` evenly spaced draws of every chain of a (chain, draw, k) array.

    Parameters
    ----------
    chains : numpy.ndarray, shape (chain, draw, k)
    per_chain : int

    Returns
    -------
    numpy.ndarray, shape (chain, per_chain, k)
    """
    keep = np.round(np.linspace(0, chains.shape[1] - 1, per_chain)).astype(int)
    return chains[:, keep]


def reference(data, names, seed: int, draws: int, tune: int):
    """The non-private posterior of β by plain PyMC NUTS (dense Laplace mass matrix, module notes).

    Parameters
    ----------
    data : DiscreteTimeData
        The records.
    names : list of str
        The covariate names.
    seed : int
        Seeds the starting points and the sampler.
    draws, tune : int
        Draws and tuning steps per chain (2 chains).

    Returns
    -------
    model : pymc.Model
        :func:`discrete_time_model`, reused by DP-SGLD.
    beta : numpy.ndarray, shape (2·draws, d)
    info : str
        Time, divergences and the largest R-hat.
    """
    model = discrete_time_model(
        data, link="logit", feature_names=names, alpha_sigma=PRIOR_SIGMA, beta_sigma=PRIOR_SIGMA
    )
    f_hat = fit_discrete_time(data, "logit").f
    cov = posterior_covariance(data, f_hat)
    rng = np.random.default_rng(seed)
    starts = [rng.multivariate_normal(f_hat, cov) for _ in range(2)]
    start = time.perf_counter()
    with model:
        idata = pm.sample(
            draws,
            tune=tune,
            chains=2,
            cores=1,
            step=pm.NUTS(scaling=cov, is_cov=True),
            initvals=[{"alpha": f[: data.e], "beta": f[data.e :]} for f in starts],
            nuts_sampler="pymc",
            random_seed=seed,
            progressbar=False,
            compute_convergence_checks=False,
        )
    seconds = time.perf_counter() - start
    chains = idata.posterior["beta"].values
    info = (
        f"reference NUTS: 2 × {draws} draws after {tune} tuning in {seconds:.1f} s, "
        f"divergences {int(idata.sample_stats['diverging'].sum())}, max R-hat(β) {max_rhat(chains):.3f}"
    )
    return model, chains.reshape(-1, chains.shape[-1]), info


def run_dp_sgld(
    model, n: int, *, epsilon: float, clip: float, seed: int, args, initvals: dict | None = None
) -> tuple[np.ndarray, float]:
    """One DP-SGLD run at total (ε, δ): its D published β draws and its wall time.

    Parameters
    ----------
    model : pymc.Model
        The discrete-time hazard model.
    n : int
        The number of people (public).
    epsilon : float
        The whole run's ε.
    clip : float
        C, the per-person gradient clip.
    seed : int
        The noise seed (reproducible, so not private).
    args : argparse.Namespace
        ``sgld_tune``, ``sgld_draws`` and ``draws`` (D).
    initvals : dict, optional
        Both chains' public start (``{"alpha": …, "beta": …}``); None: the model's initial point.

    Returns
    -------
    chains : numpy.ndarray, shape (2, D/2, d)
    seconds : float
    """
    start = time.perf_counter()
    idata = dp_sgld(
        model,
        epsilon=epsilon,
        delta=DELTA,
        sampling_rate=BATCH / n,
        clip=clip,
        draws=args.sgld_draws,
        tune=args.sgld_tune,
        chains=2,
        rng=seed,
        progressbar=False,
        initvals=initvals,
    )
    seconds = time.perf_counter() - start
    return spread(idata.posterior["beta"].values, args.draws // 2), seconds


def warm_start(model, data, time_scaled: np.ndarray, *, epsilon: float, seed: int) -> dict:
    """An ε-DP output-perturbation estimate of (α, β), as DP-SGLD ``initvals`` (module notes).

    Parameters
    ----------
    model : pymc.Model
        The discrete-time hazard model; its free variables must be ``alpha`` (e) and ``beta`` (d).
    data : DiscreteTimeData
        The records (covariates in the unit ball, q and e public).
    time_scaled : numpy.ndarray, shape (n,)
        The times over the public horizon, in [0, 1].
    epsilon : float
        The release's ε (pure, δ = 0).
    seed : int
        The noise seed (reproducible, so not private).

    Returns
    -------
    dict
        ``{"alpha": α, "beta": β}`` of the released f = (α, β), at Λ = ``WARM_REGULARIZATION``.
    """
    names = [rv.name for rv in model.free_RVs]
    if names != ["alpha", "beta"]:
        raise RuntimeError(f"expected the free variables alpha, beta; the model has {names}")
    release = output_perturbation(
        data.X,
        time_scaled,
        data.event,
        epsilon=epsilon,
        regularization=WARM_REGULARIZATION,
        q=data.q,
        e=data.e,
        rng=seed,
    )
    if release.alpha.shape != (data.e,) or release.beta.shape != (data.d,):
        raise RuntimeError(f"release shapes {release.alpha.shape}, {release.beta.shape} do not fit the model")
    return {"alpha": release.alpha, "beta": release.beta}


def run_warm(
    model, data, time_scaled: np.ndarray, *, epsilon: float, clip: float, seed: int, args
) -> tuple[np.ndarray, float, dict]:
    """ε/2 output perturbation as the start, then DP-SGLD at (ε/2, δ): (ε, δ) in all.

    Parameters
    ----------
    model : pymc.Model
    data : DiscreteTimeData
    time_scaled : numpy.ndarray, shape (n,)
    epsilon : float
        The total ε of the pair, split evenly.
    clip : float
        C of the DP-SGLD run.
    seed : int
        DP-SGLD's noise seed (the cold run's); the release uses ``seed + 1``.
    args : argparse.Namespace

    Returns
    -------
    chains : numpy.ndarray, shape (2, D/2, d)
    seconds : float
        The release and the run together.
    initvals : dict
        The start.
    """
    start = time.perf_counter()
    initvals = warm_start(model, data, time_scaled, epsilon=epsilon / 2, seed=seed + 1)
    chains, _ = run_dp_sgld(model, data.n, epsilon=epsilon / 2, clip=clip, seed=seed, args=args, initvals=initvals)
    return chains, time.perf_counter() - start, initvals


def run_psgld(data, *, epsilon: float, seed: int, args) -> tuple[np.ndarray, float]:
    """Sanitized-loss pSGLD with each of the D published draws charged ε/D: its β draws and time.

    Parameters
    ----------
    data : DiscreteTimeData
        The records.
    epsilon : float
        The total ε (the mechanism runs at ε/D).
    seed : int
        The sampler's seed (reproducible, so not private).
    args : argparse.Namespace
        ``draws`` (D), ``epochs`` and ``schedule``.

    Returns
    -------
    chains : numpy.ndarray, shape (2, D/2, d)
    seconds : float
    """
    per_chain = args.draws // 2
    thin = max(1, round(args.epochs * data.n / per_chain))
    start = time.perf_counter()
    model = sanitized_model(data, epsilon / args.draws)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        idata = sample_psgld(
            model,
            n=data.n,
            burn_in=args.burn_in,
            epochs=per_chain * thin / data.n,
            thin=thin,
            seed=seed,
            chains=2,
            schedule=args.schedule,
        )
    seconds = time.perf_counter() - start
    f = idata.posterior["f"].values
    return spread(f[..., data.e :], per_chain), seconds


def score_row(method: str, epsilon: float, rep: int, chains: np.ndarray, seconds: float, ref: np.ndarray) -> dict:
    """One table row of a run: its scores, largest R-hat and wall time.

    Parameters
    ----------
    method : str
    epsilon : float
    rep : int
    chains : numpy.ndarray, shape (chain, draw, d)
        The published draws.
    seconds : float
    ref : numpy.ndarray, shape (r, d)
        The reference draws.

    Returns
    -------
    dict
    """
    pooled = chains.reshape(-1, chains.shape[-1])
    return dict(method=method, eps=epsilon, rep=rep, **scores(pooled, ref), rhat=max_rhat(chains), seconds=seconds)


def sweep_clips(model, n: int, ref: np.ndarray, args) -> tuple[float, list]:
    """DP-SGLD at ε = ``--sweep-eps`` (replicate 0) for each clip of ``--clips``.

    Parameters
    ----------
    model : pymc.Model
    n : int
    ref : numpy.ndarray
        The reference draws.
    args : argparse.Namespace

    Returns
    -------
    clip : float
        The clip with the smallest W2/sd (a choice made on non-private scores).
    rows : list of dict
        One row per clip.
    """
    rows = []
    for clip in args.clips:
        chains, seconds = run_dp_sgld(model, n, epsilon=args.sweep_eps, clip=clip, seed=args.seed, args=args)
        rows.append(score_row(f"dp-sgld C={clip:g}", args.sweep_eps, 0, chains, seconds, ref))
        print(
            f"  sweep ε = {args.sweep_eps:g}, C = {clip:g}: W2/sd {rows[-1]['W2/sd']:.2f}, {seconds:.1f} s", flush=True
        )
    best = min(range(len(rows)), key=lambda i: rows[i]["W2/sd"])
    return args.clips[best], rows


def run_all(data, time_scaled: np.ndarray, model, ref: np.ndarray, args) -> tuple[float, list]:
    """Every (method, ε, replicate) row: the clip sweep, then DP-SGLD (cold, warm) and pSGLD.

    Parameters
    ----------
    data : DiscreteTimeData
    time_scaled : numpy.ndarray, shape (n,)
        The times over the public horizon (the warm start's release reads them).
    model : pymc.Model
    ref : numpy.ndarray
        The reference draws.
    args : argparse.Namespace

    Returns
    -------
    clip : float
        The chosen clip.
    rows : list of dict
    """
    clip, rows = sweep_clips(model, data.n, ref, args)
    label = f"dp-sgld C={clip:g}"
    centre = ref.mean(axis=0)
    for epsilon in args.eps:
        for rep in range(args.reps):
            seed = args.seed + 1000 * rep
            done = [r for r in rows if r["method"] == label and r["eps"] == epsilon and r["rep"] == rep]
            if not done:
                chains, seconds = run_dp_sgld(model, data.n, epsilon=epsilon, clip=clip, seed=seed, args=args)
                rows.append(score_row(label, epsilon, rep, chains, seconds, ref))
            if args.warm_start:
                chains, seconds, initvals = run_warm(
                    model, data, time_scaled, epsilon=epsilon, clip=clip, seed=seed, args=args
                )
                rows.append(score_row(f"dp-sgld warm C={clip:g}", epsilon, rep, chains, seconds, ref))
                print(
                    f"  warm start: α₀ = {initvals['alpha'][0]:.2f}, ‖β₀ − E[β]‖ = "
                    f"{np.linalg.norm(initvals['beta'] - centre):.2f} (cold: {np.linalg.norm(centre):.2f})",
                    flush=True,
                )
            if not args.no_psgld:
                chains, seconds = run_psgld(data, epsilon=epsilon, seed=seed, args=args)
                rows.append(score_row("psgld eps/D", epsilon, rep, chains, seconds, ref))
            scored = ", ".join(
                f"{r['method']} W2/sd {r['W2/sd']:.2f}" for r in rows if r["eps"] == epsilon and r["rep"] == rep
            )
            print(f"  ε = {epsilon:g}, replicate {rep} done: {scored}", flush=True)
    return clip, rows


def print_table(rows: list) -> None:
    """Print the (ε, method) means over replicates as a Markdown table.

    Parameters
    ----------
    rows : list of dict
        One per run (:func:`score_row`).
    """
    print("| ε | method | reps | cov90 (± s.e.) | width ratio | W2/sd | max R-hat | s/fit |")
    print("|---|---|---|---|---|---|---|---|")
    keys = sorted({(r["eps"], r["method"]) for r in rows})
    for epsilon, method in keys:
        group = [r for r in rows if r["eps"] == epsilon and r["method"] == method]
        cov = np.array([r["cov90"] for r in group])
        se = cov.std(ddof=1) / np.sqrt(len(cov)) if len(cov) > 1 else float("nan")
        mean = {k: np.mean([r[k] for r in group]) for k in ("width", "W2/sd", "rhat", "seconds")}
        print(
            f"| {epsilon:g} | {method} | {len(group)} | {cov.mean():.2f} ± {se:.2f} | {mean['width']:.2f} | "
            f"{mean['W2/sd']:.2f} | {mean['rhat']:.2f} | {mean['seconds']:.1f} |"
        )


def parse(argv=None) -> argparse.Namespace:
    """The command line (module notes); ``--quick`` shrinks every size for a smoke run.

    Parameters
    ----------
    argv : list of str, optional

    Returns
    -------
    argparse.Namespace
    """
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--eps", type=float, nargs="+", default=[1.0, 4.0], help="total ε values (default 1 4)")
    parser.add_argument("--reps", type=int, default=3, help="replicates per (method, ε) (default 3)")
    parser.add_argument("--draws", type=int, default=200, help="D, published draws per run, even (default 200)")
    parser.add_argument("--clips", type=float, nargs="+", default=[0.5, 1.0, 2.0], help="DP-SGLD clips swept")
    parser.add_argument("--sweep-eps", type=float, default=1.0, help="ε of the clip sweep (default 1)")
    parser.add_argument("--sgld-tune", type=int, default=500, help="DP-SGLD warm-up steps per chain")
    parser.add_argument("--sgld-draws", type=int, default=1000, help="DP-SGLD kept steps per chain")
    parser.add_argument("--epochs", type=float, default=3.0, help="pSGLD updates after burn-in, in units of n")
    parser.add_argument("--burn-in", type=int, default=BURN_IN, help=f"pSGLD burn-in updates (default {BURN_IN})")
    parser.add_argument("--schedule", choices=("paper", "slow-decay"), default="slow-decay", help="pSGLD steps")
    parser.add_argument("--n", type=int, help="people drawn from FL (default all; --quick 2000)")
    parser.add_argument("--ref-draws", type=int, default=1000, help="reference NUTS draws (and tuning) per chain")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--warm-start", action="store_true", help="add the ε/2 + ε/2 warm-started DP-SGLD row")
    parser.add_argument("--no-psgld", action="store_true", help="leave the pSGLD rows out")
    parser.add_argument("--quick", action="store_true", help="2000 people, ε = 4, 1 replicate, short runs")
    args = parser.parse_args(argv)
    if args.quick:
        args.n, args.eps, args.reps, args.draws, args.clips = args.n or 2000, [4.0], 1, 100, args.clips[-2:]
        args.sweep_eps, args.sgld_tune, args.sgld_draws = 4.0, 200, 300
        args.epochs, args.burn_in, args.ref_draws = 1.0, 1000, 300
    if args.draws < 4 or args.draws % 2 or args.reps < 1:
        parser.error("--draws must be even and ≥ 4, --reps ≥ 1")
    if args.sgld_draws < args.draws // 2:
        parser.error("--sgld-draws must be at least --draws / 2")
    return args


def main(argv=None) -> None:
    """Run the comparison and print the table (module notes).

    Parameters
    ----------
    argv : list of str, optional
    """
    args = parse(argv)
    warnings.filterwarnings("ignore", message="PyTensor could not link to a BLAS")
    start = time.perf_counter()
    data, names, time_scaled = load_fl_discrete(200, 3, n=args.n, seed=args.seed)
    if data.n == data.q:
        raise SystemExit("--n must differ from q = 200 (the basis would be taken for a column of the records)")
    model, ref, info = reference(data, names, args.seed, args.ref_draws, args.ref_draws)
    print(f"FL: n = {data.n}, d = {data.d}, q = {data.q}, e = {data.e}; {info}", flush=True)
    clip, rows = run_all(data, time_scaled, model, ref, args)
    print(
        f"\nD = {args.draws} published draws per run; DP-SGLD 2 × ({args.sgld_tune} + {args.sgld_draws}) steps, "
        f"q = {BATCH}/n, δ = {DELTA:g}, C = {clip:g} chosen at ε = {args.sweep_eps:g} from {args.clips}; "
        f"pSGLD at ε/D, burn-in {args.burn_in}, {args.epochs:g} epochs, schedule {args.schedule}; "
        f"warm start {f'ε/2 Out-Pert at Λ = {WARM_REGULARIZATION:g}, then ε/2' if args.warm_start else 'off'}; "
        f"replicates {args.reps}; {time.perf_counter() - start:.0f} s in all\n"
    )
    print_table(rows)


if __name__ == "__main__":
    main()
