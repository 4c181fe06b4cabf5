"""FedAvg with an odd number K of local steps whose step diverges on a client (step_size
(1 + sqrt(gamma_j))^2 > 2): a result, as for K = 1 (issue 32: divergence is reported the same
way at any number of steps). The filter q(s) = 1 - (1 - eta s)^K stays increasing for odd K,
so the round map is positive semidefinite and the Sigma = I curves are exact however large q
grows; even K (q negative where eta s > 2) is refused with the reason."""

import numpy as np
import pytest

import riskcalc

ETA = 1.5          # eta (1 + sqrt(0.5))^2 = 4.4: every client's local steps diverge


@pytest.mark.parametrize("K", [3, 5])
def test_one_client_is_k_t_gradient_steps(K):
    """M = 1, global step 1: the server model of round T (and the client's own model after its
    K local steps of round T) is K T gradient steps from 0, ``steps_limit("local")``, an
    independent route (a finite sum over the steps' filter, no contour). The risks grow to
    1e13 and beyond; 1e-10 relative (measured 1e-15 at K = 3)."""
    res = riskcalc.rounds_limit("fedavg", gamma=0.5, r=0.3, sigma=0.5, signal=1.0,
                                rounds=[1, 2, 3], local_steps=K, step_size=ETA)
    assert not res.converges and res.contraction > 1.0
    for i, T in enumerate([1, 2, 3]):
        ref = riskcalc.steps_limit("local", gamma=0.5, rho=np.sqrt(1.09), sigma=0.5,
                                   steps=K * T, step_size=ETA)
        assert not ref.converges
        assert res.risk[0, i] == pytest.approx(ref.risk, rel=1e-10)
        assert res.local_risk[0, i] == pytest.approx(ref.risk, rel=1e-10)


def test_two_clients_against_the_simulated_algorithm():
    """M = 2 heterogeneous clients, K = 3, T = 1, 2: the literal iteration
    (``montecarlo.linear.rounds``, exact given the designs) at d = 200 within 4 s.e. plus a
    finite-d gap of 10 / d relative. The divergence amplifies the O(1/d) gap: measured (32
    replicates) T = 1: +5.0%, +2.2%, +1.8%, +0.3% and T = 2: +17%, +5.1%, +4.8%, +1.4% at d =
    100, 200, 400, 800 (s.e. 0.3-5%), about b / d with b up to 10."""
    from montecarlo.linear.rounds import simulate_rounds

    kw = dict(gamma=[0.5, 0.8], r=0.3, sigma=0.5, signal=1.0, rounds=[1, 2], local_steps=3,
              step_size=ETA)
    theory = riskcalc.rounds_limit("fedavg", **kw)
    sim = simulate_rounds("fedavg", d=200, reps=24, seed=11, **kw)
    gap = np.abs(sim.risk - theory.risk)
    assert np.all(gap <= 4 * sim.risk_se + 10.0 / 200 * theory.risk), (gap, sim.risk_se)


def test_too_many_divergent_steps_say_why():
    """K = 15 at this step: the filter reaches 4e9 and the round map's spectrum spans more than
    the edge solves resolve; refused with that reason (it was refused as pooled N = d)."""
    with pytest.raises(ValueError, match="reaches 4.24e\\+09 with local_steps = 15"):
        riskcalc.rounds_limit("fedavg", gamma=[0.5, 0.8], r=0.3, sigma=0.5, signal=1.0,
                              rounds=[1], local_steps=15, step_size=ETA)


def test_even_k_is_refused_with_the_reason():
    with pytest.raises(ValueError, match="local_steps = 4 is even.*odd local_steps"):
        riskcalc.rounds_limit("fedavg", gamma=[0.5, 0.8], r=0.3, sigma=0.5, signal=1.0,
                              rounds=[1], local_steps=4, step_size=ETA)


def test_command_line_reports_the_divergent_curve(capsys):
    import json

    from riskcalc.cli import main

    argv = ["predict", "fedavg", "--gamma", "0.5", "--r", "0.3", "--sigma", "0.5", "--clients",
            "2", "--signal", "1", "--rounds", "1,2", "--local-steps", "3",
            "--local-step-size", "1.5", "--json"]
    assert main(argv) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [row["rounds"] for row in rows] == [1, 2]
    assert all(row["diagnostics"]["converges"] is False for row in rows)
    assert rows[1]["risk"] > 100.0 * rows[0]["risk"] > 0.0
