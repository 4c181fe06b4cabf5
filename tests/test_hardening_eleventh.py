"""Issue 32, eleventh hardening pass: the tenth pass's leftovers and a fresh fuzz (about 780
inputs, none of the earlier passes') of every verb and the Python API. Each test pins a case
that was mishandled before this pass (the old behaviour in its comment); bad input is one line
``error: ...`` with exit status 2 on the command line and a ValueError naming the parameter in
Python.
"""

import re

import numpy as np
import pytest

import riskcalc
from tests.test_hardening_ninth import _one_error_line


# --- the tenth pass's leftovers ------------------------------------------------------------

# was: "seed must lie in [0, inf), got -1.0" (a float shown for an integer seed; every
# simulating verb's --seed and montecarlo's seed= go through check_seed).
@pytest.mark.parametrize("seed, shown", [(-1, "-1"), (np.int64(-3), "np.int64(-3)"),
                                         (2.5, "2.5"), (-1.0, "-1.0"),
                                         (True, "True: a boolean")])
def test_a_bad_seed_is_shown_as_given(seed, shown):
    from montecarlo.runner.seeding import check_seed

    with pytest.raises(ValueError, match="^seed must be an integer >= 0, got " + re.escape(shown)):
        check_seed(seed)
    assert check_seed(2 ** 70) == 2 ** 70          # SeedSequence takes any size


# was: "... could not convert string to float: 'root:x:0:0:root:/root:/bin/bash'": the
# offending line of any file (/etc/passwd) printed back.
def test_a_spectrum_file_error_names_the_line_not_its_content(tmp_path):
    path = tmp_path / "passwd"
    path.write_text("1\n\nroot:x:0:0:root:/root:/bin/bash\n")
    with pytest.raises(ValueError) as exc:
        riskcalc.Spectrum.from_file(path)
    message = str(exc.value)
    assert message.endswith("line 3: expected numbers separated by spaces or commas, got "
                            "'root:x...'"), message
    assert "/bin/bash" not in message


# --- the fresh fuzz ----------------------------------------------------------------------

# was: a complex .npy spectrum in a clients file (covariate shift) was read as its real part
# (a ComplexWarning, then a risk); Spectrum.from_file refused it.
def test_a_complex_spectrum_file_is_refused_under_covariate_shift(tmp_path):
    np.save(tmp_path / "c.npy", np.array([1 + 1j, 2.0]))
    with pytest.raises(ValueError, match=r"spectrum eigenvalue must be a real number.*complex"):
        riskcalc.clients_limit("ftfa", gamma=[0.5, 0.5], r=1.0, sigma=0.5,
                               spectra=[f"file:{tmp_path / 'c.npy'}", "identity"])


# was: predict --steps 3 --step-size 0.1 --spectrum powerlaw:1 --d 1000000 ran past 10 minutes
# and 4.2 GB (the contour's nodes doubled against 10^6 eigenvalues), with no estimate.
def test_finite_steps_under_a_large_spectrum_are_bounded_before_solving(monkeypatch):
    from riskcalc.linear.engine import weighted_mp

    monkeypatch.setattr(weighted_mp, "MAX_ENTRIES", 32 * 50)
    spectrum = riskcalc.Spectrum.parse("powerlaw:1,100")
    with pytest.raises(ValueError, match=r"the spectrum's 100 distinct eigenvalues at 32 "
                                         r"contour nodes .* at most 50 distinct eigenvalues"):
        riskcalc.steps_limit("ftfa", gamma=0.5, r=1.0, sigma=0.5, steps=3, step_size=0.001,
                             spectrum=spectrum)


# was: --m nan "cannot convert float NaN to integer" (no parameter named); --d 1e400 an
# OverflowError traceback.
@pytest.mark.parametrize("bad, message", [
    ("--m nan --d 10", "error: --m must be of magnitude in [1e-100, 1e+100] (or 0, where the bound "
                         "takes 0), got nan"),
    ("--m 2 --d 1e400", "error: --d: '1e400' overflows: beyond the largest float (about "
                        "1.8e308), it would be read as infinite"),
])
def test_bounds_refuse_nan_and_overflowing_counts(bad, message, capsys):
    line = _one_error_line(f"bounds lower_bound_aer --N 100 --R 1 {bad}".split(), capsys)
    assert line == message


# was: "power-law size d must be an integer ..., got 0.0" and "got 1000000000000000.0".
@pytest.mark.parametrize("spec, shown", [("powerlaw:1,0", "0"), ("powerlaw:1,1e15",
                                                                "1000000000000000")])
def test_a_count_read_from_text_is_shown_without_a_decimal_point(spec, shown):
    with pytest.raises(ValueError, match=rf"power-law size d must be an integer .*, got {shown}$"):
        riskcalc.Spectrum.parse(spec)


# was: "error: spectrum eigenvalue must lie in [1e-100, 1e+100], got 1e-200 (entry 0 of 1)",
# raised deep in the covariate-shift solver, naming neither the file nor the client.
def test_a_clients_file_spectrum_out_of_range_names_the_client(tmp_path, capsys):
    path = tmp_path / "fed.json"
    path.write_text('[{"gamma": 0.5, "r": 1, "sigma": 0.5, "spectrum": "scaled:1e-200"}]')
    line = _one_error_line(["predict", "ftfa", "--gamma", "0.5", "--r", "1", "--sigma", "0.5",
                            "--clients-file", str(path)], capsys)
    assert line.startswith(f"error: --clients-file {path}: client 0: spectrum: scaled:C factor "
                           "C must lie in [1e-100, 1e+100], got 1e-200"), line


# was: max_seconds=-1 or nan: "estimated 0.0612 s ... over the limit max_seconds = -1"; True
# a limit of one second; logistic_lam_path(max_seconds=0) computed.
@pytest.mark.parametrize("call", [
    lambda ms: riskcalc.logistic_limit(gamma=0.5, signal=1.0, r=1.0, lam=1.0, max_seconds=ms),
    lambda ms: riskcalc.logistic_lam_path(gamma=0.5, signal=1.0, r=1.0, lams=[1.0],
                                          max_seconds=ms),
    lambda ms: riskcalc.logistic_clients_limit(gamma=[0.5, 0.8], r=[1.0, 0.5], signal=1.0,
                                               lam=1.0, global_lam=1.0, max_seconds=ms),
])
@pytest.mark.parametrize("max_seconds", [-1, 0, np.nan, True])
def test_logistic_max_seconds_is_a_positive_number(call, max_seconds):
    with pytest.raises(ValueError, match=r"^max_seconds must "):
        call(max_seconds)


# was: TypeError "only 0-dimensional arrays can be converted to Python scalars" (two of them).
@pytest.mark.parametrize("call, name", [
    (lambda: riskcalc.logistic_lam_path(gamma=[0.5, 1.0], signal=1.0, r=1.0, lams=[1.0]),
     "gamma"),
    (lambda: riskcalc.fedavg_centre_scale([1.0, 2.0], 1.0), "signal"),
    # was: "The truth value of an array with more than one element is ambiguous".
    (lambda: riskcalc.optimal_lambda_logistic(gamma=[0.5, 1.0], signal=1.0, r=1.0), "gamma"),
])
def test_one_point_functions_refuse_arrays_naming_the_parameter(call, name):
    with pytest.raises(ValueError, match=rf"^{name} must be a number, got an array of shape"):
        call()


# was: lam=0 on paper001-fig2's lam grid was refused in a worker, after the progress bar
# had started (two lines on stderr, ~8 s).
def test_simulate_checks_a_penalty_grid_before_running(tmp_path, capsys):
    line = _one_error_line(["simulate", "paper001-fig2", "--out", str(tmp_path / "s.csv"),
                            "--set", "lam=1,0"], capsys)
    assert line == "error: lam must lie in (0, inf), got 0.0 (entry 1 of 2)"
    assert not (tmp_path / "s.csv").exists()


# was: float() read "1_0" as 10 and "\u0661" (an Arabic-Indic one) as 1: a typing error became
# another number on the command line, in a SPEC and in a spectrum file.
@pytest.mark.parametrize("argv, message", [
    ("predict ftfa --gamma 0.5 --r 1_0 --sigma 0.5", "error: argument --r: invalid float value: "
                                                    "'1_0'"),
    ("predict ftfa --gamma \u0661 --r 1 --sigma 0.5", "error: argument --gamma: invalid float "
                                                     "value: '\u0661'"),
    ("predict ftfa --gamma 0.5 --r 1 --sigma 0.5 --spectrum two-point:1_0,2,0.5",
     "error: spectrum 'two-point:1_0,2,0.5': '1_0,2,0.5' is not a comma-separated list"),
    ("bounds lower_bound_aer --N 100 --R 1 --m 2 --d 1_0",
     "error: --d must be a number or comma-separated numbers, got '1_0'"),
])
def test_numbers_as_text_are_decimal_notation(argv, message, capsys):
    line = _one_error_line(argv.split(), capsys)
    assert line.startswith(message), line


def test_a_spectrum_file_in_other_notation_is_refused(tmp_path):
    path = tmp_path / "s.txt"
    path.write_text("2 1_000\n")
    with pytest.raises(ValueError, match=r"line 1: expected numbers .*, got '1_000'"):
        riskcalc.Spectrum.from_file(path)
    path.write_text("1e-3, 2.5 nan\n")      # decimal notation (nan refused as not finite)
    with pytest.raises(ValueError, match=r"must be a finite number .* got nan"):
        riskcalc.Spectrum.from_file(path)


# was: np.asarray dropped the mask: the masked entry (gamma = 1, an infinite variance) was
# computed as a number.
def test_a_masked_array_with_masked_entries_is_refused():
    gamma = np.ma.masked_array([0.5, 1.0], mask=[0, 1])
    with pytest.raises(ValueError, match=r"gamma must be a real number.*a masked array"):
        riskcalc.limit("ftfa", gamma=gamma, r=1.0, sigma=0.5)
    unmasked = np.ma.masked_array([0.5, 2.0], mask=[0, 0])
    np.testing.assert_allclose(riskcalc.limit("ftfa", gamma=unmasked, r=1.0, sigma=0.5).risk,
                               [0.25, 0.75], rtol=1e-12)


# was: "not a numeric CSV (could not convert string '1_0' to float64 at row 1, column 2)":
# numpy's count, as float() took the cell for a number.
def test_estimate_names_the_csv_line_of_a_number_in_other_notation(tmp_path, capsys):
    path = tmp_path / "fed.csv"
    path.write_text("client,y,a\n0,1.5,2\n1,1_0,3\n2,1,1\n")
    line = _one_error_line(["estimate", "--data", str(path)], capsys)
    assert line.endswith("not a numeric CSV (line 3, column 2 ('y'): '1_0' is not a number)")


@pytest.mark.parametrize("kw, match", [
    (dict(d=0.5), "d must be an integer"),
    (dict(d=True), "d must be an integer"),
    (dict(spectrum="powerlaw:1"), "powerlaw needs the number of eigenvalues"),
    (dict(spectrum=3), "spectrum must be a riskcalc.Spectrum or a SPEC"),
])
def test_clients_limit_checks_d_and_a_spec_string(kw, match):
    """d was ignored unchecked without spectra; a SPEC string as spectrum was an
    AttributeError (harden11's leftovers in finite_clients)."""
    with pytest.raises(ValueError, match=match):
        riskcalc.clients_limit("fedavg", gamma=[0.5, 1.5], sigma=0.5, r=0.5, **kw)


def test_clients_limit_takes_a_spec_string_as_the_spectrum():
    given = riskcalc.clients_limit("fedavg", gamma=[0.5, 1.5], sigma=0.5, r=0.5,
                                   spectrum="two-point:1,2,0.5")
    parsed = riskcalc.clients_limit("fedavg", gamma=[0.5, 1.5], sigma=0.5, r=0.5,
                                    spectrum=riskcalc.Spectrum([1.0, 2.0], [0.5, 0.5]))
    assert np.array_equal(given.risk, parsed.risk)


def test_a_weight_lost_to_rounding_is_refused():
    """Weights (1e-16, 1) with gamma (0.5, 1.5) gave a risk of 0.90 where the limit as the
    weight falls is about 1.05 (silently wrong); 1e-300 an OverflowError traceback."""
    for w in (1e-16, 1e-300):
        with pytest.raises(ValueError, match="client 0's weight is .* below 1e-09"):
            riskcalc.clients_limit("fedavg", sigma=0.5, r=0.5, gamma=[0.5, 1.5], weights=[w, 1])
    near = riskcalc.clients_limit("fedavg", sigma=0.5, r=0.5, gamma=[0.5, 1.5],
                                  weights=[1e-8, 1]).risk
    far = riskcalc.clients_limit("fedavg", sigma=0.5, r=0.5, gamma=[0.5, 1.5],
                                 weights=[1e-6, 1]).risk
    np.testing.assert_allclose(near, far, rtol=1e-4)


def test_pooled_sum_printed_as_it_is():
    with pytest.raises(ValueError, match="1/gamma_j = 2e-100"):
        riskcalc.clients_limit("fedavg", sigma=0.5, r=0.5, gamma=[1e100, 1e100])
