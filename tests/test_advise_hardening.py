"""Advise hardening (issues 30/32, fuzz rows 10 and 14 of session 21): pFedMe's finite-M limit
where one client dwarfs the others (``finite_clients.own._subordination``: the root pinned at
the cap) and ties between risks at rounding level in ``advise --data``."""

import json
import time

import numpy as np
import pytest

import riskcalc
from riskcalc.cli import main
from riskcalc.errors import SolverError


def _cpu(fun):
    start = time.process_time()
    out = fun()
    return out, time.process_time() - start


@pytest.mark.parametrize("ratio", [1e10, 1e50])
def test_pfedme_with_one_client_dwarfing_the_other_answers_fast(ratio):
    """gamma (ratio, 1 / ratio), samples weights: the global model is client 1's (weight
    1 - 1e-2k), so client 0 (no data to speak of) gets ||theta_0 - theta_1||^2 = r^2 + r^2 = 2
    and client 1 its own ridge, whose variance sigma^2 gamma / (1 + ...) is below 1e-10 (risk
    within rounding, 1e-15, of it). Was 7.4 s per point, then SolverError (no bracket for
    tau(A^-1): g pinned within rounding of client 1's cap, the bracket halved toward it 200
    times with 200 inner halvings each)."""
    res, cpu = _cpu(lambda: riskcalc.clients_limit("pfedme", gamma=[ratio, 1 / ratio], r=1,
                                                   sigma=1, lam=1))
    assert cpu < 0.5, cpu
    assert res.risk[0] == pytest.approx(2.0, rel=1e-9)
    assert 0 <= res.risk[1] <= 1 / ratio + 1e-15


def test_pfedme_pinned_root_matches_the_newton_route_and_least_squares():
    """Independent routes: at gamma (1e5, 1e-5) Newton's method (``own._newton``) answers, at
    (1e7, 1e-7) the nested solves end at the cap (``pinned``). Both give client 1 (whose data
    set the global model) the least-squares variance sigma^2 gamma / (1 - gamma) to 1e-6 (its
    bias, ~gamma^2, is below that), and client 0 risk 2 to 1e-4 (its own data move it by
    ~1 / gamma)."""
    near = riskcalc.clients_limit("pfedme", gamma=[1e5, 1e-5], r=1, sigma=1, lam=1)
    far, cpu = _cpu(lambda: riskcalc.clients_limit("pfedme", gamma=[1e7, 1e-7], r=1, sigma=1,
                                                   lam=1))
    assert cpu < 0.5, cpu
    for res, g in ((near, 1e-5), (far, 1e-7)):
        assert res.risk[1] == pytest.approx(g / (1 - g), rel=1e-6)
        assert res.risk[0] == pytest.approx(2.0, rel=1e-4)


def test_pfedme_pinned_beyond_reach_refuses_fast_saying_why():
    """gamma (1e7, 1e-7) at lam = 1e-3: the inner solves cannot reach the root next to the
    cap; refused within 0.5 s CPU, naming the cause (was a slow 'no bracket')."""
    with pytest.raises(SolverError, match="pinned within rounding.*dwarfs the others'"):
        start = time.process_time()
        try:
            riskcalc.clients_limit("pfedme", gamma=[1e7, 1e-7], r=1, sigma=1, lam=1e-3)
        finally:
            assert time.process_time() - start < 0.5


def test_advise_on_fuzz_row_10_answers_within_seconds(tmp_path, capsys):
    """Fuzz row 10: advise on gamma (1e50, 1e-50) ran past 5 minutes (pFedMe's 7.4 s failure
    at every grid point); now it recommends, every client risk 2 or ~0."""
    fed = tmp_path / "fed.json"
    fed.write_text(json.dumps({"fedrisk_federation": 1, "clients": [
        {"gamma": 1e50, "r": 1, "sigma": 1}, {"gamma": 1e-50, "r": 1, "sigma": 1}]}))
    code, cpu = _cpu(lambda: main(["advise", "--federation", str(fed)]))
    out = capsys.readouterr().out
    assert code == 0 and cpu < 5, cpu
    assert "recommended for the federation:" in out and "pfedme" in out
