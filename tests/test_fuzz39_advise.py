"""Issue 32, fuzz39 (advise): what this fuzz found, each test failing before.

The area was advise's speed at 100-1000 clients (a speed task: ``benchmarks/
bench_advise_decision.py`` checks the decisions against a baseline tree, and
``benchmarks/bench_advise_measured.txt`` holds the measurements); these tests pin the
mechanisms."""

import numpy as np
import pytest

from riskcalc.linear.engine import mp_quadrature as mq


def _chebyshev_u(gamma, fun, n):
    """tau(fun(S)) for S of the Marchenko-Pastur law of ratio gamma <= 1 by the plain n-node
    Chebyshev-U rule of the s route, C = F(0) (``mp_quadrature``'s module docstring)."""
    j = np.arange(1, n + 1) * (np.pi / (n + 1))
    x, w = np.cos(j), np.sin(j) ** 2 * (np.pi / (n + 1))
    s = 1 + gamma + 2 * np.sqrt(gamma) * x
    c = float(fun(np.zeros(1))[0])
    return c + 2 / np.pi * np.sum(w * (fun(s) - c) / s)


def test_quadrature_rules_reuse_the_previous_rules_nodes(monkeypatch):
    """F2: each doubling of mp_expect's rule (32, 64, ... nodes) evaluated the integrands
    at every node again: 96 node evaluations for the 32 / 64 rules on which every quadrature
    of advise's pFedMe and MAML-FL gradients stops at 1000 clients. The rules of 31, 63, ...
    nodes hold the previous rule's nodes: 31 + 32 = 63 evaluations for the same test."""
    seen = []

    def fun(s):
        seen.append(s.shape[-1])
        return (1.0 / (s + 0.3), s / (s + 0.3) ** 2)

    monkeypatch.setattr(mq, "_QUAD_START", 31)     # the start of F2 (F4 starts lower)
    got = mq.mp_expect(np.array([0.5]), fun)
    assert sum(seen[1:]) == 63 and seen[1:] == [31, 32]    # seen[0]: F(0)
    # The nested sum equals the plain 63-node rule (to rounding) and the exact value.
    for k, f in enumerate((lambda s: 1.0 / (s + 0.3), lambda s: s / (s + 0.3) ** 2)):
        assert got[k, 0] == pytest.approx(_chebyshev_u(0.5, f, 63), rel=1e-15, abs=1e-15)
    # tau((S + u)^-1): the positive root of gamma u m^2 + (1 - gamma + u) m - 1 = 0.
    g, u = 0.5, 0.3
    m = (-(1 - g + u) + np.sqrt((1 - g + u) ** 2 + 4 * g * u)) / (2 * g * u)
    assert got[0, 0] == pytest.approx(m, rel=1e-14)
    # With per-row parameters rows stop at their own rule; the nested sums follow the rows
    # still refined (a pole near the spectrum needs more rules than the others).
    gam = np.array([0.5, 0.5, 0.5])
    u = np.array([1.0, 1e-3, 0.2])[:, None]
    got = mq.mp_expect(gam, lambda s, uu: (1.0 / (s + uu),), u)[0]
    m = (-(1 - gam + u[:, 0]) + np.sqrt((1 - gam + u[:, 0]) ** 2 + 4 * gam * u[:, 0])) / (
        2 * gam * u[:, 0])
    np.testing.assert_allclose(got, m, rtol=1e-12)


def test_lost_rows_size_is_the_whole_rules():
    """F2: the size of the terms of a row near losing to rounding sums the whole last rule
    (every rule's new nodes, each weight halved at each later rule), as the plain rule."""
    rng = np.random.default_rng(1)
    x1, w1 = mq._nodes(31)
    x2, w2 = mq._nodes(63, new=True)
    x3, w3 = mq._nodes(127, new=True)
    g1, g2, g3 = (rng.normal(size=(2, 3, x.size)) for x in (x1, x2, x3))
    d1, d2, d3 = (rng.uniform(0.5, 2, (3, x.size)) for x in (x1, x2, x3))
    # Row 1 of the first rule is dropped before the second rule: rows (0, 2) from then on.
    left = np.array([0, 2])
    parts = [(None, g1, w1 / d1), (left, g2[:, :2], (w2 / d2)[:2]),
             (left, g3[:, :2], (w3 / d3)[:2])]
    got = mq._abs_sum(parts, np.array([2]))
    x, w = mq._nodes(127)
    order = np.argsort(-np.concatenate([x1, x2, x3]))
    assert np.allclose(np.sort(np.concatenate([x1, x2, x3]))[::-1], x)
    G = np.concatenate([g1[:, 2], g2[:, 1], g3[:, 1]], axis=-1)[:, order]
    d = np.concatenate([d1[2], d2[1], d3[1]])[order]
    np.testing.assert_allclose(got[:, 0], np.abs(G) @ (w / d), rtol=1e-14)


def test_quadrature_starts_at_fifteen_nodes():
    """F4: with nested rules a quadrature costs its last rule's nodes wherever it starts; from
    31 nodes every quadrature of advise's MAML-FL gradient went to 63 (at 1000 clients, alpha
    0.02), where 15 and 31 already agree: 31 evaluations, the same value to rounding."""
    gam = np.random.default_rng(2).uniform(0.3, 0.95, 50)
    seen = []

    def fun(s):
        seen.append(s.shape[-1])
        phi = s * (1 - 0.02 * s) ** 2
        return (1.0 / (1e-3 * phi + 0.5), (phi / (1e-3 * phi + 0.5)) ** 2)

    got = mq.mp_expect(gam, fun)
    assert sum(seen[1:]) == 31                             # seen[0]: F(0)
    ref = np.array([[_chebyshev_u(g, lambda s, k=k: fun(s)[k], 255) for g in gam]
                    for k in range(2)])
    np.testing.assert_allclose(got, ref, rtol=2e-15)
