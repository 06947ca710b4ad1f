"""The serum free light chain study (FL; Kyle et al. 2006, Dispenzieri et al. 2012), as used by
Nguyên & Hui (2017a, 2017b): 7874 residents of Olmsted County aged ≥ 50, 2169 deaths, follow-up in days.

The data ship inside scikit-survival (``sksurv.datasets.load_flchain``); nothing is downloaded.
:func:`load_flchain` returns the eight covariates of Nguyên & Hui (2017a) as numbers:

* ``age`` (years), ``sex`` (1 = male), ``sample_yr`` (year of the blood sample), ``kappa`` and
  ``lambda`` (free light chain, mg/dL), ``flc_grp`` (FLC decile group 1–10), ``creatinine``
  (mg/dL), ``mgus`` (1 = monoclonal gammopathy diagnosed);
* ``chapter`` (cause of death) is dropped: it is filled exactly when death is observed, so it
  leaks the outcome;
* creatinine is missing for 1350 records; it is filled with 1.0 mg/dL, a fixed reference value
  (the middle of the normal adult range, which is also the study's median), so that loading never
  computes a statistic of the records.  ``creatinine_missing=True`` adds an indicator column.

:data:`FLCHAIN_DOMAIN` and :data:`FLCHAIN_HORIZON_DAYS` are public bounds fixed from the study
design and clinical ranges, not from the records: values outside a range are projected
onto it by :func:`pm_private.survival.flchain_unit_ball`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

__all__ = ["SurvivalDataset", "load_flchain", "FLCHAIN_DOMAIN", "FLCHAIN_HORIZON_DAYS"]

#: Public follow-up horizon: 15 years (the study's follow-up ended before that).
FLCHAIN_HORIZON_DAYS = 5479.0

#: Public (low, high) range per covariate: enrolment age ≥ 50, sampling years 1995–2003, FLC and
#: creatinine up to a few times the upper limit of their normal clinical ranges.
FLCHAIN_DOMAIN = {
    "age": (50.0, 100.0),
    "sex": (0.0, 1.0),
    "sample_yr": (1995.0, 2003.0),
    "kappa": (0.0, 6.0),
    "lambda": (0.0, 6.0),
    "flc_grp": (1.0, 10.0),
    "creatinine": (0.0, 3.0),
    "mgus": (0.0, 1.0),
    "creatinine_missing": (0.0, 1.0),
}

_CREATININE_REFERENCE = 1.0


class SurvivalDataset(NamedTuple):
    """Covariates, follow-up times and event flags (1 = death observed, 0 = censored).

    Parameters
    ----------
    X : pandas.DataFrame
        The covariates, one row per subject.
    time : numpy.ndarray
        Follow-up times in days.
    event : numpy.ndarray
        1 where the death was observed, 0 where the follow-up was censored.
    horizon : float
        The public follow-up horizon in days.
    """

    X: pd.DataFrame
    time: np.ndarray
    event: np.ndarray
    horizon: float


def load_flchain(*, creatinine_missing: bool = False) -> SurvivalDataset:
    """FL from scikit-survival with numeric covariates, times in days and int8 events.

    Parameters
    ----------
    creatinine_missing : bool, default False
        Add a ``creatinine_missing`` indicator column (the missing creatinine values are set to
        a reference value either way).

    Returns
    -------
    SurvivalDataset
        The covariates, times, events and the horizon :data:`FLCHAIN_HORIZON_DAYS`.
    """
    from sksurv.datasets import load_flchain as _load

    raw, outcome = _load()
    X = pd.DataFrame(
        {
            "age": raw["age"].astype(float),
            "sex": (raw["sex"] == "M").astype(float),
            "sample_yr": raw["sample.yr"].astype(int).astype(float),
            "kappa": raw["kappa"].astype(float),
            "lambda": raw["lambda"].astype(float),
            "flc_grp": raw["flc.grp"].astype(int).astype(float),
            "creatinine": raw["creatinine"].fillna(_CREATININE_REFERENCE).astype(float),
            "mgus": (raw["mgus"] == "yes").astype(float),
        }
    )
    if creatinine_missing:
        X["creatinine_missing"] = raw["creatinine"].isna().astype(float)
    return SurvivalDataset(
        X=X,
        time=np.asarray(outcome["futime"], dtype=np.float64),
        event=np.asarray(outcome["death"], dtype=np.int8),
        horizon=FLCHAIN_HORIZON_DAYS,
    )
