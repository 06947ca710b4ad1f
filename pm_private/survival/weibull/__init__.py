"""Censored Weibull survival (Nguyên & Hui 2017b): the likelihood, the maximum-likelihood fit, a
generator, and the private mechanisms.  The public names are exported by :mod:`pm_private.survival`."""
