"""Issue 32, fuzz40 (path): what this fuzz found, each test failing before."""

import warnings

import numpy as np
import pytest

import riskcalc
from tests.helpers import run_cli

BASE = dict(gamma=[0.5, 2.0], r=0.5, sigma=0.5, signal=1.0)


@pytest.mark.parametrize("rounds", [[2 ** 53 + 1], 2 ** 53 + 1, np.array([2 ** 53 + 1]),
                                    [1, np.inf, 2 ** 53 + 1], [np.uint64(2 ** 53 + 1)]])
def test_rounds_past_two_to_the_53_refused_before_rounding(rounds):
    """F1: ``rounds_limit(rounds=[2**53 + 1])`` was solved as T = 2^53 (its float) and returned
    ``rounds`` [9.007e15]; the command line refused the same T."""
    with pytest.raises(ValueError, match="rounds must be integers in 0..9007199254740992"):
        riskcalc.rounds_limit("fedavg", **BASE, rounds=rounds, local_steps=1, step_size=0.1)


def test_local_steps_past_two_to_the_53_refused_before_rounding():
    """F1: ``local_steps=2**53 + 1`` was taken as K = 2^53 (``params`` said so)."""
    with pytest.raises(ValueError, match="local_steps must be one integer"):
        riskcalc.rounds_limit("fedavg", **BASE, rounds=[1], local_steps=2 ** 53 + 1,
                              step_size=0.1)


@pytest.mark.parametrize("method, extra, route", [("fedavg", {}, "fedavg"),
                                                  ("pfedme", {"lam": 1.0}, "pfedme_steps")])
def test_thousands_of_local_steps_at_the_exact_solve_take_its_route(method, extra, route,
                                                                    monkeypatch):
    """F2: K = 5000 local steps of 0.1 at gamma (0.5, 2) equal the exact local solve to
    rounding, yet only K > 10^4 was taken as it: FedAvg took 22 s, Algorithm 1 135 s, for the
    numbers K = inf gives in 0.05-0.3 s. Now from K = 1000 on they take the exact route."""
    from riskcalc.linear.dynamics import ROUTES

    exact = riskcalc.rounds_limit(method, **BASE, rounds=[1, 10], local_steps=np.inf, **extra)
    if route == "pfedme_steps":
        def refuse(*args):
            raise AssertionError("solved K steps as such")
        monkeypatch.setitem(ROUTES, route, refuse)
    else:
        seen = []
        solve = ROUTES[route]
        monkeypatch.setitem(ROUTES, route, lambda *a: seen.append(a[6]) or solve(*a))
    many = riskcalc.rounds_limit(method, **BASE, rounds=[1, 10], local_steps=5000,
                                 step_size=0.1, **extra)
    assert np.array_equal(many.risk, exact.risk) and many.params["local_steps"] == 5000
    if route == "fedavg":
        assert seen == [np.inf]


def test_exact_prox_divergence_not_called_rounding():
    """F3: Algorithm 1's exact prox at lam 100, global_step 0.5 under a spectrum (server step
    g lam = 50, contraction 2.9) refused rounds=inf saying "the contraction 1 - g a rounds to 1
    (global step g = 0.5 times the bottom ...)": the rounding test read g for the server step,
    not g lam. It diverges, and says so."""
    kw = dict(BASE, local_steps=np.inf, lam=100.0, global_step=0.5,
              spectrum=riskcalc.Spectrum([1.0, 4.0], weights=[0.5, 0.5]))
    with pytest.raises(ValueError, match="the iteration diverges"):
        riskcalc.rounds_limit("pfedme", rounds=[np.inf], **kw)


def test_exact_prox_contraction_rounded_to_one_still_converges():
    """F3: Algorithm 1's exact prox at global_step 1e-300 (the server never moves) reported
    ``converges`` False with contraction 1.0 (rounded); FedAvg's same case says True
    (fuzz39 dyn2 F8)."""
    res = riskcalc.rounds_limit("pfedme", **BASE, rounds=[1, 10], local_steps=np.inf, lam=1.0,
                                global_step=1e-300)
    assert res.converges and np.allclose(res.global_risk, 1.25, rtol=1e-14, atol=0)
    with pytest.raises(ValueError, match=r"rounds to 1 \(global step g lam = 1e-300"):
        riskcalc.rounds_limit("pfedme", **BASE, rounds=[np.inf], local_steps=np.inf, lam=1.0,
                              global_step=1e-300)


@pytest.mark.parametrize("g", [1e-300, 1e-8])
def test_algorithm1_tiny_global_step_named_in_the_refusal(g):
    """F4: Algorithm 1 with K = 2 local steps at global_step 1e-300 raised "cannot convert float
    infinity to integer (... lower global_step or step_size)" with a RuntimeWarning (the
    contour through the pole: node count int(inf)); at 1e-8 the refusal advised lam or
    step_size only. Both now name a larger global_step, without warnings."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(riskcalc.SolverError, match="give a larger global_step"):
            riskcalc.rounds_limit("pfedme", **BASE, rounds=[1, 10], local_steps=2,
                                  step_size=0.1, lam=1.0, global_step=g)


def test_local_steps_past_the_floats_refused_without_numpy_warnings():
    """F5: FedAvg (Sigma = I) with K = 3 steps of 1e100 (the local filter reaches 2e302) was
    refused ("the local steps diverge") after some 100 numpy RuntimeWarnings (overflow in the
    filter's moments) in the Python API."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="the local steps diverge"):
            riskcalc.rounds_limit("fedavg", **BASE, rounds=[1, 10], local_steps=3,
                                  step_size=1e100)


def test_rounds_limit_carries_notes(capsys):
    """Item 3 of the brief: ``RoundsLimit`` had no ``notes`` (``ClientsLimit`` and ``Limit``
    have): K = 5000 steps solved as the exact local solve (F2) and pooled samples that do not
    span R^d (sum_j 1/gamma_j < 1: theta_0's part outside their span never learned) now say
    so, in ``notes``, ``as_dict`` and under ``predict``'s table."""
    many = riskcalc.rounds_limit("fedavg", **BASE, rounds=[1], local_steps=5000, step_size=0.1)
    assert len(many.notes) == 1 and "solved as local_steps = inf" in many.notes[0]
    assert many.as_dict()["notes"] == list(many.notes)
    few = riskcalc.rounds_limit("fedavg", **BASE, rounds=[1], local_steps=5, step_size=0.1)
    assert few.notes == ()
    code, out, err = run_cli(["predict", "fedavg", "--gamma", "4", "--clients", "2", "--r",
                              "0.5", "--sigma", "0.5", "--signal", "1", "--rounds", "1,inf",
                              "--local-steps", "2", "--local-step-size", "0.05"], capsys)
    assert code == 0, err
    assert "note: pooled N / d = sum_j 1/gamma_j = 0.5 < 1" in out


def test_algorithm1_large_global_step_at_identity_answers():
    """F7: Algorithm 1 (Sigma = I, K = 2 steps of 0.1, lam 1) at global_step 300 (contraction
    250) was refused for 5.9 GB of contour work while the pencil route of a spectrum answers in
    0.5 s; now Sigma = I falls back to it. Checked at T = 1 against the closed form: the server
    model is g lam sum_j p_j (a S_j - b S_j^2) theta_j + noise, a = 2 eta - eta^2 lam,
    b = eta^2, whose risk takes the Marchenko-Pastur moments 1, 1 + g, 1 + 3g + g^2,
    1 + 6g + 6g^2 + g^3 of S_j and freeness across clients."""
    res = riskcalc.rounds_limit("pfedme", **BASE, rounds=[1, 3], local_steps=2, step_size=0.1,
                                lam=1.0, global_step=300.0)
    gam = np.array(BASE["gamma"])
    p, G, eta, lam = (1 / gam) / np.sum(1 / gam), 300.0, 0.1, 1.0
    a, b = 2 * eta - eta ** 2 * lam, eta ** 2
    mom = [(1.0, 1 + g, 1 + 3 * g + g * g, 1 + 6 * g + 6 * g * g + g ** 3) for g in gam]
    t1 = np.array([a * m[0] - b * m[1] for m in mom])
    t2 = np.array([a * a * m[1] - 2 * a * b * m[2] + b * b * m[3] for m in mom])
    tn = np.array([a * a * m[0] - 2 * a * b * m[1] + b * b * m[2] for m in mom])
    c, r2, s2 = G * p, 0.25, 0.25
    mean = np.sum(c * t1)
    free = np.sum(c ** 2 * t2) + mean ** 2 - np.sum((c * t1) ** 2) - 2 * mean + 1
    noise = np.sum(G ** 2 * p ** 2 * s2 * gam * tn)
    want = free + r2 * np.sum(c ** 2 * t2) - 2 * r2 * c * t1 + r2 + noise
    np.testing.assert_allclose(res.global_risk[:, 0], want, rtol=1e-9)
    assert not res.converges and res.global_risk[0, 1] > 1e12


@pytest.mark.parametrize("lam", [1e-9, 1e-12])
def test_algorithm1_tiny_lam_refused_before_the_edge_solve(lam):
    """F8: Algorithm 1 (K = 2, step 0.1) at lam 1e-9 spent 11-12 s in the round map's edge
    solve before a refusal for its contour's nodes; at lam 1e-12 the solve returned a
    contraction 1 + 6.5e-12 and the refusal called it a divergence ("the server step
    global_step lam too large", at the default global_step lam = 1), with a RuntimeWarning.
    The top is at least (1 - step_size lam)^K here (client 1's atom at 0): refused at once."""
    from riskcalc.linear.dynamics.algorithm1 import curves

    def slow(*args, **kwargs):
        raise AssertionError("the edge solve ran")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(curves, "round_map_spectrum", slow)
            with pytest.raises(riskcalc.SolverError, match=r"top 1 - 2e-1\d or nearer .* so "
                               r"near 1 .*larger lam or step_size"):
                riskcalc.rounds_limit("pfedme", **BASE, rounds=[1, 5], local_steps=2,
                                      step_size=0.1, lam=lam)


@pytest.mark.parametrize("cov", [{"spectrum": riskcalc.Spectrum([1.0, 4.0], weights=[0.5, 0.5])},
                                 {"spectra": ["two-point:1,4,0.5", "scaled:2"]}])
@pytest.mark.parametrize("kw, why", [({"global_step": 1e-300, "step_size": 0.02},
                                      "larger global_step"),
                                     ({"step_size": 1e-12}, "larger lam or step_size")])
def test_algorithm1_top_near_one_under_a_covariance_named(cov, kw, why):
    """F8 under a spectrum and covariate shift: Algorithm 1 (K = 2, lam 1) at global_step
    1e-300 or step_size 1e-12 raised "the spectrum of the round map was not found on the scan",
    naming neither; at lam 1e-9 it blamed pooled N near d (N / d = 2.5)."""
    with pytest.raises(riskcalc.SolverError, match=f"so near 1 .*{why}"):
        riskcalc.rounds_limit("pfedme", **BASE, rounds=[1, 5], local_steps=2, lam=1.0,
                              **kw, **cov)


@pytest.mark.parametrize("method, kw", [("pfedme", {"local_steps": 2, "step_size": 0.1,
                                                    "lam": 1.0}),
                                        ("fedavg", {"local_steps": np.inf})])
def test_simulated_fixed_point_of_a_stalled_server_names_global_step(method, kw):
    """F10: ``simulate_rounds(rounds=[inf], global_step=1e-300)`` refused "spectral radius 1 >=
    1 ... lower the step sizes", which makes it worse; the limit says "raise global_step"."""
    from montecarlo.linear.rounds import simulate_rounds

    with pytest.raises(ValueError, match="raise global_step"):
        simulate_rounds(method, **BASE, rounds=[np.inf], global_step=1e-300, d=40, reps=2,
                        **kw)
