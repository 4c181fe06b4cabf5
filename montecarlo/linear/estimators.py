"""Closed-form estimators of every registered method (``ESTIMATORS``, keyed like ``METHODS``).

Paper 003 (``003_4b976ddf5225c17e.txt``), with L_j(theta) = ||X_j theta - y_j||^2 / (2 n_j):

* global model: theta_0 = argmin sum_j p_j/(2 n_j) ||Omega_j^(1/2) (X_j theta - y_j)||^2, where
  Omega_j = I (FedAvg, eq. 6), (I - alpha X_j X_j^T / n_j)^2 (MAML-FL, eq. 12; Sec. 6.6), or
  (I + X_j X_j^T / (n_j lam))^-1 (pFedMe, eq. 14: minimizing out theta_j leaves the Moreau
  envelope of L_j, a least squares loss with this Omega_j);
* personalization: the ridge regression of the client's data shrunk toward a center c with
  penalty lam (eqs. 8, 10, 14), lam = 0 meaning the min-norm interpolant closest to c
  (eqs. 7, 9, 13); FedAvg keeps the center (no personalization).

Both act on the data only through the eigendecomposition X_j X_j^T / n_j = U diag(mu) U^T:
Omega_j = U diag(omega(mu)) U^T and the personalization keeps the fraction f(mu) of each data
direction (a spectral filter). ``montecarlo.linear.measure`` evaluates the risk from these two
functions; the dense functions below (``global_model``, ``personalize``, ``pfedme_joint``,
``fit``) are the literal closed forms, used to test the fast path and the iterative algorithms.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from riskcalc._validate import canonical_method, flag
from riskcalc.linear.methods import METHODS, get_method

_P = "003_4b976ddf5225c17e.txt"


def fedavg_weight(mu, tuning):
    """omega(mu) = 1: every client's squared error as is (paper 003, eq. 6)."""
    return np.ones_like(mu)


def maml_weight(mu, alpha):
    """omega(mu) = (1 - alpha mu)^2: the loss after one gradient step (paper 003, eq. 12);
    divided by alpha^2 for alpha > 1, which leaves the global model unchanged (its normal
    equations scale as a whole) and keeps omega^2 finite as alpha -> infinity."""
    if alpha > 1:
        return (1.0 / alpha - mu) ** 2
    return (1.0 - alpha * mu) ** 2


def pfedme_weight(mu, lam):
    """omega(mu) = lam / (lam + mu): the Moreau envelope of L_j (paper 003, eq. 14)."""
    if lam <= 0:
        raise ValueError("pfedme's federated global model needs lam > 0 (at lam = 0 the joint "
                         "objective (14) leaves theta_0 undetermined)")
    return lam / (lam + mu)


def spectral_filter(mu, lam, steps=None, step_size=None):
    """Fraction f(mu) of each data direction a personalization step fits.

    Ridge toward a center with penalty lam keeps f = mu / (mu + lam) (paper 003, eqs. 8, 10;
    lam = 0: f = 1, the min-norm interpolant of eqs. 7, 9, 13). ``steps`` full-batch gradient
    steps of size ``step_size`` on L_i + lam/2 ||theta - c||^2 started at c (Algs. 5-6, Sec. 7,
    with full batches) keep f = mu / (mu + lam) * (1 - (1 - step_size (mu + lam))^steps).

    Parameters
    ----------
    mu : ndarray
        Positive eigenvalues of X X^T / n.
    lam : float
        Penalty >= 0.
    steps : int, optional
        Number of gradient steps; None means run to convergence.
    step_size : float, optional
        Gradient step size (required with ``steps``).
    """
    mu = np.asarray(mu, dtype=float)
    f = mu / (mu + lam) if lam > 0 else np.ones_like(mu)
    if steps is None:
        return f
    return f * (1.0 - (1.0 - step_size * (mu + lam)) ** steps)


@dataclass(frozen=True)
class Estimator:
    """A method's finite-sample estimator, as a global objective and a personalization.

    Attributes
    ----------
    name : str
        The ``riskcalc.METHODS`` key.
    global_weight : callable
        omega(mu, tuning): how a client's data enter the global objective.
    global_tuned : bool
        Whether the global model depends on the tuning value (MAML-FL's alpha, pFedMe's lam).
    personalized : bool
        False for FedAvg (the client keeps the global model).
    ridge : bool
        Whether the personalization penalty is the tuning value (else min-norm).
    centered : bool
        Personalization shrinks toward the global model (True) or toward 0 (the local
        baselines, eqs. 9-10, whose signal is rho = ||theta_i||).
    reference : str
        Paper file and equations.
    personal_filter : callable or None
        None for the built-in methods (ridge or min-norm, ``spectral_filter``). A registered
        method may give its own f(mu, tuning): the fraction of each data direction its
        personalization fits, an array shaped like ``mu`` (every estimator acting on the
        client's data through the sample covariance is such a filter).
    """

    name: str
    global_weight: object
    global_tuned: bool
    personalized: bool
    ridge: bool
    centered: bool
    reference: str
    personal_filter: object = None

    def penalty(self, tuning: float) -> float:
        """The personalization's ridge penalty for tuning value ``tuning``."""
        return float(tuning) if self.ridge else 0.0

    def filter(self, mu, tuning, steps=None, step_size=None):
        """f(mu) of the personalization (0 for FedAvg); see ``spectral_filter``."""
        if not self.personalized:
            return np.zeros_like(mu)
        if self.personal_filter is None:
            return spectral_filter(mu, self.penalty(tuning), steps, step_size)
        if steps is not None:
            raise ValueError(f"method {self.name} has its own personalization filter: "
                             "finite gradient steps are defined for the built-in ones only")
        return np.asarray(self.personal_filter(np.asarray(mu, dtype=float), tuning),
                          dtype=float)


ESTIMATORS: dict[str, Estimator] = {e.name: e for e in (
    Estimator("fedavg", fedavg_weight, False, False, False, True, f"{_P}, eq. 6"),
    Estimator("local", fedavg_weight, False, True, False, False, f"{_P}, eq. 9"),
    Estimator("local_ridge", fedavg_weight, False, True, True, False, f"{_P}, eq. 10"),
    Estimator("ftfa", fedavg_weight, False, True, False, True, f"{_P}, eqs. 6-7"),
    Estimator("rtfa", fedavg_weight, False, True, True, True, f"{_P}, eqs. 6 and 8"),
    Estimator("maml_fl", maml_weight, True, True, False, True, f"{_P}, eqs. 12-13"),
    Estimator("pfedme", pfedme_weight, True, True, True, True, f"{_P}, eq. 14"),
)}


BUILTIN = frozenset(ESTIMATORS)


def guard_estimator(estimator: Estimator, origin: str) -> Estimator:
    """``estimator`` with its weights and filter behind the plugin boundary
    (``riskcalc.plugins.guard``): an exception in them, or a non-finite result, is one error
    naming ``origin`` (the plugin) and the method."""
    from dataclasses import replace

    from riskcalc.plugins import PluginError, finite_arrays, guard

    def wrap(fn, what):
        if fn is None:
            return None
        where = f"{origin}: estimator {estimator.name}: {what}"
        guarded = guard(fn, origin, f"estimator {estimator.name}: {what}", finite_arrays)

        def shaped(mu, *args, **kwargs):
            # One value per eigenvalue mu: another shape failed later as "matmul: Input
            # operand 1 has a mismatch in its core dimension 0" (fuzz41 left F11).
            out = guarded(mu, *args, **kwargs)
            if np.shape(out) != np.shape(mu):
                raise PluginError(f"{where} returned shape {np.shape(out)}, expected mu's "
                                  f"shape {np.shape(mu)} (one value per eigenvalue)")
            return out
        shaped.__wrapped__ = guarded    # inspect.unwrap: the plugin's source keys its cache
        return shaped
    return replace(estimator, global_weight=wrap(estimator.global_weight, "global_weight"),
                   personal_filter=wrap(estimator.personal_filter, "personal_filter"))


def register_estimator(estimator: Estimator) -> Estimator:
    """Add the finite-sample estimator of a method registered with ``riskcalc.register_method``.

    The estimator must describe the same method: registered under the same name, personalized
    alike, and centered at the global model exactly when the method's signal is ``r``. Then
    ``montecarlo.linear.measure`` (and ``compare``, ``sweep``, ``check_method``) simulate it through
    the same spectral path as the built-in methods (see the module docstring).

    Parameters
    ----------
    estimator : Estimator
        Its ``name`` must be a method of ``riskcalc.METHODS`` with no estimator yet.

    Returns
    -------
    Estimator
        ``estimator``, registered.

    Raises
    ------
    ValueError
        For a name already in ``ESTIMATORS``, a name not in ``riskcalc.METHODS``, or flags that
        contradict the method's registry entry.
    """
    if not isinstance(estimator, Estimator):
        raise ValueError(f"register_estimator takes a montecarlo.linear.estimators.Estimator, got "
                         f"{type(estimator).__name__}")
    name = estimator.name
    info = get_method(name)         # first: a list for a name was "unhashable type"
    if name in ESTIMATORS:
        raise ValueError(f"an estimator for method {name!r} is already registered")
    for key in ("global_tuned", "personalized", "ridge", "centered"):
        flag(f"estimator {name}: {key}", getattr(estimator, key))   # ridge="no" was True
    if estimator.personalized != info.personalized:
        raise ValueError(f"estimator {name}: personalized={estimator.personalized} but the "
                         f"method says {info.personalized}")
    if estimator.centered != (info.signal == "r"):
        raise ValueError(f"estimator {name}: centered={estimator.centered} but the method's "
                         f"signal is {info.signal!r} (centered at the global model iff 'r')")
    if not callable(estimator.global_weight):
        raise ValueError(f"estimator {name}: global_weight must be callable omega(mu, tuning)")
    if estimator.personal_filter is not None and not callable(estimator.personal_filter):
        raise ValueError(f"estimator {name}: personal_filter must be callable f(mu, tuning)")
    ESTIMATORS[name] = estimator
    return estimator


def unregister_estimator(name: str) -> None:
    """Remove an estimator added by ``register_estimator`` (the built-in ones stay).

    Parameters
    ----------
    name : str
        The name it was registered under.

    Returns
    -------
    None

    Raises
    ------
    ValueError
        For a built-in estimator or a name that is not registered.
    """
    if name in BUILTIN:
        raise ValueError(f"estimator {name!r} is built-in and cannot be unregistered")
    get_estimator(name)
    del ESTIMATORS[name]


def get_estimator(name: str) -> Estimator:
    """The estimator registered as ``name`` (ValueError listing the names otherwise, or
    saying that a method registered with a limit alone has none); an alias (fedprox) is its
    method's, as in ``riskcalc.get_method`` (sweep and check_method refused fedprox)."""
    name = canonical_method(name)
    try:
        return ESTIMATORS[name]
    except (KeyError, TypeError):
        if isinstance(name, str) and name in METHODS:
            # A plugin's method with a limit and no estimator read as unknown ("method must
            # be one of ..." in compare, sweep and check-method).
            raise ValueError(f"method {name} has a limit but no finite-sample estimator to "
                             "simulate: register one with montecarlo.register_estimator "
                             "(docs: extending)") from None
        raise ValueError(f"method must be one of {', '.join(ESTIMATORS)}; got {name!r}") from None


def tuning_value(spec) -> float:
    """The scalar tuning value of a ``ClientSpec`` (lam or alpha; 0 for untuned methods)."""
    name = spec.info.tuning
    return 0.0 if name is None else float(getattr(spec, name))


# --- literal dense closed forms (reference implementations) --------------------------------

def global_model(Xs, ys, p, name: str, tuning: float = 0.0) -> np.ndarray:
    """The global model of method ``name``, by a d x d solve (paper 003, eqs. 6, 12, 14).

    Parameters
    ----------
    Xs, ys : list of ndarray
        Client designs (n_j, d) and responses (n_j,).
    p : array_like
        Client weights p_j (summing to one).
    name : str
        Method; its ``global_weight`` defines Omega_j.
    tuning : float
        alpha (maml_fl) or lam (pfedme).
    """
    est = get_estimator(name)
    d = Xs[0].shape[1]
    lhs, rhs = np.zeros((d, d)), np.zeros(d)
    for X, y, pj in zip(Xs, ys, p):
        n = X.shape[0]
        if name == "maml_fl":
            W = np.eye(n) - tuning / n * X @ X.T  # eq. 12 as written
            omega = W @ W
        elif name == "pfedme":
            omega = np.linalg.inv(np.eye(n) + X @ X.T / (n * est.penalty(tuning)))
        else:
            omega = np.eye(n)
        lhs += pj / n * X.T @ omega @ X
        rhs += pj / n * X.T @ omega @ y
    return np.linalg.solve(lhs, rhs)


def personalize(X, y, center, lam: float) -> np.ndarray:
    """argmin L(theta) + lam/2 ||theta - center||^2, or for lam = 0 the interpolant closest to
    ``center`` (paper 003, eqs. 7-10, 13), by a d x d solve / pseudo-inverse."""
    n, d = X.shape
    if lam > 0:
        return np.linalg.solve(X.T @ X / n + lam * np.eye(d), X.T @ y / n + lam * center)
    return center + np.linalg.pinv(X) @ (y - X @ center)


def pfedme_joint(Xs, ys, p, lam: float):
    """The joint minimizer (theta_0, theta_1, ..., theta_M) of paper 003, eq. (14).

    Solved from its stationarity conditions (not through the Moreau envelope, so that it checks
    ``pfedme_weight``): theta_j = (S_j + lam)^-1 (b_j + lam theta_0) and
    sum_j p_j (theta_0 - theta_j) = 0, with S_j = X_j^T X_j / n_j, b_j = X_j^T y_j / n_j.
    """
    d = Xs[0].shape[1]
    lhs, rhs, inv = np.zeros((d, d)), np.zeros(d), []
    for X, y, pj in zip(Xs, ys, p):
        n = X.shape[0]
        R = np.linalg.inv(X.T @ X / n + lam * np.eye(d))
        inv.append((R, X.T @ y / n))
        lhs += pj * (np.eye(d) - lam * R)
        rhs += pj * R @ (X.T @ y / n)
    theta0 = np.linalg.solve(lhs, rhs)
    return theta0, [R @ (b + lam * theta0) for R, b in inv]


def fit(name: str, Xs, ys, p, tuning: float = 0.0, center=None) -> np.ndarray:
    """Client 0's model under method ``name`` by the dense closed forms (paper 003, eqs. 6-14).

    ``center`` replaces the global model (the oracle theta_0); the local baselines ignore it
    and shrink toward 0.
    """
    est = get_estimator(name)
    d = Xs[0].shape[1]
    if not est.centered:
        c = np.zeros(d)
    elif center is not None:
        c = np.asarray(center, dtype=float)
    else:
        c = global_model(Xs, ys, p, name, tuning)
    if not est.personalized:
        return c
    return personalize(Xs[0], ys[0], c, est.penalty(tuning))
