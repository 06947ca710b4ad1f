"""Person-level exit tables of a survival study: their private release, the noise-aware survival
models of a release (piecewise-exponential, discrete-time hazard, Weibull) and the survival curves
of a fit.  The public names are exported by :mod:`pm_private.survival`."""
