"""Accuracy and speed of DP-SGLD (:func:`pm_private.sampling.dp_sgld`) against the non-private
posterior and against release-then-infer, on logistic regression, Poisson regression of real
counts and a hierarchical logistic regression.

Data sets and models (``--data``, default all; the covariates are plain numpy arrays; the last two
are built in :mod:`benchmarks.dp_sgld_problems`):

* ``synthetic``: n = 10,000 records, d = 5 independent standard Gaussian covariates, intercept
  −0.4 and β = (0.8, −0.5, 0.3, 0, −1), y ~ Bernoulli(σ(b + xᵀβ));
* ``breast_cancer``: scikit-learn's breast cancer data (n = 569, y = 1 benign), its first five
  features (mean radius, texture, perimeter, area, smoothness) standardised by their own means and
  standard deviations (a benchmark shortcut: a private analysis would take them from public
  figures).  Three of them are nearly collinear (radius, perimeter, area), so the posterior is
  broad and ill-conditioned.  Skipped when scikit-learn is not importable.
* ``fair``: statsmodels' extramarital affairs survey (Fair 1978; n = 6,366 women, y = 1 for any
  affair, 32 %), its eight covariates (marriage rating, age, years married, children,
  religiousness, education, her and her husband's occupation) standardised likewise.
  The model of these three: intercept ~ N(0, 2²), βⱼ ~ N(0, 2²), yᵢ ~ Bernoulli(logit⁻¹(b + xᵢᵀβ));
* ``randhie``: outpatient visits (``mdvis``, counts of mean 2.88 and variance 20.8, up to 77) in
  statsmodels' RAND health insurance data, prepared by ``benchmarks.study_glm_real``'s ``load``
  and ``split``: its nine covariates (lncoins, idp, lpi, fmde, physlm, disea, hlthg, hlthf, hlthp;
  four binary), a person's identical rows kept together, one public row per person for a tenth of
  the people (276 rows), Yeo-Johnson transforms with standardisation fitted on those; the data are
  the n = 18,202 private person-years (the 10 rows the split still sets aside as a test part are
  unused).  Model: intercept ~ N(0, 2²), βⱼ ~ N(0, 1²) (:func:`pm_private.poisson_model`'s
  coefficient prior), yᵢ ~ Poisson(exp(b + xᵢᵀβ)).  Both private methods protect a row, a
  person-year: a person's several years are covered only through group privacy;
* ``hierarchical``: grouped logistic regression with random intercepts, n = 10,000 records, two
  standard Gaussian covariates, G = 20 groups (each record's group uniform: 459–534 records per
  group), truth μ = −0.3, τ = 0.6, β = (0.7, −0.4), a_g = μ + τ·u_g with u_g ~ N(0, 1).  Model:
  μ ~ N(0, 2²), τ ~ HalfNormal(1), z_g ~ N(0, 1), a_g = μ + τ·z_g (non-centred), βⱼ ~ N(0, 2²),
  yᵢ ~ Bernoulli(logit⁻¹(a_{g(i)} + xᵢᵀβ)); the group index is a data array with one entry per
  record, so DP-SGLD subsamples it with the records.  Scored on (μ, τ, β), τ on its own scale (the
  z_g are sampled, not scored).  There is no release-then-infer row: the library releases no
  statistics for this model;
* ``units``: logistic regression on n = 10,000 records with two covariates in units 10 and 0.1
  (x = unit·N(0, 1)), intercept −0.4 and β·unit = (0.8, −0.5), priors intercept ~ N(0, 2²) and
  βⱼ ~ N(0, (2/unitⱼ)²): the coefficients' posterior s.d.s differ a hundredfold.  No
  release-then-infer row (the GLM releases assume standardised covariates).

Where a problem has a public diagonal preconditioner (``dp_sgld``'s ``scale``), DP-SGLD runs with
and without it (``dp-sgld C=c, scaled``): the hierarchical model with its prior s.d.s (2 for μ
and β, 1 for the unconstrained τ and the z_g), the mixed-units model with s_β = 1/unit.

The reference is each model's non-private posterior, plain PyMC NUTS (``nuts_sampler="pymc"``,
2 chains × 1000 draws after 1000 tuning steps, its divergent draws printed), computed once per
data set.  Per ε (δ = 10⁻⁵) and replicate (``--reps``, seeds from ``--seed``):

* ``dp-sgld C=c``: :func:`~pm_private.sampling.dp_sgld` on the same PyMC model, 2 chains from the
  model's initial point (0 for every coefficient, τ = 1), ``--tune`` + ``--draws`` steps per chain,
  sampling rate q = 0.02 (synthetic and hierarchical, q·n = 200), 0.3 (breast cancer, q·n ≈ 171),
  0.03 (fair, q·n ≈ 191)
  or 200/n (randhie, q = 0.011), for each clip c of ``--clips`` (default 2 and 3);
* ``release+NUTS`` (one helper for both families, ``ReleaseThenNuts``): the release, then the
  noise-aware model with the same priors and the Gaussian covariate law (``x_sample=None``), one
  NUTS chain of ``--nuts-tune`` + ``--nuts-draws`` with the dense Laplace-started mass matrix of
  ``bench_calibration_glm.Fitter`` (compiled once per data set, each release swapped in).
  Logistic: :func:`pm_private.release_logistic_stats` with Bx from :func:`pm_private.logistic_bounds`
  for n, d, ε and no public rows, :func:`pm_private.logistic_model`.  Poisson (randhie):
  :func:`pm_private.release_poisson_stats` with the count bound B = 12 of
  :func:`pm_private.poisson.count_bound` on the public counts (4.3 % of them, 3.2 % of the private
  ones, above it) and Bx from :func:`pm_private.poisson_bounds` with the public rows and counts
  (4.16 at ε ≤ 1, 5.56 at ε = 2, 7.60 at ε = 4), :func:`pm_private.poisson_model`.  The share of
  the rows the release projects is printed.

The randhie targets differ.  DP-SGLD targets the reference posterior (the counts as they are);
release+NUTS sees the counts clipped at B and the rows projected onto the Bx ball, and models the
binary covariates as Gaussian.  Its model describes the clipping exactly for Poisson counts, but
these are overdispersed, so the clipped counts move the fit: the Poisson MLE of min(y, 12) has
intercept 0.947 against 1.044, and the noise-aware model fitted to the exact statistics (no noise,
B = 12, Bx = 4.16; one chain of 300 + 400) has posterior mean intercept 0.961 (−17 reference
s.d.s) and hlthp coefficient 0.156 against 0.035 (+38), a one-off check outside this script.  So
release+NUTS cannot come closer to the reference than that at any ε.  With the public rows as the
covariate law instead (``x_sample``, the library's default where the release carries them) the
same check put the intercept at −0.04, hence the Gaussian law here, as for the logistic rows.

Measured on the scored coefficients against the reference draws:

* ``cov90``: the share of coefficients whose reference posterior mean lies inside the private
  90 % central interval, averaged over replicates (± the s.e. of the per-replicate shares);
* ``width``: the private 90 % interval width over the reference's, averaged over coefficients;
* ``W2``: the marginal 2-Wasserstein distance to the reference draws, from the two sets of
  quantiles on a common grid of 1000 levels, averaged over coefficients; ``W2/sd`` the same with
  each coefficient's distance over its reference posterior s.d.;
* ``MMD²``: the squared maximum mean discrepancy between the joint draws of the coefficient
  vector, unbiased U-statistic (Gretton et al. 2012), each coefficient over its reference s.d.,
  Gaussian kernel with the median pairwise distance of the reference draws as bandwidth, both sets
  thinned to at most 1000 evenly spaced draws (``mmd2``).  0 for equal laws; where the draws lie
  many reference s.d.s away it saturates at the sum of the two sets' mean within-set kernel values
  (the reference's: 0.60 on randhie, 0.59 on hierarchical), so it ranks only draws that overlap;
* ``steps/s`` (DP-SGLD only): chains × (tune + draws) steps, warm-up included, over the time spent
  in the module's per-chain loop (``_chain``, wrapped by a timer here: the subsampling, gradient
  and update steps; the graph compilation, the privacy planning and the conversion of the draws
  are excluded); one short DP-SGLD call per data set comes first, untimed, so that the compiled
  code is cached.  The randhie figures below were measured when the gradient function was compiled
  anew in every call, inside the loop (1.2–1.5 s, a one-off timing), so their steps/s mostly
  measure that; the records are now held in shared variables and the compiled function is reused;
* ``s/fit``: wall time per call (DP-SGLD: the whole ``dp_sgld`` call, compilation included;
  release+NUTS: the release and the NUTS chain).

The records clipped at the reference mean (the share whose log-likelihood gradient on the
unconstrained parameters exceeds each C) are printed per data set, and beside each DP-SGLD cell the
share ``dp_sgld`` itself released (at the chains' last draws, with 5 % of the run's ε and δ; the
mean over replicates and one release's noise s.d.): what a user sees without the data.  DP-SGLD's step size is fixed by
the privacy (η = (2q/(C·z))², z the noise multiplier that spends ε over chains × steps subsampled
steps), and since z grows like q·√steps the Langevin time a chain covers, steps·η, is nearly
independent of q and of the number of steps: about 0.035·ε²/C² per chain at δ = 10⁻⁵ with 2 chains
(``plan_dp_sgld``).  More steps only shrink the discretisation and the subsampling noise; a smaller
C buys time but clips more records.  ``--sweep`` prints that trade-off at ε = 1 on the synthetic
data (q ∈ {0.01, 0.02, 0.05}, C ∈ {1, 1.5, 2, 3}): the mean bias of the draws in reference s.d.s,
the s.d. ratio and the share of records clipped at the reference mean.

    python -m benchmarks.bench_dp_sgld                  # every data set, ε ∈ {0.5, 1, 2, 4}, 10 replicates
    python -m benchmarks.bench_dp_sgld --data synthetic breast_cancer --reps 3   # the first table below
    python -m benchmarks.bench_dp_sgld --data randhie hierarchical --reps 3      # the second
    python -m benchmarks.bench_dp_sgld --data synthetic --eps 1 --reps 3         # the third
    python -m benchmarks.bench_dp_sgld --data synthetic --eps 1 --reps 10 --clips 2          # the fourth
    python -m benchmarks.bench_dp_sgld --data units hierarchical --eps 1 4 --reps 3 --clips 2   # the fifth
    python -m benchmarks.bench_dp_sgld --data fair --reps 3                      # the sixth
    python -m benchmarks.bench_dp_sgld --data synthetic --eps 1 4 16 64 --reps 3 --clips 2 [--thin 1]
    python -m benchmarks.bench_dp_sgld --quick          # synthetic (or --data), ε ∈ {1, 4}, 2 replicates, short runs
    python -m benchmarks.bench_dp_sgld --eps 1 --reps 10 --clips 1.5 2 3
    python -m benchmarks.bench_dp_sgld --sweep          # the settings sweep at ε = 1 only

Run it under ``nice`` on a shared machine; BLAS is limited to one thread.

Settings sweep (``--sweep``, ε = 1, synthetic, 2 × (1000 + 1000) steps, seed 0; bias of the draw
mean in reference s.d.s, intercept first; records clipped at the reference mean):

    C = 1    (29.8 % clipped), steps·η = 0.036:  bias up to ±17 s.d. at q = 0.01, 0.02, 0.05 (clipping:
             coefficients pushed away from 0)
    C = 1.5  (12.5 % clipped), steps·η = 0.016:  bias up to ±6 s.d. (clipping)
    C = 2    ( 4.6 % clipped), steps·η = 0.0089: |bias| ≤ 1.0 (q = 0.01), ≤ 0.6 (q = 0.02), ≤ 1.3 (q = 0.05)
    C = 3    ( 0.4 % clipped), steps·η = 0.0040: bias up to ±5 s.d. towards the initial point 0 (not
             converged: the draws' first half is further off than the second)

q changed nothing but the noise multiplier (z = 4.7, 9.5, 23.7; η the same), as the planner implies;
q = 0.02 with C = 2 was kept as the first clip, C = 3 as the second.

Measured 2026-12-03 on a shared 2-core machine (load about 3, under ``nice``), the two logistic
data sets with ``--reps 3`` (before the MMD² column), 116 s in all (reference NUTS 17.6 s
synthetic, 5.5 s breast cancer):

    | data | ε | method | coverage90 (± s.e.) | width ratio | W2 | W2/sd | steps/s | s/fit |
    |---|---|---|---|---|---|---|---|---|
    | synthetic | 0.5 | dp-sgld C=2 | 0.11 ± 0.06 | 1.59 | 0.142 | 5.45 | 9,651 | 1.0 |
    | synthetic | 0.5 | dp-sgld C=3 | 0.11 ± 0.06 | 1.41 | 0.270 | 10.32 | 10,152 | 0.9 |
    | synthetic | 0.5 | release+NUTS | 0.94 ± 0.06 | 1.88 | 0.045 | 1.75 | — | 1.3 |
    | synthetic | 1 | dp-sgld C=2 | 1.00 ± 0.00 | 1.17 | 0.016 | 0.62 | 11,054 | 1.0 |
    | synthetic | 1 | dp-sgld C=3 | 0.22 ± 0.06 | 1.41 | 0.081 | 3.13 | 9,898 | 0.8 |
    | synthetic | 1 | release+NUTS | 0.94 ± 0.06 | 1.85 | 0.042 | 1.66 | — | 1.1 |
    | synthetic | 2 | dp-sgld C=2 | 0.78 ± 0.06 | 1.15 | 0.030 | 1.16 | 11,593 | 0.9 |
    | synthetic | 2 | dp-sgld C=3 | 1.00 ± 0.00 | 1.03 | 0.010 | 0.41 | 9,913 | 0.9 |
    | synthetic | 2 | release+NUTS | 0.94 ± 0.06 | 1.81 | 0.041 | 1.60 | — | 1.0 |
    | synthetic | 4 | dp-sgld C=2 | 0.94 ± 0.06 | 1.44 | 0.033 | 1.26 | 11,368 | 0.8 |
    | synthetic | 4 | dp-sgld C=3 | 1.00 ± 0.00 | 1.17 | 0.009 | 0.35 | 11,846 | 0.7 |
    | synthetic | 4 | release+NUTS | 0.94 ± 0.06 | 1.83 | 0.041 | 1.60 | — | 0.8 |
    | breast_cancer | 0.5 | dp-sgld C=2 | 0.00 ± 0.00 | 0.07 | 1.864 | 3.54 | 18,596 | 0.6 |
    | breast_cancer | 0.5 | dp-sgld C=3 | 0.00 ± 0.00 | 0.04 | 1.910 | 3.64 | 17,610 | 0.6 |
    | breast_cancer | 0.5 | release+NUTS | 1.00 ± 0.00 | 2.50 | 0.947 | 2.06 | — | 1.3 |
    | breast_cancer | 1 | dp-sgld C=2 | 0.11 ± 0.06 | 0.13 | 1.723 | 3.20 | 15,787 | 0.5 |
    | breast_cancer | 1 | dp-sgld C=3 | 0.06 ± 0.06 | 0.09 | 1.822 | 3.44 | 15,709 | 0.6 |
    | breast_cancer | 1 | release+NUTS | 0.89 ± 0.06 | 1.94 | 0.835 | 1.65 | — | 1.1 |
    | breast_cancer | 2 | dp-sgld C=2 | 0.00 ± 0.00 | 0.22 | 1.507 | 2.61 | 14,498 | 0.6 |
    | breast_cancer | 2 | dp-sgld C=3 | 0.00 ± 0.00 | 0.16 | 1.654 | 3.02 | 15,589 | 0.6 |
    | breast_cancer | 2 | release+NUTS | 0.94 ± 0.06 | 1.84 | 0.851 | 1.80 | — | 1.4 |
    | breast_cancer | 4 | dp-sgld C=2 | 0.11 ± 0.06 | 0.31 | 1.248 | 1.84 | 15,996 | 0.6 |
    | breast_cancer | 4 | dp-sgld C=3 | 0.06 ± 0.06 | 0.25 | 1.423 | 2.36 | 16,397 | 0.6 |
    | breast_cancer | 4 | release+NUTS | 0.89 ± 0.06 | 1.84 | 0.902 | 1.97 | — | 1.3 |

Reading it.  DP-SGLD is accurate only where its fixed Langevin time covers the posterior's
relaxation time: on the synthetic data at ε ≥ 2 with C = 3 (W2 ≈ 0.4 s.d., widths 1.03–1.17×)
and at ε = 1 with C = 2.  Below that the chains have not left the initial point's pull (ε = 0.5
for both clips, ε = 1 for C = 3: draw means 3–19 s.d. short of the reference, towards 0); above
it, C = 2's clipping of 4.6 % of the records biases the coefficients away from 0 by up to 2 s.d.
(ε = 2, 4), so the best C depends on ε.  On breast cancer (n = 569, radius, perimeter and area
nearly collinear, reference s.d.s up to 1.5) no setting converges: steps·η ≤ 0.11 against
relaxation times of order 1/18 (well-identified coefficients) to several units (the collinear
direction), so the draws stay near 0 with intervals 3–25 % of the reference width.  Coverage of
the reference mean is a weak score where the intervals are wider than the reference (it is 1 for
any wide enough interval); W2/sd is the sharper one.  Release+NUTS is stable over ε: intervals
1.8–1.9× the reference width (2.5× on breast cancer at ε = 0.5) and a constant intercept bias of
about −1.4 s.d. on the synthetic data (the same at every ε, so from the model's approximation, not
the noise); at ε ≥ 2 on the synthetic data DP-SGLD with C = 3 is closer to the posterior.
DP-SGLD runs about 10,000 (synthetic, q·n = 200) and 16,000 (breast cancer, q·n ≈ 171) steps/s,
under a second per call including compilation.

Measured 2026-12-05 on the same shared machine (load average 2.1–3.1, under ``nice``), ``--data
randhie hierarchical --reps 3``, 255 s in all (reference NUTS 16.2 s randhie, 39.9 s hierarchical,
no divergent draws), then ``--data synthetic --eps 1 --reps 3``, 60 s:

    | data | ε | method | coverage90 (± s.e.) | width ratio | W2 | W2/sd | MMD² | steps/s | s/fit |
    |---|---|---|---|---|---|---|---|---|---|
    | randhie | 0.5 | dp-sgld C=2 | 0.27 ± 0.03 | 3.31 | 0.117 | 24.21 | 0.675 | 1,610 | 3.1 |
    | randhie | 0.5 | dp-sgld C=3 | 0.13 ± 0.03 | 2.91 | 0.104 | 21.43 | 0.723 | 1,648 | 3.0 |
    | randhie | 0.5 | release+NUTS | 0.83 ± 0.03 | 10.30 | 0.066 | 14.36 | 0.599 | — | 4.3 |
    | randhie | 1 | dp-sgld C=2 | 0.37 ± 0.07 | 4.03 | 0.122 | 25.11 | 0.619 | 1,706 | 2.9 |
    | randhie | 1 | dp-sgld C=3 | 0.23 ± 0.03 | 3.10 | 0.107 | 22.05 | 0.653 | 1,704 | 2.7 |
    | randhie | 1 | release+NUTS | 0.80 ± 0.06 | 5.33 | 0.040 | 9.11 | 0.602 | — | 2.9 |
    | randhie | 2 | dp-sgld C=2 | 0.40 ± 0.06 | 5.38 | 0.124 | 25.62 | 0.601 | 1,839 | 2.7 |
    | randhie | 2 | dp-sgld C=3 | 0.30 ± 0.06 | 4.12 | 0.109 | 22.46 | 0.609 | 1,728 | 3.2 |
    | randhie | 2 | release+NUTS | 0.67 ± 0.07 | 3.76 | 0.033 | 7.15 | 0.615 | — | 3.5 |
    | randhie | 4 | dp-sgld C=2 | 0.50 ± 0.00 | 8.44 | 0.131 | 27.05 | 0.599 | 1,782 | 3.1 |
    | randhie | 4 | dp-sgld C=3 | 0.50 ± 0.00 | 6.30 | 0.113 | 23.36 | 0.599 | 1,883 | 2.6 |
    | randhie | 4 | release+NUTS | 0.70 ± 0.06 | 3.13 | 0.028 | 5.92 | 0.635 | — | 4.0 |
    | hierarchical | 0.5 | dp-sgld C=2 | 0.00 ± 0.00 | 0.91 | 0.216 | 3.96 | 1.128 | 8,524 | 1.1 |
    | hierarchical | 0.5 | dp-sgld C=3 | 0.00 ± 0.00 | 0.93 | 0.300 | 7.09 | 1.133 | 8,491 | 1.0 |
    | hierarchical | 1 | dp-sgld C=2 | 0.67 ± 0.08 | 0.76 | 0.203 | 2.23 | 1.177 | 8,736 | 1.0 |
    | hierarchical | 1 | dp-sgld C=3 | 0.17 ± 0.08 | 0.73 | 0.190 | 2.81 | 1.166 | 8,456 | 0.9 |
    | hierarchical | 2 | dp-sgld C=2 | 0.50 ± 0.25 | 0.99 | 0.344 | 4.01 | 1.142 | 8,693 | 0.9 |
    | hierarchical | 2 | dp-sgld C=3 | 0.67 ± 0.08 | 0.95 | 0.260 | 2.83 | 1.141 | 7,827 | 1.0 |
    | hierarchical | 4 | dp-sgld C=2 | 0.67 ± 0.08 | 1.32 | 0.270 | 3.21 | 0.998 | 7,919 | 1.1 |
    | hierarchical | 4 | dp-sgld C=3 | 0.67 ± 0.08 | 1.03 | 0.310 | 3.24 | 1.130 | 8,049 | 1.1 |
    |---|---|---|---|---|---|---|---|---|---|
    | synthetic | 1 | dp-sgld C=2 | 1.00 ± 0.00 | 1.15 | 0.016 | 0.62 | 0.114 | 9,742 | 1.0 |
    | synthetic | 1 | dp-sgld C=3 | 0.22 ± 0.06 | 1.39 | 0.081 | 3.08 | 0.845 | 9,514 | 0.9 |
    | synthetic | 1 | release+NUTS | 0.94 ± 0.06 | 1.83 | 0.042 | 1.61 | 0.372 | — | 1.1 |

Reading it.  On randhie 84 % (C = 2) and 76 % (C = 3) of the records' gradients exceed the clip at
the reference mean (median norm 5.5), so DP-SGLD samples around the zero of the clipped gradient
sum plus the prior's, not around the posterior: its draw means (intercept 0.42 at C = 2, 0.46 at
C = 3, against 1.04: −131 and −123 reference s.d.s; lncoins −0.22 against −0.11) are that zero's,
solved directly (a one-off check), at every ε.  The chains have reached it from 0, so more steps
or a larger ε do not help; only a larger C would.  Release+NUTS is closer in W2 (0.028–0.066
against 0.10–0.13) and narrows with ε (10× the reference width at ε = 0.5, 3.1× at ε = 4), but
its intercept stays 19–21 s.d. below the reference's at every ε: the target shift above.  The
reference s.d.s are small (0.003–0.006), so every W2/sd there is large and every MMD² is at its
ceiling (0.60–0.72).  On the hierarchical model DP-SGLD's μ is within 1.4 reference s.d.s and, at
ε ≥ 1, β within 3.3 (1.5 at C = 2), but τ is off at every setting: draw means 5–12 s.d. above the
reference (τ ≈ 1.0–1.7 against 0.53 ± 0.10; the chains start at τ = 1), so cov90 ≤ 0.67 and MMD²
is at its ceiling (1.0–1.18).  A likely reason, not tested here: with about 500 records a group
the data fix τ·z_g, and τ moves only along that ridge against the z_g's unit prior, a slow
direction that steps·η ≤ 0.11 does not cover.  At ε = 0.5 β too stays short of the reference,
towards 0.  On the synthetic data at ε = 1 the scores are within 0.05 of the first table's, and
MMD² orders the methods as W2/sd does: 0.11 (C = 2), 0.37 (release+NUTS), 0.85 (C = 3).  Steps/s:
about 7,800–8,700 (hierarchical) and 9,500–9,700 (synthetic); randhie's 1,600–1,900 mostly time
the numba compilation.  Three replicates per row: indications, not calibration.

The goal's setting with ten replicates, measured 2026-12-05 on the session's 2-core machine (load
about 1, the run alone), ``--data synthetic --eps 1 --reps 10 --clips 2``, 60 s (reference NUTS
13.0 s); 4.6 % of the records are clipped at the reference mean:

    | data | ε | method | coverage90 (± s.e.) | width ratio | W2 | W2/sd | MMD² | steps/s | s/fit |
    |---|---|---|---|---|---|---|---|---|---|
    | synthetic | 1 | dp-sgld C=2 | 1.00 ± 0.00 | 1.05 | 0.017 | 0.65 | 0.120 | 15,620 | 0.5 |
    | synthetic | 1 | release+NUTS | 0.95 ± 0.03 | 1.84 | 0.041 | 1.60 | 0.345 | — | 0.9 |

Every one of the 60 intervals (six coefficients, ten runs) covered the reference mean, at 1.05× the
reference width; the mean biases were within 0.7 reference s.d.s.

The public diagonal preconditioner, measured 2026-12-05 on the session's 2-core machine (load about
1, the run alone), ``--data units hierarchical --eps 1 4 --reps 3 --clips 2``, 100 s in all
(reference NUTS 14.0 s units, 39.4 s hierarchical, no divergent draws):

    | data | ε | method | coverage90 (± s.e.) | width ratio | W2 | W2/sd | MMD² | steps/s | s/fit |
    |---|---|---|---|---|---|---|---|---|---|
    | hierarchical | 1 | dp-sgld C=2 | 0.67 ± 0.08 | 0.76 | 0.203 | 2.23 | 1.177 | 8,275 | 1.0 |
    | hierarchical | 1 | dp-sgld C=2, scaled | 0.17 ± 0.08 | 0.94 | 0.272 | 5.57 | 1.163 | 7,857 | 1.0 |
    | hierarchical | 4 | dp-sgld C=2 | 0.67 ± 0.08 | 1.32 | 0.270 | 3.21 | 0.998 | 8,143 | 1.1 |
    | hierarchical | 4 | dp-sgld C=2, scaled | 0.17 ± 0.08 | 2.08 | 0.448 | 8.46 | 0.784 | 7,713 | 1.0 |
    | units | 1 | dp-sgld C=2 | 0.22 ± 0.11 | 1.44 | 1.681 | 24.10 | 0.946 | 15,832 | 0.5 |
    | units | 1 | dp-sgld C=2, scaled | 1.00 ± 0.00 | 1.11 | 0.042 | 0.53 | 0.077 | 14,809 | 0.6 |
    | units | 4 | dp-sgld C=2 | 0.33 ± 0.00 | 4.61 | 1.044 | 21.76 | 0.647 | 15,695 | 0.5 |
    | units | 4 | dp-sgld C=2, scaled | 1.00 ± 0.00 | 1.63 | 0.063 | 0.82 | 0.108 | 14,712 | 0.6 |

Reading it.  On the mixed-units data the covariate in units of 10 gives gradients of norm about 5
per record: 55 % of the records are clipped at the reference mean, and without a preconditioner its
coefficient's draws sit 49 reference s.d.s off (the other's 13–21, short of the time it needs).
Scaled by 1/unit, the same run (same ε, q, C, steps) covers the reference means with intervals
1.1–1.6× as wide and W2 0.5–0.8 s.d.: the scales put both coefficients in the units where one clip
and one step size fit.  On the hierarchical model the prior s.d.s as scales made it worse: β's
records' scaled gradients are clipped more (β 6.5–8.5 s.d. off at ε = 1) and τ stays where it was
(6.4 s.d. at ε = 1): its slow direction is not one a diagonal scale of μ and β reaches.  The
preconditioner helps where parameters live on different scales that public knowledge names; it is
no cure for a slow posterior direction.  Steps/s drop by about 6 % with it (three products of the
gradients by the scales each step).

``--data fair --reps 3`` (90 s, 2026-12-06, alone on the 2-core machine; reference NUTS 19.0 s;
records clipped at the reference mean: 11.2 % at C = 2, 1.6 % at C = 3; the shares ``dp_sgld``
released: 9.9–12.2 % and 0.8–1.7 %, noise s.d. 0.5 % at ε = 0.5 down to 0.1 % at ε = 4; the
planner took two steps a draw at ε = 4, one below):

    | data | ε | method | coverage90 (± s.e.) | width ratio | W2 | W2/sd | MMD² | steps/s | s/fit |
    |---|---|---|---|---|---|---|---|---|---|
    | fair | 0.5 | dp-sgld C=2 | 0.22 ± 0.00 | 0.90 | 0.227 | 4.97 | 1.183 | 15,518 | 0.8 |
    | fair | 0.5 | dp-sgld C=3 | 0.11 ± 0.00 | 0.70 | 0.291 | 7.00 | 1.297 | 15,238 | 0.8 |
    | fair | 0.5 | release+NUTS | 0.78 ± 0.06 | 3.76 | 0.251 | 5.15 | 0.612 | — | 2.5 |
    | fair | 1 | dp-sgld C=2 | 0.52 ± 0.07 | 0.95 | 0.133 | 2.34 | 1.066 | 15,634 | 0.8 |
    | fair | 1 | dp-sgld C=3 | 0.19 ± 0.04 | 0.88 | 0.185 | 3.74 | 1.184 | 13,849 | 0.9 |
    | fair | 1 | release+NUTS | 0.81 ± 0.04 | 3.22 | 0.207 | 4.19 | 0.598 | — | 2.3 |
    | fair | 2 | dp-sgld C=2 | 0.44 ± 0.11 | 1.06 | 0.086 | 1.91 | 0.764 | 14,436 | 0.9 |
    | fair | 2 | dp-sgld C=3 | 0.63 ± 0.10 | 0.90 | 0.102 | 1.71 | 0.907 | 15,131 | 0.9 |
    | fair | 2 | release+NUTS | 0.81 ± 0.04 | 3.17 | 0.210 | 4.21 | 0.589 | — | 2.4 |
    | fair | 4 | dp-sgld C=2 | 0.81 ± 0.07 | 1.13 | 0.048 | 1.29 | 0.547 | 16,014 | 1.1 |
    | fair | 4 | dp-sgld C=3 | 0.93 ± 0.07 | 0.99 | 0.034 | 0.63 | 0.154 | 15,643 | 1.2 |
    | fair | 4 | release+NUTS | 0.78 ± 0.06 | 3.13 | 0.205 | 4.14 | 0.593 | — | 2.2 |

Release-then-infer's bias (intercept −3 to −4 s.d.s, marriage rating −5 to −10) does not shrink
with ε: the Gaussian covariate law of ordinal covariates (its Bx projected 36 % of the rows at
ε = 0.5, 5 % at ε = 1, none above).

Steps per draw at large ε (``--data synthetic --eps 1 4 16 64 --reps 3 --clips 2``, 2026-12-06,
alone): with ``--thin 1`` (every step kept, as before the planner chose) the DP-SGLD intervals were
1.17, 1.40, 3.33 and 8.19 times the reference's (W2/sd 0.61, 1.25, 2.76, 7.65); with the planner's
thinning (1, 4, 32 and 256 steps a draw) 1.17, 1.12, 1.16 and 1.17 (W2/sd 0.61, 1.07, 1.07, 1.06;
1.0, 2.1, 8.7 and 70 s a fit; coverage 1.00, 0.78, 0.78, 1.00, the clip's bias of about 1.8 s.d.s
on the two largest coefficients left); with ``--thin 8`` 1.06, 1.51 and 3.25 at ε = 4, 16 and 64.
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import logging
import time
import warnings

import numpy as np
import pymc as pm
import pytensor
from pymc.pytensorf import join_nonshared_inputs
from scipy.spatial.distance import cdist, pdist
from scipy.special import expit
from threadpoolctl import threadpool_limits

from benchmarks import dp_sgld_problems
from benchmarks.dp_sgld_problems import DELTA, Problem, ReleaseThenNuts
from pm_private import logistic_bounds, logistic_model, release_logistic_stats, set_logistic_stats
from pm_private.sampling import dp_sgld

PRIOR_SD = 2.0
LEVEL = 0.9
GRID = (np.arange(1000) + 0.5) / 1000
#: The MMD's draws are thinned to at most this many.
MMD_DRAWS = 1000
TRUE_INTERCEPT = -0.4
TRUE_BETA = np.array([0.8, -0.5, 0.3, 0.0, -1.0])
#: Sampling rate per logistic data set: q·n between 100 and 500.
RATES = {"synthetic": 0.02, "breast_cancer": 0.3, "fair": 0.03}
DATA_SETS = ("synthetic", "breast_cancer", "fair", "randhie", "hierarchical", "units")

_DP_SGLD_MODULE = importlib.import_module("pm_private.sampling.private_langevin")


class ChainTimer:
    """Wraps the DP-SGLD module's per-chain loop to time the steps alone (no compilation,
    planning or draw conversion)."""

    def __init__(self):
        self.seconds = 0.0
        self._inner = _DP_SGLD_MODULE._chain

    def __call__(self, *args, **kwargs):
        start = time.perf_counter()
        try:
            return self._inner(*args, **kwargs)
        finally:
            self.seconds += time.perf_counter() - start

    def __enter__(self):
        self.seconds = 0.0
        _DP_SGLD_MODULE._chain = self
        return self

    def __exit__(self, *exc):
        _DP_SGLD_MODULE._chain = self._inner


def synthetic(seed: int = 12345, n: int = 10_000):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, TRUE_BETA.size))
    y = (rng.uniform(size=n) < expit(TRUE_INTERCEPT + X @ TRUE_BETA)).astype(np.int64)
    return X, y


def breast_cancer():
    try:
        from sklearn.datasets import load_breast_cancer
    except ImportError:
        return None
    data = load_breast_cancer()
    X = data.data[:, :5]
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    return X, data.target.astype(np.int64)


def fair():
    import statsmodels.api as sm

    data = sm.datasets.fair.load_pandas().data
    X = data.drop(columns="affairs").to_numpy(dtype=np.float64)
    return (X - X.mean(axis=0)) / X.std(axis=0), (data["affairs"] > 0).to_numpy(dtype=np.int64)


def build_model(X, y) -> pm.Model:
    """intercept, β ~ N(0, 2²), y ~ Bernoulli(logit⁻¹(b + Xβ)), data as plain numpy arrays."""
    with pm.Model() as model:
        intercept = pm.Normal("intercept", 0.0, PRIOR_SD)
        beta = pm.Normal("beta", 0.0, PRIOR_SD, shape=X.shape[1])
        pm.Bernoulli("y", logit_p=intercept + pm.math.dot(X, beta), observed=y)
    return model


def logistic_problem(name: str, X, y, args) -> Problem:
    """A logistic data set, with release-then-infer by the logistic release and model."""
    n, d = X.shape

    def release(epsilon, bound, rng):
        return release_logistic_stats(X, y, epsilon=epsilon, delta=DELTA, x_bound=bound, rng=rng)

    def build(stats):
        return logistic_model(stats, beta_sigma=PRIOR_SD, intercept_sigma=PRIOR_SD, x_sample=None)

    fit = ReleaseThenNuts(
        X,
        bound=lambda epsilon: logistic_bounds(n, d, epsilon, DELTA).x_bound,
        release=release,
        build=build,
        swap=set_logistic_stats,
        tune=args.nuts_tune,
        draws=args.nuts_draws,
        seed=args.seed,
    )
    return Problem(name, build_model(X, y), RATES[name], ("intercept", "beta"), fit, f"n = {n}, d = {d} + intercept")


def problems(names, args):
    """The selected problems, in the order of ``DATA_SETS``, built one at a time."""
    for name in DATA_SETS:
        if name not in names:
            continue
        if name == "synthetic":
            yield logistic_problem(name, *synthetic(), args)
        elif name == "breast_cancer":
            cancer = breast_cancer()
            if cancer is None:
                print("scikit-learn not importable: breast cancer skipped")
                continue
            yield logistic_problem(name, *cancer, args)
        elif name == "fair":
            yield logistic_problem(name, *fair(), args)
        elif name == "randhie":
            yield dp_sgld_problems.randhie(tune=args.nuts_tune, draws=args.nuts_draws, seed=args.seed)
        elif name == "hierarchical":
            yield dp_sgld_problems.hierarchical()
        else:
            yield dp_sgld_problems.mixed_units()


def coefficients(posterior, variables=("intercept", "beta")) -> np.ndarray:
    """(draws, k): the variables' draws, chains pooled, each flattened, side by side in order."""
    columns = []
    for name in variables:
        values = np.asarray(posterior[name])
        columns.append(values.reshape(values.shape[0] * values.shape[1], -1))
    return np.concatenate(columns, axis=1)


def reference_posterior(model, seed: int, draws: int = 1000, tune: int = 1000):
    """(the posterior of plain PyMC NUTS, 2 chains, its number of divergent draws)."""
    idata = pm.sample(
        draws,
        tune=tune,
        chains=2,
        cores=1,
        model=model,
        nuts_sampler="pymc",
        random_seed=seed,
        progressbar=False,
        compute_convergence_checks=False,
    )
    return idata.posterior, int(idata.sample_stats["diverging"].sum())


def w2(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Marginal 2-Wasserstein distances per column, from quantiles on a common grid."""
    qa, qb = np.quantile(a, GRID, axis=0), np.quantile(b, GRID, axis=0)
    return np.sqrt(np.mean((qa - qb) ** 2, axis=0))


def mmd2(draws: np.ndarray, reference: np.ndarray, most: int = MMD_DRAWS) -> float:
    """Squared maximum mean discrepancy between two sets of draws, unbiased U-statistic
    (Gretton, Borgwardt, Rasch, Schölkopf & Smola 2012, Lemma 6):

        MMD²ᵤ = Σ_{i≠j} k(xᵢ, xⱼ)/(m(m−1)) + Σ_{i≠j} k(yᵢ, yⱼ)/(r(r−1)) − 2·Σᵢⱼ k(xᵢ, yⱼ)/(m·r),

    x the m private draws, y the r reference draws, each column over the reference draws' s.d.,
    with the Gaussian kernel k(u, v) = exp(−‖u − v‖²/(2h²)) whose bandwidth h is the median
    pairwise distance of the (scaled) reference draws, the median heuristic of Gretton et al.  Both
    sets are first thinned to at most ``most`` evenly spaced draws.  Between 0 and 2 up to the
    statistic's noise (it can be slightly negative when the two laws agree)."""

    def thin(values):
        return values[np.round(np.linspace(0, len(values) - 1, min(most, len(values)))).astype(int)]

    scale = reference.std(axis=0)
    x, y = thin(draws) / scale, thin(reference) / scale
    bandwidth = np.median(pdist(y))
    m, r = len(x), len(y)

    def kernel_sum(d2):
        return np.exp(-d2 / (2 * bandwidth**2)).sum()

    within_x = (kernel_sum(pdist(x, "sqeuclidean")) * 2) / (m * (m - 1))
    within_y = (kernel_sum(pdist(y, "sqeuclidean")) * 2) / (r * (r - 1))
    return float(within_x + within_y - 2 * kernel_sum(cdist(x, y, "sqeuclidean")) / (m * r))


def scores(draws: np.ndarray, reference: np.ndarray) -> dict:
    lo, hi = np.quantile(draws, [(1 - LEVEL) / 2, (1 + LEVEL) / 2], axis=0)
    ref_lo, ref_hi = np.quantile(reference, [(1 - LEVEL) / 2, (1 + LEVEL) / 2], axis=0)
    mean, sd = reference.mean(axis=0), reference.std(axis=0)
    distance = w2(draws, reference)
    return {
        "cov90": float(np.mean((lo <= mean) & (mean <= hi))),
        "width": float(np.mean((hi - lo) / (ref_hi - ref_lo))),
        "W2": float(distance.mean()),
        "W2/sd": float(np.mean(distance / sd)),
        "MMD2": mmd2(draws, reference),
        "bias/sd": (draws.mean(axis=0) - mean) / sd,
    }


def run_dp_sgld(model, *, epsilon, rate, clip, tune, draws, seed, scale=None, thin=None):
    """(posterior, steps/s in the chain loop, wall seconds, attrs)."""
    start = time.perf_counter()
    with ChainTimer() as timer:
        idata = dp_sgld(
            model,
            epsilon=epsilon,
            delta=DELTA,
            sampling_rate=rate,
            clip=clip,
            draws=draws,
            tune=tune,
            chains=2,
            rng=seed,
            progressbar=False,
            scale=scale,
            thin=thin,
        )
    wall = time.perf_counter() - start
    return idata.posterior, 2 * idata.attrs["steps_per_chain"] / timer.seconds, wall, dict(idata.attrs)


def record_gradient_norms(model, posterior) -> np.ndarray:
    """The norms of the records' log-likelihood gradients on the unconstrained parameters (what
    DP-SGLD clips), at the mean of the posterior's draws on that scale."""
    point = {}
    for value in model.value_vars:
        rv = model.values_to_rvs[value]
        draws = np.asarray(posterior[rv.name])
        draws = draws.reshape(-1, *draws.shape[2:])
        transform = model.rvs_to_transforms.get(rv)
        if transform is not None:
            draws = transform.forward(draws, *rv.owner.inputs).eval()
        point[value.name] = draws.mean(axis=0)
    per_record = sum(model.logp(vars=model.observed_RVs, sum=False))
    [per_record], theta = join_nonshared_inputs(point, [per_record], model.value_vars)
    jacobian = pytensor.function([theta], pytensor.gradient.jacobian(per_record, theta, vectorize=True))
    return np.linalg.norm(jacobian(np.concatenate([np.ravel(point[v.name]) for v in model.value_vars])), axis=1)


def sweep(args):
    """ε = 1 on the synthetic data: q × C at ``--tune`` + ``--draws``."""
    model = build_model(*synthetic())
    start = time.perf_counter()
    posterior, _ = reference_posterior(model, args.seed)
    reference = coefficients(posterior)
    print(f"reference NUTS: {time.perf_counter() - start:.1f} s")
    norms = record_gradient_norms(model, posterior)
    run_dp_sgld(model, epsilon=1.0, rate=0.02, clip=3.0, tune=50, draws=50, seed=0)  # warm the caches
    print(
        f"{'q':>5} {'C':>4} {'clipped':>8} {'z':>6} {'η':>9} {'steps·η':>8} | bias/sd of the draw means (b, β) | sd ratio"
    )
    for clip in (1.0, 1.5, 2.0, 3.0):
        for rate in (0.01, 0.02, 0.05):
            run, _, _, attrs = run_dp_sgld(
                model, epsilon=1.0, rate=rate, clip=clip, tune=args.tune, draws=args.draws, seed=args.seed
            )
            draws = coefficients(run)
            s = scores(draws, reference)
            ratio = draws.std(axis=0) / reference.std(axis=0)
            print(
                f"{rate:>5g} {clip:>4g} {np.mean(norms > clip):>8.3f} {attrs['noise_multiplier']:>6.2f} "
                f"{attrs['step_size']:>9.2e} {attrs['step_size'] * (args.tune + args.draws):>8.4f} | "
                f"{np.array2string(s['bias/sd'], precision=1)} | {np.array2string(ratio, precision=2)}"
            )


def mean_se(values) -> str:
    values = np.asarray(values, dtype=float)
    se = values.std(ddof=1) / np.sqrt(len(values)) if len(values) > 1 else np.nan
    return f"{values.mean():.2f} ± {se:.2f}"


def dp_sgld_rows(problem: Problem, reference, args) -> list:
    """Per ε and clip, ``--reps`` DP-SGLD runs: the table's rows (and a line each about the plan)."""
    rows = []
    scales = [None] if problem.scale is None else [None, problem.scale]
    for eps, clip, scale in itertools.product(args.eps, args.clips, scales):
        method = f"dp-sgld C={clip:g}" + ("" if scale is None else ", scaled")
        cell, speeds, walls, shares = [], [], [], []
        for rep in range(args.reps):
            posterior, speed, wall, attrs = run_dp_sgld(
                problem.model,
                epsilon=eps,
                rate=problem.rate,
                clip=clip,
                tune=args.tune,
                draws=args.draws,
                seed=10_000 * args.seed + rep,
                scale=scale,
                thin=args.thin,
            )
            cell.append(scores(coefficients(posterior, problem.variables), reference))
            speeds.append(speed)
            walls.append(wall)
            shares.append(attrs["clipped_share"])
        print(
            f"  ε = {eps:g}, {method}: q = {problem.rate:.4g}, z = {attrs['noise_multiplier']:.2f}, "
            f"thin {attrs['thin']}, η = {attrs['step_size']:.2e}, steps·η = {attrs['step_size'] * attrs['steps_per_chain']:.4f}; "
            f"mean bias/sd {np.array2string(np.mean([s['bias/sd'] for s in cell], axis=0), precision=1, suppress_small=True)}; "
            f"released clipped share {np.mean(shares):.1%} (noise s.d. {attrs['clipped_share_sd']:.1%} each)",
            flush=True,
        )
        rows.append((problem.name, eps, method, cell, np.median(speeds), np.median(walls)))
    return rows


def release_rows(problem: Problem, reference, args) -> list:
    """Per ε, ``--reps`` releases each fitted by one NUTS chain: the table's rows."""
    rows, fit = [], problem.release
    for eps in args.eps:
        bound, projected = fit.projected(eps)
        cell, walls, divergent = [], [], 0
        for rep in range(args.reps):
            posterior, wall, bad = fit.fit(eps, bound, 10_000 * args.seed + 5000 + rep)
            cell.append(scores(coefficients(posterior, problem.variables), reference))
            walls.append(wall)
            divergent += bad
        print(
            f"  ε = {eps:g}, release+NUTS: Bx = {bound:.2f} ({projected:.1%} of rows projected), "
            f"{divergent} divergent draws; mean bias/sd "
            f"{np.array2string(np.mean([s['bias/sd'] for s in cell], axis=0), precision=1, suppress_small=True)}",
            flush=True,
        )
        rows.append((problem.name, eps, "release+NUTS", cell, np.nan, np.median(walls)))
    return rows


def run_problem(problem: Problem, args) -> list:
    """The reference, then DP-SGLD and (where there is one) release-then-infer at every ε."""
    start = time.perf_counter()
    posterior, divergent = reference_posterior(problem.model, args.seed)
    reference = coefficients(posterior, problem.variables)
    print(
        f"{problem.name}: {problem.about}; reference NUTS {time.perf_counter() - start:.1f} s "
        f"({divergent} divergent draws), posterior mean {np.array2string(reference.mean(axis=0), precision=2)}, "
        f"s.d. {np.array2string(reference.std(axis=0), precision=3)} ({', '.join(problem.variables)})",
        flush=True,
    )
    for note in problem.notes or []:
        print(f"  {note}")
    norms = record_gradient_norms(problem.model, posterior)
    print(
        "  records clipped at the reference mean: "
        + ", ".join(f"C = {c:g}: {np.mean(norms > c):.1%}" for c in args.clips)
        + f" (median gradient norm {np.median(norms):.2f})"
    )
    run_dp_sgld(problem.model, epsilon=1.0, rate=problem.rate, clip=args.clips[0], tune=50, draws=50, seed=0)
    rows = dp_sgld_rows(problem, reference, args)
    if problem.release is None:
        print("  no release-then-infer for this model")
    else:
        rows += release_rows(problem, reference, args)
    return sorted(rows, key=lambda row: row[1])  # by ε, each ε's DP-SGLD rows first (a stable sort)


def print_table(rows) -> None:
    print("| data | ε | method | coverage90 (± s.e.) | width ratio | W2 | W2/sd | MMD² | steps/s | s/fit |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for data, eps, method, cell, speed, wall in rows:
        speed_text = "—" if np.isnan(speed) else f"{speed:,.0f}"
        print(
            f"| {data} | {eps:g} | {method} | {mean_se([s['cov90'] for s in cell])} | "
            f"{np.mean([s['width'] for s in cell]):.2f} | {np.mean([s['W2'] for s in cell]):.3f} | "
            f"{np.mean([s['W2/sd'] for s in cell]):.2f} | {np.mean([s['MMD2'] for s in cell]):.3f} | "
            f"{speed_text} | {wall:.1f} |"
        )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data", nargs="+", choices=DATA_SETS, metavar="DATA", help=f"data sets (default: all of {DATA_SETS})"
    )
    parser.add_argument("--reps", type=int, default=10, help="replicates (seeds) per ε and method")
    parser.add_argument("--eps", type=float, nargs="+", default=[0.5, 1.0, 2.0, 4.0])
    parser.add_argument("--clips", type=float, nargs="+", default=[2.0, 3.0], help="DP-SGLD clip bounds C")
    parser.add_argument("--tune", type=int, default=1000, help="DP-SGLD warm-up steps per chain")
    parser.add_argument("--draws", type=int, default=1000, help="DP-SGLD kept steps per chain")
    parser.add_argument(
        "--thin", type=int, default=None, help="DP-SGLD steps per kept draw, warm-up included (default: the planner's)"
    )
    parser.add_argument("--nuts-tune", type=int, default=600, help="release+NUTS tuning steps")
    parser.add_argument("--nuts-draws", type=int, default=1000, help="release+NUTS draws")
    parser.add_argument(
        "--quick", action="store_true", help="synthetic only (unless --data), ε ∈ {1, 4}, 2 replicates, short runs"
    )
    parser.add_argument("--sweep", action="store_true", help="only the q × C sweep at ε = 1 on the synthetic data")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.quick:
        args.reps, args.eps = 2, [1.0, 4.0]
        args.tune, args.draws, args.nuts_tune, args.nuts_draws = 300, 300, 300, 400
        args.data = args.data or ["synthetic"]
    threadpool_limits(1, user_api="blas")
    warnings.filterwarnings("ignore")
    for name in ("pymc", "pymc.sampling.mcmc", "pymc.stats.convergence"):
        logging.getLogger(name).setLevel(logging.ERROR)
    begin = time.perf_counter()
    if args.sweep:
        sweep(args)
        print(f"\ntotal wall time {time.perf_counter() - begin:.0f} s")
        return

    rows = []
    for problem in problems(args.data or DATA_SETS, args):
        rows += run_problem(problem, args)
    thinned = ", thin by the planner" if args.thin is None else f", thin {args.thin}"
    print(
        f"\n{args.reps} replicates per row; δ = {DELTA:g}; DP-SGLD: 2 chains × ({args.tune} + {args.draws}) draws{thinned}\n"
    )
    print_table(rows)
    print(f"\ntotal wall time {time.perf_counter() - begin:.0f} s")


if __name__ == "__main__":
    main()
