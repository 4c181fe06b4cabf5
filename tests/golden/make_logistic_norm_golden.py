"""Golden values of the logistic moments at large signal norms, with mpmath (an independent route).

``riskcalc.logistic.engine.gaussian.Rule.moments`` evaluates, on a tensor rule over ``(s, g)``,

    D  = E[2 sigmoid(kappa s) l''(t) / (1 + mu l''(t))],
    E2 = E[2 sigmoid(kappa s) (mu sigmoid(-t))^2],
    E3 = E[2 sigmoid(kappa s) sigmoid(-t) s],      t = prox_{mu l}(a s + rho g).

Here the same expectations go another way: in the margin ``v = a s + rho g = N u``
(``N = sqrt(a^2 + rho^2)``, ``u ~ N(0, 1)``), with ``s | u ~ N(a u / N, (rho / N)^2)``,

    E[2 sigmoid(kappa s) s^j F(t)] = E_u[F(t(N u)) L_j(u)],
    L_j(u) = E_w[2 sigmoid(kappa m) m^j],   m = a u / N + (rho / N) w,

so the proximal map is a function of one variable. Both integrals are composite Gauss-Legendre
rules in mpmath (``GaussLegendre.calc_nodes``, 24 nodes a panel, ``mp.dps = 20``): ``u`` over
``[-9, 9]`` in panels of width ``piece`` (the integrand's poles sit ``~pi / N`` from the real
axis), ``w`` over ``[-9, 9]`` split at the sigmoid's centre ``w = -a u / rho`` with panels halving
toward it (its poles sit ``pi N / (kappa rho)`` away); the prox by bisection and Newton in
mpmath. Two piece widths must agree (``digits``: the agreed digits).

Run ``python tests/golden/make_logistic_norm_golden.py`` (about ten minutes) to rewrite
``tests/golden/logistic_norm_moments.json``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import mpmath as mp

mp.mp.dps = 20
# (kappa, a, rho, mu): fixed points of the oracle-centre RTFA system at ||w_i|| ~ 10
# (S = 10, r = 1, gamma = 1, lam = 0.1), local ridge at ||w_i|| = 10, and two at 20 (a well
# aligned estimate; a wide one).
POINTS = [(10.0, 9.97, 1.13, 8.7), (10.0, 1.04, 1.11, 5.9), (20.0, 18.0, 3.0, 10.0),
          (20.0, 5.0, 12.0, 8.0)]
PIECE = (0.5, 0.25)
GL = mp.calculus.quadrature.GaussLegendre(mp.mp)
NODES = GL.calc_nodes(4, mp.mp.prec + 20)          # 24 nodes, weights on [-1, 1]


def sig(x):
    return 1 / (1 + mp.exp(-x))


def panels(edges, f):
    """Sums over the panels ``edges`` of the 24-node Gauss-Legendre rule of ``f`` (a tuple)."""
    total = None
    for lo, hi in zip(edges[:-1], edges[1:]):
        half, mid = (hi - lo) / 2, (hi + lo) / 2
        for x, w in NODES:
            vals = f(mid + half * x)
            total = [half * w * v for v in vals] if total is None else \
                [t + half * w * v for t, v in zip(total, vals)]
    return total


def graded(centre, levels, L=9):
    """Edges on ``[-L, L]``: panels of width 2, and ``levels`` panels halving toward
    ``centre`` (the sigmoid's poles are at least 1 away from every panel beyond those)."""
    pts = {mp.mpf(-L), mp.mpf(L), centre}
    for k in range(levels):
        for sgn in (-1, 1):
            pts.add(centre + sgn * mp.mpf(2) ** -k)
    pts |= {mp.mpf(x) for x in range(-L + 1, L, 2)}
    return sorted(p for p in pts if -L <= p <= L)


def prox(v, mu):
    """argmin_t log(1 + e^-t) + (t - v)^2 / (2 mu): bisection, then Newton."""
    lo, hi = v, v + mu
    for _ in range(40):
        mid = (lo + hi) / 2
        if mid - v - mu * sig(-mid) < 0:
            lo = mid
        else:
            hi = mid
    t = (lo + hi) / 2
    for _ in range(50):
        p = sig(-t)
        step = (t - v - mu * p) / (1 + mu * p * (1 - p))
        t -= step
        if abs(step) < mp.mpf(10) ** (-mp.mp.dps + 3) * (1 + abs(t)):
            return t
    raise RuntimeError("prox did not converge")


def moments(kappa, a, rho, mu, piece):
    kappa, a, rho, mu = (mp.mpf(x) for x in (kappa, a, rho, mu))
    N = mp.sqrt(a * a + rho * rho)
    # Grade the w-panels down to a quarter of the sigmoid's width N / (kappa rho).
    levels = max(1, int(mp.ceil(mp.log(4 * kappa * rho / N, 2))))

    def outer(u):
        t = prox(N * u, mu)
        p = sig(-t)
        h = p * (1 - p)
        edges = graded(-a * u / rho, levels)

        def label(w):
            m = (a * u + rho * w) / N
            f = mp.npdf(w) * 2 * sig(kappa * m)
            return f, f * m
        L0, L1 = panels(edges, label)
        f = mp.npdf(u)
        return f * h / (1 + mu * h) * L0, f * (mu * p) ** 2 * L0, f * p * L1

    n = int(mp.nint(18 / piece))
    edges = [mp.mpf(-9) + k * mp.mpf(piece) for k in range(n + 1)]
    total = [mp.mpf(0)] * 3
    for lo, hi in zip(edges[:-1], edges[1:]):
        half, mid = (hi - lo) / 2, (hi + lo) / 2
        for x, w in NODES:
            vals = outer(mid + half * x)
            total = [tot + half * w * v for tot, v in zip(total, vals)]
    return total


def main(path):
    rows = []
    for kappa, a, rho, mu in POINTS:
        coarse, fine = (moments(kappa, a, rho, mu, h) for h in PIECE)
        digits = min(int(-mp.log10(abs(x - y) / abs(y) + mp.mpf(10) ** -29)) for x, y in
                     zip(coarse, fine))
        rows.append(dict(kappa=kappa, a=a, rho=rho, mu=mu, digits=digits,
                         **{k: mp.nstr(v, 25) for k, v in zip(("D", "E2", "E3"), fine)}))
        print(rows[-1], flush=True)
    Path(path).write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else
         Path(__file__).parent / "logistic_norm_moments.json")
