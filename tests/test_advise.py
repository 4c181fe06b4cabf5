"""riskcalc.advise and ``riskcalc advise``: explicit client weights in the finite-M limits,
per-client RTFA tuning against a fine grid, optimal weights against brute force, the ranking
and its JSON, simulation of the recommended pipeline, and bad input."""

import json

import numpy as np
import pytest

import riskcalc
from riskcalc.advise import Federation, advise, from_clients
from riskcalc.advise import tune
from riskcalc.cli import main

TWO = riskcalc.Spectrum([0.5, 2.0], weights=[0.6, 0.4])
FED = dict(gamma=[0.5, 1.5, 2.0], r=[0.5, 1.0, 1.5], sigma=[1.0, 0.5, 0.5])


def _lim(method, p, spectrum=None, fed=FED, **kw):
    return riskcalc.clients_limit(method, weights=p, spectrum=spectrum, **fed, **kw)


# --- explicit weights p_j in clients_limit ----------------------------------------------------

@pytest.mark.parametrize("method,kw", [("fedavg", {}), ("ftfa", {}), ("rtfa", {"lam": 0.3}),
                                       ("pfedme", {"lam": 0.5})])
def test_explicit_weights_equal_named(method, kw):
    """The weight vectors n_j / N and 1/M (given unnormalized) reproduce the named weights."""
    fed = dict(FED, gamma=[2.0, 1.5, 4.0])
    inv = 1.0 / np.array(fed["gamma"])
    for name, p in (("samples", 7.0 * inv), ("uniform", np.full(3, 2.0))):
        np.testing.assert_allclose(_lim(method, p, fed=fed, **kw).risk,
                                   _lim(method, name, fed=fed, **kw).risk, rtol=1e-13)


@pytest.mark.parametrize("method,lam", [("fedavg", 0.0), ("ftfa", 0.0), ("rtfa", 0.4)])
def test_explicit_weights_independent_routes(method, lam):
    """At arbitrary weights the closed forms (Marchenko-Pastur inverse) agree with the
    numerical subordination of finite_clients.own, and with the general-spectrum route at
    Sigma = 2 I (risk = 2 x, lam doubled)."""
    from riskcalc.linear.finite_clients.identity import group_limits
    from riskcalc.linear.finite_clients.own import own_group_limits
    from riskcalc.linear.finite_clients.sigma import sigma_group_limits
    gam, r, sig = np.array([2.0, 1.5, 4.0]), np.array([1.0, 0.5, 1.5]), np.array([0.5, 1, .3])
    count, p = np.ones(3), np.array([0.2, 0.5, 0.3])
    b, v = group_limits(method, gam, r, sig, count, np.full(3, lam), p)
    b2, v2 = own_group_limits(method, gam, r, sig, count, lam, p)
    np.testing.assert_allclose(b2, b, rtol=1e-9)
    np.testing.assert_allclose(v2, v, rtol=1e-9)
    b3, v3 = sigma_group_limits(method, gam, r, sig, count, np.full(3, 2 * lam), p,
                                riskcalc.Spectrum([2.0]))
    np.testing.assert_allclose(b3, 2 * b, rtol=1e-10)
    np.testing.assert_allclose(v3, v, rtol=1e-10)


def test_explicit_weights_bad_input():
    for bad, match in (([0.5, 0.5], "one positive number per client"),
                       ([0.5, 0.5, 0.0], "weights must lie in"),
                       ([0.5, -1, 1], "weights must lie in"), ([1, np.nan, 1], "finite"),
                       ("optimal", "weights must be one of")):
        with pytest.raises(ValueError, match=match):
            _lim("fedavg", bad)


# --- tuning and weights -----------------------------------------------------------------------

@pytest.mark.parametrize("spectrum,weights,points", [(None, [0.1, 0.2, 0.3, 0.4], 801),
                                                     (TWO, "samples", 161)])
def test_rtfa_lams_beat_fine_grid(spectrum, weights, points):
    """Each client's tuned lam_j gives a finite-M risk no larger than the best of a fine lam
    grid of clients_limit (to 1e-6): client j's risk depends on lam_j only."""
    fed = Federation(gamma=[0.4, 1.2, 3.0, 2.0], r=[0.3, 1.0, 1.5, 0.8],
                     sigma=[1.0, 0.5, 0.2, 0.7], spectrum=spectrum)
    kw = dict(gamma=fed.gamma, r=fed.r, sigma=fed.sigma)
    lam, risk = tune.rtfa_lams(fed, weights)
    grid = np.logspace(-4, 4, points)
    best = np.min([_lim("rtfa", weights, spectrum, fed=kw, lam=np.full(4, g)).risk
                   for g in grid], axis=0)
    assert np.all(risk <= best + 1e-6), (risk, best)
    again = _lim("rtfa", weights, spectrum, fed=kw, lam=lam).risk
    np.testing.assert_allclose(again, risk, rtol=1e-12)


def test_rtfa_lams_edge_clients():
    """r_j = 0 (oracle lam* infinite) and sigma_j = 0 (oracle lam* = 0; at finite M the
    centre's noise still calls for a small penalty) under a spectrum: the tuned risks are
    finite and no worse than FedAvg's (lam -> infinity) and FTFA's (lam = 0)."""
    fed = Federation(gamma=[0.5, 2.0, 1.5], r=[0.0, 1.0, 1.2], sigma=[0.5, 0.0, 0.4],
                     spectrum=TWO)
    lam, risk = tune.rtfa_lams(fed, "samples")
    kw = dict(gamma=fed.gamma, r=fed.r, sigma=fed.sigma)
    for method in ("fedavg", "ftfa"):
        assert np.all(risk <= _lim(method, "samples", TWO, fed=kw).risk * (1 + 1e-9) + 1e-12)
    assert np.all(np.isfinite(risk)) and np.all(np.isfinite(lam))


def _simplex(m, step):
    """Points of the open simplex with coordinates multiples of ``step``."""
    k = int(round(1 / step))
    pts = [c for c in np.ndindex(*(k,) * (m - 1)) if 0 < k - sum(c) and min(c) > 0]
    return np.array([[*c, k - sum(c)] for c in pts]) / k


@pytest.mark.parametrize("method,gamma,spectrum,step", [
    ("fedavg", [0.8, 2.0], None, 2e-3), ("ftfa", [0.6, 3.0], None, 2e-3),
    ("fedavg", [0.8, 2.0], TWO, 1e-2), ("fedavg", [0.5, 2.0, 3.0], None, 1 / 40),
    ("ftfa", [0.7, 2.0, 4.0], None, 1 / 40)])
def test_optimal_weights_brute_force(method, gamma, spectrum, step):
    """The optimal weights' mean risk is no larger than the best point of a simplex grid
    (M = 2, 3), nor than the sample and uniform weights'."""
    m = len(gamma)
    fed = Federation(gamma=gamma, r=np.linspace(0.5, 1.5, m), sigma=np.linspace(1.0, 0.3, m),
                     spectrum=spectrum)
    adv = advise(fed, methods=[method])
    means = {c.weights: c.mean_risk for c in adv.candidates}
    kw = dict(gamma=fed.gamma, r=fed.r, sigma=fed.sigma)
    brute = min(_lim(method, p, spectrum, fed=kw).mean_risk for p in _simplex(m, step))
    assert means["optimal"] <= brute + 1e-9 * brute
    assert means["optimal"] <= min(means["samples"], means["uniform"])


def test_optimal_weights_rtfa_brute_force():
    """RTFA, M = 2: the optimal weights with tuned lam_j beat a (p, lam) grid search."""
    fed = Federation(gamma=[0.5, 2.5], r=[0.4, 1.2], sigma=[1.0, 0.4])
    adv = advise(fed, methods=["rtfa"])
    means = {c.weights: c.mean_risk for c in adv.candidates}
    kw = dict(gamma=fed.gamma, r=fed.r, sigma=fed.sigma)
    lams = np.logspace(-3, 2, 21)
    brute = min(np.mean(np.min([_lim("rtfa", [q, 1 - q], fed=kw, lam=[g, g]).risk
                                for g in lams], axis=0)) for q in np.linspace(0.05, 0.95, 13))
    assert means["optimal"] <= brute + 1e-12
    assert means["optimal"] <= min(means["samples"], means["uniform"])


def test_own_methods_tuned_and_weighted():
    """MAML-FL and pFedMe: the tuned shared parameter beats a grid of it at sample weights,
    and the optimal weights are never worse than sample or uniform weights."""
    fed = Federation(gamma=[1.2, 1.5], r=[0.5, 1.2], sigma=[0.8, 0.4])
    adv = advise(fed, methods=["maml_fl", "pfedme"])
    kw = dict(gamma=fed.gamma, r=fed.r, sigma=fed.sigma)
    for method, name, grid in (("maml_fl", "alpha", np.linspace(0.005, 0.3, 8)),
                               ("pfedme", "lam", np.logspace(-2, 1.5, 8))):
        means = {c.weights: c.mean_risk for c in adv.candidates if c.method == method}
        assert set(means) == {"samples", "uniform", "optimal"}
        assert means["optimal"] <= min(means["samples"], means["uniform"])
        grid_best = min(_lim(method, "samples", fed=kw, **{name: g}).mean_risk for g in grid)
        assert means["samples"] <= grid_best + 1e-6


# --- ranking, JSON, simulation ----------------------------------------------------------------

def test_ranking_and_json_with_an_infinite_risk():
    """A client at gamma = 1 makes FTFA's risk infinite: it ranks last, its JSON risks are
    null (standard JSON), and the recommendation is the smallest mean risk."""
    fed = Federation(gamma=[1.0, 2.0, 0.5], r=[1.0, 1.0, 0.5], sigma=[0.5, 0.5, 1.0])
    adv = advise(fed, methods=["fedavg", "ftfa"])
    means = [c.mean_risk for c in adv.candidates]
    assert means == sorted(means) and adv.recommended.mean_risk == min(means)
    out = json.loads(json.dumps(adv.as_dict(), allow_nan=False))
    assert {"candidates", "recommended"} <= set(out)
    for c in out["candidates"]:
        assert {"method", "tuning", "weights", "risks", "mean_risk", "worst_risk"} <= set(c)
    ftfa = [c for c in out["candidates"] if c["method"] == "ftfa"]
    assert ftfa and all(c["risks"][0] is None and c["mean_risk"] is None for c in ftfa)
    assert any("ftfa with optimal weights" in s for s in out["skipped"])
    best = np.argmin([c.risks for c in adv.candidates], axis=0)
    assert [r["candidate"] for r in out["recommended"]["per_client"]] == best.tolist()


def test_spectrum_ranks_every_pipeline_on_its_finite_m_limit():
    """With a spectrum, MAML-FL and pFedMe (finite-M limits for any shared spectrum) and
    early-stopped fine-tuning are ranked candidates, each at its own finite-M limit; MAML-FL's
    is above its oracle limit (FTFA's whatever alpha, paper 003 Thm 3), which is optimistic."""
    fed = Federation(gamma=[0.5, 2.0], r=[0.5, 1.0], sigma=[0.8, 0.4], spectrum=TWO)
    adv = advise(fed, methods=["fedavg", "maml_fl", "pfedme", "ftfa_steps"])
    assert {c.method for c in adv.candidates} == {"fedavg", "maml_fl", "pfedme", "ftfa_steps"}
    oracle = riskcalc.limit("ftfa", gamma=fed.gamma, r=fed.r, sigma=fed.sigma,
                            spectrum=TWO).risk
    for c in adv.candidates:
        if c.method in ("maml_fl", "pfedme"):
            name = "alpha" if c.method == "maml_fl" else "lam"
            ref = riskcalc.clients_limit(c.method, gamma=fed.gamma, r=fed.r, sigma=fed.sigma,
                                         weights=c.p, spectrum=TWO,
                                         **{name: c.tuning[name]})
            np.testing.assert_allclose(c.risks, ref.risk, rtol=1e-10)
        if c.method == "maml_fl":
            assert c.limit == "finite-M" and c.mean_risk > np.mean(oracle)
    steps = {c.weights: c for c in adv.candidates if c.method == "ftfa_steps"}
    assert set(steps) == {"samples", "uniform"}
    for name, c in steps.items():
        # Early stopping can only help: k = 0 is FedAvg itself.
        fedavg = riskcalc.clients_limit("fedavg", gamma=fed.gamma, r=fed.r, sigma=fed.sigma,
                                        weights=name, spectrum=TWO)
        assert np.all(c.risks <= fedavg.risk * (1 + 1e-9))


def test_optimal_steps_match_the_steps_limit_scan():
    """Homogeneous federation: each client's best k and risk equal a scan of the public
    riskcalc.steps_limit(..., clients=M) over k at the same step size."""
    fed = Federation(gamma=[2.0] * 3, r=[1.0] * 3, sigma=[0.5] * 3, spectrum=TWO)
    k, eta, risk, at_max = tune.optimal_steps(fed, "samples", max_steps=60)
    ks = np.arange(61)
    curve = riskcalc.steps_limit("ftfa", gamma=2.0, r=1.0, sigma=0.5, spectrum=TWO, steps=ks,
                                 step_size=eta, clients=3, weights="samples").risk
    assert np.all(k == np.argmin(curve)) and not at_max.any()
    np.testing.assert_allclose(risk, curve.min(), rtol=1e-9)
    assert 0 < k[0] < 60


def test_recommended_is_lowest_in_simulation():
    """d = 200, M = 3: every candidate's simulated mean risk matches its prediction, and the
    recommended pipeline's simulated risk is the lowest within error (paired over common
    random numbers; slack 3 standard errors + 2% for finite-d corrections of order 1/d)."""
    from montecarlo.linear.federation import simulate
    rho = np.sqrt(1.0 + np.array(FED["r"]) ** 2)      # ||theta_0|| = 1
    fed = Federation(**FED, rho=rho)
    adv = advise(fed, methods=["fedavg", "ftfa", "rtfa", "local_ridge"])
    reps = 16
    sim = simulate(fed, adv.candidates, d=200, reps=reps, seed=3).mean(axis=2)  # (reps, K)
    mean, se = sim.mean(0), sim.std(0, ddof=1) / np.sqrt(reps)
    for c, mu, s in zip(adv.candidates, mean, se):
        assert abs(mu - c.mean_risk) <= 4 * s + 0.03 * c.mean_risk, (c.method, c.weights, mu)
    diff = sim[:, 0] - sim[:, int(np.argmin(mean))]
    assert diff.mean() <= 3 * diff.std(ddof=1) / np.sqrt(reps) + 0.02 * mean.min()


# --- bad input --------------------------------------------------------------------------------

def test_federation_bad_input():
    with pytest.raises(ValueError, match="at least two clients"):
        Federation(gamma=[0.5], r=[1.0], sigma=[1.0])
    with pytest.raises(ValueError, match="FedAvg, FTFA, RTFA, MAML-FL and pFedMe all need"):
        Federation(gamma=[2.0, 4.0], r=[1.0, 1.0], sigma=[1.0, 1.0])
    with pytest.raises(ValueError, match="covariate shift"):
        Federation(gamma=[0.5, 0.5], r=[1, 1], sigma=[1, 1], spectrum=[TWO, None])
    with pytest.raises(ValueError, match="r lists 1 clients"):
        Federation(gamma=[0.5, 0.5], r=[1], sigma=[1, 1])
    with pytest.raises(ValueError, match="give d"):
        from_clients([{"n": 10, "r": 1, "sigma": 1}, {"gamma": 1, "r": 1, "sigma": 1}])
    with pytest.raises(ValueError, match="client 1 must have"):
        from_clients([{"gamma": 1, "r": 1, "sigma": 1}, {"gamma": 1, "r": 1}])
    adv = advise(Federation(gamma=[0.5, 0.5], r=[1, 1], sigma=[1, 1], rho=[0.0, 1.0]),
                 methods=["fedavg", "local_ridge"])
    assert "rho_j = 0 for client(s) 0" in adv.skipped[0]
    with pytest.raises(ValueError, match="methods must be among"):
        advise(Federation(gamma=[0.5, 0.5], r=[1, 1], sigma=[1, 1]), methods=["sgd"])
    fed = from_clients([{"n": 100, "r": 1, "sigma": 1, "spectrum": "two-point:0.5,2,0.6"},
                        {"gamma": 1, "r": 1, "sigma": 1, "spectrum": "two-point:0.5,2,0.6"}],
                       d=200)
    assert fed.gamma.tolist() == [2.0, 1.0] and fed.spectrum is not None


def _cli(tmp_path, capsys, clients, *extra):
    path = tmp_path / "fed.json"
    path.write_text(json.dumps(clients))
    code = main(["advise", "--clients-file", str(path), *extra])
    return code, capsys.readouterr()


def test_cli(tmp_path, capsys):
    good = [{"gamma": 0.5, "r": 0.5, "sigma": 1.0}, {"n": 100, "r": 1.0, "sigma": 0.5}]
    code, out = _cli(tmp_path, capsys, good, "--d", "200", "--methods", "fedavg,rtfa",
                     "--json")
    assert code == 0
    res = json.loads(out.out)
    assert res["recommended"]["mean_risk"] == min(c["mean_risk"] for c in res["candidates"])
    assert res["federation"]["gamma"] == [0.5, 2.0]
    code, out = _cli(tmp_path, capsys, good, "--d", "200", "--methods", "fedavg")
    assert code == 0 and "recommended for the federation: fedavg" in out.out
    for clients, extra, match in (
            (good[:1], (), "at least two clients"),
            ([{"gamma": 2, "r": 1, "sigma": 1}] * 2, (), "need a global model"),
            (good, (), "give d"), ({"gamma": 1}, (), "non-empty JSON list"),
            (good, ("--d", "200", "--methods", "sgd"), "methods must be among")):
        code, out = _cli(tmp_path, capsys, clients, *extra)
        assert code == 2 and out.err.startswith("error: ") and match in out.err, out.err
        assert out.err.count("\n") == 1
