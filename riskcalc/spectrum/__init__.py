"""Covariance spectra (paper 003, ``003_4b976ddf5225c17e.txt``, Sec. 6.3): the eigenvalue
distribution H of Sigma_i and the signal distribution G.

Modules: ``distribution`` (``Spectrum``, ``as_spectrum``: H and G, from a SPEC, eigenvalues or a
file), ``ordered`` (a SPEC's eigenvalues in the order of one shared basis: covariate shift),
``file`` (spectrum files, read strictly). The public names are imported here:
``riskcalc.spectrum.Spectrum`` as before the package.
"""

from riskcalc.spectrum.distribution import Spectrum, as_spectrum, spec_uses_d
from riskcalc.spectrum.ordered import (EIGENVALUE_RANGE, MAX_EIGENVALUES, ordered_eigenvalues,
                                       ordered_steps, spec_key, spec_kind, step_count)

__all__ = ["EIGENVALUE_RANGE", "MAX_EIGENVALUES", "Spectrum", "as_spectrum", "ordered_eigenvalues",
           "ordered_steps", "spec_key", "spec_kind", "spec_uses_d", "step_count"]
