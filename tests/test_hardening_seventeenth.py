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
    from riskcalc.cli.advise_table import _gain_text

    assert _gain_text(-1e-12) == _gain_text(4e-5) == _gain_text(None) == "no gain over samples"
    assert _gain_text(0.0123) == "gain 1.23% over samples"
    assert _gain_text(-0.02) == "gain -2.00% over samples"


# was: built once, the repetition unsaid (a value given twice is refused elsewhere).
def test_a_format_given_twice_is_refused(tmp_path, capsys):
    line = _one_error_line(["figures", "p003-region", "--formats", "png,png", "--out",
                            str(tmp_path)], capsys)
    assert line == "error: --formats: png given twice: give each format once; got 'png,png'"
    assert not any(tmp_path.iterdir())
