"""Issue 32, fuzz39 (api): what this fuzz found, each test failing before."""

import json

import numpy as np
import pytest

import riskcalc
from tests.helpers import run_cli

FALLBACK = "answered by the spectrum route on the identity spectrum"


def test_limit_clients_carries_the_fallback_note(capsys):
    """F1: ``limit(clients=M)`` dropped the notes of pFedMe's fallback route (which
    ``clients_limit`` gives): gamma 1, lam 1e-15, two clients, where the scalar route refuses
    and the spectrum route on the identity answers; so ``predict --clients M`` did not say it
    either."""
    kw = dict(r=1.0, sigma=0.5, lam=1e-15)
    res = riskcalc.limit("pfedme", gamma=1.0, clients=2, **kw)
    pop = riskcalc.clients_limit("pfedme", gamma=[1.0] * 2, **kw)
    assert any(FALLBACK in n for n in res.notes) and res.notes == pop.notes
    assert abs(res.risk - pop.risk[0]) < 1e-12 * res.risk
    code, out, _ = run_cli(["predict", "pfedme", "--gamma", 1, "--r", 1, "--sigma", 0.5,
                            "--lam", 1e-15, "--clients", 2, "--json"], capsys)
    assert code == 0 and any(FALLBACK in n for n in json.loads(out)["notes"])


def test_local_baselines_answer_with_clients_in_python_as_on_the_command_line(capsys):
    """F2: ``limit("local_ridge", clients=5)`` was refused ("finite-clients limits are
    implemented for ...") where ``predict --clients 5`` answered the oracle limit with a note;
    ``predict --clients M --weights uniform`` took the weights and ignored them where
    ``--federation`` refused them."""
    kw = dict(gamma=2.0, rho=1.0, sigma=0.5, lam=0.5)
    res = riskcalc.limit("local_ridge", clients=5, **kw)
    assert res.risk == riskcalc.limit("local_ridge", **kw).risk
    assert res.params["clients"] == 5 and res.params["weights"] == "samples"
    assert "uses no global model" in res.notes[-1]
    code, out, _ = run_cli(["predict", "local_ridge", "--gamma", 2, "--rho", 1, "--sigma", 0.5,
                            "--lam", 0.5, "--clients", 5, "--json"], capsys)
    assert code == 0 and json.loads(out) == json.loads(json.dumps(res.as_dict()))
    with pytest.raises(ValueError, match="weights must be one of samples, uniform"):
        riskcalc.limit("local", gamma=2.0, rho=1.0, sigma=0.5, clients=5, weights="bogus")
    code, _, err = run_cli(["predict", "local_ridge", "--gamma", 2, "--rho", 1, "--sigma", 0.5,
                            "--lam", 0.5, "--clients", 5, "--weights", "uniform"], capsys)
    assert code == 2 and err.startswith("error: --weights does not apply to local_ridge")


def _federation(tmp_path, gammas):
    clients = [{"name": f"c{j}", "gamma": g, "r": 1.0, "sigma": 0.5}
               for j, g in enumerate(gammas)]
    path = tmp_path / "fed.json"
    path.write_text(json.dumps({"fedrisk_federation": 1, "d": 20, "clients": clients}))
    return str(path)


def test_notes_about_another_client_name_it(tmp_path, capsys):
    """F3: ``compare ftfa --federation F`` (target at gamma 0.5, client 1 at gamma 1) printed
    "gamma = 1 ... the min-norm variance is infinite" beside the target's finite predicted
    variance, naming no client (``clients_limit``'s note)."""
    path = _federation(tmp_path, [0.5, 1.0])
    code, out, err = run_cli(["compare", "ftfa", "--federation", path, "--reps", 2,
                              "--no-progress"], capsys)
    assert code == 0, err
    assert "note: gamma = 1 with no ridge penalty at client 1 (0-based" in out
    res = riskcalc.clients_limit("maml_fl", gamma=[2.0, 2.0, 1.0, 1.0], r=1.0, sigma=0.5,
                                 alpha=0.1)
    assert "at clients 2, 3 (0-based, in the order given)" in res.notes[0]
    same = riskcalc.limit("ftfa", gamma=1.0, r=1.0, sigma=0.5, clients=3).notes
    assert "at client" not in same[0]
    assert riskcalc.clients_limit("ftfa", gamma=[1.0] * 3, r=1.0, sigma=0.5).notes == same


def test_limit_broadcasts_over_clients_as_logistic_limit():
    """F4: ``limit(clients=[3, 5])`` was refused ("clients must be an integer") where
    ``logistic_limit`` broadcasts over a list of clients; a ragged list is named."""
    kw = dict(gamma=[[2.0], [1.5]], r=1.0, sigma=0.5, lam=0.5)
    res = riskcalc.limit("rtfa", clients=np.array([3, 1000]), **kw)
    for i, g in enumerate((2.0, 1.5)):
        for j, m in enumerate((3, 1000)):
            one = riskcalc.limit("rtfa", clients=m, **{**kw, "gamma": g})
            assert res.risk[i, j] == pytest.approx(one.risk, rel=1e-13)
    assert json.loads(json.dumps(res.as_dict()))["params"]["clients"] == [3, 1000]
    local = riskcalc.limit("local", gamma=2.0, rho=1.0, sigma=0.5, clients=[2, 3])
    assert local.risk.tolist() == [0.75, 0.75]
    with pytest.raises(ValueError, match=r"clients must be a real number, got \[\[3, 3\], \[4"):
        riskcalc.limit("ftfa", gamma=2.0, r=1.0, sigma=0.5, clients=[[3, 3], [4]])


@pytest.mark.parametrize("method", ["rtfa", "local_ridge"])
def test_logistic_limit_with_clients_names_a_complex_lam(method):
    """F5: ``logistic_limit(..., clients=3, lam=0.5+0j)`` (rtfa, local_ridge) raised
    TypeError ("float() argument must be ... not 'complex'") where pfedme and every scalar
    route name lam."""
    with pytest.raises(ValueError, match=r"lam must be a real number, got \(0.5\+0j\)"):
        riskcalc.logistic_limit(gamma=2.0, signal=1.0, r=1.0, lam=0.5 + 0j, clients=3,
                                global_lam=0.1, method=method)


def test_local_steps_with_clients_record_them_as_without_steps(capsys):
    """F6: ``predict local_ridge --clients 3 --steps 3`` dropped clients from its params
    (without --steps they are there, as in ``steps_limit(..., clients=3)``)."""
    argv = ["predict", "local_ridge", "--gamma", 2, "--rho", 1, "--sigma", 0.5, "--lam", 0.5,
            "--clients", 3, "--steps", 3, "--step-size", 0.1, "--json"]
    code, out, _ = run_cli(argv, capsys)
    ref = riskcalc.steps_limit("local_ridge", gamma=2.0, rho=1.0, sigma=0.5, lam=0.5, steps=3,
                               step_size=0.1, clients=3)
    out, ref = json.loads(out), json.loads(json.dumps(ref.as_dict()))
    assert code == 0 and out["params"] == ref["params"] and out["risk"] == ref["risk"]
    assert set(ref["notes"]) < set(out["notes"])
