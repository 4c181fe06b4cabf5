"""Covariate shift at finite M (riskcalc.linear.finite_clients.shift, joint_spectrum, the ordered
expansions of riskcalc.spectrum, montecarlo's per-client covariances and the CLI's clients-file
"spectrum") against independent routes: the shared-spectrum limits of finite_clients.sigma,
the Sigma = I closed forms of finite_clients.identity (scaled identities are a reweighting),
the oracle limit (M -> infinity), least squares (M = 1), and simulation."""

import json

import numpy as np
import pytest

import riskcalc
from montecarlo.compare import federated_limit
from montecarlo.linear.instances import Setting, sample_instance
from montecarlo.linear.measure import measure
from montecarlo.runner.stats import mean_se
from riskcalc.linear.finite_clients.identity import group_limits
from riskcalc.linear.finite_clients.shift.limits import shift_group_limits
from riskcalc.linear.finite_clients.sigma import sigma_group_limits
from riskcalc.linear.engine.joint_spectrum import joint_spectrum
from riskcalc.linear.engine.resolvent_chain import chain_traces, chain_vectors
from riskcalc.spectrum import ordered_eigenvalues, ordered_steps
from tests.helpers import run_cli

CASES = [("fedavg", 0.0), ("ftfa", 0.0), ("rtfa", 0.5)]
GAM = np.array([2.0, 0.5, 1.5])
R, SIG = np.array([1.0, 0.7, 1.3]), np.array([0.5, 0.3, 0.8])
CNT, LAM = np.array([1.0, 2.0, 3.0]), np.array([0.5, 0.3, 0.5])

# --- the ordered expansion and the joint measure ------------------------------------------------


def test_ordered_expansion_convention():
    """two-point:A,B,W puts A on the first W d coordinates; powerlaw:P is j^-P (mean 1) in
    order; scaled:C is C I; a file keeps its order."""
    np.testing.assert_array_equal(ordered_eigenvalues("two-point:1,4,0.25", 8), [1] * 2 + [4] * 6)
    pl = ordered_eigenvalues("powerlaw:1", 4)
    np.testing.assert_allclose(pl, np.arange(1, 5.0) ** -1 / np.mean(np.arange(1, 5.0) ** -1))
    np.testing.assert_array_equal(ordered_eigenvalues("scaled:2.5", 3), [2.5] * 3)
    assert riskcalc.Spectrum.parse("scaled:2.5").mean == 2.5


def test_ordered_file(tmp_path):
    path = tmp_path / "s.txt"
    path.write_text("3\n1\n2\n")
    np.testing.assert_array_equal(ordered_eigenvalues(f"file:{path}", 3), [3, 1, 2])


def test_joint_measure():
    """Anti-aligned two-point spectra: two joint atoms (1, 4) and (4, 1) of weight 1/2; edges
    0.3 and 0.5: three atoms of weights 0.3, 0.2, 0.5; power law against identity: the power
    law's grid."""
    j = joint_spectrum(["two-point:1,4,0.5", "two-point:4,1,0.5", "two-point:1,4,0.5"])
    np.testing.assert_array_equal(j.types, [0, 1, 0])
    assert sorted(map(tuple, j.values.T)) == [(1, 4), (4, 1)]
    np.testing.assert_allclose(j.weights, [0.5, 0.5])
    j = joint_spectrum(["two-point:1,4,0.3", "two-point:2,3,0.5"])
    cols = {tuple(c): w for c, w in zip(j.values.T, j.weights)}
    assert cols == pytest.approx({(1, 2): 0.3, (4, 2): 0.2, (4, 3): 0.5})
    j = joint_spectrum(["powerlaw:1", "identity"], d=50)
    assert j.values.shape == (2, 50) and np.all(j.values[1] == 1)


@pytest.mark.parametrize("specs,d,match", [
    (["powerlaw:1,30", "powerlaw:1,40"], None, "different numbers of eigenvalues"),
    (["powerlaw:1,30"], 40, "30 eigenvalues for d = 40"),
    (["two-point:1,4,1.5"], None, "two-point weight"),
    (["scaled:-1"], None, r"scaled:C factor C must lie in \[1e-100, 1e\+100\]"),
])
def test_bad_spectra(specs, d, match):
    with pytest.raises(ValueError, match=match):
        joint_spectrum(specs, d)


def test_covariance_matrix_refused(tmp_path):
    """A covariance matrix instead of its eigenvalues: one error saying how to pass them."""
    npy, txt = tmp_path / "c.npy", tmp_path / "c.txt"
    np.save(npy, np.diag([1.0, 2.0, 3.0]))
    txt.write_text("1 0\n0 2\n")
    for path in (npy, txt):
        with pytest.raises(ValueError, match="diagonal in one shared basis.*np.diag"):
            ordered_steps(f"file:{path}")


def test_chain_vectors_close_any_middle():
    """chain_vectors: one solve gives the chain closed by every middle (chain_traces per
    middle), for a chain with per-point diagonal shifts on joint atoms."""
    s, w = np.array([1.0, 4.0, 2.0]), np.array([0.2, 0.5, 0.3])
    gamma, om = np.array([2.0, 0.7]), np.array([[0.3, 1.2, 0.5], [0.8, 0.1, 0.4]])
    eta = np.array([[2.0, 0.5, 0.5, 2.0]] * 2)
    shifts = np.stack([om, np.ones((2, 3)), np.ones((2, 3)), om], axis=1)
    mids = np.stack([np.ones((2, 3)), np.broadcast_to(s, (2, 3)), np.ones((2, 3)),
                     np.ones((2, 3))], axis=1)
    phi = chain_vectors(gamma, s, w, eta, shifts, mids)
    for last in (np.ones(3), s, np.array([0.3, 2.0, 1.1])):
        m = mids.copy()
        m[:, 3] = last
        np.testing.assert_allclose(phi @ last, chain_traces(gamma, s, w, eta, shifts, m),
                                   rtol=1e-13)


# --- exact reductions ---------------------------------------------------------------------------

@pytest.mark.parametrize("spec", ["two-point:1,10,0.5", "powerlaw:1,60"])
@pytest.mark.parametrize("method,lam", CASES)
@pytest.mark.parametrize("weights", ["samples", "uniform"])
def test_one_type_is_the_shared_spectrum(spec, method, lam, weights):
    """All Sigma_j equal: finite_clients.sigma (whitened coordinates, scalar subordination)."""
    j = joint_spectrum([spec])
    b, v = shift_group_limits(method, GAM, R, SIG, CNT, LAM * lam, weights, j, np.zeros(3, int))
    rb, rv = sigma_group_limits(method, GAM, R, SIG, CNT, LAM * lam, weights, j.marginal(0))
    np.testing.assert_allclose(b, rb, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(v, rv, rtol=1e-10)


@pytest.mark.parametrize("method,lam", CASES)
@pytest.mark.parametrize("weights,other", [("samples", "uniform"), ("uniform", "samples")])
def test_scaled_identities_are_a_reweighting(method, lam, weights, other):
    """Sigma_j = c_j I: S_j = c_j W_j, so the global model is the Sigma = I one with weights
    p_j c_j / sum p c and noise sigma_j / sqrt(c_j) (X_j^T xi_j = sqrt(c_j) Z_j^T xi_j); the
    target's RTFA penalty on W_i is lam / c_i, and its risk in Sigma_i is c_i times the
    Sigma = I one. With c_j proportional to gamma_j (samples) the weights become uniform, with
    c_j proportional to 1/gamma_j (uniform) they become n_j / N."""
    c = 0.7 * (GAM if weights == "samples" else 1.0 / GAM)
    j = joint_spectrum([f"scaled:{float(x)!r}" for x in c])
    b, v = shift_group_limits(method, GAM, R, SIG, CNT, LAM * lam, weights, j, j.types)
    rb, rv = group_limits(method, GAM, R, SIG / np.sqrt(c), CNT, LAM * lam / c, other)
    np.testing.assert_allclose(b, c * rb, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(v, c * rv, rtol=1e-10)


@pytest.mark.parametrize("method,lam", CASES)
@pytest.mark.parametrize("gamma", [0.5, 2.0])
def test_many_clients_recover_oracle(method, lam, gamma):
    """M -> infinity (the target among M - 1 anti-aligned clients): the oracle limit in the
    target's own covariance, with an excess a / M + O(1/M^2) (M times the excess changes by
    <= 2e-4 between M = 1e5 and 1e6 here)."""
    j = joint_spectrum(["two-point:1,4,0.5", "two-point:4,1,0.5"])
    kw = dict(gamma=gamma, r=1.3, sigma=0.7, spectrum=j.marginal(0),
              **({"lam": lam} if lam else {}))
    oracle = riskcalc.limit(method, **kw).risk

    def risk(m):
        b, v = shift_group_limits(method, np.array([gamma, 1.5]), np.array([1.3, 1.0]),
                                  np.array([0.7, 0.4]), np.array([1.0, m - 1]),
                                  np.array([lam, lam]), "samples", j, np.array([0, 1]), [0])
        return float(b[0] + v[0])

    assert risk(1e9) == pytest.approx(oracle, rel=1e-6)
    e5, e6 = (m * (risk(m) - oracle) for m in (1e5, 1e6))
    assert e6 == pytest.approx(e5, rel=5e-4, abs=1e-9)


@pytest.mark.parametrize("method,lam", CASES)
def test_single_client_is_least_squares(method, lam):
    """M = 1, n > d: every method keeps least squares: bias 0, variance sigma^2 gamma / (1 -
    gamma), in any covariance (a second type with no client must not matter)."""
    j = joint_spectrum(["two-point:1,4,0.3", "powerlaw:1,40"])
    b, v = shift_group_limits(method, np.array([0.4]), np.array([1.3]), np.array([0.7]),
                              np.array([1.0]), np.array([lam]), "samples", j, np.array([1]))
    assert abs(b[0]) <= 1e-12
    assert v[0] == pytest.approx(0.49 * 0.4 / 0.6, rel=1e-10)


@pytest.mark.parametrize("gam,specs,d", [
    ([1.99, 2.01], ["two-point:1,100,0.5", "two-point:100,1,0.5"], None),
    ([2.0, 2.0, 2.0], ["powerlaw:2", "two-point:1,1000,0.1", "scaled:1e-3"], 1000),
    ([0.5, 50.0, 50.0], ["powerlaw:1.5", "scaled:1e3", "two-point:1e-3,1,0.9"], 500),
])
def test_global_point_hard_cases(gam, specs, d):
    """Near N = d and with type scales 1e6 apart the g_t differ by orders of magnitude (a
    Newton in g stalled here): the root satisfies g_t = tau(Sigma_t Abar^-1) to rounding and
    the identity sum_j om_j g_t(j) = tau(Abar Abar^-1) = 1, and the limits are finite."""
    from riskcalc.linear.finite_clients.identity import client_weights
    from riskcalc.linear.finite_clients.shift.limits import global_point
    j = joint_spectrum(specs, d)
    gam, cnt = np.array(gam), np.ones(len(gam))
    g, om, abar, _, _ = global_point(gam, client_weights(gam, cnt, "samples"), cnt, j.types,
                                     j.weights, j.values)
    np.testing.assert_allclose(g, (j.values / abar) @ j.weights, rtol=1e-12)
    assert om @ g[j.types] == pytest.approx(1.0, rel=1e-12)
    res = riskcalc.clients_limit("rtfa", gamma=gam, r=1.0, sigma=0.5, lam=0.5, spectra=specs,
                                 d=d)
    assert np.all(np.isfinite(res.risk)) and np.all(res.risk > 0)


def test_clients_limit_dispatch():
    """clients_limit(spectra=): one shared spectrum goes to the shared route; per-client spectra
    to the shift route (every method, MAML-FL included)."""
    kw = dict(gamma=[2.0, 1.0, 3.0], r=1.0, sigma=0.5)
    shared = riskcalc.clients_limit("ftfa", spectra="two-point:1,4,0.5", **kw)
    ref = riskcalc.clients_limit("ftfa", spectrum=riskcalc.Spectrum.two_point(1, 4, 0.5), **kw)
    np.testing.assert_allclose(shared.risk, ref.risk, rtol=1e-12)
    anti = riskcalc.clients_limit("ftfa", spectra=["two-point:1,4,0.5", "two-point:4,1,0.5",
                                                   "scaled:2"], **kw)
    assert anti.params["spectra"][2] == "scaled:2" and not np.allclose(anti.risk, ref.risk)
    maml = riskcalc.clients_limit("maml_fl", alpha=0.1, spectra=["identity", "scaled:2",
                                                                 "scaled:2"], **kw)
    # The gamma = 1 client interpolates with an infinite min-norm variance (a note says so).
    assert maml.params["spectra"][1] == "scaled:2" and np.isinf(maml.risk[1])
    assert np.all(np.isfinite(maml.risk[[0, 2]])) and maml.notes
    with pytest.raises(ValueError, match="3 client spectra for 2"):
        riskcalc.clients_limit("ftfa", gamma=[2.0, 1.0], r=1.0, sigma=0.5,
                               spectra=["identity"] * 3)


# --- simulation ---------------------------------------------------------------------------------

SIM = [  # target SPEC, the others' SPECs, gamma, M, method, tuning (lam or MAML's alpha)
    ("two-point:1,4,0.5", ("two-point:4,1,0.5",), 2.0, 5, "ftfa", None),
    ("two-point:1,4,0.5", ("two-point:4,1,0.5", "scaled:2"), 0.5, 5, "rtfa", 0.5),
    ("powerlaw:1", ("scaled:0.5", "two-point:4,1,0.5"), 1.5, 20, "fedavg", None),
    ("scaled:2", ("two-point:1,4,0.5",), 2.0, 2, "rtfa", 0.5),
    ("two-point:1,4,0.5", ("two-point:4,1,0.5",), 2.0, 5, "maml_fl", 0.05),
    ("two-point:1,4,0.5", ("two-point:4,1,0.5", "scaled:2"), 1.5, 5, "pfedme", 0.5),
]


@pytest.mark.parametrize("case", SIM)
def test_simulation(case):
    """The federated pipeline with per-client covariances (montecarlo, exact conditional
    expectation given X) at d = 400, 3 replicates, against the prediction at the same d
    (montecarlo.compare.federated_limit: the joint measure of the simulated coordinates).
    Allowance 4 s.e. + 2%: the finite-d deviation measured at d = 400 is <= 0.45% on 54 points
    (6 replicates each, benchmarks/bench_covariate_shift.py), and one replicate's standard
    deviation <= 1.3% of the risk there: the mean of 3 deviates by > 2% only beyond 2 of its
    standard deviations, besides the 4 s.e."""
    target, others, gamma, m, method, tuning = case
    d = 400
    sp = riskcalc.Spectrum.parse(target, d=d)
    tune = {"alpha" if method == "maml_fl" else "lam": tuning}
    spec = riskcalc.ClientSpec(method, gamma=gamma, r=1.0, sigma=0.5, spectrum=sp, **tune)
    setting = Setting(d=d, clients=m, global_model="federated", weights="samples",
                      spectra=(target,) + others, gammas=(1.0, 3.0))
    pred = federated_limit(spec, setting, "auto").risk
    vals = [measure(sample_instance(spec, setting, 3, k), method, [tuning or 0.0])["risk"][0]
            for k in range(3)]
    mean, se = mean_se(vals)
    assert abs(mean - pred) <= 4 * se + 0.02 * pred


# --- CLI ----------------------------------------------------------------------------------------

MODEL = ["ftfa", "--gamma", "2", "--r", "1", "--sigma", "0.5", "--spectrum", "two-point:1,4,0.5"]


def test_cli_clients_file_spectrum(tmp_path, capsys):
    """A clients-file entry's "spectrum" is that client's covariance (a client without one has
    the target's); the result is clients_limit's with spectra."""
    fed = [{"gamma": 1.5, "r": 1.0, "sigma": 0.5, "spectrum": "two-point:4,1,0.5"},
           {"gamma": 3.0, "r": 1.0, "sigma": 0.5}]
    path = tmp_path / "fed.json"
    path.write_text(json.dumps(fed))
    code, out, _ = run_cli(["predict", *MODEL, "--clients-file", str(path), "--json"], capsys)
    assert code == 0
    ref = riskcalc.clients_limit("ftfa", gamma=[2.0, 1.5, 3.0], r=1.0, sigma=0.5, spectra=[
        "two-point:1,4,0.5", "two-point:4,1,0.5", "two-point:1,4,0.5"])
    assert json.loads(out)["risk"] == pytest.approx(ref.risk[0], rel=1e-12)


@pytest.mark.parametrize("entry,match", [
    ({"spectrum": "file:{bad}"}, "3 eigenvalues for d = 5"),
    ({"spectrum": "file:{mat}"}, "diagonal in one shared basis"),
    ({"spectrum": 2.0}, "must be a SPEC string"),
])
def test_cli_bad_client_spectrum(tmp_path, capsys, entry, match):
    bad, mat = tmp_path / "bad.txt", tmp_path / "mat.npy"
    bad.write_text("1 2 3")
    np.save(mat, np.eye(5))
    entry = {k: v.format(bad=bad, mat=mat) if isinstance(v, str) else v
             for k, v in entry.items()}
    path = tmp_path / "fed.json"
    path.write_text(json.dumps([{"gamma": 1.5, "r": 1.0, "sigma": 0.5, **entry}]))
    code, out, err = run_cli(["predict", *MODEL, "--d", "5", "--clients-file", str(path)], capsys)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and match in err and err.count("\n") == 1


def test_cli_compare_federated_shift(tmp_path, capsys):
    """compare --global federated simulates the per-client covariances of the clients file
    (small d: the plumbing; the agreement is test_simulation's)."""
    path = tmp_path / "fed.json"
    path.write_text(json.dumps([{"gamma": 1.5, "r": 1.0, "sigma": 0.5,
                                 "spectrum": "two-point:4,1,0.5"}] * 3))
    code, out, _ = run_cli(["compare", *MODEL, "--clients-file", str(path), "--global", "federated",
                            "--d", "120", "--reps", "2", "--json", "--no-progress"], capsys)
    assert code == 0
    res = json.loads(out)
    assert res["setting"]["spectra"] == ["two-point:1,4,0.5"] + ["two-point:4,1,0.5"] * 3
    ref = riskcalc.clients_limit("ftfa", gamma=[2.0] + [1.5] * 3, r=1.0, sigma=0.5,
                                 weights=res["setting"]["weights"],
                                 spectra=res["setting"]["spectra"])
    assert res["predicted"]["risk"] == pytest.approx(ref.risk[0], rel=1e-12)
    assert abs(res["comparison"]["risk"]["rel_diff"]) < 0.1


def test_steps_under_shift_have_no_silent_prediction(tmp_path, capsys):
    """--steps with per-client spectra: predict refuses with one error line (no finite-M
    steps limit under covariate shift); compare predicts the oracle steps limit and says so,
    instead of the shared-spectrum finite-M steps limit it used to print without a note."""
    path = tmp_path / "fed.json"
    path.write_text(json.dumps([{"gamma": 1.5, "r": 1.0, "sigma": 0.5,
                                 "spectrum": "two-point:4,1,0.5"}]))
    steps = ["--steps", "5", "--step-size", "0.1"]
    code, out, err = run_cli(["predict", *MODEL, "--clients-file", str(path), *steps], capsys)
    assert code == 2 and out == "" and err.startswith("error: ") and err.count("\n") == 1
    assert "covariate shift" in err
    code, out, _ = run_cli(["compare", *MODEL, "--clients-file", str(path), "--global", "federated",
                            *steps, "--d", "40", "--reps", "2", "--json", "--no-progress"], capsys)
    assert code == 0
    res = json.loads(out)
    oracle = riskcalc.steps_limit("ftfa", gamma=2.0, r=1.0, sigma=0.5, steps=5, step_size=0.1,
                                  spectrum=riskcalc.Spectrum([1.0, 4.0], weights=[0.5, 0.5]))
    assert res["predicted"]["risk"] == pytest.approx(float(oracle.risk), rel=1e-12)
    assert any("oracle steps limit" in n for n in res["notes"])
