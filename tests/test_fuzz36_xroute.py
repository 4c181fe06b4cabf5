"""Issue 32, fuzz36 (xroute): what this fuzz found, each test failing before."""

import pytest

import riskcalc


def test_pfedme_routes_agree_near_pooled_n_equal_d_with_many_clients():
    """F1: 2000 clients at gamma = 2000 / (1 + 1e-4) (pooled N / d = 1 + 1e-4): pFedMe's
    operator-valued route (covariate shift with equal spectra) stopped its shifts' Newton
    iteration at a residual of 1e-13 M, 4e-6 off the Sigma = I route's risk, silently (the
    risk times N/d - 1 is smooth in it: the Sigma = I value is the one on that curve)."""
    m, gamma = 2000, 2000 / (1 + 1e-4)
    args = dict(sigma=0.5, r=1.0, lam=1.0)
    iso = riskcalc.limit("pfedme", gamma=gamma, clients=m, **args).risk
    shift = riskcalc.clients_limit("pfedme", gamma=[gamma] * m, spectra=["identity", "scaled:1"]
                                   * (m // 2), **args).risk[0]
    assert shift == pytest.approx(iso, rel=5e-7)
