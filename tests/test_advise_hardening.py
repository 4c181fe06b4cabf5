"""Advise hardening (issues 30/32, fuzz rows 10 and 14 of session 21): pFedMe's finite-M limit
where one client dwarfs the others (``finite_clients.own._subordination``: the root pinned at
the cap) and ties between risks at rounding level in ``advise --data``."""

import json
import re
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


@pytest.mark.parametrize("lam", [0.3, 0.1, 0.03, 1e-2, 1e-3, 1e-4, 1e-6])
def test_pfedme_pinned_answers_right_or_refuses_fast_saying_why(lam):
    """gamma (1e7, 1e-7) below lam = 1: whether the inner solves reach the root next to the cap
    is rounding luck (lam 0.3 and 1e-3 were refused, 0.1 answered; with the objective divided
    by lam, 0.1 and 1e-4 are refused, 0.3 and 1e-3 answer), so each lam must either answer
    what lam = 1 answers (client 0 risk 2, client 1 least squares: its data set the global
    model) or be refused within 0.5 s CPU, naming the cause (was a slow 'no bracket')."""
    start = time.process_time()
    try:
        res = riskcalc.clients_limit("pfedme", gamma=[1e7, 1e-7], r=1, sigma=1, lam=lam)
    except SolverError as exc:
        assert re.search("pinned within rounding.*dwarfs the others'", str(exc)), exc
    else:
        assert res.risk[1] == pytest.approx(1e-7 / (1 - 1e-7), rel=1e-6)
        assert res.risk[0] == pytest.approx(2.0, rel=1e-4)
    assert time.process_time() - start < 0.5



@pytest.mark.parametrize("gamma", [1e8, 1e9])
@pytest.mark.parametrize("lam", [0.3, 1e-3])
def test_pfedme_dwarfed_client_answers_its_limit(gamma, lam):
    """gamma (1e8, 1e-8) and (1e9, 1e-9): client 0's weight p_0 tau(phi) lies below rounding of
    1 / g, so its t_0 = 1 / g to double precision; its bracketed solve found f(lo) > 0 by
    rounding and, after 200 outer steps (3 s), the refusal 'no bracket ... give a larger lam'
    (lam was not the cause). The answer is the limit of lam = 1's test above: client 1 (whose
    data set the global model) least squares, client 0 risk 2."""
    res, cpu = _cpu(lambda: riskcalc.clients_limit("pfedme", gamma=[gamma, 1 / gamma], r=1,
                                                   sigma=1, lam=lam))
    assert res.risk[1] == pytest.approx((1 / gamma) / (1 - 1 / gamma), rel=1e-6)
    assert res.risk[0] == pytest.approx(2.0, rel=1e-4)
    assert cpu < 0.5, cpu

def test_advise_on_fuzz_row_10_answers_within_seconds(tmp_path, capsys):
    """Fuzz row 10: advise on gamma (1e50, 1e-50) ran past 5 minutes (pFedMe's 7.4 s failure
    at every grid point); now pFedMe (the slow one) with FedAvg beside it answers in about a
    second (the full advise: 1.2 s CPU, loaded machine)."""
    fed = tmp_path / "fed.json"
    fed.write_text(json.dumps({"fedrisk_federation": 1, "clients": [
        {"gamma": 1e50, "r": 1, "sigma": 1}, {"gamma": 1e-50, "r": 1, "sigma": 1}]}))
    code, cpu = _cpu(lambda: main(["advise", "--federation", str(fed), "--no-progress",
                                   "--methods", "pfedme,fedavg"]))
    out = capsys.readouterr().out
    assert code == 0 and cpu < 3, cpu
    assert "recommended for the federation:" in out and "pfedme" in out


def _advice(fed, means):
    from riskcalc.advise import Advice, Candidate

    return Advice(fed, tuple(Candidate("ftfa", {}, w, None, np.full(fed.m, v))
                             for w, v in zip(("samples", "uniform"), means)), ())


def test_ties_have_a_floor_at_the_risk_scale_including_the_signal():
    """``result.tied``: 1e-16 vs 3e-16 (ratio 3) are tied when the scale is the signal
    rho^2 = 4 (r = sigma = 0: noise-free homogeneous data; floor 4e-12) and that mean risk
    is itself a tie with 0 (``at_rounding``); at r = 1e-9 and no rho (scale 1e-18: real
    risks of that size) they are not; a real 1e-8 difference at scale 1 is not a tie."""
    from riskcalc.advise import Federation

    signal = Federation(gamma=[0.5, 0.5], r=[0, 0], sigma=[0, 0], rho=[2, 2])
    adv = _advice(signal, [1e-16, 3e-16])
    assert adv.ties() == [1] and adv.at_rounding()
    tiny = _advice(Federation(gamma=[0.5, 0.5], r=[1e-9, 1e-9], sigma=[0, 0]), [1e-16, 3e-16])
    assert tiny.ties() == [] and not tiny.at_rounding()
    real = _advice(Federation(gamma=[0.5, 0.5], r=[1, 1], sigma=[0, 0]), [1.0, 1.0 + 1e-8])
    assert real.ties() == [] and not real.at_rounding()


def test_noise_free_data_give_no_rounding_noise_recommendation(tmp_path, capsys):
    """Fuzz row 14: y = X theta exactly (3 clients, d = 6, n_j = 30): every risk is 1e-16
    or less (rounding) at a signal ||theta||^2 ~ 4. Was: 'recommended ... local_ridge',
    fedavg (1.8e-16) not tied, and 'recommendation local_ridge in 0% of the draws'
    (rounding noise picking each draw's winner). Now every pipeline ties, the best is not
    called a recommendation and the bootstrap line says there is none to test."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((90, 6))
    data = tmp_path / "fed.npz"
    np.savez(data, X=X, y=X @ rng.standard_normal(6), client=np.repeat(np.arange(3), 30))
    code = main(["advise", "--data", str(data), "--bootstrap", "5", "--no-progress",
                 "--methods", "local_ridge,fedavg,ftfa"])
    out = capsys.readouterr().out
    assert code == 0
    assert "recommended for" not in out and "best (at rounding level) for" in out
    assert "not a recommendation" in out and "the 7 pipelines tied with it" in out
    assert "no recommendation to test" in out and "tied with it in 100% of the draws" in out
