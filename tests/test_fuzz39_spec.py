"""Issue 32, fuzz39 (spec): what this fuzz found, each test failing before."""

import json
import warnings

import numpy as np
import pytest

import riskcalc
from riskcalc import Spectrum
from riskcalc.spectrum.ordered import ordered_steps
from tests.helpers import run_cli


def test_two_spectrum_files_whose_names_differ_in_case_are_two_spectra(tmp_path):
    # F1 (a silent wrong answer): the finite-M limits keyed each client's SPEC by its lower
    # case, so file:A.txt and file:a.txt (two files) were one spectrum: both clients got the
    # first file's eigenvalues (risk 0.75, 0.75 for 1.2457, 1.1002), and advise refused them
    # ("clients with different covariance spectra"). Now the path keeps its case.
    (tmp_path / "A.txt").write_text("1 1 1 1\n")
    (tmp_path / "a.txt").write_text("4 4 4 4\n")
    common = dict(gamma=[0.5, 0.5], sigma=[0.5, 0.5], r=[1.0, 1.0])
    files = riskcalc.clients_limit("fedavg", spectra=[f"file:{tmp_path}/A.txt",
                                                     f"file:{tmp_path}/a.txt"], d=4, **common)
    scaled = riskcalc.clients_limit("fedavg", spectra=["scaled:1", "scaled:4"], **common)
    np.testing.assert_allclose(files.risk, scaled.risk, rtol=1e-12)
    assert abs(scaled.risk[0] - scaled.risk[1]) > 0.1
    # advise's Federation took them for one SPEC, then refused the two spectra it read
    fed = tmp_path / "fed.json"
    fed.write_text(json.dumps({"fedrisk_federation": 1, "clients": [
        {"gamma": 0.5, "r": 1, "sigma": 0.5, "spectrum": f"file:{name}.txt"} for name in "Aa"]}))
    assert riskcalc.Federation.from_file(fed).spectra[1].endswith("a.txt")


def test_a_spec_takes_spaces_around_its_kind_as_around_its_numbers(tmp_path, capsys):
    # F2: "powerlaw : 1,5" was "not one of identity, two-point:A,B,W, ..." while
    # "powerlaw: 1, 5" was read; the SPEC was split in 12 places, each its own way. Now one
    # helper (riskcalc.spectrum.spec_kind) reads the kind without its spaces, everywhere: the
    # check that no output is written over a file: input too.
    assert Spectrum.parse("powerlaw : 1,5") == Spectrum.parse("powerlaw:1,5")
    assert Spectrum.parse(" Two-Point :1,4,0.5") == Spectrum.two_point(1, 4, 0.5)
    assert Spectrum.parse("identity :") == Spectrum.identity()
    assert ordered_steps("scaled : 2")[1].tolist() == [2.0]
    eig = tmp_path / "eig.txt"
    eig.write_text("1 2 4\n")
    code, out, err = run_cli(["sweep", "ftfa", "--gamma", "2", "--r", "1", "--sigma", "0.5",
                              "--spectrum", f"file :{eig}", "--d", "3", "--reps", "2",
                              "--out", eig], capsys)
    assert code == 2 and "is the input file of --spectrum" in err, err
    assert eig.read_text() == "1 2 4\n"


def test_a_leading_tilde_is_the_home_folder_in_every_path(tmp_path, monkeypatch, capsys):
    # F3: "file:~/eig.txt" (--spectrum, or in a federation file), --data=~/d.npz and
    # --out=~/r.csv (no shell expands "~" there) named a folder "~": "does not exist". Now one
    # helper (riskcalc._files.user_path) reads a leading ~ as a shell does, in every reader,
    # every path option and the check that no output is written over an input.
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "eig.txt").write_text("1 2 4\n")
    assert Spectrum.parse("file:~/eig.txt") == Spectrum([1, 2, 4])
    assert ordered_steps("file:~/eig.txt", 3)[1].tolist() == [1.0, 2.0, 4.0]
    client = {"gamma": 0.5, "r": 1, "sigma": 0.5, "spectrum": "file:~/eig.txt"}
    (tmp_path / "fed.json").write_text(json.dumps({"fedrisk_federation": 1,
                                                   "clients": [client, client]}))
    code, out, err = run_cli(["predict", "ftfa", "--federation=~/fed.json"], capsys)
    assert code == 0, err
    code, out, err = run_cli(["sweep", "ftfa", "--gamma", "2", "--r", "1", "--sigma", "0.5",
                              "--spectrum", "file:~/eig.txt", "--d", "3", "--reps", "2",
                              "--out=~/eig.txt"], capsys)
    assert code == 2 and "is the input file of --spectrum" in err, err
    assert (tmp_path / "eig.txt").read_text() == "1 2 4\n"


def test_a_path_too_long_is_said_to_be_so(capsys):
    # F4: a 5000-character path was "spectrum file ... does not exist" (--data: "no such
    # file"), and --plugin a traceback (OSError from pathlib's is_file). Now each says why.
    name = "a" * 5000
    code, _, err = run_cli(["predict", "ftfa", "--gamma", "2", "--r", "1", "--sigma", "0.5",
                            "--spectrum", f"file:{name}.txt"], capsys)
    assert code == 2 and "cannot be read (File name too long)" in err, err
    code, _, err = run_cli(["estimate", "--data", f"{name}.npz"], capsys)
    assert code == 2 and "cannot be read (File name too long)" in err, err
    code, _, err = run_cli(["predict", "ftfa", "--plugin", f"{name}.py", "--gamma", "2",
                            "--r", "1", "--sigma", "0.5"], capsys)
    assert code == 2 and err.startswith("error: plugin") and "File name too long" in err, err


def test_a_number_below_the_smallest_float_is_said_to_underflow_whatever_its_type():
    # F5: numpy.longdouble("1e-4000") was "sigma must lie in ..., got 0.0" (gamma) or read as
    # sigma = 0 silently, as were Decimal("1e-400") and Fraction(1, 10 ** 400); a longdouble
    # 1e4000 printed numpy's overflow warning before "got inf". Now each is named, as
    # underflowing or beyond 1e308 (the --sigma 1e-400 of the command line says so too).
    from decimal import Decimal
    from fractions import Fraction

    for tiny in (np.longdouble("1e-4000"), Decimal("1e-400"), Fraction(1, 10 ** 400),
                 np.array([0.5, np.longdouble("-1e-4000")])):
        with pytest.raises(ValueError, match="^sigma: .* underflows: nonzero but below"):
            riskcalc.limit("rtfa", gamma=2.0, r=1.0, sigma=tiny, lam=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="magnitude below 1e308, got np.longdouble"):
            riskcalc.limit("rtfa", gamma=np.longdouble("1e4000"), r=1.0, sigma=0.5, lam=0.5)
    assert riskcalc.limit("rtfa", gamma=2.0, r=1.0, sigma=np.longdouble(0.5),
                          lam=Decimal("0.5")).risk == pytest.approx(0.6403882032022076)


def test_a_npz_whose_headers_disagree_on_the_rows_is_refused_for_that(tmp_path, capsys):
    # F6: y's header claiming 10^9 entries beside 6 rows of X was refused for the memory the
    # estimate of 10^9 rows would need (106 GiB), a limit the data never reach. Now the rows
    # are checked from the headers first, with check_data's message.
    import io
    import zipfile

    def header(shape):
        raw = io.BytesIO()
        np.lib.format.write_array_header_1_0(raw, {"descr": "<f8", "fortran_order": False,
                                                   "shape": shape})
        return raw.getvalue()
    path = tmp_path / "d.npz"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("X.npy", header((6, 2)))
        archive.writestr("y.npy", header((10 ** 9,)))
        archive.writestr("client.npy", header((6,)))
    code, out, err = run_cli(["estimate", "--data", path], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.endswith("y must have shape (6,) like the rows of X, got (1000000000,)\n"), err


def _data(path, scale, seed=0, d=20, m=4, n=100):
    """A .npz of m clients of n rows of X ~ N(0, scale I_d), y = X theta_j + 0.5 noise."""
    rng = np.random.default_rng(seed)
    centre = rng.standard_normal(d) / np.sqrt(d)
    X = rng.standard_normal((m * n, d)) * np.sqrt(scale)
    theta = centre + 0.5 * rng.standard_normal((m, d)) / np.sqrt(d)
    client = np.repeat(np.arange(m), n)
    y = np.einsum("ij,ij->i", X, theta[client]) + 0.5 * rng.standard_normal(m * n)
    np.savez(path, X=X, y=y, client=client)
    return path


def test_advise_notes_data_that_contradict_the_spectrum_given(tmp_path, capsys):
    # F7: advise --data F --spectrum identity on data of Sigma = 3 I (m1 estimated 3.017 +-
    # 0.034) answered at the identity without a word. Now a note says the data contradict it
    # (its m1 or m2 beyond four standard errors of the data's), naming the data's spectrum;
    # a spectrum the data agree with gets none.
    path = _data(tmp_path / "d.npz", 3.0)
    argv = ["advise", "--data", path, "--methods", "ftfa", "--no-progress", "--spectrum"]
    code, out, err = run_cli(argv + ["identity"], capsys)
    assert code == 0 and "federation: 4 clients, spectrum identity" in out
    assert "warning: --spectrum identity: the data contradict the spectrum given: its m1 " \
           "(the mean of the eigenvalues) is 1, the data's 3.017 +- 0.034" in err, err
    code, out, err = run_cli(argv + ["scaled:3"], capsys)
    assert code == 0 and "contradict" not in err, err


def test_finite_text_read_as_inf_is_refused_by_one_helper(tmp_path):
    # (b), the twin of note38: "finite text read as inf overflows" was written twice (the
    # spectrum file's _refuse_beyond_float, the data CSV's _bad_line). Now _text.decimal says
    # it (finite=True), for both readers; the options keep refusing "1e400" by their range.
    from riskcalc._text import Overflow, decimal

    with pytest.raises(Overflow, match=r"^'-1e400' overflows: beyond the largest float"):
        decimal(" -1e400 ", finite=True)
    assert decimal("-inf", finite=True) == -np.inf and decimal("1e400") == np.inf
    (tmp_path / "eig.txt").write_text("1 2\n3 1E+999\n")
    with pytest.raises(ValueError, match=r"eig.txt': line 2: '1E\+999' overflows: beyond"):
        Spectrum.from_file(tmp_path / "eig.txt")


def test_random_eigenvectors_of_gaussian_features_are_refused_as_without_effect(capsys):
    # F8 (c): compare/sweep --eigvecs random with Gaussian features (the default) simulated the
    # aligned model in distribution (a rotated Gaussian vector has the same law) and printed it
    # as if the eigenvectors had been tried; montecarlo.compare(eigvecs="random") likewise. Now
    # an option without effect, refused as the others are (docs/safety.rst).
    import montecarlo

    code, out, err = run_cli(["compare", "ftfa", "--gamma", "2", "--r", "1", "--sigma", "0.5",
                              "--d", "50", "--reps", "2", "--eigvecs", "random"], capsys)
    assert code == 2 and out == "" and err.startswith(
        "error: --eigvecs random has no effect with --features gaussian"), err
    with pytest.raises(ValueError, match="eigvecs='random' has no effect with features="):
        montecarlo.compare("ftfa", gamma=2.0, r=1.0, sigma=0.5, d=50, reps=2,
                           eigvecs="random")


def test_a_spectrum_text_file_with_an_empty_field_is_refused(tmp_path):
    # F9: "1,,2" (a value left out between commas, as a spreadsheet writes a blank cell) was
    # read as the eigenvalues 1 and 2, silently. Now refused naming the line; a comma that
    # ends a line is refused too since fuzz41 api F5 (one rule: a comma between two numbers).
    path = tmp_path / "eig.txt"
    for text in ("1,,2\n", "4\n,1,2\n", "1, ,2\n"):
        path.write_text(text)
        with pytest.raises(ValueError, match=r"line \d: an empty field (between|before)"):
            Spectrum.from_file(path)
    path.write_text("1, 2\n4\n")
    assert Spectrum.from_file(path) == Spectrum([1, 2, 4])


def test_a_column_of_eigenvalues_is_refused_by_both_spectrum_routes(tmp_path):
    # F10: a 3 x 1 (or 1 x 3) .npy was refused by Spectrum.from_file ("expected a 1-d list of
    # eigenvalues") but read by ordered_steps (covariate shift: a federation's per-client
    # file, clients_limit(spectra=...)), and a 3 x 1 array likewise. Now both refuse it.
    for shape in ((3, 1), (1, 3)):
        np.save(tmp_path / "col.npy", np.ones(shape))
        with pytest.raises(ValueError, match="1-d list"):
            Spectrum.from_file(tmp_path / "col.npy")
        with pytest.raises(ValueError, match=r"col.npy' is an array of shape \d x \d: give "):
            ordered_steps(f"file:{tmp_path / 'col.npy'}", 3)
        with pytest.raises(ValueError, match="is an array of shape"):
            ordered_steps(np.ones(shape))


def test_a_target_powerlaw_without_its_size_names_the_file_and_client(tmp_path, capsys):
    # F11: a federation file without "d" whose TARGET gives powerlaw:1 was refused by predict
    # as "spectrum 'powerlaw:1': powerlaw needs the number of eigenvalues ...", naming neither
    # the file nor the client, while another client's same SPEC named the file. Now both do.
    path = tmp_path / "fed.json"
    path.write_text(json.dumps({"fedrisk_federation": 1, "clients": [
        {"name": "a", "gamma": 0.5, "r": 1, "sigma": 0.5, "spectrum": "powerlaw:1"},
        {"name": "b", "gamma": 0.8, "r": 0.5, "sigma": 1}]}))
    code, out, err = run_cli(["predict", "ftfa", "--federation", path], capsys)
    assert code == 2 and err.startswith(f"error: --federation {path}: client 0 ('a'): "
                                        "spectrum: spectrum 'powerlaw:1': powerlaw needs"), err
    assert run_cli(["predict", "ftfa", "--federation", path, "--d", 10], capsys)[0] == 0


def test_a_federation_file_number_beyond_the_floats_is_said_to_overflow(tmp_path, capsys):
    # F12: "r": 1e400 in a federation file was "r must be a finite number in [0, 1e+100], got
    # inf", a value the file does not hold (its "r": 1e-400 was said to underflow). Now the
    # JSON reader says it overflows (decimal(finite=True)), naming the client and the key.
    path = tmp_path / "fed.json"
    path.write_text('{"fedrisk_federation": 1, "clients": [{"gamma": 0.5, "r": 1, "sigma": 0.5,'
                    ' "se": {"r": -1E+999}}, {"gamma": 0.8, "r": 0.5, "sigma": 1}]}')
    code, out, err = run_cli(["predict", "ftfa", "--federation", path], capsys)
    assert code == 2 and err == (f"error: --federation {path}: client 0: se.r: '-1E+999' "
                                 "overflows: beyond the largest float (about 1.8e308), it "
                                 "would be read as infinite\n"), err


def test_spectrum_parse_takes_a_spec_string_only():
    # F13: Spectrum.parse read str() of its argument: pathlib.Path("identity") (or
    # Path("two-point:1,4,0.5"), a file name meant) was taken as that SPEC, and bytes or None
    # were "spectrum b'identity' is not one of ...". Now anything but a string is refused as
    # riskcalc.spectrum.as_spectrum refuses it.
    import pathlib

    for value in (pathlib.Path("identity"), b"identity", None, 3):
        with pytest.raises(ValueError, match="^spectrum must be a SPEC string .* got "):
            Spectrum.parse(value)


def test_a_npy_header_cut_short_is_refused_not_a_traceback(tmp_path, capsys):
    # F14: a .npy whose header dict is cut short ("{'descr': '<f8',": the header length field
    # says 16 bytes) made numpy raise tokenize.TokenError, a traceback for --spectrum
    # file:EIG.npy and for a .npz member of --data. Now one error line each.
    import io
    import zipfile

    head = b"\x93NUMPY\x01\x00\x10\x00{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }\n"
    (tmp_path / "eig.npy").write_bytes(head + bytes(24))
    code, out, err = run_cli(["predict", "ftfa", "--gamma", "2", "--r", "1", "--sigma", "0.5",
                              "--spectrum", f"file:{tmp_path / 'eig.npy'}"], capsys)
    assert code == 2 and err.count("\n") == 1 and "its header is cut short" in err, err
    with zipfile.ZipFile(tmp_path / "d.npz", "w") as archive:
        archive.writestr("X.npy", head.replace(b"(3,)", b"(6,2)"))
        for key, arr in (("y", np.ones(6)), ("client", np.arange(6) % 2)):
            raw = io.BytesIO()
            np.save(raw, arr)
            archive.writestr(f"{key}.npy", raw.getvalue())
    code, out, err = run_cli(["estimate", "--data", tmp_path / "d.npz"], capsys)
    assert code == 2 and err.count("\n") == 1 and "array X cannot be read (its header is " \
                                                   "cut short)" in err, err


def test_a_npy_header_too_long_to_read_safely_is_not_called_a_pickle(tmp_path):
    # F15: a .npy header longer than numpy reads without allow_pickle (10,000 bytes) was
    # "it holds Python objects" (spectrum file) or "array X holds Python objects (a pickle)"
    # (data), as numpy's message advises allowing pickles. Now said for what it is.
    import struct

    body = ("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), 'pad': '"
            + "x" * 20000 + "'}").encode()
    body += b" " * (64 - (12 + len(body) + 1) % 64) + b"\n"
    (tmp_path / "eig.npy").write_bytes(b"\x93NUMPY\x02\x00" + struct.pack("<I", len(body))
                                       + body + bytes(24))
    with pytest.raises(ValueError, match="its header is longer than numpy reads safely "
                                         r"\(a damaged .npy\?\); save the array again"):
        Spectrum.from_file(tmp_path / "eig.npy")


def test_an_empty_file_name_is_said_to_be_empty(capsys):
    # F16: estimate --data "" was "--data : no such file" and Spectrum.from_file("") "spectrum
    # file '' does not exist", where --federation "" says "needs a file name, got an empty
    # one". Now each says that.
    code, out, err = run_cli(["estimate", "--data", " "], capsys)
    assert code == 2 and err == "error: --data needs a file name, got an empty one\n", err
    with pytest.raises(ValueError, match="^spectrum file: needs a file name, got an empty one"):
        Spectrum.from_file("")
