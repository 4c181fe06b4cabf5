"""Issue 32, fuzz38 (spec2): what this fuzz found, each test failing before."""

import numpy as np

from riskcalc import Spectrum


def test_spectra_compare_by_value_with_a_consistent_hash():
    # F1: Spectrum([1, 2]) == Spectrum([1, 2]) was False (equality by identity; a set or a
    # dict key held equal spectra apart). Now value equality: the same atoms, weights and
    # signal weights, and signal weights given by both or neither (routes needing G = H
    # refuse given ones).
    a, b = Spectrum([1, 2]), Spectrum(np.array([2.0, 1.0]))
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert Spectrum([1, 1, 2], weights=[0.25, 0.25, 0.5]) == a
    assert a != Spectrum([1, 2], signal_weights=[0.5, 0.5])
    assert a != Spectrum([1, 2.0000001]) and a != Spectrum.identity() and a != "identity"
