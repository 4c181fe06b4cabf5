"""Issue 32, fuzz39 (dyn2): what this fuzz found, each test failing before."""

import json

import numpy as np
import pytest

from riskcalc import rounds_limit
from riskcalc.spectrum import Spectrum
from tests.helpers import run_cli

SPECTRUM = Spectrum([1.0, 4.0], weights=[0.5, 0.5])
NO_SIGNAL = dict(r=0.0, signal=0.0, rounds=[1, 50])


def test_no_signal_diverging_fedavg_prints_zero_not_overflow(capsys):
    """F1: ``predict fedavg --gamma 2 --r 0 --sigma 0 --clients 3 --rounds 300 --local-steps 1
    --local-step-size 10 --signal 0`` printed "overflow" for bias and risk: ``settle`` set the
    bias inf at every overflowed round. Every noiseless iterate stays at the start 0 = theta_j:
    bias, risk, local risk and distance 0 (the simulation of ``compare`` prints 0 there)."""
    code, out, err = run_cli(["predict", "fedavg", "--gamma", 2, "--r", 0, "--sigma", 0,
                              "--clients", 3, "--rounds", 300, "--local-steps", 1,
                              "--local-step-size", 10, "--signal", 0, "--json"], capsys)
    assert code == 0, err
    row = json.loads(out)[0]
    assert row["diagnostics"]["converges"] is False
    for key in ("bias", "variance", "risk", "global_risk", "local_risk",
                "distance_to_fixed_point"):
        assert row[key] == 0.0, key


@pytest.mark.parametrize("method, kw", [
    ("pfedme", dict(gamma=[2.0, 3.0], local_steps=np.inf, lam=1.0)),
    ("fedavg", dict(gamma=[0.5, 0.5], local_steps=np.inf, spectrum=SPECTRUM)),
    ("fedavg", dict(gamma=[0.5, 0.7], local_steps=1, step_size=1.0, spectrum=SPECTRUM)),
    ("fedavg", dict(gamma=[0.5, 0.7], local_steps=np.inf,
                    spectra=["identity", "two-point:1,4,0.5"])),
], ids=["alg1-prox", "spectrum-exact", "spectrum-k1", "shift-exact"])
def test_no_signal_diverging_routes_answer_zero_bias(method, kw):
    """F1 on the other routes (Algorithm 1's exact prox, a spectrum, covariate shift): with
    no signal (signal 0, every r_j 0) a diverging round map (global_step 1e10) left bias inf
    at the overflowed round T = 50; it is 0 there (server and own models, FTFA/RTFA), the
    variance inf only with noise, the distance inf only with noise."""
    for sigma in (0.0, 0.5):
        res = rounds_limit(method, sigma=sigma, global_step=1e10, **NO_SIGNAL, **kw)
        assert not res.converges
        assert np.all(res.bias == 0.0) and np.all(res.global_risk[:, 0] < np.inf)
        last = res.distance_to_fixed_point[-1]
        if sigma == 0.0:
            assert np.all(res.risk == 0.0) and last == 0.0
            assert np.all(res.local_risk == 0.0)
            assert np.all(res.personalized_risk(lam=1.0) == 0.0)
        else:
            assert np.all(np.isinf(res.variance[:, -1])) and np.isinf(last)


def test_no_signal_with_noise_is_variance_only():
    """F1: Sigma = I FedAvg, sigma 0.5, no signal, diverging: the overflowed round was all
    inf; its bias is 0 (the mean iterate stays 0), its variance inf. One r_j > 0 keeps inf
    (round 300 past the overflow at T ~ 100)."""
    kw = dict(gamma=[2.0, 2.0, 2.0], local_steps=1, step_size=10.0, signal=0.0, rounds=[300])
    res = rounds_limit("fedavg", sigma=0.5, r=0.0, **kw)
    assert np.all(res.bias == 0.0) and np.all(np.isinf(res.variance))
    lone = rounds_limit("fedavg", sigma=0.0, r=[0.0, 0.0, 1e-3], **kw)
    assert np.all(np.isinf(lone.bias))      # one r_j > 0 moves the means: inf stays


def test_own_models_one_round_past_the_overflow_asked_alone():
    """F2: FedAvg (Sigma = I, K = 1, step 0.9, gamma 2 and 3: contraction 2.95, the server
    risk past the floats beyond T = 319.1): ``local_risk`` at T = 320 alone raised SolverError
    ("a negative or NaN quadratic form"): its own model reads the server model of round 319,
    but the contour was sized for the rows up to 319.1 only (none). It is the value asked
    beside T = 319, 3.36e296."""
    kw = dict(gamma=[2.0, 3.0], r=1.0, sigma=0.5, signal=1.0, local_steps=1, step_size=0.9)
    alone = rounds_limit("fedavg", rounds=[320], **kw)
    pair = rounds_limit("fedavg", rounds=[319, 320], **kw)
    assert np.isinf(alone.risk).all()
    assert alone.local_risk[:, 0] == pytest.approx(pair.local_risk[:, 1], rel=1e-9)
    assert np.isfinite(alone.local_risk).all()


def test_overflowed_rounds_size_no_contour_under_a_spectrum():
    """F3: ``round_horizon`` sized the spectrum routes' contours for the rounds up to the
    overflow (min(max T, over)), not the largest T that needs nodes: FedAvg, two-point
    spectrum, K = 1, global step 0.4 (contraction 2.13, overflow past T = 457) asked T = 1 and
    2000 solved 936 nodes for the one row T = 1, and ``local_risk`` was refused ("the double
    contour needs 4.38e+05 node pairs ... the rounds are too many (up to T = 457)"). Now the
    nodes of T = 1 alone (216) and the own models answer (36.16375 at T = 1, as asked alone)."""
    kw = dict(gamma=[0.5, 0.7], local_steps=1, step_size=1.0, global_step=0.4,
              spectrum=SPECTRUM, r=0.5, sigma=0.3, signal=1.0)
    both = rounds_limit("fedavg", rounds=[1, 2000], **kw)
    one = rounds_limit("fedavg", rounds=[1], **kw)
    assert both.diagnostics["contour_nodes"] == one.diagnostics["contour_nodes"]
    assert both.risk[:, 0] == pytest.approx(one.risk[:, 0], rel=1e-12)
    assert both.local_risk[0, 0] == pytest.approx(36.16375, rel=1e-6)
    assert np.isinf(both.local_risk[:, 1]).all()


def test_node_pair_refusal_driven_by_the_rounds_does_not_blame_the_spectrum():
    """F4: RTFA after FedAvg's exact local solves, two-point spectrum, gamma 0.5 twice, global
    step 3 (round map spectrum [1, 1], contraction 2), T = 1 and 400: refused as "the round
    map's spectrum comes too close to 0 (its nonzero part [1, 1], bottom / top = 1 ...)" and
    advised to "move gamma further from pooled N = d" (N / d = 4). The nodes are the rounds':
    it says so and asks for fewer rounds."""
    res = rounds_limit("fedavg", gamma=[0.5, 0.5], local_steps=np.inf, global_step=3.0,
                       spectrum=SPECTRUM, r=0.5, sigma=0.3, signal=1.0, rounds=[1, 400])
    with pytest.raises(ValueError) as info:
        res.personalized_risk(lam=1.0)
    msg = str(info.value)
    assert "its nodes grow with the rounds, up to T = 400" in msg and "ask for fewer" in msg
    assert "too close to 0" not in msg and "move gamma" not in msg


@pytest.mark.parametrize("cov", [dict(spectrum=SPECTRUM),
                                 dict(spectra=["identity", "two-point:1,4,0.5"])],
                         ids=["spectrum", "shift"])
def test_algorithm1_under_a_spectrum_refuses_a_contraction_it_cannot_resolve(cov):
    """F5: Algorithm 1, K = 2, two-point spectrum, global_step 1e7 at lam 1 (contraction 9.2e6)
    answered T = 1 with the own models' risk 1e-3 off (2.7153 for 2.7126; T = 1 does not depend
    on global_step): the curves lose about 1e-17 contraction^2 to rounding (covariate shift:
    3e-4). Refused beyond a contraction of 1e4, naming global_step."""
    with pytest.raises(ValueError, match=r"^global_step: .*contraction 9\.[12]\de\+06"):
        rounds_limit("pfedme", gamma=[0.5, 0.7], r=1.0, sigma=0.5, signal=1.0, rounds=[1],
                     local_steps=2, step_size=0.05, lam=1.0, global_step=1e7, **cov)


def test_contour_refused_for_its_rounds_does_not_advise_a_lower_global_step(capsys):
    """F6: ``predict fedavg ... --rounds 1000000000 --global-step 1e-8`` (g T = 10, not yet at
    the fixed point): "2000000016 nodes needed ... the spectrum of the round map is too close
    to 0, the rounds too many, or the global step so large ...; ask fewer rounds or lower
    global_step" - a lower global step makes it worse. The rounds' degree alone needs the
    nodes: it says so, and that a larger global_step gets as far in fewer rounds."""
    code, out, err = run_cli(["predict", "fedavg", "--gamma", 2, "--clients", 3, "--r", 1,
                              "--sigma", 0.5, "--signal", 1, "--local-steps", 2,
                              "--local-step-size", 0.1, "--rounds", 10 ** 9,
                              "--global-step", 1e-8], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "for the rounds asked" in err and "larger global_step" in err
    assert "lower global_step" not in err


@pytest.mark.parametrize("cov", [dict(spectrum=SPECTRUM),
                                 dict(spectra=["identity", "two-point:1,4,0.5"])],
                         ids=["spectrum", "shift"])
def test_algorithm1_edge_scan_failure_names_global_step(cov):
    """F7: the same at global_step 1e8: SolverError "the spectrum of the round map was not
    found on the scan", naming no parameter (the edge scan fails before F5's check). Now F5's
    refusal, naming global_step * lam."""
    with pytest.raises(ValueError, match=r"^global_step: global_step \* lam = 1e\+08"):
        rounds_limit("pfedme", gamma=[0.5, 0.7], r=1.0, sigma=0.5, signal=1.0, rounds=[1],
                     local_steps=2, step_size=0.05, lam=1.0, global_step=1e8, **cov)


def test_a_contraction_rounded_to_one_still_converges(capsys):
    """F8: ``predict fedavg ... --local-steps inf --global-step 1e-300`` printed "round map:
    contraction 1 (converges: false)": the map contracts (0 < g a, g b < 2), its contraction
    1 - g a rounds to 1. It converges (T = inf stays refused: not reached in any number of
    rounds)."""
    code, out, err = run_cli(["predict", "fedavg", "--gamma", 2, "--clients", 3, "--r", 1,
                              "--sigma", 0.5, "--signal", 1, "--rounds", 3, "--local-steps",
                              "inf", "--global-step", 1e-300, "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)[0]["diagnostics"]["converges"] is True
    with pytest.raises(ValueError, match="rounds to 1"):
        rounds_limit("fedavg", gamma=[2.0] * 3, r=1.0, sigma=0.5, signal=1.0,
                     rounds=[np.inf], local_steps=np.inf, global_step=1e-300)
