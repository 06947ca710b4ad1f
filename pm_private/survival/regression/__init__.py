"""Survival regression on continuous covariates from a person-level private release: the exit
table with the covariate moments of each exit, its release and sensitivity.  The public names are
exported by :mod:`pm_private.survival`."""
