"""Issue 32, fuzz38 (logi3): what this fuzz found, each test failing before."""
import pytest

import riskcalc

# Two spectra that describe() reads alike (six digits): atoms 1 and 1.0000001.
TWINS = (riskcalc.Spectrum([1.0, 4.0]), riskcalc.Spectrum([1.0000001, 4.0]))


@pytest.mark.parametrize("call", [
    lambda s: riskcalc.clients_limit("fedavg", gamma=[1.5, 2], r=[1, 1], sigma=[0.5, 0.5],
                                     spectrum=s),
    lambda s: riskcalc.logistic_limit(gamma=2, signal=1, r=1, lam=0.5, spectrum=s),
    lambda s: riskcalc.logistic_limit(gamma=[2, 3], signal=1, r=1, lam=0.5, spectrum=s),
    lambda s: riskcalc.logistic_clients_limit(method="rtfa", gamma=[2, 3], signal=1, r=[1, 1],
                                              lam=0.5, global_lam=0.1, spectrum=s),
], ids=["clients_limit", "logistic_limit", "logistic_limit_array", "logistic_clients_limit"])
def test_two_spectra_are_recorded_apart_by_every_result(call):
    # F1 (session 38's leftover 1): ClientsLimit and the logistic results recorded a spectrum
    # by describe(), so these two (different limits) read the same in their frames and JSON.
    a, b = TWINS
    assert a.describe() == b.describe()
    ra, rb = (call(s).as_dict()["params"]["spectrum"] for s in (a, b))
    assert ra == a.record() and rb == b.record() and ra != rb
