"""The ground floor: engine code with no knowledge of privacy or of any model.

Lazy attributes of packages, BLAS thread control, Dask partition plumbing and tree sums, the
Parquet reader, and the on-disk cache keys of the Numba implementations of pm_private's Ops.
Nothing here imports from the rest of pm_private; every other subpackage may import from here.
"""
