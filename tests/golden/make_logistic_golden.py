"""Golden values of the logistic CGMT fixed point, at 30+ digits with mpmath.

A second, independently coded route to the fixed point of ``riskcalc.logistic.fixed_point``
(equations (E1)-(E4) of its docstring), in 34-digit arithmetic:

* Gauss-Hermite nodes from ``mpmath.gauss_quadrature`` (physicists' weight, rescaled), the
  label summed explicitly over y = +-1 with ``P(y | s) = sigmoid(y kappa s)`` (no symmetry
  folding), the prox of ``log(1 + e^(-y t))`` by Newton in mpmath;
* (E4) in its form before Stein's lemma, ``b (lam + E[l'(t) g] / rho) = lam C``;
* the four unknowns ``(a, b, q, mu)`` by Newton with a forward-difference Jacobian (step
  1e-14), from the float solution;
* convergence in the number of nodes: the fixed point with ``N`` and ``N + 40`` nodes per
  dimension; the digits where they agree are kept (``digits`` in the file).

Run ``python tests/golden/make_logistic_golden.py`` (50 minutes on a loaded 2-core machine)
to rewrite ``tests/golden/logistic_limits.json``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import mpmath as mp
import numpy as np

mp.mp.dps = 34

# (gamma, signal, r, lam): moderate margins, where Gauss-Hermite converges to 30 digits.
POINTS = [(1.0, 0.5, 1.0, 1.0), (0.5, 0.0, 1.0, 0.3), (0.2, 0.0, 0.5, 0.0), (2.0, 1.0, 0.5, 0.5)]
NODES = (120, 160)


def sig(x):
    return 1 / (1 + mp.exp(-x))


def prox(v, mu, y, t0):
    """argmin_t log(1 + e^(-y t)) + (t - v)^2 / (2 mu), Newton from the float guess t0."""
    t = mp.mpf(t0)
    for _ in range(60):
        p = sig(-y * t)
        step = (t - v - mu * y * p) / (1 + mu * p * (1 - p))
        t -= step
        if abs(step) < mp.mpf(10) ** (-mp.mp.dps + 2) * (1 + abs(t)):
            return t
    raise RuntimeError("prox did not converge")


def system(x, kappa, gamma, lam, c_e, C, nodes):
    a, b, q, mu = x
    rho = mp.sqrt(b * b + q * q)
    D = E2 = E3 = G = mp.mpf(0)
    for s, ws in nodes:
        for g, wg in nodes:
            v = a * s + rho * g
            w = ws * wg
            for y in (1, -1):
                py = sig(y * kappa * s)
                t = prox(v, mu, y, float(v) + float(mu) * y * 0.5)
                p = sig(-y * t)
                h = p * (1 - p)
                dl = -y * p                       # l'(t) for label y
                D += w * py * h / (1 + mu * h)
                E2 += w * py * (mu * dl) ** 2
                E3 -= w * py * dl * s
                G += w * py * dl * g
    return [mu * (lam + D) - gamma, E2 - gamma * q * q, lam * (a - c_e) - E3,
            b * (lam + G / rho) - lam * C]


def solve(point, x0, n):
    gamma, signal, r, lam = (mp.mpf(v) for v in point)
    kappa = mp.sqrt(signal ** 2 + r ** 2)
    c_e, C = (signal ** 2 / kappa, signal * r / kappa) if kappa > 0 else (0, 0)
    X, W = mp.gauss_quadrature(n, "hermite")
    nodes = [(mp.sqrt(2) * xk, wk / mp.sqrt(mp.pi)) for xk, wk in zip(X, W)]
    x = mp.matrix([mp.mpf(v) for v in x0])
    for _ in range(3):
        f = mp.matrix(system(list(x), kappa, gamma, lam, c_e, C, nodes))
        if mp.norm(f, mp.inf) < mp.mpf(10) ** -30:
            break
        J = mp.matrix(4, 4)
        hstep = mp.mpf(10) ** -14
        for j in range(4):
            xj = x.copy()
            xj[j] += hstep
            fj = system(list(xj), kappa, gamma, lam, c_e, C, nodes)
            for i in range(4):
                J[i, j] = (fj[i] - f[i]) / hstep
        x = x - mp.lu_solve(J, f)
    res = mp.norm(mp.matrix(system(list(x), kappa, gamma, lam, c_e, C, nodes)), mp.inf)
    return x, kappa, res


def main(path):
    from riskcalc.logistic.fixed_point import solve_fixed_point

    out = []
    for point in POINTS:
        xf = solve_fixed_point(*point)[0]
        x0 = [xf[0], xf[1], float(np.exp(xf[2])), float(np.exp(xf[3]))]
        sols = [solve(point, x0, n) for n in NODES]
        (x1, kappa, res1), (x2, _, res2) = sols
        diff = max(abs(x1[i] - x2[i]) / (1 + abs(x2[i])) for i in range(4))
        digits = int(-mp.log10(diff)) if diff > 0 else mp.mp.dps
        a, b, q, mu = x2
        risk = (a - kappa) ** 2 + b ** 2 + q ** 2
        rec = dict(gamma=point[0], signal=point[1], r=point[2], lam=point[3], digits=digits,
                   residual=mp.nstr(max(res1, res2), 3),
                   **{k: mp.nstr(v, 32) for k, v in
                      dict(a=a, b=b, q=q, mu=mu, risk=risk).items()})
        print(rec, flush=True)
        out.append(rec)
    Path(path).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).with_name("logistic_limits.json"))
