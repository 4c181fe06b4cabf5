"""BLAS threads for loops of small linear algebra.

A second OpenBLAS thread gains nothing measurable on the small matrices of these simulations
(per-client Gram matrices, batched d x d logistic Hessians), and on a loaded machine waking it
costs milliseconds per call: measured at 3x to over 10x on the M per-client decompositions of
a federated instance (``benchmarks/bench_threads.py``). Joblib's loky workers already run with
one thread per worker (``montecarlo.runner.tasks``); this limits the calling process too.
"""

from __future__ import annotations

import importlib
from functools import lru_cache

from threadpoolctl import ThreadpoolController


@lru_cache(maxsize=1)
def _controller() -> ThreadpoolController:
    # Scanning the loaded libraries costs milliseconds: once per process. The controller knows
    # only the libraries loaded when it is built, and scipy's wheels bundle an OpenBLAS of their
    # own: built before scipy.linalg was imported, it left scipy's BLAS threaded in this
    # process (not in the workers), so --jobs 1 and 2 differed in the last bits.
    importlib.import_module("scipy.linalg")
    return ThreadpoolController()


def small_blas():
    """Context limiting BLAS to one thread (``threadpoolctl``), for loops of small problems."""
    return _controller().limit(limits=1, user_api="blas")
