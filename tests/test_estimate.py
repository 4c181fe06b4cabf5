"""riskcalc.estimate and ``riskcalc estimate``: accuracy at d = 400, coverage of the
intervals over replicates, the spectrum's moments and two-atom rule, and bad input."""

import json

import numpy as np
import pytest

import riskcalc
from montecarlo.linear.federation import sample_federation
from montecarlo.runner.threads import small_blas
from riskcalc.advise import Federation
from riskcalc.cli import main
from riskcalc.estimate import estimate, gauss_two_atoms

R = np.array([1.0, 1.2, 1.5, 2.0])
SIGMA = np.array([0.5, 0.8, 1.0, 0.6])


def _data(fed, d, seed, rep):
    X, theta, y, _ = sample_federation(fed, d, seed, rep)
    ids = np.repeat(np.arange(fed.m) * 3 + 1, [x.shape[0] for x in X])   # ids 1, 4, 7, 10
    return np.vstack(X), np.concatenate(y), ids, theta


def test_least_squares_within_15_percent_at_d400():
    """d = 400, n_j = 2d, r_j >= sigma_j, Sigma = I: sigma_j and r_j within 15% (and within 4
    standard errors), for theta_0 = 0 and for ||theta_0|| = 2 (the estimate of r_j does not
    depend on the centre)."""
    for rho in (None, np.sqrt(4.0 + R ** 2)):
        fed = Federation(gamma=[0.5] * 4, r=R, sigma=SIGMA, rho=rho)
        with small_blas():
            X, y, ids, _ = _data(fed, 400, seed=11, rep=0)
            est = estimate(X, y, ids)
        assert est.route == "least-squares"
        for name, true in (("sigma", SIGMA), ("r", R)):
            value, se = est.root(name)
            assert np.all(np.abs(value / true - 1) <= 0.15), (name, value)
            assert np.all(np.abs(value - true) <= 4 * se), (name, value, se)


@pytest.mark.parametrize("route,gamma,d,low", [("least-squares", 0.5, 30, 0.88),
                                               ("moments", 1.0, 40, 0.82)])
def test_interval_coverage(route, gamma, d, low):
    """95% intervals of sigma_j^2, r_j^2, rho_j^2 over 40 replicates: pooled coverage above
    ``low`` (the least-squares errors are exact for Gaussian noise: 0.95 less 3 binomial
    standard deviations of 480 intervals, with room for their correlation; the moments
    route's jackknife is looser in small d) and not above 0.995 (intervals not vacuous)."""
    rho = np.sqrt(1.0 + R ** 2)
    fed = Federation(gamma=[gamma] * 4, r=R, sigma=SIGMA, rho=rho)
    hits = []
    with small_blas():
        for rep in range(40):
            X, y, ids, theta = _data(fed, d, seed=5, rep=rep)
            est = estimate(X, y, ids, route=route)
            truth = {"sigma2": SIGMA ** 2, "r2": R ** 2,
                     "rho2": np.sum(theta ** 2, axis=1)}
            for k, t in truth.items():
                hits.extend(np.abs(est.values[k] - t) <= 1.96 * est.se[k])
    assert low <= np.mean(hits) <= 0.995, np.mean(hits)


def test_spectrum_moments_and_two_atoms():
    """Sigma with eigenvalues 0.5 and 2 (half each): the moments m1, m2, m3 within 4 standard
    errors, and the two-atom rule near the true atoms; the rule is exact on exact moments."""
    sp = riskcalc.Spectrum([0.5, 2.0], weights=[0.5, 0.5])
    fed = Federation(gamma=[0.25] * 4, r=R, sigma=SIGMA, spectrum=sp)
    with small_blas():
        X, y, ids, _ = _data(fed, 120, seed=2, rep=0)
        est = estimate(X, y, ids, route="moments")
    true = np.array([1.25, 0.5 * (0.25 + 4.0), 0.5 * (0.125 + 8.0)])
    assert np.all(np.abs(est.values["moments"] - true) <= 4 * est.se["moments"])
    two = est.spectrum()
    np.testing.assert_allclose(two.atoms, [0.5, 2.0], rtol=0.15)
    exact = gauss_two_atoms(*true)
    np.testing.assert_allclose(exact.atoms, [0.5, 2.0], rtol=1e-12)
    np.testing.assert_allclose(exact.weights, [0.5, 0.5], rtol=1e-12)
    assert gauss_two_atoms(2.0, 4.0, 8.0).atoms.tolist() == [2.0]     # no spread: one atom


def test_identity_scale_folds_into_r():
    """Sigma = 4 I is the identity with r, rho doubled (the same risks)."""
    fed = Federation(gamma=[0.5] * 3, r=R[:3], sigma=SIGMA[:3])
    X, y, ids, _ = _data(fed, 60, seed=4, rep=0)
    est = estimate(2.0 * X, y, ids)
    assert est.spectrum() is None
    base = estimate(X, y, ids)
    fed_est = est.federation()
    np.testing.assert_allclose(fed_est.r, base.root("r")[0], rtol=0.02)
    np.testing.assert_allclose(fed_est.sigma, base.root("sigma")[0], rtol=1e-10)


def test_rank_deficient_client_falls_back_to_moments():
    """A feature constant (zero) within one client: local least squares is not defined there,
    so auto takes the moments route and an explicit least-squares request is refused."""
    fed = Federation(gamma=[0.5] * 3, r=R[:3], sigma=SIGMA[:3])
    X, y, ids, _ = _data(fed, 20, seed=6, rep=0)
    X[ids == 4, 3] = 0.0
    assert estimate(X, y, ids).route == "moments"
    with pytest.raises(ValueError, match="client 4 has rank 19"):
        estimate(X, y, ids, route="least-squares")


def _write(tmp_path, **arrays):
    path = tmp_path / "fed.npz"
    np.savez(path, **arrays)
    return str(path)


def test_bad_input(tmp_path, capsys):
    fed = Federation(gamma=[0.5] * 2, r=R[:2], sigma=SIGMA[:2])
    X, y, ids, _ = _data(fed, 10, seed=1, rep=0)
    Xn = X.copy()
    Xn[3, 2] = np.nan
    cases = [
        (dict(X=X, y=y), "missing array(s) client"),
        (dict(X=X, y=y[:-1], client=ids), "y must have shape"),
        (dict(X=Xn, y=y, client=ids), "X has NaN"),
        (dict(X=X, y=y, client=ids + 0.5), "client ids must be integers"),
        (dict(X=X, y=y, client=np.zeros_like(ids)), "at least two"),
        (dict(X=X, y=y, client=np.r_[ids[:-2], 99, 99]), "needs at least 3"),
    ]
    for arrays, match in cases:
        code = main(["estimate", "--data", _write(tmp_path, **arrays)])
        err = capsys.readouterr().err
        assert code == 2 and err.startswith("error: ") and match in err, err
        assert err.count("\n") == 1
    code = main(["estimate", "--data", str(tmp_path / "none.npz")])
    assert code == 2 and "no such file" in capsys.readouterr().err
    with pytest.raises(ValueError, match="least-squares route needs every n_j > d"):
        estimate(np.hstack([X, X]), y, ids, route="least-squares")      # n_j = 20, d = 20
    with pytest.raises(ValueError, match="route must be one of"):
        estimate(X, y, ids, route="ols")


def test_cli_npz_csv_and_advise_chain(tmp_path, capsys):
    fed = Federation(gamma=[0.5, 0.5, 0.6], r=R[:3], sigma=SIGMA[:3])
    X, y, ids, _ = _data(fed, 40, seed=3, rep=0)
    npz = _write(tmp_path, X=X, y=y, client=ids)
    assert main(["estimate", "--data", npz, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [c["id"] for c in out["clients"]] == [1, 4, 7] and out["d"] == 40
    csv = tmp_path / "fed.csv"
    table = np.column_stack([ids, y, X])
    header = "client,y," + ",".join(f"x{k}" for k in range(X.shape[1]))
    np.savetxt(csv, table, delimiter=",", header=header, comments="", fmt="%.17g")
    assert main(["estimate", "--data", str(csv), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == out
    # The estimate's federation list is a clients file for advise.
    path = tmp_path / "clients.json"
    path.write_text(json.dumps(out["federation"]))
    assert main(["advise", "--clients-file", str(path), "--methods", "fedavg", "--json"]) == 0
    from_file = json.loads(capsys.readouterr().out)
    assert main(["advise", "--data", npz, "--methods", "fedavg", "--json"]) == 0
    chained = json.loads(capsys.readouterr().out)
    assert chained["estimate"] == out
    assert chained["candidates"] == from_file["candidates"]
    bad = tmp_path / "bad.csv"
    bad.write_text("a,y\n1,2\n")
    assert main(["estimate", "--data", str(bad)]) == 2
    assert "needs a 'client' column" in capsys.readouterr().err
