"""Issue 32, fuzz36 (rounds): what this fuzz found, each test failing before."""

import json

import numpy as np
import pytest

import riskcalc
from tests.helpers import run_cli


def test_rtfa_after_rounds_under_covariate_shift_on_the_command_line(tmp_path, capsys):
    """``predict rtfa --rounds`` with per-client spectra was refused ("fedavg and pfedme/fedprox
    only") while ``rounds_limit("fedavg", spectra=...).personalized_risk(lam=...)`` and its
    simulation answer it (and ``predict fedavg --steps`` gives FTFA there): F1."""
    others = tmp_path / "others.json"
    others.write_text(json.dumps([{"gamma": 2.0, "r": 0.5, "sigma": 1.0,
                                   "spectrum": "scaled:3"}]))
    code, out, err = run_cli(["predict", "rtfa", "--gamma", 0.5, "--r", 1, "--sigma", 0.5,
                              "--clients-file", others, "--signal", 1, "--rounds", "0,1",
                              "--local-steps", "inf", "--lam", 0.3, "--json"], capsys)
    assert code == 0, err
    rows = json.loads(out)
    assert [r["personalization"]["method"] for r in rows] == ["rtfa", "rtfa"]
    assert [round(r["personalized_risk"], 6) for r in rows] == [0.334293, 0.214964]


def test_rounds_to_eps_below_the_curves_resolution_is_refused():
    """FedAvg with exact local solves, contraction 0.2: eps = 1e-18 of the risk and 1e-300 of
    the distance were both answered T = 23, where the curve is the fixed point to rounding
    (rho^T < 1e-16); the gaps fall like 0.2^T and reach those eps only past T = 60 (the risk's
    1e-300 past T = 420): F2."""
    kw = dict(gamma=[0.5, 2], r=0.5, sigma=0.5, signal=1.0, local_steps=np.inf, max_rounds=60)
    for of, eps in (("risk", 1e-18), ("distance", 1e-300)):
        with pytest.raises(ValueError, match=r"below what the curve resolves.*eps >= 1\.\d+e-12"):
            riskcalc.rounds_to_eps("fedavg", eps=eps, of=of, **kw)
    assert riskcalc.rounds_to_eps("fedavg", eps=1e-10, **kw).rounds == 14


def test_algorithm1_lam_far_above_the_clients_spectra_named():
    """Algorithm 1, Sigma = I, gamma (0.5, 3) (L = 7.46): lam = 1e14 with global_step 0.4 (the
    round map of FedAvg's one step of 0.4, contraction 0.95229) reported contraction 0.95344,
    and lam = 1e20 was refused as "pooled N = d: sum_j 1/gamma_j = 2.333, near 1; move
    gamma": F3."""
    kw = dict(gamma=[0.5, 3.0], r=0.3, sigma=0.5, signal=1.0, rounds=[1, np.inf])
    for lam, g in ((1e14, 0.4), (1e20, None)):
        with pytest.raises(ValueError, match=r"lam = 1e\+\d+ is .* times the top of the "
                                             r"clients' sample spectra L = 7.464.*L = 7.464e\+06"):
            riskcalc.rounds_limit("pfedme", local_steps=np.inf, lam=lam, global_step=g, **kw)


def test_algorithm1_contour_advice_where_lam_is_large():
    """Algorithm 1 with K = 3 local steps near their bound at lam = 1e5 (L = 2.9): the refusal
    advised "give a larger lam or step_size (1 - top grows with both)", but past the clients'
    sample eigenvalues 1 - top falls like L / lam: a larger lam makes it worse: F4."""
    L = (1 + np.sqrt(0.5)) ** 2
    with pytest.raises(ValueError, match=r"would take .* a smaller lam where lam is far above"):
        riskcalc.rounds_limit("pfedme", gamma=[0.5] * 3, r=0.3, sigma=0.5, signal=1.0,
                              rounds=[1], local_steps=3, step_size=0.9 / (L + 1e5), lam=1e5)


SIM = dict(gamma=[0.5, 2.0], r=0.5, sigma=0.5, signal=1.0, rounds=[0, 1, 5], local_steps=3,
           step_size=0.1, d=40, reps=2)


def test_simulation_refuses_local_steps_past_the_floats():
    """simulate_rounds with step_size 1e100 (K = 3: the filter grows by 1e302) reported inf at
    T = 0, the zero model of risk 1.25, and 1e300 (past rounds_limit's 1e100) raised numpy's
    "zero-size array to reduction operation maximum": F5."""
    from montecarlo.linear.rounds import simulate_rounds

    with pytest.raises(ValueError, match=r"step_size = 1e\+100: the local steps diverge .*"
                                         r"10\^302"):
        simulate_rounds("fedavg", **{**SIM, "step_size": 1e100})
    with pytest.raises(ValueError, match=r"step_size must lie in \(0, 1e\+100\]"):
        simulate_rounds("fedavg", **{**SIM, "step_size": 1e300})


def test_simulation_refuses_a_matrix_of_rounds():
    """simulate_rounds(rounds=[[1, 2], [5, 7]]) simulated four rounds (rounds_limit refuses
    it: a 1-d list): F6."""
    from montecarlo.linear.rounds import simulate_rounds

    with pytest.raises(ValueError, match=r"rounds must be a 1-d list of numbers, got an array "
                                         r"of shape \(2, 2\)"):
        simulate_rounds("fedavg", **{**SIM, "rounds": [[1, 2], [5, 7]]})


def test_simulation_memory_refusal_names_the_client_sizes():
    """gamma 1e-100 (n = 4e101 rows at d = 40) was refused with "lower d" only, which no d >= 2
    fixes: F7."""
    from montecarlo.linear.rounds import simulate_rounds

    with pytest.raises(ValueError, match=r"lower d or raise the smallest gamma_j \(n_j = d / "
                                         r"gamma_j rows: 4e\+101 for client 0\)"):
        simulate_rounds("fedavg", **{**SIM, "gamma": [1e-100, 2.0]})


def test_algorithm1_many_local_steps_bounded(monkeypatch):
    """Algorithm 1, Sigma = I, with local_steps = 10^6 (step 0.2, lam 0.7) ran for minutes with
    no estimate (K = 1000: 2.4 s; every edge solve sums over the K steps), where FedAvg caps K
    at 10^4 and takes the exact local solve once the steps reach it to rounding: now the same,
    |1 - step_size (s + lam)|^K below 2^-53 (equal to the exact prox: K = 400 within 3e-16):
    F8."""
    from riskcalc.linear.dynamics import ROUTES

    def slow(*args):
        raise AssertionError("the K-step route ran for K = 10^6 (minutes)")

    kw = dict(gamma=[0.5, 3.0], r=0.3, sigma=0.5, signal=1.0, lam=0.7, rounds=[1, 5])
    monkeypatch.setitem(ROUTES, "pfedme_steps", slow)
    many = riskcalc.rounds_limit("pfedme", local_steps=10 ** 6, step_size=0.2, **kw)
    prox = riskcalc.rounds_limit("pfedme", local_steps=np.inf, **kw)
    np.testing.assert_array_equal(many.risk, prox.risk)
    assert many.params["local_steps"] == 10 ** 6
    with pytest.raises(ValueError, match=r"local_steps = 20000: .*\(1 - 7e-08\)\^K"):
        riskcalc.rounds_limit("pfedme", local_steps=20000, step_size=1e-7, **kw)


def test_refusals_find_what_fits_without_a_scan_of_every_count():
    """Under a spectrum, Algorithm 1 with local_steps = 10^6 took 8 s to be refused (the
    refusal tried every local_steps below K for the largest that fits) and 2^53 did not end;
    FedAvg's chain and the memory check scanned likewise: now a bisection of the growing
    estimates, the same answer: F9."""
    from riskcalc.linear.dynamics.sigma.algorithm1 import cost

    calls = []

    def counted(m, k, atoms, nodes, scans):
        calls.append(k)
        return cost.alg1_chain_seconds(m, k, atoms, nodes, scans)

    with pytest.raises(ValueError, match=r"local_steps = 100000, .*give local_steps <= (\d+)") \
            as info:
        cost._affordable(3, 10 ** 5, 2, 40, 5, 4, seconds=counted)
    k = int(info.value.args[0].split("local_steps <= ")[1].split(",")[0])
    assert counted(3, k, 2, 40, 4) <= 600 < counted(3, k + 1, 2, 40, 4)
    assert len(calls) < 200, len(calls)


@pytest.mark.parametrize("method, extra", [("fedavg", {}), ("pfedme", {"lam": 0.5})])
def test_personalization_size_refused_before_allocating(method, extra):
    """Under covariate shift with exact local solves (FedAvg) or exact prox (Algorithm 1),
    ``personalized_risk(steps=10**6, ...)`` raised numpy's MemoryError "Unable to allocate 65.5
    TiB" (np.eye of the extended pencil, built before its size check): F10."""
    res = riskcalc.rounds_limit(method, gamma=[0.5, 2.0], r=0.3, sigma=0.5, signal=1.0,
                                rounds=[1], local_steps=np.inf, spectra=["identity", "scaled:2"],
                                **extra)
    with pytest.raises(ValueError, match=r"personalization from the round-T model solves "
                                         r"M \(K \+ k\)\^2 = \d+ unknowns .*steps <= \d+ fits"):
        res.personalized_risk(steps=10 ** 6, step_size=0.05)
