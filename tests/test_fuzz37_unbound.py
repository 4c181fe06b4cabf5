"""Issue 32, fuzz37 (unbound): what this fuzz found, each test failing before."""

import pytest

import riskcalc

TWO_POINT = "two-point:1,4,0.3"


@pytest.mark.parametrize("gamma", [3.9, 3.96])
def test_maml_fl_near_pooled_n_equal_d_starts_on_the_physical_branch(gamma):
    """F1: MAML-FL over 4 clients sharing two-point:1,4,0.3 at gamma 3.9 (N/d - 1 = 0.026):
    the companion pencil, continued in gamma at the small starting shifts, landed on an
    unphysical root (E_D[K] < 0), and the shifts' Newton iteration chased t -> 0 until
    "the subordination fixed point did not converge" (alpha = 0 and 0.01; at 0.1 after
    10-219 s). At alpha = 0 the global model is FedAvg's: the limit is FTFA's."""
    kw = dict(gamma=gamma, r=1.0, sigma=1.0, clients=4, spectrum=TWO_POINT)
    maml = riskcalc.limit("maml_fl", alpha=0.0, **kw).risk
    assert maml == pytest.approx(riskcalc.limit("ftfa", **kw).risk, rel=1e-10)
    assert riskcalc.limit("maml_fl", alpha=0.01, **kw).risk == pytest.approx(maml, rel=1e-2)


@pytest.mark.parametrize("gamma, why", [
    (3.9, r"N/d - 1 = 0\.0256, alpha = 0\.1: near pooled N = d, with the filter s \(1 - alpha "
          r"s\)\^2 far from monotone .*; a gamma further from pooled N = d or a smaller alpha "
          r"answers"),
    (2.0, r"N/d - 1 = 1, alpha = 0\.1: with the filter .*spectrum; a smaller alpha answers")])
def test_maml_fl_shifts_give_up_after_a_few_pencils_that_cannot_be_followed(monkeypatch, gamma,
                                                                             why):
    """F2: where the companion pencil cannot be followed to the shifts' Newton steps (4
    clients at gamma 3.9, alpha 0.1), each failure took 0.1-1 s of halvings and the line search
    tried 60 per Newton step, in each of up to 20 continuation stages: 10-219 s, then a
    SolverError. Now the route gives up after ``_FAILED`` of them. A follow that always
    fails from a solution (but not on the first solve's way down, whose path alone has
    default arguments) stands in for the hard case: ``_FAILED`` failures, then the refusal."""
    from riskcalc.errors import SolverError
    from riskcalc.linear.engine import pencil_assembly
    from riskcalc.linear.finite_clients import maml_pencils, maml_sigma

    real, failed = pencil_assembly.follow, []

    def follow(atoms, weights, path, start=None, *args, **kw):
        if start is None or path.__defaults__:      # continuation, ``Companions._first``
            return real(atoms, weights, path, start, *args, **kw)
        failed.append(1)
        raise SolverError("could not be followed")

    monkeypatch.setattr(pencil_assembly, "follow", follow)
    monkeypatch.setattr(maml_sigma, "_LAST", {})
    with pytest.raises(SolverError, match=r"gave up after 12 companion pencils that could not be "
                                          r"followed .* " + why):
        riskcalc.limit("maml_fl", gamma=gamma, r=1.0, sigma=1.0, alpha=0.1, clients=4,
                       spectrum=TWO_POINT)
    assert len(failed) == maml_pencils.FAILED == 12


def test_maml_fl_continuation_in_alpha_starts_small(monkeypatch):
    """F2: the continuation in alpha tried the whole path at once, and a stage failed only after
    the shifts' 100 Newton steps, each with its companion pencils followed through 30
    halvings: alpha = 2 over 4 clients on two-point:1,4,0.3 at gamma 2 took 99 s (alpha = 1:
    244 s, 1 + 1e-12: 222 s), with the same risk as now in 46 pencils followed."""
    from riskcalc.linear.engine import pencil_assembly
    from riskcalc.linear.finite_clients import maml_sigma

    real, calls = pencil_assembly.follow, []

    def follow(*args, **kw):
        calls.append(1)
        assert len(calls) <= 200, "more than 200 pencils followed"
        return real(*args, **kw)

    monkeypatch.setattr(pencil_assembly, "follow", follow)
    monkeypatch.setattr(maml_sigma, "_LAST", {})
    res = riskcalc.limit("maml_fl", gamma=2.0, r=1.0, sigma=1.0, alpha=2.0, clients=4,
                         spectrum=TWO_POINT)
    assert res.risk == pytest.approx(11.173294790260789, rel=1e-10)


@pytest.mark.parametrize("method, signal", [("ftfa", "r"), ("local", "rho")])
def test_steps_at_gamma_one_settle_to_the_rounding_of_their_bias(method, signal):
    """F3: near gamma = 1 the bias is computed as 1 + (a sum near -1), rounded to ~1e-16
    absolute, and the rules had to agree to ATOL = 1e-16: gamma = 1 after 1e8 steps of 0.25
    (and 1e9 of 0.1) was refused as "finite-step quadrature did not settle ... fewer steps or
    a smaller step size answer", though 1 + 1e-15 answered. The values are mpmath's
    (30 digits, the Marchenko-Pastur density sqrt((4 - s) / s) / (2 pi))."""
    res = riskcalc.steps_limit(method, gamma=1.0, sigma=1.0, steps=10 ** 8, step_size=0.25,
                               **{signal: 1.0})
    assert res.bias == pytest.approx(7.9788455830947611e-05, abs=1e-15)
    assert res.variance == pytest.approx(3304.44609028035538, rel=1e-12)


NEAR_ONE = (r"near gamma = 1 \(here 1\) the law reaches s = 0, where the filter varies on the "
            r"scale 1 / \(step_size steps\) = 1e-05, finer than the rule resolves: fewer steps "
            r"or a smaller step size answer")


def test_steps_from_a_finite_m_model_near_gamma_one_say_why_they_stop():
    """F4: 1e6 steps of 0.1 at gamma = 1 from the FedAvg model over 4 clients (1e5 answer;
    the oracle route 1e9) were refused with the quadrature's guess "a pole of the integrand
    too close to the spectrum or to 0: lam or u too small?" (there is no lam). Since fuzz38
    quad F1 (the power as exp(k log1p)) 1e6 answer, approaching the oracle like 1/M (bias
    2.5e-6 above it at M = 1e3, 2.5e-8 at 1e5); 1e7, whose filter scale 1e-6 no rule resolves,
    is refused with the reason."""
    with pytest.raises(riskcalc.SolverError, match=NEAR_ONE.replace("1e-05", "1e-06")):
        riskcalc.steps_limit("ftfa", gamma=1.0, r=1.0, sigma=1.0, steps=10 ** 7,
                             step_size=0.1, clients=4)


@pytest.mark.parametrize("gamma, why", [(1.0, NEAR_ONE), (2.0, "did not settle with 32768")])
def test_steps_under_a_spectrum_near_gamma_one_say_why_they_stop(monkeypatch, gamma, why):
    """F4: under a spectrum at gamma = 1, 1e6 steps of 0.1 said only "the contour rule did not
    settle with 32768 nodes" (after 11 s; 1e8: "Silverstein's equation: the fixed point did not
    settle"); now the reason and what answers, elsewhere the rule's own message. The contour's
    failure is simulated here (it takes seconds)."""
    from riskcalc.linear.engine import weighted_mp

    def fails(*args, **kw):
        raise riskcalc.SolverError("finite-step integral: the contour rule did not settle "
                                   "with 32768 nodes")

    monkeypatch.setattr(weighted_mp, "contour_integrals", fails)
    with pytest.raises(riskcalc.SolverError, match=why):
        riskcalc.steps_limit("ftfa", gamma=gamma, r=1.0, sigma=1.0, steps=10 ** 6,
                             step_size=0.1, spectrum=TWO_POINT)


def test_maml_fl_path_is_chosen_by_alpha_times_the_eigenvalues(monkeypatch):
    """F5: the limit under c Sigma with step alpha / c is that under Sigma with alpha, the
    bias times c; the continuation chose its path by alpha alone, so scaled:3 at alpha 2/3
    went up in alpha through far-from-monotone filters (pencils not followed: 4 clients at
    gamma 3.9 refused, where Sigma = I at alpha 2 answers; 3 s at gamma 2) and took the path
    through s^3 only beyond alpha = 1. Now by alpha times the mean eigenvalue."""
    from riskcalc.linear.engine import pencil_assembly
    from riskcalc.linear.finite_clients import maml_sigma
    from riskcalc.linear.finite_clients.own import own_group_limits

    real, failed = pencil_assembly.follow, []

    def follow(*args, **kw):
        try:
            return real(*args, **kw)
        except riskcalc.SolverError:
            failed.append(1)
            raise

    monkeypatch.setattr(pencil_assembly, "follow", follow)
    monkeypatch.setattr(maml_sigma, "_LAST", {})
    res = riskcalc.limit("maml_fl", gamma=2.0, r=1.0, sigma=1.0, alpha=2 / 3, clients=4,
                         spectrum="scaled:3")
    (bias,), (var,) = own_group_limits("maml_fl", [2.0], [1.0], [1.0], [4.0], 2.0, "samples")
    assert (res.bias, res.variance) == pytest.approx((3 * bias, var), rel=1e-9)
    assert not failed


def test_optimal_steps_from_a_finite_m_model_under_a_spectrum_keeps_max_seconds():
    """F6: the finite-M pencil (every k up to max_steps, its cost growing like max_steps^3) was
    exempt from optimal_steps' estimate: max_seconds = 1 ran 250 steps for 5 s. Now it is
    estimated (``steps.pencils.seconds``) and refused, naming the max_steps that fits."""
    with pytest.raises(ValueError, match=r"max_steps = 250 would take about 0\.0213 min "
                                         r"\(estimated\); at most 0\.0167 min is allowed "
                                         r"\(max_seconds\): give max_steps <= 230"):
        riskcalc.optimal_steps("ftfa", gamma=2.0, r=1.0, sigma=1.0, step_size=0.05, clients=4,
                               spectrum=TWO_POINT, max_steps=250, max_seconds=1.0)


def test_steps_from_a_finite_m_model_estimate_their_pencils():
    """F7: 700 steps from the FedAvg model over 4 clients on two-point:1,4,0.3 took 32 s with
    no estimate and no limit (the pencils' cost grows like steps^3 x atoms). A caller's
    max_seconds now refuses them before solving, naming the steps that fit."""
    with pytest.raises(ValueError, match=r"700 steps from the finite-M model need pencils "
                                         r"estimated at 27\.7 s \(1 pencil, 2 spectrum atoms;"
                                         r".*over max_seconds = 10; at most 497 steps fit"):
        riskcalc.steps_limit("ftfa", gamma=2.0, r=1.0, sigma=1.0, steps=700, step_size=0.1,
                             clients=4, spectrum=TWO_POINT, max_seconds=10)
    assert riskcalc.steps_limit("ftfa", gamma=2.0, r=1.0, sigma=1.0, steps=50, step_size=0.1,
                                clients=4, spectrum=TWO_POINT, max_seconds=10).risk > 0
