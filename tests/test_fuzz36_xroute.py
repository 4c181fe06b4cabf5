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


@pytest.mark.parametrize("method, tuning, cov", [
    ("pfedme", {"lam": 0.3}, {}),
    ("pfedme", {"lam": 0.3}, {"spectra": ["identity", "scaled:1"] * 2}),
    ("maml_fl", {"alpha": 0.1}, {}),
    ("maml_fl", {"alpha": 0.1}, {"spectrum": "two-point:1,4,0.3"})])
def test_own_objectives_refuse_where_pooled_n_is_too_near_d(method, tuning, cov):
    """F2: 4 clients at N/d = 1 + 2e-12 (above check_pooled's 1e-12): pFedMe's risk under
    shift with equal spectra was 4.5% off (the Sigma = I route 0.2%), FedAvg's closed forms
    1e-5 (the inputs' rounding); MAML-FL's 4e-6 at 1e-9 (under a spectrum: 15 s, then a
    LinAlgError). Their errors grow like M eps / (N/d - 1): refused beyond 1e-8, saying which
    N/d - 1 answers."""
    m = 4
    args = dict(gamma=[m / (1 + 2e-12)] * m, sigma=0.5, r=1.0, **tuning, **cov)
    with pytest.raises(riskcalc.SolverError, match=r"loses its digits where M eps / \(N/d - 1\) "
                                                   r"is large.*here M = 4 clients and N/d - 1 = "
                                                   r"2e-12.*up to 1e-08, here from N/d - 1 = "
                                                   r"8\.88e-08"):
        riskcalc.clients_limit(method, **args)
    if "spectrum" not in cov:       # MAML-FL under a spectrum: see the report (slow there)
        assert riskcalc.clients_limit(method, **dict(args, gamma=[m / (1 + 1e-7)] * m)).risk[0] > 0


@pytest.mark.parametrize("cov", [{"spectrum": "two-point:1,4,0.3"},
                                 {"spectra": ["two-point:1,4,0.3", "identity", "identity"]}])
def test_rtfa_at_lam_zero_answers_a_client_at_gamma_one_as_ftfa(cov):
    """F3: RTFA with lam = 0 for a client at gamma = 1 answered with Sigma = I (FTFA's bias 0
    and infinite variance) but under a spectrum or shift was refused with the engine's
    "a projection block (eta = 0) needs gamma > 1 and a positive shift; got gamma = 1"."""
    fed = dict(gamma=[1.0, 3.0, 0.5], sigma=[0.5, 0.5, 0.0], r=1.0, **cov)
    rtfa = riskcalc.clients_limit("rtfa", lam=0.0, **fed)
    ftfa = riskcalc.clients_limit("ftfa", **fed)
    assert rtfa.bias.tolist() == pytest.approx(ftfa.bias.tolist(), rel=1e-12)
    assert rtfa.variance.tolist() == pytest.approx(ftfa.variance.tolist(), rel=1e-12)
    assert rtfa.variance[0] == float("inf") and rtfa.variance[2] == 0.0


@pytest.mark.parametrize("gamma", [2.0, 1.0])
def test_rtfa_steps_at_lam_zero_from_a_finite_m_model_are_ftfa_steps(gamma):
    """F4: RTFA's k steps at lam = 0 are FTFA's; from the FedAvg model over 3 clients with
    Sigma = I (the quadrature route) its R_k = (lam + s q^k) / (s + lam) was 0 / 0 on the
    null space of S and counted as 0 (R = 1 there): risk 0.299 for FTFA's 2.424 at gamma 2,
    silently; at gamma = 1 the quadrature failed. Under a spectrum (pencils) they agreed."""
    args = dict(gamma=gamma, sigma=0.5, r=1.0, steps=5, step_size=0.05, clients=3)
    rtfa = riskcalc.steps_limit("rtfa", lam=0.0, **args)
    ftfa = riskcalc.steps_limit("ftfa", **args)
    assert rtfa.bias == pytest.approx(ftfa.bias, rel=1e-12)
    assert rtfa.variance == pytest.approx(ftfa.variance, rel=1e-12)


@pytest.mark.parametrize("method, tuning", [("pfedme", {"lam": 0.3}), ("maml_fl", {"alpha": 0.1})])
@pytest.mark.parametrize("spectrum", [None, "two-point:1,4,0.3"])
def test_one_client_is_its_own_least_squares_near_gamma_one(method, tuning, spectrum):
    """F5: with one client (clients=1, gamma < 1) every method is the client's own least
    squares (bias 0, variance sigma^2 gamma / (1 - gamma)); at gamma = 1 - 1e-9 pFedMe's
    route under a spectrum returned 49 times that risk, silently, and with Sigma = I pFedMe
    and MAML-FL failed at 1 - 1e-6 ("give a larger lam" at lam = 0.3)."""
    for gamma in (1 - 1e-6, 1 - 1e-9):
        res = riskcalc.limit(method, gamma=gamma, sigma=0.5, r=1.0, clients=1,
                             spectrum=spectrum, **tuning)
        assert res.bias == 0.0
        assert res.variance == pytest.approx(0.25 * gamma / (1 - gamma), rel=1e-12)
