"""General covariance, route 2: the paper's own implicit forms (paper 003, Sec. 6.3, Defs 6.1-6.2).

Paper 003 (``003_4b976ddf5225c17e.txt``) recalls from Hastie-Montanari-Rosset-Tibshirani
(HMRT19, Thm 3 and Def. 2 / Thm 6) the limits of ridgeless and ridge regression for a general
spectrum H and signal distribution G. Corrected forms implemented here (see ERRATA):

Ridgeless, gamma > 1 (Def. 6.1): c0 >= 0 solves 1 - 1/gamma = int 1 / (1 + c0 gamma s) dH and

    B = ||theta||^2 (1 + gamma c0 J2 / J1) int s / (1 + c0 gamma s)^2 dG,        (15)
    V = sigma^2 gamma c0 J2 / J1,                                                (16)
    J_k = int s^k / (1 + c0 gamma s)^2 dH.

Ridge, lam > 0 (Def. 6.2): m(z) solves m = int 1 / (s [1 - gamma - gamma z m] - z) dH, and

    m_1(z) = int s^2 a / (s a - z)^2 dH  /  (1 - gamma int z s / (s a - z)^2 dH),
    B = lam^2 ||theta||^2 (1 + gamma m_1(-lam)) int s / [lam + a s]^2 dG,        (17)
    V = sigma^2 gamma int s^2 (1 - gamma + gamma lam^2 m'(-lam)) / [lam + a s]^2 dH, (18)

with a = 1 - gamma + gamma lam m(-lam) (a = 1 - gamma - gamma z m at z = -lam).

ERRATA (paper 003, Sec. 6.3, as transcribed in ``003_4b976ddf5225c17e.txt``), decided by the
direct simulation of ``tests/test_theory_vs_simulation.py`` (d = 800, 6 designs):

* eq. (15) prints the three integrands as s^2/(1 + c0 gamma s), s/(1 + c0 gamma s) and
  s/(1 + c0 gamma s) dG: each denominator must be squared (HMRT19, Thm 3). For H = two-point
  (1 and 4, mass 1/2 each), gamma = 2: printed bias 2.5 ||theta||^2, corrected 1.0,
  simulated 1.000 (s.e. 0.0003 at d = 1000).
* eq. (16) prints V = sigma^2 gamma J2/J1 without the factor c0 and without the squares. Same
  H and gamma: printed 6.0 sigma^2, corrected 1.25 sigma^2, simulated 1.251 (s.e. 0.001). For
  Sigma = I the printed form gives sigma^2 gamma instead of Thm 1's sigma^2 / (gamma - 1).
* eq. (18) prints the factor 1 - gamma + gamma lam m'(-lam); the derivative term carries lam^2
  (HMRT19, Def. 2). Same H, gamma = 2, lam = 1/2: printed 15.03 sigma^2, corrected 0.6569
  sigma^2, confirmed by simulation. (At lam = 1 the two coincide, which hides the error in
  the isotropic example one would try first.)

Numerics: the equation for m is solved in the variable a (a bijection, m = (a - 1 + gamma) /
(gamma lam)), in which it reads a = 1 - gamma int s a / (s a + lam) dH; m, m' and m_1 are then
evaluated in forms free of cancellation (derivations in the function docstrings). Written
directly in m, the forms lose about log10(1/lam) digits as lam -> 0.
"""

from __future__ import annotations

import numpy as np

from riskcalc.linear.engine.kappa import blocks, split_weights
from riskcalc.solvers import increasing_root
from riskcalc.spectrum import Spectrum


def c0(gamma, spectrum: Spectrum) -> np.ndarray:
    """The constant c0(gamma, H) of paper 003, Def. 6.1 (gamma > 1).

    Parameters
    ----------
    gamma : array_like
        Aspect ratio d/n > 1.
    spectrum : Spectrum
        Eigenvalue distribution H.

    Returns
    -------
    ndarray
        The unique c0 > 0 with 1 - 1/gamma = int 1 / (1 + c0 gamma s) dH(s).
    """
    gamma = np.array(gamma, dtype=float)
    if np.any(gamma <= 1):
        raise ValueError("c0 is defined for gamma > 1 only (paper 003, Def. 6.1)")
    shape = gamma.shape
    gamma = gamma.ravel()
    s, w = spectrum.atoms, spectrum.weights
    index, (w_head, w_tail) = np.arange(w.size), split_weights(w)
    out = np.empty_like(gamma)
    for blk in blocks(gamma.size, s.size):
        g = gamma[blk]

        def fun(c, mask, g=g):
            # int x v dH = 1/gamma, v = 1/(1 + x), x = c gamma s (equally int v dH = 1 -
            # 1/gamma), as (W - 1/gamma) - int_{x > 1} v + int_{x <= 1} x v, W = H(x > 1):
            # each atom's v or x v = 1 - v, whichever is below 1/2, computed directly, and
            # W - 1/gamma from the smaller of W and 1 - W. 1 - 1/gamma - int v rounded to 0 for
            # large gamma (x ~ 1/gamma: gamma = 1e20 gave half the variance), and either
            # integral whole on atoms on both sides of x = 1 (half of H at 1e-100, half at
            # 1e100, gamma = 2: bias 0.354 for 0.5).
            gm = g[mask]
            x = c[:, None] * gm[:, None] * s
            v, xv = 1.0 / (1.0 + x), x / (1.0 + x)
            cut = np.searchsorted(s, 1.0 / (c * gm), side="right")    # the atoms are sorted
            above = index >= cut[:, None]
            w_up, w_down = w_tail[cut], w_head[cut]
            f = (np.where(w_down <= w_up, (gm - 1.0) / gm - w_down, w_up - 1.0 / gm)
                 - np.where(above, v, 0.0) @ w + np.where(above, 0.0, xv) @ w)
            return f, (v * xv) @ w

        # Jensen's inequality brackets the root: int 1/(1 + c gamma s) lies between
        # 1/(1 + c gamma mean(s)) and 1/(1 + c gamma s_min).
        lo = 0.5 / (g * (g - 1.0) * spectrum.mean)
        hi = 2.0 / (g * (g - 1.0) * s[0])
        out[blk] = increasing_root(fun, lo, hi, what="c0 (Def. 6.1)")
    return out.reshape(shape)


def stieltjes(gamma, lam, spectrum: Spectrum):
    """m(-lam), m'(-lam) and m_1(-lam) of paper 003, Def. 6.2, and a = 1 - gamma + gamma lam m.

    Parameters
    ----------
    gamma : array_like
        Aspect ratio d/n > 0.
    lam : array_like
        lam > 0, or lam = 0 with gamma < 1 (then a = 1 - gamma and m = int 1/(s a) dH).
    spectrum : Spectrum
        Eigenvalue distribution H.

    Returns
    -------
    dict of ndarray
        ``a``, ``m``, ``dm`` (= m'(z) at z = -lam), ``m1``, and the integrals ``i1`` =
        int s/D^2 dH, ``i2`` = int s^2/D^2 dH with D = s a + lam (reused by the limits).

    Notes
    -----
    Differentiating the equation for m in z and setting z = -lam gives
    m' = int (1 + gamma s m) / D^2 dH / (1 + gamma lam i1). The factor of eq. (18) is then
    1 - gamma + gamma lam^2 m' = a / (1 + gamma lam i1), because
    m - lam m' = a i1 / (1 + gamma lam i1) (using m - lam int 1/D^2 = a i1).
    """
    gamma, lam = (np.array(v, dtype=float) for v in np.broadcast_arrays(gamma, lam))
    if np.any((lam == 0) & (gamma >= 1)):
        raise ValueError("the Stieltjes route needs lam > 0 when gamma >= 1 "
                         "(use c0 for the ridgeless limit)")
    shape = gamma.shape
    gamma, lam = gamma.ravel(), lam.ravel()
    s, w = spectrum.atoms, spectrum.weights
    index, (w_head, w_tail) = np.arange(w.size), split_weights(w)
    a = 1.0 - gamma
    ridge = np.flatnonzero(lam > 0)
    for blk in blocks(ridge.size, s.size):
        idx = ridge[blk]
        g, l = gamma[idx], lam[idx]

        def fun(x, mask, g=g, l=l):
            # psi(a) = a - 1 + gamma int u dH, u = s a/(s a + lam), as (a - 1 + gamma W) +
            # gamma int_{s a <= lam} u - gamma int_{s a > lam} v, v = 1 - u = lam/(s a + lam),
            # W = H(s a > lam): each atom's u or v, whichever is below 1/2, computed directly
            # (1 - u rounded to 0 near gamma = 1 at tiny lam: gamma = 1, lam = 1e-60 gave bias
            # 9.4e-31 for 5e-31; and on an atom far above lam / a), and a - 1 + gamma W summed
            # smaller terms first (a ~ 0 near gamma = 1, a ~ 1 at tiny gamma).
            gm = g[mask]
            d = s * x[:, None] + l[mask, None]
            u, v = s * x[:, None] / d, l[mask, None] / d
            cut = np.searchsorted(s, l[mask] / x, side="right")      # the atoms are sorted
            above = index >= cut[:, None]
            w_up, w_down = w_tail[cut], w_head[cut]
            # gamma W and gamma W - 1 from the smaller of W and 1 - W (a summed W = 1 is not).
            low = w_down <= w_up
            gw = gm * np.where(low, 1.0 - w_down, w_up)
            c = np.where(low, (gm - 1.0) - gm * w_down, gw - 1.0)
            shift = np.where(np.abs(c) <= np.abs(x - 1.0), x + c, (x - 1.0) + gw)
            f = shift + gm * (np.where(above, 0.0, u) @ w) - gm * (np.where(above, v, 0.0) @ w)
            return f, x + gm * ((u * v) @ w)

        # psi(a) = a - 1 + gamma int s a/(s a + lam) is increasing, psi(1) > 0, and
        # psi(a) <= a (1 + gamma mean(s) / lam) - 1 < 0 at the lower end. For gamma >= 2 the
        # root lies below 2 lam / (s_min (gamma - 1)), where gamma U >= 2 gamma / (gamma + 1)
        # >= 4/3: the bracket 1 left Newton's log steps crawling down (gamma = 1e100, lam =
        # 1e-100: no convergence in 200 steps).
        lo = 0.5 * l / (l + g * spectrum.mean)
        with np.errstate(divide="ignore"):
            hi = np.where(g >= 2, np.minimum(1.0, 2.0 * l / (s[0] * (g - 1.0))), 1.0)
        a[idx] = increasing_root(fun, lo, hi, what="Stieltjes transform m (Def. 6.2)")
    out = {k: np.empty_like(gamma) for k in ("m", "dm", "m1", "i1", "i2")}
    for blk in blocks(gamma.size, s.size):
        g, l, aa = gamma[blk], lam[blk], a[blk]
        inv = 1.0 / (s * aa[:, None] + l[:, None])
        m = inv @ w
        i1 = (s * inv * inv) @ w
        i2 = (s * s * inv * inv) @ w
        denom = 1.0 + g * l * i1
        out["m"][blk] = m
        out["i1"][blk], out["i2"][blk] = i1, i2
        # Divided by denom between the two factors inv: their product overflowed first
        # (gamma = 1e70, lam = 1e-100: m' = 1e200 through 1e370).
        out["dm"][blk] = (((1.0 + g[:, None] * s * m[:, None]) * inv / denom[:, None]) * inv) @ w
        out["m1"][blk] = aa * i2 / denom
    out["a"] = a
    return {k: v.reshape(shape) for k, v in out.items()}


def ridge_factors(gamma, lam, spectrum: Spectrum):
    """Bias per unit ||theta||^2 and variance per unit sigma^2 from the paper's forms.

    Paper 003, eqs. (15)-(16) (lam = 0, gamma > 1, through c0) and (17)-(18) (lam > 0, or
    gamma < 1, through m and m_1), corrected as in this module's ERRATA.

    Parameters
    ----------
    gamma, lam : array_like
        Aspect ratio d/n > 0 and penalty >= 0 (broadcast together).
    spectrum : Spectrum
        H and G.

    Returns
    -------
    bias, variance : ndarray
        At gamma = 1, lam = 0: bias 0 and variance +inf.
    """
    gamma, lam = (np.array(v, dtype=float) for v in np.broadcast_arrays(gamma, lam))
    bias = np.zeros_like(gamma)
    var = np.full_like(gamma, np.inf)
    s, wg = spectrum.atoms, spectrum.signal_weights
    ridgeless = (lam == 0) & (gamma > 1)
    if ridgeless.any():
        g = gamma[ridgeless]
        c = c0(g, spectrum)
        # v = 1/(1 + c0 gamma s) and s v, not (1 + c0 gamma s)^-2: its square overflowed on an
        # atom far above 1/(c0 gamma) and dropped the atom (variance 5e8 for 1e9).
        v = 1.0 / (1.0 + c[:, None] * g[:, None] * s)
        sv = s * v
        j1 = (sv * v) @ spectrum.weights
        j2 = (sv * sv) @ spectrum.weights
        ratio = g * c * j2 / j1
        bias[ridgeless] = (1.0 + ratio) * ((sv * v) @ wg)
        var[ridgeless] = ratio
    rest = (lam > 0) | (gamma < 1)
    if rest.any():
        g, l = gamma[rest], lam[rest]
        st = stieltjes(g, l, spectrum)
        denom = s * st["a"][:, None] + l[:, None]
        g_int = (s / denom**2) @ wg
        bias[rest] = l * l * (1.0 + g * st["m1"]) * g_int
        # a i2 <= int s/(s a + lam) dH first: a / (1 + gamma lam i1) underflowed (gamma = 1e70,
        # lam = 1e-100: variance 0 for 1e-70).
        var[rest] = (st["a"] * st["i2"]) * (g / (1.0 + g * l * st["i1"]))
    return bias, var
