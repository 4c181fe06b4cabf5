"""The edges of the spectrum of the round map D of ``sigma_pencil``'s pencil (or of another pencil
with its ``solve``, ``column0`` and ``bisect``) and D's atom at 0 (derived here).

The pencil, its fixed point and its solves are ``sigma_pencil``'s (steps 1-3 of the derivation
there: D = sum_j p_j q(S_j), q(S_j) = I - A_j^K, tau(Sigma (z - D)^-1) from
``SigmaPencil.solve``); the steps below continue that numbering.

4. Edges. The nonzero spectrum of D lies in (0, sum_j p_j max q] (q >= 0 on each client's
   spectrum when its local steps are stable). A point x lies in the continuous spectrum when
   Im tau(Sigma (x + i y - D)^-1), followed from y large down to y = 1e-12 and 1e-15 times
   that bound, does not shrink with y (off the spectrum, and at the atom at 0, it is
   proportional to y); the outermost such points of a grid (classified from both ends
   inwards until the first inside point from each: the points between are not needed) are
   refined by bisection with ``SigmaPencil.bisect`` points per bracket (``edges``; measured
   against the
   closed forms of ``sigma.fedavg.one_step`` and ``subordination``: 1e-11 relative; 5e-10 and, with 2
   points, 3.5e-9 at the top edge of a FedAvg K = 7, eta at 0.95 of the stability edge, whose
   density vanishes faster there than the test at y = 1e-12 resolves). The atom of D at 0 is
   (1 - sum_j min(1, 1 / gamma_j))_+ (the null space of D is the intersection of those of the
   S_j).
5. Edges as folds (``edges(fold=True)``, FedAvg's routes). On the real axis outside D's
   spectrum the fixed point is real and m(x) = tau(Sigma (x - D)^-1) decreases (m' = -tau(Sigma
   (x - D)^-2) < 0); at a square-root edge e, m - m_e ~ -c sqrt(x - e), so the real branch
   (tau(x), x) is a smooth curve with a fold there: x as a function of m is analytic with
   x'(m_e) = 0. ``_fold`` continues the real branch from the scan's outside points nearest
   the edge (one Newton path per point, on the real axis: no density test; the scan itself
   stays the density test's: a walk on the real branch from the grid's ends, tried, passed
   through the spectrum on an unphysical real branch where D has an atom at 0, Sigma = I,
   gamma = (3, 4): an edge of 0.0316 for 0.0170), fits x as a polynomial
   in m through the last three or four points and takes its critical point ahead as the next
   prediction (its error shrinks like gap^1.5, gap the last point's distance to the edge:
   measured), until two predictions agree within delta / 10 or the last point lies within 100
   delta of the prediction (no nearer point is reachable; before, the step then went to the
   bracket's midpoint, past the edge, and one ulp off tests/test_rounds_sigma_alg1_fold.py's
   chain case Newton's method took it on an unphysical real branch: no fold confirmed); a
   point whose m lies past the predicted fold's m (with a margin) is refused as past the edge.
   The prediction is then CONFIRMED by the density test of step 4 at e - delta and e + delta
   (delta = 4e-12 e, the bisection's bracket, and at least 2.5e-13 times the scan's top, the
   test's resolution with its nearest y 1e-15 times that top), so the edge is bracketed by the
   same criterion as the bisection's;
   an edge that is not confirmed (a prediction outside its bracket, no convergence in
   ``_FOLD_ITER`` points, a density that does not vanish like a square root) is bisected as
   before. Measured: edges within 1.3e-11 of the bisection's (within 1.2e-12 of the scalar
   route for Sigma = I, where the bisection's top was 4.1e-12 off); the refinement after the
   scan about 5 times cheaper (M = 3, K = 8, chain: both edges with the scan 8.1 s against
   1.6 s).
"""

from __future__ import annotations

import warnings

import numpy as np
from numpy.exceptions import RankWarning

from riskcalc.errors import SolverError
from riskcalc.linear.dynamics.sigma.kept import Kept

#: Most real points ``_fold`` places while predicting an edge.
_FOLD_ITER = 40
#: ``_fold_edges``: the half-widths tried around a predicted edge, in units of 5e-12 times it.
_CONFIRM = np.array([1.0, 5.0, 25.0])


def _scan(inside, xs, batch=6, both=True):
    """(lo, hi): the lowest and the highest point of ``xs`` (ascending) that ``inside`` finds
    in the spectrum, classifying points from both ends inwards, ``batch`` from each end per
    call, until the first inside point from each end (the same two as classifying all of
    them: the points between are not needed); ``both=False``: from the lowest end only (hi
    None)."""
    state = np.full(xs.size, -1)                      # -1 unknown, 0 outside, 1 inside

    def first(order):
        for i in order:
            if state[i] != 0:
                return i if state[i] == 1 else None
        raise SolverError("rounds limit with a spectrum and local steps: the spectrum of the "
                          "round map was not found on the scan")
    up = np.arange(xs.size)
    orders = (up, up[::-1]) if both else (up,)
    while True:
        found = [first(o) for o in orders]
        if None not in found:
            return found[0], (found[1] if both else None)
        pick = [o[state[o] == -1][:batch] for o, e in zip(orders, found) if e is None]
        pick = np.unique(np.concatenate(pick))
        state[pick] = inside(xs[pick])


def _real_step(pencil, x_last, tau_last, m_last, target, m_lim=None):
    """(tau, m) at the real point ``target`` continued on the real axis from the real branch at
    ``x_last`` (one Newton path), or None where that fails: Newton's method does not converge,
    m = tau(Sigma (x - D)^-1) is not real, it does not decrease in x, or it lies past ``m_lim``
    (module docstring, step 5: then ``target`` lies past the edge, or the step was too long).
    ``m_lim``: a bound on the physical branch's m ahead (``_fold``: past the edge, Newton's
    method can converge to an unphysical real branch on which m still decreases; measured,
    one ulp from the case of tests/test_rounds_sigma_alg1_fold.py: m -15.10 -> -126.8 for the
    fold's -15.1025)."""
    x0 = np.array([x_last], complex)
    tau, _, G, bad = pencil.solve(lambda t: x0 + t * (target - x_last), [0.0, 1.0],
                                  check=False, tau0=tau_last[None], tolerant=True)
    m = complex(np.einsum("a,a->", pencil.h * pencil.s, pencil.column0(G)[0, :, 0]))
    if bad[0] or abs(m.imag) > 1e-8 * abs(m) or (m.real - m_last) * (target - x_last) >= 0:
        return None
    if m_lim is not None and (m.real - m_lim) * (m_lim - m_last) > 0:
        return None
    return tau[0], m.real


def _fold(pencil, samples, x_in, delta):
    """The edge between ``x_in`` (inside D's spectrum) and the real points ``samples`` (a list of
    (x, tau, m) outside it, nearest last; m = tau(Sigma (x - D)^-1)), predicted as the fold of
    the real branch (module docstring, step 5): x as a polynomial in m through the last three
    or four points, its critical point ahead; new points on the real axis, each continued from
    the last (one Newton path) to a tenth of the predicted distance; None when a prediction
    falls outside the bracket or does not settle to within ``delta`` / 10. A prediction whose
    next point would not lie ahead of the last (the last within 100 ``delta`` of it, the nearest
    Newton's method reaches) is returned for the density tests' confirmation: no nearer point
    can refine it. Once a prediction exists, a point whose m lies beyond 4 times the distance
    in m from the last point to the predicted fold is refused (``_real_step``'s ``m_lim``)."""
    side = np.sign(samples[-1][0] - x_in)         # +1: the top edge (outside above)
    prev = m_lim = None
    for _ in range(_FOLD_ITER):
        pred = None
        for n in (4, 3):
            if len(samples) < n:
                continue
            x = np.array([s[0] for s in samples[-n:]])
            m = np.array([s[2] for s in samples[-n:]])
            u = (m - m[-1]) / (m[-1] - m[-2])          # the last two points at u = -1, 0
            with warnings.catch_warnings():
                # A poorly conditioned fit predicts a wrong edge, which the density test
                # at e -/+ delta refuses (then the edge is bisected): not the user's concern.
                warnings.simplefilter("ignore", RankWarning)
                poly = np.polyfit(u, x, n - 1)
            crit = np.roots(np.polyder(poly))
            crit = crit[(np.abs(crit.imag) <= 1e-9 * np.abs(crit)) & (crit.real > 0)].real
            if crit.size:
                b = float(np.polyval(poly, crit.min()))
                if (b - x_in) * side > 0 and (samples[-1][0] - b) * side > 0:
                    pred = b
                    # m at the fold is m[-1] + crit (m[-1] - m[-2]); physical points ahead lie
                    # between m[-1] and it (m monotone), 4 times that: the fit's error.
                    m_lim = m[-1] + 4.0 * crit.min() * (m[-1] - m[-2])
                    break
        x_last, tau_last, m_last = samples[-1]
        if pred is None:
            target = 0.5 * (x_in + x_last)
        else:
            if prev is not None and abs(pred - prev) <= 0.1 * delta:
                return pred
            # A twentieth of the way from the fold, or three times the change between the
            # last two predictions (an estimate of the older one's error, which shrinks like
            # gap^1.5: measured), and at least 100 delta (closer, Newton's method at the fold
            # can fail to reach its tolerance: measured M = 3, K = 50, points within 1e-12 of
            # the edge failed, the prediction then never settled).
            gap = abs(x_last - pred)
            dist = 0.6 * gap if prev is None else min(0.6 * gap, max(0.05 * gap,
                                                                     3.0 * abs(pred - prev)))
            dist = max(dist, 100.0 * delta)
            target = pred + side * dist
            # (target - x_in) side > 0 (pred inside the bracket, dist > 0); the last point
            # within 100 delta of pred: stepping would go back or jump past the edge (the
            # midpoint of the bracket, which landed on an unphysical branch: measured).
            if (x_last - target) * side <= 0:
                return pred
            prev = pred
        step = _real_step(pencil, x_last, tau_last, m_last, target, m_lim)
        if step is None:          # past the edge (or too long a step): the bracket shrinks
            x_in = target
            continue
        samples.append((target,) + step)
    return None


def _fold_edges(pencil, inside, seen, bot, top, upper):
    """``edges``' brackets ``bot`` (outside, inside) and ``top`` (inside, outside) narrowed in
    place to [e - delta, e + delta] around each edge e that ``_fold`` predicts and the density
    tests of ``inside`` confirm on both sides, delta the smallest of _CONFIRM times 5e-12 e
    (1: the bisection's bracket of 1e-11 e) that they confirm, at least 2.5e-13 times
    ``upper`` (the tests' nearest y is 1e-15 times it); measured: within a few 1e-12 of an
    edge the test can call an outside point inside (Newton's method at y = 1e-15 fails next
    to the fold and counts as inside), which biased the bisection's edges outwards by up to
    4e-12 (Sigma = I against the scalar route), so a prediction within 1.3e-12 of the edge
    may need delta = 2.5e-11 e. Returns which of the two were confirmed; the scan's real
    points (``seen``) start the predictions; ``top`` = [None, None]: the bottom edge only."""
    preds = []
    for (x_out, x_in), below in (((bot[0], bot[1]), True), ((top[1], top[0]), False)):
        if top[0] is None and not below:           # ``edges(both=False)``: no top edge
            preds.append(None)
            continue
        pts = sorted((x, v) for x, v in seen.items() if (x <= x_out if below else x >= x_out))
        pts = pts[-3:] if below else pts[:3][::-1]          # nearest last
        pred = None
        if pts:
            try:
                pred = _fold(pencil, [(x, t, m) for x, (t, m) in pts], x_in,
                             max(5e-12 * abs(x_in), 2.5e-13 * upper))
            except SolverError:
                pred = None
        preds.append(pred)
    done = [False, top[0] is None]
    idx = [i for i, e in enumerate(preds) if e is not None]
    if not idx:
        return done
    e = np.array([preds[i] for i in idx])
    dl = np.maximum(5e-12 * np.abs(e), 2.5e-13 * upper)[:, None] * _CONFIRM[None, :]
    y1 = min(4.0 * upper, max(60.0 * dl.max(), 1e-12 * upper))
    ys = np.geomspace(4.0 * upper, y1, 1 + int(np.ceil(np.log(4.0 * upper / y1) / np.log(3.0))))
    tau_m, _, _, _ = pencil.solve(lambda y: e + 1j * y, list(ys), check=False, tolerant=True)
    k = _CONFIRM.size
    pts = np.concatenate([(e[:, None] - dl).ravel(), (e[:, None] + dl).ravel()])
    ins = inside(pts, (y1, np.tile(np.repeat(tau_m, k, axis=0), (2, 1, 1, 1))))
    lo_in, hi_in = ins[:e.size * k].reshape(-1, k), ins[e.size * k:].reshape(-1, k)
    for n, i in enumerate(idx):
        br = bot if i == 0 else top
        want = (False, True) if i == 0 else (True, False)
        for c in range(k):
            lo, hi = e[n] - dl[n, c], e[n] + dl[n, c]
            if (lo_in[n, c], hi_in[n, c]) == want and br[0] <= lo and hi <= br[1]:
                br[0], br[1] = lo, hi
                done[i] = True
                break
    return done


def _midpoints(pencil, mids, y1, upper, last):
    """tau at ``mids`` + i ``y1``, the brackets' midpoints (``_edges``' refinement): followed
    down from 4 ``upper`` (three stages per decade of y), or, given ``last`` = (the previous
    refinement's midpoints, its y1, its solution there), continued from there (y shrinking by
    at most 3 per stage, as from above): each midpoint lies within the previous bracket, so at
    most a sixtieth of the previous y1 from the previous midpoint (an eighth where y1 was 4
    ``upper``), and the solution is analytic above the real axis (as ``chain_newton.solve_arc``
    continues neighbouring nodes); this saves the 10 to 27 stages from 4 ``upper`` down per
    refinement. Where a node fails on the way (``tolerant``), followed from above. Measured on
    64 edge solves (dense and chain pencils, FedAvg and Algorithm 1, fold or bisection, M = 1-2,
    K = 1-5): the edges equal to the bit, 28% fewer residual evaluations."""
    if last is not None:
        m0, y0, tau0 = last
        n = 1 + int(np.ceil(np.log(y0 / y1) / np.log(3.0)))

        def nodes(t):
            return m0 + t * (mids - m0) + 1j * y0 * (y1 / y0) ** t
        tau, _, _, bad = pencil.solve(nodes, list(np.linspace(0.0, 1.0, n + 1)), check=False,
                                      tau0=tau0, tolerant=True)
        if not bad.any():
            return tau
    ys = np.geomspace(4.0 * upper, y1, 1 + int(np.ceil(np.log(4.0 * upper / y1) / np.log(3.0))))
    return pencil.solve(lambda y: mids + 1j * y, list(ys), check=False, tolerant=True)[0]


#: Distinct inputs whose edges ``edges`` keeps (least recently used dropped first), each of at
#: most ``EDGES_MEMO_BYTES`` of arrays: at most 32 MiB held.
EDGES_MEMO, EDGES_MEMO_BYTES = 32, 1 << 20
_kept = Kept(EDGES_MEMO, EDGES_MEMO_BYTES)


def edges(pencil, top, qmax=None, fold=False, fallback=None, near=(), both=True):
    """(a, b, mu0): edges of the nonzero spectrum of D and its atom at 0 (module docstring,
    step 4); ``top`` the clients' sample spectrum tops; ``qmax`` (M,) the largest value of each
    client's filter on its spectrum (default: FedAvg's 1 - (1 - eta s)^K); ``fold``: each
    edge predicted as the fold of the real branch (``_fold``) and verified by two density
    tests, the bisection only where that fails (module docstring, step 5), after
    ``fallback(n)`` (n edges to bisect; it may refuse); ``near``: points where a narrow band of
    D's spectrum may lie apart from the rest (Algorithm 1's exact prox at small lam: its
    spectrum gathers near the atoms of the lam -> 0 limit), which the scan then also tries at
    relative distances 1e-12 to 0.1 on both sides (a band narrower than the scan's grid
    step is otherwise stepped over; the curves' mass check reports that); ``both=False``: the
    bottom edge a only (b None: the scan from below, the fold and the bisection of its bracket
    alone; a caller that reads a alone, ``sigma.algorithm1.pencil.spectrum_edges``, saves the
    other edge's real-axis paths and points).

    Hundreds of pencil solves, which the routes ask for again with equal inputs (a result's
    command line after its Python call, the personalization after the rounds): the result is
    kept for the last ``EDGES_MEMO`` distinct inputs (``kept.Kept``: the pencil's class, its
    attributes, ``top``, ``qmax`` and ``fold``), with the number of edges its solve bisected,
    for which a kept result calls ``fallback`` as that solve did. A failing solve is not kept,
    nor a pencil with another kind of attribute or more than ``EDGES_MEMO_BYTES`` of arrays.
    ``edges.cache_clear()`` forgets them."""
    near = np.asarray(near, float).ravel()
    key = _kept.key(pencil, top, qmax, np.concatenate([[float(fold), float(both)], near]))
    found = _kept.get(key)
    if found is not None:
        if found[1] and fallback is not None:
            fallback(found[1])
        return found[0]
    asked = []

    def counted(n):
        asked.append(n)
        if fallback is not None:
            fallback(n)
    value = _edges(pencil, top, qmax, fold, counted, near, both)
    _kept.put(key, (value, sum(asked)))
    return value


edges.cache_clear = _kept.clear


def _edges(pencil, top, qmax, fold, fallback, near, both=True):
    """``edges`` solved (its docstring); ``fallback`` is called as there."""
    gam, p, eta, K = pencil.gam, pencil.p, pencil.eta, pencil.K
    fedavg = qmax is None           # FedAvg's filter (the step_size's: the refusal below)
    if fedavg:
        grid = np.linspace(0.0, top.max(), 2001)[None, :]
        qmax = np.max(1.0 - (1.0 - eta * np.minimum(grid, top[:, None])) ** K, axis=1)
    upper = float(np.sum(p * qmax)) * 1.01
    if not upper > 0.0:     # K = 1's 1 - (1 - eta s) rounded to 0 (fuzz40 lead F2)
        raise ValueError(f"step_size: step_size times the top eigenvalue ({eta * top.max():.3g})"
                         " leaves the local filter 1 - (1 - step_size s)^K at 0 in floating "
                         "point; raise step_size (or rescale the covariance)")
    mu0 = max(0.0, 1.0 - float(np.sum(np.minimum(1.0, 1.0 / gam))))

    def inside(x, start=None):
        # Im tau(Sigma (z - D)^-1) at y = 1e-12 and 1e-15 times the top: proportional to y off
        # the spectrum (and at the atom at 0), the density inside it.
        # Newton's method fails only next to a singularity of the density (where a client's
        # filter folds, e.g. q = 1 at eta s = 1): such points count as inside.
        # ``start`` = (y1, tau at x + i y1): the path begins there (from 4 times the top
        # otherwise), about three stages per decade of y as from the top.
        x = np.asarray(x, float)
        y1, tau0 = (4.0 * upper, None) if start is None else start
        ys = np.geomspace(y1, 1e-12 * upper, 1 + int(np.ceil(np.log(y1 / (1e-12 * upper))
                                                             / np.log(3.0))))
        tau, _, G, bad = pencil.solve(lambda y: x + 1j * y, list(ys), check=False,
                                      tolerant=True, tau0=tau0)
        far = -np.einsum("a,na->n", pencil.h * pencil.s, pencil.column0(G)[:, :, 0]).imag
        ys = upper * np.geomspace(1e-12, 1e-15, 4)
        tau, _, G, bad2 = pencil.solve(lambda y: x + 1j * y, list(ys), check=False, tau0=tau,
                                       tolerant=True)
        m = np.einsum("a,na->n", pencil.h * pencil.s, pencil.column0(G)[:, :, 0])
        near = -m.imag
        out = bad | bad2 | ((near > 0.5 * far) & (near > 0))
        for i in np.flatnonzero(~out):          # the real branch there (``_fold``'s start)
            seen[float(x[i])] = (tau[i], float(m[i].real))
        return out

    rel = np.geomspace(1e-12, 0.1, 23)
    close = (near[:, None] * np.concatenate([1.0 - rel, 1.0 + rel])[None, :]).ravel()
    xs = np.unique(np.concatenate([upper * np.linspace(0.0, 1.0, 65)[1:],
                                   upper * np.geomspace(1e-4, 1e-2, 9),
                                   close[(close > 0.0) & (close < upper)]]))
    seen = {}
    lo_i, hi_i = _scan(inside, xs, both=both)
    pooled = float(np.sum(np.minimum(1.0, 1.0 / gam)))
    if lo_i == 0 and fedavg and upper < 1e-2 and abs(pooled - 1.0) >= 1e-3:
        # FedAvg's filter small everywhere: the pencil L0 + s E (L0 of order 1) loses D's
        # bottom to rounding (measured: tops 5e-4, 1e-3 lost, 6e-3, 7e-3 answered; fuzz40 scale F3).
        raise ValueError(f"step_size: the round map's spectrum tops at {upper:.2g} (about K "
                         "step_size times the clients' top sample eigenvalue), too small for "
                         "this route's density scan to find its bottom (sum_j min(1, "
                         f"1/gamma_j) = {pooled:.4g} is off the threshold 1); give a larger "
                         "step_size (a top of 1e-2 or more)")
    if lo_i == 0:
        raise ValueError("the round map's spectrum comes within 1e-4 of its top to 0 (pooled N "
                         "near d: sum_j min(1, 1/gamma_j) near 1); move gamma off the threshold")
    # Brackets (outside, inside) of the bottom and (inside, outside) of the top edge, refined
    # together: ``pencil.bisect`` points in each per solve (the bottom's alone: ``both``).
    k = pencil.bisect
    bot = [xs[lo_i - 1] if lo_i > 0 else 0.0, xs[lo_i]]
    top_ = ([xs[hi_i], xs[hi_i + 1] if hi_i + 1 < xs.size else upper] if both
            else [None, None])
    done = [False, not both]
    last = None         # the last refinement's (midpoints, y1, their solution): ``_midpoints``
    if fold:
        done = _fold_edges(pencil, inside, seen, bot, top_, upper)
        if not all(done):
            fallback(2 - sum(done))
    for _ in range(max(16, int(np.ceil(36.0 / np.log(k + 1))))):
        # The brackets refined (the top's only when asked: ``both``).
        sides = [bot, top_] if both else [bot]
        if all(d or br[1] - br[0] <= 1e-11 * br[1] for d, br in zip(done, sides)):
            break
        pts = [np.linspace(*br, k + 2)[1:-1] for br in sides]
        # The brackets' midpoints followed down to 30 times the wider bracket, whence their
        # solutions start the bracket's points (within 1/60 of y of them).
        y1 = min(4.0 * upper, max(30.0 * max(br[1] - br[0] for br in sides), 1e-12 * upper))
        mids = np.array([0.5 * (br[0] + br[1]) for br in sides])
        tau_m = _midpoints(pencil, mids, y1, upper, last)
        last = (mids, y1, tau_m)
        ins = inside(np.concatenate(pts), (y1, np.repeat(tau_m, k, axis=0)))
        pb, kb = pts[0], np.flatnonzero(ins[:k])
        if done[0]:             # verified (``_fold_edges``): its bracket stays
            pass
        elif kb.size:
            bot = [pb[kb[0] - 1] if kb[0] > 0 else bot[0], pb[kb[0]]]
        else:
            bot = [pb[-1], bot[1]]
        if done[1]:
            continue
        pt, kt = pts[1], np.flatnonzero(ins[k:])
        if kt.size:
            top_ = [pt[kt[-1]], pt[kt[-1] + 1] if kt[-1] < k - 1 else top_[1]]
        else:
            top_ = [top_[0], pt[0]]
    a = 0.5 * (bot[0] + bot[1])
    b = 0.5 * (top_[0] + top_[1]) if both else None
    return a, b, mu0
