"""Estimate a federation (gamma_j, sigma_j, r_j, rho_j and the covariance spectrum) from data.

Model (paper 003, ``003_4b976ddf5225c17e.txt``, Sec. 2): client j has n_j rows x ~ N(0, Sigma)
and y = x^T theta_j + noise of variance sigma_j^2, theta_j = theta_0 + r_j u_j with u_j
uniform on the sphere. Moment estimators, derived here, consistent as d, n_j -> infinity with
d / n_j -> gamma_j (Dicker 2014, *Variance estimation in high-dimensional linear models*,
Biometrika 101, for one client with Sigma = I):

* spectrum: with the pooled S = X^T X / N and c = d / N, m1 = tr(S) / d (unbiased),
  m2 = N^2 / ((N - 1)(N + 2)) (tr(S^2) - tr(S)^2 / N) / d (unbiased for Gaussian rows), and
  m3 = s3 - 3 c s1 s2 + 2 c^2 s1^3 (s_k = tr(S^k) / d; the inverse of the Marchenko-Pastur
  moment map s3 = m3 + 3 c m1 m2 + c^2 m1^3, Bai and Silverstein 2010, Sec. 3.1). The
  spectrum is the two-atom Gauss rule matching m1, m2, m3, or one atom when m2 - m1^2 is not
  larger than twice its standard error;
* client j, with b_j = X_j^T y_j / n_j and T = tr(Sigma) estimated by tr(S): for Gaussian
  rows E[||X_j^T y_j||^2 - T ||y_j||^2] = n_j (n_j + 1) theta_j^T Sigma^2 theta_j, so
  Q_j = (||X_j^T y_j||^2 - T ||y_j||^2) / (n_j (n_j + 1)) estimates theta_j^T Sigma^2 theta_j
  (Dicker's estimator for Sigma = I), and for j != k, b_j^T b_k is unbiased for
  theta_j^T Sigma^2 theta_k = theta_0^T Sigma^2 theta_0 + O(1 / sqrt(d)) (independent uniform
  directions). With generic directions (v^T Sigma^k v ~ ||v||^2 m_k):

      rho_j^2 = Q_j / m2,   sigma_j^2 = ||y_j||^2 / n_j - m1 Q_j / m2,

  and r_j^2 from the pair distances Q_j + Q_k - 2 b_j^T b_k (``distances``), over m2.

When every client has n_j >= ``LS_RATIO`` d (and n_j > d + 2), the least-squares route
replaces the client estimates (its variance does not grow with the signal, unlike the
difference of Dicker's two moments): theta_hat_j = (X_j^T X_j)^-1 X_j^T y_j, sigma_j^2 =
RSS_j / (n_j - d) (unbiased), ||theta_j||^2 = ||theta_hat_j||^2 - sigma_j^2 tr((X_j^T X_j)^-1)
(unbiased, the noise of theta_hat_j being independent of RSS_j), theta_j . theta_k =
theta_hat_j . theta_hat_k (j != k, independent clients), and r_j^2 from the pair distances
(``distances``); no assumption on Sigma or on the direction of theta_0 is needed there.

Standard errors, from a joint covariance of all the estimates (``Estimate.cov``, used by
``riskcalc.advise.uncertainty``): for the moments and the moments route a grouped jackknife,
the rows of every client dealt in turn to ``GROUPS`` groups (deterministic given the data),
each estimate recomputed without one group; for the least-squares route the exact
Gaussian-noise covariance given the designs (``riskcalc.estimate.lsq``; a jackknife that deletes
rows there overstates it by about n_j / (n_j - d), since each row carries leverage d / n_j). Both
condition on the clients' parameters theta_j; r_j and ||theta_0|| are the model's parameters,
and their estimates from pair distances also carry the random directions u_j (their cross
products are O(1 / sqrt(d)), the order of the noise): ``riskcalc.estimate.pairs.geometry``
adds that covariance.
rho_j = ||theta_j|| is the realized norm (what local ridge's risk depends on): no such term.
Measured (d = 100, n_j = 2d, 200 replicates, rms error over the mean reported se): without
that term r_j^2's ratio was up to 1.3, and the least-squares plug-in (now debiased) made
rho_j^2's 0.77; now every ratio of sigma_j^2, r_j^2, rho_j^2 is within 0.9-1.1 (least
squares, d = 40 and 100) and 0.8-0.96 (moments, n_j = d, d = 100: the jackknife is
conservative), ``benchmarks/bench_advise_intervals.py --check-se``.
Measured coverage of the 95% intervals over 40 replicates (tests): 0.95 (least squares, d =
30, n_j = 2d) and 0.92 (moments, d = 40, n_j = d). Sigma = c I is reported as the identity
with r_j, rho_j scaled by sqrt(c) (the same risks).

Reading and checking the data (``load``, ``check_data``) and the memory bound checked before
the work (``check_memory``): ``riskcalc.estimate.data``; r_j and ||theta_0|| from pair
products and the directions' covariance (``distances``, ``geometry``):
``riskcalc.estimate.pairs``; the least-squares route: ``riskcalc.estimate.lsq``; the result
(``Estimate``) and ``gauss_two_atoms``: ``riskcalc.estimate.result``.
"""

from __future__ import annotations

import numpy as np

from riskcalc._validate import max_time
from riskcalc.estimate.centring import mean_test
from riskcalc.estimate.data import (ARRAYS, GROUPS, check_data, check_memory,
                                    check_repeated_rows, check_variation, rank_deficient,
                                    shared_rows)
from riskcalc.estimate.files import load
from riskcalc.estimate.lsq import least_squares
from riskcalc.estimate.pairs import distances, geometry
from riskcalc.estimate.result import FLAT, Estimate, _flat, _unflat, gauss_two_atoms
from riskcalc.estimate.work import check_seconds

__all__ = ["ARRAYS", "FLAT", "GROUPS", "LS_RATIO", "ROUTES", "Estimate", "distances", "estimate",
           "estimate_file", "gauss_two_atoms", "load"]

#: Every client with n_j >= LS_RATIO d: the least-squares route (module docstring).
LS_RATIO = 1.5
ROUTES = ("auto", "moments", "least-squares")


def estimate(X, y, client, route: str = "auto", max_seconds=None) -> Estimate:
    """Estimate every client's sigma_j, r_j, rho_j and the spectrum's moments (module
    docstring), with grouped-jackknife standard errors.

    Parameters
    ----------
    X : array_like (N, d)
    y : array_like (N,)
    client : array_like (N,) of int
        Client id of each row; at least two clients with 3 rows or more each.
    route : {"auto", "moments", "least-squares"}
        The client estimates: Dicker-type moments (any n_j) or local least squares (every
        n_j > d + 2); ``auto`` takes least squares when every n_j >= ``LS_RATIO`` d and
        n_j > d + 2.
    max_seconds : float, optional
        The most seconds of estimated work (``riskcalc.estimate.work``), refused beyond,
        naming the rows, features or route that fit (None: no limit).

    Returns
    -------
    Estimate

    Raises
    ------
    ValueError
        For shapes that do not match, NaN or infinite values, non-integer ids, fewer than two
        clients, a client with fewer than 3 rows, or data the model cannot have produced:
        X or y 0 everywhere (X of one client too), every row of X the same (features that do
        not vary), y one value in every row (``data.check_variation``), a client holding the
        same (x, y) row twice (``data.check_repeated_rows``); work estimated beyond
        ``max_seconds``. Two clients holding one row are noted (``Estimate.notes``,
        ``data.shared_rows``).
    """
    _check_route(route)
    max_seconds = max_time("max_seconds", max_seconds)
    X, y, client = check_data(X, y, client)
    check_variation(X, y)
    ids, inverse, n = np.unique(client, return_inverse=True, return_counts=True)
    if ids.size < 2:
        raise ValueError(f"the data hold {ids.size} client: a federation needs at least two")
    if n.min() < 3:
        raise ValueError(f"client {ids[np.argmin(n)]} has {n.min()} rows; each client needs "
                         "at least 3")
    m, d = ids.size, X.shape[1]
    # A client whose X is 0 in every row (as X everywhere, refused by check_variation): its
    # sigma was estimated as y's spread with a confident standard error (fuzz42 misc F9).
    blank = np.bincount(inverse, (X.max(axis=1) != 0) | (X.min(axis=1) != 0), m) == 0
    if blank.any():
        raise ValueError(f"client {ids[np.argmax(blank)]}'s X is 0 in every row: the model "
                         "draws every client's features from one covariance, so no estimate "
                         "is meaningful for it (and it drags the spectrum's moments); drop "
                         "the client or check how its features were read")
    # Before the work, its memory: the least-squares route's where it may be taken (auto:
    # from n_j >= LS_RATIO d only).
    ls = n.min() > d + 2 and (route == "least-squares"
                              or (route == "auto" and n.min() >= LS_RATIO * d))
    check_memory("", X.shape[0], d, "the data hold", m, least_squares=ls)
    # Its time: 16000 x 800 took 2 s, 10000 x 20 from 300 clients on least squares 9 s.
    check_seconds(X.shape[0], d, m, ls, max_seconds)
    check_repeated_rows(X, y, client)
    shared = shared_rows(X, y, client)
    groups = min(GROUPS, int(n.min()))
    # Row k of client j goes to group (k mod groups): every group holds part of every client.
    rank = np.empty(len(y), dtype=int)
    for j in range(m):
        rows = np.flatnonzero(inverse == j)
        rank[rows] = np.arange(rows.size) % groups
    cell = inverse * groups + rank                                  # (client, group) cell
    size = np.bincount(cell, minlength=m * groups).reshape(m, groups).astype(float)
    xty = np.zeros((m * groups, d))
    np.add.at(xty, cell, X * y[:, None])
    xty = xty.reshape(m, groups, d)
    yy = np.bincount(cell, weights=y * y, minlength=m * groups).reshape(m, groups)
    traces = _gram_traces(X, rank, groups)
    notes = ()
    if route == "auto":
        # n_j > d + 2 too: for d < 4, n_j >= LS_RATIO d alone took the least-squares route and
        # then refused the data (d = 2, n_j = 3: "needs every n_j > d + 2 = 4 rows").
        route, bad = "moments", None
        if n.min() >= max(LS_RATIO * d, d + 3):
            bad = rank_deficient(X, inverse, m)
            route = "least-squares" if bad is None else "moments"
        if bad is not None:     # the switch was silent (fuzz42 misc F3)
            notes = (f"route auto took moments, not least squares (every n_j >= "
                     f"{LS_RATIO:g} d): client {ids[bad[0]]}'s design has rank {bad[1]} < d = "
                     f"{d} (a feature constant within that client?)",)
    if route == "least-squares":
        if not n.min() > d + 2:
            raise ValueError(f"the least-squares route needs every n_j > d + 2 = {d + 2} "
                             f"rows; client {ids[np.argmin(n)]} has {n.min()}")
        bad = rank_deficient(X, inverse, m)
        if bad is not None:
            raise ValueError(f"the least-squares route needs every client's design of rank d "
                             f"= {d}; client {ids[bad[0]]} has rank {bad[1]} (a feature "
                             "constant within that client?); use route moments")
    pooled = traces(None)
    full = _point(xty.sum(1), yy.sum(1), size.sum(1), pooled, d)
    jack = [_point(xty.sum(1) - xty[:, g], yy.sum(1) - yy[:, g], size.sum(1) - size[:, g],
                   traces(g), d) for g in range(groups)]
    dev = np.array([_flat(jk) for jk in jack])
    dev -= dev.mean(axis=0)
    cov = (groups - 1) / groups * dev.T @ dev                  # joint jackknife covariance
    spread = np.array([jk["spread"] for jk in jack])
    se = {"spread": np.sqrt((groups - 1) / groups * np.sum((spread - spread.mean()) ** 2))}
    if route == "least-squares":
        ls_values, ls_cov = least_squares(X, y, inverse, m)
        full.update(ls_values)
        # Exact given the designs; uncorrelated with the moments, functions of the designs
        # only, since the least-squares estimates are unbiased given the designs.
        block = slice(0, 3 * m + 1)
        cov[block, :] = 0.0
        cov[:, block] = 0.0
        cov[block, block] = ls_cov
    bad = [k for k in full if not np.all(np.isfinite(full[k]))]
    if bad:
        raise ValueError(f"the data do not identify {', '.join(bad)} (non-finite estimates; "
                         "a feature or the response constant across rows?)")
    kappa = 1.0
    if route == "moments" and full["spread"] > 2 * se["spread"]:
        sp = gauss_two_atoms(*full["moments"])
        kappa = float(np.sum(sp.weights * sp.atoms ** 4) / full["moments"][1] ** 2)
    geo_idx = np.r_[m:2 * m, 3 * m]                            # r2 and centre_norm2
    cov[np.ix_(geo_idx, geo_idx)] += geometry(full, d, kappa)
    se.update(_unflat(np.sqrt(np.maximum(np.diag(cov), 0.0)), m))
    return Estimate(d=d, ids=ids, n=n, values=full, se=se, route=route, cov=cov,
                    mean_test=mean_test(X, y, inverse, n, pooled[1]),
                    notes=notes + ((shared,) if shared else ()))


def _check_route(route) -> None:
    """``route`` one of ``ROUTES``, checked before the data are read or worked on (it was
    checked after the jackknife's Gram traces: a typo cost the whole estimate's time)."""
    if not isinstance(route, str) or route not in ROUTES:
        raise ValueError(f"route must be one of {', '.join(ROUTES)}; got {route!r}")


def _gram_traces(X, rank, groups):
    """``traces(g)``: tr S^k, k = 1, 2, 3, of S = X^T X / N over the rows outside group g
    (None: all rows), N those rows' number. From the d x d Gram matrices of the groups, or,
    with fewer rows than d, from the rows' N x N Gram X X^T (tr (X^T X)^k = tr (X X^T)^k):
    d = 2000 with 30 rows took 22 s in d^3 products and 0.35 GB of d x d Grams."""
    if X.shape[0] >= X.shape[1]:
        gram = np.stack([X[rank == g].T @ X[rank == g] for g in range(groups)])  # (G, d, d)
        total = gram.sum(0)

        def matrix(g):
            return total if g is None else total - gram[g]
    else:
        rows = X @ X.T

        def matrix(g):
            return rows if g is None else rows[np.ix_(rank != g, rank != g)]

    def traces(g):
        G = matrix(g)
        N = X.shape[0] if g is None else int(np.sum(rank != g))
        S = G / N
        return np.trace(S), np.sum(S * S), np.sum(S * (S @ S))
    return traces


def _point(xty, yy, n, traces, d):
    """The estimates of the module docstring from per-client sums X_j^T y_j, ||y_j||^2, n_j
    and ``traces`` = tr S^k, k = 1, 2, 3, of the pooled S = X^T X / N in dimension d."""
    N = n.sum()
    t1, t2, t3 = traces
    c = d / N
    m1 = t1 / d
    m2 = N ** 2 / ((N - 1) * (N + 2)) * (t2 - t1 ** 2 / N) / d
    s2 = t2 / d
    m3 = t3 / d - 3 * c * m1 * s2 + 2 * c ** 2 * m1 ** 3
    q = (np.sum(xty ** 2, axis=1) - t1 * yy) / (n * (n + 1))
    b = xty / n[:, None]
    cross = b @ b.T
    sigma2 = yy / n - m1 * q / m2
    r2, centre2 = distances(q, cross)
    return {"sigma2": sigma2, "r2": r2 / m2, "rho2": q / m2, "centre_norm2": centre2 / m2,
            "moments": np.array([m1, m2, m3]), "spread": m2 - m1 ** 2}


def estimate_file(path, route: str = "auto", max_seconds=None) -> Estimate:
    """``estimate`` of the data in ``path`` (``load``); every error names the file."""
    _check_route(route)
    max_seconds = max_time("max_seconds", max_seconds)
    data = load(path)
    try:
        return estimate(*data, route=route, max_seconds=max_seconds)
    except ValueError as exc:            # load's messages name the file; these name it too
        raise ValueError(f"data file {path}: {exc}") from None
