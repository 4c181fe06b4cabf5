"""Issue 32, fuzz41 (path): what this fuzz found, each test failing before."""

import numpy as np
import pytest

import riskcalc
from tests.helpers import run_cli

BASE = dict(gamma=[0.5, 2.0], r=0.5, sigma=0.5, signal=1.0)


def test_step_floor_is_step_times_the_covariances_top():
    """F1: under scaled:1e100 a step of 1e-101 (step x top 0.1, an ordinary step) was refused as
    "filter lost to rounding": the floor 1e-12 was on the step alone. It is now on step x the
    covariance's largest eigenvalue, and the answer is Sigma = I's with the models times
    sqrt(c) and the step times c."""
    kw = dict(gamma=[0.5, 2.0], sigma=0.5, rounds=[1, 5, np.inf], local_steps=2)
    big = riskcalc.rounds_limit("fedavg", **kw, r=1.0, signal=1.0, step_size=1e-101,
                                spectrum="scaled:1e100")
    unit = riskcalc.rounds_limit("fedavg", **kw, r=1e50, signal=1e50, step_size=0.1)
    assert np.allclose(big.risk, unit.risk, rtol=1e-12, atol=0)
    with pytest.raises(ValueError, match=r"step_size: step_size times the largest eigenvalue "
                                         r"of the spectrum is 3e-101, below 1e-12"):
        riskcalc.rounds_limit("fedavg", **kw, r=1.0, signal=1.0, step_size=1e-101,
                              spectrum="two-point:1,3,0.5")


def test_step_floor_on_the_command_line_under_a_spectrum(capsys):
    """F1: the command line refused --local-step-size 1e-101 under scaled:1e100 on its own
    floor before the limit saw the spectrum; Sigma = I keeps its refusal, named as the option."""
    argv = ["predict", "fedavg", "--gamma", "2", "--r", "1", "--sigma", "0.5", "--signal", "1",
            "--rounds", "1,5", "--local-steps", "2", "--local-step-size", "1e-101"]
    code, out, err = run_cli(argv + ["--spectrum", "scaled:1e100"], capsys)
    assert code == 0 and "1.123576e+100" in out, err
    code, out, err = run_cli(argv, capsys)
    assert code == 2 and err.startswith("error: --local-step-size must be >= 1e-12 with "
                                        "finite --local-steps, got 1e-101"), err


@pytest.mark.parametrize("spectrum", [None, "two-point:1,3,0.5"])
def test_fixed_point_alone_at_tiny_lam_is_the_exact_proxs(spectrum):
    """F2: Algorithm 1 with K = 2 steps and only rounds = [inf] at lam 1e-12 took 13 s and then
    called the map divergent (contraction 1 + 1e-11, rounding); under a spectrum at 1e-9 it
    blamed pooled N near d. The fixed point is the exact prox's for every K: served, with the
    contraction's lower bound (within 1e-9) and a note saying so."""
    kw = dict(BASE, rounds=[np.inf], lam=1e-12, spectrum=spectrum)
    res = riskcalc.rounds_limit("pfedme", **kw, local_steps=2, step_size=0.1)
    prox = riskcalc.rounds_limit("pfedme", **kw, local_steps=np.inf)
    assert np.allclose(res.risk, prox.risk, rtol=1e-12, atol=0)
    assert np.allclose(res.global_risk, prox.global_risk, rtol=1e-12, atol=0)
    assert res.converges and 1.0 - 1e-9 < res.contraction < 1.0
    assert any("fixed point is the exact prox's" in n for n in res.notes)
    with pytest.raises(ValueError, match=r"global_step \* lam = 2 > 1 leaves its convergence"):
        riskcalc.rounds_limit("pfedme", **kw, local_steps=2, step_size=0.1, global_step=2e12)


def test_exact_prox_under_shift_at_tiny_lam_refused_not_wrong():
    """F3: Algorithm 1's exact prox under covariate shift lost its own models' digits as lam
    -> 0 pushed the round map's top to 1: gamma (0.5, 2), scaled:1 and scaled:2, lam 1e-12
    gave client 1 the risk 1.100 where the limit (FedAvg's exact local solves) is 1.000,
    silently. Refused now, naming lam and what fits."""
    with pytest.raises(ValueError, match=r"lam = 1e-12: under covariate shift the exact "
                                         r"prox's round map has its top within 5.1e-13 of 1"):
        riskcalc.rounds_limit("pfedme", **BASE, rounds=[np.inf], local_steps=np.inf,
                              lam=1e-12, spectra=["scaled:1", "scaled:2"])


def test_local_steps_solved_as_the_exact_prox_converge_as_it_does():
    """F4: Algorithm 1 with K = 1000 local steps (the exact prox to rounding, solved as it) at
    global_step 1e-17 reported converges: false, where local_steps=inf reports true (the
    contraction 1 - g lam a rounds to 1: a slow map, not a diverging one)."""
    kw = dict(BASE, rounds=[1, 10], lam=1.0, global_step=1e-17)
    res = riskcalc.rounds_limit("pfedme", **kw, local_steps=1000, step_size=0.1)
    prox = riskcalc.rounds_limit("pfedme", **kw, local_steps=np.inf)
    assert res.converges and prox.converges
    assert np.array_equal(res.risk, prox.risk)


def test_exact_local_solves_under_a_spectrum_are_rescaled():
    """F5: FedAvg's exact local solves under a spectrum (``sigma.fedavg.exact``, also Algorithm
    1's exact prox at small lam) were solved at the spectrum's own scale: at two-point:1e50,
    3e50,0.5 the own models came out 1e34 relative off (silently), at 1e-50 refused as a
    negative quadratic form. Sigma = c Sigma0 is Sigma0 with the models times sqrt(c)."""
    kw = dict(gamma=[0.5, 2.0], sigma=0.5, rounds=[1, 5, np.inf], local_steps=np.inf)
    c = 1e50
    big = riskcalc.rounds_limit("fedavg", **kw, r=0.5, signal=1.0,
                                spectrum=f"two-point:{c},{3 * c},0.5")
    unit = riskcalc.rounds_limit("fedavg", **kw, r=0.5 * np.sqrt(c), signal=np.sqrt(c),
                                 spectrum="two-point:1,3,0.5")
    assert np.allclose(big.local_risk, unit.local_risk, rtol=1e-12, atol=0)
    assert np.allclose(big.risk, unit.risk, rtol=1e-12, atol=0)


def test_exact_local_solves_under_shift_are_rescaled():
    """F6: FedAvg's exact local solves under covariate shift (``shift.kinf``) at the scale of
    the covariances: spectra two-point:1e50,3e50,0.5 and scaled:2e50 gave risks 100% off
    (silently) and a personalization "Singular matrix" (Algorithm 1's exact prox there too);
    at 1e-50 "a negative or NaN quadratic form". Solved at the largest eigenvalue 1 now."""
    kw = dict(gamma=[0.5, 2.0], sigma=0.5, rounds=[1, 5, np.inf], local_steps=np.inf)
    c = 1e50
    big = riskcalc.rounds_limit("fedavg", **kw, r=0.5, signal=1.0,
                                spectra=[f"two-point:{c},{3 * c},0.5", f"scaled:{2 * c}"])
    unit = riskcalc.rounds_limit("fedavg", **kw, r=0.5 * np.sqrt(c), signal=np.sqrt(c),
                                 spectra=["two-point:1,3,0.5", "scaled:2"])
    assert np.allclose(big.risk, unit.risk, rtol=1e-12, atol=0)
    assert np.allclose(big.personalized_risk(steps=2, step_size=0.1 / c),
                       unit.personalized_risk(steps=2, step_size=0.1), rtol=1e-12, atol=0)


def test_many_local_steps_are_estimated_before_the_work():
    """F7: FedAvg with K local steps at Sigma = I had no estimate: K = 999 over two clients took
    ~3 s of CPU whatever max_seconds said (M = 50: 10.5 s; 1000 clients, as the command line
    allows, minutes). Estimated now before the edge solve and again on the contour's nodes,
    refused beyond max_seconds naming the local steps that fit."""
    import time

    start = time.process_time()
    with pytest.raises(ValueError, match=r"local_steps = 999: FedAvg's curves would take about "
                                         r"0.639 s .* give local_steps <= 781"):
        riskcalc.rounds_limit("fedavg", **BASE, rounds=[1, 10], local_steps=999, step_size=0.1,
                              max_seconds=0.5)
    assert time.process_time() - start < 1.5     # imports included; the work took ~3 s


def test_diverging_algorithm1_at_identity_personalizes():
    """F8: Algorithm 1 at Sigma = I with a diverging round map (global_step 300: contraction
    250), served on the identity spectrum's pencil route (fuzz40 path F7), refused every
    personalized_risk. It reads that route's personalization now: FTFA (2 steps of 0.1) after
    T = 1, within 0.5 SE of a simulation (d = 300, 8 replicates: 2235 and 2758 +- 3%)."""
    res = riskcalc.rounds_limit("pfedme", **BASE, rounds=[1], local_steps=2, step_size=0.1,
                                lam=1.0, global_step=300.0)
    assert np.allclose(res.personalized_risk(steps=2, step_size=0.1)[:, 0],
                       [2249.30462525, 2800.000841], rtol=1e-8)


def test_rounds_to_eps_below_resolution_is_not_told_to_add_rounds():
    """F9: ``rounds_to_eps(eps=1e-300)`` said "not reached within max_rounds = 1000", as if more
    rounds would reach it; eps is below what the curve resolves (1e-12 of its largest value),
    which is said now whatever max_rounds is."""
    with pytest.raises(ValueError, match=r"eps = 1e-300 is below what the curve resolves"):
        riskcalc.rounds_to_eps("fedavg", **BASE, local_steps=np.inf, eps=1e-300, max_rounds=20)


def test_local_filter_near_the_exact_solve_named_not_pooled_n():
    """F10: FedAvg at gamma (0.5, 0.8), step 0.3: client 0's filter is within 3e-9 of the exact
    local solve at K = 750 (not to rounding, so not solved as K = inf), a near point mass the
    edge solve does not resolve: "no real solution at the start of the scan" (K = 750), or a
    bottom edge -148.5 refused as "pooled N = d" at N / d = 3.25 (K = 999). Named now."""
    with pytest.raises(ValueError, match=r"local_steps = 750: the local filter .* of client\(s\) "
                                         r"0 is within 3.2e-09 of the exact local solve"):
        riskcalc.rounds_limit("fedavg", gamma=[0.5, 0.8], r=0.5, sigma=0.5, signal=1.0,
                              rounds=[1, 5], local_steps=750, step_size=0.3)


def test_tiny_lam_with_pooled_samples_short_of_d_named_or_served():
    """F12: Algorithm 1 (K = 2) at gamma (2, 3) (pooled N < d) and lam 1e-9 raised numpy's
    "Array must not contain infs or NaNs" (the command line printed just that); now finite
    rounds are refused by the round map's top as with spanning samples, and rounds = [inf]
    is the exact prox's fixed point (F2). T = 0 beside inf no longer sends it to the K-step
    solve ([0, inf] at lam 1e-12 took 4 s and called the map divergent)."""
    kw = dict(gamma=[2.0, 3.0], r=0.5, sigma=0.5, signal=1.0, lam=1e-9)
    with pytest.raises(riskcalc.SolverError, match=r"the round map's top 1 - 2e-10 or nearer"):
        riskcalc.rounds_limit("pfedme", **kw, rounds=[1, 5], local_steps=2, step_size=0.1)
    res = riskcalc.rounds_limit("pfedme", **kw, rounds=[0, np.inf], local_steps=2,
                                step_size=0.1)
    prox = riskcalc.rounds_limit("pfedme", **kw, rounds=[0, np.inf], local_steps=np.inf)
    assert res.converges and np.allclose(res.risk, prox.risk, rtol=1e-12, atol=0)
    assert np.allclose(res.risk[:, 0], 1.25)


def test_rounds_json_rows_carry_the_notes(tmp_path, capsys):
    """F14: ``predict --rounds --json`` rows left out the result's notes, which the table
    prints (F2's: the contraction reported as its bound, the fixed point the exact prox's)."""
    import json

    fed = tmp_path / "fed.json"
    fed.write_text(json.dumps({"fedrisk_federation": 1, "signal": 1.0, "clients": [
        {"name": "a", "gamma": 0.5, "r": 0.5, "sigma": 0.5},
        {"name": "b", "gamma": 2.0, "r": 0.5, "sigma": 0.5}]}))
    code, out, err = run_cli(["predict", "fedprox", "--federation", fed, "--rounds", "inf",
                              "--local-steps", "2", "--local-step-size", "0.1", "--lam",
                              "1e-12", "--json"], capsys)
    assert code == 0, err
    assert any("fixed point is the exact prox's" in n for n in json.loads(out)[0]["notes"])
