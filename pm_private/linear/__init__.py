"""Private linear regression from sufficient statistics (Honkela et al. 2018) and the AdaSSP baseline (Wang 2018)."""

from .._engine.lazy import attach

_NAMES = {
    "SuffStatsRelease": ".suffstats",
    "SuffStats": ".suffstats",
    "suff_stats": ".suffstats",
    "release_suff_stats": ".suffstats",
    "GaussianSuffStatsRelease": ".suffstats",
    "release_suff_stats_gaussian": ".suffstats",
    "stat_pairs": ".suffstats",
    "stat_vector": ".suffstats",
    "frobenius_weights": ".suffstats",
    "gaussian_sensitivity": ".suffstats",
    "sensitivities": ".suffstats",
    "TuneResult": ".tuning",
    "tune_release": ".tuning",
    "tune_bounds": ".tuning",
    "SuffStatRegression": ".regression",
    "project_psd": ".regression",
    "gibbs_regression": ".regression",
    "regression_model": ".regression",
    "set_stats": ".regression",
    "suff_stat_logp": ".regression",
    "beta_draws": ".prediction",
    "predict": ".prediction",
    "posterior_predictive": ".prediction",
    "prediction_transform": ".prediction",
    "NoisySuffStatRegression": ".noise_aware",
    "covariate_cholesky": ".noise_aware",
    "noise_aware_arrays": ".noise_aware",
    "set_noisy_stats": ".noise_aware",
    "Preprocessing": ".preprocessing",
    "rank_by_prediction": ".prediction",
    "spearman": ".prediction",
    "AdaSSPRelease": ".adaptive_ssp",
    "adassp": ".adaptive_ssp",
    "adassp_sensitivities": ".adaptive_ssp",
    "preprocess": ".preprocessing",
    "read_parquet_columns": ".._engine.parquet",
}

__getattr__, __dir__, __all__ = attach(__name__, _NAMES)
