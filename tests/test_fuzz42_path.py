"""Issue 32, fuzz42 (path): what this fuzz found, each test failing before."""

import numpy as np
import pytest

import riskcalc

from montecarlo.linear.rounds import simulate_rounds
from riskcalc.linear.dynamics import ROUTES
from tests.helpers import run_cli

ONE = dict(gamma=[2.0], r=0.5, sigma=0.5, signal=1.0, local_steps=2, step_size=0.1)
TWO_POINT = riskcalc.Spectrum([1.0, 2.0], weights=[0.5, 0.5])


def test_algorithm1_one_pooled_client_under_a_spectrum_answers():
    """F1: one client with gamma 2 (pooled N < d) under two-point:1,2,0.5, K = 2, lam 0.1 said
    'the spectrum of the round map was not found on the scan' (a SolverError; at Sigma = I a
    refusal by name, fuzz41 path2 F2): the map is a 2 x 2 matrix at each eigenvalue s of the
    client's design, its top z*(s) decreasing in s, so the top is z* at the bulk's bottom.
    T = inf is the client's min-norm interpolator (``limit('local')``) and rounds 1, 5 lie
    within 3 SE of a simulation (d = 200, 4 replicates)."""
    kw = dict(ONE, lam=0.1, global_step=1.0, rounds=[1, 5, np.inf])
    res = riskcalc.rounds_limit("fedprox", **kw, spectrum=TWO_POINT)
    local = riskcalc.limit("local", gamma=2.0, rho=np.sqrt(1.25), sigma=0.5, spectrum=TWO_POINT)
    assert res.risk[0, 2] == pytest.approx(local.risk, rel=1e-9)
    kw["rounds"] = [1, 5]
    sim = simulate_rounds("fedprox", **kw, spectrum="two-point:1,2,0.5", d=200, reps=4, seed=3)
    assert np.all(np.abs(res.risk[:, :2] - sim.risk) < 3.0 * sim.risk_se)
    assert np.all(np.abs(res.global_risk[:, :2] - sim.global_risk) < 0.06)


def test_algorithm1_one_pooled_client_scaled_spectrum_is_the_identity_route(capsys):
    """F1: under scaled:2 (the same route as any spectrum) the curves are Sigma = I's own route
    (``algorithm1.curves``, where it answers: lam 0.2) at step 2 eta, lam / 2, global step 2 g,
    models times sqrt(2), to 1e-10; at Sigma = I below a0 (lam 0.1: refused before) the
    command line answers, T = inf the min-norm interpolator's risk 0.875."""
    c, lam, g = 2.0, 0.4, 1.0
    res = riskcalc.rounds_limit("fedprox", **dict(ONE, step_size=0.05), lam=lam, global_step=g,
                                rounds=[1, 5, 50], spectrum=riskcalc.Spectrum([c], weights=[1.0]))
    one = np.ones(1)
    ref = ROUTES["pfedme_steps"](np.array([2.0]), 0.5 * np.sqrt(c) * one, 0.5 * one, one,
                                 np.sqrt(c), lam / c, 0.05 * c, 2, g * c, np.array([1., 5., 50.]))
    np.testing.assert_allclose(res.global_risk[0], (ref["bias"] + ref["variance"])[0],
                               rtol=1e-10)
    np.testing.assert_allclose(res.risk, np.sum(ref["local"](), axis=0), rtol=1e-10)
    code, out, err = run_cli(["predict", "fedprox", "--gamma", "2", "--r", "0.5", "--sigma",
                              "0.5", "--signal", "1", "--lam", "0.1", "--rounds", "1,inf",
                              "--local-steps", "2", "--local-step-size", "0.1",
                              "--global-step", "1"], capsys)
    assert code == 0 and err == "" and "contraction 0.972789" in out
    assert out.split("\n      inf ")[1].split()[2] == "0.875"


def _mp_two_by_two(gamma, lam, eta, K, g, T, th2=1.25, noise=0.25):
    """One client at Sigma = I, independently: the 2 x 2 recursion of (own, server) models per
    eigenvalue s of the design, integrated over Marchenko-Pastur (atom 1 - 1/gamma at 0)."""
    from scipy.integrate import quad

    lo, hi = (1 - np.sqrt(gamma)) ** 2, (1 + np.sqrt(gamma)) ** 2

    def filt(s):
        a = (1 - eta * (s + lam)) ** K
        c, v, w = (1 - a) / (s + lam), 0.0, 0.0
        for _ in range(T):
            v = a * v + c * (lam * w + 1)
            w = (1 - g * lam) * w + g * lam * v
        return v, w

    def risk(s, m):
        f = filt(s)[m]
        dens = np.sqrt((hi - s) * (s - lo)) / (2 * np.pi * gamma * s)
        return dens * ((1 - s * f) ** 2 * th2 + noise * gamma * s * f * f)
    return [quad(risk, lo, hi, args=(m,), epsabs=1e-13, epsrel=1e-12, limit=200)[0]
            + (1 - 1 / gamma) * th2 for m in (0, 1)]


def test_algorithm1_one_pooled_client_small_server_step_refused_by_name(capsys):
    """F2 (after F1): one client at Sigma = I with a small server step (lam 1e-4, global_step
    1: the top 1 - 1e-4) gave the pencil's 'Newton's method on the pencil did not converge (t =
    0)' (before F1 a refusal by name); it now names the case, the top and global_step. Where
    the solve converges (lam 1e-5 at the default global_step 1 / lam) the own and server risks
    are an independent Marchenko-Pastur integral of the 2 x 2 recursion's to 1e-11."""
    with pytest.raises(riskcalc.SolverError, match=r"global_step: Algorithm 1 with one client "
                       r"\(gamma 2 > 1.*top is 1 - 0.0001 \(global_step lam = 0.0001.* \(the "
                       r"default 1 / lam\)"):
        riskcalc.rounds_limit("fedprox", **ONE, lam=1e-4, global_step=1.0, rounds=[1, 5])
    res = riskcalc.rounds_limit("fedprox", **ONE, lam=1e-5, rounds=[3])
    own, server = _mp_two_by_two(2.0, 1e-5, 0.1, 2, 1e5, 3)
    assert res.risk[0, 0] == pytest.approx(own, rel=1e-11)
    assert res.global_risk[0, 0] == pytest.approx(server, rel=1e-11)


BASE2 = dict(gamma=[0.5, 2.0], r=0.5, sigma=0.5, signal=1.0, rounds=[np.inf], d=12, reps=2)


@pytest.mark.parametrize("method,kw,fix", [
    ("fedprox", {"local_steps": np.inf, "lam": 1.0}, "raise global_step, or give a lam nearer"),
    ("fedprox", {"local_steps": 2, "step_size": 0.1, "lam": 1.0}, "global_step, step_size, or"),
    ("fedavg", {"local_steps": 2, "step_size": 0.1}, "raise global_step, step_size, or rescale")])
def test_simulated_fixed_point_stalled_by_a_tiny_covariance_says_raise(method, kw, fix):
    """F3: ``simulate_rounds(..., spectrum='scaled:1e-50', rounds=[inf])`` refused 'spectral
    radius of its round map 1 >= 1 ... lower the step sizes', which stalls it further: the
    radius is 1 to rounding because the steps (or Algorithm 1's prox at lam 1, moving a model
    by ~1e-50 per round) are too small for the covariance's scale. A radius above 1 keeps the
    old advice."""
    with pytest.raises(ValueError, match="the radius is 1 to rounding, not above it.*" + fix):
        simulate_rounds(method, **BASE2, **kw, spectrum="scaled:1e-50")
    with pytest.raises(ValueError, match=r"84.7\d* >= 1\): .*; lower the step sizes$"):
        simulate_rounds("fedavg", **BASE2, local_steps=2, step_size=1.9, global_step=5.0)


@pytest.mark.parametrize("method,kw", [("fedavg", {"local_steps": 2, "step_size": 0.1}),
                                       ("fedavg", {"local_steps": np.inf}),
                                       ("fedprox", {"local_steps": np.inf, "lam": 1.0})])
def test_memory_limit_without_a_memory_estimate_is_refused(method, kw, capsys):
    """F4: ``rounds_limit(..., max_gigabytes=1e-9)`` answered at Sigma = I for FedAvg and the
    exact prox, whose routes estimate no memory (the limit had no effect: safety.rst makes such
    an option an error); Algorithm 1 with finite K keeps it (its estimate refuses 1e-9 GB)."""
    case = dict(gamma=[0.5, 2.0], r=0.5, sigma=0.5, signal=1.0, rounds=[1])
    with pytest.raises(ValueError, match=r"^max_gigabytes does not apply to .* at Sigma = I"):
        riskcalc.rounds_limit(method, **case, **kw, max_gigabytes=1e-9)
    assert np.isfinite(riskcalc.rounds_limit(method, **case, **kw).risk).all()
    argv = ["predict", method, "--gamma", "0.5", "--r", "0.5", "--sigma", "0.5", "--signal",
            "1", "--rounds", "1", "--max-memory", "4"] + [
        x for k, v in kw.items() for x in (f"--{k.replace('_', '-')}".replace(
            "step-size", "local-step-size"), str(v))]
    code, out, err = run_cli(argv, capsys)
    assert code == 2 and err.startswith("error: --max-memory does not apply") and out == ""
    with pytest.raises(ValueError, match="GB at its peak"):
        riskcalc.rounds_limit("fedprox", **case, local_steps=2, step_size=0.1, lam=1.0,
                              max_gigabytes=1e-9)


def test_personalization_beyond_the_dense_pencil_named_by_its_count():
    """F5: FTFA after Algorithm 1's rounds beyond M (K + k)^2 = 200 unknowns was refused with a
    message starting 'spectrum:' at Sigma = I (no spectrum given: the count, not the spectrum,
    is at fault), and for one pooled client under a spectrum the joint route said 'the spectrum
    of the round map was not found on the scan' (its edges took the scan, not F1's closed
    form). Both now refuse naming steps; the latter no longer says 'covariate shift'."""
    res = riskcalc.rounds_limit("fedprox", **ONE, lam=0.1, global_step=1.0, rounds=[1])
    with pytest.raises(ValueError, match=r"^steps: personalization from the round-T model "
                                         r"solves M \(K \+ k\)\^2 = 225 .*steps <= 12 fits"):
        res.personalized_risk(steps=13, step_size=0.1)
    one = riskcalc.rounds_limit("fedprox", **ONE, lam=0.1, global_step=1.0, rounds=[1],
                                spectrum=TWO_POINT)
    with pytest.raises(ValueError, match=r"^steps: personalization after Algorithm 1's rounds "
                                         r"under a covariance with pooled N < d .* got 225"):
        one.personalized_risk(steps=13, step_size=0.1)


def test_root_work_refusal_offers_only_what_can_help():
    """F6: FedAvg's curves refused by max_seconds where no local_steps fits said 'give fewer
    clients, fewer clients or rounds' (one client: fewer clients is none; at the least nodes
    fewer rounds changes nothing); now only the remedies that apply."""
    kw = dict(r=0.5, sigma=0.5, signal=1.0, rounds=[1, 5], local_steps=2, step_size=0.1,
              max_seconds=1e-9)
    with pytest.raises(ValueError, match=r"allowed\); give numpy.inf where the local steps "
                                         r"near the exact local solve, or allow more time"):
        riskcalc.rounds_limit("fedavg", gamma=[0.5], **kw)
    with pytest.raises(ValueError, match=r"allowed\); give fewer clients, numpy.inf"):
        riskcalc.rounds_limit("fedavg", gamma=[0.5, 2.0], **kw)


def test_one_step_refusal_never_asks_for_zero_atoms():
    """F7: FedAvg's one-local-step route under a spectrum refused max_gigabytes=1e-9 with 'give
    at most 0 atoms (a histogram of the eigenvalues) or fewer rounds': where not one atom fits
    at any T it now says so, and where only the rounds are too many, asks for fewer."""
    kw = dict(gamma=[0.5, 2.0], r=0.5, sigma=0.5, signal=1.0, local_steps=1, step_size=0.1,
              spectrum="two-point:1,2,0.5")
    with pytest.raises(ValueError, match=r"GB here\); not one atom fits at any T: allow more "
                                         r"time .*, or allow more memory"):
        riskcalc.rounds_limit("fedavg", **kw, rounds=[1, 5], max_gigabytes=1e-9)
    with pytest.raises(ValueError, match=r"GB here\); give fewer rounds, or allow more time"):
        riskcalc.rounds_limit("fedavg", **kw, rounds=[1000], max_gigabytes=1.9e-5)


def test_one_pooled_client_at_identity_keeps_its_own_route_where_it_answers():
    """F8 (after F1): F1 sent every pooled client at Sigma = I to the pencil route, which refuses
    T = 600 (2e5 node pairs) and rounds_to_eps' 1000 rounds that the identity's own route
    answers (gamma 2, K = 2, lam 0.2); the pencil route now takes only the case the identity
    route does not reach (top below a0)."""
    res = riskcalc.rounds_limit("fedprox", **ONE, lam=0.2, global_step=1.0, rounds=[600, np.inf])
    assert res.risk[0, 0] == pytest.approx(res.risk[0, 1], rel=1e-5)


def test_simulated_algorithm1_without_lam_says_it_is_missing():
    """F9: ``simulate_rounds('fedprox', ...)`` without lam said 'lam must be a finite number in
    (0, inf), got nan' (a value never given); it now says lam is needed, as rounds_limit does."""
    with pytest.raises(ValueError, match=r"^fedprox \(Algorithm 1\) needs lam > 0"):
        simulate_rounds("fedprox", **BASE2, local_steps=2, step_size=0.1)


def test_algorithm1_small_penalty_under_a_spectrum_not_blamed_on_pooled_n():
    """F10: Algorithm 1 under a spectrum with a small penalty (gamma (0.5, 2): N / d = 2.5,
    two-point:1,2,0.5, K = 2, step 0.05, global_step 1, lam 3e-3) was refused 'the round map's
    spectrum comes within 1e-4 of its top to 0 (pooled N near d: sum_j min(1, 1/gamma_j) near
    1); move gamma off the threshold': it is not near; the refusal now names lam and the
    steps (lam 1e-2 answers)."""
    kw = dict(gamma=[0.5, 2.0], r=0.5, sigma=0.5, signal=1.0, rounds=[1, 5], local_steps=2,
              step_size=0.05, global_step=1.0, spectrum=TWO_POINT)
    with pytest.raises(ValueError, match=r"^lam: .* = 1.5, off the threshold 1: .*step_size "
                                         r"lam = 0.00015, global_step lam = 0.003\)"):
        riskcalc.rounds_limit("fedprox", **kw, lam=3e-3)


def test_memory_refusal_where_no_single_change_fits_says_so():
    """F11: the dense pencil's memory refusal (``sigma.budget.check_memory``) at
    max_gigabytes=1e-9 said 'give fewer local_steps, clients or rounds' with one client and
    K = 2, none of which fits; it now says no one change fits and asks for more memory."""
    with pytest.raises(ValueError, match=r"GB allowed\); no fewer local_steps, clients or "
                                         r"rounds alone fits: allow more memory"):
        riskcalc.rounds_limit("fedprox", **ONE, lam=0.1, global_step=1.0, rounds=[1, 5],
                              max_gigabytes=1e-9)


def test_refused_rounds_name_the_settled_rounds_that_answer():
    """F12: Algorithm 1's dense pencil under a spectrum refused T = 1000 and 2000 'give fewer
    rounds' (node pairs past 2e5) where T = 5000 answers: past rho^T < 1e-16 the curve has
    settled and needs no nodes. The refusal now names the first such T, which answers."""
    kw = dict(gamma=[0.5, 2.0], r=0.5, sigma=0.5, signal=1.0, local_steps=2, step_size=0.05,
              lam=1.0, spectrum=TWO_POINT)
    with pytest.raises(ValueError, match=r"give fewer rounds, local_steps or clients, or "
                                         r"rounds from T = (\d+) on") as info:
        riskcalc.rounds_limit("fedprox", **kw, rounds=[2000])
    settled = int(info.value.args[0].split("from T = ")[1].split()[0])
    assert np.isfinite(riskcalc.rounds_limit("fedprox", **kw, rounds=[settled]).risk).all()
