"""Issue 32, fuzz41 (left): what this fuzz found, each test failing before."""
import json

import pytest

from riskcalc.advise import from_clients
from tests.helpers import run_cli

BARE = [{"name": "a", "id": 3, "gamma": 0.5, "r": 1, "sigma": 0.5},
        {"name": "b", "gamma": 0.7, "r": 1, "sigma": 0.5}]


def test_bare_list_client_labels_are_ignored_and_unknown_keys_named(tmp_path, capsys):
    """F1: ``advise --clients-file`` on a bare list whose clients carry "name" (a key of the
    file's schema) said "client 0 must have r, sigma and one of gamma, n ...; got gamma, name,
    r, sigma", naming nothing wrong; the labels (name, id, se) are now ignored as in a versioned
    file, and ``from_clients`` names an unknown key."""
    path = tmp_path / "bare.json"
    path.write_text(json.dumps(BARE))
    code, out, err = run_cli(["advise", "--clients-file", path, "--json"], capsys)
    assert code == 0 and err == "" and json.loads(out)
    with pytest.raises(ValueError, match=r"client 1: unknown key 'foo' \(client keys: gamma"):
        from_clients([BARE[1], dict(BARE[1], foo=1)])
