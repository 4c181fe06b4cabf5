"""Issue 32, fourth hardening pass: the newest code (the risk along the rounds: ``rounds_limit``,
``optimal_rounds``, ``rounds_to_eps``, ``predict``/``compare --rounds``, ``--federation``),
fuzzed as a new user would. Every row was mishandled before this pass (the old behaviour is in
its comment); each must now be refused before any solve, in one line naming the parameter
(CLI: ``error: ...`` and exit status 2; Python: a ValueError).
"""

import json
import shlex

import numpy as np
import pytest

import riskcalc
from riskcalc.cli import main

B = dict(gamma=2.0, r=1.0, sigma=0.5, signal=1.0, rounds=[1, 5], local_steps=1, step_size=0.1)


def _rl(**over):
    return lambda: riskcalc.rounds_limit("fedavg", **{**B, **over})


def _opt(**over):
    kw = {k: v for k, v in B.items() if k != "rounds"}
    return lambda: riskcalc.optimal_rounds("fedavg", **{**kw, **over})


def _sim(**over):
    from montecarlo.linear.rounds import simulate_rounds

    kw = dict(gamma=[2.0], r=[1.0], sigma=[0.5], signal=1.0, rounds=[1], local_steps=1,
              step_size=0.1, d=20, reps=2)
    return simulate_rounds("fedavg", **{**kw, **over})


API = [
    # types coerced silently (was: "2" read as 2, True as 1, [[1.0]] flattened, complex a
    # TypeError, a dict a TypeError)
    (_rl(gamma="2"), "gamma must be a real number, got '2': a string"),
    (_rl(gamma=True), "gamma must be a real number, got True: a boolean"),
    (_rl(r=np.bool_(True)), "r must be a real number"),
    (_rl(sigma="0.5"), "sigma must be a real number"),
    (_rl(r=[[1.0]]), "r must be a 1-d list of numbers"),
    (_rl(gamma=np.array([[0.5, 2.0]])), "gamma must be a 1-d list of numbers"),
    (_rl(sigma=1 + 0j), "complex values are refused"),
    (_rl(gamma={"a": 1}), "a dict is not a number"),
    (_rl(gamma=[0.5, "2"]), "gamma must be a real number"),
    # scalars given as arrays (was: TypeError "only 0-dimensional arrays ...")
    (_rl(signal=[[1.0]]), "signal must be a number"),
    (_rl(step_size=[[0.1]]), "step_size must be a number"),
    (_rl(global_step=[1.0, 2.0]), "global_step must be a number"),
    (lambda: riskcalc.rounds_limit("pfedme", **{**B, "gamma": 0.5}, lam=[1.0, 2.0]),
     "lam must be a number"),
    (_rl(rounds=[[1, 2]]), "rounds must be a 1-d list"),               # was: flattened
    # the one range of each parameter (was: gamma 1e-300 answered, signal 1e300 an
    # OverflowError, r 1e300 "a negative or NaN quadratic form")
    (_rl(gamma=1e-300), "gamma must lie in [1e-100, 1e+100]"),
    (_rl(gamma=[1e101, 1.0]), "gamma must lie in [1e-100, 1e+100]"),
    (_rl(signal=1e300), "signal must lie in [0, 1e+100]"),
    (_rl(r=1e300), "r must lie in [0, 1e+100]"),
    (_rl(sigma=1e101), "sigma must lie in [0, 1e+100]"),
    # counts beyond 2^53 (was: rounds 10^30 answered as 1e30, local_steps 10^20 a TypeError)
    (_rl(rounds=[10 ** 30]), "rounds must be integers in 0..9007199254740992"),
    (_rl(rounds=[2 ** 63]), "rounds must be integers in 0..9007199254740992"),
    (_rl(local_steps=10 ** 20), "local_steps must be one integer in 1..9007199254740992"),
    # unbounded work (was: np.arange(10**6) asked for 31.8 GiB; max_rounds 10**9 built a list
    # of 10^9 rounds and ran for minutes)
    (_rl(rounds=np.arange(10 ** 6)), "ask for fewer rounds"),
    (_rl(rounds=list(range(20000))), "ask for fewer rounds"),
    (_opt(max_rounds=10 ** 9), "give max_rounds <= 3000"),
    (_opt(max_rounds=10 ** 5), "give max_rounds <= 3000"),
    # (was: TypeError "'<' not supported between 'str' and 'int'", OverflowError, True taken
    # as client 1)
    (_opt(max_rounds="10"), "max_rounds must be an integer"),
    (_opt(max_rounds=float("inf")), "max_rounds must be an integer"),
    (_opt(max_rounds=float("nan")), "max_rounds must be an integer"),
    (_opt(target=True), "target must be an integer"),
    (lambda: riskcalc.rounds_to_eps("fedavg", eps=[[0.1]], **{k: v for k, v in B.items()
                                                                 if k != "rounds"}),
     "eps must be a number"),
    # a step size whose local filter is lost to rounding (was: 1e-15 silently wrong in the 5th
    # digit, 1e-16 "the round map's spectrum reaches 0 ... move gamma off the threshold")
    (_rl(step_size=1e-15), "step_size must be >= 1e-12"),
    (_rl(step_size=1e-300, local_steps=5), "step_size must be >= 1e-12"),
    # (was: 1e150 "Marchenko-Pastur quadrature did not converge ... lam or u too small?")
    (_rl(step_size=1e150), "step_size must lie in (0, 1e+100]"),
    # a spectrum of the wrong kind (was: AttributeError "'str' object has no attribute ...")
    (_rl(spectrum=np.ones(3)), "spectrum must be a riskcalc.Spectrum or a SPEC string"),
    (_rl(spectrum="powerlaw:1"), "powerlaw needs the number of eigenvalues"),
    # the federation reader and the spectrum (was: TypeError "expected str, bytes or
    # os.PathLike object"; 2e7 eigenvalues sorted for more than a minute)
    (lambda: riskcalc.Federation.from_file(123), "path must be a file path"),
    (lambda: riskcalc.Federation.from_file(None), "path must be a file path"),
    (lambda: riskcalc.Spectrum(np.ones(2 * 10 ** 7)), "more than 1e+07"),
    # explicit client weights as a matrix (was: flattened), a personalization's lam as an
    # array (was: TypeError)
    (lambda: riskcalc.clients_limit("ftfa", gamma=[0.5, 2], r=1, sigma=0.5, weights=[[1, 2]]),
     "weights must be a 1-d list of numbers"),
    (lambda: riskcalc.rounds_limit("fedavg", **B).personalized_risk(lam=[[1.0]]),
     "lam must be a number"),
    # the simulation takes what the limit takes (was: gamma [[2.0]] flattened, signal 1e300
    # an OverflowError, step_size [[0.1]] a TypeError, d = 10^6 a 3.6 TiB MemoryError)
    (lambda: _sim(gamma=[[2.0]]), "gamma must be a 1-d list of numbers"),
    (lambda: _sim(signal=1e300), "signal must lie in [0, 1e+100]"),
    (lambda: _sim(step_size=[[0.1]]), "step_size must be a number"),
    (lambda: _sim(d=10 ** 6), "d = 1000000 with 1 client(s) (their designs) needs about"),
]


@pytest.mark.parametrize("call, message", API, ids=[str(k) for k in range(len(API))])
def test_python_api_refuses_with_a_value_error(call, message):
    with pytest.raises(ValueError) as info:
        call()
    assert message in str(info.value)


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")
def test_a_global_step_beyond_floats_is_a_solver_error():
    # was: OverflowError "cannot convert float infinity to integer" (a traceback on the CLI);
    # since fuzz40 path F4 the contour's node count refuses it without overflowing
    with pytest.raises(riskcalc.SolverError, match="diverges .*give a smaller global_step"):
        riskcalc.rounds_limit("pfedme", **{**B, "gamma": 0.5, "local_steps": 5,
                                           "step_size": 0.05}, lam=1.0, global_step=1e100)


def test_weights_near_the_float_limit_are_the_same_weights():
    # was: SolverError "tau(A^-1) of the global model: no convergence" (their sum overflowed
    # to inf, every p_j to 0)
    kw = dict(gamma=[0.5, 2.0], r=1.0, sigma=0.5)
    big = riskcalc.clients_limit("ftfa", **kw, weights=[1e308, 1e308])
    one = riskcalc.clients_limit("ftfa", **kw, weights=[1.0, 1.0])
    assert np.array_equal(big.risk, one.risk)


def test_a_spec_string_is_the_spectrum_it_names():
    # was: AttributeError; simulate_rounds already took a SPEC string, the limit did not
    sp = riskcalc.Spectrum.parse("two-point:1,3,0.5")
    kw = {**B, "rounds": [1]}
    a = riskcalc.rounds_limit("fedavg", **kw, spectrum="two-point:1,3,0.5")
    b = riskcalc.rounds_limit("fedavg", **kw, spectrum=sp)
    assert np.array_equal(a.risk, b.risk)


def test_rounds_within_the_bound_still_answer():
    # Up to T = 3000 (the largest max_rounds the bound lets through): each T's value does not
    # depend on the others asked, though the contour is sized by the largest.
    kw = {k: v for k, v in B.items() if k != "rounds"}
    few = riskcalc.rounds_limit("fedavg", rounds=[0, 90, 3000], **kw)
    many = riskcalc.rounds_limit("fedavg", rounds=list(range(0, 3001, 30)), **kw)
    assert np.allclose(many.risk[:, [0, 3, -1]], few.risk, rtol=1e-10, atol=0)


@pytest.mark.parametrize("sigma", [0.5, 0.0])
def test_an_overflowed_variance_is_inf_with_noise_and_zero_without(sigma):
    # was: variance 0 (JSON 0) beside an inf bias at the overflowed rounds, noise or none. The
    # variance of a diverging iteration with noise grows as its bias does: rows before the
    # overflow already show it (positive, growing).
    for spectrum in (None, "two-point:1,3,0.5"):
        res = riskcalc.rounds_limit("fedavg", **{**B, "sigma": sigma, "step_size": 2.0,
                                                  "rounds": [1, 50, 1000]},
                                    spectrum=spectrum)
        assert not res.converges and np.isinf(res.bias[0, -1])
        if sigma > 0:
            assert 0 < res.variance[0, 0] < res.variance[0, 1] and np.isinf(res.variance[0, -1])
        else:
            assert np.all(res.variance == 0)


CLI = [
    # counts beyond 2^53 (was: --rounds 99999999999999999999 printed as the row
    # 100000000000000000000; --local-steps 99999999999999999999 a TypeError traceback;
    # --clients 99999999999999999999 an OverflowError traceback)
    ("--rounds 99999999999999999999", "--rounds takes integers in 0..9007199254740992"),
    ("--rounds 1 --local-steps 99999999999999999999",
     "--local-steps must be an integer in 1..9007199254740992"),
    ("--rounds 1 --clients 99999999999999999999", "--clients must be an integer"),
    # was: 40 s, then "Newton's method on the subordination equations did not converge"
    ("--rounds 1 --clients 10000", "at most 1000 identical clients along the rounds"),
    # was: a 60 s timeout growing to gigabytes
    ("--rounds " + ",".join(map(str, range(5000))), "ask for fewer rounds"),
    ("--rounds 1 --signal 1e300", "signal must lie in [0, 1e+100]"),   # was: OverflowError
    ("--rounds 1 --local-step-size 1e-16", "--local-step-size must be >= 1e-12"),
]
BASE = "predict fedavg --gamma 2 --r 1 --sigma 0.5 --local-step-size 0.1"


@pytest.mark.parametrize("extra, message", CLI, ids=[c[0][:40] for c in CLI])
def test_cli_refuses_in_one_line(extra, message, capsys):
    base = BASE.replace(" --local-step-size 0.1", "") if "--local-step-size" in extra else BASE
    argv = shlex.split(base + " " + extra)
    if "--local-steps" not in extra:
        argv += ["--local-steps", "1"]
    if "--signal" not in extra:
        argv += ["--signal", "1"]
    code = main(argv)
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert code == 2 and out == "", (extra, out, err)
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], err


@pytest.mark.parametrize("rounds, message", [
    ("-1", "--rounds must be an integer >= 1 and <= 3000"),
    ("3001", "--rounds must be an integer >= 1 and <= 3000"),
    ("5", "its risk needs ||theta_0||: give --signal"),
])
def test_advise_rounds_refused_before_the_work(rounds, message, tmp_path, capsys):
    # was: refused only after every other pipeline had been evaluated (more than a minute
    # for the 4 clients of an estimate), or, for 10^20, an error from deep in the curves
    path = tmp_path / "fed.json"
    path.write_text(json.dumps({"fedrisk_federation": 1, "clients": [
        {"gamma": 0.5, "r": 0.5, "sigma": 0.5}, {"gamma": 2.0, "r": 1.0, "sigma": 0.3}]}))
    assert main(["advise", "--federation", str(path), "--rounds", rounds, "--no-progress",
                 "--methods", "pfedme"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("command, message", [
    # was: --max-minutes ignored (ran 60 s and more at d = 2000); 100000 replicates ran ~20 min
    ("fedavg --gamma 2 --local-step-size 0.1 --rounds 1,5 --d 2000 --reps 20 --max-minutes 0.05",
     "compare fedavg along the rounds: 20 replicate(s) at d = 2000"),
    ("fedavg --gamma 2 --local-step-size 0.1 --rounds 1,5 --d 50 --reps 100000",
     "compare fedavg along the rounds: 100000 replicate(s) at d = 50"),
    # was: Algorithm 1 iterated 10^7 rounds per replicate (minutes) unestimated
    ("fedprox --gamma 0.5 --lam 1 --local-step-size 0.1 --rounds 10000000 --d 50 --reps 2",
     "compare pfedme along the rounds: 2 replicate(s) at d = 50"),
])
def test_compare_along_the_rounds_is_budgeted(command, message, capsys):
    argv = ("compare " + command + " --r 1 --sigma 0.5 --signal 1 --local-steps 1").split()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: " + message), err
    assert "lower --reps, --d, the largest --rounds or --clients" in err
    assert len(err.strip().splitlines()) == 1


@pytest.fixture
def federation(tmp_path):
    path = tmp_path / "fed.json"
    path.write_text(json.dumps({"fedrisk_federation": 1, "signal": 0.8, "clients": [
        {"name": "a", "gamma": 0.5, "r": 0.5, "sigma": 0.5},
        {"name": "b", "gamma": 2.0, "r": 1.0, "sigma": 0.3}]}))
    return path


def test_federation_signal_is_used_along_the_rounds(federation, capsys):
    # was: "predict along the rounds needs --signal" although the file gives signal
    argv = (f"predict fedavg --federation {federation} --target b --rounds 0,3,inf "
            "--local-steps 2 --local-step-size 0.2 --json").split()
    assert main(argv) == 0
    out, err = capsys.readouterr()
    rows = json.loads(out)
    assert "signal" not in err          # used, so not named among the ignored keys
    # the same federation given to the Python API, the target first
    res = riskcalc.rounds_limit("fedavg", gamma=[2.0, 0.5], r=[1.0, 0.5], sigma=[0.3, 0.5],
                                signal=0.8, rounds=[0, 3, np.inf], local_steps=2,
                                step_size=0.2)
    assert [row["risk"] for row in rows] == pytest.approx(res.risk[0], rel=1e-12)
    assert rows[0]["params"]["signal"] == 0.8


def test_a_federation_too_large_for_the_rounds_is_refused_up_front(tmp_path, capsys):
    # was: 10,000 clients ran past 60 s (200,000 too), as --clients 10000 did
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"fedrisk_federation": 1, "signal": 1.0, "clients": [
        {"gamma": 0.5 + j / 1000, "r": 0.5, "sigma": 0.5} for j in range(1001)]}))
    argv = (f"predict fedavg --federation {path} --rounds 1 --local-steps 1 "
            "--local-step-size 0.1").split()
    assert main(argv) == 2
    assert capsys.readouterr().err == (f"error: {path}: 1001 clients; at most 1000 along the "
                                       "rounds (each client is solved, none grouped: minutes "
                                       "beyond)\n")


def test_federation_signal_is_not_given_twice(federation, capsys):
    argv = (f"predict fedavg --federation {federation} --rounds 1 --local-steps 1 "
            "--local-step-size 0.1 --signal 2").split()
    assert main(argv) == 2
    assert capsys.readouterr().err == (f"error: --signal does not apply with --federation "
                                       f"{federation}: the file gives signal = 0.8\n")


def test_the_logistic_refusal_names_a_nonzero_factor():
    # was: "signal and r at most 0 times their values" (a bisection on [0, 1] cannot print
    # the ~1e-98 that brings signal = 1e100 within the time limit). 1e100 is the top of the
    # shared range of signal (beyond it, refused as out of range: tests/test_hardening_logistic)
    with pytest.raises(ValueError, match="at most") as info:
        riskcalc.logistic_limit(gamma=2.0, signal=1e100, r=1.0, lam=1.0)
    factor = float(str(info.value).split("at most ")[1].split(" times")[0])
    assert 0 < factor < 1e-95


def test_ftfa_after_round_t_that_overflows_is_inf_and_a_divergent_one_computed():
    """FTFA from the round-T model with steps that overflow (1e10, 20 steps: about 1e424) got
    6 s of quadrature and "lam or u too small?", then a ValueError; now (fifth pass) the risk
    is inf at once, as ``steps_limit`` reports it (tests/test_hardening_sigma.py). A
    divergent step whose growth is representable (step_size 0.9, top 4) is a value, equal at
    T = 0 to the local FTFA limit from zero (``steps_limit("local")``)."""
    res = riskcalc.rounds_limit("fedavg", gamma=[0.5, 1.0], r=0.5, sigma=1.0, signal=1.0,
                                rounds=[0, 5], local_steps=2, step_size=0.1)
    assert np.all(res.personalized_risk(steps=20, step_size=1e10) == np.inf)
    risk = res.personalized_risk(steps=3, step_size=0.9)
    local = riskcalc.steps_limit("local", gamma=1.0, sigma=1.0, rho=np.hypot(1.0, 0.5),
                                 steps=3, step_size=0.9)
    assert risk[1, 0] == pytest.approx(local.risk, rel=1e-9) and np.isfinite(risk).all()
