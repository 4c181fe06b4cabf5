"""Issue 32, fuzz39 (logi): what this fuzz found, each test failing before."""
import pytest

from tests.helpers import run_cli


def test_sweep_local_ridge_notes_that_global_lam_plays_no_part(capsys):
    # F1 (session 38's leftover 6): predict noted it, the logistic sweep dropped every
    # prediction's notes (its rows' global_lam column empty, nothing said).
    code, _, err = run_cli(["sweep", "local_ridge", "--model", "logistic", "--lam", "2",
                            "--gamma", "2", "--signal", "0.5", "--r", "0.5", "--global",
                            "federated", "--clients", "2", "--global-lam", "0.1", "--d", "4",
                            "--reps", "2", "--no-progress"], capsys)
    assert code == 0 and "note: local_ridge uses no global model: global_lam" in err


def test_the_simulator_reads_an_integral_float_target_as_the_limits_do():
    # F2 (session 38's leftover 6): logistic_clients_limit(target=1.0) answered for client 1
    # (positive_int: an integral float is the integer, as d = 4.0 is here) while the simulator
    # refused target=1.0 ("must be an integer").
    from montecarlo.logistic import pipeline

    kw = dict(gammas=[2.0, 2.0], rs=[0.5, 0.5], signal=0.5, lams=[2.0], global_lam=0.1, d=4,
              seed=0, rep=0)
    assert pipeline.simulate_replicate(target=1.0, **kw) == \
        pipeline.simulate_replicate(target=1, **kw)


@pytest.mark.parametrize("method", ["pfedme", "fedprox"])
def test_pfedme_at_lam_zero_names_the_option(method, capsys):
    # F3 (session 38's leftover 6): "error: lam must lie in (0, inf), got 0.0" named no option.
    code, _, err = run_cli(["predict", method, "--model", "logistic", "--lam", "0", "--gamma",
                            "1", "--signal", "1", "--r", "1", "--clients", "3", "--global-lam",
                            "0.1"], capsys)
    assert code == 2 and err.startswith("error: --lam 0: METHOD pfedme needs --lam > 0")
    assert len(err.strip().splitlines()) == 1
