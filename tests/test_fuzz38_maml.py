"""Issue 32, fuzz38 (maml): what this fuzz found, each test failing before."""

import time

import pytest

import riskcalc

TWO_POINT = "two-point:1,4,0.3"


def test_maml_fl_near_pooled_n_equal_d_says_why_its_pencils_fail():
    """F1: 4 clients on two-point:1,4,0.3 at gamma 3.85 (N/d - 1 = 0.039), alpha 0.1: the
    shifts converge, then the noise source's coupled pencil stalls at rounding (residual 2-4
    times the tolerance, condition numbers ~1e6) and the refusal said only "the
    deterministic-equivalent fixed point did not converge", with no cause or way out."""
    with pytest.raises(riskcalc.SolverError,
                       match=r"did not converge .*: near pooled N = d \(N/d - 1 = 0\.039\) "
                             r"the risk's coupled pencils are ill-conditioned .*; a gamma "
                             r"further from pooled N = d or a smaller alpha answers"):
        riskcalc.limit("maml_fl", gamma=3.85, r=1.0, sigma=1.0, alpha=0.1, clients=4,
                       spectrum=TWO_POINT)


def test_maml_fl_refusal_gives_the_alpha_asked_under_a_rescaled_spectrum(monkeypatch):
    """F2: a spectrum whose mean eigenvalue lies beyond [1/16, 16] is solved rescaled by a
    power of two, alpha multiplied by it: the shifts' refusal then gave that alpha (0.256
    for alpha = 0.001 on two-point:100,400,0.3). A follow that always fails from a
    solution stands in for the hard case (as in tests/test_fuzz37_unbound.py, F2)."""
    from riskcalc.linear.engine import pencil_assembly
    from riskcalc.linear.finite_clients import maml_sigma

    real = pencil_assembly.follow

    def follow(atoms, weights, path, start=None, *args, **kw):
        if start is None or path.__defaults__:
            return real(atoms, weights, path, start, *args, **kw)
        raise riskcalc.SolverError("could not be followed")

    monkeypatch.setattr(pencil_assembly, "follow", follow)
    monkeypatch.setattr(maml_sigma, "_LAST", {})
    with pytest.raises(riskcalc.SolverError, match=r"N/d - 1 = 1, alpha = 0\.001: "):
        riskcalc.limit("maml_fl", gamma=2.0, r=1.0, sigma=1.0, alpha=0.001, clients=4,
                       spectrum="two-point:100,400,0.3")


@pytest.mark.parametrize("gamma", [[1e-100, 2.0], [1e-10, 2.0], [1e10, 0.5]])
def test_pfedme_under_a_spectrum_gives_no_negative_bias(gamma):
    """F3: pFedMe under a spectrum with one client's data dwarfing the other's: a bias that
    vanishes came out as its rounding residue, negative (-7.4e-18 at gamma 1e-100 beside 2,
    -4e-18 at 1e-10, -2.3e-17 for the client of gamma 0.5 beside 1e10); the Sigma = I route
    gives 0. Now 0 within rounding, as ``finite_clients.identity`` does."""
    res = riskcalc.clients_limit("pfedme", lam=0.5, gamma=gamma, r=1.0, sigma=1.0,
                                 spectrum=TWO_POINT)
    assert min(res.bias) == 0.0
    assert min(res.variance) > 0.0


@pytest.mark.parametrize("clients", [10 ** 11, 2 ** 53])
def test_maml_fl_under_a_spectrum_refuses_more_clients_than_it_resolves(clients):
    """F4: MAML-FL under a spectrum with many clients answered with the bias's 1/M correction
    drowned in rounding: at gamma 2 on two-point:1,4,0.3, alpha 0.1, bias 1.3440196 at
    M = 1e11 (the M -> infinity limit 1.3440307, the 1/M correction ~1e-10) and 0.208 at
    2^53. pFedMe's route refused beyond 1e8 clients; MAML-FL's now does too."""
    with pytest.raises(riskcalc.SolverError, match=r"maml_fl's finite-M limit under a "
                                                   r"spectrum loses digits beyond 1e\+08"):
        riskcalc.limit("maml_fl", gamma=2.0, r=1.0, sigma=1.0, alpha=0.1, clients=clients,
                       spectrum=TWO_POINT)
    assert riskcalc.limit("maml_fl", gamma=2.0, r=1.0, sigma=1.0, alpha=0.1,
                          clients=10 ** 8, spectrum=TWO_POINT).bias == pytest.approx(
        riskcalc.limit("ftfa", gamma=2.0, r=1.0, sigma=1.0, spectrum=TWO_POINT).bias,
        rel=2e-7)


@pytest.mark.parametrize("gamma", [[1e-16, 2.0], [1e20, 0.5]])
def test_maml_fl_under_a_spectrum_names_a_dwarfed_client_at_once(gamma):
    """F5: MAML-FL under a spectrum with one client's sample weight below rounding of
    another's (gamma 1e-16 beside 2: weights 5e-17 and 1) ran the shifts' continuation for
    4-12 s, then blamed "the filter s (1 - alpha s)^2 far from monotone" and said "a smaller
    alpha answers" (alpha 0.001 did not either). Now refused at once, naming the weights."""
    start = time.process_time()
    with pytest.raises(riskcalc.SolverError,
                       match=r"one client's weight p_l dwarfs another's beyond double "
                             r"precision \(weights from 5e-(17|21) to 1, gamma from"):
        riskcalc.clients_limit("maml_fl", alpha=0.1, gamma=gamma, r=1.0, sigma=1.0,
                               spectrum=TWO_POINT)
    assert time.process_time() - start < 0.5
    # 1e-13 beside 2 (weights 5e-14 and 1) answers: the client's own least squares.
    res = riskcalc.clients_limit("maml_fl", alpha=0.1, gamma=[1e-13, 2.0], r=1.0, sigma=1.0,
                                 spectrum=TWO_POINT)
    assert res.risk[0] == pytest.approx(1e-13, rel=1e-9)


@pytest.mark.parametrize("method, tuning", [("maml_fl", {"alpha": 0.1}), ("pfedme", {"lam": 0.1})])
def test_finite_m_own_objectives_under_a_spectrum_of_many_atoms_are_refused_at_once(method,
                                                                                    tuning):
    """F6: MAML-FL and pFedMe under a spectrum keep an atoms x atoms matrix per group of
    clients (its inverse costs K^3): powerlaw:1 at d = 1e4 ran for minutes (d = 2000 took
    10 s), at d = 1e5 it failed allocating 75 GiB ("not enough memory" on the command line),
    with no estimate. Now refused before any work, saying what fits."""
    start = time.process_time()
    with pytest.raises(ValueError, match=rf"^{method}'s finite-M limit under a spectrum: 1 "
                                         r"distinct client group over 10000 eigenvalue atoms "
                                         r"would take about 1\.5e\+03 s .*: give a spectrum of "
                                         r"at most about 7368 distinct eigenvalues"):
        riskcalc.clients_limit(method, gamma=[2.0] * 4, r=1.0, sigma=1.0,
                               spectrum="powerlaw:1", d=10 ** 4, **tuning)
    assert time.process_time() - start < 0.5
