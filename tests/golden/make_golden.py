"""Regenerate ``limits.json``: high-precision reference values of the ridge(less) limits.

An implementation independent of ``riskcalc``'s numerics: mpmath at 60 digits, the formulas of
paper 003 (``003_4b976ddf5225c17e.txt``) Sec. 6.3 and Thm 2 exactly as corrected in
``riskcalc/linear/engine/stieltjes.py`` (with the lam^2 of eq. 18 and the squares of eqs. 15-16), with no
algebraic rearrangement (at 60 digits cancellation is harmless), m solved in the variable m
itself, and m' = dm/dz by numerical differentiation instead of implicit differentiation.

Run: ``python tests/golden/make_golden.py`` (about a minute).
"""

import json
import pathlib

import mpmath as mp

mp.mp.dps = 60

SPECTRA = {
    "identity": ([1], [1], None),
    "two-point": ([1, 4], [mp.mpf(1) / 2, mp.mpf(1) / 2], None),
    "two-point-aligned": ([mp.mpf(1) / 10, 3], [mp.mpf(3) / 10, mp.mpf(7) / 10],
                          [mp.mpf(9) / 10, mp.mpf(1) / 10]),
    "powerlaw-1.5-40": (None, None, None),
}
GAMMAS = ["0.5", "0.999", "1.001", "2", "1000"]
LAMS = ["0", "1e-8", "1e-3", "0.5", "1e8"]


def powerlaw(p, d):
    s = [mp.mpf(j) ** (-mp.mpf(p)) for j in range(1, d + 1)]
    mean = mp.fsum(s) / d
    return [x / mean for x in s], [mp.mpf(1) / d] * d


def root_increasing(f, lo, hi):
    """Root of an increasing f on [lo, hi] (f(lo) < 0 < f(hi)) by geometric bisection to 55
    significant digits: slow, but it cannot pick a wrong branch."""
    a, b = lo, hi
    assert f(a) < 0 < f(b), (a, b)
    for _ in range(5000):
        c = mp.sqrt(a * b)
        if f(c) < 0:
            a = c
        else:
            b = c
        if b - a < mp.mpf(10) ** -55 * b:
            return (a + b) / 2
    raise RuntimeError("bisection did not converge")


def m_of_z(z, gamma, s, w):
    """Solve m = sum_j w_j / (s_j (1 - gamma - gamma z m) - z) for real z < 0."""
    lam = -z
    lo = (gamma - 1) / (gamma * lam) if gamma > 1 else mp.mpf(10) ** -300
    return root_increasing(
        lambda m: m - mp.fsum(wj / (sj * (1 - gamma - gamma * z * m) - z) for sj, wj in zip(s, w)),
        lo * (1 + mp.mpf(10) ** -55), 1 / lam)


def ridge(gamma, lam, s, w, wg):
    z = -lam
    m = m_of_z(z, gamma, s, w)
    h = lam * mp.mpf(10) ** -18
    dm = (m_of_z(z + h, gamma, s, w) - m_of_z(z - h, gamma, s, w)) / (2 * h)
    a = 1 - gamma - gamma * z * m
    m1 = (mp.fsum(wj * sj**2 * a / (sj * a - z) ** 2 for sj, wj in zip(s, w))
          / (1 - gamma * mp.fsum(wj * z * sj / (sj * a - z) ** 2 for sj, wj in zip(s, w))))
    den = [lam + (1 - gamma + gamma * lam * m) * sj for sj in s]
    bias = lam**2 * (1 + gamma * m1) * mp.fsum(g * sj / dj**2 for sj, g, dj in zip(s, wg, den))
    var = gamma * mp.fsum(wj * sj**2 * (1 - gamma + gamma * lam**2 * dm) / dj**2
                          for sj, wj, dj in zip(s, w, den))
    return bias, var


def ridgeless(gamma, s, w, wg):
    if gamma < 1:
        return mp.mpf(0), gamma / (1 - gamma)
    c0 = root_increasing(lambda c: (1 - 1 / gamma)
                         - mp.fsum(wj / (1 + c * gamma * sj) for sj, wj in zip(s, w)),
                         mp.mpf(10) ** -30, mp.mpf(10) ** 30)
    j1 = mp.fsum(wj * sj / (1 + c0 * gamma * sj) ** 2 for sj, wj in zip(s, w))
    j2 = mp.fsum(wj * sj**2 / (1 + c0 * gamma * sj) ** 2 for sj, wj in zip(s, w))
    g_int = mp.fsum(g * sj / (1 + c0 * gamma * sj) ** 2 for sj, g in zip(s, wg))
    return (1 + gamma * c0 * j2 / j1) * g_int, gamma * c0 * j2 / j1


def isotropic(gamma, lam):
    """Thm 2 closed form: m(z) printed in paper 003, m' by numerical differentiation."""
    if lam == 0:
        return ((1 - 1 / gamma, 1 / (gamma - 1)) if gamma > 1 else (mp.mpf(0), gamma / (1 - gamma)))

    def m(z):
        return (1 - gamma - z - mp.sqrt((1 - gamma - z) ** 2 - 4 * gamma * z)) / (2 * gamma * z)

    dm = mp.diff(m, -lam)
    return lam**2 * dm, gamma * (m(-lam) - lam * dm)


def main():
    rows = []
    for name, (s, w, wg) in SPECTRA.items():
        if s is None:
            s, w = powerlaw(1.5, 40)
        s = [mp.mpf(x) for x in s]
        wg = w if wg is None else wg
        for g_txt in GAMMAS:
            for l_txt in LAMS:
                gamma, lam = mp.mpf(g_txt), mp.mpf(l_txt)
                if name == "identity":
                    bias, var = isotropic(gamma, lam)
                elif lam == 0:
                    bias, var = ridgeless(gamma, s, w, wg)
                else:
                    bias, var = ridge(gamma, lam, s, w, wg)
                rows.append({"spectrum": name, "gamma": g_txt, "lam": l_txt,
                             "bias": mp.nstr(bias, 30), "variance": mp.nstr(var, 30)})
                print(rows[-1])
    spectra = {k: (None if v[0] is None else {"atoms": [str(x) for x in v[0]],
                                              "weights": [str(x) for x in v[1]],
                                              "signal_weights": None if v[2] is None
                                              else [str(x) for x in v[2]]})
               for k, v in SPECTRA.items()}
    out = {"about": __doc__.strip().splitlines()[0], "spectra": spectra, "rows": rows}
    path = pathlib.Path(__file__).with_name("limits.json")
    path.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
