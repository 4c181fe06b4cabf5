"""Asymptotic bias, variance and risk of a client's prediction, for every registered method.

Paper 003 (``003_4b976ddf5225c17e.txt``): Thm 1 (FTFA), Thm 2 (RTFA), Cor. 3.1 (FedAvg, local
min-norm and local ridge), Thm 3 (MAML-FL), Thm 4 (pFedMe). The per-client test loss
L_i = B_i + V_i of eq. (3) converges in probability, as d, n_i -> infinity with d/n_i ->
gamma_i, to the values computed here.

Three routes compute the same limits (``route=``):

* ``"closed"``: the isotropic closed forms (Sigma = I only), ``riskcalc.linear.engine.marchenko_pastur``;
* ``"kappa"``: the effective-ridge form for any spectrum, ``riskcalc.linear.engine.kappa``;
* ``"paper"``: the c0 and Stieltjes-transform forms of Sec. 6.3, corrected,
  ``riskcalc.linear.engine.stieltjes``.

``"auto"`` picks ``"closed"`` for Sigma = I with the uniform signal direction, ``"kappa"``
otherwise. The tests require the routes to agree to 1e-10.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from riskcalc import _frames, solvers
from riskcalc._validate import one_of
from riskcalc.linear.client_weights import check_weights
from riskcalc.linear import finite_clients
from riskcalc.linear.finite_clients import grid as clients_grid
from riskcalc.linear.engine import kappa, marchenko_pastur, stieltjes
from riskcalc.errors import SolverError
from riskcalc.linear.model import ClientSpec, as_spec, broadcast_shape

ROUTES = ("auto", "closed", "kappa", "paper")

_FACTORS = {
    "kappa": kappa.ridge_factors,
    "paper": stieltjes.ridge_factors,
}


@dataclass(frozen=True)
class LimitResult:
    """Limits of the bias B_i, variance V_i and risk L_i = B_i + V_i (paper 003, eq. 3).

    Attributes
    ----------
    method : str
        The method's registry name.
    params : dict
        The parameters, as given (after validation).
    bias, variance, risk : float or ndarray
        The limits: floats for scalar parameters, arrays of the broadcast shape otherwise.
    route : str
        How they were computed (``closed``, ``kappa``, ``paper``, ``finite_clients``,
        ``finite-steps``, ``finite_clients_steps``).
    notes : tuple of str
        When a limit is infinite, when the parameters leave the paper's assumptions, and when
        a parameter has no effect on the limit.
    diagnostics : dict
        The scalar solves behind the numbers (``riskcalc.solvers.record``): per quantity
        solved, the number of solves and roots, the most iterations a root took and the
        largest residual at the last iterate; empty when no scalar equation was solved
        (closed forms and quadrature).
    converges : bool, ndarray of bool or None
        For a limit after finitely many gradient steps: whether the iteration converges
        (step_size (lam + top of the limiting spectrum of S) < 2); past that edge the risk
        grows without bound in the steps and is infinite once it leaves the floating point
        range. None for the limits of minimizers.
    """

    method: str
    params: dict
    bias: object
    variance: object
    risk: object
    route: str
    notes: tuple = field(default=())
    diagnostics: dict = field(default_factory=dict, compare=False)
    converges: object = field(default=None, compare=False)
    __eq__ = _frames.equal    # arrays by value (riskcalc._frames.equal)

    def as_dict(self) -> dict:
        """``{"method", "params", "bias", "variance", "risk", "notes"}`` as strict JSON values,
        and ``"diagnostics": {"converges"}`` for a limit after finitely many gradient steps.

        An infinite limit (the ridgeless variance at gamma = 1) becomes None (JSON null), which
        the notes explain: JSON has no infinity.
        """
        conv = _frames.json_numbers
        out = {"method": self.method, "params": self.params, "bias": conv(self.bias),
               "variance": conv(self.variance), "risk": conv(self.risk),
               "notes": list(self.notes)}
        if self.converges is not None:
            out["diagnostics"] = {"converges": np.asarray(self.converges).tolist()}
        return out

    def to_frame(self):
        """A pandas DataFrame with one row per parameter point (the broadcast shape, in C
        order): the method, every parameter, bias, variance, risk and route, ``converges``
        for a limit after finitely many gradient steps (as ``as_dict``; a diverging point was
        a row of numbers without it), and the largest iteration count and residual of the
        solves (``diagnostics``; absent when only closed forms ran).

        Needs pandas (``pip install 'fedrisk[frames]'``); ImportError saying so otherwise.
        """
        cols = {"method": self.method, **self.params,
                **{q: getattr(self, q) for q in ("bias", "variance", "risk")},
                "route": self.route,
                **({} if self.converges is None else {"converges": self.converges}),
                **_diagnostic_columns(self.diagnostics)}
        return _frames.frame(cols, np.shape(self.risk))


def limit(method: str, *, gamma, sigma, r=None, rho=None, lam=None, alpha=None,
          spectrum=None, route: str = "auto", clients=None, weights=None) -> LimitResult:
    """Asymptotic bias, variance and risk of ``method`` for one client.

    Paper 003 (``003_4b976ddf5225c17e.txt``), Thms 1-4 and Cor. 3.1; see ``ClientSpec`` for
    the parameters and this module's docstring for the routes.

    ``clients=M`` (an integer >= 1, or an array) replaces the exact global model by the FedAvg
    global model solved over M clients sharing the client's parameters, the client among them,
    with client weights ``weights`` (``"samples"``, the default: p_j = n_j / N; or
    ``"uniform"``): the
    finite-M limit of ``riskcalc.linear.finite_clients`` (fedavg, ftfa, rtfa with any spectrum,
    ``finite_clients.sigma``; pfedme and maml_fl with any spectrum, ``finite_clients.pfedme_sigma``,
    ``finite_clients.maml_sigma``; pooled N > d). ``clients=None`` is paper 003's limit
    (M -> infinity). Heterogeneous clients: ``riskcalc.clients_limit``. The local baselines
    (``local``, ``local_ridge``) use no global model: with ``clients=M`` they answer their
    oracle limit with a note saying so (as ``predict --clients M``; ``weights`` is checked and
    recorded, as by ``steps_limit``).

    Parameters
    ----------
    method : str
        A ``METHODS`` name: ``fedavg``, ``local``, ``local_ridge``, ``ftfa``, ``rtfa``,
        ``maml_fl``, ``pfedme`` or a registered method.
    gamma : float or array_like
        d / n_i > 0 (paper 003 assumes gamma > 1; gamma < 1 gives least squares).
    sigma : float or array_like
        Noise standard deviation, >= 0.
    r : float or array_like, optional
        ||theta_i - theta_0|| (methods centred at the global model).
    rho : float or array_like, optional
        ||theta_i|| (the local baselines ``local`` and ``local_ridge``).
    lam : float or array_like, optional
        Ridge penalty (``rtfa``, ``pfedme``, ``local_ridge``), 0 or in [1e-100, 1e100].
    alpha : float or array_like, optional
        MAML step size (``maml_fl``; the oracle limit does not depend on it, the finite-M one
        does).
    spectrum : Spectrum, optional
        Eigenvalue distribution H of Sigma and the signal's spread G (None: Sigma = I).
    route : {"auto", "closed", "kappa", "paper"}
        How to compute the limit (module docstring); all agree to 1e-10.
    clients : int or array_like of int, optional
        Number of clients M of the global model (None: M -> infinity); an array broadcasts
        with the other parameters (one finite-M solve per point), as in ``logistic_limit``.
    weights : {"samples", "uniform"}, optional
        Client weights of the finite-M global model (default ``samples``).

    Returns
    -------
    LimitResult
        ``bias``, ``variance``, ``risk`` (floats, or arrays of the parameters' broadcast
        shape), ``notes`` and the solver ``diagnostics``.

    Raises
    ------
    ValueError
        Naming the parameter and its valid range, for bad input.
    SolverError
        If an implicit equation does not converge.

    Examples
    --------
    >>> res = limit("rtfa", gamma=2.0, r=1.0, sigma=0.5, lam=0.5)
    >>> round(res.risk, 6)
    0.640388
    """
    spec = ClientSpec(method, gamma=gamma, sigma=sigma, r=r, rho=rho, lam=lam, alpha=alpha,
                      spectrum=spectrum)
    return spec_limit(spec, route=route, clients=clients, weights=weights)


def _diagnostic_columns(diagnostics: dict) -> dict:
    """``iterations`` and ``residual`` over every solve, for ``to_frame`` (none: no solve)."""
    if not diagnostics:
        return {}
    return {"iterations": max(d["iterations"] for d in diagnostics.values()),
            "residual": max(d["residual"] for d in diagnostics.values())}


def spec_limit(spec: ClientSpec, route: str = "auto", clients=None,
               weights=None) -> LimitResult:
    """The limit of a validated ``ClientSpec`` (what ``limit`` computes after validation).

    Parameters
    ----------
    spec : ClientSpec
        The client's model and the method's tuning.
    route, clients, weights
        As for ``limit``.

    Returns
    -------
    LimitResult
        With the solver diagnostics of the computation.
    """
    spec = as_spec(spec, "spec_limit")
    with solvers.record() as diagnostics:
        res = _spec_limit(spec, route, clients, weights)
    return replace(res, diagnostics=diagnostics)


def _spec_limit(spec: ClientSpec, route: str, clients, weights) -> LimitResult:
    if clients is not None and spec.info.signal == "rho":
        return _local_with_clients(spec, route, clients, weights)
    if clients is not None:
        return _finite_clients_limit(spec, route, clients, weights)
    if weights is not None:
        raise ValueError("weights apply to a finite number of clients only (give clients=M)")
    route = _resolve_route(spec, route)
    tuning = getattr(spec, spec.info.tuning) if spec.info.tuning else None
    values = {"gamma": spec.gamma, "sigma": spec.sigma, "r/rho": spec.signal,
              "lam": spec.penalty, spec.info.tuning or "tuning": tuning}
    shape = broadcast_shape(values)
    gamma = np.broadcast_to(spec.gamma, shape)
    lam = np.broadcast_to(spec.penalty, shape)
    signal2 = np.broadcast_to(spec.signal, shape) ** 2
    sigma2 = np.broadcast_to(spec.sigma, shape) ** 2
    spectrum = spec.spectrum_or_identity
    if spec.info.limit is not None:
        bias, var = _registered(spec, route, shape)
    elif not spec.info.personalized:
        bias = signal2 * spectrum.signal_mean
        var = np.zeros(shape)
    else:
        if route == "closed":
            b_fac, v_fac = marchenko_pastur.isotropic_factors(gamma, lam)
        else:
            b_fac, v_fac = _FACTORS[route](gamma, lam, spectrum)
        bias = signal2 * b_fac
        # sigma = 0 at the interpolation threshold: no noise, no variance (not 0 * inf).
        with np.errstate(invalid="ignore"):
            var = np.where(sigma2 == 0, 0.0, sigma2 * v_fac)
        _check_finite(route, bias, var, spec.penalty)
    risk = bias + var
    scalar = shape == ()
    out = [float(x) if scalar else np.asarray(x, dtype=float) for x in (bias, var, risk)]
    return LimitResult(spec.method, spec.params(), *out, route=route,
                       notes=_notes(spec, gamma, lam, sigma2))


def _check_finite(route, bias, var, penalty) -> None:
    """No NaN leaves ``limit``: only the ridgeless variance at the interpolation threshold may
    be infinite. Far out in the input range a route can lose every digit (the paper route's
    c0 at gamma = 1e100 with lam = 1e-100 and eigenvalues 1e-100 and 1e100 gave NaN)."""
    if (np.isnan(bias).any() or np.isnan(var).any() or np.isinf(bias).any()
            or (np.isinf(var) & (np.asarray(penalty) > 0)).any()):
        raise SolverError(f"route {route}: the limit is not a finite number at these "
                          "parameters (beyond floating point reach); try route kappa or "
                          "less extreme parameters")


def _registered(spec: ClientSpec, route: str, shape):
    """The (bias, variance) of a method added by ``riskcalc.register_method``, checked for
    shape and sign so that a faulty plugin fails here rather than downstream: real numbers
    (a float cast read "0.1" and True as numbers; complex values and None were TypeErrors).
    Messages name a plugin's file (``riskcalc.plugins.guard``'s ``origin``), and refuse a
    bias and variance whose sum, the risk, is past the floats."""
    out = spec.info.limit(spec, route)
    origin = getattr(spec.info.limit, "origin", None)
    who = (f"{origin}: " if origin else "") + f"the limit of method {spec.method}"
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise ValueError(f"{who} returned {type(out).__name__}"
                         f"{f' of {len(out)}' if isinstance(out, (tuple, list)) else ''}, "
                         "expected (bias, variance)")
    for name, v in zip(("bias", "variance"), out):
        try:
            dtype = np.asarray(v).dtype
        except (TypeError, ValueError):         # a ragged list
            dtype = np.dtype(object)
        if dtype.kind not in "iuf":
            raise ValueError(f"{who} returned {name} {v!r:.40} of "
                             f"dtype {dtype}, expected real numbers")
        if np.ma.is_masked(v):      # asarray read the masked entries' data (fuzz40 api F8)
            raise ValueError(f"{who} returned a masked {name}: "
                             "its masked entries are no numbers")
    bias, var = (np.asarray(v, dtype=float) for v in out)
    for name, v in (("bias", bias), ("variance", var)):
        if v.shape != shape:
            raise ValueError(f"{who} returned {name} of shape "
                             f"{v.shape}, expected the parameters' broadcast shape {shape}")
        if not np.all(np.isfinite(v)) or np.any(v < 0):
            what = (f"a non-finite {name}" if not np.all(np.isfinite(v)) else
                    f"a negative {name} ({np.min(v):.6g}), expected a number >= 0")
            raise ValueError(f"{who} returned {what}")
    with np.errstate(over="ignore"):
        risk = bias + var
    if not np.all(np.isfinite(risk)):
        # printed: risk inf (null in JSON) by a finite bias and variance (fuzz41 left F9)
        k = np.flatnonzero(~np.isfinite(risk))[0]
        raise ValueError(f"{who} returned bias {bias.flat[k]:.6g} and variance "
                         f"{var.flat[k]:.6g}, whose sum, the risk, is past the floats")
    return bias, var


def _finite_clients_limit(spec, route, clients, weights) -> LimitResult:
    if not one_of(route, ("auto", "closed")):
        raise ValueError("the finite-clients limit has one route: route must be auto or "
                         f"closed, got {route!r}")
    _resolve_route(spec, route)  # "closed" with a non-identity spectrum is an error
    weights = "samples" if weights is None else weights
    bias, var, said = clients_grid.spec_clients_limit(spec, clients, weights)
    risk = bias + var
    scalar = np.shape(bias) == ()
    out = [float(x) if scalar else x for x in (bias, var, risk)]
    gamma = np.broadcast_to(spec.gamma, np.shape(bias))
    params = {**spec.params(), "clients": clients_grid.check_clients(clients),
              "weights": weights}
    return LimitResult(spec.method, params, *out, route="finite_clients",
                       notes=finite_clients.notes(spec.method, gamma,
                                                  np.broadcast_to(spec.penalty, np.shape(bias)),
                                                  var)
                       + said)


def _local_with_clients(spec: ClientSpec, route: str, clients, weights) -> LimitResult:
    """A local baseline (``local``, ``local_ridge``) in a federation of ``clients`` clients: it
    uses no global model, so its limit is the oracle one whatever M and the weights, with both
    in the params (validated, as ``steps_limit`` does for them) and a note saying so, as
    ``predict --clients M`` answers (``limit`` refused it as "finite-clients limits are
    implemented for ..."; fuzz39 api F2)."""
    clients = clients_grid.check_clients(clients)
    weights = check_weights("samples" if weights is None else weights)
    res = _spec_limit(spec, route, None, None)
    shape = broadcast_shape({"the other parameters": res.risk, "clients": clients})
    if shape != np.shape(res.risk):     # an array of clients: the same limit at each M
        res = replace(res, **{q: np.broadcast_to(getattr(res, q), shape).copy()
                              for q in ("bias", "variance", "risk")})
    return replace(res, params={**res.params, "clients": clients, "weights": weights},
                   notes=res.notes + (f"{spec.method} uses no global model: the other clients "
                                      "of the federation play no part",))


def _resolve_route(spec: ClientSpec, route: str) -> str:
    if not one_of(route, ROUTES):
        raise ValueError(f"route must be one of {', '.join(ROUTES)}; got {route!r}")
    isotropic = spec.spectrum is None or (spec.spectrum.is_identity
                                           and spec.spectrum.signal_is_uniform)
    if route == "auto":
        return "closed" if isotropic else "kappa"
    if route == "closed" and not isotropic:
        raise ValueError("route 'closed' holds for Sigma = I only (spectrum identity)")
    return route


def _notes(spec: ClientSpec, gamma, lam, sigma2) -> tuple:
    """Caveats of the limit at the broadcast ``gamma``, ``lam`` and squared noise ``sigma2``.

    At the interpolation threshold (gamma = 1, lam = 0) the min-norm variance is sigma^2
    times an infinite factor: infinite where sigma > 0, but 0 where sigma = 0 (no noise),
    which the note said was infinite beside the variance 0 (fuzz40 api F1).
    """
    notes = []
    info = spec.info
    if info.personalized and info.limit is None:  # a registered method's limit is its own
        ridgeless = lam == 0
        threshold = ridgeless & (gamma == 1)
        if np.any(threshold & (sigma2 > 0)):
            notes.append("gamma = 1 with no ridge penalty: the interpolation threshold, where the "
                         "min-norm variance is infinite (and the bias 0)")
        if np.any(threshold & (sigma2 == 0)):
            notes.append("gamma = 1 with no ridge penalty and sigma = 0: the interpolation "
                         "threshold, where the min-norm variance (sigma^2 times an infinite "
                         "factor) is 0 with no noise (and the bias 0)")
        if np.any(ridgeless & (gamma < 1)):
            notes.append("gamma < 1 with no ridge penalty: the min-norm interpolant becomes least "
                         "squares (the lam -> 0 limit of ridge); paper 003 assumes gamma > 1")
    if info.name == "maml_fl":
        notes.append("the MAML-FL limit does not depend on alpha (paper 003, Thm 3)")
    return tuple(notes)
