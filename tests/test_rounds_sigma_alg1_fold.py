"""Algorithm 1 under a spectrum: the edges of its round map's spectrum as folds of the real branch
(``pencil_edges.edges(fold=True)``, step 5 there), used by ``sigma.algorithm1.pencil.
spectrum_edges`` where a(s) >= 0 (the map is then similar to a symmetric one), against the
bisection of the same density scans; and a wrong fold prediction caught by the verification."""

import numpy as np
import pytest

import riskcalc
from riskcalc.linear.dynamics.sigma import pencil_edges
from riskcalc.linear.dynamics.sigma.algorithm1 import pencil as alg1_pencil
from riskcalc.linear.dynamics.sigma.algorithm1.chain import Alg1Chain
from riskcalc.linear.dynamics.sigma.algorithm1.curves import algorithm1_sigma_k_curves
from riskcalc.linear.dynamics.sigma.sigma_pencil import stable_top

pytestmark = pytest.mark.usefixtures("fresh_sigma_edges")

GAM = np.array([0.5, 2.0])
P = np.array([0.4, 0.6])
LAM = 0.8
TWO = riskcalc.Spectrum([0.5, 3.0], weights=[0.3, 0.7])
POWER = riskcalc.Spectrum.power_law(1.0, 3)


def _eta(spectrum, frac):
    return frac / (stable_top(spectrum.atoms, spectrum.weights, GAM).max() + LAM)


def _spy(monkeypatch):
    """Every ``edges`` call of ``spectrum_edges`` solved twice, as asked and by bisection
    (fold=False): the list of (sign, fold, a asked, a bisected, the fold confirmed a, the
    ``fallback`` calls of the solve as asked, its (pencil, top, qmax))."""
    seen, confirmed = [], []
    fold_edges = pencil_edges._fold_edges

    def spy_fold_edges(*args):
        done = fold_edges(*args)
        confirmed.append(done[0])
        return done

    def spy(pen, top, qmax=None, fold=False, fallback=None, both=True):
        confirmed.clear()
        calls = []
        asked = pencil_edges.edges(pen, top, qmax, fold=fold, fallback=calls.append,
                                   both=both)[0]
        bis = pencil_edges.edges(pen, top, qmax, fold=False, both=both)[0]
        seen.append((pen.sign, fold, asked, bis, bool(confirmed and confirmed[0]), calls,
                     (pen, top, qmax)))
        return pencil_edges.edges(pen, top, qmax, fold=fold, fallback=fallback, both=both)
    monkeypatch.setattr(pencil_edges, "_fold_edges", spy_fold_edges)
    monkeypatch.setattr(alg1_pencil, "edges", spy)
    return seen


@pytest.fixture(scope="module")
def windows():
    """(spectrum, K, frac, gl, pencil, M) -> ((top, bottom, low) of ``spectrum_edges``, the
    ``_spy`` list of its windows), each case solved once with no kept edges: the two cases with
    g lam = 0.7 and frac = 0.5 are also the top windows whose fold the mutants and the ulp
    nudges below are checked against (their scans and bisections, solved once for all three
    tests)."""
    kept = {}

    def run(spectrum, K, frac, gl, pencil, M):
        key = (id(spectrum), K, frac, gl, pencil, M)
        if key not in kept:
            gam, p = (GAM, P) if M == 2 else (GAM[:1], np.ones(1))
            with pytest.MonkeyPatch.context() as mp:
                pencil_edges.edges.cache_clear()
                seen = _spy(mp)
                kept[key] = (alg1_pencil.spectrum_edges(gam, p, LAM, _eta(spectrum, frac), K,
                                                        gl / LAM, spectrum, pencil=pencil),
                             seen)
            pencil_edges.edges.cache_clear()
        return kept[key]
    return run


@pytest.mark.parametrize("spectrum, K, frac, gl, pencil, M", [
    (TWO, 1, 0.5, 0.7, Alg1Chain, 2), (POWER, 2, 1.5, 1.6, alg1_pencil.Alg1Pencil, 2),
    (TWO, 5, 0.5, 0.7, alg1_pencil.Alg1Pencil, 1),
    (POWER, 1, 1.8, 1.0, alg1_pencil.Alg1Pencil, 2)])
def test_fold_edges_equal_the_bisection(windows, spectrum, K, frac, gl, pencil, M):
    """K = 1, 2, 5; g lam below and above 1 (the negative band's window, not reflected); two
    atoms and a power law; the dense and the chain pencil. Where a(s) >= 0 (eta (top + lam) <=
    1, or K even) the fold is asked, confirmed on the top edge, and within 1e-9 of the bisection
    relative to the edge z (measured: at most 2e-11 relative to x, the distance to the window's
    end); where a(s) < 0 (odd K, large step: the last case) the bisection alone."""
    (top, bottom, low), seen = windows(spectrum, K, frac, gl, pencil, M)
    assert len(seen) == (2 if gl > 1.0 else 1)
    assert all(fold == (low == 0.0) for _, fold, *_ in seen)
    assert (low < 0.0) == (K % 2 == 1 and frac > 1.0)
    for sign, fold, asked, bis, *_ in seen:
        assert asked == pytest.approx(bis, rel=1e-9)
    if low == 0.0:          # the fold confirmed, not only bisected again
        assert any(c for *_, c, _, _ in seen)


def test_curves_with_fold_edges_equal_the_bisections(monkeypatch):
    """The whole curves (server and own models, T = 0, 2, 8, inf) with the fold edges against
    those with bisected ones, g lam = 1.6, K = 2: within 1e-9 (the contour moves with the edges
    by ~1e-11 relative)."""
    args = (GAM, np.array([0.3, 0.8]), np.array([0.4, 1.0]), P, 1.2, LAM, _eta(TWO, 0.5), 2,
            1.6 / LAM, np.array([0.0, 2.0, 8.0, np.inf]), TWO)
    folded = algorithm1_sigma_k_curves(*args, route="dense")
    edges = pencil_edges.edges
    monkeypatch.setattr(alg1_pencil, "edges", lambda *a, fold=False, **k: edges(*a, **k))
    bisected = algorithm1_sigma_k_curves(*args, route="dense")
    np.testing.assert_allclose(folded["edges"], bisected["edges"], rtol=1e-9)
    for key in ("bias", "variance", "distance"):
        np.testing.assert_allclose(folded[key], bisected[key], rtol=0, atol=1e-9)
    for mine, ref in zip(folded["local"](), bisected["local"]()):
        np.testing.assert_allclose(mine, ref, rtol=0, atol=1e-9)


def test_a_wrong_fold_is_not_returned(windows, monkeypatch):
    """Mutants of the prediction (an edge 1e-7 off, outside; or halfway into the spectrum): the
    density tests at e -/+ delta refuse it, the bisection takes over (``fallback`` is called)
    and the edge is the bisection's. The reflection of the top window's resolvent dropped
    (``reflected`` the identity: m then increases in x): no fold confirmed, the same edge.
    K = 5, one client, g lam = 0.7, the dense pencil (whose fold is confirmed there; the chain
    pencil's own fold, confirmed at K = 1, is the first case of the test above, and its solves
    cost 4.5 s a mutant where these cost 1 s): the top window of ``spectrum_edges`` and its
    unmutated solve from ``windows``."""
    _sign, _fold, ref, _bis, _confirmed, calls, (pen, top, qmax) = windows(
        TWO, 5, 0.5, 0.7, alg1_pencil.Alg1Pencil, 1)[1][0]
    # Unmutated: the fold confirmed (``spectrum_edges`` asks this edge alone, both=False:
    # nothing bisected), and ref within 1e-9 of the bisection (the test above).
    assert calls == []
    fold = pencil_edges._fold
    for wrong in (lambda e, x_in: e * (1.0 + 1e-7), lambda e, x_in: 0.5 * (e + x_in)):
        def mutant(pencil, samples, x_in, delta, wrong=wrong):
            e = fold(pencil, samples, x_in, delta)
            return None if e is None else wrong(e, x_in)
        monkeypatch.setattr(pencil_edges, "_fold", mutant)
        pencil_edges.edges.cache_clear()
        calls = []
        got = pencil_edges.edges(pen, top, qmax, fold=True, fallback=calls.append)[0]
        assert sum(calls) == 2 and got == pytest.approx(ref, rel=1e-9)
    monkeypatch.setattr(pencil_edges, "_fold", fold)
    monkeypatch.setattr(alg1_pencil, "reflected", lambda pen, col: col)
    pencil_edges.edges.cache_clear()
    calls = []
    got = pencil_edges.edges(pen, top, qmax, fold=True, fallback=calls.append)[0]
    assert sum(calls) == 2 and got == pytest.approx(ref, rel=1e-9)


@pytest.mark.parametrize("K, pencil, M, nudges", [
    (1, Alg1Chain, 2, ((1, 0), (-1, 0))), (5, alg1_pencil.Alg1Pencil, 1, ((1, 0), (0, -1)))])
def test_the_fold_confirms_on_ulp_perturbed_inputs(windows, K, pencil, M, nudges):
    """The top window of ``spectrum_edges`` (two atoms, g lam = 0.7, eta at half the stable
    step), rebuilt with eta and gamma moved by one ulp, (eta, gamma) (1 + k 2^-52) for each
    (k_eta, k_gamma) of ``nudges``: the fold is confirmed on each (``fallback`` called for the
    other edge alone) and within 1.3e-11 relative (``pencil_edges``, step 5) of the bisection
    of the unperturbed pencil (the nudges move the edge by rounding). Measured before the fix:
    eta one ulp up or down in the chain case (K = 1, M = 2) stepped past the edge onto an
    unphysical real branch (m -15.10 -> -126.8) and the fold was not confirmed; likewise the
    dense pencil with K = 5, M = 1 (eta one ulp up)."""
    gam, p = (GAM, P) if M == 2 else (GAM[:1], np.ones(1))
    eta, g = _eta(TWO, 0.5), 0.7 / LAM
    # The top window of ``spectrum_edges`` and its bisection (``windows``).
    _sign, _fold, _asked, bis, _confirmed, _calls, (pen, top, qmax) = windows(
        TWO, K, 0.5, 0.7, pencil, M)[1][0]
    for k_eta, k_gam in nudges:
        nudged = pencil(TWO.atoms, TWO.weights, gam * (1.0 + k_gam * 2.0 ** -52), p, LAM,
                        eta * (1.0 + k_eta * 2.0 ** -52), K, g, shift=pen.shift, sign=pen.sign)
        calls = []
        got = pencil_edges.edges(nudged, top, qmax, fold=True, fallback=calls.append)[0]
        assert calls == [1]
        assert got == pytest.approx(bis, rel=1.3e-11)



def test_the_bottom_edge_alone_is_the_bottom_of_both(windows):
    """``edges(both=False)`` (what ``spectrum_edges`` asks: it reads a alone) against the same
    pencil's edges with both refined: the same a (the scan, fold and bisection of the bottom
    bracket are those of both=True; measured: equal to the bit on 24 windows of K = 1-5, g lam
    0.7 and 1.6, dense and chain; asserted within the bisection's 1e-11), b None. The top
    window of ``spectrum_edges`` at K = 5, one client, the dense pencil (the fold confirmed;
    ``windows``), and at K = 1 with the chain pencil."""
    for K, pencil, M in ((5, alg1_pencil.Alg1Pencil, 1), (1, Alg1Chain, 2)):
        _sign, fold, asked, _bis, _confirmed, calls, (pen, top, qmax) = windows(
            TWO, K, 0.5, 0.7, pencil, M)[1][0]
        assert fold and calls == []
        pencil_edges.edges.cache_clear()
        one = pencil_edges.edges(pen, top, qmax, fold=True, both=False)
        both = pencil_edges.edges(pen, top, qmax, fold=True)
        pencil_edges.edges.cache_clear()
        assert one[0] == asked and one[1] is None and both[1] is not None
        assert one[0] == pytest.approx(both[0], rel=1e-11) and one[2] == both[2]
