"""pSGLD on the sanitized-loss posterior next to Ext-Out-Pert and Ext-Obj-Pert on FL (Nguyên & Hui 2017a, §6.3, Fig. 5).

Data as :func:`models.discrete_time_survival.load_fl_discrete` (FL, unit-ball covariates from
public ranges, public horizon, q = 200, e = 3, logit link).  For each ε ∈ {0.1, …, 6.4}:

* **pSGLD** (Nguyên & Hui 2017a, Alg. 3–4): one chain on exp(ε·U(f; D)/(2v)),
  U = −(σ/2)‖f‖² − Σᵢ v·tanh(ℓ(f; dᵢ)/v), v = 2 log n, σ = 10⁻²·2v/ε (:func:`sanitized_loss`),
  sampled by :class:`pm_private.PSGLD` with the paper's k = 200, τ = 0.51, λ = 10⁻⁵, μ = 0.99,
  step h_t = a·(b + t)^(−τ) with a = 1, b = 0 (the paper's), from f = 0.  The first 10⁴ updates
  are burn-in (the preconditioner is learnt there and then frozen, see PSGLD); then ``epochs``·n
  updates, every ``thin``-th kept.  MRE = (1/m) Σᵢ ‖fᵢ − f*‖/‖f*‖ over the m kept draws.
* **Ext-Out-Pert, Ext-Obj-Pert** (Alg. 1–2): MRE over ``repeats`` releases, each at the Λ with
  the smallest MRE at ε = 6.4 (:mod:`models.private_discrete_time`, Nguyên & Hui (2017a) Table 2).

f* is the non-private MLE (Λ = 0).  The paper runs 250 epochs (≈ 2·10⁶ updates per ε, about half
an hour per ε here); the default of 3 epochs and 5 releases per perturbation cell keeps the
whole run near seven minutes on two shared cores; ``--epochs 250 --repeats 10`` runs the paper's
length.  The MRE of the first and second half of each chain's kept draws is reported as a check
of stationarity.

Privacy.  Every noise source is seeded, so nothing here is a release (``private=False``).  The
sanitized-loss mechanism is ε-DP for **one exact** draw; a pSGLD chain samples it approximately
(accountant label "approximate (MCMC)"), and the MRE averages many draws, each of which would
cost ε if released.  Choosing Λ for the perturbation methods by their MRE on the private data
(as the paper does) is not private either.

Outputs in ``--out`` (default ``results/private_sampling``): ``mre_epsilon.csv`` (ε × method),
``mre_lambda.csv``, ``report.txt`` and ``mre_epsilon.png``.

    PYTENSOR_FLAGS=base_compiledir=$HOME/.cache/pm_private/pytensor \\
        .venv/bin/python -m models.private_sampling [--quick] [--epochs 250]
"""

from __future__ import annotations

import argparse
import functools
import time
import warnings
from pathlib import Path

from pm_private.compile_cache import use_compile_cache

use_compile_cache()

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pymc as pm  # noqa: E402

from models.discrete_time_survival import load_fl_discrete  # noqa: E402
from models.private_discrete_time import EPSILONS, LAMBDAS, METHODS, NOT_PRIVATE_NOTE, mre  # noqa: E402
from pm_private.sampling.psgld import PSGLD  # noqa: E402
from pm_private.sampling.sanitized import sanitized_loss  # noqa: E402
from pm_private.survival import (  # noqa: E402
    DiscreteTimeData,
    fit_discrete_time,
    record_loss,  # noqa: E402
)

#: pSGLD settings of Nguyên & Hui (2017a) §6.2 (k, τ, λ, μ, a, b) and its burn-in in updates.
PSGLD_SETTINGS = {"batch_size": 200, "tau": 0.51, "lam": 1e-5, "mu": 0.99, "a": 1.0, "b": 0.0}
BURN_IN = 10_000
MCMC_NOTE = (
    "pSGLD: the sanitized-loss mechanism is ε-DP for one exact draw only; these chains sample it "
    "approximately (accountant label 'approximate (MCMC)'), and the MRE averages many draws, each of "
    "which would cost ε if released."
)


def sanitized_model(data: DiscreteTimeData, epsilon: float, link: str = "logit") -> pm.Model:
    """Flat f = (α, β) with the potential ε·U(f; D)/(2v) of Nguyên & Hui (2017a) Alg. 3 (paper defaults v, σ)."""
    with pm.Model() as model:
        f = pm.Flat("f", shape=data.dim)
        loss = functools.partial(record_loss, basis=data.basis, link=link)
        sanitized_loss("U", loss, f, (data.X, data.interval, data.event), epsilon=epsilon)
    return model


def sample_psgld(model: pm.Model, *, n: int, burn_in: int, epochs: float, thin: int, seed: int, chains: int = 1):
    """pm.sample with PSGLD: ⌈burn_in/thin⌉ tuning draws, then epochs·n updates, every thin-th kept."""
    with model:
        step = PSGLD(thin=thin, compile_kwargs={"mode": "CVM"}, **PSGLD_SETTINGS)
        return pm.sample(
            draws=max(1, round(epochs * n / thin)), tune=-(-burn_in // thin), chains=chains, cores=1, step=step,
            random_seed=seed, progressbar=False, quiet=True, compute_convergence_checks=False,
        )


def relative_errors(draws: np.ndarray, f_star: np.ndarray) -> np.ndarray:
    """‖fᵢ − f*‖/‖f*‖ for each row fᵢ of ``draws``."""
    return np.linalg.norm(draws - f_star, axis=-1) / np.linalg.norm(f_star)


def psgld_mre(data, f_star, *, epsilon, burn_in, epochs, thin, seed) -> tuple[float, float, float]:
    """MRE of one pSGLD chain on the sanitized posterior at ε, and that of each half of its draws."""
    idata = sample_psgld(sanitized_model(data, epsilon), n=data.n, burn_in=burn_in, epochs=epochs, thin=thin, seed=seed)
    errors = relative_errors(idata.posterior["f"].values[0], f_star)
    half = len(errors) // 2
    return float(errors.mean()), float(errors[:half].mean()), float(errors[half:].mean())


def run(data, time_scaled, *, epsilons, epochs, burn_in, thin, repeats, seed):
    """MRE tables: (by_epsilon with pSGLD and both perturbation methods, by_lambda, pSGLD halves, best Λ)."""
    f_star = fit_discrete_time(data, "logit").f
    common = dict(data=data, time_scaled=time_scaled, f_star=f_star, repeats=repeats)
    by_lambda = pd.DataFrame(
        {method: [mre(method, epsilon=6.4, regularization=lam, seed=seed, **common) for lam in LAMBDAS] for method in METHODS},
        index=pd.Index(LAMBDAS, name="Λ"),
    )
    best = by_lambda.idxmin()
    chains = [
        psgld_mre(data, f_star, epsilon=eps, burn_in=burn_in, epochs=epochs, thin=thin, seed=seed + i)
        for i, eps in enumerate(epsilons)
    ]
    index = pd.Index(epsilons, name="ε")
    by_epsilon = pd.DataFrame({"pSGLD": [c[0] for c in chains]}, index=index)
    for method in METHODS:
        by_epsilon[method] = [
            mre(method, epsilon=eps, regularization=best[method], seed=seed + 10_000, **common) for eps in epsilons
        ]
    halves = pd.DataFrame({"first half": [c[1] for c in chains], "second half": [c[2] for c in chains]}, index=index)
    return by_epsilon, by_lambda, halves, best, f_star


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="1000 records, 3 repeats, burn-in 1000, 2 epochs")
    parser.add_argument("--n", type=int, help="records drawn from FL (default all; --quick 1000)")
    parser.add_argument("--epsilons", type=float, nargs="+", default=list(EPSILONS))
    parser.add_argument("--epochs", type=float, help="pSGLD updates after burn-in, in units of n (default 3; paper 250)")
    parser.add_argument("--burn-in", type=int, help=f"pSGLD burn-in updates (default {BURN_IN}, the paper's)")
    parser.add_argument("--thin", type=int, default=50, help="updates per kept pSGLD draw")
    parser.add_argument("--repeats", type=int, help="releases per perturbation cell (default 5; --quick 3)")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--out", type=Path, default=Path("results/private_sampling"))
    args = parser.parse_args(argv)
    quick = {"n": 1000, "repeats": 3, "burn_in": 1000, "epochs": 2.0}
    full = {"n": None, "repeats": 5, "burn_in": BURN_IN, "epochs": 3.0}
    for key, value in (quick if args.quick else full).items():
        if getattr(args, key) is None:
            setattr(args, key, value)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    warnings.filterwarnings("ignore", message="PyTensor could not link to a BLAS")
    data, _, time_scaled = load_fl_discrete(200, 3, n=args.n, seed=args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    by_epsilon, by_lambda, halves, best, f_star = run(
        data, time_scaled, epsilons=args.epsilons, epochs=args.epochs, burn_in=args.burn_in, thin=args.thin,
        repeats=args.repeats, seed=args.seed,
    )
    by_epsilon.to_csv(args.out / "mre_epsilon.csv")
    by_lambda.to_csv(args.out / "mre_lambda.csv")

    fmt = lambda v: f"{v:.4g}"  # noqa: E731
    report = "\n".join(
        [
            f"FL: n = {data.n}, d = {data.d}, q = {data.q}, e = {data.e}; ‖f*‖ = {np.linalg.norm(f_star):.3f}; "
            f"pSGLD: burn-in {args.burn_in} updates, {args.epochs:g} epochs, thin {args.thin}, one chain per ε; "
            f"perturbation: {args.repeats} releases per cell; {time.perf_counter() - start:.0f} s",
            "",
            "MRE at ε = 6.4 against Λ (perturbation methods):",
            by_lambda.T.to_string(float_format=fmt),
            "Best Λ: " + ", ".join(f"{method} {best[method]:g}" for method in METHODS),
            "",
            "MRE against ε (Nguyên & Hui 2017a, Figure 5; perturbation at the best Λ):",
            by_epsilon.to_string(float_format=fmt),
            "",
            "pSGLD MRE of the first and second half of each chain's kept draws (far apart: not yet stationary):",
            halves.to_string(float_format=fmt),
            "",
            NOT_PRIVATE_NOTE,
            MCMC_NOTE,
        ]
    )
    (args.out / "report.txt").write_text(report + "\n")
    print(report)

    fig, ax = plt.subplots(figsize=(5.5, 3.5))
    for method in by_epsilon.columns:
        ax.loglog(by_epsilon.index, by_epsilon[method], marker="o", label=method)
    ax.set_xlabel("ε")
    ax.set_ylabel("MRE")
    ax.set_title(f"FL, logit discrete-time model; pSGLD {args.epochs:g} epochs (Λ chosen non-privately)", fontsize=8)
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.out / "mre_epsilon.png", dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
