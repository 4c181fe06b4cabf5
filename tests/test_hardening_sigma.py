"""Issue 32, fifth hardening pass: the rounds limits under a covariance spectrum
(``riskcalc.linear.dynamics.sigma``), their command line, ``advise`` with rounds, and FTFA after
round T whose growth overflows. The old behaviour is in each test's docstring; where the new one
is a value it is checked against an independent route.
"""

import json
import shlex
import time

import numpy as np
import pytest

import riskcalc
from riskcalc import Spectrum
from riskcalc.cli import main

FED = dict(gamma=[0.5, 2.0], r=0.5, sigma=0.5, signal=1.0)
# Tests here bound the time of refusals: every edge scan is solved anew (conftest).
pytestmark = pytest.mark.usefixtures("fresh_sigma_edges")


def _round_map_bottom(atoms, gam, K, eta, d=200, seed=0):
    """The smallest eigenvalue of FedAvg's round map D = sum_j p_j (I - (I - eta S_j)^K) over
    its largest, at dimension d (rows N(0, diag(atoms)), p_j = n_j / N): the literal matrix."""
    rng = np.random.default_rng(seed)
    s = np.repeat(atoms, d // len(atoms))
    n = (d / np.asarray(gam)).astype(int)
    D = np.zeros((d, d))
    for nj in n:
        X = rng.standard_normal((nj, d)) * np.sqrt(s)
        A = np.eye(d) - eta * (X.T @ X) / nj
        D += nj / n.sum() * (np.eye(d) - np.linalg.matrix_power(A, K))
    ev = np.linalg.eigvalsh(D)
    return ev.min() / ev.max()


def test_a_band_of_the_round_map_below_the_pencil_scan_is_refused_not_dropped():
    """Atoms (1e-4, 1), FedAvg K = 3: the pencil's edge scan (down to 1e-4 of the top) missed
    the round map's lower band and answered contraction 0.913 and a fixed-point risk 0.0795;
    the literal iteration at d = 400 has contraction 0.99999 and risk 0.197 +- 0.005 (measured,
    6 replicates). Algorithm 1 with exact prox at atoms (1e-12, 1) the same (contraction 0.786).
    Now refused before solving; the band is really there (the literal matrix at d = 200)."""
    for atoms, kw, method in (([1e-4, 1.0], dict(local_steps=3, step_size=0.1), "fedavg"),
                              ([1e-12, 1.0], dict(local_steps=np.inf, lam=1.0), "pfedme")):
        with pytest.raises(ValueError, match=r"reaches down to at most .* below the 0.0001 "
                                             r"this route resolves"):
            riskcalc.rounds_limit(method, **FED, rounds=[0, 5, np.inf], **kw,
                                  spectrum=Spectrum(atoms, [0.5, 0.5]))
    assert _round_map_bottom([1e-4, 1.0], FED["gamma"], 3, 0.1) < 1e-4


def test_a_spectrum_that_brings_the_round_map_near_zero_is_not_blamed_on_gamma():
    """K = 1, atoms (1e-12, 1), gamma (0.5, 2) (pooled N = 2.5 d): the refusal said "pooled
    N = d exactly: sum_j min(1, 1/gamma_j) = 1; move gamma off the threshold", neither true;
    now it gives sum_j 1/gamma_j and names the spectrum's range. ``advise`` with rounds lost
    the whole ranking to it; now its FedAvg-along-the-rounds candidates are skipped, said so."""
    with pytest.raises(ValueError, match=r"sum_j 1/gamma_j = N / d = 2.5, off that threshold: "
                                         r"the covariance spectrum's eigenvalues \(1e-12..1, "
                                         r"ratio 1e\+12\)"):
        riskcalc.rounds_limit("fedavg", **FED, rounds=[0, 5], local_steps=1, step_size=0.2,
                              spectrum=Spectrum([1e-12, 1.0], [0.5, 0.5]))
    from riskcalc.advise import Federation, advise

    fed = Federation(gamma=FED["gamma"], r=[0.5, 0.5], sigma=[0.5, 0.5],
                     spectrum=Spectrum([1e-12, 1.0], [0.5, 0.5]))
    adv = advise(fed, methods=["fedavg"], rounds=5, signal=1.0)
    assert {c.method for c in adv.candidates} == {"fedavg"}
    assert adv.skipped and all("fedavg along the rounds" in s and "narrower range" in s
                               for s in adv.skipped)
    # K = 1 for both weightings (and K >= 2 where advise tunes the local steps too).
    assert all(any(f"({w} weights, K = 1)" in s for s in adv.skipped)
               for w in ("samples", "uniform"))


@pytest.mark.parametrize("method, kw", [
    ("fedavg", dict(local_steps=1, step_size=0.1)),
    ("pfedme", dict(local_steps=np.inf, lam=1.0)),
    ("fedavg", dict(local_steps=1, step_size=0.1, spectrum="two-point:1,3,0.5")),
    ("pfedme", dict(local_steps=np.inf, lam=1.0, spectrum="two-point:1,3,0.5"))])
@pytest.mark.parametrize("gamma, sum_", [([1.0, 1e100], "1"), ([2.0, 2.0 + 1e-12], "1 - 2.5e-13")])
def test_pooled_n_equal_to_d_within_rounding_is_refused_at_once(method, kw, gamma, sum_):
    """gamma (1, 1e100): sum_j 1/gamma_j = 1 + 1e-100, pooled N = d to rounding, where the
    round map's spectrum reaches 0. Was: "support edge of the round map: no real solution at
    the start of the scan (inputs beyond floating point range?)" (Sigma = I), "the secular
    equation of the support edges has no root" (Algorithm 1 under a spectrum)."""
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=r"gamma: the round map's spectrum reaches 0 \(pooled "
                                         rf"N = d: sum_j 1/gamma_j = {sum_}, 1 within 1e-9\)"):
        riskcalc.rounds_limit(method, gamma=gamma, r=0.5, sigma=0.5, signal=1.0,
                              rounds=[0, 5], **kw)
    assert time.perf_counter() - t0 < 1.0


def test_one_client_with_more_samples_than_d_is_not_at_the_threshold():
    """sum_j 1/gamma_j (not sum_j min(1, 1/gamma_j), which is 1 for any single gamma < 1) is
    the pooled N / d: gamma = 0.5 alone answers, and at T = inf equals FedAvg's finite-M
    limit (least squares on 2 d samples)."""
    res = riskcalc.rounds_limit("fedavg", gamma=0.5, r=0.5, sigma=0.5, signal=1.0,
                                rounds=[np.inf], local_steps=1, step_size=0.2)
    lim = riskcalc.clients_limit("fedavg", gamma=[0.5], r=0.5, sigma=0.5)
    assert res.risk[0, 0] == pytest.approx(lim.risk[0], rel=1e-9)


def test_algorithm1_refuses_a_client_with_almost_no_data():
    """gamma (0.5, 1e8): the own model's risk at T = inf was 0.69856 where
    ``clients_limit("pfedme")`` (pFedMe's minimizer, the same fixed point) gives 0.75; 1e7
    and 3e7 failed with "pooled N = d exactly" and "no real solution". Refused beyond 1e5,
    where the two routes still agree."""
    with pytest.raises(ValueError, match=r"gamma: 1e\+08 \(client 1, about d / 1e\+08 "
                                         r"samples\) is beyond 100000"):
        riskcalc.rounds_limit("pfedme", gamma=[0.5, 1e8], r=0.5, sigma=0.5, signal=1.0,
                              rounds=[np.inf], local_steps=np.inf, lam=1.0)
    res = riskcalc.rounds_limit("pfedme", gamma=[0.5, 1e5], r=0.5, sigma=0.5, signal=1.0,
                                rounds=[np.inf], local_steps=np.inf, lam=1.0)
    lim = riskcalc.clients_limit("pfedme", gamma=[0.5, 1e5], r=0.5, sigma=0.5, lam=1.0)
    np.testing.assert_allclose(res.risk[:, 0], lim.risk, rtol=1e-7)


@pytest.mark.parametrize("atoms, c", [([0.5, 2.0], 0.5), ([2.0, 0.5], 2.0)])
def test_an_atom_of_weight_zero_is_no_eigenvalue(atoms, c):
    """Spectrum(atoms, weights [1, 0]) is Sigma = c I; the edge scans failed on the empty atom
    ("no edge of the round map's spectrum found on the scan" above, scipy's "The function
    value at x=0.5 is NaN; solver cannot continue." below). Now it answers, equal to the
    Sigma = I route (the scalar subordination) by the exact rescaling Sigma = c I: X = sqrt(c)
    Z, so w' = sqrt(c) w sees Sigma = I with step c eta (FedAvg) or penalty lam / c and server
    step c g (Algorithm 1), r and signal times sqrt(c), the same Sigma-norm risks."""
    for method, kw, kw_i in (("fedavg", dict(local_steps=1, step_size=0.2),
                              dict(local_steps=1, step_size=0.2 * c)),
                             ("pfedme", dict(local_steps=np.inf, lam=1.0),
                              dict(local_steps=np.inf, lam=1.0 / c))):
        got = riskcalc.rounds_limit(method, **FED, rounds=[0, 5, np.inf], **kw,
                                    spectrum=Spectrum(atoms, [1.0, 0.0]))
        ref = riskcalc.rounds_limit(method, gamma=FED["gamma"], r=0.5 * np.sqrt(c), sigma=0.5,
                                    signal=np.sqrt(c), rounds=[0, 5, np.inf], **kw_i)
        np.testing.assert_allclose(got.risk, ref.risk, rtol=1e-9)


def test_too_many_unknowns_are_refused_before_any_solve():
    """M = 100 identical clients, K = 50 under a spectrum, T up to 200 (the chain route's
    estimate: about 1.3e5 s): refused at once, before the checks that solve each client's
    spectrum edges (41 s in this pass's first version of them; they now also solve once per
    distinct gamma_j)."""
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="would take about"):
        riskcalc.rounds_limit("fedavg", gamma=[2.0] * 100, r=0.5, sigma=0.5, signal=1.0,
                              rounds=[0, 200], local_steps=50, step_size=0.01,
                              spectrum="two-point:1,3,0.5")
    assert time.perf_counter() - t0 < 2.0


def test_ftfa_that_overflows_is_inf_per_client_and_its_divergence_a_result():
    """FTFA after round T with steps whose growth overflows was a ValueError for the whole
    federation; now, as ``steps_limit`` reports it, inf for the clients it overflows (gamma 4:
    step 0.5 times the top 9 = 4.5, 300 steps, about 1e326) and the exact value for the others,
    equal at T = 0 to the local FTFA limit from zero (a different route); a divergent,
    representable growth (100 steps, 1e109) is a value equal to it too; nothing to amplify
    (signal = r = sigma = 0) is 0."""
    res = riskcalc.rounds_limit("fedavg", gamma=[0.01, 4.0], r=[0.5, 0.3], sigma=[1.0, 0.7],
                                signal=1.0, rounds=[0, 5, np.inf], local_steps=1,
                                step_size=0.1)
    for steps in (300, 100):
        risk = res.personalized_risk(steps=steps, step_size=0.5)
        for j, (g, r, s) in enumerate(((0.01, 0.5, 1.0), (4.0, 0.3, 0.7))):
            local = riskcalc.steps_limit("local", gamma=g, sigma=s, rho=np.hypot(1.0, r),
                                         steps=steps, step_size=0.5)
            if np.isinf(local.risk):
                assert np.all(risk[j] == np.inf)
            else:
                assert risk[j, 0] == pytest.approx(local.risk, rel=1e-9)
                assert np.all(np.isfinite(risk[j]))
        assert np.isinf(risk[1]).all() == (steps == 300)
    zero = riskcalc.rounds_limit("fedavg", gamma=[0.5, 4.0], r=0.0, sigma=0.0, signal=0.0,
                                 rounds=[0, 3], local_steps=1, step_size=0.1)
    assert np.all(zero.personalized_risk(steps=300, step_size=0.5) == 0.0)


def _cli(capsys, line):
    code = main(shlex.split(line))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_ftfa_divergence_is_converges_false_with_null(capsys):
    """``predict fedavg --rounds ... --steps 20 --step-size 1e10`` printed "error: step_size:
    FTFA's 20 steps diverge ..." and exited 2; now the rows, the FTFA risk null and
    ``converges: false`` in the personalization (text: a note)."""
    base = ("predict fedavg --rounds 0,5 --local-steps 2 --local-step-size 0.1 --signal 1 "
            "--r 0.5 --sigma 1 --gamma 0.5 --clients 2 --steps 20 --step-size 1e10")
    code, out, _ = _cli(capsys, base + " --json")
    rows = json.loads(out)
    assert code == 0 and [r["personalized_risk"] for r in rows] == [None, None]
    assert all(r["personalization"]["converges"] is False for r in rows)
    assert rows[1]["risk"] > 0
    code, out, _ = _cli(capsys, base)
    assert code == 0 and "FTFA diverges (converges: false)" in out
    code, out, _ = _cli(capsys, base.replace("1e10", "0.1") + " --json")
    assert all(r["personalization"]["converges"] is True for r in json.loads(out))


@pytest.mark.parametrize("rounds, match", [
    (-1, "rounds must be an integer >= 1"), (0, "rounds must be an integer >= 1"),
    (True, "rounds must be an integer"), ("3", "rounds must be an integer"),
    (10 ** 9, "rounds must be an integer >= 1 and <= 3000")])
def test_advise_checks_its_rounds_before_any_pipeline(rounds, match):
    """``advise(rounds=-1)`` ran every pipeline (seconds to minutes) before refusing; 10^9
    ran them and then asked rounds_limit for 10^9 rounds. Now no pipeline runs."""
    from riskcalc.advise import Federation, advise

    ran = []
    fed = Federation(gamma=[0.5, 1.5, 2.0], r=[0.5, 1.0, 1.0], sigma=[1.0, 0.5, 0.5])
    with pytest.raises(ValueError, match=match):
        advise(fed, rounds=rounds, signal=1.0, progress=ran.append)
    assert ran == []


@pytest.mark.parametrize("method, kw, gamma, atoms, match", [
    ("pfedme", dict(local_steps=np.inf, lam=1.0), [0.5, 2.0], 10 ** 5,
     "100000 atoms x at least 56 contour nodes x a pencil of 3 blocks would take 33 min"),
    ("fedavg", dict(local_steps=2, step_size=0.1), [0.5, 2.0], 10 ** 5, "a pencil of 5 blocks"),
    ("pfedme", dict(local_steps=np.inf, lam=1.0), [2.0] * 100, 2, "a pencil of 101 blocks")])
def test_pencil_work_beyond_minutes_is_refused_before_solving(method, kw, gamma, atoms, match):
    """10^5 atoms ran past a minute (1000 atoms: 41 s), M = 100 identical clients past 45 s,
    with no estimate and no progress; now refused before any solve, naming what to lower.
    The estimate is a lower bound (the fewest contour nodes): 1000 atoms (41 s) still run."""
    spec = Spectrum(np.linspace(0.5, 2.0, atoms))
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=match):
        riskcalc.rounds_limit(method, gamma=gamma, r=0.5, sigma=0.5, signal=1.0,
                              rounds=[0, 5, 20], **kw, spectrum=spec)
    assert time.perf_counter() - t0 < 2.0


def test_own_models_work_beyond_minutes_is_refused_the_server_curve_kept():
    """FedAvg K = 1, M = 1000 under a spectrum: the server's curve is cheap, its own models (a
    pencil of 1 + M blocks) ran for minutes; now ``local_risk`` refuses at once."""
    res = riskcalc.rounds_limit("fedavg", gamma=[2.0] * 1000, r=0.5, sigma=0.5, signal=1.0,
                                rounds=[0, 5], local_steps=1, step_size=0.1,
                                spectrum="two-point:1,3,0.5")
    assert np.all(np.isfinite(res.risk))
    with pytest.raises(ValueError, match="a pencil of 1001 blocks"):
        res.local_risk


def test_extreme_steps_and_penalties_under_a_spectrum_say_which_parameter():
    """global_step 1e-300 at rounds = inf was "the iteration diverges (... the global step times
    the top ... >= 2)", false; scaled:1e-12 with step_size 0.05 and K = 2 "pooled N near d"
    (the filter is lost to rounding at step_size times 1e-12); Algorithm 1 at lam 1e-5 or 1e5
    under a spectrum "not found on the scan" / "Newton's method ... did not converge", naming
    nothing."""
    kw = dict(**FED, rounds=[0, 5, np.inf])
    for spec in (None, "two-point:1,3,0.5"):
        with pytest.raises(ValueError, match=r"contraction 1 - g a rounds to 1 \(global step "
                                             r"g = 1e-300"):
            riskcalc.rounds_limit("fedavg", **kw, local_steps=1, step_size=0.1,
                                  global_step=1e-300, spectrum=spec)
    with pytest.raises(ValueError, match=r"step_size: step_size times the largest eigenvalue "
                                         r"of the spectrum is 5e-14, below 1e-12"):
        riskcalc.rounds_limit("fedavg", **kw, local_steps=2, step_size=0.05,
                              spectrum="scaled:1e-12")
    with pytest.raises(riskcalc.SolverError, match=r"lam = 100000 is 5e\+04 times the "
                                                   r"spectrum's mean eigenvalue 2"):
        riskcalc.rounds_limit("pfedme", **kw, local_steps=np.inf, lam=1e5,
                              spectrum="two-point:1,3,0.5")
    # lam = 1e-5 was refused too ("not found on the scan"): the scan now tries points next to
    # the bands of the lam -> 0 atoms, and the answer is FedAvg's exact local solves (g = 1)
    # to O(lam) (gap / lam measured 0.1277 from lam / mean = 1e-3 down to 1e-6).
    small = riskcalc.rounds_limit("pfedme", **kw, local_steps=np.inf, lam=1e-5,
                                  spectrum="two-point:1,3,0.5")
    exact = riskcalc.rounds_limit("fedavg", **kw, local_steps=np.inf, global_step=1.0,
                                  spectrum="two-point:1,3,0.5")
    gap = np.abs(small.global_risk - exact.risk).max()
    assert 0.12e-5 < gap < 0.14e-5, gap


def test_rounds_to_eps_means_staying_within_eps_and_no_nan_evaluations():
    """Under a two-point spectrum FedAvg's risk dips from 2.5 to 0.277 (T = 17) and rises back
    to its fixed point 0.3133: ``rounds_to_eps(eps=1e-3)`` answered T = 8, where the curve only
    crosses 0.3133 on its way down; now the first T from which every round to max_rounds is
    within eps (96 here, read off the curve). ``optimal_rounds`` with exact local solves at
    T = 0 gave gradient_evaluations NaN (0 x inf), and a target beyond the clients was refused
    only after the curve was solved."""
    kw = dict(**FED, local_steps=1, step_size=0.2, spectrum="two-point:1,3,0.5")
    hit = riskcalc.rounds_to_eps("fedavg", eps=1e-3, max_rounds=150, **kw)
    gap = np.abs(hit.curve.risk[0, :-1] - hit.curve.risk[0, -1])
    assert gap[8] <= 1e-3 and hit.rounds == np.flatnonzero(gap > 1e-3).max() + 1 == 96
    assert hit.gradient_evaluations == 96
    kw = dict(**FED, local_steps=np.inf, lam=1.0)
    assert riskcalc.optimal_rounds("pfedme", max_rounds=0, **kw).gradient_evaluations == 0.0
    assert riskcalc.optimal_rounds("pfedme", max_rounds=3, **kw).gradient_evaluations in (
        0.0, None)
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=r"target must be a client index in 0..1, got 5"):
        riskcalc.optimal_rounds("pfedme", max_rounds=20, target=5, **kw)
    assert time.perf_counter() - t0 < 0.5


def test_ftfa_growth_between_1e250_and_1e300_after_round_one_is_inf_not_a_minute_of_failure():
    """gamma (0.5, 4), 500 steps of 1.0 from the rounds' server model: client 0's growth is
    about 1e281, where the quadratures fail ("Marchenko-Pastur quadrature did not converge"
    after 20-24 s, measured at T = 0 and 1 with the limit at 1e300); inf at once, as client
    1's (1e903)."""
    res = riskcalc.rounds_limit("fedavg", gamma=[0.5, 4.0], r=0.5, sigma=0.5, signal=1.0,
                                rounds=[0, 1, 3], local_steps=1, step_size=0.1)
    t0 = time.perf_counter()
    assert np.all(res.personalized_risk(steps=500, step_size=1.0) == np.inf)
    assert time.perf_counter() - t0 < 1.0


def test_a_narrow_band_missed_by_the_pencil_scan_raises():
    """One client with gamma = 1e-4 (10^4 d samples) under atoms (1, 3), FedAvg K = 2: the
    round map's two narrow bands near q(1) and q(3); the scan found only the upper one and
    answered a risk 0.6266 at T = 5, where the gamma -> 0 closed form (S = Sigma, no noise)
    1.25 (0.5 (1 - q(1))^10 + 1.5 (1 - q(3))^10) = 0.0775 and gamma = 1e-3 gives 0.0779. The
    bottom it found (0.504) is above the bound K eta a_A = 0.197 (sigma/guards.py), and the
    contour encloses half of D's spectrum (``pencil_curves``' mass check, the first): raises."""
    with pytest.raises(riskcalc.SolverError, match=r"the contour encloses 0.5 of the round "
                                                   r"map's spectrum, not all of it \(edges "
                                                   r"0.504\d+, 0.515\d+ missed a part"):
        riskcalc.rounds_limit("fedavg", gamma=[1e-4], r=0.5, sigma=0.5, signal=1.0,
                              rounds=[0, 5], local_steps=2, step_size=0.1,
                              spectrum="two-point:1,3,0.5")
    res = riskcalc.rounds_limit("fedavg", gamma=[1e-3], r=0.5, sigma=0.5, signal=1.0,
                                rounds=[5], local_steps=2, step_size=0.1,
                                spectrum="two-point:1,3,0.5")
    closed = 1.25 * (0.5 * 0.81 ** 10 + 1.5 * 0.49 ** 10)
    assert res.risk[0, 0] == pytest.approx(closed, rel=0.01)   # O(gamma) apart


def test_the_chain_route_shares_the_reach_check():
    """FedAvg with M K^2 above the dense pencil's size runs the chain route
    (``sigma_chain``), whose edges are the same scan: the spectrum whose small band that scan
    would miss is refused there too (the check was skipped beyond M K^2 = 200)."""
    with pytest.raises(ValueError, match="narrower range"):
        riskcalc.rounds_limit("fedavg", gamma=[0.5, 2.0, 3.0], r=0.5, sigma=0.5, signal=1.0,
                              rounds=[0, 5], local_steps=12, step_size=0.05,
                              spectrum=Spectrum([1e-4, 1.0], [0.5, 0.5]))
