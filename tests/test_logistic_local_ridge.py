"""Local ridge logistic regression without clients (``logistic_limit(method="local_ridge")``,
``predict``/``compare``/``sweep local_ridge --model logistic`` without ``--clients``): ridge
toward 0 on the client's own data. Its limits depend on ``w_i = w_0 + r u`` only through
``||w_i||``, so they are RTFA's at signal 0; checked against the finite-M route, whose local
ridge is a separate fixed point (``riskcalc.logistic.blocks.finetune``'s rule over the global
model's view), and against the simulation of the federated mode's local ridge."""

import json

import numpy as np
import pytest

import riskcalc
from montecarlo.logistic.sweep import sweep_logistic
from riskcalc import Spectrum
from tests.helpers import run_cli

QUANTITIES = ("risk", "sigma_risk", "cosine_uncentred", "test_logloss", "test_error")
# Both routes solve their fixed points to 1e-11 with quadrature rules checked against the next
# coarser one to 1e-7 (the oracle rule) and 2e-6 (the fine-tuning rule) relative.
REL = 2e-6


@pytest.mark.parametrize("gamma, signal, r, lam", [(2.0, 1.0, 1.0, 0.5), (0.5, 2.0, 0.5, 0.1),
                                                   (3.0, 0.0, 1.5, 1.0)])
def test_equals_the_finite_client_local_ridge_at_any_m(gamma, signal, r, lam):
    one = riskcalc.logistic_limit(gamma=gamma, signal=signal, r=r, lam=lam, method="local_ridge")
    assert one.method == "local_ridge" and one.as_dict()["method"] == "local_ridge"
    assert one.params == dict(gamma=gamma, signal=signal, r=r, lam=lam)
    for m, global_lam in ((3, None), (7, 1.0)):
        fin = riskcalc.logistic_limit(gamma=gamma, signal=signal, r=r, lam=lam, clients=m,
                                      global_lam=global_lam, method="local_ridge")
        for q in QUANTITIES:
            assert getattr(one, q) == pytest.approx(float(getattr(fin, q)), rel=REL), (m, q)
    # The centred cosine is about c = 0: the uncentred one.
    assert one.cosine == pytest.approx(one.cosine_uncentred, rel=1e-12)


def test_depends_on_the_client_only_through_its_norm_with_a_spectrum():
    spec = Spectrum.two_point(1.0, 4.0, 0.5)
    one = riskcalc.logistic_limit(gamma=2.0, signal=1.2, r=0.9, lam=0.5, spectrum=spec,
                                  method="local_ridge")
    fin = riskcalc.logistic_limit(gamma=2.0, signal=1.2, r=0.9, lam=0.5, spectrum=spec,
                                  clients=3, method="local_ridge")
    for q in QUANTITIES:
        assert getattr(one, q) == pytest.approx(float(getattr(fin, q)), rel=REL), q
    # The same norm split otherwise between the centre and the client's offset.
    other = riskcalc.logistic_limit(gamma=2.0, signal=0.9, r=1.2, lam=0.5, spectrum=spec,
                                    method="local_ridge")
    assert other.risk == pytest.approx(one.risk, rel=1e-12)


def test_grid_and_refusals():
    grid = riskcalc.logistic_limit(gamma=[1.0, 2.0], signal=1.0, r=[0.5, 1.0], lam=0.5,
                                   method="local_ridge")
    np.testing.assert_array_equal(grid.params["signal"], [1.0, 1.0])
    np.testing.assert_array_equal(grid.params["r"], [0.5, 1.0])
    for k, (g, r) in enumerate(((1.0, 0.5), (2.0, 1.0))):
        point = riskcalc.logistic_limit(gamma=g, signal=1.0, r=r, lam=0.5, method="local_ridge")
        assert grid.risk[k] == pytest.approx(point.risk, rel=1e-9)
    kw = dict(gamma=1.0, signal=1.0, r=1.0, lam=0.5, method="local_ridge")
    with pytest.raises(ValueError, match="centre is not taken by local_ridge"):
        riskcalc.logistic_limit(**kw, centre="fedavg")
    with pytest.raises(ValueError, match="signal must"):
        riskcalc.logistic_limit(**{**kw, "signal": -1.0})
    with pytest.raises(ValueError, match="need clients"):
        riskcalc.logistic_limit(**{**kw, "method": "fedavg"})
    # A work refusal names the asked parameters, not the reduction's signal 0.
    with pytest.raises(ValueError, match=r"local ridge at \|\|w_i\|\| = 1e\+06 \(signal "
                                         r"1e\+06, r 1\)"):
        riskcalc.logistic_limit(**{**kw, "signal": 1e6})


BASE = ["local_ridge", "--model", "logistic", "--gamma", "2", "--signal", "1", "--r", "1",
        "--lam", "0.5"]


def test_cli_predict_and_compare_without_clients(capsys):
    code, out, _ = run_cli(["predict", *BASE, "--json"], capsys)
    assert code == 0
    got = json.loads(out)
    ref = riskcalc.logistic_limit(gamma=2.0, signal=1.0, r=1.0, lam=0.5, method="local_ridge")
    assert got["method"] == "local_ridge" and got["risk"] == ref.risk
    code, out, _ = run_cli(["predict", *BASE], capsys)
    assert code == 0 and "cosine_uncentred" in out and "\n  cosine " not in out
    code, _, err = run_cli(["predict", *BASE, "--centre", "fedavg"], capsys)
    assert code == 2 and "--centre does not apply to METHOD local_ridge" in err
    # The simulation: the federated mode's local ridge (centre 0, the same draws).
    sim = ["--d", "30", "--reps", "3", "--seed", "5", "--no-progress", "--json"]
    code, out, _ = run_cli(["compare", *BASE, *sim], capsys)
    assert code == 0
    alone = json.loads(out)
    code, out, _ = run_cli(["compare", *BASE, *sim, "--global", "federated", "--clients", "3"],
                           capsys)
    assert code == 0
    fed = json.loads(out)
    assert set(alone["simulated"]) == set(fed["simulated"])
    for q in ("risk", "cosine_uncentred", "test_error"):
        assert alone["simulated"][q] == fed["simulated"][q]
        assert alone["predicted"][q] == pytest.approx(fed["predicted"][q], rel=REL)


def test_sweep_without_clients():
    rows = sweep_logistic("local_ridge", gamma=[1.0, 2.0], r=1.0, signal=1.0, lam=0.5, d=30,
                          reps=2, progress=False)
    fed = sweep_logistic("local_ridge", gamma=[1.0, 2.0], r=1.0, signal=1.0, lam=0.5, d=30,
                         clients=3, reps=2, progress=False)
    for row, other in zip(rows, fed):
        assert row["centre"] is None and "predicted_cosine" not in row
        res = riskcalc.logistic_limit(gamma=row["gamma"], signal=1.0, r=1.0, lam=0.5,
                                      method="local_ridge")
        assert row["predicted_risk"] == pytest.approx(res.risk, rel=1e-12)
        assert row["simulated_risk"] == other["simulated_risk"]
