"""Simulated risk of every client of a federation under one candidate pipeline of
``riskcalc.advise`` (what ``advise`` predicts, measured at finite d).

Paper 003 (``003_4b976ddf5225c17e.txt``), Sec. 2: client j draws n_j = round(d / gamma_j)
rows x = Sigma^(1/2) z (Gaussian z), theta_j = theta_0 + r_j u_j with u_j uniform on the
sphere, and noise of level sigma_j. The global model and the personalization are the closed
forms of paper 003 (eqs. 6-14; MAML-FL and pFedMe through ``montecarlo.linear.estimators``) with the
candidate's client weights and tuning, the personalization through each client's thin SVD;
a client's risk is ||theta_hat_j - theta_j||_Sigma^2 for the sampled draw. Every
candidate is run on the same draws of a replicate (common random numbers), so differences
between candidates have small standard errors.
"""

from __future__ import annotations

import numpy as np

from montecarlo.linear.estimators import get_estimator, global_model, spectral_filter
from montecarlo.linear.instances import sample_size
from montecarlo.runner.seeding import replicate_rng
from montecarlo.runner.threads import small_blas
from riskcalc._validate import positive_int
from riskcalc.advise import PIPELINES, Federation
from riskcalc.spectrum import ordered_eigenvalues


def sample_federation(fed, d: int, seed: int, rep: int, designs=None):
    """One replicate: designs X_j, parameters theta_j (rows), responses y_j and the Sigma
    eigenvalues s (the eigenbasis of Sigma is the canonical one): one array (d,) shared by the
    clients, or (M, d) under covariate shift (``fed.spectra``: each client's SPEC in the
    order of the shared basis, ``riskcalc.spectrum.ordered_eigenvalues``).

    ``designs`` replaces the Gaussian designs by given matrices (real features; their
    covariance is then whatever it is, ``s`` is None). theta_0 has norm
    sqrt(mean_j(rho_j^2 - r_j^2)) (0 without rho): the local baselines need ||theta_j|| = rho_j.
    """
    m = fed.m
    rng = replicate_rng(seed, rep, m, 0)
    if designs is None:
        if fed.spectra is not None:
            s = np.array([ordered_eigenvalues(spec, d) for spec in fed.spectra])
        else:
            s = np.ones(d) if fed.spectrum is None else fed.spectrum.eigenvalues(d)
        X = [replicate_rng(seed, rep, j, 0).standard_normal(
                (sample_size(d, g, f"client {j}"), d)) * np.sqrt(s[j] if s.ndim > 1 else s)
             for j, g in enumerate(fed.gamma)]
    else:
        X, s = [np.asarray(x, float) for x in designs], None
        d = X[0].shape[1]
    c2 = 0.0 if fed.rho is None else max(float(np.mean(fed.rho ** 2 - fed.r ** 2)), 0.0)
    theta0 = rng.standard_normal(d)
    theta0 *= np.sqrt(c2) / np.linalg.norm(theta0)
    theta, y = np.empty((m, d)), []
    for j in range(m):
        u = replicate_rng(seed, rep, j, 1).standard_normal(d)
        theta[j] = theta0 + fed.r[j] * u / np.linalg.norm(u)
        noise = replicate_rng(seed, rep, j, 2).standard_normal(X[j].shape[0])
        y.append(X[j] @ theta[j] + fed.sigma[j] * noise)
    return X, theta, y, s


class _Client:
    """One client's data with its thin SVD X = U D V^T, reused by every candidate."""

    def __init__(self, X, y):
        self.X, self.y, self.n = X, y, X.shape[0]
        self.U, self.D, self.Vt = np.linalg.svd(X, full_matrices=False)
        self.gram = X.T @ X / self.n
        self.xty = X.T @ y / self.n

    def ridge(self, centre, lam: float, steps=None, step_size=None) -> np.ndarray:
        """argmin ||X theta - y||^2 / (2n) + lam/2 ||theta - centre||^2, or for lam = 0 the
        interpolant closest to ``centre`` (paper 003, eqs. 7-10); with ``steps``, that many
        gradient steps of size ``step_size`` on it from ``centre`` (Sec. 7, Algs. 5-6;
        ``spectral_filter``)."""
        resid = self.U.T @ (self.y - self.X @ centre)
        keep = self.D > self.D[0] * 1e-12
        filt = np.zeros_like(self.D)
        filt[keep] = spectral_filter(self.D[keep] ** 2 / self.n, lam, steps,
                                     step_size) / self.D[keep]
        return centre + self.Vt.T @ (filt * resid)


def candidate_models(X, y, candidate, clients=None) -> np.ndarray:
    """Every client's fitted parameter under ``candidate`` (a ``riskcalc.advise.Candidate``
    of method fedavg, ftfa, rtfa, maml_fl, pfedme, local_ridge or ftfa_steps), one row per
    client; ``clients`` caches the decompositions across candidates."""
    if candidate.method not in PIPELINES:     # was simulated as FTFA (fuzz41 api F13)
        raise ValueError(f"candidate method {candidate.method!r} has no simulation here; "
                         f"simulated: {', '.join(PIPELINES)}")
    clients = clients or [_Client(x, v) for x, v in zip(X, y)]
    m, d = len(X), X[0].shape[1]
    tuning = candidate.tuning
    if candidate.method == "local_ridge":
        return np.array([c.ridge(np.zeros(d), tuning["lam"][j]) for j, c in enumerate(clients)])
    if candidate.method in ("maml_fl", "pfedme"):
        value = tuning["alpha" if candidate.method == "maml_fl" else "lam"]
        centre = global_model(X, y, candidate.p, candidate.method, value)
        lam = [0.0 if candidate.method == "maml_fl"
               else get_estimator(candidate.method).penalty(value)] * m
    else:
        # FedAvg's objective (eq. 6): sum_j p_j (X_j^T X_j theta - X_j^T y_j) / n_j = 0.
        centre = np.linalg.solve(sum(p * c.gram for p, c in zip(candidate.p, clients)),
                                 sum(p * c.xty for p, c in zip(candidate.p, clients)))
        if candidate.method == "fedavg":
            return np.tile(centre, (m, 1))
        if candidate.method == "ftfa_steps":    # was simulated as ftfa (fuzz41 api F12)
            return np.array([c.ridge(centre, 0.0, tuning["steps"][j], tuning["step_size"])
                             for j, c in enumerate(clients)])
        lam = tuning["lam"] if candidate.method == "rtfa" else [0.0] * m
    return np.array([c.ridge(centre, lam[j]) for j, c in enumerate(clients)])


def _checked_designs(designs, m: int, test) -> list:
    """``designs`` as M finite matrices of one column count d, with ``test`` a d x d
    covariance or M of them: without ``test`` the risks were NaN, a wrong count of designs an
    IndexError, a wrong shape numpy's broadcast error (fuzz41 api F14)."""
    X = [np.asarray(x, float) for x in designs]
    if (len(X) != m or any(x.ndim != 2 or x.size == 0 or not np.isfinite(x).all() for x in X)
            or len({x.shape[1] for x in X}) != 1):
        raise ValueError(f"designs must be {m} finite matrices (one per client: samples x "
                         f"features, one number of features), got shapes "
                         f"{[x.shape for x in X][:5]}")
    d = X[0].shape[1]
    shape = None if test is None else np.shape(test)
    if shape not in ((d, d), (m, d, d)):
        raise ValueError(f"designs need test, the covariance the risk is measured in: {d} x {d} "
                         f"or {m} of them, got " + ("none" if test is None else f"shape {shape}"))
    return X


def simulate(fed, candidates, d: int, reps: int, seed: int = 0, designs=None, test=None):
    """Per replicate, candidate and client the risk ||theta_hat_j - theta_j||_Sigma^2.

    Parameters
    ----------
    fed : riskcalc.advise.Federation
    candidates : sequence of Candidate
    d, reps, seed : int
    designs : list of ndarray, optional
        Real design matrices (one per client) used in every replicate instead of Gaussian
        ones (the parameters and the noise are redrawn); the risk is then measured in the
        covariance ``test``: one d x d matrix, or a list of one per client (covariate shift:
        each client in its own covariance).

    Returns
    -------
    ndarray (reps, len(candidates), M)
    """
    if not isinstance(fed, Federation):     # a dict was "no attribute 'm'" (fuzz41 api F25)
        raise ValueError(f"fed must be a riskcalc.Federation (e.g. Federation(gamma=[0.5, 2], "
                         f"r=1, sigma=0.5)), got {type(fed).__name__} {fed!r:.40}")
    reps = positive_int("reps", reps)
    if designs is not None:
        designs = _checked_designs(designs, fed.m, test)
    elif test is not None:
        raise ValueError("test applies with designs only: Gaussian designs are measured in "
                         "the federation's own covariance")
    else:
        d = positive_int("d", d)
    out = np.empty((reps, len(candidates), fed.m))
    with small_blas():
        for rep in range(reps):
            X, theta, y, s = sample_federation(fed, d, seed, rep, designs)
            clients = [_Client(x, v) for x, v in zip(X, y)]
            for k, cand in enumerate(candidates):
                err = candidate_models(X, y, cand, clients) - theta
                if s is not None:
                    out[rep, k] = np.sum(err ** 2 * s, axis=-1)
                else:
                    cov = np.broadcast_to(np.asarray(test, float), (fed.m,) + err.shape[1:] * 2)
                    out[rep, k] = np.einsum("jd,jde,je->j", err, cov, err)
    return out
