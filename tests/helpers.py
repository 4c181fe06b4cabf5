"""Helpers shared by the test files (not fixtures: plain functions to import)."""

from riskcalc.cli import main
from riskcalc.linear.dynamics import subordination
from riskcalc.linear.dynamics.algorithm1.laws import PsiLaws


def run_cli(argv, capsys):
    """(exit code, stdout, stderr) of the command line ``riskcalc ARGV`` run in this process
    (``riskcalc.cli.main``; pytest's ``capsys`` captures the output). An argparse usage error
    exits by ``SystemExit``: its code is returned as the command's."""
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def top_is_bracketed(top, gam, p, lam, eta, K, gl, rel=1e-9):
    """Whether ``top`` is within ``rel`` of the root of the top-edge equation of
    ``algorithm1.rate.contraction`` (its bracketing route, exact partial fractions ``PsiLaws``):
    F(z) = (z - 1 + g lam) / (g lam) - top(K(z)) rises through 0 there, so a sign change across
    top (1 -/+ rel) pins the root as brentq's solve to rel did, at 2 edge solves for its ~20."""
    def F(z):
        return (z - 1 + gl) / gl - subordination.edge(PsiLaws(gam, p, lam, eta, K, z), "up")

    delta = rel * abs(top)
    return F(top - delta) < 0 < F(top + delta)
