"""Symbolic checks (sympy) of the isotropic closed forms of paper 003, Thm 2 and Cor. 3.1."""

import sympy as sp

import riskcalc

g, lam, z, r, sig = sp.symbols("gamma lambda z r sigma", positive=True)


def m_closed(zz):
    """The Marchenko-Pastur Stieltjes transform as printed in paper 003, Thm 2."""
    return (1 - g - zz - sp.sqrt((1 - g - zz) ** 2 - 4 * g * zz)) / (2 * g * zz)


def risk_expr():
    """r^2 lam^2 m'(-lam) + sigma^2 gamma (m(-lam) - lam m'(-lam)) as an expression in lam."""
    dm = sp.diff(m_closed(z), z).subs(z, -lam)
    m = m_closed(z).subs(z, -lam)
    return r**2 * lam**2 * dm, sig**2 * g * (m - lam * dm)


def test_m_satisfies_the_marchenko_pastur_quadratic():
    m = m_closed(z)
    assert sp.simplify(sp.expand(g * z * m**2 - (1 - g - z) * m + 1)) == 0


def test_risk_derivative_vanishes_at_lambda_star():
    bias, var = risk_expr()
    deriv = sp.diff(bias + var, lam)
    for gv, rv, sv in [(2, 1, sp.Rational(1, 2)), (sp.Rational(1, 2), 2, 1), (5, 3, 2)]:
        gv, rv, sv = map(sp.sympify, (gv, rv, sv))
        at = deriv.subs({g: gv, r: rv, sig: sv}).subs(lam, sv**2 * gv / rv**2)
        assert sp.simplify(at) == 0
        # ... and it is a minimum: the derivative changes sign from - to +.
        star = sv**2 * gv / rv**2
        d = deriv.subs({g: gv, r: rv, sig: sv})
        assert d.subs(lam, star * sp.Rational(9, 10)).evalf(30) < 0
        assert d.subs(lam, star * sp.Rational(11, 10)).evalf(30) > 0


def test_lambda_to_zero_gives_ftfa_and_infinity_gives_fedavg():
    bias, var = risk_expr()
    for gv in (2, 3, sp.Rational(7, 2)):
        b0 = sp.limit(bias.subs(g, gv), lam, 0, "+")
        v0 = sp.limit(var.subs(g, gv), lam, 0, "+")
        assert sp.simplify(b0 - r**2 * (1 - sp.Integer(1) / gv)) == 0
        assert sp.simplify(v0 - sig**2 / (gv - 1)) == 0
        assert sp.simplify(sp.limit(bias.subs(g, gv), lam, sp.oo) - r**2) == 0
        assert sp.limit(var.subs(g, gv), lam, sp.oo) == 0
    # gamma < 1: least squares.
    gv = sp.Rational(1, 3)
    assert sp.limit(bias.subs(g, gv), lam, 0, "+") == 0
    assert sp.simplify(sp.limit(var.subs(g, gv), lam, 0, "+") - sig**2 * gv / (1 - gv)) == 0


def test_numeric_closed_form_matches_sympy_at_rationals():
    bias, var = risk_expr()
    for gv, lv in [(2, sp.Rational(1, 2)), (sp.Rational(1, 2), sp.Rational(1, 10)), (9, 4)]:
        subs = {g: gv, lam: lv, r: 1, sig: 1}
        res = riskcalc.limit("rtfa", gamma=float(gv), lam=float(lv), r=1.0, sigma=1.0)
        assert abs(res.bias - float(bias.subs(subs).evalf(40))) < 1e-14
        assert abs(res.variance - float(var.subs(subs).evalf(40))) < 1e-14
