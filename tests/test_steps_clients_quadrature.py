"""Finite personalization steps from the finite-M global model, Sigma = I, at the steps asked
only (``steps.finite_clients._steps_at``: the quadrature of ``identity_steps_group_limits``),
against the pencils of ``steps_group_limits`` (another route: linear pencils in S) and, at many
steps, against the finite-M limit the steps converge to (``riskcalc.limit(clients=M)``).
fuzz27 F2: ``predict ftfa --clients 10 --steps 1000`` took 80 s (the pencils need every k up
to the largest) and k >= 1023 was refused for memory."""

import time

import numpy as np
import pytest

import riskcalc
from riskcalc.cli import main
from riskcalc.linear.steps.finite_clients import clients_steps_limit, steps_group_limits
from riskcalc.spectrum import Spectrum

KS = [0, 3, 50, 200]


@pytest.mark.parametrize("method, lam", [("ftfa", 0.0), ("rtfa", 0.4)])
def test_identical_clients_equal_the_pencils(method, lam):
    kw = dict(gamma=2.0, r=1.0, sigma=0.7, step_size=0.1, clients=10)
    res = riskcalc.steps_limit(method, steps=KS, **kw, **({"lam": lam} if lam else {}))
    b, v = steps_group_limits(method, [2.0], [1.0], [0.7], [10], [lam], "samples",
                              Spectrum.identity(), KS[-1], 0.1)
    np.testing.assert_allclose(res.bias, b[0, KS], rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.variance, v[0, KS], rtol=0, atol=1e-12)


@pytest.mark.parametrize("weights", ["samples", "uniform"])
def test_heterogeneous_clients_equal_the_pencils(weights):
    gam, r, sig = [2.0, 0.5, 4.0], [1.0, 0.5, 2.0], [0.7, 1.0, 0.2]
    ks = np.array([[120, 0], [7, 120]])
    bias, var = clients_steps_limit("rtfa", gamma=gam, r=r, sigma=sig, lam=[0.3, 1.0, 2.0],
                                    steps=ks, step_size=0.05, weights=weights)
    b, v = steps_group_limits("rtfa", gam, r, sig, np.ones(3), np.array([0.3, 1.0, 2.0]),
                              weights, Spectrum.identity(), 120, 0.05, targets=[0])
    assert bias.shape == ks.shape
    np.testing.assert_allclose(bias, b[0][ks], rtol=0, atol=1e-12)
    np.testing.assert_allclose(var, v[0][ks], rtol=0, atol=1e-12)


@pytest.mark.parametrize("method, lam", [("ftfa", 0.0), ("rtfa", 0.4)])
def test_many_steps_reach_the_finite_clients_limit(method, lam):
    # eta = 0.1 on a spectrum from (1 - sqrt 2)^2 = 0.17: q^k <= (1 - 0.017)^(10^5), far below
    # rounding, so the steps' limit is the converged personalization's.
    extra = {"lam": lam} if lam else {}
    res = riskcalc.steps_limit(method, gamma=2.0, r=1.0, sigma=0.7, steps=10 ** 5,
                               step_size=0.1, clients=10, **extra)
    ref = riskcalc.limit(method, gamma=2.0, r=1.0, sigma=0.7, clients=10, **extra)
    assert res.bias == pytest.approx(ref.bias, rel=1e-12)
    assert res.variance == pytest.approx(ref.variance, rel=1e-12)


def test_predict_many_steps_answers_quickly(capsys):
    start = time.process_time()
    assert main(["predict", "ftfa", "--gamma", "2", "--sigma", "1", "--r", "1", "--clients", "10",
                 "--steps", "1000", "--step-size", "0.1", "--json"]) == 0
    # 80 s before (the pencils up to k = 1000); a generous bound, the quadrature takes ~0.1 s.
    assert time.process_time() - start < 10
    assert '"risk": 1.8194444' in capsys.readouterr().out
