"""Simulated case-control GWAS data in the shape of Yu et al. (2014) §5 (a stand-in for HAP-SAMPLE).

HapMap / HAP-SAMPLE cannot be fetched here, so :func:`simulate_gwas` generates a seeded
*synthetic* study: it imitates the features Yu et al. (2014) relies on, not real genomes.

* Minor-allele frequencies (MAF) ~ Uniform(0.05, 0.5), the common-SNP range of genotyping chips.
* Linkage disequilibrium: each haplotype is a latent Gaussian chain along the chromosome,
  Zⱼ = ρⱼZⱼ₋₁ + √(1 − ρⱼ²)εⱼ, with ρⱼ = ``ld_rho`` inside blocks and 0 at block boundaries
  (block lengths geometric, mean ``block_mean``); the allele is 1 when Zⱼ < Φ⁻¹(MAFⱼ), so each
  SNP has exactly its MAF and neighbouring SNPs in a block are correlated.
* Genotype = number of minor alleles on two independent haplotypes, in {0, 1, 2}.
* Disease: two causal SNPs X, Y (MAF ``causal_maf``, in different blocks) with the
  multiplicative odds model  P(D=1 | X, Y) / P(D=0 | X, Y) = ε₀ α^X β^Y δ^{XY},
  ε₀ = 0.64, α = β = 0.91, δ = 2.73 (Yu et al. 2014, §5, from Malaspinas & Uhler 2010).
* Case-control sampling: people are drawn from the population in batches until
  ``n_cases`` cases and ``n_controls`` controls are collected (retrospective design).

:func:`chi2_screen` is the (non-private) first step of Yu et al. (2014) §5: the 2 × 3 χ² test of each
SNP against disease status.  :func:`interaction_design` builds the second step's features.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from numbers import Integral, Real

import numpy as np
from scipy import stats
from scipy.special import expit

__all__ = ["PAPER_ODDS", "GwasData", "chi2_screen", "interaction_design", "simulate_gwas"]

#: (ε₀, α, β, δ) of the multiplicative odds model in Yu et al. (2014) §5.
PAPER_ODDS = (0.64, 0.91, 0.91, 2.73)

#: Odds whose expected number of people to draw exceeds this multiple of the study size are refused.
MAX_DRAW_FACTOR = 1000


@dataclass(frozen=True, eq=False)
class GwasData:
    """Genotypes (people × SNPs, int8 in {0, 1, 2}), status (1 = case), MAFs and causal SNP indices."""

    genotypes: np.ndarray
    status: np.ndarray
    maf: np.ndarray
    causal: tuple[int, int]


def _haplotypes(count: int, maf: np.ndarray, rho: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``count`` haplotypes (0/1 minor allele) from the latent Gaussian chain (loop over SNPs only)."""
    thresholds = stats.norm.ppf(maf)
    innovations = rng.standard_normal((count, maf.size))
    latent = np.empty_like(innovations)
    latent[:, 0] = innovations[:, 0]
    scale = np.sqrt(1.0 - rho**2)
    for j in range(1, maf.size):
        latent[:, j] = rho[j] * latent[:, j - 1] + scale[j] * innovations[:, j]
    return (latent < thresholds).astype(np.int8)


def simulate_gwas(
    *,
    n_cases: int = 400,
    n_controls: int = 400,
    n_snps: int = 1000,
    causal_maf: float = 0.25,
    odds: tuple[float, float, float, float] = PAPER_ODDS,
    ld_rho: float = 0.9,
    block_mean: float = 20.0,
    rng=None,
) -> GwasData:
    """A seeded case-control study (module docstring); ``rng`` is a seed or numpy Generator.

    People are drawn in batches of 2·(n_cases + n_controls) until both groups are full.  The
    population prevalence π = Σ_{x,y} P(x)P(y)·expit(log ε₀ + x log α + y log β + xy log δ) (x, y
    ~ Binomial(2, causal_maf)) fixes the expected number of people needed,
    max(n_cases/π, n_controls/(1 − π)); odds that would need more than
    ``MAX_DRAW_FACTOR``·(n_cases + n_controls) people are refused before anything is drawn.
    """
    n_cases = _count("n_cases", n_cases, 1)
    n_controls = _count("n_controls", n_controls, 1)
    n_snps = _count("n_snps", n_snps, 4)
    if not isinstance(causal_maf, Real) or not 0 < causal_maf < 1:
        raise ValueError(f"causal_maf must be a number in (0, 1), got {causal_maf!r}")
    if not isinstance(ld_rho, Real) or not 0 <= ld_rho < 1:
        raise ValueError(f"ld_rho must be a number in [0, 1), got {ld_rho!r}")
    if not isinstance(block_mean, Real) or not 1.0 <= block_mean < np.inf:
        raise ValueError(f"block_mean must be a finite number ≥ 1, got {block_mean!r}")
    try:
        odds = tuple(float(o) for o in odds)
    except (TypeError, ValueError):
        raise ValueError(f"odds must be four positive numbers (ε₀, α, β, δ), got {odds!r}") from None
    if len(odds) != 4 or not all(np.isfinite(o) and o > 0 for o in odds):
        raise ValueError(f"odds must be four finite numbers > 0 (ε₀, α, β, δ), got {odds!r}")
    prevalence = _prevalence(odds, causal_maf)
    needed = max(
        n_cases / prevalence if prevalence > 0 else np.inf, n_controls / (1 - prevalence) if prevalence < 1 else np.inf
    )
    if needed > MAX_DRAW_FACTOR * (n_cases + n_controls):
        raise ValueError(
            f"odds {odds!r} give a case prevalence of {prevalence:.3g}: about {needed:.3g} people would "
            f"have to be drawn for {n_cases} cases and {n_controls} controls; choose odds nearer 1"
        )
    rng = np.random.default_rng(rng)
    maf = rng.uniform(0.05, 0.5, n_snps)
    boundary = rng.uniform(size=n_snps) < 1.0 / block_mean
    boundary[0] = True
    rho = np.where(boundary, 0.0, ld_rho)
    # two causal SNPs in different halves of the chromosome, hence different LD blocks
    causal = (int(rng.integers(0, n_snps // 2)), int(rng.integers(n_snps // 2, n_snps)))
    maf[list(causal)] = causal_maf
    rho[list(causal)] = 0.0

    base, a, b, d = odds
    target = {1: n_cases, 0: n_controls}
    kept: dict[int, list[np.ndarray]] = {1: [], 0: []}
    batch = 2 * (n_cases + n_controls)
    while any(sum(len(g) for g in kept[s]) < target[s] for s in (0, 1)):
        genotypes = _haplotypes(batch, maf, rho, rng) + _haplotypes(batch, maf, rho, rng)
        x, y = genotypes[:, causal[0]], genotypes[:, causal[1]]
        log_odds = np.log(base) + x * np.log(a) + y * np.log(b) + x * y * np.log(d)
        status = rng.uniform(size=batch) < 1.0 / (1.0 + np.exp(-log_odds))
        for s in (0, 1):  # keep no more than the target: memory stays O(n_cases + n_controls)
            missing = target[s] - sum(len(g) for g in kept[s])
            if missing > 0:
                kept[s].append(genotypes[status == bool(s)][:missing])
    cases = np.concatenate(kept[1])[:n_cases]
    controls = np.concatenate(kept[0])[:n_controls]
    return GwasData(
        genotypes=np.concatenate([cases, controls]),
        status=np.r_[np.ones(n_cases, dtype=int), np.zeros(n_controls, dtype=int)],
        maf=maf,
        causal=causal,
    )


def _count(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer ≥ {minimum}, got {value!r}")
    return int(value)


def _prevalence(odds, causal_maf: float) -> float:
    """P(case) in the population: the odds model averaged over x, y ~ Binomial(2, causal_maf)."""
    base, a, b, d = odds
    g = np.arange(3)
    p = stats.binom.pmf(g, 2, causal_maf)
    x, y = np.meshgrid(g, g, indexing="ij")
    log_odds = np.log(base) + x * np.log(a) + y * np.log(b) + x * y * np.log(d)
    return float(np.sum(np.outer(p, p) * expit(log_odds)))


def chi2_screen(genotypes: np.ndarray, status: np.ndarray, top: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the ``top`` SNPs by the 2 × 3 χ² association statistic, and all statistics.

    Genotype classes absent in the sample are dropped from a SNP's table (as
    ``scipy.stats.chi2_contingency`` would require).  Not private: Yu et al. (2014) §5 screens openly.
    """
    genotypes = np.asarray(genotypes)
    case = np.asarray(status) == 1
    observed = np.stack(
        [np.stack([(genotypes[case] == g).sum(axis=0), (genotypes[~case] == g).sum(axis=0)]) for g in (0, 1, 2)],
        axis=-1,
    ).astype(float)  # (2 status, SNPs, 3 genotypes)
    n = genotypes.shape[0]
    expected = observed.sum(axis=2, keepdims=True) * observed.sum(axis=0, keepdims=True) / n
    terms = np.where(expected > 0, (observed - expected) ** 2 / np.where(expected > 0, expected, 1.0), 0.0)
    statistic = terms.sum(axis=(0, 2))
    order = np.argsort(-statistic, kind="stable")
    return order[:top], statistic


def interaction_design(genotypes: np.ndarray, snps) -> tuple[np.ndarray, list[str], list[tuple[int, ...]]]:
    """Main effects g/2 and all pairwise interactions gₐg_b/4 of the chosen SNPs, each in [0, 1].

    Returns the design, readable names and, per column, the SNP indices it involves.  With
    features in [0, 1] a row has ‖x‖₁ ≤ M + M(M−1)/2 and ‖x‖₂ ≤ √(M + M(M−1)/2): public bounds.
    """
    snps = [int(j) for j in snps]
    g = np.asarray(genotypes, dtype=float)[:, snps]
    pairs = list(combinations(range(len(snps)), 2))
    columns = [g / 2.0] + ([np.column_stack([g[:, i] * g[:, j] for i, j in pairs]) / 4.0] if pairs else [])
    names = [f"SNP{s}" for s in snps] + [f"SNP{snps[i]}×SNP{snps[j]}" for i, j in pairs]
    terms = [(s,) for s in snps] + [(snps[i], snps[j]) for i, j in pairs]
    return np.hstack(columns), names, terms
