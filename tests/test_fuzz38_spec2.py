"""Issue 32, fuzz38 (spec2): what this fuzz found, each test failing before."""

import json
import os

import numpy as np
import pytest

from riskcalc import Spectrum, federation_file
from riskcalc.spectrum.ordered import ordered_steps
from tests.helpers import run_cli


def test_spectra_compare_by_value_with_a_consistent_hash():
    # F1: Spectrum([1, 2]) == Spectrum([1, 2]) was False (equality by identity; a set or a
    # dict key held equal spectra apart). Now value equality: the same atoms, weights and
    # signal weights, and signal weights given by both or neither (routes needing G = H
    # refuse given ones).
    a, b = Spectrum([1, 2]), Spectrum(np.array([2.0, 1.0]))
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert Spectrum([1, 1, 2], weights=[0.25, 0.25, 0.5]) == a
    assert a != Spectrum([1, 2], signal_weights=[0.5, 0.5])
    assert a != Spectrum([1, 2.0000001]) and a != Spectrum.identity() and a != "identity"


def test_a_spectrum_text_file_takes_comments_as_a_data_csv_does(tmp_path):
    # F2: "#" lines (numpy.savetxt's header) were refused in a spectrum text file ("line 1:
    # expected numbers ..., got '#'") while the data CSV reader (numpy.loadtxt) skips them.
    # Now "#" starts a comment in both.
    path = tmp_path / "eig.txt"
    np.savetxt(path, [1.0, 2.0, 4.0], header="eigenvalues of C")
    assert Spectrum.from_file(path) == Spectrum([1, 2, 4])
    path.write_text("1 2  # the first two\n# a note\n4\n")
    assert Spectrum.from_file(path) == Spectrum([1, 2, 4])
    assert ordered_steps(f"file:{path}", 3)[1].tolist() == [1.0, 2.0, 4.0]


def test_a_data_csv_cell_that_overflows_is_named(tmp_path, capsys):
    # F3: a CSV cell 1e400 was read as inf and refused as "X has NaN or infinite values (1
    # entries)", a text the file does not hold. Now the cell is named and said to overflow
    # (after a 1e-400, which numpy reads as 0, was "not a number" in that scan).
    path = tmp_path / "d.csv"
    path.write_text("client,y,x0,x1\n0,1e-400,1,2\n0,2,3e999,4\n")
    code, out, err = run_cli(["estimate", "--data", path], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "line 3, column 3 ('x0'): '3e999' overflows" in err
    path.write_text("client,y,x0,x1\n0,1,inf,2\n0,2,3,4\n")      # an inf written: as before
    assert "X has NaN or infinite values" in run_cli(["estimate", "--data", path], capsys)[2]


def test_a_file_spec_reads_its_path_without_the_spaces_after_the_colon(tmp_path, monkeypatch):
    # F4: "file: eig.txt" named the file " eig.txt" (Spectrum.parse, ordered_steps; a
    # federation file joined " eig.txt" to its folder): "spectrum file ' eig.txt' does not
    # exist". Now the spaces after "file:" are not part of the path.
    np.savetxt(tmp_path / "eig.txt", [1.0, 2.0, 4.0])
    monkeypatch.chdir(tmp_path)
    assert Spectrum.parse("file: eig.txt") == Spectrum([1, 2, 4])
    assert ordered_steps("file:\teig.txt", 3)[1].tolist() == [1.0, 2.0, 4.0]
    fed = tmp_path / "fed.json"
    fed.write_text(json.dumps({"fedrisk_federation": 1, "d": 3, "clients": [
        {"name": "a", "gamma": 0.5, "r": 1.0, "sigma": 0.5, "spectrum": "file: eig.txt"}]}))
    monkeypatch.chdir("/")
    spec = federation_file.read(str(fed)).clients[0]["spectrum"]
    assert Spectrum.parse(spec) == Spectrum([1, 2, 4])


def test_a_spectrum_file_number_that_underflows_is_said_to(tmp_path):
    # F5: a text spectrum file holding 1e-400 was refused as "spectrum eigenvalue must lie in
    # [1e-100, 1e+100], got 0.0": the file holds no 0. Now the line is named and the number
    # said to underflow (a 0 written is refused by the range as before).
    path = tmp_path / "eig.txt"
    path.write_text("1\n1e-400\n")
    with pytest.raises(ValueError, match=r"eig.txt': line 2: '1e-400' underflows: nonzero"):
        Spectrum.from_file(path)
    path.write_text("1\n0\n")
    with pytest.raises(ValueError, match="must lie in .1e-100, 1e.100., got 0.0"):
        Spectrum.from_file(path)


@pytest.mark.parametrize("versioned", ["yes", "no", 1, 0.0])
def test_federation_file_read_takes_a_bool_for_versioned(versioned, tmp_path):
    # F6: federation_file.read(path, versioned="yes") was taken as True ("no" too: a non-empty
    # string is true), 1 and 0.0 as bools. Now refused naming the argument; None, True,
    # False and numpy's bools as before.
    fed = tmp_path / "fed.json"
    fed.write_text(json.dumps({"fedrisk_federation": 1, "d": 3, "clients": [
        {"name": "a", "gamma": 0.5, "r": 1.0, "sigma": 0.5}]}))
    with pytest.raises(ValueError, match=r"^versioned \(None: either\) must be True or False"):
        federation_file.read(str(fed), versioned=versioned)
    for good in (None, True, np.bool_(True)):
        assert federation_file.read(str(fed), versioned=good).versioned


def test_a_power_law_spectrum_needs_no_sort_and_is_fingerprinted_once(monkeypatch):
    # F7: Spectrum.power_law(1, 10**7) took 2.4 s of CPU (9.6 s on a loaded machine), 2/3 of
    # it sorting atoms already in order, and each record() 0.35 s hashing 240 MB again. Now
    # strictly monotone atoms skip the sort (0.65 s; the arrays bit-identical) and the
    # fingerprint is computed once.
    import riskcalc.spectrum.distribution as dist
    sha, calls = dist.hashlib.sha256, []
    monkeypatch.setattr(dist.np, "unique", lambda *a, **k: pytest.fail("sorted again"))
    monkeypatch.setattr(dist.hashlib, "sha256", lambda b: calls.append(1) or sha(b))
    s = Spectrum.power_law(1.5, 10 ** 5)
    j = np.arange(1.0, 10 ** 5 + 1)
    np.testing.assert_allclose(s.atoms, (j ** -1.5 / np.mean(j ** -1.5))[::-1], rtol=1e-13)
    assert s.record() == s.record() and len(calls) == 1 and hash(s) == hash(s)
    assert Spectrum([3.0, 1.0], weights=[0.25, 0.75]).weights.tolist() == [0.75, 0.25]


def test_estimate_has_a_time_estimate_and_max_minutes(tmp_path, capsys):
    # F8: estimate (the verb and riskcalc.estimate) had no time estimate or --max-minutes:
    # 16000 x 800 took 2 s of CPU, 10000 x 20 from 300 clients on least squares 9 s (its
    # (3 m + 1)^2 m^2 contraction), larger data silently longer. Now a work model
    # (riskcalc.estimate.work, within 0.75-1.5x of the measured) refuses beyond the limit
    # naming the rows, features, clients or route that fit.
    from riskcalc.estimate import estimate
    from riskcalc.estimate.work import check_seconds, seconds
    rng = np.random.default_rng(3)
    X, client = rng.standard_normal((600, 20)), np.arange(600) % 20
    y = X[:, 0] + rng.standard_normal(600)
    np.savez(tmp_path / "d.npz", X=X, y=y, client=client)
    code, out, err = run_cli(["estimate", "--data", tmp_path / "d.npz", "--max-minutes",
                              "1e-5"], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert ("N = 600 rows of d = 20 features from m = 20 clients (least-squares route): "
            "estimated 0.00144 s of work, more than the 0.0006 s allowed; what fits: a "
            "subsample of each client's rows (about 148 of the 600 rows)") in err
    code, out, err2 = run_cli(["advise", "--data", tmp_path / "d.npz", "--max-minutes",
                               "1e-5"], capsys)         # advise --data: the same estimate
    assert code == 2 and err2 == err
    with pytest.raises(ValueError, match="what fits: about 850 of the 2000 clients, or route "
                                         "moments"):
        check_seconds(10 ** 5, 100, 2000, True, 600.0)
    assert seconds(10000, 20, 300, True) == pytest.approx(9.1, rel=0.01)
    for bad in ("1", 0, -1.0, True):
        with pytest.raises(ValueError, match="max_seconds"):
            estimate(X, y, client, max_seconds=bad)
    assert estimate(X, y, client, max_seconds=60).route == "least-squares"


def test_a_spectrum_file_number_that_overflows_is_said_to(tmp_path):
    # F9: a text spectrum file holding 1e400 was refused as "spectrum eigenvalue must be a
    # finite number in [1e-100, 1e+100], got inf": the file holds no inf. Now its line is
    # named and the number said to overflow (an "inf" written: the range's refusal).
    path = tmp_path / "eig.txt"
    path.write_text("1\n2 1e400\n")
    with pytest.raises(ValueError, match=r"eig.txt': line 2: '1e400' overflows: beyond the"):
        Spectrum.from_file(path)
    path.write_text("1\ninf\n")
    with pytest.raises(ValueError, match="must be a finite number in .1e-100, 1e.100., got inf"):
        Spectrum.from_file(path)


def test_a_clients_file_spectrum_file_out_of_range_names_the_file(tmp_path, capsys):
    # F10: a client's "file:" spectrum holding 0 (or booleans in a .npy) was refused as
    # "client 0: spectrum: spectrum eigenvalue must lie in [1e-100, 1e+100], got 0.0 (entry 1
    # of 2)", naming no file (ordered_steps). Now the file is named as Spectrum.from_file does.
    (tmp_path / "zero.txt").write_text("1\n0\n")
    fed = tmp_path / "cf.json"
    fed.write_text(json.dumps([{"gamma": 0.5, "r": 1, "sigma": 0.5, "spectrum": "file:zero.txt"},
                               {"gamma": 0.5, "r": 1, "sigma": 0.5}]))
    code, out, err = run_cli(["predict", "ftfa", "--gamma", "0.5", "--r", "1", "--sigma", "0.5",
                              "--clients-file", fed], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert (f"client 0: spectrum: spectrum file '{tmp_path / 'zero.txt'}': spectrum eigenvalue "
            "must lie in [1e-100, 1e+100], got 0.0") in err


def test_a_npy_spectrum_file_is_known_by_its_content(tmp_path):
    # F11: eig.NPY (or a .npy saved under another name) was read as text and refused as "not
    # UTF-8 text (byte 0: binary data?); give a .npy or text file"; a .npz "not UTF-8 text
    # (byte 14 ...)". Now numpy's magic (or .npy in any case) reads it as .npy, and a zip
    # archive is named.
    for name in ("eig.NPY", "eig.txt"):
        np.save(tmp_path / "x.npy", [1.0, 2.0])
        os.replace(tmp_path / "x.npy", tmp_path / name)
        assert Spectrum.from_file(tmp_path / name) == Spectrum([1, 2])
        assert ordered_steps(f"file:{tmp_path / name}", 2)[1].tolist() == [1.0, 2.0]
    np.savez(tmp_path / "e.npz", a=[1.0])
    with pytest.raises(ValueError, match=r"e.npz' is a zip archive \(a .npz of several"):
        Spectrum.from_file(tmp_path / "e.npz")


def test_a_data_csv_named_in_capitals_is_read(tmp_path, capsys):
    # F12: --data DATA.CSV was refused as "not a .npz file of arrays X, y, client (a data CSV
    # must be named *.csv)" (the extension compared with case). Now .CSV reads as .csv.
    rng = np.random.default_rng(4)
    X = rng.standard_normal((30, 2))
    rows = [f"{k % 3},{X[k, 0] + rng.standard_normal():.6f},{X[k, 0]:.6f},{X[k, 1]:.6f}"
            for k in range(30)]
    (tmp_path / "DATA.CSV").write_text("client,y,x0,x1\n" + "\n".join(rows) + "\n")
    code, out, err = run_cli(["estimate", "--data", tmp_path / "DATA.CSV"], capsys)
    assert code == 0 and out.startswith("d = 2, 3 clients"), err


def test_a_spec_number_that_underflows_gets_advice_that_fits_an_eigenvalue(capsys):
    # F13: --spectrum scaled:1e-400 said "... which would read it as 0: give 0 or a number
    # above 1e-300": 0 (and 1e-300) is refused as an eigenvalue. Now the advice names what
    # each number of a SPEC may be.
    for spec in ("scaled:1e-400", "two-point:1,2,1e-999"):
        code, out, err = run_cli(["predict", "pfedme", "--gamma", "0.5", "--lam", "1", "--r", "1",
                                  "--sigma", "0.5", "--spectrum", spec], capsys)
        assert code == 2 and "give 0" not in err and err.count("\n") == 1
        assert ("which would read it as 0: an eigenvalue C, A or B must lie in [1e-100, "
                "1e+100], an exponent P or a weight W may be 0 or above 1e-300") in err


def test_a_spectrum_parameter_given_as_an_array_is_refused_not_a_traceback():
    # F14: Spectrum.two_point(1, 2, np.array([0.25])) and Spectrum.power_law([1.0], 3) raised
    # numpy's TypeError "only 0-dimensional arrays can be converted to Python scalars". Now a
    # ValueError names the parameter; a 0-d array or numpy scalar is taken as before.
    with pytest.raises(ValueError, match=r"^two-point weight w must be a number, got an array"):
        Spectrum.two_point(1, 2, np.array([0.25]))
    with pytest.raises(ValueError, match=r"^power-law exponent p must be a number, got an arr"):
        Spectrum.power_law([1.0], 3)
    assert Spectrum.two_point(1, 2, np.array(0.25)) == Spectrum([1, 2], weights=[0.25, 0.75])
    assert Spectrum.power_law(np.float32(0.0), 3) == Spectrum.identity()


def test_federation_from_object_takes_numpy_numbers_as_the_api_does():
    # F15: federation_file.from_object (a dict built in Python) refused np.float64(0.5) as
    # "gamma must be a number, got np.float64(0.5) (float64; numbers are JSON numbers, not
    # strings or booleans)", and d = np.int64(10), which riskcalc.limit and Spectrum take.
    # Now a numpy integer or float is the number it holds; numpy's bool is still refused.
    client = {"name": "a", "gamma": np.float64(0.5), "r": np.float32(1.0), "sigma": 0.5,
              "se": {"r": np.float64(0.125)}}
    fed = federation_file.from_object({"fedrisk_federation": 1, "d": np.int64(10),
                                       "clients": [client]}, "x")
    assert fed.d == 10 and fed.clients[0]["gamma"] == 0.5 and fed.clients[0]["se"]["r"] == 0.125
    with pytest.raises(ValueError, match=r"gamma must be a number, got np.True_ \(bool"):
        federation_file.from_object({"fedrisk_federation": 1, "clients": [
            dict(client, gamma=np.bool_(True))]}, "x")


def test_a_data_csv_written_by_numpy_savetxt_with_its_header_is_read(tmp_path, capsys):
    # F16: numpy.savetxt(PATH, table, delimiter=",", header="client,y,x0,x1") writes its
    # header as "# client,y,x0,x1": refused as "the CSV header needs a 'client' column; got
    # # client, y, x0, x1" (the reader skips "#" lines elsewhere). Now a commented first line
    # naming client and y is the header; another comment first is refused as before.
    rng = np.random.default_rng(6)
    X = rng.standard_normal((30, 2))
    table = np.column_stack([np.arange(30) % 3, X[:, 0] + rng.standard_normal(30), X])
    np.savetxt(tmp_path / "d.csv", table, delimiter=",", header="client,y,x0,x1")
    code, out, err = run_cli(["estimate", "--data", tmp_path / "d.csv"], capsys)
    assert code == 0 and out.startswith("d = 2, 3 clients"), err
    (tmp_path / "c.csv").write_text("# exported\nclient,y,x0\n")
    assert "needs a 'client' column; got # exported" in run_cli(
        ["estimate", "--data", tmp_path / "c.csv"], capsys)[2]


def test_a_truncated_npz_array_is_not_called_a_pickle(tmp_path, capsys):
    # F17: a .npz whose X.npy is cut short was refused as "array X holds Python objects (a
    # pickle), which are not loaded": a wrong reason (numpy said "EOF: reading array data").
    # Now it says the array cannot be read, the file truncated or damaged.
    import io
    import zipfile
    arrays = {"X": np.ones((6, 2)), "y": np.arange(6.0), "client": np.arange(6) % 2}
    with zipfile.ZipFile(tmp_path / "d.npz", "w") as archive:
        for key, arr in arrays.items():
            raw = io.BytesIO()
            np.save(raw, arr)
            archive.writestr(f"{key}.npy", raw.getvalue()[:-16 if key == "X" else None])
    code, out, err = run_cli(["estimate", "--data", tmp_path / "d.npz"], capsys)
    assert code == 2 and "pickle" not in err and err.count("\n") == 1
    assert "array X cannot be read (EOF: reading array data" in err


def test_a_npz_holding_an_array_twice_is_refused(tmp_path, capsys):
    # F18: a .npz archive holding X.npy twice (appended to, or zipped by hand) was read with
    # one of the two, silently (as a JSON key given twice). Now refused naming the member.
    import io
    import warnings
    import zipfile
    arrays = [("X", np.ones((6, 2))), ("X", np.zeros((6, 2))), ("y", np.arange(6.0)),
              ("client", np.arange(6) % 2)]
    with warnings.catch_warnings(), zipfile.ZipFile(tmp_path / "d.npz", "w") as archive:
        warnings.simplefilter("ignore")     # zipfile's "Duplicate name"
        for key, arr in arrays:
            raw = io.BytesIO()
            np.save(raw, arr)
            archive.writestr(f"{key}.npy", raw.getvalue())
    code, out, err = run_cli(["estimate", "--data", tmp_path / "d.npz"], capsys)
    assert code == 2 and err == (f"error: --data {tmp_path / 'd.npz'}: the archive holds array "
                                 "X twice (members read as one name: which is meant is "
                                 "ambiguous); save it again with numpy.savez\n")


def test_a_npz_member_without_its_npy_suffix_is_bounded_too(tmp_path, capsys):
    # F19: numpy reads a .npz member named "X" (no .npy) as X, but the memory check read the
    # shape of "X.npy" only: X claiming 10^6 x 10^6 ended in "not enough memory (Unable to
    # allocate 7.28 TiB ...); make the problem smaller". Now "X" is checked as "X.npy" is,
    # and "X" beside "X.npy" is X twice.
    import io
    import zipfile

    def member(arr=None, shape=None):
        raw = io.BytesIO()
        if shape is None:
            np.save(raw, arr)
        else:
            np.lib.format.write_array_header_1_0(raw, {"descr": "<f8", "fortran_order": False,
                                                       "shape": shape})
        return raw.getvalue()
    with zipfile.ZipFile(tmp_path / "d.npz", "w") as archive:
        archive.writestr("X", member(shape=(10 ** 6, 10 ** 6)))
        archive.writestr("y", member(shape=(10 ** 6,)))     # rows as X's (fuzz39 spec F6)
        archive.writestr("client", member(shape=(10 ** 6,)))
    code, out, err = run_cli(["estimate", "--data", tmp_path / "d.npz"], capsys)
    assert code == 2 and "X holds N = 1e+06 rows of d = 1e+06 features" in err
    with zipfile.ZipFile(tmp_path / "d.npz", "a") as archive:
        archive.writestr("X.npy", member(np.ones((6, 2))))
    assert "holds array X twice" in run_cli(["estimate", "--data", tmp_path / "d.npz"], capsys)[2]


def test_a_npy_spectrum_whose_header_claims_too_much_is_refused_before_allocating(tmp_path):
    # F20: a .npy spectrum file whose header claims 10^12 entries (4 present) ended in "not
    # enough memory (Unable to allocate 7.28 TiB ...); make the problem smaller": numpy
    # allocates the claimed array before reading. Now the header is compared with the file.
    path = tmp_path / "eig.npy"
    with open(path, "wb") as fh:
        np.lib.format.write_array_header_1_0(fh, {"descr": "<f8", "fortran_order": False,
                                                  "shape": (10 ** 12,)})
        fh.write(np.ones(4).tobytes())
    with pytest.raises(ValueError, match=r"its header claims an array of shape \(1000000000000,"
                                         r"\) \(8e\+12 bytes\) but the file holds 32 bytes"):
        Spectrum.from_file(path)


def test_a_npy_given_as_data_is_named_without_loading_it(tmp_path, capsys):
    # F21: --data with a .npy file (any name) was loaded whole to say "a single array (.npy)":
    # one whose header claims 10^12 entries ended in "not enough memory (Unable to allocate
    # 7.28 TiB ...)". Now numpy's magic bytes name it before anything is loaded.
    path = tmp_path / "d.npz"
    with open(path, "wb") as fh:
        np.lib.format.write_array_header_1_0(fh, {"descr": "<f8", "fortran_order": False,
                                                  "shape": (10 ** 12,)})
    code, out, err = run_cli(["estimate", "--data", path], capsys)
    assert code == 2 and err.startswith(f"error: --data {path}: a single array (.npy); the "
                                        "data are a .npz of the arrays X (N x d)")
