"""FTFA after round T under a covariance spectrum follows steps_limit's convention (issue 32:
"divergence is a result, reported the same way at any number of steps"): a client whose growth
overflows is inf (JSON null) with ``converges: false``, as with Sigma = I; a divergent but
representable FTFA is a value; one beyond the pencil's reach is a ValueError naming step_size
(it was a SolverError about "local steps", or a LinAlgError traceback)."""

import json

import numpy as np
import pytest

import riskcalc
from riskcalc.cli import main

SPEC = riskcalc.Spectrum([1.0, 2.5], weights=[0.5, 0.5])
GAM, R, SIG = [0.01, 4.0], [0.5, 0.3], [1.0, 0.7]


@pytest.fixture(scope="module")
def res():
    return riskcalc.rounds_limit("pfedme", gamma=GAM, r=R, sigma=SIG, signal=1.0,
                                 rounds=[0, 2, np.inf], local_steps=np.inf, lam=0.5,
                                 spectrum=SPEC)


@pytest.mark.parametrize("steps, step_size", [(4, 1e40), (200, 3.0)])
def test_overflowing_ftfa_is_inf(res, steps, step_size):
    """Growth beyond 1e250 on every client (before: "step_size: FTFA's ... steps diverge on
    client 1 ... overflows", a ValueError): inf, as ``steps_limit("local")`` at T = 0."""
    risk = res.personalized_risk(steps=steps, step_size=step_size)
    assert risk.shape == (2, 3) and np.all(risk == np.inf)
    for j in range(2):
        local = riskcalc.steps_limit("local", gamma=GAM[j], sigma=SIG[j],
                                     rho=np.hypot(1.0, R[j]), steps=steps,
                                     step_size=step_size, spectrum=SPEC)
        assert local.risk == np.inf


@pytest.mark.parametrize("steps, step_size", [(4, 2.0), (4, 10.0), (1, 1e8)])
def test_divergent_representable_ftfa_is_a_value(res, steps, step_size):
    """Client 1 diverges (step_size times its top 17.0 > 2): its risk at T = 0 (from w_0 = 0)
    equals ``steps_limit("local")`` under the same spectrum (a different route: the
    single-client Stieltjes recursions)."""
    risk = res.personalized_risk(steps=steps, step_size=step_size)
    assert np.all(np.isfinite(risk))
    for j in range(2):
        local = riskcalc.steps_limit("local", gamma=GAM[j], sigma=SIG[j],
                                     rho=np.hypot(1.0, R[j]), steps=steps,
                                     step_size=step_size, spectrum=SPEC)
        assert risk[j, 0] == pytest.approx(local.risk, rel=1e-9)


@pytest.mark.parametrize("step_size", [60.0, 100.0, 1e30])
def test_divergent_ftfa_beyond_the_pencil_is_refused_naming_step_size(res, step_size,
                                                                      monkeypatch):
    """4 steps with step_size times the top 1.0e3, 1.7e3 (risk growth 1e24, 1e26) or 3e31
    (1e250 not reached on client 0): beyond ``FTFA_REACH_DIGITS`` (20), refused before the
    extended pencil is solved. Newton's method there stops near its tolerance: before this
    check, step_size 60 converged (by rounding) while 47.8 and 100 did not."""
    from riskcalc.linear.dynamics.sigma import personalize_sigma

    def unreached(*args):
        raise AssertionError("the extended pencil was solved")
    monkeypatch.setattr(personalize_sigma, "solve_extended", unreached)
    with pytest.raises(ValueError, match=r"step_size: FTFA's 4 steps diverge on clients 0 "
                                         r"\(.*\), 1 .*lower step_size below 2 / top"):
        res.personalized_risk(steps=4, step_size=step_size)


def test_cli_prints_null_and_converges_false(capsys):
    code = main(["predict", "fedavg", "--gamma", "1.5", "--r", "1", "--sigma", "0.5",
                 "--clients", "2", "--rounds", "0,5", "--local-steps", "1",
                 "--local-step-size", "0.1", "--signal", "1", "--spectrum",
                 "two-point:1,2.5,0.5", "--steps", "4", "--step-size", "1e40", "--json"])
    rows = json.loads(capsys.readouterr().out)
    assert code == 0 and [r["personalized_risk"] for r in rows] == [None, None]
    assert all(r["personalization"]["converges"] is False and r["risk"] > 0 for r in rows)


def test_a_personalization_beyond_its_time_is_refused_naming_the_steps(res, monkeypatch):
    """FTFA's 9 steps after FedAvg's 5 rounds with gamma (1, 1.5) (192 contour nodes) ran past
    60 s (measured: 4 steps 25-80 s, 9 steps about 3 min); the two-point solve is now estimated
    first (``personal_seconds``) and refused beyond ``MAX_SECONDS``, naming the steps that fit.
    Staged on the cheap federation above with the limit lowered to what 2 steps cost."""
    import riskcalc.linear.dynamics.sigma.personalize_sigma as ps

    cap = ps.MAX_SECONDS     # the real limit: 9 steps there refused, 4 computed
    assert ps.personal_seconds(2, 10, 2, 192) > cap > ps.personal_seconds(2, 5, 2, 192)
    nodes = 16       # 2 T_max + 16 nodes at T_max = 2 with 17 solved: the estimate's input
    limit = ps.personal_seconds(2, 1 + 2, 2, nodes + 1)
    monkeypatch.setattr(ps, "MAX_SECONDS", limit)
    with pytest.raises(ValueError, match=r"would take about .* s here \(estimated; at most "
                                         r".*\); give steps <= 2, or fewer rounds"):
        res.personalized_risk(steps=6, step_size=0.05)
