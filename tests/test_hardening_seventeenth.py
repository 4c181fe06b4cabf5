"""Issue 32, seventeenth hardening pass: the leftovers of the sixteenth (note21's "Noticed and
left alone") and what this pass's fuzz found. Each test pins a case mishandled before this pass
(the old behaviour in its comment); bad input is one line ``error: ...`` with exit status 2 on
the command line.
"""

import numpy as np
import pytest

import riskcalc
from riskcalc.advise import tune
from riskcalc.advise.federation import Federation
from riskcalc.errors import SolverError
from tests.test_hardening_ninth import _one_error_line

FED = dict(gamma=[0.5, 2.0], sigma=1.0, r=1.0)


# was: computed, d dropped (the risks the same at every d) where rounds_limit refuses it.
@pytest.mark.parametrize("kw", [{}, {"spectra": ["identity", "scaled:2"]},
                                {"spectrum": "scaled:2"},
                                {"spectrum": riskcalc.Spectrum.parse("powerlaw:1", d=4)}])
def test_clients_limit_refuses_an_unused_d(kw):
    with pytest.raises(ValueError, match=r"^d = 5: d applies to powerlaw:P .* leave it out"):
        riskcalc.clients_limit("ftfa", **FED, d=5, **kw)
    with pytest.raises(ValueError, match=r"^d = 5: d applies to powerlaw:P"):
        riskcalc.rounds_limit("fedavg", **FED, signal=1.0, rounds=[1], local_steps=1,
                              step_size=0.1, d=5, **kw)


def test_clients_limit_keeps_a_used_d():
    # d sizes powerlaw:P: other d, other risks.
    risks = [riskcalc.clients_limit("ftfa", **FED, d=d, spectra=["powerlaw:1", "scaled:2"]).risk
             for d in (5, 50)]
    assert abs(risks[0][1] - risks[1][1]) > 1e-3
    # A federation whose clients' n made gamma with d keeps answering under shift (d dropped
    # where no spectrum uses it).
    fed = Federation(gamma=np.array(FED["gamma"]), r=np.ones(2), sigma=np.ones(2),
                     spectra=("identity", "scaled:2"), d=100)
    assert "d" not in fed.limit_kwargs()
    ref = riskcalc.clients_limit("ftfa", **FED, spectra=["identity", "scaled:2"])
    np.testing.assert_array_equal(riskcalc.clients_limit("ftfa", **fed.limit_kwargs()).risk,
                                  ref.risk)


# was: "pfedme: no finite-M limit could be computed on the tuning grid" (not saying why).
def test_shared_tuning_failing_everywhere_says_why(monkeypatch):
    def failing(method, **kw):
        raise SolverError(f"pFedMe at lam = {kw['lam']:.3g}: traces overflowed")

    monkeypatch.setattr(tune, "clients_limit", failing)
    fed = Federation(gamma=np.array([0.5, 2.0]), r=np.ones(2), sigma=np.ones(2))
    with pytest.raises(SolverError) as err:
        tune.shared_tuning("pfedme", fed, "samples", np.logspace(-3, 3, 9))
    msg = str(err.value)
    assert msg.startswith("pfedme: no finite-M limit at any of the 9 values of lam on the "
                          "tuning grid (0.001 to 1e+03): pFedMe at lam = ")
    assert "traces overflowed" in msg and "(and 7 other reasons)" in msg


# was: "(gain -0.00% over samples)" for a rounding-level loss of the optimal weights.
def test_weight_gain_display():
    from riskcalc.cli.tables.advise import _gain_text

    assert _gain_text(-1e-12) == _gain_text(4e-5) == _gain_text(None) == "no gain over samples"
    assert _gain_text(0.0123) == "gain 1.23% over samples"
    assert _gain_text(-0.02) == "gain -2.00% over samples"


# was: built once, the repetition unsaid (a value given twice is refused elsewhere); the
# command line prints it as "error: --formats: ..." (figures.core, not the CLI: loading every
# figure module first costs 1.4 s).
def test_a_format_given_twice_is_refused():
    from figures.core import image_formats

    with pytest.raises(ValueError, match=r"^formats: png given twice: give each format once; "
                       r"got 'png,png'$"):
        image_formats("png,png")
    assert image_formats("pdf, png") == ("png", "pdf")


# was: SolverError "Newton's method on the chain pencil did not converge (t = 0)" at 10 steps
# and, at 30 steps, 25 s of CPU before the same; then refused ("step_size: FTFA's steps diverge
# ... give step_size < 0.1716 or at most 9 steps"). Now solved in the chain's scaled basis
# (``shift.personalize_chain``, "Divergence"): the chain route, forced at 2 steps, equals the
# dense route (measured 6e-14) and the identity client's T = 0 row Sigma = I's.
def test_divergent_ftfa_on_the_chain_route_is_a_result(monkeypatch):
    import riskcalc.linear.dynamics.shift.curves as shift_curves

    kw = dict(gamma=[0.5, 2.0], r=1.0, sigma=0.5, signal=1.0, rounds=[0, 1, 5, np.inf],
              local_steps=1, step_size=0.05)
    dense = riskcalc.rounds_limit("fedavg", **kw, spectra=["identity", "scaled:2"])
    chain = riskcalc.rounds_limit("fedavg", **kw, spectra=["identity", "scaled:2"])
    chain.personalized_risk(steps=1, step_size=0.01)        # the curves solved (dense pencil)
    want = dense.personalized_risk(steps=2, step_size=0.9)
    monkeypatch.setattr(shift_curves, "MAX_UNKNOWNS", 1)     # personalization: the chain route
    got = chain.personalized_risk(steps=2, step_size=0.9)
    assert want[1, 0] > 1e3 * want[0, 0]                     # client 1: 9.5^4 per unit
    np.testing.assert_allclose(got, want, rtol=1e-8)
    plain = riskcalc.rounds_limit("fedavg", **{**kw, "gamma": [0.5]})
    np.testing.assert_allclose(got[0, 0], plain.personalized_risk(steps=2, step_size=0.9)[0, 0],
                               rtol=1e-8)


# was: Sigma = I answered inf at every T (T = 0's zero model, risk signal^2 + r^2, included),
# then failed on the own models ("a negative or NaN quadratic form"); a shared spectrum refused.
def test_exact_local_solves_refuse_a_client_with_gamma_one(capsys):
    msg = r"^gamma: a client with gamma_j = 1 \(n_j = d\) has an exact local least squares"
    for kw in ({}, {"spectrum": "two-point:1,4,0.5"}):
        with pytest.raises(ValueError, match=msg):
            riskcalc.rounds_limit("fedavg", gamma=[1.0, 0.5], r=1.0, sigma=1.0, signal=1.0,
                                  rounds=[0, 1], local_steps=np.inf, **kw)


# was: "predict along the rounds needs --local-step-size" for --local-steps nan / infinity /
# -inf (the value refused only once the step size came).
@pytest.mark.parametrize("K", ["nan", "infinity", "-inf"])
def test_local_steps_read_before_the_missing_options(K, capsys):
    line = _one_error_line(["predict", "fedavg", "--gamma", "0.5", "--r", "1", "--sigma", "1",
                            "--signal", "1", "--rounds", "1", f"--local-steps={K}"], capsys)
    assert line == ("error: --local-steps must be an integer in 1..9007199254740992 (2^53) or "
                    f"inf; got '{K}'")


# was: "steps must lie in [0, inf), got -1.0" (the Python name), after the curves were solved.
@pytest.mark.parametrize("k", ["-1", "2000000"])
def test_rounds_ftfa_steps_named_as_the_option(k, capsys):
    line = _one_error_line(["predict", "fedavg", "--gamma", "0.5", "--r", "1", "--sigma", "1",
                            "--signal", "1", "--rounds", "1", "--local-steps", "1",
                            "--local-step-size", "0.05", f"--steps={k}", "--step-size", "0.1"],
                           capsys)
    assert line == f"error: --steps must be an integer >= 0 and <= 1000000, got {k}"
