"""Exact limits with a FINITE number M of clients in the global model: the public interface.

Paper 003 (``003_4b976ddf5225c17e.txt``) takes the global model to be exact (M -> infinity).
Here the global model is solved over M clients, the target client i being one of them, and
d, n_j -> infinity with d/n_j -> gamma_j and M FIXED. ``clients_limit`` (a heterogeneous
federation) and ``spec_clients_limit`` (M identical clients, behind ``riskcalc.limit(...,
clients=M)``) dispatch to the routes:

* ``finite_clients.identity``: FedAvg, FTFA, RTFA with the FedAvg global model (eq. 6), Sigma = I
  (free subordination at z = 0, closed forms; its docstring holds the derivation);
* ``finite_clients.sigma``: the same methods for a covariance spectrum shared by the clients
  (operator identities and chains of generalized resolvents, ``resolvent_chain``);
* ``finite_clients.own``: MAML-FL and pFedMe with their own global objectives (eqs. 12, 14),
  Sigma = I (the objectives and the ranges where the limits answer: ``own_objective``);
* ``finite_clients.shift`` (a sub-room): FedAvg, FTFA, RTFA under covariate shift, each client
  with its own covariance, all diagonal in one shared basis (``clients_limit(..., spectra=)``,
  ``shift.limits``; MAML-FL and pFedMe under covariate shift: the modules below, on the joint
  atoms); its targets' resolvent chains and the remembered weight-independent parts in
  ``shift.chains``, the (targets x clients) sums in ``shift.pairs``, the exact gradients in
  ``shift.gradient``, its refusals of limits that lose their digits across a wide eigenvalue
  span in ``shift.conditioning``.
* ``finite_clients.pfedme_sigma`` and ``finite_clients.maml_sigma``: pFedMe and MAML-FL for a
  spectrum shared by the clients (operator-valued subordination over the algebra of Sigma,
  ``operator_subordination``; MAML-FL's cubic filter through the companion pencils of
  ``block_pencil``, ``finite_clients.maml_pencils``).
"""

from __future__ import annotations

from dataclasses import replace

from riskcalc import solvers

import numpy as np

from riskcalc._validate import (client_count, nonnegative, parameter,
                                positive_int, real)
from riskcalc.errors import IllConditioned, SolverError
from riskcalc.linear.client_weights import check_weights, client_weight_vector
from riskcalc.linear.finite_clients.identity import (NEAR_IDENTITY, check_pooled, group_limits,
                                                     identity_scale)
from riskcalc.linear.finite_clients.result import ClientsLimit, notes
from riskcalc.linear.finite_clients.maml_sigma import (maml_shift_group_limits,
                                                       maml_sigma_group_limits)
from riskcalc.linear.finite_clients.shift.limits import check_work, shift_group_limits
from riskcalc.linear.finite_clients.shift.conditioning import (MIN_SPAN, check_by_scale,
                                                                 eigenvalue_span,
                                                                 scale_check_due)
from riskcalc.linear.finite_clients.pfedme_sigma import (own_limits,
                                                         pfedme_shift_group_limits,
                                                         pfedme_sigma_group_limits)
from riskcalc.linear.finite_clients.sigma import sigma_group_limits
from riskcalc.linear.engine.joint_spectrum import check_d_used, spectra_joint
from riskcalc.linear.engine.operator_subordination import check_size, joint_layout
from riskcalc.linear.methods import get_method
from riskcalc.linear.model import check_lam
from riskcalc.spectrum import as_spectrum

#: Methods with the FedAvg global model: heterogeneous federations (this module).
HETEROGENEOUS = ("fedavg", "ftfa", "rtfa")
#: Methods whose finite-M limit is implemented; MAML-FL and pFedMe with their own global
#: objectives in ``finite_clients.own`` (Sigma = I), ``finite_clients.pfedme_sigma`` and
#: ``finite_clients.maml_sigma`` (a spectrum shared by the clients).
METHODS = HETEROGENEOUS + ("maml_fl", "pfedme")
#: What the finite-M limits cover, for messages and notes.
COVERAGE = (f"{', '.join(METHODS)}, with any covariance spectrum shared by the clients or "
            "one per client (covariate shift, covariances diagonal in one shared basis)")


def clients_limit(method: str, *, gamma, sigma, r, lam=None, alpha=None,
                  weights="samples", spectrum=None, spectra=None,
                  d: int | None = None) -> ClientsLimit:
    """Finite-M limits of every client of a heterogeneous federation.

    The federation has M = len(gamma) clients with aspect ratios gamma_j, noise levels sigma_j
    and distances r_j = ||theta_j - theta_0||; each client in turn is the target of ``method``
    with the FedAvg global model solved over all M clients. Derivation: this module's docstring
    (Sigma = I) and ``finite_clients.sigma`` (a covariance spectrum shared by all clients).
    MAML-FL and pFedMe use their own global objectives (``finite_clients.own``, Sigma = I;
    with a spectrum: ``finite_clients.maml_sigma``, ``finite_clients.pfedme_sigma``) with one
    shared alpha or lam.

    Parameters
    ----------
    method : {"fedavg", "ftfa", "rtfa", "maml_fl", "pfedme"}
    gamma, sigma, r : float or sequence of float
        Per-client values; sequences must share one length M, scalars are repeated.
    lam : float or sequence of float, optional
        The penalty of ``rtfa`` (per client or shared) or ``pfedme`` (shared).
    alpha : float, optional
        MAML-FL's step size.
    weights : {"samples", "uniform"} or sequence of float
        p_j = n_j / N (the FedAvg objective; also None), 1/M, or M positive numbers (normalized
        to sum one): the weights of the clients' losses in the global objective (paper 003, eq. 6;
        every step of the derivation holds for any positive p_j).
    spectrum : Spectrum or str, optional
        The covariance spectrum H and signal distribution G shared by every client, or its
        SPEC (None: Sigma = I).
    spectra : str, array_like or sequence of them, optional
        Covariate shift (instead of ``spectrum``): each client's covariance, diagonal in one
        shared basis, as a SPEC or its ordered eigenvalues (``riskcalc.spectrum.ordered_steps``;
        one entry is shared by all); client j's risk is measured in its own covariance
        (``finite_clients.shift``; MAML-FL and pFedMe: ``finite_clients.maml_sigma``,
        ``finite_clients.pfedme_sigma``).
    d : int, optional
        The dimension (>= 1), for ``powerlaw:P`` in ``spectra`` or ``spectrum`` (explicit
        lengths must equal it).

    Returns
    -------
    ClientsLimit

    Raises
    ------
    ValueError
        For inconsistent lengths, out-of-range values, pooled N <= d (sum 1/gamma_j <= 1), or
        a malformed or inconsistent client spectrum.

    Examples
    --------
    >>> res = clients_limit("ftfa", gamma=[2.0, 2.0, 0.5], sigma=0.5, r=1.0)
    >>> res.risk.shape
    (3,)
    """
    info = get_method(method)
    method = info.name   # an alias (fedprox) is its canonical method (pfedme)
    if d is not None:       # was ignored unchecked without spectra (0.5, True, 1e20 taken)
        d = positive_int("d", d)
    check_d_used(d, spectrum, spectra)  # was taken and dropped without a powerlaw:P or file:
    spectrum = as_spectrum(spectrum, d=d)   # a str was an AttributeError deep inside
    joint = None
    if spectra is not None:
        # The lists' own lengths first: gamma of 3 beside r, sigma of 2 was reported as
        # "spectra lists 2 client spectra for 3 clients".
        client_count({k: real(k, v, ndim=1) for k, v in
                      {"gamma": gamma, "sigma": sigma, "r": r}.items()})
        spectrum, joint, specs = spectra_joint(spectra, spectrum, gamma, d)
    check_method(info.name)
    # None is the default, as in limit(clients=M) and steps_limit (was "weights must be a real
    # number, got None").
    weights = "samples" if weights is None else weights
    named = isinstance(weights, str)
    if named:
        weights = check_weights(weights)
    given = {"lam": lam, "alpha": alpha}
    for name, value in given.items():
        if (value is None) == (info.tuning == name):
            raise ValueError(f"method {info.name} {'needs' if value is None else 'does not take'}"
                             f" {name}")
    raw = {"gamma": gamma, "sigma": sigma, "r": r}
    if info.tuning:
        raw[info.tuning] = given[info.tuning]
    if joint is not None:
        raw["spectra"] = joint.types
    m = client_count(raw)
    vals = {k: np.broadcast_to(np.ravel(real(k, v, ndim=1)), (m,)) for k, v in raw.items()}
    gam = parameter("gamma", vals["gamma"])
    sig, rr = parameter("sigma", vals["sigma"]), parameter("r", vals["r"])
    if info.tuning == "lam":
        # limit()'s one range (lam = -1 was told "[0, inf)" here; fuzz41 left F7)
        check_lam(vals["lam"])
    lam_arr = nonnegative(info.tuning, vals[info.tuning]) if info.tuning else np.zeros(m)
    p = np.zeros(m) if named else client_weight_vector(weights, m)
    # Identical clients form one group (a homogeneous federation costs one client's work).
    types = np.zeros(m) if joint is None else vals.pop("spectra")
    rows, inverse, count = unique_rows(np.column_stack([gam, rr, sig, lam_arr, types, p]))
    if info.name not in HETEROGENEOUS and np.unique(rows[:, 3]).size > 1:
        raise ValueError(f"{info.name}'s global objective has one {info.tuning} for all "
                         "clients: give a single value")
    group_weights = weights if named else rows[:, 5]
    with solvers.record() as diagnostics:
        if joint is None:
            bias, var, said = _limits(info.name, *rows.T[:3], count, rows[:, 3],
                                      group_weights, spectrum)
        else:
            check_work(info.name, rows.shape[0], *joint.values.shape)
            bias, var = _shift_limits(info.name, *rows.T[:3], count, rows[:, 3], group_weights,
                                      joint, rows[:, 4].astype(int))
            said = ()
    bias, var = bias[inverse], var[inverse]
    risk = bias + var
    params = {k: v.tolist() for k, v in vals.items()}
    if joint is not None:
        params["spectra"] = [s if isinstance(s, str) else np.asarray(s, float).tolist()
                             for s in specs]
    elif spectrum is not None:      # was left out: the result did not say its covariance
        params["spectrum"] = spectrum.record()
    params.update(clients=m, weights=weights if named else p.tolist())
    return ClientsLimit(info.name, params, bias, var, risk, float(bias.mean()),
                        float(var.mean()), float(risk.mean()),
                        notes=notes(info.name, gam, lam_arr, var, per_client=True) + said,
                        diagnostics=diagnostics)


def unique_rows(table):
    """``np.unique(table, axis=0, return_inverse=True, return_counts=True)`` for a finite 2-D
    float table: the same rows in the same (lexicographic) order, the same inverse and counts,
    by one ``lexsort`` instead of a sort of the rows as structured records (3x faster: 0.8 ms
    instead of 2.3 ms at 1000 rows, which covariate shift's advice pays at each of its ~600
    limits)."""
    order = np.lexsort(table.T[::-1])
    ranked = table[order]
    new = np.empty(len(ranked), bool)
    new[:1] = True
    np.any(ranked[1:] != ranked[:-1], axis=1, out=new[1:])
    ids = np.cumsum(new) - 1
    inverse = np.empty(len(ranked), np.intp)
    inverse[order] = ids
    return ranked[new], inverse, np.bincount(ids)


def check_method(name: str) -> None:
    """ValueError unless ``name`` has a finite-M limit (every spectrum and covariate shift
    are covered for these methods)."""
    if name not in METHODS:
        raise ValueError(f"finite-clients limits are implemented for {', '.join(METHODS)}; "
                         f"got {name}")


def _isotropic(spectrum) -> bool:
    """Sigma = I with a uniform signal direction (the closed forms of this module)."""
    return spectrum is None or (spectrum.is_identity and spectrum.signal_is_uniform)


def _limits(method, gam, r, sigma, count, tuning, weights, spectrum):
    """Bias and variance per group (one shared tuning for MAML-FL and pFedMe) from the route
    of ``method`` and ``spectrum``, and the notes of the route taken
    (``pfedme_sigma.own_limits``). Far out of range the traces overflow; that ends in the
    explicit checks (SolverError), so numpy's warnings are silenced here, and a NaN that got
    through is refused as well."""
    if np.sum(count) == 1:
        # One client (gamma < 1, pooled N > d): every method's global model is its own least
        # squares, which the personalization keeps: bias 0, variance sigma^2 gamma / (1 -
        # gamma) under any covariance. pFedMe's and MAML-FL's routes lost it near gamma = 1
        # (pFedMe at gamma = 1 - 1e-9 under a spectrum: 49 times the risk, silently; Sigma = I
        # "give a larger lam" at lam = 0.3) (fuzz36 xroute F5).
        g = np.asarray(gam, float)
        check_pooled(g, np.asarray(count, float))
        return np.zeros(g.shape), np.asarray(sigma, float) ** 2 * g / (1.0 - g), ()
    said = ()
    # Sigma = c I is Sigma = I with alpha c (MAML-FL: phi_alpha(c s) = c phi_(alpha c)(s)) or
    # lam / c (pFedMe: phi_lam(c s) = c phi_(lam / c)(s)), the bias times c (paper 003's risk
    # is measured in Sigma): the spectrum routes refused scaled:3 where Sigma = I answers
    # (gamma [1e3, 0.5] at alpha 0.5, after 0.3-30 s) (fuzz40 maml F3).
    # A tuning beyond [1e-100, 1e100] gives the limit at that end to 100 digits (``check_lam``):
    # pFedMe at lam 1e-100 on scaled:1e100 said "resolvent chain: the fixed point is unstable"
    # (fuzz40 maml F4).
    c = None if method in HETEROGENEOUS else 1.0 if spectrum is None else identity_scale(spectrum)
    if c is not None and spectrum is not None and spectrum.identity_scale is None:
        said = (f"{method}: the spectrum's eigenvalues lie within a relative {NEAR_IDENTITY:g} "
                f"of each other, taken as Sigma = {c:.10g} I, their mean (a second-order "
                "change; finite_clients.identity.identity_scale)",)
    if c is not None:
        tun = float(tuning[0]) * (c if method == "maml_fl" else 1.0 / c)
        tun = min(max(tun, 1e-100), 1e100) if tun > 0 else tun
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        if c is not None:
            bias, var, route = own_limits(method, gam, r, sigma, count, tun, weights)
            said += route
            bias = bias * c
        elif method == "maml_fl":
            bias, var = maml_sigma_group_limits(gam, r, sigma, count, float(tuning[0]),
                                                weights, spectrum)
        elif method not in HETEROGENEOUS:
            check_pooled(np.asarray(gam, float), np.asarray(count, float))
            due = scale_check_due(gam, float(tuning[0]), spectrum.atoms, [spectrum] * len(gam),
                                  PFEDME_SPAN)
            if due:     # every solve's work bounded first (fuzz41 pfcost F2)
                check_size("pfedme", len(gam), spectrum.atoms.size,
                           solves=1 + len(PFEDME_FACTORS))
            bias, var = _pfedme_limits(gam, r, sigma, count, float(tuning[0]), weights,
                                       spectrum)
            # Across a span the variance carries rounding grown by it, moved so by a
            # power-of-two rescaling, silently: at r = 0 (the risk is the variance) 1.5e-6 off
            # at gamma 2 (3 clients) on two-point:1,1e7,0.5 (fuzz41 maml F1); 4.5e-5 at gamma
            # [3.8, 3.8, 1.0014] on a span of 1.9e4, 4e-7 at 3.1e3 (fuzz41 maml F4).

            def rescaled(c):
                # By 1/c where c would leave the eigenvalues' range [1e-100, 1e100]. Neither:
                # past a span of 3e199 the refusal named an eigenvalue not given
                # ('got 3.333e-101' for two-point:1e-100,1e100,0.5; fuzz41 pfcost F3).
                lo, hi = spectrum.atoms.min(), spectrum.atoms.max()
                c = c if lo * c >= 1e-100 and hi * c <= 1e100 else 1.0 / c
                if not (lo * c >= 1e-100 and hi * c <= 1e100):
                    raise IllConditioned(
                        f"pfedme under a spectrum: its eigenvalues span a factor "
                        f"{eigenvalue_span(spectrum.atoms):.3g}, too wide to check the limits' "
                        "digits by rescaling Sigma by 3 or 1/3 within [1e-100, 1e100]; narrow "
                        "the span")
                return _pfedme_limits(gam, np.asarray(r) / np.sqrt(c), sigma, count,
                                      float(tuning[0]) * c, weights,
                                      replace(spectrum, atoms=spectrum.atoms * c))

            if due:
                check_by_scale(bias, var, spectrum.atoms, rescaled, "pfedme under a spectrum",
                               PFEDME_SPAN, PFEDME_FACTORS)
        elif _isotropic(spectrum):
            bias, var = group_limits(method, gam, r, sigma, count, tuning, weights)
        else:
            bias, var = _own_least_squares(method, gam, sigma, tuning, lambda t: (
                sigma_group_limits(method, gam, r, sigma, count, t, weights, spectrum)))
    if np.isnan(bias).any() or np.isnan(var).any():
        raise SolverError("finite-clients limit: NaN in the traces (inputs beyond "
                          "floating-point range)")
    return bias, var, said


#: The eigenvalue span from which pFedMe's limits are checked by the scale identity (gaps of
#: 1e-9 at 100, 3e-8 at 1e3 on gamma [3.999, 1.003]; fuzz41 maml F4).
PFEDME_SPAN = 10.0
#: The rescalings of Sigma that check pFedMe's digits there (one missed 1.3e-7: fuzz42 maml F3).
PFEDME_FACTORS = (3.0, 1 / 3)


def _pfedme_limits(gam, r, sigma, count, lam, weights, spectrum):
    """``pfedme_sigma_group_limits``; where it fails (not ill-conditioned), on Sigma / k with
    lam / k clamped to [1e-100, 1e100], the bias times k (k a power of two near the mean
    eigenvalue, exact): lam 1e-100 on two-point:1e99,1e100,0.5 said "the fixed point is
    unstable" (fuzz40 maml F5). Only where the first fails: across wide spans the digits move
    with k (``check_by_scale`` refuses where they moved)."""
    try:
        return pfedme_sigma_group_limits(gam, r, sigma, count, lam, weights, spectrum)
    except SolverError as exc:
        if isinstance(exc, IllConditioned):
            raise
        k = 2.0 ** np.round(np.log2(float(spectrum.weights @ spectrum.atoms)))
        try:
            bias, var = pfedme_sigma_group_limits(
                gam, r, sigma, count, min(max(lam / k, 1e-100), 1e100), weights,
                replace(spectrum, atoms=spectrum.atoms / k))
        except SolverError:
            raise exc from None
        return bias * k, var


def _shift_limits(method, gam, r, sigma, count, tuning, weights, joint, typ):
    """``_limits`` under covariate shift (``finite_clients.shift``; MAML-FL and pFedMe:
    ``finite_clients.maml_sigma``, ``finite_clients.pfedme_sigma``)."""
    def run(jt, rr, tun):
        if method in HETEROGENEOUS:
            return _own_least_squares(method, gam, sigma, tun, lambda t: (
                shift_group_limits(method, gam, rr, sigma, count, t, weights, jt, typ)))
        own = maml_shift_group_limits if method == "maml_fl" else pfedme_shift_group_limits
        return own(gam, rr, sigma, count, float(tun[0]), weights, jt, typ)

    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        due = method != "pfedme" or scale_check_due(gam, float(tuning[0]), joint.values,
                                                    joint_layout(joint, typ)[4], PFEDME_SPAN, typ)
        if due and method == "pfedme":      # every solve's work bounded first (fuzz41 pfcost F2)
            check_size("pfedme", len(gam), np.shape(joint.values)[-1],
                       solves=1 + len(PFEDME_FACTORS))
        bias, var = run(joint, r, tuning)
        # alpha multiplies the eigenvalues (phi(s) = s (1 - alpha s)^2), lam is one of them.
        # pFedMe from a span of 10, as without shift: gamma [3.999, 1.003], lam 2.66e-6 on
        # two-point:1,1e4,0.7287 and 1,1e4,0.6 moved 2.6e-6 (fuzz41 maml F5).
        if due:
            check_by_scale(bias, var, joint.values, lambda c: run(
                replace(joint, values=joint.values * c), np.asarray(r) / np.sqrt(c),
                np.asarray(tuning, float) * (1.0 / c if method == "maml_fl" else c)),
                min_span=PFEDME_SPAN if method == "pfedme" else MIN_SPAN,
                factors=PFEDME_FACTORS if method == "pfedme" else (3.0,))
    if np.isnan(bias).any() or np.isnan(var).any():
        raise SolverError("finite-clients limit: NaN in the traces (inputs beyond "
                          "floating-point range)")
    return bias, var


def _own_least_squares(method, gam, sigma, tuning, limits):
    """``limits(tuning)`` with RTFA's clients at lam = 0 and gamma <= 1 answered in closed
    form: the ridge toward the global model at lam = 0 is the client's own least squares,
    whatever the global model, so bias 0 and variance sigma^2 gamma / (1 - gamma) under any
    covariance (E tr(Sigma (X^T X)^-1) = gamma / (1 - gamma), the M -> inf route's value;
    infinite at gamma = 1 for sigma > 0, as FTFA's). The chains under a spectrum refused them
    ("a projection block (eta = 0) needs gamma > 1", at gamma = 1 too, where Sigma = I
    answered; fuzz36 xroute F3): they run at lam = 1 for those groups, whose values are then
    replaced."""
    g, t = np.asarray(gam, float), np.asarray(tuning, float)
    own = (t == 0) & (g <= 1) if method == "rtfa" else np.zeros(g.shape, bool)
    if not own.any():
        return limits(tuning)
    bias, var = limits(np.where(own, 1.0, t))
    sig2 = np.asarray(sigma, float) ** 2
    with np.errstate(divide="ignore"):
        own_var = np.where(sig2 == 0, 0.0, sig2 * g / np.where(own, 1.0 - g, 1.0))
    return np.where(own, 0.0, bias), np.where(own, own_var, var)
