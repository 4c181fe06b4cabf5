"""General covariance, route 1: the effective regularization kappa (DESIGN.md, "Numerics").

For a spectrum H, aspect ratio gamma = d/n and penalty lam >= 0, kappa > 0 solves

    lam = kappa * (1 - gamma * int s / (s + kappa) dH(s))                       (*)

(the self-consistent equation of the deterministic equivalent lam (Sigma_hat + lam)^-1 ~
kappa (Sigma + kappa)^-1). With q(s) = s / (s + kappa) and df2 = gamma int q^2 dH,

    bias     = ||theta||^2 int s (1 - q)^2 dG / (1 - df2),
    variance = sigma^2 df2 / (1 - df2),

where 1 - df2 = lam/kappa + gamma int q (1 - q) dH by (*), a sum of positive terms. This is
the form of the ridge(less) limits of Hastie-Montanari-Rosset-Tibshirani (2019), Thms 3 and 6,
as used by paper 003 (``003_4b976ddf5225c17e.txt``) Thms 1-4; kappa = 1 / (gamma c0) in the
ridgeless case (Def. 6.1) and kappa = lam / (1 - gamma + gamma lam m(-lam)) in the ridge case
(Def. 6.2). ``riskcalc.linear.engine.stieltjes`` computes the same limits from the paper's own
forms.

The same equation for one generalized resolvent (S / eta + Lam(s))^-1 (``diagonal_roots``): its
root c solves c eta + gamma int c s / (c s + Lam(s)) dH(s) = 1, which for Lam = 1 is (*) with
kappa = 1 / c; these are the diagonal equations of ``resolvent_chain``'s chains (derived in
its docstring), batched over parameter points, from a guess by Newton's method
(``_newton_from``) or bracketed, and at a complex step (``root_step``).
"""

from __future__ import annotations

import numpy as np

from riskcalc.solvers import RTOL, halve_to_bracket, increasing_root, note
from riskcalc.spectrum import Spectrum

#: Upper bound on (parameter points x atoms) held in memory at once.
_BLOCK = 1 << 21
#: Halvings of the diagonal equations' lower bracket before giving up (2^-2000 underflows).
_HALVINGS = 2000
#: Newton steps from a guessed root before the bracketed solve instead (``diagonal_roots``).
_WARM_STEPS = 8


def blocks(n_points: int, n_atoms: int):
    """Slices of a batch of parameter points small enough to form (points x atoms) arrays."""
    step = max(1, _BLOCK // max(1, n_atoms))
    return [slice(i, min(i + step, n_points)) for i in range(0, n_points, step)]


def split_weights(w):
    """H(s <= s_j) and H(s > s_j) at each cut j = 0..n of the sorted atoms (weights ``w``),
    each summed over its own atoms: 1 minus one of them rounds where the other is tiny."""
    return (np.concatenate([[0.0], np.cumsum(w)]),
            np.concatenate([np.cumsum(w[::-1])[::-1], [0.0]]))


def effective_ridge(gamma, lam, spectrum: Spectrum) -> np.ndarray:
    """The effective regularization kappa(gamma, lam; H) solving (*).

    Paper 003, Sec. 6.3 (through HMRT19); equation (*) of this module.

    Parameters
    ----------
    gamma : array_like
        Aspect ratio d/n > 0.
    lam : array_like
        Penalty >= 0, broadcast with ``gamma``.
    spectrum : Spectrum
        Eigenvalue distribution H.

    Returns
    -------
    ndarray
        kappa >= 0; kappa = 0 exactly when lam = 0 and gamma <= 1 (least squares).

    Raises
    ------
    SolverError
        If the root cannot be found to tolerance.
    """
    gamma, lam = (np.array(a, dtype=float) for a in np.broadcast_arrays(gamma, lam))
    shape = gamma.shape
    gamma, lam = gamma.ravel(), lam.ravel()
    kappa = np.zeros_like(gamma)
    s, w = spectrum.atoms, spectrum.weights
    sw = s * w
    w_head, w_tail = split_weights(w)
    need = np.flatnonzero((lam > 0) | (gamma > 1))
    for blk in blocks(need.size, s.size):
        idx = need[blk]
        g, l = gamma[idx], lam[idx]

        def fun(k, mask, g=g, l=l):
            inv = 1.0 / (s + k[:, None])
            gm, lm = g[mask], l[mask]
            # 1 - gamma int q (q = s/(s + kappa)) as (1 - gamma W) - gamma int_{s <= kappa} q
            # + gamma int_{s > kappa} (1 - q), W = H(s > kappa): each atom's q or 1 - q = kappa
            # /(s + kappa), whichever is below 1/2, computed directly. 1 - q rounds to 0 for
            # kappa below s eps (kappa ~ sqrt(lam) at gamma = 1), and q to 1 on an atom far
            # above kappa: with half of H at 1e40 and gamma = 2, 1 - gamma int q lost every
            # digit (the bias 5.7e3 times too large).
            above = s > k[:, None]
            cut = np.searchsorted(s, k, side="right")      # the atoms are sorted
            w_up, w_down = w_tail[cut], w_head[cut]
            # 1 - gamma W from the smaller of W and 1 - W (summed W = 1 was 1 - 4e-15).
            value = (np.where(w_down <= w_up, (1.0 - gm) + gm * w_down, 1.0 - gm * w_up)
                     - gm * (np.where(above, 0.0, inv) @ sw)
                     + gm * k * (np.where(above, inv, 0.0) @ w))
            return value - lm / k, gm * ((inv * inv) @ sw) * k + lm / k

        # (*) is increasing in kappa. At lo it is <= -1 (kappa = lam/2) or, for gamma > 1,
        # <= (1 - gamma)/(1 + gamma) (gamma s_min/(s_min + kappa) > 1 below (gamma - 1) s_min);
        # at hi it is >= 1/2, as int s/(s + kappa) <= mean(s)/kappa. Margins survive rounding.
        lo = np.where(g > 1, np.maximum(0.5 * l, 0.5 * (g - 1.0) * s[0]), 0.5 * l)
        hi = 2.0 * (l + g * spectrum.mean)
        kappa[idx] = increasing_root(fun, lo, hi, what="effective ridge kappa")
    return kappa.reshape(shape)


def ridge_factors(gamma, lam, spectrum: Spectrum):
    """Bias per unit ||theta||^2 and variance per unit sigma^2, via kappa.

    Paper 003, Thms 1-2 and Cor. 3.1 for general Sigma (the limits of Bi and Vi), written in the
    effective-ridge form of this module's docstring.

    Parameters
    ----------
    gamma, lam : array_like
        Aspect ratio d/n > 0 and penalty >= 0 (broadcast together).
    spectrum : Spectrum
        Eigenvalue distribution H and signal distribution G.

    Returns
    -------
    bias, variance : ndarray
        At gamma = 1, lam = 0 the variance is +inf and the bias 0 (its limit from either side).
    """
    gamma, lam = (np.array(a, dtype=float) for a in np.broadcast_arrays(gamma, lam))
    kappa = effective_ridge(gamma, lam, spectrum)
    shape = gamma.shape
    gamma, lam, kappa = gamma.ravel(), lam.ravel(), kappa.ravel()
    bias = np.empty_like(gamma)
    var = np.empty_like(gamma)
    s, w, wg = spectrum.atoms, spectrum.weights, spectrum.signal_weights
    for blk in blocks(gamma.size, s.size):
        g, l, k = gamma[blk], lam[blk], kappa[blk]
        pos = k > 0
        k_safe = np.where(pos, k, 1.0)
        # q = s/(s + kappa) and p = 1 - q, each computed directly: p = 1 - q would lose
        # log10(s/kappa) digits as kappa -> 0.
        inv = np.where(pos[:, None], 1.0 / (s + k_safe[:, None]), 1.0 / s)
        q = s * inv
        p = np.where(pos[:, None], k_safe[:, None] * inv, 0.0)
        df2 = g * ((q * q) @ w)
        # lam/kappa -> 1 - gamma as lam -> 0 when gamma < 1, by (*).
        lam_over_kappa = np.where(pos, l / k_safe, 1.0 - g)
        one_minus = lam_over_kappa + g * ((q * p) @ w)
        bias_num = (s * p * p) @ wg
        with np.errstate(divide="ignore", invalid="ignore"):
            bias[blk] = np.where(one_minus > 0, bias_num / one_minus, 0.0)
            var[blk] = np.where(one_minus > 0, df2 / one_minus, np.inf)
    return bias.reshape(shape), var.reshape(shape)


def ridge_variance_lam_derivative(gamma, lam, spectrum: Spectrum) -> np.ndarray:
    """d/d lam of ``ridge_factors``' variance per unit sigma^2, exact (lam > 0).

    Differentiating (*) gives d kappa / d lam = 1 / (1 - df2) (its kappa-derivative is
    lam/kappa + gamma int q (1 - q) dH = 1 - df2), and with dq/dkappa = -q (1 - q) / kappa
    the variance df2 / (1 - df2) moves by d df2 / (1 - df2)^2, with

        d df2 = -2 gamma int q^2 (1 - q) dH / (kappa (1 - df2)),

    one integral of positive terms. (Differentiating 1 - df2 = lam / kappa + gamma int q (1 -
    q) dH term by term instead subtracts 1 / kappa and lam / kappa^2 d kappa, two O(1 / lam)
    terms when gamma < 1 (kappa ~ lam (1 - gamma)): 1.2e-4 lost at lam 1e-12.) Paper 003
    (``003_4b976ddf5225c17e.txt``) Thms 1-2 through (*) of this module; the tangent of a
    client's own ridge variance in the exact lam-gradient of
    ``finite_clients.subordination_gradient``.

    Raises
    ------
    ValueError
        If some lam <= 0 (kappa's derivative is then not that of a ridge).
    """
    gamma, lam = (np.array(a, dtype=float) for a in np.broadcast_arrays(gamma, lam))
    if not np.all(lam > 0):
        raise ValueError("ridge_variance_lam_derivative needs lam > 0")
    shape = gamma.shape
    gamma, lam = gamma.ravel(), lam.ravel()
    kappa = effective_ridge(gamma, lam, spectrum).ravel()
    s, w = spectrum.atoms, spectrum.weights
    out = np.empty_like(gamma)
    for blk in blocks(gamma.size, s.size):
        g, l, k = gamma[blk], lam[blk], kappa[blk]
        inv = 1.0 / (s + k[:, None])
        q, p = s * inv, k[:, None] * inv
        one_minus = l / k + g * ((q * p) @ w)
        out[blk] = -2 * g * ((q * q * p) @ w) / (k * one_minus ** 3)
    return out.reshape(shape)


# --- the diagonal equations of the chains of generalized resolvents (``resolvent_chain``) ---

def diagonal_roots(gamma, atoms, weights, eta, shift, guess=None) -> np.ndarray:
    """The diagonal root c of one block (eta, Lam) per point: c eta + gamma E_H[c s / (c s +
    Lam(s))] = 1 (``resolvent_chain``'s docstring), to share between chains through
    ``resolvent_chain.chain_traces(..., roots=)``.

    Parameters
    ----------
    gamma, eta : float or array_like (points,)
        d / n > 0 and eta >= 0 per point.
    atoms : array_like (n,) or (points, n)
        Eigenvalues of Sigma at the atoms, shared by all points or per point.
    weights : array_like (n,)
        The masses of the atoms (the spectrum H).
    shift : array_like (n,) or (points, n)
        Lam(s) >= 0 at each atom.
    guess : array_like (points,), optional
        Roots of nearby equations (e.g. the last call's, at weights moved by a finite
        difference): Newton's iteration from them (``_newton_from``), the bracketed solve
        where it does not converge at once. The same roots (within ~1e-12 relative, the
        bracketed solve's stopping width), in a few steps instead of ~20-40.

    Returns
    -------
    ndarray (points,)

    Raises
    ------
    ValueError
        If the shapes disagree, or eta = 0 at a point with gamma <= 1 or a non-positive shift.
    SolverError
        If a root has no bracket.
    """
    s = np.asarray(atoms, dtype=float)
    w = np.asarray(weights, dtype=float)
    gamma, eta = np.asarray(gamma, dtype=float), np.asarray(eta, dtype=float)
    lam = np.asarray(shift, dtype=float)
    n = w.size
    if lam.shape[-1:] != (n,) or s.shape[-1:] != (n,) or s.ndim > 2:
        raise ValueError(f"shift and atoms must have shape ({n},) or (points, {n}); got "
                         f"{lam.shape} and {s.shape}")
    try:
        shape = np.broadcast_shapes(gamma.shape, eta.shape, lam.shape[:-1], s.shape[:-1])
    except ValueError:
        raise ValueError("gamma, eta and shift must have one number of points; got shapes "
                         f"{gamma.shape}, {eta.shape}, {lam.shape}") from None
    if len(shape) > 1:
        raise ValueError(f"the points must lie along one axis; got shape {shape}")
    size = int(np.prod(shape))
    g = np.broadcast_to(gamma, shape).reshape(size)
    eta = np.broadcast_to(eta, shape).reshape(size)
    lam = np.broadcast_to(lam, shape + (n,)).reshape(size, n)
    per_point = s.ndim == 2
    if per_point:
        s = np.broadcast_to(s, shape + (n,)).reshape(size, n)
    if guess is not None:
        guess = np.broadcast_to(np.asarray(guess, dtype=float), shape).reshape(size)
    out = np.empty(size)
    for blk in blocks(size, n):
        out[blk] = _diagonal(g[blk], s[blk] if per_point else s, w, eta[blk], lam[blk],
                             None if guess is None else guess[blk])
    return out.reshape(shape)


def root_step(gamma, atoms, weights, eta, shift, roots) -> np.ndarray:
    """The diagonal roots at complex eta and shift (a complex step) from ``roots``, those of
    the real parts (``diagonal_roots``): one Newton step of c eta + gamma E_H[c s / (c s +
    Lam(s))] = 1 in complex arithmetic, c - f(c) / f'(c) with f' at the real parts. f is real
    at the real parts, where ``roots`` solve it, so the imaginary part is the exact tangent
    (to O(step^2)) and the real part the real root. Arguments broadcast as for
    ``diagonal_roots``; returns (points,) complex."""
    s = np.asarray(atoms, dtype=float)
    w = np.asarray(weights, dtype=float)
    c = np.asarray(roots, dtype=float)[..., None]
    eta, lam = np.asarray(eta), np.asarray(shift)
    f = c[..., 0] * eta + gamma * ((c * s / (c * s + lam)) @ w) - 1.0
    slope = np.real(eta) + gamma * ((s * np.real(lam) / (c * s + np.real(lam)) ** 2) @ w)
    return c[..., 0] + 1j * (-np.imag(f) / slope)


def _diagonal(g, s, w, eta, lam, guess=None):
    """c solving c eta + gamma E_H[c s / (c s + Lam(s))] = 1 per point (increasing in c);
    g, eta (B,), lam (B, n), s (n,) or (B, n); ``guess`` (B,) a bracket's centre where it
    holds (``diagonal_roots``)."""
    bad = (eta == 0) & ((g <= 1) | np.any(lam <= 0, axis=1))
    if bad.any():
        raise ValueError("a projection block (eta = 0) needs gamma > 1 and a positive shift; "
                         f"got gamma = {g[bad][0]:g}")

    def fun(c, mask):
        e, gm, la = eta[mask], g[mask], lam[mask]
        sm = s[mask] if s.ndim == 2 else s
        cc = c[:, None]
        den = cc * sm + la
        with np.errstate(divide="ignore", invalid="ignore"):
            frac = np.where(den > 0, cc * sm / den, 1.0)
            dfrac = np.where(den > 0, cc * sm * la / den ** 2, 0.0)
        return c * e + gm * (frac @ w) - 1.0, c * e + gm * (dfrac @ w)

    all_ = np.ones(g.size, dtype=bool)
    if guess is not None:
        roots = _newton_from(fun, guess, all_)
        if roots is not None:
            return roots
    # f(1/eta) >= 0; for eta = 0, c s/(c s + Lam) >= 1 - Lam/(c s) makes f >= 0 at hi.
    with np.errstate(divide="ignore", invalid="ignore"):
        hi = np.where(eta > 0, 1.0 / eta, g * ((lam / s) @ w) / (g - 1.0))
    lo = halve_to_bracket(fun, hi, fun(hi, all_)[0] > 0, halvings=_HALVINGS,
                          what="resolvent chain: a diagonal equation (Lam = 0 with gamma >= 1?)")
    return increasing_root(fun, lo, hi, what="resolvent chain diagonal")


def _newton_from(fun, guess, all_):
    """Newton's iteration in log c from ``guess`` (``diagonal_roots``), or None unless every
    point's last step is below ``solvers.RTOL`` within ``_WARM_STEPS`` steps. f is increasing,
    so its root is unique: a converged point is the root the bracketed solve finds (which
    stops where its bracket is RTOL wide: within ~RTOL of it, where this one is within
    rounding)."""
    with np.errstate(all="ignore"):
        t = np.log(np.asarray(guess, dtype=float))
        if not np.all(np.isfinite(t)):
            return None
        for k in range(_WARM_STEPS):
            f, df = fun(np.exp(t), all_)
            step = f / df
            if not np.all(np.isfinite(step) & (df > 0)):
                return None
            t = t - step
            if np.all(np.abs(step) <= RTOL):
                note("resolvent chain diagonal", t.size, k + 1, float(np.max(np.abs(f))))
                return np.exp(t)
    return None
