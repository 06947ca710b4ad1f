"""The discrete-time hazard family's object (fitted to records): its hooks, read by the registry
(:mod:`pm_private.families`)."""

from ...released.family import DISCRETE_TIME_HAZARD, Family, Hook

__all__ = ["DISCRETE_TIME"]

#: The discrete-time hazard model (Nguyên & Hui 2017a), fitted to records (its private mechanisms
#: perturb a point estimate, which this model does not take).
DISCRETE_TIME = Family(
    name="discrete_time",
    title="discrete-time hazard regression",
    link=DISCRETE_TIME_HAZARD,
    builder=Hook("pm_private.survival.discrete.likelihood:discrete_time_model"),
    predictor=Hook("pm_private.survival.posterior:predict_discrete_time"),
    description="discrete-time hazard regression (Nguyên & Hui 2017a)",
)
