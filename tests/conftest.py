"""Shared test fixtures: the spectra the acceptance criteria name."""

import numpy as np
import pytest

from riskcalc import Spectrum


def empirical_10k():
    """A 10,000-atom empirical spectrum: eigenvalues of a Wishart-like sample, fixed seed."""
    rng = np.random.default_rng(20261122)
    return Spectrum.from_eigenvalues(rng.gamma(shape=2.0, scale=0.5, size=10_000))


SPECTRA = {
    "two-point": Spectrum.two_point(1.0, 4.0, 0.5),
    "two-point-aligned": Spectrum([0.1, 3.0], weights=[0.3, 0.7], signal_weights=[0.9, 0.1]),
    # j^-1 over 10,000 eigenvalues has condition number 1e4.
    "powerlaw-cond1e4": Spectrum.power_law(1.0, 10_000),
    "empirical-10k": empirical_10k(),
}


@pytest.fixture(params=list(SPECTRA), ids=list(SPECTRA))
def spectrum(request):
    return SPECTRA[request.param]
