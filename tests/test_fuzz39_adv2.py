"""Issue 32, fuzz39 (adv2): what this fuzz found, each test failing before."""

from types import SimpleNamespace

import pytest


# --- F1: predict's budget under a shared spectrum is quadratic in the distinct clients ---------

def test_predict_budget_under_a_spectrum_grows_like_clients_squared():
    """FTFA under two-point:1,4,0.3 took 10.3 s of CPU at 16,000 distinct clients (3.06 s at
    8000: ``finite_clients.sigma.trace_coefficients`` builds targets x groups arrays), estimated
    2.1 s by a + b M; 100,000 distinct clients, estimated 10 s, ran for minutes. 20,000 were
    estimated 2 s, now 22 s (refused at --max-minutes 0.25); covariate shift keeps its fit."""
    from riskcalc.cli.predict import _finite_clients_budget

    m = 20000
    fed = {"gamma": [0.3 + 2.7 * j / m for j in range(m)], "r": [1.0] * m, "sigma": [1.0] * m}
    args = SimpleNamespace(max_minutes=0.25)
    for method in ("fedavg", "ftfa", "rtfa"):
        with pytest.raises(ValueError, match=f"predict {method} over 20000 distinct clients "
                                             r"with a covariance spectrum: estimated 2[24] s"):
            _finite_clients_budget(args, SimpleNamespace(method=method,
                                                         spectrum="two-point:1,4,0.3"), fed)
    shift = {**fed, "spectra": ["two-point:1,4,0.3"] * m}
    _finite_clients_budget(args, SimpleNamespace(method="ftfa", spectrum=None), shift)
