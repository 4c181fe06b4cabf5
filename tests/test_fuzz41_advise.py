"""Issue 32, fuzz41 (advise): what this fuzz found, each test failing before."""

import json
import warnings

import numpy as np
import pytest

from riskcalc.advise import Federation, advise
from riskcalc.linear.finite_clients import own
from riskcalc.linear.finite_clients.gradient import mean_risk_gradient
from riskcalc.linear.finite_clients.own_objective import objective
from riskcalc.linear.engine.mp_quadrature import mp_expect
from riskcalc.linear.finite_clients.subordination_gradient import pfedme_shift_mean_risk_gradient
from tests.helpers import run_cli

CLIENTS = [{"name": "a", "id": 7, "gamma": 0.5, "r": 1.0, "sigma": 1.0, "se": {"r": 0.1}},
           {"name": "b", "id": 8, "gamma": 1.5, "r": 1.0, "sigma": 1.0}]


# --- F1: a bare list naming its clients --------------------------------------------------------

def test_a_bare_list_with_names_ids_and_se_is_read_as_the_versioned_object(tmp_path, capsys):
    """The file reader takes a client's name, id and se in a bare list as in the versioned
    object, but advise --clients-file (and Federation.from_file) then refused them: 'client 0
    must have r, sigma and one of gamma, n (optionally rho, spectrum); got gamma, id, name, r,
    se, sigma'. Both forms now give the same advice, the names shown."""
    bare, obj = tmp_path / "bare.json", tmp_path / "obj.json"
    bare.write_text(json.dumps(CLIENTS))
    obj.write_text(json.dumps({"fedrisk_federation": 1, "clients": CLIENTS}))
    fed = Federation.from_file(bare)
    assert fed.gamma.tolist() == [0.5, 1.5] and fed.r.tolist() == [1.0, 1.0]
    argv = ["advise", "--methods", "fedavg", "--no-progress", "--json"]
    code, out, err = run_cli(argv + ["--clients-file", bare], capsys)
    assert code == 0, err
    code2, out2, err2 = run_cli(argv + ["--federation", obj], capsys)
    assert code2 == 0, err2
    assert json.loads(out) == json.loads(out2)
    assert json.loads(out)["federation"]["names"] == ["a", "b"]


# --- F2: pFedMe's Newton start at a client's cap -------------------------------------------------

def test_pfedme_newton_starts_from_a_positive_shift_at_a_clients_cap():
    """gamma [1e100, 0.5] with equal weights (the optimal weights' search visits them): the
    FedAvg closed form's start gives the data-rich client t_l = 0, so Newton's relative steps
    divided by 0 (two RuntimeWarnings through advise) and the nested solves took ~3 s. The
    start is now at least eps / g: Newton converges, no warning, and the risks agree with the
    nested solves' (within 1e-12: the root's t_l ~ 1e-14 is fixed only to rounding of g)."""
    fed = dict(gamma=[1e100, 0.5], r=[1.0, 1.0], sigma=[1.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mean, grad_p, _ = mean_risk_gradient("pfedme", weights=[0.5, 0.5], tuning=5438.0, **fed)
    nested = 0.5 * (2.9999999999993188 + 0.9999999999995461)   # the nested solves' risks
    assert mean == pytest.approx(nested, rel=1e-12)
    assert np.all(np.isfinite(grad_p))
    gam, phi = np.array(fed["gamma"]), objective("pfedme", 5438.0)[0]
    found = own._newton(gam, np.array([0.5, 0.5]), np.ones(2), phi,
                        mp_expect(gam, lambda s: (phi(s),))[0], None)
    assert found is not None and 0.0 < found[1][1] < 1e-12     # was None (nested solves)


# --- F3: MAML-FL's Newton start for a client with tau(phi(S_l)) = 0 ------------------------------

def test_maml_newton_starts_a_client_without_curvature_at_one_over_g(monkeypatch):
    """gamma [1e100, 0.5] at alpha = 1e-100 (advise's grid: 1/alpha at the data-poor client's
    whole spectrum): tau(phi(S_l)) = 0 in floating point, so q_l = 0 and the closed form's
    start t_l = 0 * inf = nan: Newton failed on 67 of 70 solves and the nested solves took
    advise maml_fl 5.4 s (estimated 0.29 s). With b_l = 0, G_l(t) = 1/t: the start t_l = 1/g.
    Newton now converges, to the nested solves' root."""
    gam, p, count = np.array([1e100, 0.5]), np.array([5e-101, 1.0]), np.ones(2)
    phi = objective("maml_fl", 1e-100)[0]
    mean_phi = mp_expect(gam, lambda s: (phi(s),))[0]
    assert mean_phi[0] == 0.0
    found = own._newton(gam, p, count, phi, mean_phi, 1e100)
    assert found is not None                                    # was None
    monkeypatch.setattr(own, "_newton", lambda *args: None)
    g, t = own._subordination(gam, p, count, phi, 1e100)        # the nested solves
    assert found[0] == pytest.approx(g, rel=1e-12)
    assert found[1][0] == pytest.approx(t[0], rel=1e-12) and abs(found[1][1] - t[1]) < 1e-12


# --- F5: RTFA's tuning grid under Sigma = I printed numpy's warnings -----------------------------

def test_rtfa_grid_refuses_extreme_gammas_without_runtime_warnings():
    """gamma [1e-100, 1e100]: RTFA's tuning grid (``tune.rtfa_lams``, Sigma = I, every row in
    one call) printed five RuntimeWarnings (overflow in square, invalid value in divide) before
    the refusal, where clients_limit and the covariate-shift rows compute under np.errstate.
    Now the refusal alone (RTFA alone refusing, no candidate is left: a ValueError naming the
    reason since fuzz42 advise F1)."""
    fed = Federation(gamma=[1e-100, 1e100], r=[1.0, 1.0], sigma=[1.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="rtfa: .*subordination derivative overflowed"):
            advise(fed, methods=["rtfa"])


# --- F6: pFedMe's lam-derivative under covariate shift at a stationary lam ----------------------

def test_pfedme_shift_gradient_at_a_stationary_lam_is_the_complex_step():
    """At the uniform weights' tuned lam (0.5516..., where d mean / d lam ~ -3e-10) the two
    complex steps' spread of 1e-15 exceeded 1e-8 times the derivative and was read as a small
    lam's lost digits: SolverError 'take a larger lam' at lam = 0.55, so advise's optimal pFedMe
    weights stayed at their uniform start (mean 1.25757 where 1.24582 is reached, silently).
    The spread is now also measured against the derivative's scale mean / (lam + atom)."""
    kw = dict(gamma=[0.5, 1.5, 2.5], r=[1.0, 0.5, 1.5], sigma=[1.0, 0.7, 0.4],
              spectra=["scaled:1", "scaled:1", "scaled:1.000001"], weights=np.full(3, 1 / 3))
    lam, h = 0.5516132341220661, 1e-4
    mean, grad_p, grad_lam = pfedme_shift_mean_risk_gradient(tuning=lam, **kw)
    up, down = (pfedme_shift_mean_risk_gradient(tuning=lam + s, **kw)[0] for s in (h, -h))
    assert abs(grad_lam) < 1e-8 and abs(grad_lam - (up - down) / (2 * h)) < 1e-8
    assert mean == pytest.approx(1.257571802896451, rel=1e-12)


# --- F7: pFedMe's shift gradient beyond clients_limit's lam range -------------------------------

@pytest.mark.parametrize("lam", [1e300, np.inf, 1e-300])
def test_pfedme_shift_gradient_refuses_lam_beyond_the_limits_range(lam):
    """clients_limit refuses pFedMe's lam outside [1e-100, 1e100] naming that range; its exact
    gradient under covariate shift raised OverflowError (1e300, a traceback) or SolverError
    ('no bracket after 2000 halvings', inf and 1e-300). Now the same ValueError."""
    with pytest.raises(ValueError, match=r"lam must be 0 or lie in \[1e-100, 1e\+100\]"):
        pfedme_shift_mean_risk_gradient(gamma=[0.5, 1.5], r=[1.0, 0.5], sigma=[1.0, 0.7],
                                        spectra=["scaled:1", "scaled:2"], weights=[0.5, 0.5],
                                        tuning=lam)


# --- F8: the Sigma = I exact gradient's tuning ---------------------------------------------------

@pytest.mark.parametrize("method, tuning, said", [
    ("rtfa", -1.0, r"tuning must lie in \[0, inf\)"),
    ("rtfa", None, "method rtfa needs tuning"),
    ("maml_fl", None, "method maml_fl needs tuning"),
    ("pfedme", 1e300, r"lam must be 0 or lie in \[1e-100, 1e\+100\]")])
def test_identity_gradient_checks_its_tuning_as_clients_limit(method, tuning, said):
    """mean_risk_gradient (Sigma = I) took RTFA's lam = -1 or None and answered 2.0303 (a
    silent number where clients_limit refuses), MAML-FL's missing alpha was a TypeError and
    pFedMe's lam = 1e300 an OverflowError; each is now clients_limit's ValueError."""
    with pytest.raises(ValueError, match=said):
        mean_risk_gradient(method, gamma=[0.5, 1.5], r=[1.0, 1.0], sigma=[1.0, 1.0],
                           weights=[0.5, 0.5], tuning=tuning)
