"""Issue 32, fuzz39 (quad): what this fuzz found, each test failing before."""

import numpy as np
import pytest

from riskcalc.errors import SolverError
from riskcalc.linear.engine.mp_quadrature import mp_expect
from riskcalc.linear.finite_clients import own
from riskcalc.linear.finite_clients.identity import client_weights


def _lorentz(s):
    # (s - z)^2 / z + t: MAML-FL's p phi(s) + t near its double zero z = 1/alpha
    z, t = 0.5, 1e-9
    q = (s - z) ** 2 / z + t
    return 1.0 / q, t / q ** 2


def test_peak_inside_the_spectrum_is_integrated_by_graded_nodes():
    """F1: a peak of width ~ sqrt(t) = 3e-5 inside the Marchenko-Pastur support (gamma 0.5)
    failed every Chebyshev rule up to 32767 nodes; with ``peak`` it is split there and
    integrated by tanh-sinh nodes. Golden values: 30-digit mpmath."""
    with pytest.raises(SolverError):
        mp_expect(np.array([0.5]), _lorentz)
    got = mp_expect(np.array([0.5]), _lorentz, peak=0.5)[:, 0]
    assert got[0] == pytest.approx(44720.3595276371141587717463962, rel=1e-11)
    assert got[1] == pytest.approx(22360.6797861762368432134301489, rel=1e-11)


def test_maml_fl_sources_with_a_zero_of_phi_in_a_clients_spectrum():
    """F1: MAML-FL at alpha 2, gamma [1e4, 0.5]: the light client's t ~ 1.25e-9 next to
    phi's double zero at s = 1/alpha = 0.5 failed the quadrature (taken for a cap: "pinned ...
    one client's weight dwarfs the others'"); g and t from an independent scipy solve
    (quad with points=, breakpoints at the zero; 80011.99559978 there), and at the solution
    D_l - g^2 = var_b,l (G_l(t_l) = g)."""
    gam = np.array([1e4, 0.5])
    p = client_weights(gam, np.ones(2), "samples")
    g, t = 80011.9955997831, np.array([1.249687615593868e-05, 1.2498125968526535e-09])
    D, var_b = own.own_sources("maml_fl", gam, 2.0, p, t, g)[:2]
    assert np.all(np.isfinite(D))
    assert var_b == pytest.approx(D - g * g, rel=1e-6)


def test_a_peak_too_narrow_for_double_precision_is_named():
    """F1: below t ~ 1e-11 (MAML-FL at alpha 2, gamma [1e6, 0.5]) the peak's rounding, eps s
    over the distance to it, passes 1e-8 relative (1e12 beside 0.5 answered 2e-3 off before
    the bound): refused naming the peak, where the solves for tau(A^-1) took the failure
    for a cap and blamed the clients' weights."""
    def narrow(s):
        return (1.0 / ((s - 0.5) ** 2 / 0.5 + 1e-14),)

    with pytest.raises(SolverError, match=r"peak at s = 0\.5 inside the spectrum is too narrow"):
        mp_expect(np.array([0.5]), narrow, peak=0.5)


@pytest.mark.parametrize("lam, others", [(1000.0, [2.0]), (0.5, [0.5, 3.0])])
def test_pfedme_data_rich_client_at_sigma_i_has_no_rounding_residue(lam, others):
    """F3: pFedMe at Sigma = I, a data-rich client (gamma 1e-12) beside others: its bias
    (~ gamma^2) came out as rounding residues of O(1) terms, 3.3e-16 (risk 1.00033e-12 for
    ~1e-12): three cancellations, J0 - 2 p J3 + p^2 Jfb (own_sources: now one trace),
    1 / (D Q) - 1 and the others' share sum - own (``identity.assemble``: now without the
    subtraction). The bias now scales like gamma^2 from 1e-4 to 1e-12; at 1e-100 what is
    left is below 1e-30 (g's own rounding squared, r = 1)."""
    import riskcalc

    def client0(g0):
        return riskcalc.clients_limit("pfedme", gamma=[g0] + others, r=1.0, sigma=1.0,
                                      lam=lam)

    at4, at12 = client0(1e-4), client0(1e-12)
    assert at12.bias[0] / 1e-24 == pytest.approx(at4.bias[0] / 1e-8, rel=1e-3)
    assert at12.risk[0] == pytest.approx(1e-12, rel=1e-10)
    assert client0(1e-100).risk[0] < 1e-30
