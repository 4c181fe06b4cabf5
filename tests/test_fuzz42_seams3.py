"""Issue 32, fuzz42 (seams3): what this fuzz found, each test failing before."""

from decimal import Decimal

import numpy as np
import pytest

import montecarlo
import riskcalc
from montecarlo.linear.instances import Setting, check_memory
from riskcalc.linear.dynamics.sigma.budget import gigabytes
from tests.helpers import run_cli

CASE = dict(gamma=[0.5, 2.0], r=0.3, sigma=0.5, signal=1.0, rounds=[0, 3], local_steps=2,
            step_size=0.1, spectrum="two-point:0.5,2,0.5")


@pytest.mark.parametrize("value", [np.inf, np.float32(np.inf), Decimal("Infinity")])
def test_f1_max_gigabytes_inf_is_no_limit(value):
    """F1: rounds_limit(max_gigabytes=inf) was refused ("must be a finite number in (0, inf)")
    though 1e300 was taken and max_seconds=inf is no limit: one rule (``_validate.max_time``)."""
    assert gigabytes(value) == np.inf


def test_f1_rounds_limit_under_no_memory_limit_is_its_default_answer():
    """F1: the curves under a spectrum with max_gigabytes=inf are those within the default."""
    got = riskcalc.rounds_limit("fedavg", **CASE, max_gigabytes=np.inf).risk
    np.testing.assert_array_equal(got, riskcalc.rounds_limit("fedavg", **CASE).risk)


@pytest.mark.parametrize("value, message", [
    (0.0, r"max_gigabytes must lie in \(0, inf\], got 0.0 \(or None: 4 GB\)$"),
    (np.nan, r"max_gigabytes must be a number in \(0, inf\], got nan \(or None: 4 GB\)$"),
    (-np.inf, r"max_gigabytes must lie in \(0, inf\], got -inf \(or None: 4 GB\)$"),
])
def test_f1_max_gigabytes_still_refuses_what_is_no_limit(value, message):
    """F1: the values that are no limit stay refused, naming max_seconds' range (0, inf]."""
    with pytest.raises(ValueError, match=message):
        gigabytes(value)


def test_f2_python_memory_refusal_names_the_keyword():
    """F2: montecarlo.compare(..., d=10**6) was told "--d 1000000 (n = ...) ...; lower --d",
    the command line's option in a Python call: now the keyword, the option beside it."""
    with pytest.raises(ValueError, match=r"^d = 1000000 \(n = 500000 samples per client\) "
                       r".*; lower d or raise gamma \(in Python; --d, --gamma on the command "
                       r"line\)$"):
        montecarlo.compare("ftfa", gamma=2.0, r=1.0, sigma=0.5, d=10 ** 6, reps=3)


def test_f2_federated_refusal_names_both_keywords():
    """F2: federated, d and clients (was "lower --d or --clients")."""
    setting = Setting(d=60, clients=10 ** 9, global_model="federated")
    with pytest.raises(ValueError, match=r"^d = 60 .* with 1000000000 clients needs .*; lower d "
                       r"or clients, or raise gamma \(in Python; --d, --clients, --gamma on the "
                       r"command line\)$"):
        check_memory(setting, 2.0)


def test_f3_logistic_sweep_memory_refusal_names_the_keywords():
    """F3: sweep_logistic(..., d=10**6, max_minutes=None) was told "lower --d, raise --gamma"
    (``montecarlo.logistic.sweep_checks.check_memory``): the keywords, the options beside them."""
    from montecarlo.logistic.sweep import sweep_logistic

    with pytest.raises(ValueError, match=r"^the logistic sweep \(up to 1000000 samples .*; "
                       r"lower d, raise gamma \(in Python; --d, --gamma on the command line\)$"):
        sweep_logistic("rtfa", gamma=[1.0], r=[1.0], signal=1.0, lam=[0.5], d=10 ** 6, reps=2,
                       max_minutes=None)


@pytest.mark.parametrize("verb, option", [("predict", ["--max-memory", "1"]),
                                          ("compare", ["--global-step", "1", "--d", "20"])])
def test_f4_rounds_option_of_a_method_without_rounds_is_refused_first(verb, option, capsys):
    """F4: "predict ftfa --max-memory 1" asked for --rounds, --local-steps, --local-step-size
    and --signal, then refused --rounds for ftfa: the option given is refused for the method."""
    code, out, err = run_cli([verb, "ftfa", "--gamma", "0.5", "--r", "0.3", "--sigma", "0.5",
                              *option], capsys)
    assert (code, out) == (2, "")
    assert err.startswith(f"error: {option[0]} applies to fedavg, pfedme (fedprox) and rtfa ")
    assert err.count("\n") == 1 and "not ftfa" in err


def test_f5_memory_refusal_of_a_tiny_gamma_advises_raising_it():
    """F5: compare(gamma=1e-9, d=20) (n = 2e10 samples) was told "lower d" alone, which no d
    fits (d = 2 still needs 89 GiB): n = d / gamma, raising gamma is named too."""
    with pytest.raises(ValueError, match=r"^d = 20 \(n = 20000000000 samples per client\) .*; "
                       r"lower d or raise gamma \("):
        montecarlo.compare("ftfa", gamma=1e-9, r=1.0, sigma=0.5, d=20, reps=2)


def test_f6_cli_max_memory_inf_says_how_to_ask_for_no_limit(capsys):
    """F6: --max-memory inf was "must be a finite number in (0, inf), got inf" alone, where
    rounds_limit takes inf (F1) and --max-minutes inf says how to ask for no limit."""
    argv = ["predict", "fedavg", "--gamma", "0.5", "--r", "0.3", "--sigma", "0.5", "--clients",
            "2", "--signal", "1", "--rounds", "0,3", "--local-step-size", "0.1", "--local-steps",
            "2", "--spectrum", "two-point:0.5,2,0.5", "--max-memory", "inf"]
    assert run_cli(argv, capsys) == (2, "", "error: --max-memory must be a finite number > 0, "
                                     "got inf; for no limit give a number beyond this "
                                     "machine's memory, e.g. 1e300\n")


def test_f7_rounds_simulation_memory_refusal_names_both_doors(capsys):
    """F7: compare fedavg --rounds ... --gamma 1e-9 --d 20 was told "lower d or raise the
    smallest gamma_j" (Python's names alone, montecarlo.linear.rounds_inputs): both doors'."""
    argv = ["compare", "fedavg", "--gamma", "1e-9", "--r", "0.3", "--sigma", "0.5", "--clients",
            "2", "--signal", "1", "--rounds", "0,3", "--local-step-size", "0.1", "--local-steps",
            "2", "--d", "20", "--reps", "2", "--max-minutes", "1e300"]
    code, out, err = run_cli(argv, capsys)
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert err.endswith("lower d or raise the smallest gamma_j (n_j = d / gamma_j rows: 2e+10 "
                        "for client 0) (in Python; --d, --gamma on the command line)\n")
