"""The federation file shared by tests/test_federation_file*.py and tests/test_strict_numbers.py:
a good file (``GOOD``, clients ``CLIENTS``), its variations and the command run in this process."""

import json

from riskcalc.cli import main


CLIENTS = [{"name": "a", "gamma": 0.5, "r": 1.0, "sigma": 0.5, "rho": 1.2},
           {"name": "b", "n": 50, "r": 0.5, "sigma": 1.0, "rho": 1.1},
           {"name": "c", "gamma": 1.5, "r": 1.5, "sigma": 0.5, "rho": 1.8}]
GOOD = {"fedrisk_federation": 1, "d": 100, "clients": CLIENTS}


def _run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _write(tmp_path, data, name="fed.json"):
    path = tmp_path / name
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def _with(client: int, **change):
    """GOOD with client ``client``'s keys changed (None deletes one)."""
    clients = [dict(c) for c in CLIENTS]
    for k, v in change.items():
        if v is None:
            clients[client].pop(k)
        else:
            clients[client][k] = v
    return {**GOOD, "clients": clients}


def _text(obj: dict) -> str:
    return json.dumps(obj)
