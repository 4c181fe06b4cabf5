"""The support edges of FedAvg's round map D (``subordination.edges``) against two independent
routes: the density of the complex subordination solve near the edge, and the explicit
real-axis parametrization of the spectrum route (``sigma.fedavg.one_step.edges``) at Sigma = I (K = 1).
The case gamma = (3, 4), p = (0.2, 0.8) has an atom at 0 and a gap branch on which a bisection
from omega ~ 1e-300 used to stop at a point that was no root (lower edge 3.4% low)."""

import numpy as np
import pytest

from riskcalc.linear.dynamics import subordination
from riskcalc.linear.dynamics.client_laws import ClientLaws
from riskcalc.linear.dynamics.sigma.fedavg.one_step import edges as sigma_edges

CASES = [((3.0, 4.0), (0.2, 0.8)), ((2.0, 5.0, 3.0), (0.5, 0.3, 0.2)), ((1.5, 8.0), (0.9, 0.1))]


@pytest.mark.parametrize("gam,p", CASES)
def test_edges_agree_with_the_explicit_parametrization(gam, p):
    gam, p = np.array(gam), np.array(p)
    a, b, mu0 = subordination.edges(ClientLaws(gam, p, 1.0, 1))
    a2, b2, mu02 = sigma_edges([1.0], [1.0], gam, p)
    np.testing.assert_allclose([a, b, mu0], [a2, b2, mu02], rtol=1e-9)


def test_lower_edge_is_where_the_density_starts():
    laws = ClientLaws(np.array([3.0, 4.0]), np.array([0.2, 0.8]), 1.0, 1)
    a, _, mu0 = subordination.edges(laws)
    eps = 1e-9
    xs = a * np.array([0.99, 0.999, 1.001, 1.01])
    _, G = subordination.solve(laws, lambda t: xs + 1j * t, 8.0, np.geomspace(3.0, eps, 500))
    density = -G.imag / np.pi
    # Outside the support only the Lorentzian tail of the atom at 0 remains: mu0 eps / (pi x^2).
    tail = mu0 * eps / (np.pi * xs ** 2)
    assert np.all(density[:2] < 10 * tail[:2])
    # Inside, a square-root edge: density ~ c sqrt(x - a) with c of order 1 / a here.
    assert np.all(density[2:] > 1e-3)


def test_edges_are_kept_per_exact_input(monkeypatch):
    """``edges`` keeps the edges of its last distinct inputs, keyed on each array's
    dtype, shape and bytes: a repeated input (another array of the same values) is the kept
    value, one changed in place is solved anew, and a failing solve or an input over
    ``EDGES_MEMO_BYTES`` is not kept. Every value is the solve's own."""
    from riskcalc.linear.dynamics.sigma.fedavg import edges as module

    atoms, weights = np.array([1.0, 4.0]), np.array([0.5, 0.5])
    gam, p = np.array([2.0, 0.5]), np.array([0.5, 0.5])
    module.edges.cache_clear()
    first = module.edges(atoms, weights, gam, p)
    assert first == module._edges(atoms, weights, gam, p)
    assert module.edges(atoms.copy(), list(weights), gam, p) == first
    assert module.edges.cache_info()[:2] == (1, 1)          # (hits, misses)
    gam[0] = 3.0                                            # changed in place: a new input
    moved = module.edges(atoms, weights, gam, p)
    assert moved == module._edges(atoms, weights, gam, p) and moved != first
    assert module.edges.cache_info()[:2] == (1, 2)

    def fails(*args):
        raise module.SolverError("no edge")

    monkeypatch.setattr(module, "_edges", fails)
    other = np.array([0.3, 0.7])
    with pytest.raises(module.SolverError):
        module.edges(atoms, weights, gam, other)
    monkeypatch.undo()
    assert module.edges(atoms, weights, gam, other) == module._edges(atoms, weights, gam,
                                                                     other)
    assert module.edges.cache_info()[:2] == (1, 4)          # solved again, not kept failing
    size = module.edges.cache_info().currsize
    monkeypatch.setattr(module, "EDGES_MEMO_BYTES", 8 * 7)
    assert module.edges(atoms, weights, gam, other[::-1]) == module._edges(
        atoms, weights, gam, other[::-1])
    assert module.edges.cache_info().currsize == size       # 8 numbers: solved, not kept
    module.edges.cache_clear()


def test_pencil_edges_are_kept_per_exact_input(monkeypatch):
    """``pencil_edges.edges`` keeps the edges of its last distinct inputs, keyed on the pencil's
    class and attributes, ``top``, ``qmax``, ``fold``, ``near`` and ``both``: an equal pencil
    built again gets the kept value and the bisection count its solve gave ``fallback``; another
    step, class, ``qmax``, ``fold``, ``near`` or ``both`` is solved anew, and neither a failing
    solve nor a pencil with an attribute it cannot key on is kept. The solve is a stand-in that
    records its inputs (the values are the solve's whatever it is:
    ``tests/test_rounds_sigma_alg1_routes.py`` and the other routes' tests compare real ones)."""
    from riskcalc.linear.dynamics.sigma import pencil_edges as sp
    from riskcalc.linear.dynamics.sigma.sigma_pencil import SigmaPencil
    from riskcalc.linear.dynamics.sigma.sigma_chain import ChainPencil

    solved = []

    def solve(pencil, top, qmax, fold, fallback, near, both):
        solved.append(pencil)
        if fold:
            fallback(2)
        return pencil.eta, float(np.sum(top)), len(solved)

    monkeypatch.setattr(sp, "_edges", solve)
    args = ([1.0], [1.0], np.array([0.5, 2.0]), np.array([0.4, 0.6]))
    top = np.array([1.5, 5.8])
    sp.edges.cache_clear()
    asked = []
    first = sp.edges(SigmaPencil(*args, 0.3, 1), top, fold=True, fallback=asked.append)
    assert first == (0.3, 7.3, 1) and asked == [2]
    again = sp.edges(SigmaPencil(*[np.array(a, float) for a in args], 0.3, 1), top.copy(),
                     fold=True, fallback=asked.append)
    assert again == first and asked == [2, 2] and len(solved) == 1
    assert sp.edges(SigmaPencil(*args, 0.3, 1), list(top), fold=True) == first
    for pen, fold, qmax in ((SigmaPencil(*args, 0.31, 1), True, None),
                            (ChainPencil(*args, 0.3, 1), True, None),
                            (SigmaPencil(*args, 0.3, 1), False, None),
                            (SigmaPencil(*args, 0.3, 1), True, top)):
        sp.edges(pen, top, qmax=qmax, fold=fold)
    assert len(solved) == 5
    sp.edges(SigmaPencil(*args, 0.3, 1), top, fold=True, near=[0.9])     # another ``near``
    sp.edges(SigmaPencil(*args, 0.3, 1), top, fold=True, near=[0.9])
    assert len(solved) == 6
    sp.edges(SigmaPencil(*args, 0.3, 1), top, fold=True, both=False)   # the bottom edge alone
    sp.edges(SigmaPencil(*args, 0.3, 1), top, fold=True, both=False)
    assert len(solved) == 7

    def fails(*a):
        raise sp.SolverError("no edge")
    monkeypatch.setattr(sp, "_edges", fails)
    with pytest.raises(sp.SolverError):
        sp.edges(SigmaPencil(*args, 0.2, 1), top)
    monkeypatch.setattr(sp, "_edges", solve)
    sp.edges(SigmaPencil(*args, 0.2, 1), top)
    odd = SigmaPencil(*args, 0.2, 1)
    odd.note = object()
    sp.edges(odd, top)
    sp.edges(odd, top)
    assert len(solved) == 10                # the failed input solved, the odd pencil each time
    sp.edges.cache_clear()


def test_shift_edges_are_kept_per_exact_law(monkeypatch):
    """``ShiftLaws.edges`` (covariate shift) keeps the edges of its last distinct laws: equal
    laws built again get the kept value without a scan, a law with another weight is scanned
    anew, and every value is the scan's own."""
    from riskcalc.linear.dynamics.shift import one_step
    from riskcalc.linear.engine.joint_spectrum import joint_spectrum

    joint = joint_spectrum(["two-point:1,4,0.5", "two-point:4,1,0.5"])
    gam = np.array([0.5, 2.0])
    one_step.EDGES_KEPT.clear()
    first = one_step.ShiftLaws(joint, gam, np.array([0.6, 0.4])).edges()
    assert first == one_step.ShiftLaws(joint, gam, np.array([0.6, 0.4]))._edges()

    def scan(*args):
        raise AssertionError("scanned again")

    monkeypatch.setattr(one_step.ShiftLaws, "_edges", scan)
    assert one_step.ShiftLaws(joint, gam.copy(), np.array([0.6, 0.4])).edges() == first
    with pytest.raises(AssertionError, match="scanned again"):
        one_step.ShiftLaws(joint, gam, np.array([0.5, 0.5])).edges()
    monkeypatch.undo()
    other = one_step.ShiftLaws(joint, gam, np.array([0.5, 0.5]))
    assert other.edges() == other._edges() != first
    one_step.EDGES_KEPT.clear()


def test_newton_stops_entries_that_cycle_between_bracket_ends():
    """Algorithm 1's law of psi_z at lam = 1e-9 (``test_hardening_twentythird``'s lam -> 0
    inputs): Newton's steps in ``subordination._invert`` alternate between two bracket ends a
    rounding apart, which ran to the cap of 100 steps; such entries now stop at once with the
    outcome the cap gave (here the edge bit for bit as before; 240 evaluations instead of 462,
    231 with both bracket ends in one call). The edge is compared with the cap's within 1e-9
    relative: ``_edge`` refines its bracket in y to 1e-10 relative, where x is stationary or
    within 1e-12 (its comment), so another machine's rounding (its libm) may move the edge
    below that, not beyond."""
    from riskcalc.linear.dynamics.algorithm1.laws import PsiLaws

    laws = PsiLaws(np.full(3, 0.5), np.full(3, 1 / 3), 1e-9, 0.1, 1, 0.9915071425759364)
    calls, cauchy = [], laws.cauchy

    def counted(omega):
        calls.append(1)
        return cauchy(omega)
    laws.cauchy = counted
    assert subordination.edge(laws, "up") == pytest.approx(3.8844015961100335e-07, rel=1e-9)
    assert len(calls) <= 300


def test_a_pencil_that_has_solved_still_keys_the_memo():
    """The constants a pencil's solves keep (``SigmaPencil._kept``) are not among the attributes
    that key ``pencil_edges.edges``' memo: a pencil keys it after its solves as before them
    (a dict among its attributes turned the memo off after the first solve: every window of
    tests/test_rounds_sigma_alg1_fold.py solved again, 7% more of that file's CPU)."""
    from riskcalc.linear.dynamics.sigma import pencil_edges as sp
    from riskcalc.linear.dynamics.sigma.sigma_pencil import SigmaPencil

    pen = SigmaPencil([1.0, 4.0], [0.5, 0.5], np.array([0.5, 2.0]), np.array([0.4, 0.6]), 0.1, 2)
    top = np.array([1.5, 5.8])
    before = sp._kept.key(pen, top)
    pen.solve(lambda y: 0.5 + 1j * np.array([y]), [4.0, 1.0])
    assert before is not None and sp._kept.key(pen, top) == before
