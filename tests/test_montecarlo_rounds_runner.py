"""montecarlo.linear.rounds.simulate_rounds, the runner: seeds, workers and cache, bad input,
sampled draws averaging to the conditional expectation and several draws to the single-draw
measurements, a diverging curve, the memory refusal of the exact Algorithm 1."""

import numpy as np
import pytest

from montecarlo.linear.rounds import sample_draw, simulate_rounds
from montecarlo.linear.rounds_columns import draw_columns
from montecarlo.linear.rounds_propagate import Propagation, curve
from tests.test_montecarlo_rounds import INF, KEYS, federation

FED = dict(gamma=[0.5, 1.0, 2.0], r=[0.5, 1.0, 1.5], sigma=[0.5, 1.0, 0.3], signal=1.0,
           rounds=[0, 3, 10, INF], local_steps=4, step_size=0.05, d=30, reps=3)


def test_seeds_workers_and_cache(tmp_path):
    a = simulate_rounds("fedavg", **FED, seed=5, cache=tmp_path / "c.jsonl")
    again = simulate_rounds("fedavg", **FED, seed=5, cache=tmp_path / "c.jsonl")
    assert len((tmp_path / "c.jsonl").read_text().splitlines()) == 1 + FED["reps"]
    for k in KEYS:
        np.testing.assert_array_equal(a.samples[k], again.samples[k])
    b = simulate_rounds("fedavg", **FED, seed=5, jobs=2)
    c = simulate_rounds("fedavg", **FED, seed=6)
    for k in KEYS:
        np.testing.assert_array_equal(a.samples[k], b.samples[k])
    assert not np.allclose(a.risk, c.risk)
    assert a.risk.shape == a.risk_se.shape == (3, 4) and a.measure == "conditional"
    p = simulate_rounds("pfedme", **{**FED, "rounds": [0, 3]}, lam=1.0, seed=5,
                        measure="empirical")
    q = simulate_rounds("fedprox", **{**FED, "rounds": [0, 3]}, lam=1.0, seed=5,
                        measure="empirical")
    np.testing.assert_array_equal(p.samples["risk"], q.samples["risk"])


@pytest.mark.parametrize("change,match", [
    (dict(local_steps=0), "local_steps"), (dict(local_steps=2.5), "local_steps"),
    (dict(rounds=[3, -1]), "rounds"), (dict(rounds=1.5), "rounds"),
    (dict(step_size=0.0), "step_size"), (dict(step_size=-1.0), "step_size"),
    (dict(global_step=0.0), "global_step"), (dict(reps=1), "reps"),
    (dict(r=[1.0, 2.0]), "per-client lists must have one length"), (dict(method="scaffold"), "method"),
    (dict(lam=1.0), "lam applies"), (dict(method="fedprox"), "lam"),
    (dict(step_size=5.0, local_steps=2), "does not converge"),
    (dict(measure="exact"), "measure"), (dict(weights=[1.0, -1.0, 1.0]), "weights"),
    (dict(draws=0), "draws"),
])
def test_bad_input(change, match):
    kw = {"method": "fedavg", **FED, "seed": 0, **change}
    with pytest.raises(ValueError, match=match):
        simulate_rounds(kw.pop("method"), **kw)


@pytest.mark.parametrize("method,extra", [("fedavg", {}), ("fedprox", {"lam": 1.0})])
def test_sampled_draws_average_to_the_conditional_expectation(method, extra):
    # paired on the same designs: the draws (theta_0, u_j, noise) have the stated laws
    kw = {**FED, "reps": 60, "rounds": [0, 3, 10]}
    a = simulate_rounds(method, **kw, **extra, seed=2, measure="conditional")
    b = simulate_rounds(method, **kw, **extra, seed=2, measure="empirical")
    assert (a.measure, b.measure) == ("conditional", "empirical")
    for k in ("risk", "bias", "variance", "global_risk"):
        diff = b.samples[k] - a.samples[k]
        se = diff.std(0, ddof=1) / np.sqrt(diff.shape[0])
        assert np.all(np.abs(diff.mean(0)) <= 4 * se), k


def test_several_draws_average_the_single_draw_measurements():
    kw = {**FED, "rounds": [0, 3, 10], "lam": 0.5, "measure": "empirical", "reps": 2}
    many = simulate_rounds("fedprox", **kw, seed=4, draws=3)
    X, s, basis, n = federation(FED["gamma"], FED["d"], seed=4)
    p = n / n.sum()
    r, sigma = np.array(FED["r"]), np.array(FED["sigma"])
    singles = []
    for k in range(3):
        beta, targets = draw_columns(basis, X, [sample_draw(X, s, r, sigma, 1.0, 4, 0, k)])
        singles.append(curve(Propagation("fedprox", basis, beta, targets, s, p, 4, 0.05, 2.0,
                                          0.5, False), [0, 3, 10]))
    for key in KEYS:
        np.testing.assert_allclose(many.samples[key][0], np.mean([o[key] for o in singles], 0),
                                   rtol=1e-10, err_msg=key)
    assert not np.allclose(singles[0]["risk"], singles[1]["risk"])


def test_a_diverging_curve_is_a_result_and_its_fixed_point_an_error():
    # eta = 0.5 is beyond 2 / (lam + top of the gamma = 2 client's sample spectrum ~ 5.8)
    kw = {**FED, "rounds": [0, 5, 500], "step_size": 0.5, "lam": 1.0, "local_steps": 2}
    res = simulate_rounds("fedprox", **kw, seed=1)
    assert not res.converges.any() and (res.contraction > 1).all()
    assert np.isinf(res.risk[:, 2]).all() and np.isfinite(res.risk[:, :2]).all()
    assert (res.risk[:, 1] > res.risk[:, 0]).all()
    with pytest.raises(ValueError, match="does not converge"):
        simulate_rounds("fedprox", **{**kw, "rounds": [INF]}, seed=1)


def test_exact_algorithm1_refuses_a_size_beyond_memory(monkeypatch):
    import montecarlo.runner.budget
    monkeypatch.setattr(montecarlo.runner.budget, "physical_memory", lambda: 2.0 ** 16)
    with pytest.raises(ValueError, match="measure='conditional' for fedprox at d = 30"):
        simulate_rounds("fedprox", **FED, lam=1.0, measure="conditional")
