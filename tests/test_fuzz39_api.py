"""Issue 32, fuzz39 (api): what this fuzz found, each test failing before."""

import json

import riskcalc
from riskcalc.errors import SolverError
from riskcalc.linear.finite_clients import pfedme_sigma
from tests.helpers import run_cli

FALLBACK = "answered by the spectrum route on the identity spectrum"


def _refuse(*args, **kwargs):
    raise SolverError("the scalar route refuses (test)")


def test_limit_clients_carries_the_fallback_note(monkeypatch, capsys):
    """F1: ``limit(clients=M)`` dropped the notes of pFedMe's fallback route (which
    ``clients_limit`` gives), so ``predict --clients M`` did not say it either."""
    monkeypatch.setattr(pfedme_sigma, "own_group_limits", _refuse)
    res = riskcalc.limit("pfedme", gamma=2.0, r=1.0, sigma=0.5, lam=0.5, clients=3)
    pop = riskcalc.clients_limit("pfedme", gamma=[2.0] * 3, r=1.0, sigma=0.5, lam=0.5)
    assert any(FALLBACK in n for n in res.notes) and res.notes == pop.notes
    assert abs(res.risk - pop.risk[0]) < 1e-12
    code, out, _ = run_cli(["predict", "pfedme", "--gamma", 2, "--r", 1, "--sigma", 0.5,
                            "--lam", 0.5, "--clients", 3, "--json"], capsys)
    assert code == 0 and any(FALLBACK in n for n in json.loads(out)["notes"])
