"""Paper 003 (Cheng, Chadha, Duchi, *Federated asymptotics*, ``003_4b976ddf5225c17e.txt``):
shared pieces of its checks, which live in one module per part of the paper:

* ``p003_thm12``: Thms 1-2 (Secs 3.1-3.2), the isotropic limits, the optimal lambda;
* ``p003_sec3``: Cor. 3.1 and the comparisons of Sec. 3.3 (and Sec. 6.9);
* ``p003_sec4``: Thms 3-4 (Sec. 4, MAML-FL and pFedMe), isotropic and general covariance;
* ``p003_sec6``: Sec. 6 (Def. 6.1-6.2, eqs. 15-18, the proofs' statements of Sec. 6.5,
  Lemmas 6.2, 6.3, 6.5);
* ``p003_sec5``: Sec. 3.1's gradient descent, Sec. 5's steps and experiments.

Evidence routes: the limits of Thms 1-4 / Cor. 3.1 as printed, evaluated from the
Marchenko-Pastur density by mpmath (``paper_checks.mp``); riskcalc's implementation of the same
limits; and montecarlo's finite-d simulation (exact conditional bias and variance given the
design, eq. 3) with standard errors. Finite-d allowance: the simulated traces differ from their
limits by O(1/n) (e.g. E tr (X X^T)^-1 = n/(d - n - 1) against n/(d - n)); ``SLACK / n``
relative covers it (measured <= 1.3/n).
"""

from __future__ import annotations

import riskcalc
from paper_checks.evidence import agreement, fmt, simulate
from paper_checks.mp import ridge_limits

SLACK = 3.0


def _sizes(cfg):
    return {"d": cfg.pick(200, 1000), "reps": cfg.pick(8, 24)}


def _compare_points(cfg, seed, method, quantity, points, predict):
    """Simulated ``quantity`` of ``method`` against ``predict(point)`` at each point.

    ``points`` are dicts (gamma, sigma, signal, tuning); returns (ok, summary, evidence).
    """
    ev, parts, ok = [], [], True
    for k, p in enumerate(points):
        sim = simulate(method, gamma=p["gamma"], sigma=p["sigma"], signal=p["signal"],
                       tunings=[p.get("tuning", 0.0)], seed=seed + k, **_sizes(cfg))
        pred = float(predict(p))
        a = agreement(pred, sim[quantity][:, 0], slack=SLACK / sim["n"], role="equality")
        ok &= a["ok"]
        ev.append({**p, **a, "formula": pred, "n": sim["n"],
                   "riskcalc": _riskcalc(method, p, quantity)})
        parts.append(f"{_label(p)}: formula {fmt(pred)}, sim {fmt(a['mean'])}"
                     f"±{fmt(a['se'], 2)} (z={a['zscore']:+.1f})")
    # riskcalc must implement the printed formula (a regression there changes this verdict too).
    ok &= all(abs(e["riskcalc"] - e["formula"]) <= 1e-9 * max(1.0, abs(e["formula"]))
              for e in ev)
    return ok, "; ".join(parts), {"points": ev, **_sizes(cfg)}


def _riskcalc(method, p, quantity):
    info = riskcalc.get_method(method)
    kw = {info.signal: p["signal"]}
    if info.tuning:
        kw[info.tuning] = p.get("tuning", 0.0)
    return getattr(riskcalc.limit(method, gamma=p["gamma"], sigma=p["sigma"], **kw), quantity)


def _label(p):
    s = f"g={p['gamma']:g} s={p['sigma']:g} signal={p['signal']:g}"
    return s + (f" lam={p['tuning']:.3g}" if p.get("tuning") else "")


MINNORM = [dict(gamma=2.0, sigma=0.5, signal=1.0), dict(gamma=4.0, sigma=1.0, signal=2.0)]
RIDGE = [dict(gamma=2.0, sigma=0.5, signal=1.0, tuning=0.5),
         dict(gamma=4.0, sigma=1.0, signal=1.5, tuning=0.2)]


def _bias_minnorm(p):
    return p["signal"] ** 2 * (1 - 1 / p["gamma"])


def _var_minnorm(p):
    return p["sigma"] ** 2 / (p["gamma"] - 1)


def _bias_ridge(p):
    return ridge_limits(p["gamma"], p["signal"], p["sigma"], p["tuning"])[0]


def _var_ridge(p):
    return ridge_limits(p["gamma"], p["signal"], p["sigma"], p["tuning"])[1]


TWO_POINT = riskcalc.Spectrum.two_point(1.0, 4.0, 0.5)


def _mp_risk(g, r, s, lam):
    b, v = ridge_limits(g, r, s, lam)
    return b + v
