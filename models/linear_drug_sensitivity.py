"""Private drug-sensitivity prediction (Honkela et al. 2018) on GDSC-shaped built-in data: the
experiment that ``pm-private demo`` runs, from the repository (``python -m models.linear_drug_sensitivity``).
The experiment itself lives in :mod:`pm_private.demo.drug_sensitivity`."""

from pm_private.demo.drug_sensitivity import main

if __name__ == "__main__":
    main()
