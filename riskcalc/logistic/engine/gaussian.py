"""Gaussian expectations of the logistic proximal map, by tensor quadrature (Gauss-Hermite, or
Gauss-Legendre panels along axes with narrow features).

Every expectation of the CGMT system (``riskcalc.logistic.fixed_point``) has the form
``E[2 sigmoid(kappa s) F(s, t)]`` with ``s, g`` independent standard normals,
``v = a s + rho g`` and ``t = prox_{mu l}(v)`` the proximal map of the logistic loss
``l(t) = log(1 + e^-t)`` (label +1). The factor ``2 sigmoid(kappa s)`` folds the label in: the
label -1 term equals the label +1 term after ``(s, g) -> (-s, -g)`` because
``l(-1, t) = l(+1, -t)`` (the ``2 rho'(Q1)`` weight of Sur & Candes, PNAS 2019, eq. 5). The
proximal map itself and the sigmoid: ``riskcalc.logistic.engine.prox``.

Resolving large signal norms (``||w_i|| = kappa`` of about 3.5 and beyond). The label weight
``sigmoid(kappa s)`` has poles at ``s = +-i pi / kappa`` and the integrands ``F(a s + rho g)`` (the
proximal map and ``l''`` have their singularities at imaginary part ``pi`` in the margin) have
poles at distance ``pi / |a|`` from the real axis in ``s`` and ``pi / rho`` in ``g``. A global
Gauss-Hermite rule converges only algebraically once these widths approach its node spacing
(measured at ``kappa = 10``, ``a = 9.97``, ``rho = 1.13``, ``mu = 8.7``: relative errors
1e-2 / 4e-3 / 1e-3 / 3e-4 in D and 0.21 / 0.075 / 0.020 / 0.004 in E3 at 56 / 84 / 126 / 190
nodes, so the ladder's 1e-7 agreement fails).
Each axis of a tensor rule is therefore chosen by its feature scale (``axis_rule``): the
Gauss-Hermite rule while the scale is at most ``GH_REACH`` (the ladder then converges: the fast
path of every moderate norm, unchanged), otherwise equal Gauss-Legendre panels of ``PANEL``
nodes on ``[-L_NORMAL, L_NORMAL]`` with width ``h = min(H_MAX, 2 pi / scale) base / n``. A panel
of width ``h`` around a pole at distance ``delta = pi / scale`` integrates with error
``~ (delta/(h/2) + sqrt(1 + (delta/(h/2))^2))^(-2 PANEL)``: about 1e-12 at the first ladder level
(``h = 2 delta``), falling with each finer level, whatever the scale. Rules are built for the
scales of the point being solved (``Rule.at``) and rebuilt when a solution outgrows them
(``solve_resolved``); the ladder's check (two consecutive rules agree) is unchanged.

No scipy submodule is imported here (fast ``riskcalc`` start-up).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from riskcalc.errors import SolverError
from riskcalc.logistic.engine.prox import prox_near, sigmoid
from riskcalc.logistic.engine.warm import remembered

#: Nodes per dimension: the fixed point is solved with the first rule and checked with the
#: next one, moving up the ladder until two consecutive rules agree.
NODES = (56, 84, 126, 190)
#: Largest feature scale (1 / width) of an axis left to the Gauss-Hermite rule: up to here the
#: ladder ``NODES`` converges (measured: at kappa = 3.16, a = 3.0, rho = 1.3 the 190-node rule is
#: within 6e-11; at kappa = 4.1 the 126 and 190-node rules differ by 1e-6).
GH_REACH = 3.5
#: Composite rules: nodes per Gauss-Legendre panel, largest panel width, half-width of the
#: interval (the normal density beyond 9 is below 1e-18 of its peak).
PANEL, H_MAX, L_NORMAL = 16, 1.5, 9.0
#: Rules are built for this multiple of the current scales, so that a solution moving a little
#: does not outgrow its rule.
SCALE_MARGIN = 1.25


@lru_cache(maxsize=16)
def gauss_hermite(n: int):
    """Nodes and weights of the n-point rule for ``E[f(Z)]``, ``Z ~ N(0, 1)`` (cached,
    read-only arrays)."""
    x, w = np.polynomial.hermite_e.hermegauss(n)
    w = w / np.sqrt(2.0 * np.pi)
    x.flags.writeable = w.flags.writeable = False
    return x, w


@lru_cache(maxsize=64)
def composite_normal(panels: int):
    """Nodes and weights for ``E[f(Z)]``, ``Z ~ N(0, 1)``: ``panels`` equal Gauss-Legendre panels
    of ``PANEL`` nodes on ``[-L_NORMAL, L_NORMAL]`` (cached, read-only arrays)."""
    z, w = np.polynomial.legendre.leggauss(PANEL)
    edges = np.linspace(-L_NORMAL, L_NORMAL, panels + 1)
    half = 0.5 * np.diff(edges)[:, None]
    x = (half * (z + 1.0) + edges[:-1, None]).ravel()
    w = (half * w).ravel() * np.exp(-0.5 * x * x) / np.sqrt(2.0 * np.pi)
    x.flags.writeable = w.flags.writeable = False
    return x, w


def axis_key(scale: float, n: int, base: int, gh_max: int = 0):
    """Which rule resolves features of width ``~1/scale`` at ladder level ``n`` (``base``: the
    ladder's first level): ``("gh", n)`` or ``("gl", panels)`` (module docstring). With
    ``gh_max``, scales a little beyond the reach take the Gauss-Hermite rule with
    ``n (scale / GH_REACH)^2`` nodes (its node spacing falls like ``n^-1/2``) while that is at
    most ``gh_max``: far fewer nodes than panels over ``[-L_NORMAL, L_NORMAL]`` there."""
    if scale <= GH_REACH:
        return ("gh", n)
    m = int(np.ceil(n * (scale / GH_REACH) ** 2))
    if m <= gh_max:
        return ("gh", m)
    h = min(H_MAX, 2.0 * np.pi / scale) * base / n
    return ("gl", int(np.ceil(2.0 * L_NORMAL / h)))


def axis_nodes(key) -> int:
    """Nodes of the axis rule ``axis_key`` names."""
    return key[1] if key[0] == "gh" else key[1] * PANEL


def rule_nodes(kappa: float, n: int, a: float, rho: float, margin: float = SCALE_MARGIN) -> int:
    """Nodes of ``Rule.at(kappa, n, a, rho, margin)``, without building it."""
    return (axis_nodes(axis_key(max(kappa, margin * abs(a)), n, NODES[0]))
            * axis_nodes(axis_key(margin * rho, n, NODES[0])))


#: The work model of ``riskcalc.logistic.work`` (measured there): residual evaluations per
#: root solve, and seconds per node and evaluation of a 2-d rule.
EVALS_PER_ROOT, SECONDS_PER_NODE = 15, 4e-7
#: Most nodes of a 2-d rule: 5 min per root solve at the work model, ~400 MB per array.
MAX_RULE_NODES = 50_000_000


def axis_rule(key):
    """Nodes and weights of the rule ``axis_key`` names."""
    return gauss_hermite(key[1]) if key[0] == "gh" else composite_normal(key[1])


def label_rule(kappa: float):
    """Nodes and weights for 1-d expectations ``E[2 sigmoid(kappa Z) f(Z)]`` with ``f`` smooth on
    the scale of the label weight: the 200-point Gauss-Hermite rule up to ``GH_REACH``, else
    panels of width ``pi / kappa`` (module docstring: error ~1e-15). Their number grows like
    ``kappa``: beyond ``LABEL_KAPPA_MAX`` (about 9.2e6 nodes, 73 MB) ValueError, which was numpy's
    "Maximum allowed size exceeded" or an OverflowError at ``kappa`` = 1e100 or 1e300."""
    if not kappa <= LABEL_KAPPA_MAX:
        raise ValueError(f"signal strength ||w_i|| = {kappa:g} (sqrt(signal^2 + r^2)) must lie "
                         f"in [0, {LABEL_KAPPA_MAX:g}] for the logistic label expectations: their "
                         f"rule needs about 3 kappa panels (at {LABEL_KAPPA_MAX:g}: "
                         f"{axis_nodes(axis_key(LABEL_KAPPA_MAX, 200, 100)):.3g} nodes)")
    return axis_rule(axis_key(kappa, 200, 100))


#: Largest ``kappa`` of ``label_rule``.
LABEL_KAPPA_MAX = 1e5


def check_reach(signal: float, r: float, root_max: float, kappa_max: float, what: str):
    """ValueError unless ``(signal + r) root_max`` (``root_max``: the square root of Sigma's
    largest eigenvalue), the most a simulated ``||w_i||_Sigma`` can be, is at most
    ``kappa_max``, the reach of ``what`` (the logistic simulations, ``montecarlo.logistic``):
    beyond it they returned risk 0 (``r u`` lost beside ``w_0`` at signal 1e50), an
    OverflowError (1e200) or this module's "quadrature rule" refusal (3000)."""
    if not (signal + r) * root_max <= kappa_max:
        raise ValueError(f"signal = {signal:g} and r = {r:g} put ||w_i||_Sigma up to (signal + "
                         f"r) sqrt(max eigenvalue) = {(signal + r) * root_max:.6g}, beyond "
                         f"{kappa_max:.4g}, the reach of {what}: signal + r must lie in "
                         f"[0, {kappa_max / root_max:.4g}]")


def finer_or_equal(have, need) -> bool:
    """Whether the axis rule ``have`` resolves at least what ``need`` does (same ladder level):
    panels only where panels are needed, and at least as many nodes or panels."""
    if have[0] != need[0]:
        return have[0] == "gl"
    return have[1] >= need[1]


def solve_resolved(root, rules_at, x0, tries: int = 4):
    """``root(x0, rules)`` on rules built for the scales of ``x0`` (``rules_at(x)``: a list of
    rules, each with ``keys``), re-solved from the solution on rebuilt rules while the solution
    needs finer ones than it was solved on. Returns ``root``'s output and the rules used.

    Raises
    ------
    SolverError
        The solution still outgrows its rules after ``tries`` rebuilds.
    """
    rules = rules_at(x0)
    for _ in range(tries):
        out = root(x0, rules)
        x, err = out[0], out[1]
        if not (np.all(np.isfinite(x)) and err < np.inf):
            return out, rules
        need = rules_at(x, margin=1.0)
        if all(finer_or_equal(h, k) for r, q in zip(rules, need) for h, k in zip(r.keys, q.keys)):
            return out, rules
        rules, x0 = rules_at(x), x
    raise SolverError("logistic fixed point: the solution keeps outgrowing its quadrature "
                      f"rule after {tries} rebuilds (feature scales grow with each solve)")


def label_reach(n: int) -> float:
    """Largest ``kappa`` whose ``Rule(kappa, n)`` (panels of width ``2 pi NODES[0] / (kappa
    n)`` on the s-axis, the n-point Gauss-Hermite rule on the g-axis) stays within
    ``MAX_RULE_NODES``."""
    return (MAX_RULE_NODES // (PANEL * n)) * np.pi * NODES[0] / (L_NORMAL * n)


class Rule:
    """The 2-d tensor rule over ``(s, g)`` with the label weight ``2 sigmoid(kappa s)``, at ladder
    level ``n``, resolving integrands ``F(a s + rho g)`` with ``|a| <= a_scale`` and
    ``rho <= rho_scale`` (the s-axis always resolves the label weight's scale ``kappa``; module
    docstring). With both scales within ``GH_REACH``: the ``n``-point Gauss-Hermite tensor."""

    def __init__(self, kappa: float, n: int = NODES[0], a_scale: float = 0.0,
                 rho_scale: float = 0.0):
        self.n = n
        self.keys = (axis_key(max(kappa, abs(a_scale)), n, NODES[0]),
                     axis_key(rho_scale, n, NODES[0]))
        nodes = axis_nodes(self.keys[0]) * axis_nodes(self.keys[1])
        if kappa > label_reach(n):
            # Was "the iterate left the solution's scales" after 24 s (finite M, signal 1700):
            # the label weight itself needs the rule at this ladder level.
            raise SolverError(f"logistic fixed point: signal strength ||w_i|| = {kappa:.4g} "
                              f"needs a quadrature rule of {nodes:.3g} nodes at ladder level "
                              f"{n} (the label weight's panels alone), beyond "
                              f"{MAX_RULE_NODES:.0e}: that level reaches ||w_i|| <= "
                              f"{label_reach(n):.4g}; lower signal and r")
        if nodes > MAX_RULE_NODES:     # was: 1.3e13 nodes, "Unable to allocate 95.5 TiB"
            raise SolverError(f"logistic fixed point: a quadrature rule of {nodes:.3g} nodes "
                              f"(feature scales {max(kappa, abs(a_scale)):.3g} and "
                              f"{rho_scale:.3g}), beyond {MAX_RULE_NODES:.0e}: the iterate "
                              "left the solution's scales")
        (xs, ws), (xg, wg) = axis_rule(self.keys[0]), axis_rule(self.keys[1])
        self.s = xs[:, None]
        self.g = xg[None, :]
        self.weight = 2.0 * sigmoid(kappa * self.s) * ws[:, None] * wg[None, :]
        self._t = None          # the last proximal points (composite rules: warm starts)

    @classmethod
    def at(cls, kappa: float, n: int, a: float, rho: float, margin: float = SCALE_MARGIN):
        """The rule for a point with ``(a, rho)`` (scales enlarged by ``margin``); small rules
        are remembered (``remembered``)."""
        keys = (axis_key(max(kappa, margin * abs(a)), n, NODES[0]),
                axis_key(margin * rho, n, NODES[0]))
        return remembered((cls, kappa, n, keys),
                          lambda: cls(kappa, n, margin * abs(a), margin * rho))

    def prox(self, v, mu):
        """``prox_logistic(v, mu)`` on the grid, each call started from the previous call's
        points (``prox_near``: a Halley step or two when the solver moves a little; the same
        stopping rule, to rounding level)."""
        return self._prox(v, mu)[0]

    def _prox(self, v, mu):
        """``prox`` and ``sigmoid(-t)`` there (``prox_near`` evaluates it: ``moments`` needs
        it)."""
        start = None if self._t is None or self._t.shape != v.shape else self._t[None]
        t, p = prox_near(v[None], np.full((1, 1, 1), float(mu)), start)
        self._t = t[0] if np.isfinite(t).all() else None      # (as ``finetune.Rule3``'s)
        return t[0], p[0]

    @property
    def is_gauss_hermite(self) -> bool:
        """Whether both axes are the Gauss-Hermite rule (the fast path)."""
        return self.keys[0][0] == self.keys[1][0] == "gh"

    def expect(self, values):
        """``E[2 sigmoid(kappa s) F]`` for ``values = F`` on the grid (broadcast to (n, n))."""
        return float(np.sum(self.weight * values))

    def moments(self, a, rho, mu, derivatives: bool = True):
        """The three expectations of the fixed point at ``(a, rho, mu)`` and their gradients.

        Returns ``(m, dm)``: ``m = (D, E2, E3)`` with ``D = E[l''(t) / (1 + mu l''(t))]``,
        ``E2 = E[(mu l'(t))^2] = E[(v - t)^2]`` and ``E3 = -E[l'(t) s] = E[sigmoid(-t) s]``;
        ``dm[i, j]`` the derivative of ``m[i]`` in ``(a, rho, mu)[j]``, from the implicit
        derivatives of the prox, ``dt = (dv + sigmoid(-t) dmu) / (1 + mu l''(t))``
        (None with ``derivatives=False``: the same ``m``, bitwise, at about half the work).
        """
        t, p = self._prox(a * self.s + rho * self.g, mu)
        h = p * (1.0 - p)
        k = 1.0 / (1.0 + mu * h)
        # The integrands three at a time in one array, weighted and summed row by row
        # (fourteen ``expect`` calls spent as much in call overhead as in arithmetic on the
        # small grids; three rows keep the temporaries of a large rule as before): the same
        # products, each row summed as ``np.sum`` sums the grid (bitwise the same
        # expectations).
        rows = np.empty((3,) + p.shape)

        def sums(n=3):
            r = rows[:n]
            r *= self.weight
            return r.reshape(n, -1).sum(axis=1)

        hk = h * k
        rows[0] = hk
        np.square(mu * p, out=rows[1])
        np.multiply(p, self.s, out=rows[2])
        m = sums()
        if not derivatives:
            return m, None
        dh_dt, dp_dt = -(1.0 - 2.0 * p) * h, -h
        dt = np.stack((self.s * k, self.g * k, p * k))
        dm = np.empty((3, 3))
        for i, fi in enumerate((k * k * dh_dt, 2.0 * mu * mu * p * dp_dt, self.s * dp_dt)):
            np.multiply(fi, dt, out=rows)
            dm[i] = sums()
        np.square(hk, out=rows[0])
        np.multiply(2.0 * mu * p, p, out=rows[1])
        extra = sums(2)
        dm[0, 2] -= extra[0]
        dm[1, 2] += extra[1]
        return m, dm


#: Quadrature points (grid points x nodes^2) evaluated at once by ``batch_moments``: bounds the
#: temporaries (about a dozen arrays of this size) at a few tens of MB.
CHUNK = 400_000


def batch_moments(kappa, a, rho, mu, n: int, start=None, derivatives: bool = True):
    """``Rule(kappa, n).moments(a, rho, mu)`` for P parameter points at once (1-d arrays).

    Returns ``(m, dm, t)``: ``m, dm`` of shapes ``(P, 3)`` and ``(P, 3, 3)``, the same
    expectations and derivatives as ``Rule.moments`` (see there; ``dm`` is None with
    ``derivatives=False``), evaluated on the tensor rule with the points' own label weights,
    and the proximal points ``t`` (P, n, n), which a later call at nearby parameters takes as
    ``start`` (its prox then needs a step or two). The grid is processed in chunks of about
    ``CHUNK`` nodes.

    The weight factorizes, ``2 sigmoid(kappa s_i) w_i`` times ``w_j``, and the derivatives of
    the prox along ``a``, ``rho`` are ``s k`` and ``g k`` (``k = 1 / (1 + mu l''(t))``): every
    expectation is a product with ``w`` or ``w g`` over the g-axis of an array without the
    factor ``s``, which is applied after the reduction (one matrix product for all).
    """
    x, w = gauss_hermite(n)
    s, g = x[None, :, None], x[None, None, :]
    P = np.size(a)
    m, dm, t_all = np.empty((P, 3)), np.empty((P, 3, 3)), np.empty((P, n, n))
    step = max(1, CHUNK // (n * n))
    wg = np.stack([w, w * x], -1)                               # (n, 2): w and w g
    for lo in range(0, P, step):
        sl = slice(lo, lo + step)
        k_, a_, r_, u_ = (np.asarray(v, float)[sl, None, None] for v in (kappa, a, rho, mu))
        w_s = 2.0 * sigmoid(k_[:, :, 0] * x) * w                 # (p, n) over s
        t, p = prox_near(a_ * s + r_ * g, u_, None if start is None else start[sl])
        t_all[sl] = t
        hk = p * (1.0 - p)                                        # l''(t), then l'' k
        k = 1.0 / (1.0 + u_ * hk)
        hk *= k
        if not derivatives:
            red = np.stack([hk, (u_ * p) ** 2, p], 1) @ w         # (p, 3, n)
            m[sl] = np.einsum("pi,pqi->pq", w_s, red * np.array([1.0, 1.0, 0.0])[:, None]) \
                + np.einsum("pi,pi->p", w_s * x, red[:, 2])[:, None] * [0.0, 0.0, 1.0]
            continue
        # dh/dt = -(1 - 2p) h and dp/dt = -h: the three derivative arrays (module docstring
        # of Rule.moments), without the factors s, g, p of dt.
        A0 = -(1.0 - 2.0 * p) * hk * k * k                       # k^2 dh/dt k
        A1 = -2.0 * u_ * u_ * p * hk                              # 2 mu^2 p dp/dt k
        A2 = -hk                                                  # dp/dt k
        red = [arr @ wg for arr in (hk, (u_ * p) ** 2, p, A0, A0 * p, hk * hk, A1, A1 * p,
                                    p * p, A2, A2 * p)]               # each (p, n, 2)
        by_w = np.stack([r[..., 0] for r in red], 1)
        by_wg = np.stack([r[..., 1] for r in red], 1)

        def E(values, power=0):
            return np.einsum("pi,pi->p", w_s * x ** power, values)

        m[sl, 0], m[sl, 1], m[sl, 2] = E(by_w[:, 0]), E(by_w[:, 1]), E(by_w[:, 2], 1)
        dm[sl, 0] = np.stack([E(by_w[:, 3], 1), E(by_wg[:, 3]), E(by_w[:, 4] - by_w[:, 5])], -1)
        dm[sl, 1] = np.stack([E(by_w[:, 6], 1), E(by_wg[:, 6]),
                              E(by_w[:, 7]) + 2.0 * u_[:, 0, 0] * E(by_w[:, 8])], -1)
        dm[sl, 2] = np.stack([E(by_w[:, 9], 2), E(by_wg[:, 9], 1), E(by_w[:, 10], 1)], -1)
    return m, (dm if derivatives else None), t_all
