"""Result objects report their solver diagnostics (iterations, residuals where a scalar
equation was solved) and convert to pandas DataFrames (issue 23)."""

import numpy as np
import pytest

import riskcalc
from riskcalc import solvers

pd = pytest.importorskip("pandas")
TWO_POINT = riskcalc.Spectrum([1.0, 4.0], weights=[0.5, 0.5])


def test_record_counts_iterations_and_residuals_of_each_solve():
    target = np.array([2.0, 3.0, 0.5])

    def fun(x, mask):          # f(x) = log(x / target), x df/dx = 1
        return np.log(x / target[mask]), np.ones_like(x)

    with solvers.record() as outer:
        with solvers.record() as inner:
            root = solvers.increasing_root(fun, np.full(3, 1e-3), np.full(3, 1e3), what="t")
        solvers.increasing_root(fun, np.full(3, 1e-3), np.full(3, 1e3), what="t")
    np.testing.assert_allclose(root, target, rtol=1e-12)
    assert inner == {"t": {"solves": 1, "points": 3, "iterations": inner["t"]["iterations"],
                           "residual": inner["t"]["residual"]}}
    # Newton on a linear function in log x: one step lands on the root, the next confirms.
    assert 1 <= inner["t"]["iterations"] <= 3 and inner["t"]["residual"] < 1e-12
    assert outer["t"]["solves"] == 2 and outer["t"]["points"] == 6
    with solvers.record() as untouched:
        pass
    assert untouched == {}


def test_limit_diagnostics_name_the_solved_equation():
    closed = riskcalc.limit("rtfa", gamma=2.0, r=1.0, sigma=0.5, lam=0.5)
    assert closed.diagnostics == {}          # closed forms: nothing solved
    for route, what in (("kappa", "effective ridge kappa"),
                        ("paper", "Stieltjes transform m (Def. 6.2)")):
        res = riskcalc.limit("rtfa", gamma=[1.5, 2.0, 4.0], r=1.0, sigma=0.5, lam=0.5,
                             spectrum=TWO_POINT, route=route)
        diag = res.diagnostics[what]
        assert diag["points"] == 3 and 1 <= diag["iterations"] <= solvers.MAXITER
        assert diag["residual"] < 1e-10
        frame = res.to_frame()
        assert list(frame["iterations"]) == [diag["iterations"]] * 3
        np.testing.assert_array_equal(frame["risk"], res.risk)
    # Diagnostics do not take part in equality: the same limit is the same result.
    assert closed == riskcalc.limit("rtfa", gamma=2.0, r=1.0, sigma=0.5, lam=0.5)


def test_clients_limit_diagnostics_and_frame():
    res = riskcalc.clients_limit("rtfa", gamma=[2.0, 2.0, 0.5], r=[1.0, 0.5, 1.0], sigma=0.5,
                                 lam=0.5)
    assert res.diagnostics and all(d["residual"] < 1e-10 for d in res.diagnostics.values())
    frame = res.to_frame()
    assert frame.index.name == "client" and len(frame) == 3
    assert list(frame["r"]) == [1.0, 0.5, 1.0] and set(frame["weights"]) == {"samples"}
    assert frame["risk"].mean() == pytest.approx(res.mean_risk, rel=1e-14)
    limit = riskcalc.limit("rtfa", gamma=2.0, r=1.0, sigma=0.5, lam=0.5, clients=4)
    assert limit.route == "finite_clients" and limit.diagnostics


def test_logistic_result_diagnostics_and_frame():
    res = riskcalc.logistic_limit(gamma=1.0, signal=1.0, r=1.0, lam=0.5)
    assert res.diagnostics["residual"] < 1e-10 and res.diagnostics["quadrature_nodes"] >= 56
    row = res.to_frame().iloc[0]
    for key in ("risk", "cosine", "test_logloss", "test_error", "a", "b", "q", "mu"):
        assert row[key] == getattr(res, key)
    assert row["gamma"] == 1.0 and row["lam"] == 0.5
