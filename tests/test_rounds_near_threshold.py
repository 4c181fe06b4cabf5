"""FedAvg's rounds (Sigma = I) near pooled N = d, where the round map's spectrum [a, b] comes
near 0: the contour of ``fedavg._around_zero`` (an ellipse holding 0 less a circle about 0
inside the gap (0, a)) instead of the ellipse through the gap, whose nodes grow as sqrt(b / a).

Was (issue 32's fuzz #3): one client at gamma 0.999, T = 1, K = 1 refused ("round map contour:
159920 nodes needed"), and the own models near the threshold refused beyond 3e7 node pairs,
though every finite round is well defined there.
"""

import numpy as np
import pytest

import riskcalc
import riskcalc.linear.dynamics.fedavg as fedavg
from riskcalc.cli import main

FED = dict(r=1.0, sigma=0.5, signal=1.0)


@pytest.mark.parametrize("gamma, K, rounds", [(0.999, 1, [1, 5, 20, 100]),
                                              (1.001, 3, [1, 4, 30, 300])])
def test_one_client_is_local_gradient_descent(gamma, K, rounds):
    """One client, g = 1: round T is K T local gradient steps from 0, and its own model after
    round T is the server model (exact identity; the second route is ``steps_limit``'s
    quadrature on the Marchenko-Pastur law, with ||theta||^2 = signal^2 + r^2). Either side
    of the threshold (1.001: an atom of D at 0)."""
    res = riskcalc.rounds_limit("fedavg", gamma=[gamma], **FED, local_steps=K, step_size=0.2,
                                rounds=rounds)
    steps = [riskcalc.steps_limit("local", gamma=gamma, rho=np.sqrt(2.0), sigma=0.5,
                                  steps=K * T, step_size=0.2).risk for T in rounds]
    np.testing.assert_allclose(res.risk[0], steps, rtol=1e-10)
    np.testing.assert_allclose(res.local_risk[0], steps, rtol=1e-10)
    assert res.diagnostics["contour_nodes"] < 2 * 2 * max(rounds) + 300   # the ellipse: > 3000


@pytest.mark.parametrize("fed", [
    dict(gamma=[0.88], local_steps=2, step_size=0.2, global_step=0.6,
         rounds=[0, 1, 10, 100, np.inf]),
    dict(gamma=[1.9, 2.2], local_steps=2, step_size=0.2, rounds=[0, 1, 10, 100, np.inf]),
    dict(gamma=[1.95, 2.0], local_steps=np.inf, global_step=0.5, rounds=[1, 10, 100, np.inf]),
    dict(gamma=[0.95], local_steps=np.inf, lam=1.0, rounds=[0, 1, 10, 100, np.inf]),
], ids=["one-client-own-models", "atom-at-0", "exact-local-solves", "algorithm1-exact-prox"])
def test_same_values_as_the_ellipse_through_the_gap(fed, monkeypatch):
    """Several clients near the threshold, on both contours (the ellipse through the gap
    forced by a circle too costly to choose): the same curves, own models and distances to
    the fixed point to 1e-10, the fixed point (T = inf, a pole at 0) and D's atom at 0 (pooled
    N < d) included; 344 nodes against 992-6392 (own models: g = 0.6, not an identity)."""
    m = len(fed["gamma"])
    kw = dict(FED, r=[1.0, 0.5][:m], sigma=[0.5, 0.2][:m], **fed)
    method = "pfedme" if "lam" in fed else "fedavg"     # Algorithm 1: its own models' risk
    near = riskcalc.rounds_limit(method, **kw)
    monkeypatch.setattr(fedavg, "CIRCLE_NODES", 1 << 40)
    gap = riskcalc.rounds_limit(method, **kw)
    assert near.diagnostics["contour_nodes"] * 2 < gap.diagnostics["contour_nodes"]
    for q in ("risk", "global_risk", "distance_to_fixed_point"):
        np.testing.assert_allclose(getattr(near, q), getattr(gap, q), rtol=1e-10)
    if m == 1:      # elsewhere the gap's double contour is refused (3e7 pairs) or slow
        np.testing.assert_allclose(near.local_risk, gap.local_risk, rtol=1e-10)


def test_fuzz_case_answers_on_the_command_line(capsys):
    """``predict fedavg --gamma 0.999 --rounds 1`` was refused (159920 nodes)."""
    assert main(["predict", "fedavg", "--gamma", "0.999", "--r", "1", "--sigma", "0.5",
                 "--rounds", "1", "--local-steps", "1", "--local-step-size", "0.1",
                 "--signal", "1"]) == 0
    row = [line.split() for line in capsys.readouterr().out.splitlines()
           if line.split()[:1] == ["1"]][0]
    first = riskcalc.steps_limit("local", gamma=0.999, rho=np.sqrt(2.0), sigma=0.5, steps=1,
                                 step_size=0.1).risk
    assert float(row[3]) == pytest.approx(first, rel=1e-7)
