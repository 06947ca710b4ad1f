"""The ground floor: engine code with no knowledge of privacy or of any model.

Lazy attributes of packages, BLAS thread control, Dask partition plumbing and tree sums, and the
Parquet reader.  Nothing here imports from the rest of pm_private; every other subpackage may
import from here.
"""
