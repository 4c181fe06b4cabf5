"""Issue 32, fuzz42 (logi2): what this fuzz found, each test failing before."""

import pytest

import riskcalc


def test_lam_path_is_estimated_as_a_whole_and_names_a_lam():
    # F1: logistic_lam_path(gamma=0.5, signal=r=1, lams=[1e-3, 1e-300], max_seconds=5) had
    # no estimate (max_seconds held each lam apart): refused after 8 s at its deadline naming
    # no lam; now refused up front by the path's estimate, naming the lam that fits.
    with pytest.raises(ValueError, match=r"^the logistic lam path \(2 penalties, down to lam "
                       r"= 1e-300\).*over the limit max_seconds = 5; a larger lam .*lam >= "
                       r"[0-9.e-]+ fits"):
        riskcalc.logistic_lam_path(gamma=0.5, signal=1, r=1, lams=[1e-3, 1e-300],
                                   max_seconds=5)


def test_lam_path_estimate_adds_up_its_lams():
    # F1: eight lams 0.1 .. 1e-8 at gamma 2 (separable data), max_seconds 3: each lam alone
    # fits its own 3 s, the path did not (was: solved lam by lam, each with its own 3 s).
    lams = [10.0 ** -k for k in range(1, 9)]
    with pytest.raises(ValueError, match=r"^the logistic lam path \(8 penalties.*estimated at "
                       r"[0-9.]+ s.*lam >= [0-9.e-]+ fits"):
        riskcalc.logistic_lam_path(gamma=2, signal=1, r=1, lams=lams, max_seconds=3)


@pytest.mark.parametrize("argv, option", [
    (["predict", "rtfa", "--model", "logistic", "--gamma", "0.5", "--r", "1", "--signal", "1",
      "--lam", "0.1", "--clients-file"], "--clients-file"),
    (["predict", "rtfa", "--model", "logistic", "--signal", "1", "--lam", "0.1",
      "--federation"], "--federation"),
    (["advise", "--model", "logistic", "--signal", "1", "--clients-file"], "--clients-file"),
])
def test_logistic_file_gamma_refused_with_the_logistic_range(argv, option, tmp_path, capsys):
    # F2: a logistic file's gamma 1e-200 was refused by the reader with the linear range
    # ('gamma must lie in [1e-100, 1e+100]', where 1e-100 is refused too); the reader now
    # takes the family's ranges (federation_file.read's ranges=).
    from tests.helpers import run_cli

    path = tmp_path / "f.json"
    clients = '[{"gamma": 0.5, "r": 1}, {"gamma": 1e-200, "r": 1}]'
    path.write_text(clients if option == "--clients-file" and argv[0] == "predict" else
                    '{"fedrisk_federation": 1, "clients": ' + clients + "}")
    code, out, err = run_cli(argv + [path], capsys)
    assert code == 2 and out == ""
    assert err.strip().endswith("client 1: gamma must lie in [1e-16, 1e+10] with --model "
                                "logistic (riskcalc.logistic.ranges), got 1e-200"), err
    assert err.count("\n") == 1


def test_lam_path_refuses_lam_zero_beyond_the_transition_before_solving(monkeypatch):
    # F3: lams [1e-5, 0] at gamma 2 (beyond h = 0.3985) solved lam = 1e-5 (0.75 s) before
    # refusing lam = 0 (no finite minimizer); now refused before any solve.
    from riskcalc.logistic import path

    def no_solve(*args, **kwargs):
        raise AssertionError("solved before the refusal")
    monkeypatch.setattr(path, "_limit", no_solve)
    with pytest.raises(ValueError, match=r"^lam = 0: no finite minimizer .*gamma = 2 >= h = "
                       r"0\.398547.*Use lam > 0$"):
        riskcalc.logistic_lam_path(gamma=2, signal=1, r=1, lams=[1e-5, 0.0])


@pytest.mark.parametrize("gamma", ["1e-300", "1e+300"])
def test_logistic_gamma_option_refused_with_the_logistic_range(gamma, capsys):
    # F4: predict --model logistic --gamma 1e-300 named the linear range [1e-100, 1e+100]
    # (1e-20 the logistic one, as the family's files now do, F2, and logistic_limit):
    # a user taking 1e-100 from it was refused again with another range.
    from tests.helpers import run_cli

    code, out, err = run_cli(["predict", "rtfa", "--model", "logistic", "--gamma", gamma,
                              "--signal", "1", "--r", "1", "--lam", "0.1"], capsys)
    assert (code, out) == (2, "")
    assert err == f"error: gamma must lie in [1e-16, 1e+10], got {float(gamma):g}\n"


def test_lam_path_of_one_penalty_says_one_penalty():
    # F5: a one-lam path over its limit said "(1 penalties, ...)" (F1's message).
    with pytest.raises(ValueError, match=r"^the logistic lam path \(1 penalty, down to lam = "
                       r"0\.1\) at signal = 1000, r = 1: estimated"):
        riskcalc.logistic_lam_path(gamma=0.5, signal=1000, r=1, lams=[0.1], max_seconds=10)
