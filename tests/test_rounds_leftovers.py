"""Leftovers of riskcalc/linear/dynamics (issues 29 and 32; fuzz rows 11-12 of hardening 16).

RTFA after the rounds at large lam' under a spectrum (``sigma.personalize_sigma``, step 2: its
row divided by 1 + lam'): it answers, tends to the server model's risk (lam' -> inf) at the rate
1 / lam', and matches the Sigma = I route with a spectrum of two atoms 1e-7 apart. An unused d
is refused; the node-pair refusal states pooled N / d and the atom at 0. A round given twice
is refused as ``--rounds`` refuses it; exact local solves count no gradient evaluations.
"""

import numpy as np
import pytest

import riskcalc

FEDAVG = dict(gamma=[0.5, 1.5], r=1, sigma=1, signal=1, rounds=[np.inf], local_steps=1,
              step_size=0.1)


def test_rtfa_large_lam_tends_to_the_server_model():
    """Was SolverError from lam' = 1e4 (fuzz row 11). Server risk minus RTFA's is c / lam' +
    O(1 / lam'^2): the same c at 1e4 and 1e6 (measured 2.06 and 9.76, equal to 4e-4; at
    lam' = 1e3, which answered before, within 0.5%)."""
    m = riskcalc.rounds_limit("fedavg", **FEDAVG, spectrum="two-point:1,4,0.5")
    server = m.risk[:, 0]
    gaps = [(server - m.personalized_risk(lam=lam)[:, 0]) * lam for lam in (1e4, 1e6)]
    assert np.all(gaps[0] > 0.1)
    np.testing.assert_allclose(gaps[0], gaps[1], rtol=2e-3)


def test_rtfa_large_lam_under_shift():
    """The same under covariate shift (``shift.personalize``): lam' = 1e12 is the server
    model's risk."""
    m = riskcalc.rounds_limit("fedavg", **FEDAVG, spectra=["identity", "scaled:2"])
    np.testing.assert_allclose(m.personalized_risk(lam=1e12), m.risk, rtol=1e-10)


def test_rtfa_large_lam_matches_identity_route():
    """Two atoms 1e-7 apart (the pencil route) against Sigma = I (the scalar route)."""
    near = riskcalc.rounds_limit("fedavg", **FEDAVG, spectrum="two-point:1,1.0000001,0.5")
    eye = riskcalc.rounds_limit("fedavg", **FEDAVG)
    np.testing.assert_allclose(near.personalized_risk(lam=1e5),
                               eye.personalized_risk(lam=1e5), rtol=3e-7)


def test_unused_d_is_refused():
    """d beside spectra with no powerlaw:P or file:PATH was taken and dropped (fuzz row 12);
    it is refused as ``Federation.from_file(d=)`` refuses it. With a powerlaw:P it answers."""
    kw = dict(FEDAVG, rounds=[1])
    for spec in (dict(spectra=["identity", "scaled:2"]), dict(spectra="scaled:2"), {}):
        with pytest.raises(ValueError, match=r"d = 3: d applies to powerlaw:P in spectra .*"
                                             "file:PATH.* nothing here uses it"):
            riskcalc.rounds_limit("fedavg", **kw, **spec, d=3)
    sized = riskcalc.rounds_limit("fedavg", **kw, spectra=["powerlaw:1", "identity"], d=4)
    assert np.all(np.isfinite(sized.risk))


@pytest.mark.parametrize("spec", [dict(spectra=["identity", "two-point:1,2,0.5"]),
                                  dict(spectrum="two-point:1,2,0.5", local_steps=2)])
def test_node_pair_refusal_says_pooled_n_below_d(spec):
    """At pooled N / d = 5/6 the refusal said "(pooled N near d)" and to ask for fewer rounds
    at T = 1; it gives the round map's nonzero spectrum, N / d, the atom at 0 (1 - N / d) and
    the rounds asked."""
    with pytest.raises(ValueError) as info:
        riskcalc.rounds_limit("fedavg", **{**FEDAVG, "gamma": [2, 3], "rounds": [1], **spec})
    msg = str(info.value)
    assert "near d" not in msg and "fewer rounds" not in msg and "(more than 2e+05)" in msg
    assert "pooled N / d = sum_j 1/gamma_j = 0.8333; its atom at 0 (0.167 of it" in msg
    assert "up to T = 1 here); move gamma further from pooled N = d" in msg


@pytest.mark.parametrize("rounds, shown", [([5, 5], "5"), ([np.inf, 0, np.inf], "inf"),
                                           ([3, 3.0], "3")])
def test_a_round_given_twice_is_refused_as_on_the_command_line(rounds, shown):
    """rounds=[5, 5] solved and returned the same column twice (fuzz pass 17); ``--rounds
    5,5`` was refused (``_text.distinct``): both refuse it now, with one message."""
    with pytest.raises(ValueError) as api:
        riskcalc.rounds_limit("fedavg", **{**FEDAVG, "rounds": rounds})
    assert str(api.value).startswith(f"rounds lists {shown} twice: give each value once")
    from riskcalc.cli.options.rounds import parse_rounds

    text = ",".join("inf" if np.isinf(t) else str(int(t)) for t in rounds)
    with pytest.raises(ValueError) as cli:
        parse_rounds(text)
    assert str(cli.value) == "--" + str(api.value)


def test_exact_local_solves_count_no_gradient_evaluations():
    """``optimal_rounds`` with local_steps=inf reported gradient_evaluations = inf (T K at
    K = inf, fuzz pass 17): an exact solve is no count of gradient steps, so None from T = 1
    on (0 at T = 0); finite K keeps T K."""
    kw = dict(gamma=[0.5, 1.5], r=1, sigma=1, signal=1, max_rounds=3)
    for method, extra in (("pfedme", dict(lam=1.0)), ("fedavg", {})):
        exact = riskcalc.optimal_rounds(method, local_steps=np.inf, **extra, **kw)
        assert exact.rounds >= 1 and exact.gradient_evaluations is None
    steps = riskcalc.optimal_rounds("fedavg", local_steps=2, step_size=0.1, **kw)
    assert steps.rounds == 3 and steps.gradient_evaluations == 6.0
