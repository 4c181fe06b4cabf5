"""Estimate a federation (gamma_j, sigma_j, r_j, rho_j and the covariance spectrum) from data:
the theory of the ``estimate`` verb, moment estimators of paper 003's model
(``003_4b976ddf5225c17e.txt``, Sec. 2).

Modules: ``estimator`` (``estimate``, ``estimate_file``; the estimators and their derivation
in its docstring), ``result`` (``Estimate``, ``gauss_two_atoms``), ``files`` (reading the
data), ``data`` (checking them, the memory bound), ``pairs`` (r_j and ||theta_0|| from pair
products, the directions' covariance), ``lsq`` (the least-squares route), ``work`` (its time, bounded by
``max_seconds``). The public names are imported here: ``from riskcalc.estimate import
estimate`` as before the package.
"""

from riskcalc.estimate.estimator import (ARRAYS, FLAT, GROUPS, LS_RATIO, ROUTES, Estimate,
                                         distances, estimate, estimate_file, gauss_two_atoms,
                                         load)

__all__ = ["ARRAYS", "FLAT", "GROUPS", "LS_RATIO", "ROUTES", "Estimate", "distances", "estimate",
           "estimate_file", "gauss_two_atoms", "load"]
