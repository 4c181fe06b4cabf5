"""The strict number layer (riskcalc._validate): booleans, strings and complex numbers are
refused everywhere (Python calls, the command line, a federation file), with the same ranges."""

import numpy as np
import pytest

import riskcalc
from tests.federation_helpers import _run, _with, _write


@pytest.mark.parametrize("call, message", [
    (lambda: riskcalc.limit("ftfa", gamma=True, r=1, sigma=1), "gamma must be a real number, "
                                                               "got True: a boolean"),
    (lambda: riskcalc.limit("ftfa", gamma="2", r=1, sigma=1), "a string is not a number"),
    (lambda: riskcalc.limit("ftfa", gamma=2, r=1, sigma=1 + 0j), "complex values are refused"),
    (lambda: riskcalc.limit("ftfa", gamma=[2, True], r=1, sigma=1), "it holds a boolean"),
    (lambda: riskcalc.limit("ftfa", gamma=np.array([1, 2], dtype=complex), r=1, sigma=1),
     "complex"),
    (lambda: riskcalc.Spectrum(np.array([[1.0, 2.0], [2.0, 5.0]])), "numpy.linalg.eigvalsh"),
    (lambda: riskcalc.Spectrum([1.0, 2.0], weights=[[0.5, 0.5]]), "1-d list"),
    (lambda: riskcalc.clients_limit("ftfa", gamma=["1", 2], r=1, sigma=1), "a string"),
    (lambda: riskcalc.clients_limit("ftfa", gamma=[0.5, 1e101], r=1, sigma=1),
     "gamma must lie in [1e-100, 1e+100]"),
    (lambda: riskcalc.Federation(gamma=[0.5, True], r=[1, 1], sigma=[1, 1]), "boolean"),
    (lambda: riskcalc.Federation(gamma=[0.5, 1e101], r=[1, 1], sigma=[1, 1]),
     "gamma must lie in [1e-100, 1e+100]"),
    (lambda: riskcalc.steps_limit("ftfa", gamma=2, r=1, sigma=1, steps=10 ** 20,
                                  step_size=0.1), "steps must be integers >= 0 and <= "),
    (lambda: riskcalc.limit("ftfa", gamma=2, r=1, sigma=1, clients=True), "clients must be an "
                                                                          "integer"),
])
def test_python_refuses_what_is_not_a_real_number(call, message):
    with pytest.raises(ValueError, match=None) as info:
        call()
    assert message in str(info.value), str(info.value)


def test_numpy_scalars_and_integers_are_numbers():
    ref = riskcalc.limit("ftfa", gamma=2.0, r=1.0, sigma=0.5)
    for g in (np.float32(2.0), np.int64(2), 2, np.array(2.0)):
        assert riskcalc.limit("ftfa", gamma=g, r=1.0, sigma=np.float64(0.5)).risk == ref.risk


@pytest.mark.parametrize("argv, message", [
    ("predict ftfa --gamma 2 --r 1 --sigma 1 --steps 99999999999999999999 --step-size 0.1",
     "--steps must be an integer >= 0 and <= 9007199254740992"),
    ("predict ftfa --gamma 1e101 --r 1 --sigma 1", "gamma must lie in [1e-100, 1e+100]"),
    ("predict ftfa --gamma 2 --r 1 --sigma 1 --clients 99999999999999999999",
     "clients must be an integer >= 1 and <= 9007199254740992"),
])
def test_cli_number_refusals(argv, message, capsys):
    code, out, err = _run(argv.split(), capsys)
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err, err


def test_same_gamma_range_in_option_and_file(tmp_path, capsys):
    """--gamma 1e101 and a file's gamma 1e101 are refused with the same range."""
    _, _, err_cli = _run("predict ftfa --gamma 1e101 --r 1 --sigma 1".split(), capsys)
    path = _write(tmp_path, _with(0, gamma=1e101))
    _, _, err_file = _run(["predict", "ftfa", "--federation", path], capsys)
    bare = _write(tmp_path, [{"gamma": 1e101, "r": 1, "sigma": 1}], "bare.json")
    _, _, err_bare = _run(["predict", "ftfa", "--gamma", "1", "--r", "1", "--sigma", "1",
                           "--clients-file", bare], capsys)
    for err in (err_cli, err_file, err_bare):
        assert "[1e-100, 1e+100]" in err, err
