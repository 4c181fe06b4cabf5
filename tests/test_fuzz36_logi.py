"""Issue 32, fuzz36 (logi): what this fuzz found, each test failing before."""

import pytest

import riskcalc

SPEC = riskcalc.Spectrum([1.0, 4.0], weights=[0.5, 0.5])


@pytest.mark.parametrize("kw, name", [
    (dict(gamma=[], signal=1.0, r=1.0, lam=0.1), "gamma"),
    (dict(gamma=1.0, signal=1.0, r=1.0, lam=[], method="local_ridge"), "lam"),
    (dict(gamma=1.0, signal=[], r=1.0, lam=0.1, centre="fedavg"), "signal"),
    (dict(gamma=[], signal=1.0, r=1.0, lam=0.1, spectrum=SPEC), "gamma"),
    (dict(gamma=1.0, signal=1.0, r=[[1.0, 2.0], [1.0]], lam=0.1), "r"),
])
def test_empty_or_ragged_array_named(kw, name):
    """F1: an empty array was "not enough values to unpack (expected 3, got 0)" (an empty
    result under a spectrum), a ragged list numpy's message naming no parameter."""
    with pytest.raises(ValueError, match=f"^{name} must be"):
        riskcalc.logistic_limit(**kw)
