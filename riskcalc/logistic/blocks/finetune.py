r"""Fine-tuning toward a global model that saw the same data: the exact limit (derived here).

Target client i (``n_i = d / gamma_i`` samples, ``w_i``, ``kappa = ||w_i||``) fine-tunes
FedAvg's global model ``w_g`` (``riskcalc.logistic.blocks.pooled``, fitted on all M blocks, block i
included):

    w_h = argmin_w (1/n_i) sum_{k in block i} l(y_k x_k.w) + (lam/2) ||w - w_g||^2.

The two estimators share block i, so ``w_h``'s limit needs the JOINT law of the training margins
``(z_g, z_h)``; the derivation below follows the leave-one-out analysis of the global model
(``pooled``, steps 1-3) applied to both estimators at once, the structure of the exact analyses
of learners trained on shared data (Loureiro et al., NeurIPS 2021, "Learning Gaussian mixtures
with generalized linear models" / 2022, "Fluctuations, bias, variance and ensemble of
learners": correlated Gaussian fields for the estimators' isotropic parts) and of a second
learner regularized toward the first (self-distillation; Ildiz et al., ICLR 2025).

Block i's view of ``w_g`` (from ``pooled``): ``w_g = A_g e + (rest)`` with ``e = w_i/kappa``,
``nu_g^2 = ||w_g||^2 - A_g^2`` (``A_g, nu_g`` are ``pooled``'s ``alpha_i, rho_i``) and the
proximal parameter ``mu_g = c_i tr H_g^{-1}``.

1. Triangular proximal map. Leave sample ``k`` of block i out of both problems. Adding it moves
   ``w_g`` by ``-H_g^{-1} x_k c_i l'(z_g)`` and, linearizing ``w_h``'s stationarity
   ``lam (w_h - w_g) = -(1/n_i) X_i^T l'(z_h)``, moves ``w_h`` by
   ``-H_h^{-1} x_k l'(z_h)/n_i - lam H_h^{-1} H_g^{-1} x_k c_i l'(z_g)``
   (``H_h = (1/n_i) sum l''(z_h) x x^T + lam I``). With ``x_k^T A x_k -> tr A``:

       z_g = prox_{mu_g l}(omega_g),    z_h = prox_{mu_h l}(omega_h - kappa_hg l'(z_g)),

   ``mu_h = tr H_h^{-1} / n_i``, ``kappa_hg = lam c_i tr(H_h^{-1} H_g^{-1})``; the cavity
   margins ``(omega_g, omega_h)`` and the teacher margin are jointly Gaussian.
2. Traces. ``gamma_i = mu_h (lam + D_h)`` with ``D_h = E[l''_h / (1 + mu_h l''_h)]`` (as in
   ``fixed_point``, E1). The cross trace: expand ``tr H_g^{-1} = tr(H_g^{-1} H_h H_h^{-1})`` over
   ``H_h``'s samples with Sherman-Morrison in BOTH resolvents (sample k is in both):
   ``x^T H_h^{-1} H_g^{-1} x = tr(H_h^{-1} H_g^{-1}) / ((1 + mu_g l''_g)(1 + mu_h l''_h))``, so

       kappa_hg = lam mu_g / (lam + D_x),   D_x = E[l''_h / ((1 + mu_g l''_g)(1 + mu_h l''_h))].

   (Expanding over ``H_g``'s samples instead gives the same value by the trace equations: a
   consistency check in the tests.)
3. Fields. As in ``pooled`` step 3, ``(1/n_i) P X_i^T l'(z_h)`` (P: projection off ``e``) is a
   Gaussian vector ``zeta_h`` plus Onsager terms from both cavity margins,
   ``P w_g E[d l'_h/d omega_g] + P w_h E[d l'_h/d omega_h]`` (the first is
   ``-kappa_hg D_hg``, ``D_hg = E[l''_g l''_h / ((1 + mu_g l''_g)(1 + mu_h l''_h))]``; the second
   ``D_h``). The stationarity gives ``P w_h = rho_h P w_g - zeta_h / (lam + D_h)`` with

       rho_h = (lam + kappa_hg D_hg) / (lam + D_h),

   and ``zeta_h`` is correlated with the global model's own field (``P w_g``'s Gaussian part is
   ``-v zeta_g``, ``pooled`` step 3) through the shared samples only. The overlaps follow:

       nu_gh = P w_g . P w_h = rho_h nu_g^2 + Q_gh,
       nu_h^2 = ||P w_h||^2  = rho_h^2 nu_g^2 + 2 rho_h Q_gh + Q_h,
       Q_gh = (1/gamma_i) E[(mu_g l'_g)(mu_h l'_h)],  Q_h = (1/gamma_i) E[(mu_h l'_h)^2].

   Every direction of ``w_g`` other than ``e`` (the others' teachers, ``w_0``'s part across
   ``w_i``, the isotropic part) is label-free for block i, so one ``rho_h`` acts on all of them.
4. Along the label direction ``e``: ``lam (A_h - A_g) = -E[l'(y z_h) y s]``.

Unknowns ``(A_h, mu_h, kappa_hg, nu_gh, nu_h)``; expectations over ``(s, g_1, g_2)`` with the
label weight ``2 sigmoid(kappa s)``, ``omega_g = A_g s + nu_g g_1``,
``omega_h = A_h s + (nu_gh/nu_g) g_1 + sqrt(nu_h^2 - nu_gh^2/nu_g^2) g_2``. Checks: ``lam -> inf``
gives ``kappa_hg -> mu_g``, ``z_h -> z_g``, ``w_h -> w_g``; a deterministic centre (``mu_g = 0``)
gives ``fixed_point``'s (E1)-(E4) (``rho_h = lam/(lam + D)`` is E4's shrinkage).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from riskcalc.errors import SolverError
from riskcalc.logistic.engine.deadline import Overtime, by_deadline
from riskcalc.logistic.ranges import check_solution_logs, ladder
from riskcalc.logistic.engine.gaussian import (MAX_RULE_NODES, SCALE_MARGIN, axis_key, axis_nodes,
                                               axis_rule, solve_resolved)
from riskcalc.logistic.engine.prox import prox_logistic, prox_near, sigmoid
from riskcalc.logistic.engine.warm import remembered

#: Residual (sup-norm) below which a root is accepted.
TOL = 1e-11
#: Nodes per dimension of the 3-d rule: solved with the first, checked with the next.
NODES3 = (24, 32, 48, 72, 100)
QUAD_RTOL = 2e-6
PATH_NODES = 16
#: Most Gauss-Hermite nodes an axis of ``Rule3`` takes before switching to panels
#: (``gaussian.axis_key``): the 3-d tensor is costly, and moderate scales need few nodes.
GH_MAX = 160
#: Panels of width ``2 pi / scale`` at this level (``gaussian.axis_key``): 1.5 times the first,
#: so that the first rule's panels are ``3 pi / scale`` wide (about 1e-9, ample for the
#: ladder's ``QUAD_RTOL``; the 3-d tensor is costly).
PANEL_BASE = 36
#: Seconds per node (before pruning) of building a ``Rule3`` and evaluating ``moments`` on it
#: once, above which time left before a deadline the rule is not built: measured 2-13e-8 for
#: the build and 4-19e-8 for the first evaluation at 1.2e7-5e7 nodes (one thread, loaded
#: 2-core machine). A rule of 3.8e7 nodes took 5.3 s to build at lam = 1e-300 (separable
#: client, max_seconds = 5: refused at 8.1 s, 1.5 GB); the residuals' deadline
#: (``deadline.by_deadline``) is checked between evaluations only.
SECONDS_BUILD = 3e-7
#: Bytes of a ``Rule3`` per node (full tensor and mask) and per kept node (arrays, ``moments``'
#: temporaries; 3.5 GB measured at 5e7 nodes, 2.1e7 kept), and the most one may take.
BYTES_NODE, BYTES_KEPT, MAX_RULE3_BYTES = 9, 150, 1e9


class Rule3:
    """Tensor rule over ``(s, g_1, g_2)`` with the label weight, without the nodes whose product
    weight is below ``PRUNE`` (they change no expectation at the accuracy the ladder checks,
    and are most of the tensor grid). Each axis is the Gauss-Hermite rule or, when its
    ``scales`` entry (the largest coefficient of that variable in the margins, and ``kappa``
    for ``s``) exceeds ``gaussian.GH_REACH``, Gauss-Legendre panels
    (``riskcalc.logistic.engine.gaussian``, module docstring)."""

    PRUNE = 1e-17

    def __init__(self, kappa: float, n: int, scales=(0.0, 0.0, 0.0), deadline=None):
        self.n = n
        self.keys = tuple(axis_key(sc, n, PANEL_BASE, GH_MAX)
                          for sc in (max(kappa, scales[0]), scales[1], scales[2]))
        nodes = math.prod(axis_nodes(k) for k in self.keys)
        if nodes > MAX_RULE_NODES:     # was: 3.2e8 nodes, a MemoryError (lam 1e-8, separable)
            raise SolverError(f"logistic fine-tuning: a quadrature rule of {nodes:.3g} nodes "
                              f"(feature scales {max(kappa, scales[0]):.3g}, {scales[1]:.3g}, "
                              f"{scales[2]:.3g}), beyond {MAX_RULE_NODES:.0e}: the solution "
                              "(or the solver's iterate) outgrew it; its norm grows as lam "
                              "falls on nearly separable data: give a larger lam")
        if deadline is not None and time.perf_counter() + SECONDS_BUILD * nodes > deadline:
            raise Overtime(f"its next quadrature rule, of {nodes:.3g} nodes, built and "
                           "evaluated once, would have ended past it")
        (xs, ws), (x1, w1), (x2, w2) = (axis_rule(k) for k in self.keys)
        need = self.bytes(2.0 * sigmoid(kappa * xs) * ws, w1, w2)
        if need > MAX_RULE3_BYTES:
            raise SolverError(f"logistic fine-tuning: a quadrature rule of {nodes:.3g} nodes "
                              f"(feature scales {max(kappa, scales[0]):.3g}, {scales[1]:.3g}, "
                              f"{scales[2]:.3g}) would take about {need / 1e9:.2g} GB of "
                              f"memory, beyond {MAX_RULE3_BYTES / 1e9:g} GB: the solution "
                              "outgrew the rules that fit; its norm grows as lam falls on "
                              "nearly separable data: give a larger lam")
        weight = (2.0 * sigmoid(kappa * xs)[:, None, None] * ws[:, None, None]
                  * w1[None, :, None] * w2[None, None, :])
        keep = np.nonzero(weight > self.PRUNE * weight.max())
        self.weight = weight[keep]
        self.s, self.g1, self.g2 = xs[keep[0]], x1[keep[1]], x2[keep[2]]
        # z_g depends on (s, g_1) only: solved once per pair, then gathered.
        self.pair = keep[0] * x1.size + keep[1]
        self.s2, self.g12 = np.repeat(xs, x1.size), np.tile(x1, xs.size)

    @classmethod
    def bytes(cls, w0, w1, w2) -> float:
        """Bytes of building the rule with axis weights ``w0`` (label weight included), ``w1``,
        ``w2`` and one ``moments`` (``BYTES_*``); its kept nodes counted without the tensor."""
        pair = np.outer(w0, w1).ravel()
        floor = cls.PRUNE * pair.max() * w2.max()
        kept = np.sum(w2.size - np.searchsorted(np.sort(w2), floor / pair, side="right"))
        return BYTES_NODE * pair.size * w2.size + BYTES_KEPT * kept

    #: ``prox_g``'s view and values, ``prox_h``'s last points (class defaults: a rule built
    #: from its arrays alone starts without them).
    _g_key = _z_g = _g_side = _t = None

    def prox_g(self, view):
        """``z_g`` on the nodes: it depends on the global model's view only, so it is solved
        once per view (a root solve evaluates ``moments`` at one view many times)."""
        key = (view.A_g, view.nu_g, view.mu_g)
        if self._g_key != key:
            self._z_g = prox_logistic(view.A_g * self.s2 + view.nu_g * self.g12,
                                      view.mu_g)[self.pair]
            self._g_key, self._g_side = key, None
        return self._z_g

    def g_side(self, view):
        """``(p_g, h_g, k_g)`` of ``moments`` at ``z_g = prox_g(view)``, kept with it: a root
        solve evaluates ``moments`` at one view many times."""
        z_g = self.prox_g(view)
        if self._g_side is None:
            p_g = sigmoid(-z_g)                       # -l'(z_g), label folded
            h_g = p_g * (1.0 - p_g)
            self._g_side = p_g, h_g, 1.0 / (1.0 + view.mu_g * h_g)
        return self._g_side

    def prox_h(self, v, mu):
        """``z_h = prox_{mu l}(v)`` on the nodes, each call started from the previous call's
        points (``prox.prox_near``: a Halley step or two while the solver moves a little;
        the same stopping rule, to rounding level)."""
        return self.prox_h_p(v, mu)[0]

    def prox_h_p(self, v, mu):
        """``(z_h, sigmoid(-z_h))``: ``prox_h`` and the sigmoid ``prox_near`` evaluates there."""
        start = self._t if self._t is not None and self._t.size == v.size else None
        t, p = prox_near(v[None, :, None], np.full((1, 1, 1), float(mu)), start)
        # Never a NaN start (one at a NaN iterate made every later prox on this rule NaN).
        self._t = t if np.isfinite(t).all() else None
        return t[0, :, 0], p[0, :, 0]

    @classmethod
    def at(cls, view, n: int, y, margin: float = SCALE_MARGIN, deadline=None):
        """The rule for the margins at ``y`` (``moments``): scales ``max |A|``, the largest
        ``g_1`` coefficient and the ``g_2`` coefficient, times ``margin``; ``deadline.Overtime``
        when building it and one evaluation would end past ``deadline`` (``SECONDS_BUILD``)."""
        c1, c2 = _coefficients(y, view)
        scales = (margin * max(abs(view.A_g), abs(y[0])), margin * max(view.nu_g, abs(c1)),
                  margin * c2)
        keys = tuple(axis_key(sc, n, PANEL_BASE, GH_MAX)
                     for sc in (max(view.kappa, scales[0]), scales[1], scales[2]))
        return remembered((cls, view.kappa, n, keys), lambda: cls(view.kappa, n, scales, deadline))

    def expect(self, values):
        # Not np.dot: a BLAS call per expectation costs more than it saves here.
        return float(np.sum(self.weight * values))


@dataclass(frozen=True)
class GlobalView:
    """Block i's view of the global model: ``A_g``, ``nu_g``, ``mu_g``; ``kappa = ||w_i||``,
    ``gamma = gamma_i``."""

    A_g: float
    nu_g: float
    mu_g: float
    kappa: float
    gamma: float


def _coefficients(y, view: GlobalView):
    """``(c1, c2)``: ``omega_h``'s coefficients of ``g_1`` and ``g_2`` (module docstring)."""
    c1 = y[3] / view.nu_g
    nu_h = np.exp(np.clip(y[4], -60.0, 30.0))
    return c1, np.sqrt(max(nu_h * nu_h - c1 * c1, 1e-300))


def moments(y, view: GlobalView, lam: float, rule: Rule3):
    """The expectations of steps 2-4 at ``y = (A_h, log mu_h, log kappa_hg, nu_gh, log nu_h)``."""
    A_h, nu_gh = y[0], y[3]
    mu_h, k_hg, nu_h = np.exp(np.clip(y[[1, 2, 4]], -60.0, 30.0))
    c1, c2 = _coefficients(y, view)
    p_g, h_g, k_g = rule.g_side(view)         # p_g = -l'(z_g), label folded
    omega_h = A_h * rule.s + c1 * rule.g1 + c2 * rule.g2
    z_h, p_h = rule.prox_h_p(omega_h + k_hg * p_g, mu_h)
    h_h = p_h * (1.0 - p_h)
    k_h = 1.0 / (1.0 + mu_h * h_h)
    hk = h_h * k_h          # (the products below as written, left to right: the same rounding)
    E = rule.expect
    return dict(mu_h=mu_h, k_hg=k_hg, nu_h=nu_h, A_h=A_h, nu_gh=nu_gh,
                D_h=E(hk), D_x=E(hk * k_g), D_hg=E(hk * h_g * k_g),
                E3=E(p_h * rule.s), Q_h=E((mu_h * p_h) ** 2) / view.gamma,
                Q_gh=E(view.mu_g * p_g * mu_h * p_h) / view.gamma)


def residuals(y, view: GlobalView, lam: float, rule: Rule3):
    m = moments(y, view, lam, rule)
    rho_h = (lam + m["k_hg"] * m["D_hg"]) / (lam + m["D_h"])
    nu_g2 = view.nu_g ** 2
    return np.array([
        m["mu_h"] * (lam + m["D_h"]) / view.gamma - 1.0,
        m["k_hg"] * (lam + m["D_x"]) / (lam * view.mu_g) - 1.0,
        # Divided by max(1, lam): unscaled, its rounding floor (lam times that of A_h)
        # exceeds TOL beyond lam ~ 1e5 (the nearly-FedAvg end).
        (lam * (m["A_h"] - view.A_g) - m["E3"]) / max(1.0, lam),
        (m["nu_gh"] - (rho_h * nu_g2 + m["Q_gh"])) / nu_g2,
        0.5 * np.log((rho_h ** 2 * nu_g2 + 2 * rho_h * m["Q_gh"] + m["Q_h"])) - y[4],
    ])


def _root(y0, view, lam, rule, memory=None, deadline=None):
    from scipy.optimize import root

    # A trial point beyond the prox's reach (its SolverError) fails this root, not the call.
    fun = by_deadline(residuals, deadline)
    try:
        out = None if memory is None else memory.root(lambda y: fun(y, view, lam, rule), y0,
                                                      rule.n, TOL)
        if out is not None:
            return out
        sol = root(fun, y0, args=(view, lam, rule), method="hybr", options={"xtol": 1e-12})
    except SolverError:
        return np.asarray(y0, float), np.inf, 0
    y = sol.x
    if not np.all(np.isfinite(y)):
        return y, np.inf, sol.nfev
    return y, float(np.max(np.abs(residuals(y, view, lam, rule)))), sol.nfev


def _root_resolved(y0, view, lam, nodes, memory=None, deadline=None):
    """``_root`` on a rule resolving the margins' scales at the solution
    (``gaussian.solve_resolved``): ``(y, err, nfev, rule)``; ``memory``: a
    ``warm.JacobianMemory`` carried along a grid; ``deadline.Overtime`` past ``deadline``."""
    (y, err, nfev), rules = solve_resolved(
        lambda y, rules: _root(y, view, lam, rules[0], memory, deadline),
        lambda y, margin=SCALE_MARGIN: [Rule3.at(view, nodes, y, margin, deadline)],
        np.asarray(y0, float))
    return y, err, nfev, rules[0]


def _start(view: GlobalView, lam: float):
    """Large-lam start: ``w_h`` near ``w_g``."""
    mu_h = view.gamma / (lam + 0.2)
    return np.array([view.A_g, np.log(mu_h), np.log(view.mu_g * lam / (lam + 0.2)),
                     view.nu_g ** 2, np.log(view.nu_g)])


@dataclass(frozen=True)
class FinetuneState:
    """``w_h``'s view: ``A_h`` along ``e``, ``nu_h`` the rest's norm, ``nu_gh`` the rest's
    overlap with ``w_g``'s rest; ``mu_h``, ``kappa_hg``; solver diagnostics."""

    A_h: float
    nu_h: float
    nu_gh: float
    mu_h: float
    kappa_hg: float
    D_x: float
    iterations: int
    residual: float
    #: The root on the path rule (``moments``' unknowns): a neighbouring point's warm start.
    path_y: np.ndarray = None


def solve_ladder(root, start, lam: float, what: str, y0=None):
    """The fine-tuning fixed point at ``lam``, the path both ``solve_finetune`` and the
    spectral form take: with the coarse rule ``PATH_NODES`` directly from ``y0`` (a
    neighbouring grid point's path root) when given, else from the large-lam start (enough on
    the issue's grid), or, failing that, by continuation in ``lam`` from ``max(lam, 100)`` by
    factors of 10; then the quadrature ladder ``NODES3`` (two consecutive rules must agree).

    Parameters
    ----------
    root : callable
        ``root(y0, lam, nodes) -> (y, residual, evaluations, rule)``.
    start : callable
        ``start(lam) -> y0``, the large-lam starting point.
    lam : float
    what : str
        The solve named in the errors.

    Returns
    -------
    (y, rule, residual, evaluations) at the finest rule reached, and the path root.

    Raises
    ------
    SolverError
        A step does not reach the residual ``TOL``, or the quadrature does not settle.
    """
    y, err, nfev, _ = root(start(lam) if y0 is None else y0, lam, PATH_NODES)
    if not err <= TOL and y0 is not None:
        y, err, n, _ = root(start(lam), lam, PATH_NODES)
        nfev += n
    if not err <= TOL:
        lams = ladder(lam)
        y, done = start(lams[0]), None
        todo = lams[::-1]
        while todo:
            lam_k = todo.pop()
            y_k, err, n, _ = root(y, lam_k, PATH_NODES)
            nfev += n
            if err <= TOL:
                y, done = y_k, lam_k
                continue
            if done is None or done / lam_k < 1.01:
                raise SolverError(f"{what}: no convergence at lam = {lam_k:g} "
                                  f"(residual {err:.2e})")
            # A step of 10 too long (toward a near-zero centre, global_lam = 1e3: no
            # convergence at lam = 10 from 100): halve it in log lam, then go on.
            todo += [lam_k, float(np.sqrt(done * lam_k))]
    path_y = y
    for nodes in NODES3:
        y_fine, err, n, fine = root(y, lam, nodes)
        nfev += n
        if err <= TOL and np.all(np.abs(y_fine - y) <= QUAD_RTOL * (1.0 + np.abs(y))):
            break
        y = y_fine
    else:
        raise SolverError(f"{what}: quadrature not converged with the ladder's finest level "
                          f"{NODES3[-1]}")
    check_solution_logs(y_fine[[1, 2, 4]], what, lam=lam)
    return y_fine, fine, err, nfev, path_y


def solve_finetune(view: GlobalView, lam: float, start=None, memory=None,
                   deadline=None) -> FinetuneState:
    """The fixed point of steps 1-4 for ``lam > 0``: with a coarse rule, directly from
    ``start`` (a neighbouring grid point's ``path_y``) or the large-lam start or, failing
    that, by continuation in ``lam`` from ``max(lam, 100)`` by factors of 10; then the
    quadrature ladder ``NODES3`` (two consecutive rules must agree): ``solve_ladder``.
    ``memory``: a ``warm.JacobianMemory`` of the grid, tried before hybr at ``lam``;
    ``deadline``: ``time.perf_counter``'s, past which ``deadline.Overtime`` (None: no limit).

    Raises
    ------
    SolverError
        A step does not reach the residual ``TOL``, or the quadrature does not settle.
    """
    y, fine, err, nfev, path_y = solve_ladder(
        lambda y0, lam_k, nodes: _root_resolved(y0, view, lam_k, nodes,
                                                memory if lam_k == lam else None, deadline),
        lambda lam_k: _start(view, lam_k), lam, "logistic fine-tuning", start)
    m = moments(y, view, lam, fine)
    return FinetuneState(float(y[0]), float(m["nu_h"]), float(y[3]), float(m["mu_h"]),
                         float(m["k_hg"]), float(m["D_x"]), nfev, err, path_y)
