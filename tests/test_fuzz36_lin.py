"""Issue 32, fuzz36 (lin): what this fuzz found, each test failing before."""

import json

import pytest

import riskcalc
from montecarlo.runner.stats import mean_se
from tests.helpers import run_cli


@pytest.mark.parametrize("spectrum", [None, riskcalc.Spectrum([1.0, 4.0], weights=[0.5, 0.5])])
@pytest.mark.parametrize("gamma, lam", [(1.0, 1e-60), (1.0, 1e-30), (1.0 + 1e-12, 1e-40)])
def test_paper_route_keeps_its_digits_near_gamma_one_at_tiny_lam(spectrum, gamma, lam):
    """F1: the paper route's equation for a = 1 - gamma + gamma lam m(-lam) rounded 1 - u to 0
    (gamma = 1, lam = 1e-60: bias 9.4e-31 and variance 4.7e29 for 5e-31 and 5e29, silently);
    the two-point values are those of an 80-digit evaluation (6.32455532034e-21 at 1e-40)."""
    args = dict(gamma=gamma, sigma=1.0, r=1.0, lam=lam, spectrum=spectrum)
    paper = riskcalc.limit("rtfa", route="paper", **args)
    kappa = riskcalc.limit("rtfa", route="kappa", **args)
    assert paper.bias == pytest.approx(kappa.bias, rel=1e-10, abs=0)
    assert paper.variance == pytest.approx(kappa.variance, rel=1e-10, abs=0)


@pytest.mark.parametrize("spectrum", [None, riskcalc.Spectrum([1.0, 4.0], weights=[0.5, 0.5])])
@pytest.mark.parametrize("gamma", [1.0 + 1e-10, 1e10, 1e20, 1e100])
def test_paper_route_c0_keeps_its_digits_at_large_gamma(spectrum, gamma):
    """F2: c0's equation 1 - 1/gamma = int 1/(1 + c0 gamma s) dH rounded to 0 at large gamma
    (gamma = 1e20: variance 5e-21 for sigma^2 / (gamma - 1) = 1e-20; 6e-7 off at 1e10) and
    lost 1e-10 near gamma = 1."""
    args = dict(gamma=gamma, sigma=1.0, r=1.0, spectrum=spectrum)
    paper = riskcalc.limit("ftfa", route="paper", **args)
    kappa = riskcalc.limit("ftfa", route="kappa", **args)
    assert paper.bias == pytest.approx(kappa.bias, rel=1e-12, abs=0)
    assert paper.variance == pytest.approx(kappa.variance, rel=1e-12, abs=0)
    if spectrum is None:
        assert paper.variance == pytest.approx(1.0 / (gamma - 1.0), rel=1e-12, abs=0)


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("gamma, lam", [(1e-60, 1e-60), (1e-100, 1e-100), (1e70, 1e-100),
                                        (1e100, 1e-100), (1e60, 1e-100)])
def test_paper_route_answers_at_the_ends_of_the_ranges(gamma, lam):
    """F3: at gamma = lam = 1e-60 the rewritten equation of F1 rounded 1 - gamma to 1 and lost
    its bracket; at gamma = 1e70, lam = 1e-100 a / (1 + gamma lam i1) underflowed (variance 0
    for 1e-70; 1e-5 off at 1e60); at gamma = 1e100 Newton's log steps from the bracket 1 crawled
    (no convergence in 200 steps); m'(-lam) overflowed on the way to 1e200 (a RuntimeWarning
    printed). Sigma = I: the closed forms."""
    args = dict(gamma=gamma, sigma=1.0, r=1.0, lam=lam)
    paper = riskcalc.limit("rtfa", route="paper", **args)
    closed = riskcalc.limit("rtfa", route="closed", **args)
    assert paper.bias == pytest.approx(closed.bias, rel=1e-10, abs=0)
    assert paper.variance == pytest.approx(closed.variance, rel=1e-10, abs=0)


@pytest.mark.parametrize("route", ["auto", "paper"])
@pytest.mark.parametrize("lam, bias, variance", [
    (1.0, 5.303300858899106e19, 3.5355339059327377e19),
    (1e-3, 5.000000624375585e19, 4.997501873438866e19)])
def test_half_the_spectrum_far_above_at_gamma_two(route, lam, bias, variance):
    """F4: with half of H at 1e40 and gamma = 2 (as many samples as top directions), the
    default route's equation for kappa took 1 - gamma int q whole and lost every digit (bias
    5.7e3 times too large, variance 0.9995 too small), the paper route 5e-4 at lam = 1e-3; each
    atom's q or 1 - q is now taken directly. Values: a 400-digit evaluation of Def. 6.2."""
    res = riskcalc.limit("rtfa", gamma=2.0, sigma=1.0, r=1.0, lam=lam, route=route,
                         spectrum="two-point:1,1e40,0.5")
    assert res.bias == pytest.approx(bias, rel=1e-12)
    assert res.variance == pytest.approx(variance, rel=1e-12)


@pytest.mark.parametrize("gamma", [2.0, 1.0 + 1e-9])
def test_ridgeless_routes_agree_across_a_span_of_1e200(gamma):
    """F4: the paper route's c0 took either integral whole across atoms on both sides of
    x = c0 gamma s = 1 (gamma = 2: bias 0.354 for 0.5, the kappa value, which is r^2 int s p^2
    dG / (gamma int q p dH) = 1/2 here), and (1 + x)^-2 overflowed to drop the top atom
    (gamma = 1 + 1e-9: variance 5e8 for 1e9)."""
    spectrum = riskcalc.Spectrum([1e-100, 1e100], weights=[0.5, 0.5])
    kappa = riskcalc.limit("ftfa", gamma=gamma, sigma=1.0, r=1.0, spectrum=spectrum)
    paper = riskcalc.limit("ftfa", gamma=gamma, sigma=1.0, r=1.0, spectrum=spectrum,
                           route="paper")
    assert paper.bias == pytest.approx(kappa.bias, rel=1e-12, abs=0)
    assert paper.variance == pytest.approx(kappa.variance, rel=1e-12, abs=0)
    if gamma == 2.0:
        assert (kappa.bias, kappa.variance) == pytest.approx((0.5, 5e99), rel=1e-12)


@pytest.mark.parametrize("call, other", [
    (lambda: riskcalc.limit("ftfa", gamma=[0.2, 0.3], sigma=[1, 2, 3], r=1, clients=5),
     "sigma"),
    (lambda: riskcalc.limit("maml_fl", gamma=[0.1, 0.2], sigma=1, r=1, alpha=[1, 2, 3],
                            clients=3), "alpha"),
    (lambda: riskcalc.steps_limit("ftfa", gamma=[1.5, 2], sigma=1, r=1, steps=[1, 2, 3],
                                  step_size=0.3), "steps"),
    (lambda: riskcalc.steps_limit("ftfa", gamma=[0.5, 0.2], sigma=1, r=1, steps=[1, 2, 3],
                                  step_size=0.3, clients=4), "steps"),
    (lambda: riskcalc.optimal_lambda("local_ridge", gamma=[1, 2], sigma=1, rho=[1, 2, 3]),
     "rho")])
def test_arrays_that_do_not_broadcast_are_named(call, other):
    """F5: numpy's "Mismatch is between arg 0 with shape (2,) and arg 2 with shape (3,)" named
    no parameter on these routes (riskcalc.limit without clients named them)."""
    with pytest.raises(ValueError, match=rf"parameter arrays of shapes gamma \(2,\), {other} "
                                         r"\(3,\) do not broadcast together"):
        call()


_ALIGNED = riskcalc.Spectrum([1.0, 4.0], weights=[0.5, 0.5], signal_weights=[0.9, 0.1])


@pytest.mark.parametrize("params", [dict(gamma=1e20, sigma=1.0, r=1.0),
                                    dict(gamma=1e-20, sigma=1.0, r=1.0),
                                    dict(gamma=2.0, sigma=1e46, r=1.0)])
def test_numeric_lam_star_where_the_risk_is_flat_to_rounding_is_refused(params):
    """F6: the numeric lam* (signal weights unlike the eigenvalues') minimized a risk flat to
    rounding and returned noise (gamma = 1e20: 1.03e29, 6.8e23 with how="numeric" and G = H,
    whose lam* is 1e20; gamma = 1e-20: 0), or searched beyond the penalties the limit takes
    and was refused for a lam nobody gave (sigma = 1e46: "lam must be 0 or lie in ...")."""
    with pytest.raises(ValueError, match="lam\\* cannot be resolved in double precision"):
        riskcalc.optimal_lambda("rtfa", spectrum=_ALIGNED, **params)


def test_numeric_lam_star_still_answers_where_resolved():
    """F6: where the risk rises around its minimum the numeric lam* is kept (G = H: the
    closed form sigma^2 gamma / r^2, to 1e-4 up to gamma = 1e8)."""
    for gamma in (1e-8, 1.0, 1e8):
        lam = riskcalc.optimal_lambda("rtfa", gamma=gamma, sigma=1.0, r=1.0, how="numeric")
        assert lam == pytest.approx(gamma, rel=1e-4)


def test_standard_errors_of_tiny_replicates_are_not_zero(capsys):
    """F7: replicates near 2e-200 (RTFA's variance at lam = 1e100) had squared deviations
    that underflowed: std.err 0 and an interval excluding the prediction ("no" / False)."""
    mean, se = mean_se([[2e-200, 1.0], [1.9e-200, 2.0]])
    assert se == pytest.approx([5e-202, 0.5], rel=1e-12)
    code, out, err = run_cli(["compare", "rtfa", "--gamma", "2", "--sigma", "1", "--r", "1",
                              "--lam", "1e100", "--d", "40", "--reps", "2", "--json"], capsys)
    assert code == 0
    sim = json.loads(out)
    assert sim["simulated"]["variance_se"] > 0
    assert sim["comparison"]["variance"]["inside_ci95"] is True


@pytest.mark.parametrize("gamma, shown", [([2.0, 2.000000001], "0.9999999997"),
                                          ([2.0, 1.999999999999], "1.0000000000003")])
def test_pooled_refusal_prints_the_sum_apart_from_one(gamma, shown):
    """F8: sum_j 1/gamma_j = 0.99999999975 (and 1 + 2.5e-13, inside the 1e-12 margin) was
    printed "needs sum_j 1/gamma_j > 1; got sum_j 1/gamma_j = 1"."""
    with pytest.raises(ValueError, match=rf"> 1 \(by more than 1e-12\); got sum_j 1/gamma_j = "
                                         rf"{shown}"):
        riskcalc.clients_limit("ftfa", gamma=gamma, sigma=1.0, r=1.0)


@pytest.mark.parametrize("scale", [1e6, 1e-50])
def test_maml_fl_finite_clients_limit_is_scale_free(scale):
    """F9: MAML-FL's finite-M limit under a spectrum c H with step alpha / c is the one under
    H with alpha, the bias times c; its route assumed eigenvalues near 1: scaled:1e6 failed
    at once ("the deterministic-equivalent fixed point did not converge"), scaled:1e-50 after
    35 s; covariate shift at 1e6 too."""
    base = riskcalc.limit("maml_fl", gamma=2.0, sigma=1.0, r=1.0, alpha=0.5, clients=4)
    res = riskcalc.limit("maml_fl", gamma=2.0, sigma=1.0, r=1.0, alpha=0.5 / scale,
                         clients=4, spectrum=f"scaled:{scale:g}")
    assert res.bias == pytest.approx(scale * base.bias, rel=1e-10)
    assert res.variance == pytest.approx(base.variance, rel=1e-10)
    if scale > 1:
        spectra = ["two-point:1,4,0.5", "identity"]
        one = riskcalc.clients_limit("maml_fl", gamma=[2.0, 0.5], sigma=1.0, r=1.0, alpha=0.5,
                                     spectra=spectra)
        big = riskcalc.clients_limit("maml_fl", gamma=[2.0, 0.5], sigma=1.0, r=1.0,
                                     alpha=0.5 / scale, spectra=[
                                         f"two-point:{scale:g},{4 * scale:g},0.5",
                                         f"scaled:{scale:g}"])
        assert big.bias == pytest.approx(scale * one.bias, rel=1e-10)
        assert big.variance == pytest.approx(one.variance, rel=1e-10)


@pytest.mark.parametrize("method, tuning", [("ftfa", {}), ("rtfa", {"lam": 0.1})])
def test_a_chain_that_loses_its_digits_across_a_wide_span_is_refused(method, tuning):
    """F10: with half of a shared spectrum at S beside gamma 2 (as many samples as top
    directions), 1 - slope of the resolvent chain's fixed point is ~2 / S^(1/2) and its
    rounding was amplified silently: FTFA's risk 1e-6 off at S = 1e20, 20% at 1e30 (below
    1e17 it keeps about 8 digits: S^-1.5 risk 0.01500000066 at 1e16, 0.01499999964 at 1e17)."""
    fed = dict(gamma=[0.5, 2.0], r=[1.0, 1.0], sigma=[0.5, 0.5], **tuning)
    with pytest.raises(riskcalc.SolverError, match=r"lose their digits across the spectra's "
                                                   r"eigenvalue span of 1e\+20"):
        riskcalc.clients_limit(method, spectrum="two-point:1,1e20,0.5", **fed)
    assert riskcalc.clients_limit(method, spectrum="two-point:1,1e16,0.5", **fed).risk[1] > 0


def test_steps_beyond_the_quadrature_near_gamma_one_say_what_answers():
    """F11: ftfa at gamma = 1 after 1e9 steps of 0.1 (1e8 answers) was refused as "finite-step
    quadrature did not settle with 262144 nodes", naming neither the cause nor what answers.
    (1e9 answers since fuzz37 unbound F3, 1e10 since fuzz38 steps F5; 1e12 is still beyond
    the rule.)"""
    with pytest.raises(riskcalc.SolverError, match=r"near gamma = 1 \(here 1\) the law reaches "
                                                   r"s = 0.*scale 1 / \(step_size steps\) = "
                                                   r"1e-11.*fewer steps or a smaller step "
                                                   r"size answer"):
        riskcalc.steps_limit("ftfa", gamma=1.0, sigma=1.0, r=1.0, steps=10 ** 12, step_size=0.1)


def test_an_atom_without_mass_is_no_eigenvalue():
    """F12: Spectrum([1, 1e100], weights=[1, 0]) is Sigma = I; pFedMe's finite-M limit failed
    ("NaN in the traces (inputs beyond floating-point range)") and finite steps too
    ("Silverstein's equation: Newton did not confirm the root"). An atom that neither H nor G
    weighs is now dropped; one G weighs (a spike) is kept."""
    empty = riskcalc.Spectrum([1.0, 1e100], weights=[1.0, 0.0])
    assert empty.is_identity
    args = dict(gamma=2.0, sigma=1.0, r=1.0)
    assert (riskcalc.limit("pfedme", lam=0.3, clients=4, spectrum=empty, **args).risk
            == pytest.approx(riskcalc.limit("pfedme", lam=0.3, clients=4, **args).risk,
                             rel=1e-12))
    assert (riskcalc.steps_limit("ftfa", steps=3, step_size=0.1, spectrum=empty, **args).risk
            == pytest.approx(riskcalc.steps_limit("ftfa", steps=3, step_size=0.1,
                                                  **args).risk, rel=1e-12))
    spike = riskcalc.Spectrum([1.0, 4.0], weights=[1.0, 0.0], signal_weights=[0.0, 1.0])
    assert spike.atoms.tolist() == [1.0, 4.0]


@pytest.mark.parametrize("gamma", [[2.0, 2.0], [2.0, 2.5]])
def test_pfedme_under_shift_checks_pooled_n_above_d(gamma):
    """F13: pFedMe under covariate shift skipped the pooled N > d check the shared-spectrum
    route makes: at sum_j 1/gamma_j = 1 it returned risks of 1.6e13, below it "the
    subordination fixed point did not converge"."""
    with pytest.raises(ValueError, match=r"pooled N > d: sum_j 1/gamma_j > 1"):
        riskcalc.clients_limit("pfedme", gamma=gamma, sigma=1.0, r=1.0, lam=0.5,
                               spectra=["two-point:1,4,0.5", "identity"])


def test_pfedme_with_a_spectrum_and_too_many_clients_is_refused():
    """F14: pFedMe's finite-M limit under a spectrum lost digits as about 0.4 M eps (bias 8e-3
    off at M = 1e14) and at M = 2^53 returned a risk of -2.9e34; beyond 1e8 clients it is now
    refused, pointing to the M -> infinity limit it is within ~1/M of."""
    args = dict(gamma=2.0, sigma=1.0, r=1.0, lam=0.5, spectrum="two-point:1,4,0.5")
    with pytest.raises(riskcalc.SolverError, match=r"loses digits beyond 1e\+08 clients.*"
                                                   r"here M = 9007199254740992"):
        riskcalc.limit("pfedme", clients=2 ** 53, **args)
    near = riskcalc.limit("pfedme", clients=10 ** 8, **args).risk
    assert near == pytest.approx(riskcalc.limit("pfedme", **args).risk, rel=1e-7)


def test_a_derivative_lost_far_from_pooled_n_equal_d_is_not_blamed_on_it():
    """F15: MAML-FL at gamma = 1e15 over 2e15 clients (pooled N = 2 d) was refused as "the
    pooled problem is too close to N = d" (Q = -4.7e55, rounding of the extreme gamma)."""
    with pytest.raises(riskcalc.SolverError, match=r"loses its digits where M eps / \(N/d - 1\) "
                                                   r"is large.*here M = 2e\+15 clients and "
                                                   r"N/d - 1 = 1: 0.44"):
        riskcalc.limit("maml_fl", gamma=1e15, sigma=1.0, r=1.0, alpha=0.5, clients=2 * 10 ** 15)
