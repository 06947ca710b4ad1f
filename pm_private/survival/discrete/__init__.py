"""Discrete-time survival (Nguyên & Hui 2017a): records and their spline basis, the hazard
likelihood and its PyTensor ops, the Newton fit, the private mechanisms, a generator and the Dask
reducer.  The public names are exported by :mod:`pm_private.survival`."""
