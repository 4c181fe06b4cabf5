"""The result types of the logistic limits: infinitely many clients (``LogisticResult``,
``riskcalc.logistic.fixed_point``, whose module docstring defines every field) and M clients
(``FiniteLogisticResult``, ``LogisticClientsResult``, ``riskcalc.logistic.finite_clients``)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from riskcalc import _frames


def _param(v):
    """A parameter as JSON: floats and float arrays by ``riskcalc._frames.json_numbers`` (the
    package's one strict-JSON conversion; this module kept two more, one of which let inf
    through as ``Infinity``), an integer array (a grid of client counts) as integers, anything
    else as it is."""
    if isinstance(v, np.ndarray) and v.dtype.kind in "iub":
        return v.tolist()
    return _frames.json_numbers(v) if isinstance(v, (float, np.ndarray)) else v


@dataclass(frozen=True)
class LogisticResult:
    """Limits for one client of personalized logistic regression (see module docstring).

    Attributes
    ----------
    params : dict
        gamma, signal, r, lam (and centre, centre_scale for the FedAvg centre).
    risk : float
        Limit of ``||w_hat - w_i||^2``.
    sigma_risk : float
        Limit of the Sigma-weighted error ``(w_hat - w_i)' Sigma (w_hat - w_i)`` (equal to
        ``risk`` at ``Sigma = I``; ``riskcalc.logistic.spectrum.fixed_point``).
    cosine : float
        Limit of the cosine between ``w_hat - c`` and ``w_i - c`` (NaN when ``r = 0``, noted).
    cosine_uncentred : float
        Limit of the cosine between ``w_hat`` and ``w_i`` (the one cosine of the finite-M
        results; NaN when ``w_hat`` or ``w_i`` is 0).
    test_logloss, test_error : float
        Limits of the expected log-loss and misclassification rate on a fresh sample.
    a, b, q, mu : float
        The fixed point: components of ``w_hat`` along ``w_i / ||w_i||`` and along the centre's
        part orthogonal to ``w_i``, the isotropic remainder's norm, the proximal parameter
        (with a spectrum: in the whitened coordinates ``Sigma^(1/2) w``).
    notes : tuple of str
        Where the result needs a caveat (an undefined cosine).
    method : str
        ``"rtfa"`` (ridge toward the centre), or ``"local_ridge"`` (ridge toward 0:
        ``riskcalc.logistic_limit``'s reduction, with ``params`` the asked signal and r).
    diagnostics : dict
        The fixed-point solve: ``solver`` (Powell's hybrid method), ``residual`` (the largest
        scaled residual of (E1)-(E4) at the returned point), ``quadrature_nodes`` (the ladder
        level of the rule that agreed with the next coarser one: Gauss-Hermite nodes per
        dimension on the fast path) and ``quadrature_axes`` (that rule's axes, e.g.
        Gauss-Legendre panels at large signal norms; ``riskcalc.logistic.engine.gaussian``).
    """

    params: dict
    risk: float
    cosine: float
    test_logloss: float
    test_error: float
    a: float
    b: float
    q: float
    mu: float
    notes: tuple = field(default_factory=tuple)
    diagnostics: dict = field(default_factory=dict, compare=False)
    sigma_risk: float = None
    cosine_uncentred: float = None
    method: str = "rtfa"
    __eq__ = _frames.equal    # arrays by value (riskcalc._frames.equal)

    def __post_init__(self):
        # Sigma = I (the spectral solver passes both): the two errors coincide, and
        # w_hat = a e + b f + (rest of norm q) with w_i = ||w_i|| e.
        if self.sigma_risk is None:
            object.__setattr__(self, "sigma_risk", self.risk)
        if self.cosine_uncentred is None:
            # w_i = 0 (signal = r = 0) has no direction: its cosine is NaN too (it printed
            # 9e-17, a rounding residue of a / norm).
            target = np.hypot(self.params.get("signal", 1.0), self.params.get("r", 1.0))
            with np.errstate(invalid="ignore", divide="ignore"):
                norm = np.sqrt(np.square(self.a) + np.square(self.b) + np.square(self.q))
                value = np.where((norm > 0) & (target > 0), self.a / norm, np.nan)
            object.__setattr__(self, "cosine_uncentred", value if np.ndim(value) else
                               float(value))

    def to_frame(self):
        """A pandas DataFrame, one row per parameter point (``riskcalc._frames.frame``): every
        parameter, the six limits, the fixed point (a, b, q, mu) and the solve's residual and
        quadrature nodes.

        Needs pandas (``pip install 'fedrisk[frames]'``); ImportError saying so otherwise.
        """
        keys = ("risk", "sigma_risk", "cosine", "cosine_uncentred", "test_logloss",
                "test_error", "a", "b", "q", "mu")
        row = {"model": "logistic", "method": self.method, **self.params,
               **{k: getattr(self, k) for k in keys},
               **{k: v for k, v in self.diagnostics.items() if k != "solver"}}
        return _frames.frame(row)

    def as_dict(self) -> dict:
        """JSON-ready dict (NaN becomes None; arrays of a grid become nested lists)."""
        out = {"model": "logistic", "method": self.method,
               "params": {k: _param(v) for k, v in self.params.items()}}
        for k in ("risk", "sigma_risk", "cosine", "cosine_uncentred", "test_logloss",
                  "test_error", "a", "b", "q", "mu"):
            out[k] = _frames.json_numbers(getattr(self, k))
        out["notes"] = list(self.notes)
        return out


#: The limits of one client at finite M, in output order.
QUANTITIES = ("risk", "sigma_risk", "cosine_uncentred", "test_logloss", "test_error")
#: The global model's fields (absent where no global model is used: local ridge).
GLOBAL_FIELDS = ("global_overlap", "global_dist")


def measured_fields(method: str, federated: bool, spectrum) -> tuple:
    """The fields of one client's logistic limit that ``riskcalc compare`` and ``sweep
    --model logistic`` print and measure, in order: ``sigma_risk`` under a ``spectrum`` (not
    None), ``cosine`` (about the deterministic centre) only for RTFA without clients (local
    ridge's centre is 0: its cosine is ``cosine_uncentred``), the global model's fields only
    where one is used (with clients, not local ridge)."""
    names = ("risk",) + (("sigma_risk",) if spectrum is not None else ())
    names += ("cosine",) if not federated and method == "rtfa" else ()
    names += ("cosine_uncentred", "test_logloss", "test_error")
    return names + (GLOBAL_FIELDS if federated and method != "local_ridge" else ())


@dataclass(frozen=True)
class FiniteLogisticResult:
    """Limits for one client of a logistic federation with M clients (``method``'s estimate).

    Attributes
    ----------
    method : str
    params : dict
        The client's gamma, signal, r, lam; clients, global_lam, weights.
    risk, sigma_risk, cosine_uncentred, test_logloss, test_error : float or ndarray
        Limits of ``||w_hat - w_i||^2``, ``(w_hat - w_i)' Sigma (w_hat - w_i)``, the cosine
        between ``w_hat`` and ``w_i``, and the test log-loss and misclassification rate on a
        fresh sample (arrays of the broadcast shape on a grid, as are the global fields).
    global_overlap, global_dist : float, ndarray or None
        The global model's ``w_g.w_0 / S^2`` (NaN at S = 0) and ``||w_g - w_0||^2``; None for
        ``local_ridge`` (no global model).
    iterations : int
        Residual evaluations of the fixed-point solvers.
    residual : float
        Largest final residual (sup-norm of the scaled systems).
    notes : tuple of str
    """

    method: str
    params: dict
    risk: float
    sigma_risk: float
    cosine_uncentred: float
    test_logloss: float
    test_error: float
    global_overlap: float
    global_dist: float
    iterations: int
    residual: float
    notes: tuple = field(default_factory=tuple)
    __eq__ = _frames.equal    # arrays by value (riskcalc._frames.equal)

    def as_dict(self) -> dict:
        """JSON-ready dict (NaN becomes None; the global model's fields only where a global
        model is used; arrays of a grid become nested lists)."""
        out = {"model": "logistic", "method": self.method,
               "params": {k: _param(v) for k, v in self.params.items()}}
        for k in QUANTITIES + GLOBAL_FIELDS + ("residual",):
            if k in GLOBAL_FIELDS and getattr(self, k) is None:
                continue
            out[k] = _frames.json_numbers(getattr(self, k))
        out["iterations"] = int(self.iterations)
        out["notes"] = list(self.notes)
        return out

    def to_frame(self):
        """A pandas DataFrame, one row per parameter point (``riskcalc._frames.frame``): method,
        parameters, the five limits, the global model's fields, diagnostics. An undefined
        value (``global_overlap`` at signal 0) is NaN, as in ``LogisticResult.to_frame`` (it
        was read from ``as_dict``: None, in a column of Python objects)."""
        fields = [k for k in QUANTITIES + GLOBAL_FIELDS if getattr(self, k) is not None]
        return _frames.frame({"method": self.method, **self.params,
                              **{k: getattr(self, k) for k in fields},
                              "residual": float(self.residual),
                              "iterations": int(self.iterations)})


@dataclass(frozen=True)
class LogisticClientsResult:
    """Every client's limits in a heterogeneous logistic federation (``logistic_clients_limit``).

    Attributes
    ----------
    method : str
    params : dict
        Per-client gamma and r lists, signal, lam, global_lam, weights, clients.
    risk, sigma_risk, cosine_uncentred, test_logloss, test_error : ndarray (M,)
        Client j's limits as the target.
    mean : dict
        Their averages over the clients (uniform), one per quantity.
    global_overlap, global_dist : float or None
        As in ``FiniteLogisticResult``.
    iterations : int
    residual : float
    notes : tuple of str
    """

    method: str
    params: dict
    risk: np.ndarray
    sigma_risk: np.ndarray
    cosine_uncentred: np.ndarray
    test_logloss: np.ndarray
    test_error: np.ndarray
    mean: dict
    global_overlap: float
    global_dist: float
    iterations: int
    residual: float
    notes: tuple = field(default_factory=tuple)
    __eq__ = _frames.equal    # arrays by value (riskcalc._frames.equal)

    def as_dict(self) -> dict:
        """JSON-ready dict (NaN becomes None)."""
        conv = _frames.json_numbers
        return {"model": "logistic", "method": self.method,
                "params": {k: _param(v) for k, v in self.params.items()},
                **{q: conv(getattr(self, q)) for q in QUANTITIES},
                "mean": {q: conv(v) for q, v in self.mean.items()},
                **{k: conv(getattr(self, k)) for k in GLOBAL_FIELDS
                   if getattr(self, k) is not None},
                "iterations": int(self.iterations),
                "residual": float(self.residual), "notes": list(self.notes)}

    def to_frame(self):
        """A pandas DataFrame with one row per client computed (``params["targets"]``): the
        method, its index, gamma, r, the shared signal, lam, global_lam (per grid point in C
        order on a grid), weights and spectrum, and the limits, as ``ClientsLimit.to_frame``
        (a grid or a target was "All arrays must be of the same length"; without a grid the
        method and the shared parameters were left out, so frames of two runs read the same).
        """
        shape = np.shape(self.risk)
        grid, targets = shape[:-1], np.asarray(self.params["targets"], dtype=int)
        cols = {"method": self.method, "client": np.broadcast_to(targets, shape)}
        for k in ("gamma", "r"):
            per = np.broadcast_to(np.asarray(self.params[k], dtype=float),
                                  grid + (self.params["clients"],))
            cols[k] = per[..., targets]
        for k in ("signal", "lam", "global_lam"):
            if self.params.get(k) is not None:
                point = np.broadcast_to(np.asarray(self.params[k], dtype=float), grid)
                cols[k] = point[..., None]
        cols.update({k: self.params[k] for k in ("weights", "spectrum") if k in self.params})
        cols.update({q: getattr(self, q) for q in QUANTITIES})
        return _frames.frame(cols, shape)
