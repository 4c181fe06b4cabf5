"""Losses and gradients of the federated objectives of the papers.

Every client holds ``n`` samples (equal sizes, so the papers' weights ``p_i = n_i / N`` are
``1/m``). Arrays are stacked over clients and may carry leading batch dimensions (a grid of
problem instances solved together): features ``X`` have shape ``(..., m, n, d)``, labels
``(..., m, n)``, local models ``(..., m, d)``, a global model ``(..., d)``. All gradients are one
batched matrix product over every client (and every grid point) at once.

The client objective is ``f_i(w) = L_i(w) + l2/2 ||w||^2`` with ``L_i`` the empirical risk
(paper 000, eq. 3). The federated objectives built on it:

* ``"local"``: each client minimizes ``f_i`` alone (PureLocalTraining, paper 000 eq. 3);
* ``"global"``: ``(1/m) sum_i f_i(w)`` (FedAvg's objective, paper 000 eqs. 2 and 8);
* ``"fedprox"``: ``(1/m) sum_i [f_i(w_i) + lam/2 ||w_g - w_i||^2]`` (paper 000 eq. 20, paper 004
  eq. 1). Minimizing over ``w_g`` gives ``w_g = mean_i w_i``, so the local part of its minimizer
  is also the minimizer of the mixing objective of paper 001 eq. 2 and of pFedMe's bilevel
  objective (Dinh et al. 2020): one exact solver serves all three.

The exact minimizers of these objectives are in
``montecarlo.experiments.objectives.minimizers``.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from riskcalc._validate import as_array, nonnegative

LOSSES = ("logistic", "squared")
OBJECTIVES = ("local", "global", "fedprox")


class ClientLosses:
    """The stacked empirical risks ``f_i(w) = L_i(w) + l2/2 ||w||^2`` of ``m`` clients.

    Parameters
    ----------
    X : array_like, shape (..., m, n, d)
        Features; leading dimensions broadcast against those of ``y``.
    y : array_like, shape (..., m, n)
        Labels: ``+-1`` for ``loss="logistic"``, real for ``loss="squared"``.
    loss : {"logistic", "squared"}
        ``log(1 + exp(-y x'w))`` (paper 000 Sec. 3.2) or ``(x'w - y)^2 / 2`` (the quadratic
        instances of paper 001 Fig. 2).
    l2 : float
        Ridge strength, >= 0. It makes ``f_i`` ``l2``-strongly convex, which the papers assume
        (paper 000 Assumption A(b), paper 004 Assumption 3) and which the exact minimizers need
        when the data are separable (e.g. ``n <= d`` logistic data).
    """

    def __init__(self, X, y, *, loss: str = "logistic", l2: float = 0.0):
        X = as_array("X", X)
        y = as_array("y", y)
        if X.ndim < 3:
            raise ValueError(f"X must have shape (..., m, n, d), got shape {X.shape}")
        if y.shape[-2:] != X.shape[-3:-1]:
            raise ValueError(f"y must have shape (..., m, n) = (..., {X.shape[-3]}, "
                             f"{X.shape[-2]}), got shape {y.shape}")
        if loss not in LOSSES:
            raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
        if loss == "logistic" and not np.all(np.abs(y) == 1):
            raise ValueError("y must be +-1 for the logistic loss")
        self.X, self.y, self.loss, self.l2 = X, y, loss, float(nonnegative("l2", l2))
        self.batch_shape = np.broadcast_shapes(X.shape[:-3], y.shape[:-2])
        self._normal = None

    @property
    def m(self) -> int:
        """Number of clients."""
        return self.X.shape[-3]

    @property
    def n(self) -> int:
        """Samples per client."""
        return self.X.shape[-2]

    @property
    def d(self) -> int:
        """Dimension."""
        return self.X.shape[-1]

    def take(self, index):
        """The losses of the instances ``index`` (into ``batch_shape``) alone, on views of the
        data, not checked again (the check of X was 6% of the FedProx grids' time)."""
        out = object.__new__(ClientLosses)
        out.X = np.broadcast_to(self.X, self.batch_shape + self.X.shape[-3:])[index]
        out.y = np.broadcast_to(self.y, self.batch_shape + self.y.shape[-2:])[index]
        out.loss, out.l2, out._normal = self.loss, self.l2, None
        out.batch_shape = out.y.shape[:-2]
        return out

    # -- objective, gradient, Hessian ------------------------------------------------------------
    def shuffled(self, perm):
        """Features and labels with each client's samples reordered by ``perm`` (shape (m, n))."""
        rows = np.arange(self.m)[:, None]
        return self.X[..., rows, perm, :], self.y[..., rows, perm]

    def value(self, W):
        """``f_i(w_i)`` for every client: shape ``(..., m)``. ``W`` has shape (..., m, d)."""
        return _Point(self, W).value()

    def grad(self, W, X=None, y=None):
        """``grad f_i(w_i)`` for every client, shape ``(..., m, d)``.

        With ``X, y`` (a mini-batch of every client, shapes (..., m, B, d) and (..., m, B)),
        the mini-batch gradient ``(1/B) sum_j grad l(w_i, z_ij) + l2 w_i`` instead.
        """
        return _Point(self, W, X, y).grad()

    def hessian(self, W):
        """``hess f_i(w_i)``, shape ``(..., m, d, d)``."""
        return _Point(self, W).hessian()

    def normal_equations(self):
        """For the squared loss: ``s, Q, b`` with ``X_i'X_i/n = Q_i diag(s_i) Q_i'`` and
        ``b_i = X_i'y_i/n`` (shapes (..., m, d), (..., m, d, d), (..., m, d)).

        ``f_i(w) = w'(X_i'X_i/n)w/2 - b_i'w + l2/2 ||w||^2 + const``, so every stationarity
        condition of a ridge-type subproblem is a linear system in that basis. Computed once per
        instance (the data do not change).
        """
        if self.loss != "squared":
            raise ValueError("normal_equations needs loss='squared'")
        if self._normal is None:
            Xt = np.swapaxes(self.X, -1, -2)
            s, Q = np.linalg.eigh(Xt @ self.X / self.n)
            # X_i'X_i is positive semidefinite: a negative eigenvalue is rounding.
            b = (Xt @ self.y[..., None])[..., 0] / self.n
            self._normal = (np.maximum(s, 0.0), Q, b)
        return self._normal

    def smoothness(self):
        """An upper bound ``L_i`` on the smoothness of ``f_i``, shape ``(..., m)``.

        ``lambda_max(X_i'X_i / n) / 4 + l2`` for the logistic loss (its second derivative is at
        most 1/4; paper 004 App. C uses the same bound, see ERRATA in
        ``montecarlo.experiments.algorithms.fedprox.fedprox_bilevel``),
        ``lambda_max(X_i'X_i/n) + l2`` for the squared loss.
        """
        gram = np.swapaxes(self.X, -1, -2) @ self.X / self.n
        top = np.linalg.eigvalsh(gram)[..., -1]
        scale = 0.25 if self.loss == "logistic" else 1.0
        return np.broadcast_to(scale * top + self.l2, self.batch_shape + (self.m,))

    def strong_convexity(self):
        """A lower bound ``mu_i`` on the strong convexity of ``f_i``, shape ``(..., m)``.

        ``l2`` for the logistic loss (its curvature vanishes far from the origin),
        ``lambda_min(X_i'X_i/n) + l2`` for the squared loss.
        """
        if self.loss == "logistic":
            return np.full(self.batch_shape + (self.m,), self.l2)
        gram = np.swapaxes(self.X, -1, -2) @ self.X / self.n
        low = np.maximum(np.linalg.eigvalsh(gram)[..., 0], 0.0)
        return np.broadcast_to(low + self.l2, self.batch_shape + (self.m,))


class _Point:
    """``ClientLosses`` at one point ``W`` (on data ``X, y``, default its own): the margins
    ``z = X_i w_i`` and, once each (:meth:`once`), ``expit(-y z)`` (the gradient's and the
    Hessian's), the value, gradient and Hessian. Callers must not write into them. The
    curvature ``expit(y z) expit(-y z)`` is ``expit(z) expit(-z)`` to the bit for ``y = +-1``
    (a sign flip is exact, a product commutes): sharing a point changes no result."""

    def __init__(self, losses, W, X=None, y=None):
        self.losses, self.W = losses, W
        self.X = losses.X if X is None else X
        self.y = losses.y if y is None else y
        self.z = (self.X @ W[..., None])[..., 0]
        self._memo = {}

    def once(self, name):
        """``"value"``, ``"grad"`` or ``"hessian"``, computed at the first call (a dict:
        functools.cached_property's lock made a 3 x 40 sample gradient 30% slower, py3.11)."""
        if name not in self._memo:
            self._memo[name] = getattr(self, name)()
        return self._memo[name]

    def sigmoid(self):
        """``expit(-y z)`` (logistic loss)."""
        if "sigmoid" not in self._memo:
            self._memo["sigmoid"] = expit(-self.y * self.z)
        return self._memo["sigmoid"]

    def value(self):
        L = self.losses
        if L.loss == "logistic":
            phi = np.logaddexp(0.0, -self.y * self.z)
        else:
            phi = 0.5 * (self.z - self.y) ** 2
        return phi.mean(-1) + 0.5 * L.l2 * np.sum(self.W * self.W, -1)

    def grad(self):
        L, X = self.losses, self.X
        dphi = -self.y * self.sigmoid() if L.loss == "logistic" else self.z - self.y
        g = (np.swapaxes(X, -1, -2) @ dphi[..., None])[..., 0] / X.shape[-2]
        return g + L.l2 * self.W

    def hessian(self):
        L, X = self.losses, self.X
        if L.loss == "logistic":
            d2phi = expit(self.y * self.z) * self.sigmoid()
        else:
            d2phi = np.ones_like(self.z)
        # X' diag(c) X as a scaled transposed copy times X: one batched matrix product. Measured
        # (OMP_NUM_THREADS=1) 1.5-3x faster than einsum's contraction path when X and the
        # curvatures share their batch, 12x when X is broadcast against them (X (10, 200, 60),
        # labels (2, 10, 200): einsum copies X for every batch entry).
        c = d2phi / X.shape[-2]
        return (np.swapaxes(X, -1, -2) * c[..., None, :]) @ X + L.l2 * np.eye(L.d)


def _derivatives(losses, wrap=None):
    """``value, grad, hessian`` of ``losses`` at ``wrap(x)`` (default ``x``) for
    :func:`damped_newton`: a call at the point of the previous call reuses its :class:`_Point`
    (a Newton step asks for all three at one point), recognized by value against a copy
    (buffers may be reused)."""
    last = {}

    def point(x):
        W = x if wrap is None else wrap(x)
        if "key" not in last or not np.array_equal(last["key"], W):
            last["key"], last["point"] = np.array(W), _Point(losses, W)
        return last["point"]

    return (lambda x: point(x).once("value"), lambda x: point(x).once("grad"),
            lambda x: point(x).once("hessian"))


def objective_value(losses: ClientLosses, objective: str, w_global, W, lam: float = 0.0):
    """Value of a federated objective at ``(w_global, W)``, shape ``losses.batch_shape``.

    ``"local"``: ``mean_i f_i(w_i)`` (paper 000 eq. 3, summed over clients); ``"global"``:
    ``mean_i f_i(w_global)`` (eq. 2); ``"fedprox"``: paper 000 eq. 20 with ``p_i = 1/m``.
    """
    objective = _check_objective(objective)
    if objective == "global":
        return losses.value(_broadcast_global(w_global, losses)).mean(-1)
    val = losses.value(W).mean(-1)
    if objective == "fedprox":
        val = val + 0.5 * lam * np.sum((W - w_global[..., None, :]) ** 2, -1).mean(-1)
    return val


def _broadcast_global(w, losses):
    return np.broadcast_to(w[..., None, :], w.shape[:-1] + (losses.m, losses.d))


def _check_objective(objective):
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {OBJECTIVES}, got {objective!r}")
    return objective
