"""Issue 32, fuzz42 (advfast): what this fuzz found, each test failing before."""

import numpy as np
import pytest

from riskcalc.advise import Federation

BASE = {"gamma": [0.5, 2.0], "r": [1.0, 0.5], "sigma": [1.0, 0.7]}


@pytest.mark.parametrize("spectrum, entry", [([1.0, 4.0], 0), (["identity", 2], 1)])
def test_a_list_of_eigenvalues_as_spectrum_says_where_eigenvalues_go(spectrum, entry):
    """F1: Federation(spectrum=[1.0, 4.0]) (eigenvalues, read as one spectrum per client) said
    'spectrum must be a riskcalc.Spectrum or a SPEC string ..., got float', naming neither the
    entry nor the per-client reading; an array of eigenvalues was told of Spectrum(EIGENVALUES)."""
    with pytest.raises(ValueError, match=rf"per client, got a number \(entry {entry}\).*"
                                         r"riskcalc\.Spectrum\(EIGENVALUES\)"):
        Federation(**BASE, spectrum=spectrum)


def _federation(m, spectrum):
    """The calibration's law: gamma in [0.3, 3], r, sigma and rho in [0.1, 2] (seed m)."""
    rng = np.random.default_rng(m)
    return Federation(gamma=rng.uniform(0.3, 3, m), r=rng.uniform(0.1, 2, m),
                      sigma=rng.uniform(0.1, 2, m), rho=rng.uniform(0.1, 2, m),
                      spectrum=spectrum)


def test_the_spectrum_estimate_is_near_the_measured_time():
    """F2: under a spectrum advise's estimate took 5 + M SLSQP iterations (RTFA 20 + 7 M) and
    no atoms: FTFA alone on 100 clients (two-point:1,4,0.5) took 20-23 s of CPU, estimated 188
    s, FedAvg 3.8 s estimated 20.7 s, pFedMe 3.7 s at 30 clients estimated 58 s; MAML-FL on 10
    clients with a 50-atom power law took 4.5 s, estimated 2.5 s, FTFA 1.0 s on 10 clients
    estimated 0.7 s (measured / estimated above 1); the fit's sqrt(M) iterations alone said 40 s
    for FedAvg on 300 clients, which took 128.6 s."""
    from riskcalc.advise import estimate_seconds

    two = _federation(100, "two-point:1,4,0.5")
    assert 20.0 <= estimate_seconds(two, ["ftfa"])["ftfa"] <= 60.0
    assert 3.8 <= estimate_seconds(two, ["fedavg"])["fedavg"] <= 10.0
    assert 3.7 <= estimate_seconds(_federation(30, "two-point:1,4,0.5"),
                                   ["pfedme"])["pfedme"] <= 15.0
    assert estimate_seconds(_federation(10, "two-point:1,4,0.5"), ["ftfa"])["ftfa"] >= 1.0
    assert estimate_seconds(_federation(10, "powerlaw:1,50"), ["maml_fl"])["maml_fl"] >= 4.5
    # Past 100 clients each evaluation grows faster: FedAvg on 300 clients took 128.6 s.
    assert estimate_seconds(_federation(300, "two-point:1,4,0.5"),
                            ["fedavg"])["fedavg"] >= 128.6
