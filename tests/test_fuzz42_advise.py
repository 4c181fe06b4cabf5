"""Issue 32, fuzz42 (advise): what this fuzz found, each test failing before."""

import json

import pytest

from riskcalc.advise import Federation, advise
from tests.helpers import run_cli

#: Two clients 200 orders of magnitude apart: FedAvg's, FTFA's and RTFA's finite-M limits
#: overflowed there (the subordination derivative) until fuzz42 misc F4 computed them
#: rescaled; MAML-FL, pFedMe and local ridge (lam* in range at these rho) answer.
APART = [{"gamma": 1e-100, "r": 1.0, "sigma": 10.0, "rho": 1.0},
         {"gamma": 1e100, "r": 1.0, "sigma": 10.0, "rho": 1e10}]
OVERFLOWED = "finite-clients limit: the subordination derivative overflowed"


@pytest.fixture
def overflowing(monkeypatch):
    """FedAvg's and FTFA's finite-M candidates refusing as they did on ``APART`` before fuzz42
    misc F4 (a pipeline's refusal, whatever its cause, is what the policy is about)."""
    from riskcalc.advise import candidates
    from riskcalc.errors import SolverError

    def untuned(method, *args, **kwargs):
        raise SolverError(OVERFLOWED)

    monkeypatch.setattr(candidates, "untuned", untuned)


# --- F1: one pipeline's refusal aborted the whole advice ------------------------------------

def test_a_refused_pipeline_is_named_and_the_others_ranked(overflowing):
    """advise(gamma [1e-100, 1e100]) was the error 'the subordination derivative overflowed'
    (FedAvg's) although MAML-FL answers: the answering pipelines are now ranked and the refused
    one named with its reason (``refused``; JSON "refused": [{"method", "reason"}])."""
    fed = Federation(**{k: [c[k] for c in APART] for k in ("gamma", "r", "sigma", "rho")})
    adv = advise(fed, methods=["fedavg", "local_ridge"])
    assert [c.method for c in adv.candidates] == ["local_ridge"]
    assert [m for m, _ in adv.refused] == ["fedavg"]
    assert "subordination derivative overflowed" in adv.refused[0][1]
    out = json.loads(json.dumps(adv.as_dict()))
    assert out["refused"] == [{"method": "fedavg", "reason": adv.refused[0][1]}]
    assert out["skipped"] == list(adv.skipped)


def test_the_text_names_each_refused_pipeline_and_all_refused_is_one_error(tmp_path, capsys,
                                                                           overflowing):
    path = tmp_path / "apart.json"
    path.write_text(json.dumps(APART))
    code, out, err = run_cli(["advise", "--clients-file", path, "--methods",
                              "ftfa,local_ridge"], capsys)
    assert code == 0, err
    assert "refused: ftfa: finite-clients limit: the subordination derivative" in out
    assert "recommended for the federation: local_ridge" in out
    code, out, err = run_cli(["advise", "--clients-file", path, "--methods", "fedavg,ftfa"],
                             capsys)
    assert code == 2 and not out
    lines = err.strip().splitlines()
    # One line, each reason once with its pipelines.
    assert len(lines) == 1 and lines[0].startswith("error: no candidate"), err
    assert lines[0].count("subordination derivative overflowed") == 1
    assert "fedavg, ftfa: finite-clients limit" in lines[0]


# --- F2: "optimal weights, pfedme_rounds: ... gain -4.88% over samples" -----------------------

def test_weight_gains_leave_out_the_rounds_candidates():
    """advise --rounds 2 --methods pfedme printed 'optimal weights, pfedme_rounds: mean risk
    0.6485 vs samples 0.6183, uniform 0.6231 (gain -4.88% over samples)': the rounds
    candidate's "optimal" weights are pFedMe's, searched at T = inf, so the line contradicted
    its own name. Gains are now reported for searched weights only."""
    import numpy as np

    from riskcalc.advise import Advice, Candidate

    fed = Federation(gamma=[0.5, 2.0], r=[1.0, 0.5], sigma=[0.5, 1.0])
    p = np.array([0.5, 0.5])
    cands = (Candidate("pfedme", {"lam": 1.0}, "optimal", p, np.array([0.2, 1.1])),
             Candidate("pfedme", {"lam": 1.0}, "samples", p, np.array([0.3, 1.1])),
             Candidate("pfedme_rounds", {"rounds": 2}, "samples", p, np.array([0.5, 0.7]),
                       limit="rounds"),
             Candidate("pfedme_rounds", {"rounds": 2}, "optimal", p, np.array([0.6, 0.7]),
                       limit="rounds"))
    gains = Advice(fed, cands, ()).weight_gains()
    assert [g["method"] for g in gains] == ["pfedme"]


# --- F3: a shared tuning clamped to its grid's end -------------------------------------------

def test_shared_tuning_leaves_its_grid_where_the_risk_falls_beyond_it():
    """pFedMe at uniform weights, r_j = 1e-4, sigma_j = 1 (the grid 1e3 to 1e9 around the
    oracle lam*): tuned to the grid's end lam = 1e3, mean risk 0.587433, silently, where lam =
    10 gives 0.582002. The grid now grows past an end while the risk falls there."""
    from riskcalc.linear.finite_clients import clients_limit

    fed = Federation(gamma=[0.5, 2.0, 1.5], r=[1e-4] * 3, sigma=[1.0] * 3)
    adv = advise(fed, methods=["pfedme"])
    uniform = next(c for c in adv.candidates if c.weights == "uniform")
    assert uniform.tuning["lam"] < 100
    at10 = clients_limit("pfedme", lam=10.0, weights="uniform", **fed.limit_kwargs())
    assert uniform.mean_risk <= at10.mean_risk
    best = next(c for c in adv.candidates if c.weights == "optimal")
    # Within rounding: weights given as an array (optimal) and as "samples" evaluate the same
    # weights 1e-15 apart (fuzz42 rtfa F2 moved that rounding).
    assert best.mean_risk <= min(c.mean_risk for c in adv.candidates) * (1.0 + 1e-12)


# --- F4: a round count at the cap, said nothing ----------------------------------------------

def test_rounds_at_the_cap_with_the_risk_still_falling_say_so():
    """advise --rounds 2: FedAvg along the rounds (uniform weights) and every pFedMe rounds
    candidate stopped at T = 2, the cap, with the mean risk still falling there, and said
    nothing (fine-tuning steps at their cap say so). Now a note says it."""
    fed = Federation(gamma=[0.5, 2.0], r=[1.0, 0.5], sigma=[0.5, 1.0])
    adv = advise(fed, methods=["fedavg"], rounds=2, signal=1.0)
    early = {c.weights: c for c in adv.candidates if c.method == "fedavg_rounds"}
    assert early["uniform"].tuning["rounds"] == 2
    assert any("still decreases at the largest number of rounds tried (T = 2)" in n
               for n in early["uniform"].notes)
    assert early["samples"].tuning["rounds"] == 1
    assert not any("still decreases" in n for n in early["samples"].notes)


# --- F5: RuntimeWarnings from the tuning's Brent search --------------------------------------

def test_brent_takes_infinite_values_without_runtime_warnings():
    """advise() (MAML-FL, 10 clients at pooled N/d - 1 = 1e-6) printed 'RuntimeWarning: invalid
    value encountered in scalar subtract' from tune.brent: a limit not computed is an infinite
    value, and inf - inf on numpy scalars warns. Brent's arithmetic is on Python floats now."""
    import warnings

    import numpy as np

    from riskcalc.advise.tune import brent

    def fun(t):
        return np.float64(np.inf) if t > 0.45 else np.float64((t - 0.3) ** 2)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x, fx = brent(fun, np.float64(0.0), np.float64(1.0), np.float64(0.4), fun(0.4), 1e-5)
    assert abs(x - 0.3) < 1e-4 and fx < 1e-8


# --- F6: advise's time estimate next to a pinned client ------------------------------------

def test_the_estimate_grows_where_a_client_alone_is_at_its_own_threshold():
    """gamma [0.999999, 1e6] (pooled N/d - 1 = 2e-6, client 0 alone 1e-6 above N = d): MAML-FL
    took 75 s of CPU and pFedMe more than 150 s, estimated 40 and 36 s (each evaluation a
    pinned root next to client 0's cap, 4-6 s). The estimate now grows in log(1 / (N/d - 1))
    there; [0.9999, 1e6] (0.9 s measured) keeps the flat term."""
    from riskcalc.advise import estimate_seconds

    def est(gamma):
        fed = Federation(gamma=gamma, r=[1.0, 1.0], sigma=[0.5, 0.5])
        return estimate_seconds(fed, ["maml_fl", "pfedme"])

    pinned = est([0.999999, 1e6])
    assert pinned["maml_fl"] >= 75 and pinned["pfedme"] >= 150
    assert all(v < 60 for v in est([0.9999, 1e6]).values())


# --- F7: no candidate: one reason said fourteen times -----------------------------------------

def test_no_candidate_says_each_reason_once(tmp_path, capsys, overflowing):
    """advise --methods fedavg --rounds 2 on gamma [1e-100, 1e100]: the error repeated 'gamma:
    1e+100 (client 1, ...) is beyond 1e+10, ...' once per (weights, K) curve, 14 times in a line
    of ~5000 characters. Each reason is now said once, after what it left out."""
    path = tmp_path / "apart.json"
    path.write_text(json.dumps(APART))
    code, out, err = run_cli(["advise", "--clients-file", path, "--methods", "fedavg",
                              "--rounds", 2, "--signal", 1], capsys)
    assert code == 2 and not out
    assert len(err.strip().splitlines()) == 1, err
    assert err.count("is beyond 1e+10") == 1, err
    assert "fedavg along the rounds (uniform weights, K = inf)" in err
    assert err.count("subordination derivative overflowed") == 1, err


# --- F8: "use fewer clients" at two clients ----------------------------------------------------

def test_a_two_client_refusal_does_not_advise_fewer_clients(tmp_path, capsys):
    """advise --max-minutes 1e-9 on two clients: 'every pipeline alone exceeds it (...): use
    fewer clients, or allow more time': a federation has at least two clients, so that advice
    could not be followed."""
    path = tmp_path / "apart.json"
    path.write_text(json.dumps(APART))
    code, out, err = run_cli(["advise", "--clients-file", path, "--methods", "fedavg",
                              "--max-minutes", 1e-9], capsys)
    assert code == 2 and not out
    assert "fewer clients" not in err and "the fewest there are" in err, err
    assert "allow more time with --max-minutes" in err


def test_the_near_pooled_estimate_grows_with_the_clients():
    """100 clients at pooled N/d - 1 = 1e-4 (gamma_j spread as by ``numpy.random.
    default_rng(7)``): MAML-FL took 82.6 s of CPU, estimated 40 s by the flat term, which did
    not grow with M. The term now takes 1 + M / 50."""
    import numpy as np

    from riskcalc.advise import estimate_seconds

    base = np.random.default_rng(7).uniform(0.5, 3.0, 100)
    gamma = base * np.sum(1.0 / base) / (1.0 + 1e-4)
    fed = Federation(gamma=gamma, r=np.ones(100), sigma=np.full(100, 0.5))
    assert estimate_seconds(fed, ["maml_fl"])["maml_fl"] >= 82.6
