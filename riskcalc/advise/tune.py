"""Tuning on the exact finite-M limits: per-client penalties, a shared parameter, steps.

Every search here minimizes an exact limit of ``riskcalc.clients_limit`` (or the oracle limits
of ``riskcalc.limit`` / ``riskcalc.steps_limit``): a log-spaced grid brackets the minimum, then
a bounded scalar minimization refines it inside the bracket (for the per-client penalties of
RTFA a golden-section search per client, run side by side, since client j's risk depends on its
own lam_j only: the FedAvg global model does not involve lam; for a shared alpha or lam Brent's
method). The federation's covariance, one shared spectrum or one per client (covariate shift),
reaches every limit through ``Federation.limit_kwargs``; the steps have a finite-M limit for a
shared spectrum only.
"""

from __future__ import annotations

import numpy as np

from riskcalc.errors import SolverError
from riskcalc.linear.finite_clients import clients_limit
from riskcalc.linear.engine.joint_spectrum import joint_spectrum
from riskcalc.linear.finite_clients.identity import rtfa_risks
from riskcalc.linear.finite_clients.shift.limits import shift_group_limits
from riskcalc.linear.model import LAM_RANGE

#: The bracketing pass: GRID_POINTS log-spaced penalties per client over GRID_SPAN times the
#: oracle lam* = sigma^2 gamma / r^2 joined with LAM_SPAN.
GRID_POINTS = 81
GRID_SPAN = (1e-5, 1e5)
LAM_SPAN = (1e-8, 1e8)
#: Relative width of the golden-section bracket at which the searches stop (in log lam: the
#: risk is smooth at its minimum, so its error is of order this squared).
XTOL = 1e-9
#: Range of the grid's centre sigma^2 gamma / r^2 (see ``rtfa_lams``).
SCALE_RANGE = (1e-10, 1e6)
#: RTFA's risk within this relative distance above FedAvg's at a penalty beyond ``LAM_SPAN``:
#: the optimum is at lam = infinity (``shown_lams``; the limits are solved to ~1e-12).
INF_RTOL = 1e-9
#: ``shared_tuning``'s stop, in log alpha or log lam (``brent``'s xtol). Measured (the 100
#: clients of ``benchmarks/bench_advise_decision.py``'s seed [32, 7], pFedMe and MAML-FL, both
#: weightings, against a search to 1e-8): 7-12 limits and within 4e-14 of the reference's
#: mean risk, where golden sections to 1e-3 (until session 39) took 16-19 and ended up to
#: 2.1e-9 above it; Brent to 1e-3 or 1e-4 took 7-10 and ended within 2.3e-11.
SHARED_XTOL = 1e-5
#: ``shared_tuning``: grid steps added beyond an end of the grid where its best point lies,
#: one at a time while the risk still falls there (0.75 decades each on advise's grids)...
SHARED_REACH = 16
#: ... while the risk falls by more than this relative amount (rounding on a plateau).
SHARED_FLAT = 1e-12
_INV_PHI = (np.sqrt(5.0) - 1.0) / 2.0
_GOLDEN_STEP = 1.0 - _INV_PHI
#: Under covariate shift, most clients x grid rows for ``rtfa_lams`` to evaluate its rows of
#: penalties at once (up to 6 clients): it saves the per-call work of small federations (4
#: clients: 0.40 -> 0.15 s per search), but not of large ones (shift1000 of
#: benchmarks/bench_advise.py with fedavg,ftfa,rtfa: 1 s more, in rows of 1 to 81).
SHIFT_ROW_TARGETS = 512


def _entrywise(rows_risks, row, safe):
    """RTFA's risks at the penalties ``row`` (one per client), a SolverError confined to the
    clients it comes from: client j's risk depends on its own lam_j only (the FedAvg global
    model does not involve lam), so a row that fails is split in halves, each solved with the
    other clients at the penalties ``safe``, down to the failing clients (infinite): about
    2 log2(M) solves per failing client instead of M. All infinite if ``safe`` fails too."""
    out = np.full(row.size, np.inf)

    def solve(idx):
        trial = safe.copy()
        trial[idx] = row[idx]
        try:
            out[idx] = rows_risks(trial[None])[0, idx]
            return True
        except SolverError:
            if idx.size > 1:
                solve(idx[:idx.size // 2])
                solve(idx[idx.size // 2:])
            return False

    everyone = np.arange(row.size)
    if not solve(everyone[:0]) and row.size:
        return out
    solve(everyone)
    return out


def golden(fun, lo, hi, xtol: float = XTOL):
    """Minimize ``fun`` (vectorized: arrays of points -> arrays of values, elementwise) over
    [lo, hi] elementwise by golden-section search (a unimodal function in the bracket);
    returns (argmin, min)."""
    lo, hi = np.array(lo, float), np.array(hi, float)
    a, b = hi - _INV_PHI * (hi - lo), lo + _INV_PHI * (hi - lo)
    fa, fb = fun(a), fun(b)
    while np.any(hi - lo > xtol * np.maximum(1.0, np.abs(lo))):
        left = fa <= fb
        hi = np.where(left, b, hi)
        lo = np.where(left, lo, a)
        b_new = np.where(left, a, lo + _INV_PHI * (hi - lo))
        a_new = np.where(left, hi - _INV_PHI * (hi - lo), b)
        f_new = fun(np.where(left, a_new, b_new))
        fa, fb = np.where(left, f_new, fb), np.where(left, fa, f_new)
        a, b = a_new, b_new
    x = np.where(fa <= fb, a, b)
    return x, np.minimum(fa, fb)


def brent(fun, lo: float, hi: float, x: float, fx: float, xtol: float):
    """Minimize the scalar ``fun`` over [lo, hi] by Brent's method (golden-section steps,
    parabolic ones where the last three points allow: R. P. Brent, Algorithms for Minimization
    without Derivatives, 1973, ch. 5; scipy's ``fminbound``) from the point x inside, fx =
    fun(x) known and no larger than at lo and hi; ends where the bracket around the best point
    is within ``xtol`` (absolute, plus 1.5e-8 relative) of it. Infinite values (a limit not
    computed) take golden-section steps. Returns (argmin, min), a point it evaluated."""
    tiny = 1.5e-8
    # Python floats: NaN from infinite values arises silently (numpy scalars printed
    # RuntimeWarnings, 'invalid value encountered in scalar subtract', on advise's stderr).
    lo, hi, x, fx = float(lo), float(hi), float(x), float(fx)
    v = w = x
    fv = fw = fx
    step = prev = 0.0
    while True:
        mid, tol = 0.5 * (lo + hi), tiny * abs(x) + xtol / 3.0
        if abs(x - mid) <= 2.0 * tol - 0.5 * (hi - lo):
            return x, fx
        parabolic = False
        if abs(prev) > tol:
            r, q = (x - w) * (fx - fv), (x - v) * (fx - fw)
            p, q = (x - v) * q - (x - w) * r, 2.0 * (q - r)
            p, q = (-p, q) if q > 0.0 else (p, -q)
            prev, last = step, prev
            # The parabola's minimum, if it lies inside and moves less than half the step
            # before last (NaN from infinite values fails every test).
            if abs(p) < abs(0.5 * q * last) and q * (lo - x) < p < q * (hi - x):
                step, parabolic = p / q, True
                if x + step - lo < 2.0 * tol or hi - x - step < 2.0 * tol:
                    step = tol if mid >= x else -tol
        if not parabolic:
            prev = (lo if x >= mid else hi) - x
            step = _GOLDEN_STEP * prev
        u = x + (step if abs(step) >= tol else (tol if step >= 0 else -tol))
        fu = float(fun(u))
        if fu <= fx:
            lo, hi = (x, hi) if u >= x else (lo, x)
            v, fv, w, fw, x, fx = w, fw, x, fx, u, fu
        else:
            lo, hi = (lo, u) if u >= x else (u, hi)
            if fu <= fw or w == x:
                v, fv, w, fw = w, fw, u, fu
            elif fu <= fv or v in (x, w):
                v, fv = u, fu


def rtfa_lams(fed, weights):
    """Each client's RTFA penalty minimizing its own finite-M risk (module docstring).

    Parameters
    ----------
    fed : riskcalc.advise.Federation
    weights : str or array_like
        Client weights of the FedAvg global model (as in ``clients_limit``).

    Returns
    -------
    lam, risk : ndarray (M,)
        lam_j in {0} U [1e-100, 1e100] (0 is FTFA, kept when interpolating is best).
    """
    def risks(lam):
        return clients_limit("rtfa", lam=lam, weights=weights, **fed.limit_kwargs()).risk

    p = weights if isinstance(weights, str) else np.asarray(weights) / np.sum(weights)
    rows_at_once = fed.shift and fed.m * GRID_POINTS <= SHIFT_ROW_TARGETS
    if rows_at_once:
        joint = joint_spectrum(list(fed.spectra), fed.d)

    def shift_rows(lams):
        with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
            bias, var = shift_group_limits("rtfa", fed.gamma, fed.r, fed.sigma, np.ones(fed.m),
                                           lams, p, joint, joint.types)
        if np.isnan(bias).any() or np.isnan(var).any():
            raise SolverError("finite-clients limit: NaN in the traces")
        return bias + var

    def rows_risks(lams):
        # Sigma = I: every grid row in one call (the global model does not involve lam).
        # Covariate shift, a small federation (``SHIFT_ROW_TARGETS``): the rows as repeated
        # targets of one evaluation, each client its own group (``clients_limit``'s limits,
        # to rounding).
        if rows_at_once:
            return shift_rows(lams)
        if fed.shift or fed.spectrum is not None:
            return np.array([risks(row) for row in lams])
        # As clients_limit's and shift_rows' (gamma [1e-100, 1e100]: five RuntimeWarnings
        # printed before its refusal, 'the subordination derivative overflowed').
        with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
            return rtfa_risks(fed.gamma, fed.r, fed.sigma, p, lams)

    def grid_risks(lams):
        try:
            return rows_risks(lams)
        except SolverError:
            return np.array([_entrywise(rows_risks, row, scale) for row in lams])

    with np.errstate(divide="ignore", invalid="ignore"):
        scale = fed.sigma ** 2 * fed.gamma / fed.r ** 2
    # The oracle lam* (paper 003, Thm 2) centres the grid; r_j = 0 (lam* infinite: FedAvg)
    # or sigma_j = 0 (lam* = 0: FTFA) are capped where RTFA equals those to ~1e-10.
    scale = np.clip(np.where(np.isnan(scale), 1.0, scale), SCALE_RANGE[0], SCALE_RANGE[1])
    # At finite M the optimum can sit far from the oracle one (sigma_j = 0: the centre's noise
    # still calls for a penalty), so the grid also covers the fixed range ``LAM_SPAN``.
    lo = np.log(np.minimum(scale * GRID_SPAN[0], LAM_SPAN[0]))
    hi = np.log(np.maximum(scale * GRID_SPAN[1], LAM_SPAN[1]))
    logs = lo + (hi - lo) * np.linspace(0.0, 1.0, GRID_POINTS)[:, None]
    values = grid_risks(np.exp(logs))
    i = np.argmin(values, axis=0)
    cols = np.arange(fed.m)
    lo = logs[np.maximum(i - 1, 0), cols]
    # A minimum at the grid's top is approached as lam -> infinity (RTFA tends to FedAvg):
    # the search goes on to the top of LAM_RANGE (it ended up to 7e-8 above the infimum at the
    # grid's top, lam = 1e8, in a dense-grid check of 270 random federations).
    hi = np.where(i == GRID_POINTS - 1, np.log(LAM_RANGE[1]),
                  logs[np.minimum(i + 1, GRID_POINTS - 1), cols])
    x, best = golden(lambda t: grid_risks(np.exp(t)[None])[0], lo, hi)
    lam = np.exp(x)
    # lam = 0 (interpolation: RTFA at lam = 0 is FTFA) is the one value the log grid cannot
    # reach.
    ftfa = clients_limit("ftfa", weights=weights, **fed.limit_kwargs()).risk
    take = ftfa < best
    return np.where(take, 0.0, lam), np.where(take, ftfa, best)


def shown_lams(fed, weights, lam, risk):
    """RTFA's penalties ``lam`` from ``rtfa_lams`` as reported, and a note: inf where the
    minimum is approached as lam -> infinity (RTFA tends to FedAvg), i.e. the search ended
    beyond ``LAM_SPAN`` (on the flat asymptote, anywhere up to ``LAM_RANGE``'s top: lam =
    1.043e+43 was printed) at a risk no lower than FedAvg's with the same weights (within
    ``INF_RTOL`` relative; a finite optimum beyond 1e8 that beats FedAvg stays as found).
    The risks are the search's (FedAvg's to rounding there)."""
    far = lam > LAM_SPAN[1]
    if not far.any():
        return lam, ()
    fedavg = clients_limit("fedavg", weights=weights, **fed.limit_kwargs()).risk
    inf = far & (risk >= fedavg * (1.0 - INF_RTOL))
    if not inf.any():
        return lam, ()
    idx = np.flatnonzero(inf)
    listed = ", ".join(map(str, idx[:10])) + (f" and {idx.size - 10} more" if idx.size > 10
                                               else "")
    return np.where(inf, np.inf, lam), (f"lam -> inf (FedAvg-like: no finite penalty beats "
                                        f"the global model) for client(s) {listed}",)


def shared_tuning(method: str, fed, weights, grid):
    """The one alpha (maml_fl) or lam (pfedme) minimizing the federation's mean finite-M
    risk: the best point of ``grid`` then Brent's search (``brent``) between its neighbours.
    Points where the limit cannot be computed (SolverError) count as infinite risk. Where the
    best point is an end of the grid, the grid grows by its step beyond it while the risk
    falls there (up to ``SHARED_REACH`` steps; lam within ``LAM_RANGE``, alpha not above
    the grid's top, the stability edge), so an optimum outside the grid is not clamped to its
    end (pFedMe at uniform weights and r_j = 1e-4 was tuned to the grid's lam = 1e3, mean
    risk 0.58743, where lam = 10 gives 0.58200).

    Returns
    -------
    value : float
    result : ClientsLimit
    """
    name = "alpha" if method == "maml_fl" else "lam"
    # The search ends on a point it has evaluated: kept, not solved again.
    seen = {}

    def result(v):
        v = float(v)
        if v not in seen:
            seen[v] = clients_limit(method, weights=weights, **fed.limit_kwargs(), **{name: v})
        return seen[v]

    failed = {}     # value -> why its limit could not be computed

    def mean(t):
        out = np.empty(np.size(t))
        for k, v in enumerate(np.atleast_1d(np.exp(t))):
            try:
                res = result(v)
                out[k] = res.mean_risk
                if not np.isfinite(out[k]):     # an infinite risk: its notes say why
                    failed.setdefault(float(v), "; ".join(res.notes) or "an infinite risk")
            except SolverError as exc:
                failed.setdefault(float(v), str(exc))
                out[k] = np.inf
        return out.reshape(np.shape(t))

    logs = np.log(grid)
    values = mean(logs)
    if not np.isfinite(values).any():
        # was one generic sentence ("no finite-M limit could be computed on the tuning grid")
        why = sorted(set(failed.values()))
        raise SolverError(f"{method}: no finite-M limit at any of the {grid.size} values of "
                          f"{name} on the tuning grid ({grid[0]:.3g} to {grid[-1]:.3g}): "
                          + "; ".join(why[:2]) + (f" (and {len(why) - 2} other reasons)"
                                                  if len(why) > 2 else ""))
    step = logs[1] - logs[0]
    reach = (np.log(LAM_RANGE[0]), np.log(LAM_RANGE[1]) if method == "pfedme" else logs[-1])
    for _ in range(SHARED_REACH):
        i = int(np.argmin(values))
        if 0 < i < logs.size - 1:
            break
        nxt = logs[0] - step if i == 0 else logs[-1] + step
        if not reach[0] <= nxt <= reach[1]:
            break
        v = mean(np.array([nxt]))
        best = values[i]
        logs, values = ((np.r_[nxt, logs], np.r_[v, values]) if i == 0 else
                        (np.r_[logs, nxt], np.r_[values, v]))
        if not v[0] < best * (1 - SHARED_FLAT):     # flat there (r_j = 0: lam -> inf)
            break
    i = int(np.argmin(values))
    x, _ = brent(mean, logs[max(i - 1, 0)], logs[min(i + 1, logs.size - 1)], logs[i],
                 values[i], SHARED_XTOL)
    value = float(np.exp(x))
    return value, result(value)


def optimal_steps(fed, weights: str, max_steps: int = 100):
    """Per client, the number k in 0..``max_steps`` of full-batch fine-tuning steps from the
    finite-M FedAvg model (FTFA's personalization stopped early) minimizing that client's EXACT
    finite-M risk (``riskcalc.linear.steps.finite_clients``: paper 003 Sec. 7, Algs. 5-6, from
    eq. 6's global model over the federation; for Sigma = I by quadrature,
    ``identity_steps_group_limits``). One step size for the federation, eta = 1 / the
    largest top edge of the clients' limiting spectra of S_j (stable for every client); every
    k <= ``max_steps`` comes from one pencil.

    Returns
    -------
    steps : ndarray of int (M,)
    step_size : float
    risk : ndarray (M,)
    at_max : ndarray of bool (M,)
        Whether the risk still decreases at ``max_steps`` for that client.

    Raises
    ------
    ValueError
        Under covariate shift (``fed.spectra``): ``steps_limit`` takes one shared spectrum.
    """
    from riskcalc.linear.engine import weighted_mp
    from riskcalc.linear.steps.finite_clients import (identity_steps_group_limits,
                                                      steps_group_limits)

    if fed.shift:
        raise ValueError("fine-tuning steps have no finite-M limit under covariate shift "
                         "(per-client spectra)")
    if fed.spectrum is None:
        # Sigma = I: the Marchenko-Pastur top edge (1 + sqrt(gamma))^2, for gamma > 1 too.
        eta = 1.0 / float(np.max((1.0 + np.sqrt(fed.gamma)) ** 2))
    else:
        eta = 1.0 / max(weighted_mp.support_edges(float(g), fed.spectrum)[1]
                        for g in np.unique(fed.gamma))
    m = fed.m
    if fed.spectrum is None:
        # Sigma = I: quadrature of the polynomial filters, linear in the steps.
        bias, var = identity_steps_group_limits("ftfa", fed.gamma, fed.r, fed.sigma, np.ones(m),
                                                np.zeros(m), weights, max_steps, eta)
    else:
        bias, var = steps_group_limits("ftfa", fed.gamma, fed.r, fed.sigma, np.ones(m),
                                       np.zeros(m), weights, fed.spectrum, max_steps, eta)
    risk = bias + var
    k = np.argmin(risk, axis=1)
    return k, eta, risk[np.arange(m), k], k == max_steps
