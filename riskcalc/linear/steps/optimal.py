"""The number of personalization gradient steps minimizing the limiting risk (paper 003,
``003_4b976ddf5225c17e.txt``, Sec. 7, Algs. 5-6): the exact curve of ``steps.limits`` scanned
at every integer k, its work estimated and refused before solving."""

from __future__ import annotations

import numpy as np

from riskcalc._validate import max_time, positive, positive_int
from riskcalc.linear import finite_clients
from riskcalc.linear.limits import LimitResult
from riskcalc.linear.engine import weighted_mp
from riskcalc.linear.model import ClientSpec
from riskcalc.linear.steps import edge as steps_edge
from riskcalc.linear.steps import finite_clients as finite_clients_steps
from riskcalc.linear.steps import pencils
from riskcalc.linear.steps.overflow import overflowed
from riskcalc.linear.steps.limits import spec_steps_limit

#: optimal_steps: the work refused before solving, its per-point estimates and chunk length.
MAX_SECONDS = 600.0
SECONDS_PER_POINT = 3e-5
SECONDS_PER_POINT_GENERAL = 1e-2
GENERAL_GROWTH, GENERAL_ATOMS = 0.08, 150
CHUNK = 4096


def optimal_steps(method: str, *, gamma, sigma, step_size, r=None, rho=None, lam=None,
                  spectrum=None, clients=None, weights=None,
                  max_steps: int = 200, max_seconds=None) -> LimitResult:
    """The number of personalization gradient steps k in 0..``max_steps`` that minimizes the
    limiting risk, by evaluating the exact curve at every integer k (the risk is not
    monotone in k: early stopping regularizes; derived here from ``steps_limit``).

    Parameters
    ----------
    method, gamma, sigma, step_size, r, rho, lam, spectrum, clients, weights
        As for ``steps_limit``, scalars (one parameter point).
    max_steps : int
        The largest k tried (>= 0).
    max_seconds : float, optional
        The most seconds of estimated work (as ``rounds_limit``'s: the curve is estimated
        before it solves and refused beyond, naming the max_steps that would fit); default
        ``MAX_SECONDS`` (600 s).

    Returns
    -------
    LimitResult
        The limit at the best k (``params["steps"]``; the first minimizer on ties); a note
        when the risk still decreases at ``max_steps``.

    Raises
    ------
    ValueError
        As ``steps_limit``, for array parameters, or when the curve up to ``max_steps`` is
        estimated to take longer than ``max_seconds`` (the message says which max_steps fits).

    Examples
    --------
    >>> res = optimal_steps("ftfa", gamma=2.0, r=1.0, sigma=1.0, step_size=0.2, max_steps=50)
    >>> res.params["steps"] > 0
    True
    """
    max_steps = positive_int("max_steps", max_steps, minimum=0)
    limit = MAX_SECONDS if max_seconds is None else max_time("max_seconds", max_seconds)
    spec = ClientSpec(method, gamma=gamma, sigma=sigma, r=r, rho=rho, lam=lam,
                      spectrum=spectrum)
    # clients too: an array reached the steps grid's broadcast ("steps (201,), clients (2,)
    # do not broadcast"; fuzz40 steps F4).
    for name, value in {**spec.params(), "step_size": step_size, "clients": clients}.items():
        if name != "spectrum" and np.ndim(value):
            raise ValueError(f"optimal_steps takes one parameter point; {name} is an array")
    # In chunks: the quadrature holds (steps x nodes) arrays. The finite-M pencil solves every
    # k up to the largest at once, so it takes the whole curve in one chunk.
    pencil = clients is not None and spec.method in finite_clients_steps.METHODS
    sp, eta = spec.spectrum, float(positive("step_size", step_size, ndim=0))
    near = clients is None and abs(np.log(float(spec.gamma))) < finite_clients_steps.NEAR_ONE
    # Python floats: step_size 1e308 overflows to inf without numpy's RuntimeWarning (which
    # optimal_steps printed where steps_limit answers quietly; fuzz42 steps F8).
    root = float(np.sqrt(float(spec.gamma)))
    top_id = eta * (float(spec.penalty) + (1.0 + root) ** 2)
    edge = clients is None and (sp is None or sp.is_identity) and steps_edge.top_power(
        top_id, max_steps) > steps_edge.PEAK_LOG
    # The peak's nodes as ``steps.limits.filter_integrals``' (past the edge abs(1 - top) times
    # wider; none where one step overflows): step_size 1e308 was refused at "about inf min",
    # 1e300 at 1.99e+144 min, for values steps_limit gives at once (fuzz42 steps F8).
    edge_step = eta * root / max(1.0, abs(1.0 - top_id)) if edge and top_id < np.inf else 0.0
    converges = np.all(finite_clients_steps.stability(spec.gamma, spec.penalty, eta, sp)[0])
    # The contour's step-size term for a general spectrum: eta (lam + x_hi) while stable.
    general = clients is None and sp is not None and not sp.is_identity
    top = eta * (float(spec.penalty) + float(weighted_mp.support_edges(float(spec.gamma),
                                                                       sp)[1])) if general else 0.0
    work = max_steps + 1
    if pencil and not converges and (sp is None or sp.is_identity and sp.signal_is_uniform):
        # The pencils stop at the last k not proven past the floats (1000 divergent steps at
        # gamma 2 with 3 clients, inf after ~460, were refused beyond 497; steps2 F7).
        kept = np.flatnonzero(~overflowed(
            spec.method, [spec.gamma], [spec.signal], [spec.sigma], [clients], [spec.penalty],
            finite_clients.check_weights("samples" if weights is None else weights),
            np.arange(work), eta))
        work = int(kept[-1]) + 1 if kept.size else 1
    _check_work(work, sp, clients, limit, pencil and (
        (sp is not None and not sp.is_identity) or not converges),
        eta if near else 0.0, edge_step, top if top < 2.0 else 0.0)
    chunk = max_steps + 1 if pencil else CHUNK
    risks, curve = [], None
    for start in range(0, max_steps + 1, chunk):
        ks = np.arange(start, min(start + chunk, max_steps + 1))
        part = spec_steps_limit(spec, ks, step_size, clients=clients, weights=weights)
        risks.append(np.asarray(part.risk))
        if curve is None or np.min(part.risk) < np.min(curve.risk):
            curve, offset = part, start
    risk = np.concatenate(risks)
    best = int(np.argmin(risk))
    notes = curve.notes
    if best == max_steps and max_steps > 0:
        notes += (f"the risk still decreases at max_steps = {max_steps}: raise max_steps (the "
                  "converged limit is riskcalc.limit)",)
    params = {**curve.params, "steps": best, "step_size": float(step_size),
              "max_steps": max_steps}
    i = best - offset
    return LimitResult(spec.method, params, float(curve.bias[i]),
                       float(curve.variance[i]), float(curve.risk[i]), route=curve.route,
                       notes=notes, converges=bool(np.all(curve.converges)))


def _check_work(points: int, spectrum, clients, limit: float, pencil: bool,
                near_step: float = 0.0, edge_step: float = 0.0, top_step: float = 0.0) -> None:
    """Refuse, before solving, a steps curve estimated to take longer than ``limit`` seconds
    (per point: ~3e-5 s for Sigma = I, measured 2.1e-5 quiet, 2.4e-5 under load 1; ~1e-2 s
    with a spectrum, whose contour is solved point by point; the finite-M ``pencil`` grows
    like k^3, ``pencils.seconds``: it was exempt, and max_seconds = 1 ran 250 steps for 5 s;
    fuzz37 unbound F6). ``near_step``: the step size at Sigma = I near gamma = 1, where the
    rule's nodes grow like 12 sqrt(step_size k): times max(1, 0.375 sqrt(step_size k)),
    measured 12x at step_size k = 1e3 (gamma 1 up to 1e5 steps of 0.1 took 104 s, estimated
    3 s; fuzz38 steps F15). ``edge_step``: step_size sqrt(gamma) at the stability edge
    (Sigma = I), where the first rule resolves the top's peak, ~pi sqrt(edge_step k) nodes
    for every point of a chunk: times max(1, 0.25 sqrt(edge_step k)), measured 14x at k = 5000
    and 22x at 20000 for 0.485 (20000 steps of 2 / x_hi at gamma 0.5 took 34-42 s, estimated
    0.6 s; fuzz39 steps F6). ``top_step``: step_size (lam + x_hi) with a general spectrum
    while stable, where the contour's nodes grow like sqrt(top_step k): times
    max(1, GENERAL_GROWTH sqrt(top_step k)) (two-point:1e-8,1e8,0.5 at gamma 0.5, step_size
    1e-9: 1e-3 s per point at k = 1, 1e-2 at 2000, 0.14 at 1e5; fuzz41 measure F2), and the
    per point times max(1, atoms / GENERAL_ATOMS) (powerlaw:2,3000: 0.13-0.42 s per point)."""
    if pencil:
        atoms = 1 if spectrum is None else spectrum.atoms.size
        seconds = pencils.seconds(points - 1, atoms)
        fits = int(((limit / pencils.seconds(0, atoms)) ** (1 / 3) * 4 - 4) / 2)
    else:
        general = spectrum is not None and not spectrum.is_identity and clients is None
        per_point = SECONDS_PER_POINT_GENERAL * max(1.0, spectrum.atoms.size / GENERAL_ATOMS) \
            if general else SECONDS_PER_POINT

        def cost(m):
            return (m + 1) * per_point * max(1.0, 0.375 * np.sqrt(near_step * m),
                                             0.25 * np.sqrt(edge_step * m),
                                             GENERAL_GROWTH * np.sqrt(top_step * m))

        seconds = cost(points - 1)
        lo, hi = -1, points - 1           # the largest max_steps whose cost fits the limit
        while hi - lo > 1:
            lo, hi = ((lo + hi) // 2, hi) if cost((lo + hi) // 2) <= limit else (lo, (lo + hi) // 2)
        fits = lo
    if seconds > limit:
        raise ValueError(f"max_steps = {points - 1} would take about {seconds / 60:.3g} min "
                         f"(estimated); at most {limit / 60:.3g} min is allowed "
                         f"(max_seconds): give " + (f"max_steps <= {fits}" if fits >= 0 else
                                                    "a larger max_seconds"))
