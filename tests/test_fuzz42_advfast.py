"""Issue 32, fuzz42 (advfast): what this fuzz found, each test failing before."""

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
