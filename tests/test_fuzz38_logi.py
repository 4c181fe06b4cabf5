"""Issue 32, fuzz38 (logi): what this fuzz found, each test failing before."""

import pytest

import riskcalc


@pytest.mark.parametrize("kw", [dict(clients=2), dict(clients=2, spectrum="scaled:4")])
def test_finite_clients_refuse_a_signal_beyond_the_test_metrics_rule_up_front(kw):
    """F1 (note37 2.4): ``logistic_limit(gamma=1, signal=1700, r=1, lam=1, clients=2,
    global_lam=1)`` solved for 24 s (71 s loaded) and then refused: every target's test
    metrics are computed on the ladder's finest rule, whose label-weight panels reach
    ``||w_i|| <= 1692``; or, loaded, refused at max_seconds blaming "nearly separable data" at
    lam = 1. Now refused before any solve (the work estimate would refuse first here: 1e-3 s),
    under a spectrum at ``||w_i|| sqrt(<s>)``."""
    signal = 900.0 if "spectrum" in kw else 1700.0
    with pytest.raises(ValueError, match=r"at 1[78]00, beyond 1692: the finite-M limits' test "
                                         r"metrics .*lower signal and r"):
        riskcalc.logistic_limit(gamma=1.0, signal=signal, r=1.0, lam=1.0, global_lam=1.0,
                                max_seconds=1e-3, **kw)
