"""``riskcalc predict|compare pfedme --rounds ... --federation F``: paper 004's Algorithm 1 along
the rounds under covariate shift on the command line (the federation file's per-client
spectra; ``riskcalc.cli.options.rounds``)."""

import json

import numpy as np
import pytest

import riskcalc
from tests.helpers import run_cli

GAM, R, SIG = [0.5, 2.0], [0.3, 0.8], [0.4, 0.6]
ANTI = ["two-point:1,4,0.5", "two-point:4,1,0.5"]
ARGS = ["--rounds", "0,2,inf", "--local-steps", "2", "--local-step-size", "0.04", "--lam",
        "0.8", "--global-step", "1.5", "--json"]


def _fed(tmp_path):
    clients = [{"name": f"c{j}", "gamma": g, "r": r, "sigma": s, "spectrum": spec}
               for j, (g, r, s, spec) in enumerate(zip(GAM, R, SIG, ANTI))]
    path = tmp_path / "fed.json"
    path.write_text(json.dumps({"fedrisk_federation": 1, "signal": 1.2, "clients": clients}))
    return str(path)


@pytest.fixture(scope="module")
def ref():
    """rounds_limit at ``ARGS`` on the federation of ``_fed``: one solve for the rows of
    predict, compare and FTFA after the rounds."""
    return riskcalc.rounds_limit("pfedme", gamma=GAM, r=R, sigma=SIG, signal=1.2,
                                 rounds=[0, 2, np.inf], local_steps=2, step_size=0.04, lam=0.8,
                                 global_step=1.5, spectra=ANTI)


def test_predict_and_compare_rows(ref, capsys, tmp_path):
    """predict's rows are rounds_limit's (the target's own model as risk, the server model as
    global_risk); compare adds the simulation on the same federation at d (both columns)."""
    path = _fed(tmp_path)
    code, out, _ = run_cli(["predict", "fedprox", "--federation", path, *ARGS], capsys)
    assert code == 0
    rows = json.loads(out)
    assert [row["risk"] for row in rows] == pytest.approx(ref.risk[0], rel=1e-12)
    assert [row["global_risk"] for row in rows] == pytest.approx(ref.global_risk[0], rel=1e-12)
    assert rows[0]["params"]["spectra"] == ANTI
    code, out, _ = run_cli(["compare", "pfedme", "--federation", path, *ARGS, "--d", "40",
                            "--reps", "2", "--seed", "3", "--no-progress"], capsys)
    assert code == 0
    rows = json.loads(out)
    assert [row["predicted"]["risk"] for row in rows] == pytest.approx(ref.risk[0], rel=1e-12)
    assert all(row["simulated"]["d"] == 40 and row["simulated"]["risk"] > 0 for row in rows)


def test_predict_ftfa_after_the_rounds(ref, capsys, tmp_path):
    """--steps k --step-size e: FTFA from the round-T server model under shift, the rows'
    personalized_risk is RoundsLimit.personalized_risk's (``shift.algorithm1.personalize``)."""
    code, out, _ = run_cli(["predict", "pfedme", "--federation", _fed(tmp_path), *ARGS,
                            "--steps", "2", "--step-size", "0.05"], capsys)
    assert code == 0
    rows = json.loads(out)
    want = ref.personalized_risk(steps=2, step_size=0.05)[0]
    assert [row["personalized_risk"] for row in rows] == pytest.approx(want, rel=1e-12)
    assert all(row["personalization"]["converges"] for row in rows)


def test_exact_prox_rows(capsys, tmp_path):
    """--local-steps inf under shift (the exact prox along the rounds,
    ``shift.algorithm1.prox``): predict's rows are rounds_limit's."""
    i = ARGS.index("--local-step-size")
    argv = ["predict", "pfedme", "--federation", _fed(tmp_path), *ARGS[:i], *ARGS[i + 2:]]
    argv[argv.index("2")] = "inf"
    code, out, _ = run_cli(argv, capsys)
    assert code == 0
    ref = riskcalc.rounds_limit("pfedme", gamma=GAM, r=R, sigma=SIG, signal=1.2,
                                rounds=[0, 2, np.inf], local_steps=np.inf, lam=0.8,
                                global_step=1.5, spectra=ANTI)
    rows = json.loads(out)
    assert [row["risk"] for row in rows] == pytest.approx(ref.risk[0], rel=1e-12)
    assert [row["global_risk"] for row in rows] == pytest.approx(ref.global_risk[0], rel=1e-12)
