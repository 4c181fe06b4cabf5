"""Issue 32, fuzz37 (fuzzfed): what this fuzz found, each test failing before."""

import json

from tests.helpers import run_cli

CLIENTS = [{"name": "a", "gamma": 0.5, "r": 1.0, "sigma": 0.5},
           {"name": "b", "gamma": 2.0, "r": 0.5, "sigma": 1.0},
           {"name": "c", "gamma": 1.5, "r": 0.7, "sigma": 0.3}]


def _write(tmp_path, clients=CLIENTS, name="fed.json", **top):
    path = tmp_path / name
    path.write_text(json.dumps({"fedrisk_federation": 1, **top, "clients": clients},
                               ensure_ascii=False), encoding="utf-8")
    return path


# --- F1: advise --signal beside the file's signal -----------------------------------------------

def test_advise_refuses_a_signal_beside_the_files_as_predict_does(tmp_path, capsys):
    """advise --rounds T --signal S with a file giving signal took S over the file's, silently,
    where predict --rounds and advise --model logistic refuse the same two values."""
    path = _write(tmp_path, signal=1.0)
    code, out, err = run_cli(["advise", "--federation", path, "--rounds", "3", "--signal", "2",
                              "--methods", "fedavg"], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err == (f"error: --signal does not apply with --federation {path}: the file gives "
                   "signal = 1\n")
