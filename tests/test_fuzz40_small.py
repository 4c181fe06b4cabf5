"""Issue 32, fuzz40 (small): what this fuzz found, each test failing before."""
import numpy as np
import pytest

from tests.helpers import run_cli

P = ["predict", "ftfa", "--gamma", "2", "--r", "1", "--sigma", "0.5"]


def test_max_minutes_past_float_range_says_how_to_ask_for_no_limit(capsys):
    """F1: ``--max-minutes 1e400`` (read as inf) was refused as "got inf" alone, though the docs
    said a value beyond a year sets no timer; the message now says what 1e400 became and what
    sets no timer (the docs: a finite value)."""
    code, out, err = run_cli(P + ["--max-minutes", "1e400"], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "1e400 reads as inf" in err and "e.g. 1e300" in err


def test_long_spectrum_spec_is_echoed_cut(capsys):
    """F2: a malformed SPEC was echoed whole (a 4009-character two-point SPEC, over 4000
    characters of message); now its first 60 characters and its length."""
    spec = "two-point:" + ",".join(["1"] * 2000)
    code, out, err = run_cli(P + ["--spectrum", spec], capsys)
    assert code == 2 and err.count("\n") == 1 and len(err) < 300
    assert "(4009 characters) is not one of identity" in err


def test_estimate_files_messages_name_no_flag_in_python(tmp_path, capsys):
    """F3: ``riskcalc.estimate.estimate_file`` and ``load`` began their messages with
    ``--data PATH:`` (a command-line flag) when called from Python; they now say "data file
    PATH:" ("path needs a file name"), and the CLI still names --data."""
    from riskcalc.estimate import estimate_file, load

    path = tmp_path / "d.csv"
    path.write_text("client,y\n1,2\n")
    for call, arg in ((estimate_file, path), (load, str(path)), (load, "")):
        with pytest.raises(ValueError) as info:
            call(arg)
        assert not str(info.value).startswith("--data"), info.value
    with pytest.raises(ValueError, match="^data file .*: the CSV has no feature column"):
        estimate_file(path)
    code, _, err = run_cli(["estimate", "--data", path], capsys)
    assert code == 2 and err.startswith(f"error: --data {path}: ")
    code, _, err = run_cli(["estimate", "--data", ""], capsys)
    assert err == "error: --data needs a file name, got an empty one\n"


def test_zero_d_npy_spectrum_file_is_refused(tmp_path, capsys):
    """F4: a 0-d ``.npy`` (``numpy.save(PATH, 3.0)``) was read as one eigenvalue (predict
    answered at Sigma = 3 I); a spectrum file holds a 1-d array, as a 3 x 1 one is refused."""
    from riskcalc import Spectrum
    from riskcalc.spectrum.ordered import ordered_steps

    path = tmp_path / "s.npy"
    np.save(path, np.float64(3.0))
    for call in (lambda: Spectrum.from_file(path), lambda: ordered_steps(f"file:{path}")):
        with pytest.raises(ValueError, match="is not a list of numbers: a 0-d array"):
            call()
    code, out, err = run_cli(P + ["--spectrum", f"file:{path}"], capsys)
    assert code == 2 and out == "" and "a 0-d array" in err


def test_logistic_family_names_a_method_it_has_not(capsys):
    """F5: ``predict maml_fl --model logistic --alpha 0.1`` blamed --alpha ("does not apply to
    --model logistic"); the family has no maml_fl, which is now said, with its methods."""
    for verb, extra in (("predict", []), ("compare", ["--d", "10"])):
        code, out, err = run_cli([verb, "maml_fl", "--model", "logistic", "--alpha", "0.1",
                                  "--gamma", "2", "--signal", "1", "--r", "1"] + extra, capsys)
        assert code == 2 and out == "" and err.count("\n") == 1, err
        assert err.startswith("error: --model logistic has no method maml_fl: its methods are "
                              "rtfa and local_ridge without M clients; rtfa, fedavg"), err


@pytest.mark.parametrize("gam, count, alpha", [([3 * (1 - 1e-4)], [3], 0.3),
                                               ([1001, 2], [1, 2], 0.5)])
def test_maml_near_pooled_refusal_names_the_peak_left_out(gam, count, alpha):
    """F6: MAML-FL at Sigma = I with N/d - 1 < 1e-3 and 1/alpha inside the clients' spectra
    was refused as "pinned ... where one client's t_l reaches 0", no client having gamma < 1;
    the cause is that the peak's quadrature is used only from N/d - 1 >= 1e-3
    (``own_objective.PEAK_POOLED``), which the refusal now says, with the gammas to move.
    Moving them (gamma 2.99, or 900 for 1001) answers."""
    from riskcalc.errors import SolverError
    from riskcalc.linear.finite_clients.own import own_group_limits

    ones = np.ones(len(gam))
    with pytest.raises(SolverError, match=r"1/alpha = \S+ lies inside the spectrum .* used "
                                          r"only from N/d - 1 >= 0\.001 .* move the gammas "
                                          "off pooled N = d") as info:
        own_group_limits("maml_fl", np.array(gam), ones, 0.5 * ones, np.array(count, float),
                         alpha, "samples")
    assert "t_l reaches 0" not in str(info.value)


@pytest.mark.parametrize("path", [None, 3])
def test_estimate_load_refuses_a_path_that_is_no_path(path):
    """F7: ``riskcalc.estimate.load(None)`` (public) raised TypeError from os ("expected str,
    bytes or os.PathLike object"), where ``estimate_file`` refused it naming the parameter."""
    from riskcalc.estimate import load

    with pytest.raises(ValueError, match="^path must be a file path"):
        load(path)


def test_a_long_file_spec_is_echoed_whole(tmp_path):
    """F2 (follow-up): the SPEC cut to 60 characters must not cut a ``file:`` SPEC, which names
    the file (test_fuzz36_adv found it)."""
    from riskcalc.spectrum.ordered import ordered_steps

    path = tmp_path / ("e" * 80 + ".txt")
    path.write_text("1 2 4\n")
    with pytest.raises(ValueError, match=f"^spectrum 'file:{path}' has 3 eigenvalues for d = 4"):
        ordered_steps(f"file:{path}", d=4)
