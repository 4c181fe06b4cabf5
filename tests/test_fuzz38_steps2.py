"""Issue 32, fuzz38 (steps2): what this fuzz found, each test failing before."""

import numpy as np
import pytest

from tests.helpers import run_cli

TWO_POINT = "two-point:1,4,0.3"
STEPS_600 = ["predict", "ftfa", "--gamma", "2", "--r", "1", "--sigma", "1", "--steps", "600",
             "--step-size", "0.1", "--spectrum", TWO_POINT, "--max-minutes", "0.05"]


@pytest.mark.parametrize("federation", [["--clients", "4"], ["--clients-file", "FILE"]])
def test_cli_steps_from_a_finite_m_model_estimate_within_max_minutes(federation, tmp_path,
                                                                     capsys):
    """F16: ``predict ftfa --steps 600 --step-size 0.1 --clients 4 --spectrum two-point:1,4,0.3
    --max-minutes 0.05`` (or a clients file) ran its pencils (~17 s) until the --max-minutes
    timer stopped it with the generic "stopped at the --max-minutes limit"; the estimate of
    ``steps_limit(max_seconds=...)`` was not given the limit. Now refused before solving,
    naming the steps that fit and --max-minutes."""
    path = tmp_path / "fed.json"
    path.write_text('[{"gamma": 1, "r": 1, "sigma": 1}]')
    argv = STEPS_600 + [str(path) if a == "FILE" else a for a in federation]
    code, out, err = run_cli(argv, capsys)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert "600 steps from the finite-M model need pencils estimated" in err, err
    assert "at most 332 steps fit" in err and "--max-minutes on the command line" in err, err


def test_per_client_steps_take_max_seconds():
    """F16: ``clients_steps_limit`` (the route of a clients file) had no ``max_seconds``."""
    from riskcalc.linear.steps.finite_clients import clients_steps_limit

    kw = dict(gamma=[2.0, 1.0], r=1.0, sigma=1.0, step_size=0.1, spectrum=TWO_POINT)
    with pytest.raises(ValueError, match=r"at most 332 steps fit, or raise max_seconds"):
        clients_steps_limit("ftfa", steps=600, max_seconds=3, **kw)
    # Sigma = I and a convergent step: quadrature, no pencils to bound.
    bias, var = clients_steps_limit("ftfa", **{**kw, "spectrum": None}, steps=1000,
                                    max_seconds=1e-9)
    assert np.isfinite(bias) and np.isfinite(var)
    # Pooled N <= d is the reason given, before any estimate.
    with pytest.raises(ValueError, match="pooled N > d"):
        clients_steps_limit("ftfa", **{**kw, "gamma": [2.0, 3.0]}, steps=600, max_seconds=3)


@pytest.mark.parametrize("spectrum, lam", [(None, 0.0), (TWO_POINT, 0.5)])
def test_a_step_at_the_stability_edge_converges(spectrum, lam):
    """F17: eta (lam + x_hi) = 2 exactly was "gradient descent diverges, and the risk grows
    without bound in steps, like 1^(2 k)" (converges false), yet after 1e6 steps the value
    equalled the converged limit: abs(1 - eta (lam + s)) = 1 only at s = x_hi, which carries no
    mass of the limiting law of S. Now converges, with a note saying so (also on the finite-M
    route, and 2 to rounding: x_hi is rounded differently on different routes)."""
    import riskcalc
    from riskcalc.linear.engine import weighted_mp
    from riskcalc.spectrum import as_spectrum

    sp = as_spectrum(spectrum) or riskcalc.Spectrum.identity()
    eta = 2.0 / (lam + weighted_mp.support_edges(2.0, sp)[1])
    kw = dict(gamma=2.0, r=1.0, sigma=1.0, spectrum=spectrum, **({"lam": lam} if lam else {}))
    method = "rtfa" if lam else "ftfa"
    res = riskcalc.steps_limit(method, steps=1000, step_size=eta, **kw)
    assert res.converges is True and "at the stability edge" in res.notes[0], res.notes
    assert res.risk == pytest.approx(riskcalc.limit(method, **kw).risk, rel=1e-5)
    if spectrum is None:
        ftfa = riskcalc.steps_limit("ftfa", gamma=2.0, r=1.0, sigma=1.0, steps=10 ** 6,
                                    step_size=eta)
        assert ftfa.risk == pytest.approx(1.5, rel=1e-9) and ftfa.converges is True
        # One ulp over x_hi (as (1 + sqrt 2)^2 rounds it), from 4 clients: the same.
        e = float(np.nextafter(eta, 1.0))
        fin = riskcalc.steps_limit("ftfa", gamma=2.0, r=1.0, sigma=1.0, steps=10 ** 4,
                                   step_size=e, clients=4)
        assert fin.converges is True and "stability edge" in fin.notes[0]
        assert fin.risk == pytest.approx(riskcalc.limit("ftfa", gamma=2.0, r=1.0, sigma=1.0,
                                                        clients=4).risk, rel=1e-7)


def test_the_rounds_route_takes_the_same_edge():
    """F17: FTFA after the rounds (``ftfa_stability``) said eta top < 2 converges."""
    from riskcalc.linear.dynamics.personalize import ftfa_stability

    top = (1.0 + np.sqrt(2.0)) ** 2
    assert ftfa_stability([2.0], 1000, 2.0 / top)[0].all()
    assert not ftfa_stability([2.0], 1000, 2.0001 / top)[0].any()


@pytest.mark.parametrize("kw, said, flags", [
    (dict(steps=0), "steps needs step_size", "--steps needs --step-size"),
    (dict(step_size=0.1), "step_size is only used with steps",
     "--step-size is only used with --steps")])
def test_python_steps_options_are_named_as_python_arguments(kw, said, flags, capsys):
    """F18: ``compare_method("ftfa", ..., steps=0)`` said "--steps needs --step-size" (and
    ``sweep`` alike), naming command-line options to a Python caller; the command line keeps
    its own names."""
    from montecarlo.compare import compare_method
    from montecarlo.linear.instances import Setting
    from montecarlo.sweep import sweep

    with pytest.raises(ValueError, match=f"^{said}$"):
        compare_method("ftfa", gamma=2.0, r=1.0, sigma=1.0, d=20, reps=2, **kw)
    with pytest.raises(ValueError, match=f"^{said}$"):
        sweep("ftfa", gamma=[2.0], r=[1.0], sigma=[1.0], setting=Setting(d=20), reps=2, **kw)
    argv = ["compare", "ftfa", "--gamma", "2", "--r", "1", "--sigma", "1", "--d", "20",
            "--reps", "2"] + [f"--{k.replace('_', '-')}={v}" for k, v in kw.items()]
    code, out, err = run_cli(argv, capsys)
    assert code == 2 and err == f"error: {flags}\n", err


def test_steps_near_gamma_one_beyond_the_contour_are_refused_up_front(monkeypatch):
    """F19: gamma 1.001 on two-point:1,4,0.3 after 1e6 steps of 0.1 ran its contour to 32768
    nodes (20 s) and was refused; so were 0.999 and 1.0001 (13-19 s). Near gamma = 1 but not
    at it the lower edge x_lo > 0 lies inside the contour around [0, x_hi], and the rule
    settles from nodes x (rho - 1) ~ 22-88 (not 11-18): none answered below 56 / 32768. Such
    a contour is now skipped at once; gamma = 1 itself (answered at 1e6 steps in 6.5 s) and
    6e5 steps (4 s) still run the rule (stubbed here: it takes seconds)."""
    import riskcalc
    from riskcalc.linear.engine import weighted_mp

    ran = []
    monkeypatch.setattr(weighted_mp, "contour_integrals",
                        lambda *a, **kw: ran.append(kw["foci"]) or [0.5, 0.5])
    kw = dict(r=1.0, sigma=1.0, step_size=0.1, spectrum=TWO_POINT)
    for gamma in (1.001, 0.999, 1.0001):
        with pytest.raises(riskcalc.SolverError, match=r"near gamma = 1 .*fewer steps"):
            riskcalc.steps_limit("ftfa", gamma=gamma, steps=10 ** 6, **kw)
    assert ran == []
    riskcalc.steps_limit("ftfa", gamma=1.0, steps=10 ** 6, **kw)
    riskcalc.steps_limit("ftfa", gamma=1.001, steps=6 * 10 ** 5, **kw)
    assert len(ran) == 2


@pytest.mark.parametrize("method, lam, said", [("ftfa", 0.5, "method ftfa does not take lam"),
                                               ("rtfa", None, "method rtfa needs lam")])
def test_per_client_steps_take_lam_as_the_method_does(method, lam, said):
    """F20: ``clients_steps_limit("ftfa", ..., lam=0.5)`` answered, lam silently ignored, and
    ``clients_steps_limit("rtfa")`` without lam answered as lam = 0 (FTFA's numbers), where
    ``steps_limit`` and every ClientSpec refuse both."""
    from riskcalc.linear.steps.finite_clients import clients_steps_limit

    with pytest.raises(ValueError, match=said):
        clients_steps_limit(method, gamma=[2.0] * 3, r=1.0, sigma=1.0, steps=5, step_size=0.1,
                            lam=lam)


@pytest.mark.parametrize("verb", ["compare", "sweep"])
def test_compare_and_sweep_refuse_a_route_with_steps(verb, tmp_path, capsys):
    """F21: ``compare ftfa ... --steps 5 --step-size 0.1 --route closed`` (and sweep) ignored
    --route silently (the finite-step limit has one route), where predict refuses it; now
    refused before simulating. The converged fallback of a method without a finite-step limit
    (fedavg, with a note) still takes its route."""
    argv = [verb, "ftfa", "--gamma", "2", "--r", "1", "--sigma", "1", "--d", "20", "--reps",
            "2", "--steps", "5", "--step-size", "0.1", "--route", "closed", "--no-progress"]
    out_file = tmp_path / "rows.csv"
    code, out, err = run_cli(argv + (["--out", out_file] if verb == "sweep" else []), capsys)
    assert code == 2 and "route 'closed' does not apply with steps (--route with --steps)" \
        in err and not out_file.exists(), err


def test_steps_diverging_only_on_another_client_take_the_quadrature(tmp_path, capsys):
    """F22: ``predict ftfa --gamma 0.5 --clients-file [gamma 8] --steps 2000 --step-size 0.3``
    was refused ("2000 steps ... need 6.41e+07 entries in memory"): the step diverges on the
    other client (0.3 x 14.7 > 2), which takes no steps, yet it sent the target (0.3 x 2.9,
    convergent) to the pencils. Now the target's stability chooses, and the quadrature
    computes the target only: the pencils' values to 1e-12 where both answer."""
    from riskcalc import Spectrum
    from riskcalc.linear.steps.finite_clients import clients_steps_limit, steps_group_limits

    kw = dict(gamma=[0.5, 8.0], r=[1.0, 2.0], sigma=[1.0, 0.5], lam=[0.2, 0.2], step_size=0.3)
    b, v = clients_steps_limit("rtfa", steps=[5, 60], **kw)
    pb, pv = steps_group_limits("rtfa", *(np.array(kw[k]) for k in ("gamma", "r", "sigma")),
                                np.ones(2), np.array(kw["lam"]), "samples",
                                Spectrum.identity(), 60, 0.3, targets=[0])
    np.testing.assert_allclose([b, v], [pb[0, [5, 60]], pv[0, [5, 60]]], rtol=1e-12)
    path = tmp_path / "others.json"
    path.write_text('[{"gamma": 8, "r": 1, "sigma": 1}]')
    code, out, err = run_cli(["predict", "ftfa", "--gamma", "0.5", "--r", "1", "--sigma", "1",
                              "--steps", "2000", "--step-size", "0.3", "--clients-file", path,
                              "--json"], capsys)
    assert code == 0 and '"converges": true' in out, err



def test_compare_prints_no_relative_difference_below_the_rounding(tmp_path, capsys):
    """F23: ``compare ftfa --gamma 0.5 --clients-file [gamma 8] --global federated --steps
    2000 --step-size 0.3`` printed the bias (predicted 8.6e-50, simulated 1.4e-15: rounding)
    with rel.diff "+1580558158698619694099971682785558528.000%"; a prediction below 1e-12
    of the risk now has n/a there, as a prediction of 0 has."""
    path = tmp_path / "others.json"
    path.write_text('[{"gamma": 8, "r": 1, "sigma": 1}]')
    code, out, err = run_cli(["compare", "ftfa", "--gamma", "0.5", "--r", "1", "--sigma", "1",
                              "--d", "30", "--reps", "2", "--steps", "2000", "--step-size",
                              "0.3", "--clients-file", path, "--global", "federated",
                              "--no-progress"], capsys)
    bias = next(line for line in out.splitlines() if line.strip().startswith("bias"))
    assert code == 0 and bias.split()[-2] == "n/a" and "%" not in bias, out
    risk = next(line for line in out.splitlines() if line.strip().startswith("risk"))
    assert risk.split()[-2].endswith("%"), out


def test_divergence_note_of_a_step_past_the_floats(capsys):
    """F24: ``predict ftfa --steps 5 --step-size 1e308`` noted "step_size * (lam + top of the
    spectrum of S) = inf > 2 ... like inf^(2 k)": the product overflowed; it now says more
    than 1.8e+308 (the values print overflow, as before)."""
    code, out, err = run_cli(["predict", "ftfa", "--gamma", "2", "--r", "1", "--sigma", "1",
                              "--steps", "5", "--step-size", "1e308"], capsys)
    assert code == 0 and "= more than 1.8e+308 > 2" in out and "inf^" not in out, out
