"""Independent high-precision routes for paper 003's isotropic formulas (mpmath, 30 digits).

The Marchenko-Pastur law of X^T X / n (d/n -> gamma, Sigma = I) is integrated numerically here,
from its density, instead of through the closed form of paper 003 (Thm 2) that riskcalc uses:
an error in either the closed form or riskcalc's rearrangements shows up as a disagreement.
"""

from __future__ import annotations

import functools

import mpmath as mpm

mpm.mp.dps = 30


def mp_moment(gamma, lam, power: int = 1):
    """int dMP_gamma(x) / (x + lam)^power: m(-lam) for power 1, m'(-lam) for power 2.

    The law has an atom 1 - 1/gamma at 0 when gamma > 1, and density
    sqrt((b - x)(x - a)) / (2 pi gamma x) on [a, b] = [(1 - sqrt gamma)^2, (1 + sqrt gamma)^2].
    Each integral is computed once per process for its (gamma, lam, power) at the working
    precision (``_moment``): claims of paper 003 and their mutants ask for the same ones.
    """
    return _moment(mpm.mpf(gamma), mpm.mpf(lam), power, mpm.mp.prec)


@functools.lru_cache(maxsize=4096)
def _moment(g, lam, power, prec):
    """``mp_moment`` at ``prec`` bits (the working precision: part of the key, not set here)."""
    a, b = (1 - mpm.sqrt(g)) ** 2, (1 + mpm.sqrt(g)) ** 2
    atom = (1 - 1 / g) / lam ** power if g > 1 else mpm.mpf(0)
    nodes = _nodes(g, prec)

    # x = a + (b - a) sin^2(t) removes the square-root endpoint singularities.
    def f(t):
        key = (t._mpf_, mpm.mp.prec)        # hashes 2x faster than the mpf, the same equality
        part = nodes.get(key)
        if part is None:
            x = a + (b - a) * mpm.sin(t) ** 2
            part = nodes[key] = (x, mpm.sqrt((b - x) * (x - a)) / (2 * mpm.pi * g * x)
                                 * (2 * (b - a) * mpm.sin(t) * mpm.cos(t)))
        x, weight = part
        return weight / (x + lam) if power == 1 else weight / (x + lam) ** power
    return atom + mpm.quad(f, [0, mpm.pi / 4, mpm.pi / 2])


@functools.lru_cache(maxsize=64)
def _nodes(g, prec):
    """The parts of ``_moment``'s integrand that do not depend on lam or the power, by
    quadrature node (and the precision quad evaluates it at): x and the weight density x
    Jacobian, so that a node costs one addition and one division (two multiplications more for
    power 2) per lam. The tanh-sinh nodes are the same for every lam, and a golden-section
    search over lam (``003.thm2.lambda-star``) integrates at some 190 lams. The weight's
    product is formed once instead of after the division by (x + lam)^power, which moves the
    integrand by rounding at quad's working precision (its guard bits on) and leaves the
    integrals' bits as they were (measured: 960 moments and ridge limits at 15 and 30 digits,
    gamma from 0.1 to 10, lam from 1e-12 to 100)."""
    return {}


def printed_m(gamma, z):
    """Paper 003, Thm 2, as printed: m(z) = (1 - g - z - sqrt((1 - g - z)^2 - 4 g z)) / (2 g z)."""
    g, z = mpm.mpf(gamma), mpm.mpf(z)
    return (1 - g - z - mpm.sqrt((1 - g - z) ** 2 - 4 * g * z)) / (2 * g * z)


def ridge_limits(gamma, r, sigma, lam):
    """Thm 2 / Cor. 3.1 as printed, from the MP integrals: (B, V) = (r^2 lam^2 m', sigma^2 gamma
    (m - lam m')) at z = -lam."""
    m, dm = mp_moment(gamma, lam, 1), mp_moment(gamma, lam, 2)
    lam = mpm.mpf(lam)
    return (mpm.mpf(r) ** 2 * lam ** 2 * dm,
            mpm.mpf(sigma) ** 2 * mpm.mpf(gamma) * (m - lam * dm))
