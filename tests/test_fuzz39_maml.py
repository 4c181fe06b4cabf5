"""Issue 32, fuzz39 (maml): what this fuzz found, each test failing before."""

import pytest

import riskcalc

TWO_POINT = "two-point:1,4,0.3"


def test_maml_fl_heavy_clients_at_pooled_n_equal_d_solve_from_scratch(monkeypatch):
    """F1: weights [1e-3, 1, 1] at gamma 2 under a spectrum: the equal-weight N/d - 1 is 0.5,
    so the route warm-started from the last solution, but the two heavy clients alone sit at
    pooled N = d (the weighted N/d - 1 is 0.012) and the risks moved 3.2e-9 relative between
    a cold solve at alpha 0.1 and one after alpha 0.05 (1e-2: 4e-11). The weighted N/d - 1 now
    triggers the near-pooled rule too: from scratch, checked by a second path."""
    from riskcalc.linear.finite_clients import maml_sigma

    def warm(*args):
        raise AssertionError("warm-started near pooled N = d")

    monkeypatch.setattr(maml_sigma, "_warm", warm)
    out = riskcalc.clients_limit("maml_fl", gamma=[2.0, 2.0, 2.0], r=1.0, sigma=1.0,
                                 alpha=0.05, weights=[1e-3, 1.0, 1.0], spectrum=TWO_POINT)
    assert out.risk[1] == pytest.approx(39.25208953 + 25.46947607, rel=1e-8)
