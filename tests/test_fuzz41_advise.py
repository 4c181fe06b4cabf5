"""Issue 32, fuzz41 (advise): what this fuzz found, each test failing before."""

import json

from riskcalc.advise import Federation
from tests.helpers import run_cli

CLIENTS = [{"name": "a", "id": 7, "gamma": 0.5, "r": 1.0, "sigma": 1.0, "se": {"r": 0.1}},
           {"name": "b", "id": 8, "gamma": 1.5, "r": 1.0, "sigma": 1.0}]


# --- F1: a bare list naming its clients --------------------------------------------------------

def test_a_bare_list_with_names_ids_and_se_is_read_as_the_versioned_object(tmp_path, capsys):
    """The file reader takes a client's name, id and se in a bare list as in the versioned
    object, but advise --clients-file (and Federation.from_file) then refused them: 'client 0
    must have r, sigma and one of gamma, n (optionally rho, spectrum); got gamma, id, name, r,
    se, sigma'. Both forms now give the same advice, the names shown."""
    bare, obj = tmp_path / "bare.json", tmp_path / "obj.json"
    bare.write_text(json.dumps(CLIENTS))
    obj.write_text(json.dumps({"fedrisk_federation": 1, "clients": CLIENTS}))
    fed = Federation.from_file(bare)
    assert fed.gamma.tolist() == [0.5, 1.5] and fed.r.tolist() == [1.0, 1.0]
    argv = ["advise", "--methods", "fedavg", "--no-progress", "--json"]
    code, out, err = run_cli(argv + ["--clients-file", bare], capsys)
    assert code == 0, err
    code2, out2, err2 = run_cli(argv + ["--federation", obj], capsys)
    assert code2 == 0, err2
    assert json.loads(out) == json.loads(out2)
    assert json.loads(out)["federation"]["names"] == ["a", "b"]
