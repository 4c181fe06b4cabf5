"""Predicted (riskcalc) vs simulated (montecarlo): agreement, convergence in d, the federated
global model, seeds and sweeps (paper 003, 003_4b976ddf5225c17e.txt, Thms 1-4 vs eq. 3)."""

import json

import numpy as np
import pytest

import riskcalc
from montecarlo.compare import compare, summarize
from montecarlo.linear.instances import Setting, sample_instance
from montecarlo.linear.measure import measure
from montecarlo.sweep import sweep, write_rows

PARAMS = {"fedavg": dict(r=1.0), "local": dict(rho=1.2), "local_ridge": dict(rho=1.2, lam=0.5),
          "ftfa": dict(r=1.0), "rtfa": dict(r=1.0, lam=0.5), "maml_fl": dict(r=1.0, alpha=0.1),
          "pfedme": dict(r=1.0, lam=0.5)}
SPECTRA = {"identity": None, "two-point": riskcalc.Spectrum([0.5, 2.0], weights=[0.5, 0.5])}


@pytest.mark.parametrize("spectrum", list(SPECTRA))
@pytest.mark.parametrize("method", sorted(PARAMS))
def test_predicted_matches_simulated(method, spectrum):
    """Within the 95% interval plus the finite-size bias: exact finite-n means for the min-norm
    interpolants with Gaussian isotropic X, an O(1/(d - n)) allowance otherwise."""
    d, reps = 300, 8
    spec = riskcalc.ClientSpec(method, gamma=2.0, sigma=0.5, spectrum=SPECTRA[spectrum],
                               **PARAMS[method])
    res = compare(spec, Setting(d=d), reps=reps, seed=1)
    n = res.n
    sig = res.summary
    target = {q: getattr(res.limit, q) for q in ("bias", "variance", "risk")}
    exact = spectrum == "identity" and method in ("ftfa", "maml_fl", "local")
    if exact:
        signal2 = float(spec.signal) ** 2
        target = {"bias": signal2 * (1 - n / d), "variance": 0.25 * n / (d - n - 1)}
        target["risk"] = target["bias"] + target["variance"]
    for q, want in target.items():
        allowance = 0.0 if exact else 2.0 / (d - n) * abs(want)
        assert abs(sig[q]["mean"] - want) <= (sig[q]["high"] - sig[q]["mean"]) + allowance + 1e-12


@pytest.mark.parametrize("features", ["rademacher", "student-t"])
def test_limits_do_not_depend_on_gaussianity(features):
    spec = riskcalc.ClientSpec("rtfa", gamma=2.0, sigma=0.5, r=1.0, lam=0.5,
                               spectrum=SPECTRA["two-point"])
    for kind in ("conditional", "empirical"):
        res = compare(spec, Setting(d=300, features=features, noise=features, eigvecs="random"),
                      reps=6, seed=2, measure=kind)
        assert abs(res.summary["risk"]["rel_diff"]) < (0.01 if kind == "conditional" else 0.08)


def test_relative_error_shrinks_with_d():
    """Convergence: the simulation's distance to the limit falls as d = 150, 300, 600 (d /
    gamma an integer: the simulated ratio d / n is gamma itself; at d = 200, 400, 800 it is
    1.5038, 1.4981, 1.5009, and the prediction at each of those no longer fell with d from 400
    to 800: 0.67% and 0.74%, the rounding's share gone)."""
    spec = riskcalc.ClientSpec("ftfa", gamma=1.5, sigma=0.5, r=1.0,
                               spectrum=riskcalc.Spectrum.parse("powerlaw:1,400"))
    errs = [abs(compare(spec, Setting(d=d), reps=6, seed=0).summary["risk"]["rel_diff"])
            for d in (150, 300, 600)]
    assert errs[0] > errs[1] > errs[2]


def test_maml_fl_federated_approaches_ftfa_as_m_grows():
    """Paper 003, Thm 3: with the federated global model over M clients, MAML-FL's risk gets
    closer to FTFA's (same target design: common random numbers) as M grows."""
    d = 100
    maml = riskcalc.ClientSpec("maml_fl", gamma=2.0, sigma=0.5, r=1.0, alpha=0.1)
    ftfa = riskcalc.ClientSpec("ftfa", gamma=2.0, sigma=0.5, r=1.0)
    # One replicate: the gap falls about 4x per step (0.030, 0.0073, 0.0015 measured; the same
    # to 3 digits at d = 50, 100 and 200 and over seeds 0-5: ratios 4.1 and 5.0 against the 2
    # asked). d = 100 costs a quarter of d = 200's CPU (0.7 s against 2.5 s).
    base = measure(sample_instance(ftfa, Setting(d=d), 0, 0), "ftfa", [0.0])["risk"][0]
    gaps = [measure(sample_instance(maml, Setting(d=d, clients=m, global_model="federated"), 0,
                                    0), "maml_fl", [0.1])["risk"][0] - base
            for m in (50, 200, 1000)]
    assert gaps[0] > 2 * gaps[1] > 4 * gaps[2] > 0


def test_steps_are_compared_with_the_finite_step_limit():
    spec = riskcalc.ClientSpec("rtfa", gamma=2.0, r=1.0, sigma=0.5, lam=0.5)
    c = compare(spec, Setting(d=400), reps=6, steps=2, step_size=0.2)
    want = riskcalc.steps_limit("rtfa", gamma=2.0, r=1.0, sigma=0.5, lam=0.5, steps=2,
                                step_size=0.2)
    assert c.limit.risk == want.risk and c.limit.route == "finite-steps"
    # close to the finite-step limit (0.686), far from the converged one (0.640)
    assert abs(c.summary["risk"]["mean"] - want.risk) < 0.01 < 0.04 < want.risk - 0.640
    two = riskcalc.ClientSpec("ftfa", gamma=2.0, r=1.0, sigma=0.5,
                              spectrum=riskcalc.Spectrum.two_point(1.0, 4.0, 0.5))
    c2 = compare(two, Setting(d=100), reps=2, steps=5, step_size=0.05)
    assert c2.limit.risk == riskcalc.spec_steps_limit(two, 5, 0.05).risk
    aligned = riskcalc.ClientSpec("ftfa", gamma=2.0, r=1.0, sigma=0.5, spectrum=riskcalc.Spectrum(
        [1.0, 4.0], signal_weights=[0.9, 0.1]))
    c3 = compare(aligned, Setting(d=100), reps=2, steps=5, step_size=0.05)
    assert c3.limit.risk == riskcalc.spec_limit(aligned).risk
    assert any("converged limit" in n for n in c3.limit.notes)


def test_seed_reproducible_and_independent_of_workers():
    spec = riskcalc.ClientSpec("rtfa", gamma=2.0, sigma=0.5, r=1.0, lam=0.5)
    one = compare(spec, Setting(d=60), reps=4, seed=3).as_dict()
    two = compare(spec, Setting(d=60), reps=4, seed=3, n_jobs=2).as_dict()
    other = compare(spec, Setting(d=60), reps=4, seed=4).as_dict()
    assert one["simulated"] == two["simulated"]
    assert one["simulated"] != other["simulated"]


def test_sweep_grid_common_random_numbers_and_output(tmp_path):
    setting = Setting(d=80)
    rows = sweep("rtfa", gamma=[1.5, 2.0], r=1.0, sigma=0.5, lam=[0.1, 1.0], setting=setting,
                 reps=3, seed=5, progress=False)
    assert [(r["gamma"], r["lam"]) for r in rows] == [(1.5, 0.1), (1.5, 1.0), (2.0, 0.1),
                                                     (2.0, 1.0)]
    single = compare(riskcalc.ClientSpec("rtfa", gamma=2.0, sigma=0.5, r=1.0, lam=1.0), setting,
                     reps=3, seed=5).as_dict()
    assert rows[3]["simulated_risk"] == pytest.approx(single["simulated"]["risk"], rel=1e-12)
    assert rows[3]["predicted_risk"] == pytest.approx(single["risk"])
    assert write_rows(rows, tmp_path / "out.csv") == "csv"
    lines = (tmp_path / "out.csv").read_text().splitlines()
    assert len(lines) == 5 and lines[0].startswith("method,gamma,r,sigma,lam")
    assert write_rows(rows, tmp_path / "out.jsonl") == "jsonl"
    assert json.loads((tmp_path / "out.jsonl").read_text().splitlines()[0])["lam"] == 0.1


def test_sweep_resumes_from_cache(tmp_path):
    kw = dict(gamma=2.0, r=1.0, sigma=[0.5, 1.0], setting=Setting(d=40), reps=2, seed=0,
              progress=False, cache=tmp_path / "cache.jsonl")
    first = sweep("ftfa", **kw)
    assert len((tmp_path / "cache.jsonl").read_text().splitlines()) == 1 + 4   # header + 4 tasks
    assert sweep("ftfa", **kw) == first


def test_summarize_interval():
    s = summarize(np.array([[1.0], [2.0], [3.0]]), [2.0])
    assert s["mean"][0] == 2.0 and s["inside"][0]
    assert s["se"][0] == pytest.approx(1 / np.sqrt(3))
    assert not summarize(np.array([[1.0], [1.1], [0.9]]), [5.0])["inside"][0]


@pytest.mark.parametrize("kwargs, message", [
    (dict(reps=1), "reps"),
    (dict(steps=3), "step_size"),
    (dict(measure="exact"), "measure"),
])
def test_bad_input(kwargs, message):
    spec = riskcalc.ClientSpec("rtfa", gamma=2.0, sigma=0.5, r=1.0, lam=0.5)
    with pytest.raises(ValueError, match=message):
        compare(spec, Setting(d=20), **kwargs)


def test_bad_settings():
    spec = riskcalc.ClientSpec("rtfa", gamma=50.0, sigma=0.5, r=1.0, lam=0.5)
    with pytest.raises(ValueError, match="too small for gamma"):
        compare(spec, Setting(d=20), reps=2)
    spec = riskcalc.ClientSpec("rtfa", gamma=2.0, sigma=0.5, r=1.0, lam=0.5)
    with pytest.raises(ValueError, match="N = sum n_j >= d"):
        compare(spec, Setting(d=20, clients=1, global_model="federated"), reps=2)
    with pytest.raises(ValueError, match="global model"):
        Setting(d=20, global_model="central")
    with pytest.raises(ValueError, match="df"):
        Setting(d=20, df=3.0)
    with pytest.raises(ValueError, match="one value of gamma"):
        compare(riskcalc.ClientSpec("ftfa", gamma=[2.0, 3.0], sigma=0.5, r=1.0), Setting(d=20))


def test_t_half_width_is_the_student_t_quantile():
    """``t_half_width`` reads the quantile from ``scipy.special.stdtrit`` (not importing
    scipy.stats): against scipy.stats' t.ppf, and for 2 replicates against the closed form of
    one degree of freedom, t = tan(pi (q - 1/2))."""
    from scipy import stats

    from montecarlo.runner.stats import t_half_width

    for reps in (2, 3, 10, 41, 1000):
        for level in (0.8, 0.95, 0.99):
            assert t_half_width(2.0, reps, level) == 2.0 * stats.t.ppf(0.5 + level / 2, reps - 1)
    assert abs(t_half_width(1.0, 2) - np.tan(np.pi * 0.475)) <= 1e-12 * np.tan(np.pi * 0.475)
