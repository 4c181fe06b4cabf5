"""Issue 32, fuzz27's smaller items (F15), each pinned with the old behaviour in its comment."""

import json

import numpy as np
import pytest

import riskcalc
from riskcalc.cli import main
from riskcalc.cli.shared.guards import params_line
from tests.test_hardening_ninth import _one_error_line


# was: "lam* ... falls outside [1e-100, 1e+100]: the signal-to-noise ratio is beyond
# floating-point range" for lam* = 2e120, a float; the range is riskcalc.limit's.
def test_optimal_lambda_beyond_the_limits_range_is_its_value():
    for r in (1e-60, 1e60):
        lam = riskcalc.optimal_lambda("rtfa", gamma=2.0, sigma=1.0, r=r)
        assert lam == pytest.approx(2.0 / r ** 2, rel=1e-15)
    with pytest.raises(ValueError, match=r"lam must be 0 or lie in \[1e-100, 1e\+100\]"):
        riskcalc.optimal_limit("rtfa", gamma=2.0, sigma=1.0, r=1e-60)
    with pytest.raises(ValueError, match="overflows"):
        riskcalc.optimal_lambda("rtfa", gamma=2.0, r=1e-200, sigma=1e100)


# was: 2^53 + 1 steps accepted (read as the float 2^53) while the refusal of 1e20 says "<= 2^53".
@pytest.mark.parametrize("steps", [2 ** 53 + 1, [3, 2 ** 53 + 1], [3.0, 2 ** 53 + 1],
                                   np.array([2 ** 53 + 1]), 10 ** 30])
def test_steps_beyond_two_to_53_are_refused_exactly(steps):
    with pytest.raises(ValueError, match="steps must be integers >= 0 and <= 9007199254740992"):
        riskcalc.steps_limit("ftfa", gamma=2, r=1, sigma=1, steps=steps, step_size=0.1)


def test_steps_up_to_two_to_53_answer():
    res = riskcalc.steps_limit("ftfa", gamma=2, r=1, sigma=1, steps=[2, 2 ** 53], step_size=0.1)
    assert np.all(np.isfinite(res.risk))


# was: predict's --spectrum help listed identity, two-point, powerlaw, file but not scaled:C.
def test_spectrum_help_names_scaled(capsys):
    with pytest.raises(SystemExit):
        main(["predict", "--help"])
    assert "scaled:C" in capsys.readouterr().out


# was: "std.err nan" and "in 95% CI no" for a divergent FTFA's inf against inf.
def test_compare_divergent_prints_not_applicable(capsys):
    assert main(["compare", "ftfa", "--gamma", "2", "--r", "1", "--sigma", "0.5", "--steps",
                 "1000", "--step-size", "100", "--d", "20", "--reps", "3", "--seed", "0",
                 "--no-progress"]) == 0
    rows = [ln.split() for ln in capsys.readouterr().out.splitlines()
            if ln.split()[:1] in (["bias"], ["variance"], ["risk"])]
    assert len(rows) == 3 and all(row[1:] == ["overflow", "overflow", "n/a", "n/a", "n/a"]
                                  for row in rows), rows


# was: the header line printed every client's spectrum (301 of them: a 6 kB line).
def test_params_line_shortens_long_lists():
    line = params_line({"gamma": 2.0, "spectra": [f"scaled:{k}" for k in range(1, 302)]})
    assert line == ("  gamma = 2.0, spectra = ['scaled:1', 'scaled:2', 'scaled:3', ..., "
                    "'scaled:301'] (301 entries)")
    assert params_line({"gamma": [1.0, 2.0]}) == "  gamma = [1.0, 2.0]"


def test_predict_header_with_many_clients_is_one_short_line(tmp_path, capsys):
    fed = tmp_path / "c.json"
    fed.write_text(json.dumps([{"gamma": 2.0, "r": 1, "sigma": 1, "spectrum": f"scaled:{k}"}
                               for k in range(1, 13)]))
    assert main(["predict", "fedavg", "--gamma", "2", "--r", "1", "--sigma", "1",
                 "--clients-file", str(fed)]) == 0
    header = capsys.readouterr().out.splitlines()[1]
    assert "(13 entries)" in header and len(header) < 300, header


# was: "finite-clients limits are implemented for fedavg, ...; got local_ridge" with --clients,
# while --federation F --target J answered (a local baseline has no global model).
@pytest.mark.parametrize("extra, steps", [([], None), (["--steps", "3", "--step-size", "0.1"], 3)])
def test_local_ridge_with_clients_is_its_own_limit(capsys, extra, steps):
    assert main(["predict", "local_ridge", "--gamma", "2", "--sigma", "1", "--rho", "1",
                 "--lam", "1", "--clients", "10", "--json", *extra]) == 0
    out = json.loads(capsys.readouterr().out)
    kw = dict(gamma=2.0, sigma=1.0, rho=1.0, lam=1.0)
    ref = (riskcalc.limit("local_ridge", **kw) if steps is None
           else riskcalc.steps_limit("local_ridge", steps=steps, step_size=0.1, **kw))
    assert out["risk"] == pytest.approx(float(ref.risk), rel=1e-12)
    assert any("uses no global model" in n for n in out["notes"])
    line = _one_error_line(["predict", "local_ridge", "--gamma", "2", "--sigma", "1", "--rho",
                            "1", "--lam", "1", "--weights", "uniform"], capsys)
    assert "--weights applies with --clients" in line


# was: a method or a grid value given twice ran once, one row or column, silently.
@pytest.mark.parametrize("setting, message", [
    ("methods=fedavg,local,fedavg", "methods lists fedavg twice: give each method once"),
    ("R=0.5,1,0.5", "R lists 0.5 twice: give each value once")])
def test_simulate_refuses_a_setting_given_twice(tmp_path, capsys, setting, message):
    line = _one_error_line(["simulate", "paper000-fig1", "--set", setting, "--reps", "1",
                            "--out", str(tmp_path / "x.csv")], capsys)
    assert message in line and not (tmp_path / "x.csv").exists()


# was: logistic local ridge with --clients answered with no word that neither the clients nor
# --global-lam enter (the linear family says so).
def test_logistic_local_ridge_says_it_uses_no_global_model(capsys):
    risks = []
    for glam in ("0.1", "0.5"):
        assert main(["predict", "local_ridge", "--model", "logistic", "--gamma", "2", "--r", "1",
                     "--lam", "1", "--signal", "1", "--clients", "5", "--global-lam", glam,
                     "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert any("uses no global model" in n for n in out["notes"])
        risks.append(out["risk"])
    assert risks[0] == pytest.approx(risks[1], rel=1e-9)


# was: the logistic advice reported RTFA at its search's cap lam = 1000 with a risk above
# FedAvg's, RTFA's lam -> inf limit (so a "tuned" RTFA worse than its own limit).
def test_logistic_rtfa_is_no_worse_than_its_fedavg_limit():
    from riskcalc.advise.logistic import LogisticFederation, advise_logistic

    fed = LogisticFederation(gamma=[1.0, 0.5], r=[0.0, 2.0], signal=1.0, global_lam=0.1)
    adv = advise_logistic(fed, methods=["rtfa", "fedavg"])
    by = {(c.method, c.weights): c for c in adv.candidates}
    for w in ("samples", "uniform"):
        rtfa, glob = by[("rtfa", w)], by[("fedavg", w)]
        assert np.all(rtfa.risks <= glob.risks * (1 + 1e-12)), w
        lam = np.asarray(rtfa.tuning["lam"])
        assert np.all((lam < 1e3) | np.isinf(lam)), lam
        at_inf = np.isinf(lam)
        np.testing.assert_array_equal(rtfa.risks[at_inf], glob.risks[at_inf])
    assert np.isinf(by[("rtfa", "uniform")].tuning["lam"][0])       # the client at the centre
    assert np.isfinite(by[("rtfa", "uniform")].tuning["lam"][1])


# was: estimate printed r = 1.05e-08 +- 0.13 on noise-free data (r^2 = 1e-16 +- 2.6e-9): the
# delta method's se(r^2) / (2 r) where r^2 is not resolved from 0.
def test_estimate_root_has_no_delta_standard_error_near_zero():
    from dataclasses import replace

    from riskcalc.estimate import estimate

    rng = np.random.default_rng(1)
    X = rng.standard_normal((300, 4))
    client = np.repeat(np.arange(3), 100)
    y = X @ np.ones(4) + rng.standard_normal(300) + 0.5 * X[:, 0] * (client == 2)
    est = estimate(X, y, client)
    r2, se2 = np.array([1e-16, 0.5, 0.01]), np.array([2.6e-9, 0.01, 0.006])
    est = replace(est, values={**est.values, "r2": r2}, se={**est.se, "r2": se2})
    x, se = est.root("r")
    np.testing.assert_allclose(x, np.sqrt(r2), rtol=1e-15)
    assert np.isinf(se[0]) and np.isinf(se[2])                # within 2 s.e. of 0
    assert se[1] == pytest.approx(0.01 / (2 * np.sqrt(0.5)), rel=1e-15)



# was: the logistic compare predicted at the gamma asked while simulating d / round(d / gamma)
# (3.0303 for 3 at d = 100), as the linear compare did before fuzz27 F7.
def test_logistic_compare_predicts_at_the_simulated_ratio(capsys):
    assert main(["compare", "rtfa", "--model", "logistic", "--gamma", "3", "--r", "1",
                 "--signal", "1", "--lam", "0.5", "--d", "100", "--reps", "2", "--no-progress",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    ref = riskcalc.logistic_limit(gamma=100 / 33, signal=1.0, r=1.0, lam=0.5)
    assert out["predicted"]["risk"] == pytest.approx(ref.risk, rel=1e-12)
    assert any("100 / 33 = 3.0303" in n for n in out["notes"])


# was: with a federation file a local baseline ignored --steps silently (printed the converged
# limit, 1.5, for 3 steps' 0.787).
def test_local_with_a_federation_file_takes_its_steps(tmp_path, capsys):
    fed = tmp_path / "fed.json"
    fed.write_text(json.dumps({"fedrisk_federation": 1, "clients": [
        {"gamma": 2.0, "rho": 1.0, "sigma": 1.0}, {"gamma": 0.5, "rho": 1.0, "sigma": 1.0}]}))
    assert main(["predict", "local", "--federation", str(fed), "--target", "0", "--steps", "3",
                 "--step-size", "0.1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    ref = riskcalc.steps_limit("local", gamma=2.0, rho=1.0, sigma=1.0, steps=3, step_size=0.1)
    assert out["risk"] == pytest.approx(float(ref.risk), rel=1e-12)
