"""The Weibull family's object (fitted to records): its hooks, read by the registry (:mod:`pm_private.families`)."""

from ...released.family import WEIBULL_AFT, Family, Hook

__all__ = ["WEIBULL"]

#: Censored Weibull survival, covariates on the scale (accelerated failure time), fitted to records: its
#: private mechanisms (LSP, TLL) release point estimates, which this model does not take.
WEIBULL = Family(
    name="weibull",
    title="Weibull survival regression",
    link=WEIBULL_AFT,
    builder=Hook("pm_private.survival.weibull.likelihood:weibull_model"),
    predictor=Hook("pm_private.survival.posterior:predict_weibull"),
    description="censored Weibull survival (Nguyên & Hui 2017b)",
)
