"""Issue 32, fuzz38 (steps): what this fuzz found, each test failing before."""

import warnings

import numpy as np
import pytest

import riskcalc


@pytest.mark.parametrize("kind", ["conditional", "empirical"])
def test_simulated_divergent_steps_from_the_federated_model_overflow_to_inf(kind):
    """F1: ``compare rtfa --gamma 2 --lam 0.5 --steps 300 --step-size 1 --clients 4 --global
    federated --d 30`` printed the simulated bias, variance and risk as "nan" (the filter's
    k-th power overflowed, and inf - inf in the federated sums was NaN), beside a predicted
    "overflow"; from Python, numpy's overflow warnings. Now infinite, without warnings."""
    from montecarlo.linear.instances import Setting, sample_instance
    from montecarlo.linear.measure import measure

    spec = riskcalc.ClientSpec("rtfa", gamma=2.0, r=1.0, sigma=1.0, lam=0.5)
    inst = sample_instance(spec, Setting(d=30, clients=4, global_model="federated"), 0, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = measure(inst, "rtfa", [0.5], kind=kind, steps=300, step_size=1.0)
    assert all(np.isposinf(out[q]).all() for q in ("bias", "variance", "risk"))


def test_summary_of_an_overflowed_simulation_against_an_overflowed_prediction_is_quiet():
    """F1: ``montecarlo.compare`` of diverging steps warned "invalid value encountered in
    subtract" (inf - inf in the coverage check); neither is inside an interval."""
    from montecarlo.compare import summarize

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = summarize(np.full((3, 1), np.inf), [np.inf])
    assert not out["inside"][0] and np.isposinf(out["mean"][0])


def test_steps_under_a_spectrum_try_the_other_contour_before_refusing(monkeypatch):
    """F2: gamma 0.95 on two-point:1,4,0.3 after 1e4 steps of 0.1 was refused after 3.5 s
    ("the contour rule did not settle with 32768 nodes"), while 3e4 and 1e5 steps answered:
    the contour around [0, x_hi] did not settle, the one around the continuous part (the
    other route where gamma != 1) does (bias 1.670465775355e-4, within 2e-15 of it with half
    the margin). That failure is simulated here (it takes seconds): the other contour answers,
    with the value it gives unpatched."""
    from riskcalc.linear.engine import weighted_mp

    kw = dict(gamma=0.95, r=1.0, sigma=1.0, steps=10, step_size=0.1,
              spectrum="two-point:1,4,0.3")
    want = riskcalc.steps_limit("ftfa", **kw)
    real, tried = weighted_mp.contour_integrals, []

    def first_fails(*args, foci, **kw):
        tried.append(foci[0])
        if foci[0] == 0.0:
            raise riskcalc.SolverError("finite-step integral: the contour rule did not settle "
                                       "with 32768 nodes")
        return real(*args, foci=foci, **kw)

    monkeypatch.setattr(weighted_mp, "contour_integrals", first_fails)
    res = riskcalc.steps_limit("ftfa", **kw)
    assert tried[0] == 0.0 and tried[1] > 0
    assert (res.bias, res.variance) == pytest.approx((want.bias, want.variance), rel=1e-10)


@pytest.mark.parametrize("kw, message", [
    (dict(clients=4, weights="bogus"), "weights must be one of samples, uniform; got 'bogus'"),
    (dict(max_seconds=-1), r"max_seconds must lie in \(0, inf\], got -1"),
    (dict(clients=4, max_seconds=-1), r"max_seconds must lie in \(0, inf\], got -1")])
def test_steps_options_without_work_to_do_are_still_checked(kw, message):
    """F3: the local baselines with clients=4 echoed weights="bogus" in their params (FTFA
    refuses it), and max_seconds=-1 passed silently where there was no pencil to bound."""
    with pytest.raises(ValueError, match=message):
        riskcalc.steps_limit("local", gamma=2.0, rho=1.0, sigma=1.0, steps=3, step_size=0.1,
                             **kw)


@pytest.mark.parametrize("spectrum", [None, "two-point:1,4,0.3"])
@pytest.mark.parametrize("kw", [dict(r=0.0, sigma=0.5), dict(r=1.0, sigma=0.0)])
def test_diverging_steps_without_signal_or_noise_are_quiet(kw, spectrum):
    """F4: r = 0 (or sigma = 0) after 1e4 steps of 1 at gamma 2 (past the edge) warned
    "invalid value encountered in multiply" (0 * inf, before it was set to 0)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = riskcalc.steps_limit("ftfa", gamma=2.0, steps=10 ** 4, step_size=1.0,
                                   spectrum=spectrum, **kw)
    assert np.isposinf(res.risk) and 0.0 in (res.bias, res.variance)


def test_steps_near_gamma_one_keep_the_lower_edge_digits():
    """F6: the Marchenko-Pastur lower edge (1 - sqrt(gamma))^2 was computed from 1 - sqrt(gamma),
    which loses digits near gamma = 1: FTFA at gamma 0.999 after 1e9 steps of 0.1 had variance
    998.9999999999741 where mpmath (30 digits, the density in s = a + u^2) gives
    998.99999999988841; gamma/(1 - gamma) bounds it (the limit, 998.9999999999991)."""
    res = riskcalc.steps_limit("ftfa", gamma=0.999, r=1.0, sigma=1.0, steps=10 ** 9,
                               step_size=0.1)
    assert res.variance == pytest.approx(998.99999999988841, rel=2e-15)


@pytest.mark.parametrize("gamma, bias, variance", [
    (1.0, 1.2615662609470017e-05, 20901.814209167667),
    (1.0 + 1e-6, 1.3121959945511441e-05, 20899.356345828674)])
def test_steps_at_gamma_one_answer_1e10_steps(gamma, bias, variance):
    """F5: FTFA at gamma = 1 after 1e10 steps of 0.1 was refused ("did not settle with 262144
    nodes ... fewer steps or a smaller step size answer"): there the filter varies on t ~
    (step_size steps)^(-1/2) about the quadrature's t = 0, finer than 2^18 nodes resolve.
    Near gamma = 1 the rule now goes on to 2^21 nodes (a scalar point). The values are
    mpmath's (30 digits, the density in s = a + u^2 with breakpoints at the filter's scale)."""
    res = riskcalc.steps_limit("ftfa", gamma=gamma, r=1.0, sigma=1.0, steps=10 ** 10,
                               step_size=0.1)
    assert res.bias == pytest.approx(bias, abs=1e-15)
    assert res.variance == pytest.approx(variance, rel=1e-13)


def test_steps_under_a_spectrum_near_gamma_one_settle_at_the_solver_noise(monkeypatch):
    """F7: the contour rule had to settle the bias to 1e-16 absolute, below the noise the
    Stieltjes transform (solved to ~1e-13 near the contour's tip at s = 0) leaves: gamma 0.95
    on two-point:1,4,0.3 after 1e4 steps of 0.1 failed around [0, x_hi] (3.5 s; then F2's other
    contour answered), gamma 0.999 after 1e5 steps and gamma 1 after 4e5 were refused after
    12-17 s. The first contour now answers, its bias within 2e-14 (absolute; the tolerance is
    1e-13 times the mean eigenvalue) of the other's, which two margins agree on to 2e-16."""
    from riskcalc.linear.engine import weighted_mp

    real, calls = weighted_mp.contour_integrals, []

    def counted(*args, **kw):
        calls.append(kw["foci"])
        return real(*args, **kw)

    monkeypatch.setattr(weighted_mp, "contour_integrals", counted)
    res = riskcalc.steps_limit("ftfa", gamma=0.95, r=1.0, sigma=1.0, steps=10 ** 4,
                               step_size=0.1, spectrum="two-point:1,4,0.3")
    assert len(calls) == 1 and calls[0][0] == 0.0
    assert res.bias == pytest.approx(1.670465775355132e-04, abs=2e-14)
    assert res.variance == pytest.approx(17.842038441190613, rel=1e-11)


def test_steps_with_a_tiny_lam_at_gamma_one_under_a_spectrum_answer():
    """F8: RTFA at gamma = 1 with lam = 1e-8 under a spectrum was refused after 10 steps of 0.1
    ("... finer than the rule resolves: fewer steps or a smaller step size answer"): the contour
    kept to lam / 2 left of 0, for a pole of the filter at -lam that finitely many steps make
    removable. Under c I (c = 1.0000005) it now equals Sigma = I's quadrature with step c eta
    and penalty lam / c (bias times c), and on two-point:1,4,0.3 FTFA's value to O(lam)."""
    c = 1.0000005
    kw = dict(gamma=1.0, r=1.0, sigma=1.0, steps=10)
    res = riskcalc.steps_limit("rtfa", lam=1e-8, step_size=0.1,
                               spectrum=riskcalc.Spectrum([c], [1.0]), **kw)
    iso = riskcalc.steps_limit("rtfa", lam=1e-8 / c, step_size=0.1 * c, **kw)
    assert (res.bias, res.variance) == pytest.approx((c * iso.bias, iso.variance), rel=1e-13)
    two = dict(step_size=0.1, spectrum="two-point:1,4,0.3", **kw)
    assert riskcalc.steps_limit("rtfa", lam=1e-8, **two).risk == pytest.approx(
        riskcalc.steps_limit("ftfa", **two).risk, abs=1e-8)


def test_steps_refused_near_gamma_one_name_the_gamma_given():
    """F9: the refusal near gamma = 1 printed gamma with %g: "near gamma = 1 (here 1)" for
    gamma = 1.000001 (1e12 steps of 0.1), as if it were the case gamma = 1."""
    with pytest.raises(riskcalc.SolverError, match=r"near gamma = 1 \(here 1\.000001\) the law"):
        riskcalc.steps_limit("ftfa", gamma=1.000001, r=1.0, sigma=1.0, steps=10 ** 12,
                             step_size=0.1)


def test_steps_under_a_spectrum_beyond_the_contour_are_refused_before_solving(monkeypatch):
    """F10: gamma = 1 on two-point:1,4,0.3 after 1e7 steps of 0.1 was refused after 30 s (the
    contour rule doubled to 32768 nodes without settling; no estimate). The ellipse's parameter
    rho tells it before: the rule resolves once nodes x (rho - 1) exceeds ~11-18 and settles a
    doubling later; here rho - 1 = 5.4e-4 needs ~37000 nodes. Now refused at once (0.0 s),
    with the reason and what answers."""
    from riskcalc.linear.engine import weighted_mp

    def solved(*args, **kw):
        raise AssertionError("the contour rule ran")

    monkeypatch.setattr(weighted_mp, "contour_integrals", solved)
    with pytest.raises(riskcalc.SolverError, match=r"near gamma = 1 \(here 1\) .* = 1e-06, "
                                                   r"finer than the rule resolves: fewer steps"):
        riskcalc.steps_limit("ftfa", gamma=1.0, r=1.0, sigma=1.0, steps=10 ** 7, step_size=0.1,
                             spectrum="two-point:1,4,0.3")


def test_diverging_steps_from_a_finite_m_model_without_signal_or_noise_are_zero():
    """F11: from the FedAvg model over 3 clients, 50 steps of 1000 (past the edge) with r = 0
    gave bias inf (0 * inf overflowing, then set to inf), where the oracle route gives 0 (F4),
    and so did sigma = 0 for the variance, in ``steps_limit`` and in the per-client
    ``clients_steps_limit``: no error to amplify is 0."""
    from riskcalc.linear.steps.finite_clients import clients_steps_limit

    res = riskcalc.steps_limit("ftfa", gamma=2.0, r=0.0, sigma=0.5, steps=50,
                               step_size=1000.0, clients=3)
    assert res.bias == 0.0 and res.variance > 1e100
    bias, var = clients_steps_limit("ftfa", gamma=[2.0, 1.5], r=1.0, sigma=0.0, steps=50,
                                    step_size=1000.0)
    assert bias > 1e100 and var == 0.0


@pytest.mark.parametrize("kw, error, message", [
    (dict(spectrum="two-point:1,4,0.3"), None, None),
    (dict(spectrum=3), ValueError, "spectrum must be a riskcalc.Spectrum or a SPEC string"),
    (dict(step_size=[0.1, 0.2]), ValueError, r"step_size must be a number, got an array")])
def test_per_client_steps_take_what_every_entry_takes(kw, error, message):
    """F12: ``clients_steps_limit(spectrum="two-point:1,4,0.3")`` was an AttributeError ('str'
    object has no attribute 'atoms'; every other spectrum= reads a SPEC string), and
    step_size=[0.1, 0.2] a TypeError (only 0-dimensional arrays can be converted)."""
    from riskcalc.linear.steps.finite_clients import clients_steps_limit

    args = dict(gamma=[2.0, 1.5], sigma=1.0, r=1.0, steps=3, step_size=0.1)
    if error is None:
        spec = riskcalc.Spectrum.parse(kw["spectrum"])
        assert clients_steps_limit("ftfa", **{**args, **kw}) == clients_steps_limit(
            "ftfa", **args, spectrum=spec)
    else:
        with pytest.raises(error, match=message):
            clients_steps_limit("ftfa", **{**args, **kw})


@pytest.mark.parametrize("step_size", [[0.1], np.array([0.1, 0.2])])
def test_simulation_step_size_is_one_number(step_size):
    """F13: ``montecarlo.sweep(..., steps=3, step_size=[0.1])`` (and compare) raised TypeError
    "only 0-dimensional arrays can be converted to Python scalars"."""
    from montecarlo.compare import check_run

    with pytest.raises(ValueError, match=r"step size must be a number, got an array"):
        check_run(2, "conditional", 3, step_size)


def test_many_step_counts_keep_the_rule_within_its_entries(monkeypatch):
    """F14: ``steps_limit("ftfa", gamma=1, steps=np.arange(10 ** 5) * 10, step_size=0.1)``
    held points x nodes in every array of the Marchenko-Pastur rule: a MemoryError after 34 s
    (391 MiB arrays of shape (100000, 512), under 3 GB). A rule over more than
    ``MAX_RULE_ENTRIES`` now splits its points in halves, each its own rule (here a small
    bound stands in for 2^22): the same values, no array of several points beyond it."""
    from riskcalc.linear.steps import limits

    ks, g = np.array([0, 1, 5, 100, 10 ** 4, 10 ** 6, 3, 77]), [1.0, 0.999, 2.0, 0.5] * 2
    want = [limits.filter_integrals(a, 0.0, b, 0.1) for a, b in zip(g, ks)]
    real, largest = limits._one_minus_power, []

    def sized(x, k):
        largest.append(x.size if x.shape[0] > 1 else 0)     # one point: its own nodes
        return real(x, k)

    monkeypatch.setattr(limits, "_one_minus_power", sized)
    monkeypatch.setattr(limits, "MAX_RULE_ENTRIES", 2 ** 9, raising=False)
    bias, var = limits.filter_integrals(g, 0.0, ks, 0.1)
    assert max(largest) <= 2 ** 9
    # floats: pytest 9.2's approx refuses a list of 0-d arrays ("nested data structures")
    assert bias == pytest.approx([float(w[0]) for w in want], rel=1e-14, abs=1e-16)
    assert var == pytest.approx([float(w[1]) for w in want], rel=1e-14)


def test_optimal_steps_near_gamma_one_estimates_the_rule_nodes():
    """F15: ``optimal_steps("ftfa", gamma=1, step_size=0.1, max_steps=1e5, max_seconds=10)``
    was estimated at 3 s (3e-5 s a point) and took 104 s: near gamma = 1 the rule's nodes grow
    like 12 sqrt(step_size k) (measured 12x a point at step_size k = 1e3). The estimate now
    carries that factor (1e5: 1.88 min) and names the max_steps that fits."""
    with pytest.raises(ValueError, match=r"max_steps = 2000 would take about 0\.00531 min "
                                         r"\(estimated\).*give max_steps <= 923"):
        riskcalc.optimal_steps("ftfa", gamma=1.0, r=1.0, sigma=0.5, step_size=0.1,
                               max_steps=2000, max_seconds=0.1)
