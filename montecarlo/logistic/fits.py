"""The exact minimizers of the simulated logistic pipeline (``montecarlo.logistic.pipeline``,
whose module docstring states the objectives): a weighted ridge-to-a-centre log-loss
(``Weighted``, by damped Newton), FedAvg's global model over the blocks (``global_model``) and
the FedProx / pFedMe joint minimizer (``fedprox_model``; paper 004 eq. 8, Lemma 3)."""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from montecarlo.experiments.newton import damped_newton
from montecarlo.experiments.separability import separable
from riskcalc._validate import one_of
from riskcalc.errors import SolverError

#: Gradient sup-norm at which Newton stops (the objectives are means of O(1) losses).
TOL = 1e-10
#: Largest Newton step left at the stop, relative to the fit's distance from its centre (at
#: least 1), of an accepted fit (``Weighted.solve``).
STEP_RTOL = 1e-4


class Weighted:
    """``sum_k c_k l(y_k x_k.w) + (lam/2) ||w - centre||^2`` and its derivatives."""

    def __init__(self, X, y, c, lam, centre):
        self.A = y[:, None] * X               # margins y x.w = A w
        self.c, self.lam, self.centre = c, lam, centre

    def value(self, w):
        return (self.c @ np.logaddexp(0.0, -(self.A @ w))
                + 0.5 * self.lam * np.sum((w - self.centre) ** 2))

    def grad(self, w):
        return -self.A.T @ (self.c * expit(-(self.A @ w))) + self.lam * (w - self.centre)

    def hess(self, w):
        # B^T B with B = sqrt(h) A is one symmetric rank-k update (syrk): 30% less time than
        # the general product A^T (h A) at n = 8000, d = 400, equal to it up to rounding.
        z = self.A @ w
        B = self.A * np.sqrt(self.c * expit(z) * expit(-z))[:, None]
        return B.T @ B + self.lam * np.eye(self.A.shape[1])

    def solve(self, start, what, penalty: str = "lam"):
        """The minimizer by damped Newton from ``start``; ``what`` names the fit and
        ``penalty`` its ``lam`` in the errors.

        Raises
        ------
        ValueError
            The fit stopped at the gradient tolerance with its next Newton step beyond
            ``STEP_RTOL`` of its distance from the centre (``max(1, .)``): on (nearly)
            separable data the loss is flat along the separating direction and a tiny penalty
            does not hold the fit there (gamma 0.5, d = 50: lam = 1e-20 and 1e-300 gave the
            same w_hat, risk 13157.6, step 5.7 of 117; lam = 1e-6: 3.8e-6 of 41).
        """
        # The penalty's gradient lam (w - centre) carries lam times w's rounding: from lam ~
        # 1e5 a fixed TOL was out of reach (RTFA and pFedMe at lam = 1e8, inside the limits'
        # LAM_MAX, failed "did not reach gradient norm 1e-10 ... with l2 = 0"); as the FedProx
        # minimizer's outer solve, TOL or 1e-14 lam.
        w = damped_newton(self.value, self.grad, self.hess, np.array(start, float),
                          max(TOL, 1e-14 * self.lam), what, hint=_hint(f"{penalty} = {self.lam:g}"))
        self.check_held(w, what, penalty)
        return w

    def check_held(self, w, what, penalty: str = "lam"):
        """``solve``'s ValueError for a fit ``w`` (of any solver) whose next Newton step
        exceeds ``STEP_RTOL`` of ``max(1, its distance from the centre)``."""
        try:
            step = float(np.linalg.norm(np.linalg.solve(self.hess(w), self.grad(w))))
        except np.linalg.LinAlgError:       # singular in floating point: flat directions
            step = np.inf
        gap = float(np.linalg.norm(w - self.centre))
        if not step <= STEP_RTOL * max(1.0, gap):
            raise ValueError(
                f"{what}: the simulated fit at {penalty} = {self.lam:g} stopped at Newton's "
                f"gradient tolerance with its next step {step:.3g} long (its distance from the "
                f"centre: {gap:.3g}): on (nearly) separable data {penalty} is too small to hold "
                "the fit (every smaller value gives the same fit, not its own minimizer); give "
                f"a larger {penalty}")


def _hint(penalties: str) -> str:
    """``damped_newton``'s hint for these fits: their penalties, not the objectives' l2."""
    return (f"at {penalties}: on (nearly) separable data small penalties leave the loss "
            "nearly flat along the separating direction; give larger ones")


def check_blocks(X, y):
    """The clients' blocks ``X[j]`` (n_j, d) and labels ``y[j]`` (n_j,) of ``global_model``
    and ``fedprox_model`` as float arrays, or a ValueError naming the block: blocks of
    different d or a label per row missing gave numpy's matmul or broadcast error, and labels
    0/1 were fitted (a label 0 made its margin 0 whatever w)."""
    X, y = [np.asarray(b, float) for b in X], [np.asarray(b, float) for b in y]
    if len(X) != len(y) or not X:
        raise ValueError(f"X and y must list the same number (>= 1) of client blocks, got "
                         f"{len(X)} and {len(y)}")
    d = X[0].shape[-1]
    for j, (Xj, yj) in enumerate(zip(X, y)):
        if Xj.ndim != 2 or Xj.shape[1] != d:
            raise ValueError(f"X[{j}] must have shape (n_{j}, d) with X[0]'s d = {d}, got "
                             f"shape {Xj.shape}")
        if yj.shape != Xj.shape[:1]:
            raise ValueError(f"y[{j}] must have shape ({Xj.shape[0]},) (a label per row of "
                             f"X[{j}]), got shape {yj.shape}")
        if not np.all(np.abs(yj) == 1.0):
            raise ValueError(f"y[{j}] must be labels +-1 (the log-loss of y x.w), got values "
                             f"{np.unique(yj)[:4].tolist()}")
    return X, y


#: The clients' weightings of the global objective.
WEIGHTS = ("samples", "uniform")


def check_weights(weights) -> str:
    """``weights``, one of ``WEIGHTS``, or ValueError: anything but ``"samples"`` was read as
    ``"uniform"`` (``weights="x"`` by the public ``simulate_replicate``)."""
    if not one_of(weights, WEIGHTS):
        raise ValueError(f"weights must be one of {WEIGHTS}, got {weights!r}")
    return weights


def sample_weights(sizes, weights: str):
    """Per-sample weights ``c_j`` of the global objective (module docstring), one per sample."""
    sizes = np.asarray(sizes)
    per = (1.0 / sizes.sum() if check_weights(weights) == "samples"
           else 1.0 / (len(sizes) * sizes))
    return np.repeat(np.broadcast_to(per, sizes.shape), sizes)


def global_model(X, y, *, global_lam: float, weights: str = "samples"):
    """FedAvg's exact global model over the blocks ``X[j], y[j]`` (module docstring).

    Raises
    ------
    SolverError
        ``global_lam = 0`` and the pooled data are separable (no finite minimizer), or Newton
        does not converge.
    ValueError
        Blocks of unequal d, a label per row missing, or labels other than +-1.
    """
    X, y = check_blocks(X, y)
    Xp, yp = np.concatenate(X), np.concatenate(y)
    if global_lam == 0.0 and separable(Xp, yp):
        raise SolverError("the pooled data of the clients are separable: with global_lam = 0 "
                          "the global logistic model has no finite minimizer (a linear-program "
                          "certificate, montecarlo.experiments.separability.separable); use "
                          "global_lam > 0")
    c = sample_weights([len(b) for b in y], weights)
    d = Xp.shape[1]
    return Weighted(Xp, yp, c, global_lam, np.zeros(d)).solve(np.zeros(d), "global model",
                                                                 "global_lam")


#: Largest lam of the simulated FedProx / pFedMe minimizer (the limits' ``LAM_MAX``): its
#: gradient ``lam (w - sum_j p_j w_j)`` is lam times a difference of O(1) numbers, so its
#: rounding moves ``w`` by ~1e-14 lam (within 1.5e-6 of FedAvg's risk at 1e8, d = 20; at 1e12
#: the risk 1.0858 for FedAvg's 1.1259, at 1e300 1.1500).
FEDPROX_LAM_MAX = 1e8


def check_fedprox_lams(lams) -> None:
    """ValueError for a penalty beyond ``FEDPROX_LAM_MAX`` (``lams``: checked numbers)."""
    big = [v for v in lams if v > FEDPROX_LAM_MAX]
    if big:
        raise ValueError(
            f"lam = {max(big):g}: the simulated pFedMe / FedProx minimizer holds lam <= "
            f"{FEDPROX_LAM_MAX:g} (its gradient lam (w - sum_j p_j w_j) is lam times a "
            "difference of O(1) numbers, whose rounding moves w by ~1e-14 lam); as lam -> inf "
            "pFedMe's model is FedAvg's global model (method fedavg)")


def fedprox_model(X, y, *, lam: float, global_lam: float, weights: str, start=None):
    """The joint FedProx/pFedMe minimizer (module docstring): ``(w, [w_j])``.

    Newton on ``F(w) = sum_j p_j env_j(w) + (global_lam/2)||w||^2``, ``env_j`` the Moreau
    envelope of ``f_j`` with parameter ``1/lam``: gradient ``sum_j p_j lam (w - prox_j(w)) +
    global_lam w``, Hessian ``sum_j p_j lam H_j (H_j + lam I)^-1 + global_lam I`` (paper 004
    Lemma 3). ValueError as ``global_model``'s.
    """
    X, y = check_blocks(X, y)
    check_fedprox_lams([lam])
    sizes = np.array([len(b) for b in y])
    p = (sizes / sizes.sum() if check_weights(weights) == "samples"
         else np.full(len(sizes), 1.0 / len(sizes)))
    if global_lam == 0.0 and separable(np.concatenate(X), np.concatenate(y)):
        raise SolverError("the pooled data of the clients are separable: with global_lam = 0 "
                          "the FedProx objective has no finite minimizer; use global_lam > 0")
    d = X[0].shape[1]
    clients = [Weighted(Xj, yj, np.full(len(yj), 1.0 / len(yj)), lam, np.zeros(d))
               for Xj, yj in zip(X, y)]
    state = {"w": None, "W": [np.zeros(d) for _ in clients]}

    def inner(w):
        if state["w"] is None or not np.array_equal(w, state["w"]):
            for j, f in enumerate(clients):
                f.centre = w
                state["W"][j] = f.solve(state["W"][j], "FedProx proximal point")
            state["w"] = np.array(w)
        return state["W"]

    def value(w):
        return sum(pj * f.value(wj) for pj, f, wj in zip(p, clients, inner(w))) \
            + 0.5 * global_lam * w @ w

    def grad(w):
        return lam * (w - sum(pj * wj for pj, wj in zip(p, inner(w)))) + global_lam * w

    def hess(w):
        eye = np.eye(d)
        out = global_lam * eye
        for pj, f, wj in zip(p, clients, inner(w)):
            H = f.hess(wj) - lam * eye
            out = out + pj * lam * np.linalg.solve(H + lam * eye, H)
        return out

    w = damped_newton(value, grad, hess, np.zeros(d) if start is None else start,
                      max(TOL, 1e-14 * lam), "FedProx minimizer",
                      hint=_hint(f"lam = {lam:g}, global_lam = {global_lam:g}"))
    return w, inner(w)
