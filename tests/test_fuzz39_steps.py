"""Issue 32, fuzz39 (steps): what this fuzz found, each test failing before."""

import json

import numpy as np
import pytest

from riskcalc import steps_limit
from riskcalc.errors import SolverError
from riskcalc.linear.engine import weighted_mp
from riskcalc.spectrum import Spectrum
from tests.helpers import run_cli

SPECTRUM = Spectrum.two_point(1.0, 4.0, 0.3)


def test_steps_at_the_stability_edge_resolve_the_peak_at_the_top():
    """F1: FTFA at gamma 0.5 after 1e6 steps of 2 / x_hi (Sigma = I) gave bias 1.5e-33 per
    unit r^2 for 30-digit mpmath's 1.01236690040919e-10: the filter peaks within 1 / (eta k)
    of the top edge, which the 64-node start missed (two rules agreeing on its absence).
    With r = 1e5 the bias is 1.01, not 0."""
    eta = 2.0 / (1.0 + np.sqrt(0.5)) ** 2
    res = steps_limit("ftfa", gamma=0.5, r=1e5, sigma=0.5, steps=10 ** 6, step_size=eta)
    assert res.converges and res.bias == pytest.approx(1.01236690040919, rel=1e-8)


@pytest.mark.parametrize("ulps", [-3, -1, 0, 1])
def test_steps_within_rounding_of_the_edge_answer_under_a_spectrum(ulps):
    """F1: under two-point:1,4,0.3, 10 steps of 2 / (lam + x_hi) within a few ulps below the
    edge were refused ("the contour rule would need more than 32768 nodes": the margin was
    half the tiny gap to it), while an ulp above took the divergent branch; every route now
    judges the edge as ``stability`` does (``steps.edge.past_edge``), and answers as 1e-6
    below it does."""
    gamma, lam = 2.0, 0.3
    eta = 2.0 / (lam + weighted_mp.support_edges(gamma, SPECTRUM)[1])
    for _ in range(abs(ulps)):
        eta = np.nextafter(eta, np.inf if ulps > 0 else 0.0)
    kw = dict(gamma=gamma, r=1.0, sigma=0.5, lam=lam, steps=10, spectrum=SPECTRUM)
    res = steps_limit("rtfa", step_size=eta, **kw)
    ref = steps_limit("rtfa", step_size=eta * (1 - 1e-9), **kw)
    assert res.converges and res.bias == pytest.approx(ref.bias, rel=1e-7)
    assert res.variance == pytest.approx(ref.variance, rel=1e-7)


def test_steps_at_the_edge_refused_say_so():
    """F1: 1e8 steps at the edge under a spectrum are refused at once, naming the edge."""
    eta = 2.0 / weighted_mp.support_edges(0.5, SPECTRUM)[1]
    with pytest.raises(SolverError, match="at the stability edge"):
        steps_limit("ftfa", gamma=0.5, r=1.0, sigma=0.5, steps=10 ** 8, step_size=eta,
                    spectrum=SPECTRUM)


def test_steps_from_many_clients_at_the_edge_refuse_the_peak_they_miss():
    """F2: from the FedAvg model of 1e6 clients (Sigma = I), 1e5 steps of 2 / x_hi at gamma
    0.5 gave bias 0.0 where the oracle (M -> infinity) gives 3.2e-9 per unit r^2 (1.01 for
    0.0 at r = 1e5 after 1e6 steps): the Marchenko-Pastur quadrature settled without the
    filter's peak at the top. Refused now, naming the steps that answer; 1e4 answers, within
    ~1/M of the oracle."""
    eta = 2.0 / (1.0 + np.sqrt(0.5)) ** 2
    kw = dict(gamma=0.5, r=1.0, sigma=0.0, step_size=eta)
    with pytest.raises(SolverError, match="at most 13683 steps"):
        steps_limit("ftfa", steps=10 ** 5, clients=10 ** 6, **kw)
    got = steps_limit("ftfa", steps=10 ** 4, clients=10 ** 6, **kw).bias
    assert got == pytest.approx(steps_limit("ftfa", steps=10 ** 4, **kw).bias, rel=1e-5)


@pytest.mark.parametrize("spectrum", ["two-point:1e-8,1e8,0.5", "two-point:1,1e8,0.5"])
def test_divergent_steps_on_a_wide_spectrum_overflow_before_silverstein(spectrum):
    """F3: 1000 steps of 1e-3 under two-point:1e-8,1e8,0.5 (far past the edge) failed after
    2 s, "Silverstein's equation: the fixed point did not settle in 20000 iterations" on the
    thin contour; the integrand there overflows, so the value is past the floats: inf with
    converges False, as for the spectra the solver handles (30 steps also overflow)."""
    res = steps_limit("ftfa", gamma=0.5, r=1.0, sigma=1.0, steps=1000, step_size=1e-3,
                      spectrum=Spectrum.parse(spectrum))
    assert res.converges is False and res.bias == res.variance == np.inf


def test_steps_under_a_wide_spectrum_print_no_negative_bias():
    """F4: 1000 steps of 1e-9 at gamma 0.5 under two-point:1e-8,1e8,0.5 printed bias
    -1.12e-8 (an integral of a square; the contour resolves it to 1e-13 times the mean
    eigenvalue, 5e-6 here): 0 within that tolerance, an error beyond it. (Since fuzz40 steps
    F3's exact contour nodes the rule gives 5.8e-9 >= 0; a simulation gives 6.67e-9 at d =
    200-800.)"""
    res = steps_limit("ftfa", gamma=0.5, r=1.0, sigma=1.0, steps=1000, step_size=1e-9,
                      spectrum=Spectrum.parse("two-point:1e-8,1e8,0.5"))
    assert 0.0 <= res.bias <= 1e-7 and res.variance == pytest.approx(1 / 3, rel=1e-9)


def test_sweep_divergence_note_names_its_row(tmp_path, capsys):
    """F5: ``sweep ftfa --gamma 2,4 --steps 3 --step-size 0.3`` noted "= 2.7 > 2: gradient
    descent diverges ... no value here is a usable model" without saying which row (gamma 2
    converges); the note now names the point (and the count of an array's)."""
    code, out, err = run_cli(["sweep", "ftfa", "--gamma", "2,4", "--r", "1", "--sigma", "1",
                              "--steps", "3", "--step-size", "0.3", "--d", "20", "--reps", "2",
                              "--out", str(tmp_path / "s.csv"), "--no-progress"], capsys)
    assert code == 0 and "> 2 (at gamma 4, step_size 0.3)" in err, err
    res = steps_limit("rtfa", gamma=[0.5, 2, 4], lam=0.5, r=1, sigma=1, steps=3, step_size=0.3)
    assert "(at gamma 4, lam 0.5, step_size 0.3; 1 of 3 points diverge)" in res.notes[0]


def test_optimal_steps_at_the_edge_estimate_the_peak_nodes():
    """F6: ``optimal_steps("ftfa", gamma=0.5, step_size=2 / x_hi, max_steps=20000)`` was
    estimated at 0.6 s and took 34-42 s (loaded): every point of a chunk takes the nodes of
    the top's peak, growing like sqrt(step_size sqrt(gamma) k). The estimate counts them now
    (0.25 min), so max_seconds = 5 refuses at once, naming the max_steps that fit."""
    from riskcalc.linear.steps.optimal import optimal_steps

    with pytest.raises(ValueError, match=r"give max_steps <= 9\d\d\d\b"):
        optimal_steps("ftfa", gamma=0.5, r=1.0, sigma=1.0, max_steps=20000, max_seconds=5,
                      step_size=2.0 / (1.0 + np.sqrt(0.5)) ** 2)


@pytest.mark.parametrize("name", ["gamma", "sigma", "r"])
def test_per_client_steps_name_an_empty_list(name):
    """F7: ``clients_steps_limit("ftfa", gamma=[], ...)`` said "per-client lists must have one
    length; gamma has 0, not 1" (and sigma=[] beside three gammas "has 0, not 3")."""
    from riskcalc.linear.steps.finite_clients import clients_steps_limit

    kw = dict(gamma=[0.5, 2.0, 3.0], sigma=1.0, r=1.0, steps=5, step_size=0.1)
    kw[name] = []
    with pytest.raises(ValueError, match=f"^{name} is empty: give one value per client"):
        clients_steps_limit("ftfa", **kw)


def test_divergent_steps_from_a_finite_m_model_proven_infinite_before_the_pencils():
    """F8: FTFA at gamma 1 from the FedAvg model of 3 clients (Sigma = I) after 1e6 steps of
    0.6 (past the edge) was refused for memory, where the oracle route answers inf with
    converges False. ``steps.overflow`` bounds the bias and variance below (its docstring's
    proof): past the floats, inf without the pencils. The bounds lie below the pencils'
    values at every k they reach here (4 federations, both methods, both weights)."""
    res = steps_limit("ftfa", gamma=1.0, r=1.0, sigma=0.5, steps=[5, 10 ** 6], step_size=0.6,
                      clients=3)
    assert np.isfinite(res.bias[0]) and res.bias[1] == res.variance[1] == np.inf
    assert not np.any(res.converges)
    from riskcalc.linear.steps.finite_clients import steps_group_limits
    from riskcalc.linear.steps.overflow import log_bounds

    cases = [("ftfa", [1.0], [1.0], [0.5], [3.0], [0.0], "samples", 0.6),
             ("ftfa", [1.0, 0.5, 2.0], [1.0, 2.0, 0.5], [0.5, 1.0, 2.0], [1.0, 1.0, 2.0],
              [0.0] * 3, "samples", 0.6),
             ("rtfa", [0.5], [1.0], [1.0], [4.0], [0.4], "uniform", 0.8),
             ("ftfa", [2.0, 0.5], [1.0, 1.0], [1.0, 1.0], [1.0, 2.0], [0.0, 0.0], "uniform",
              0.5)]
    for method, *group, weights, eta in cases:
        b, v = steps_group_limits(method, *group, weights, Spectrum.identity(), 60, eta,
                                  targets=[0])
        low_b, low_v = log_bounds(method, *group, weights, np.arange(61), eta)
        assert np.all(np.isfinite(low_b[1:])) and np.all(low_b <= np.log(b[0]))
        assert np.isfinite(low_v[-1]) and np.all(low_v <= np.log(v[0]))


def test_steps_at_a_huge_gamma_under_a_spectrum_answer(recwarn):
    """F9: gamma 1e100 under two-point:1,4,0.3 after 10 steps of 1e-101 warned "divide by zero"
    and raised "the integrand overflows on the contour (a divergent step size ...)" for a
    convergent step: the continuous part of the law of S is narrower than rounding there
    (x_lo = x_hi), and its ellipse degenerate. The contour around [0, x_hi] answers: the bias
    is the null space's, r^2 int t dH = 3.1, as Sigma = I's is r^2."""
    res = steps_limit("ftfa", gamma=1e100, r=1.0, sigma=1.0, steps=10, step_size=1e-101,
                      spectrum=SPECTRUM)
    assert res.converges and res.bias == pytest.approx(3.1, rel=1e-12) and res.variance < 1e-12
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_steps_from_one_clients_own_least_squares_stay_there():
    """F10: FTFA from the FedAvg model of ONE client (its own least squares, gamma 0.5) after
    200 steps of 0.8 (past the edge) printed variance 3.2e29 (the pencils' rounding; 1.0 at 50
    steps), and 1e6 steps were refused for memory: the gradient of the loss the steps descend
    vanishes there (R_k + S g_k = I), so every k has the values of k = 0 (the local oracle's
    sigma^2 gamma / (1 - gamma) = 1)."""
    res = steps_limit("ftfa", gamma=0.5, r=1.0, sigma=1.0, steps=[200, 10 ** 6], step_size=0.8,
                      clients=1, max_seconds=1)
    assert np.all(res.bias == 0.0) and res.variance == pytest.approx([1.0, 1.0], rel=1e-12)
    # ... and it said "gradient descent diverges, and the risk grows without bound" beside 1.
    assert np.all(res.converges) and res.notes[0].startswith("one client: the global model")


def test_cli_steps_from_a_one_client_federation_stay_there(tmp_path, capsys):
    """F10: ``predict ftfa --federation F --steps 200 --step-size 0.8`` with one client in F."""
    fed = tmp_path / "one.json"
    fed.write_text('{"fedrisk_federation": 1, "clients": [{"gamma": 0.5, "r": 1, "sigma": 1}]}')
    code, out, err = run_cli(["predict", "ftfa", "--federation", str(fed), "--steps", "200",
                              "--step-size", "0.8", "--json"], capsys)
    got = json.loads(out)
    assert code == 0 and got["variance"] == pytest.approx(1.0) and got["bias"] == 0.0
    assert got["diagnostics"]["converges"] is True
