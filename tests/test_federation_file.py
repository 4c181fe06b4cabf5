"""One federation file for every verb (riskcalc.federation_file, --federation/--target) and the
strict number layer (riskcalc._validate): bad files get one clear error naming the file, the
client and the key; estimate --json round-trips into advise, predict and compare; bare lists
keep their old per-verb meaning; booleans, strings and complex numbers are refused everywhere."""

import json
import os

import numpy as np
import pytest

import riskcalc
from riskcalc import federation_file
from riskcalc.cli import main
from riskcalc.cli.outputs import atomic

CLIENTS = [{"name": "a", "gamma": 0.5, "r": 1.0, "sigma": 0.5, "rho": 1.2},
           {"name": "b", "n": 50, "r": 0.5, "sigma": 1.0, "rho": 1.1},
           {"name": "c", "gamma": 1.5, "r": 1.5, "sigma": 0.5, "rho": 1.8}]
GOOD = {"fedrisk_federation": 1, "d": 100, "clients": CLIENTS}


def _run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _write(tmp_path, data, name="fed.json"):
    path = tmp_path / name
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def _with(client: int, **change):
    """GOOD with client ``client``'s keys changed (None deletes one)."""
    clients = [dict(c) for c in CLIENTS]
    for k, v in change.items():
        if v is None:
            clients[client].pop(k)
        else:
            clients[client][k] = v
    return {**GOOD, "clients": clients}


def _text(obj: dict) -> str:
    return json.dumps(obj)


# Each bad file -> the fragment its one-line error must contain (after the file's path).
BAD = [
    ("{", "not valid JSON"),
    (b'{"fedrisk_federation": 1, "clients": [{"name": "\xff"}]}', "not UTF-8 text (byte"),
    ('"federation"', "expected the federation object"),
    ({"clients": CLIENTS}, 'has no "fedrisk_federation" key'),
    ({**GOOD, "fedrisk_federation": 2}, "format version 2 is not supported"),
    ({**GOOD, "fedrisk_federation": "1"}, '"fedrisk_federation" must be the integer 1'),
    ({**GOOD, "fedrisk_federation": True}, '"fedrisk_federation" must be the integer 1'),
    ({**GOOD, "clientz": []}, "unknown key 'clientz' (top-level keys"),
    ({**GOOD, "clients": []}, '"clients" must be a non-empty list'),
    ({**GOOD, "d": True}, "d must be an integer, got True (a boolean)"),
    ({**GOOD, "d": 100.5}, "d must be an integer, got 100.5"),
    ({**GOOD, "d": 10 ** 9}, "larger than 1e+07"),
    ({**GOOD, "signal": "2"}, "signal must be a number, got '2' (a string"),
    ({k: v for k, v in GOOD.items() if k != "d"}, "client 1 ('b'): gives n: the file needs "
                                                   '"d"'),
    (_with(2, gamma="1.5"), "client 2 ('c'): gamma must be a number, got '1.5' (a string"),
    (_with(2, gamma=True), "client 2 ('c'): gamma must be a number, got True (a boolean"),
    (_with(0, sigma=False), "client 0 ('a'): sigma must be a number, got False (a boolean"),
    (_with(0, r=[1.0]), "client 0 ('a'): r must be a number, got [1.0] (a list"),
    (_with(0, r=None), "client 0 ('a'): missing key r"),
    (_with(1, sigma=None), "client 1 ('b'): missing key sigma"),
    (_with(2, gamma=1e101), "client 2 ('c'): gamma must lie in [1e-100, 1e+100], got 1e+101"),
    (_with(2, sigma=-1), "client 2 ('c'): sigma must lie in [0, 1e+100], got -1"),
    (_with(0, n=200), "client 0 ('a'): give exactly one of gamma (d / n) and n"),
    (_with(1, n=None), "client 1 ('b'): give exactly one of gamma (d / n) and n"),
    (_with(1, n=50.5), "client 1 ('b'): n must be an integer, got 50.5"),
    (_with(0, gamma=10 ** 400), "client 0 ('a'): gamma must be a finite number in [1e-100"),
    (_with(1, n=10 ** 400), "client 1 ('b'): n must be an integer, got 1000"),
    (_with(1, n=0), "client 1 ('b'): n must be an integer >= 1"),
    (_with(1, lamda=1), "client 1 ('b'): unknown key 'lamda' (client keys"),
    (_with(1, name="a"), "two clients are named 'a'"),
    (_with(1, name=7), "client 1: name must be a non-empty string, got 7"),
    (_with(2, spectrum=2), "client 2 ('c'): spectrum must be a SPEC string"),
    (_with(2, spectrum="nosuch"), "client 2 ('c'): spectrum: spectrum 'nosuch' is not one of"),
    (_with(2, spectrum="powerlaw:1,100000000"), "power-law size d must be an integer >= 1 "
                                                "and <= 10000000"),
    (_with(2, spectrum="file:missing.txt"), "client 2 ('c'): spectrum: spectrum file"),
    (_with(0, se=1), "client 0 ('a'): se must be an object of standard errors"),
    (_with(0, se={"r": "0.1"}), "client 0 ('a'): se.r must be a number, got '0.1'"),
    (_with(0, se={"lam": 0.1}), "client 0 ('a'): unknown key 'lam' (se keys"),
    (_text(GOOD).replace('"r": 0.5', '"r": NaN'), "client 1 ('b'): r must be a finite number, "
                                                  "got NaN"),
    (_text(GOOD).replace('"r": 0.5', '"r": 1e999'), "client 1 ('b'): r must be a finite "
                                                    "number in [0, 1e+100], got inf"),
    (_text(GOOD).replace('"r": 0.5', '"r": 0.5, "r": 0.7'), "client 1 ('b'): key r given "
                                                            "twice"),
    (_text(GOOD).replace('"d": 100', '"d": 100, "d": 100'), "key d given twice"),
    ('{"fedrisk_federation": 1, "clients": ' + "[" * 100000 + "]" * 100000 + "}",
     "JSON nested 100001 levels deep"),
    ('{"fedrisk_federation": 1, "clients": [{"se": {"r": [[1]]}}]}', "JSON nested 6 levels"),
]


@pytest.mark.parametrize("data, message", BAD, ids=range(len(BAD)))
def test_bad_federation_file_is_one_error_naming_file_client_key(data, message, tmp_path,
                                                                 capsys):
    path = _write(tmp_path, data)
    code, out, err = _run(["predict", "ftfa", "--federation", path], capsys)
    assert code == 2 and out == ""
    assert err.startswith(f"error: --federation {path}") and err.count("\n") == 1, err
    assert message in err, err


def test_file_size_and_devices_are_bounded(tmp_path, capsys):
    """A file larger than a federation is refused before reading; a device is read at most
    MAX_BYTES + 1 bytes (/dev/zero does not hang)."""
    big = tmp_path / "big.json"
    with open(big, "wb") as fh:
        fh.truncate(federation_file.MAX_BYTES + 1)         # sparse: nothing written
    code, _, err = _run(["advise", "--federation", big], capsys)
    assert code == 2 and "larger than a federation file" in err and err.count("\n") == 1
    if os.path.exists("/dev/zero"):
        code, _, err = _run(["predict", "ftfa", "--federation", "/dev/zero"], capsys)
        assert code == 2 and "larger than a federation file" in err, err
        code, _, err = _run(["predict", "ftfa", "--gamma", "2", "--r", "1", "--sigma", "1",
                             "--clients-file", "/dev/zero"], capsys)
        assert code == 2 and "larger than a federation file" in err, err


def test_byte_order_mark_and_directories(tmp_path, capsys):
    """A UTF-8 byte-order mark is not content (editors write one); a folder or a missing file
    is one line naming the option and the path."""
    path = _write(tmp_path, b"\xef\xbb\xbf" + json.dumps(GOOD).encode())
    assert riskcalc.Federation.from_file(path).m == 3
    for bad, message in ((tmp_path, "Is a directory"), (tmp_path / "no.json", "No such file")):
        code, _, err = _run(["advise", "--federation", bad], capsys)
        assert code == 2 and err.startswith(f"error: --federation {bad}: {message}"), err


@pytest.mark.parametrize("extra, message", [
    (["--gamma", "1"], "--gamma does not apply with --federation"),
    (["--r", "1"], "--r does not apply with --federation"),
    (["--sigma", "1"], "--sigma does not apply with --federation"),
    (["--clients", "3"], "give --clients M (identical clients) or --federation, not both"),
    (["--clients-file", "x.json"], "give --federation or --clients-file, not both"),
    (["--target", "3"], "--target '3': not a client of --federation"),
    (["--target", "z"], "a name: 'a', 'b', 'c'"),
    (["--d", "50"], "--d 50 differs from the d = 100"),
])
def test_federation_options(extra, message, tmp_path, capsys):
    path = _write(tmp_path, GOOD)
    code, out, err = _run(["predict", "ftfa", "--federation", path, *extra], capsys)
    assert code == 2 and err.count("\n") == 1 and message in err, err


def test_target_and_bare_list_rules(tmp_path, capsys):
    path = _write(tmp_path, GOOD)
    bare = _write(tmp_path, [{"gamma": 2.0, "r": 0.5, "sigma": 1.0}], "bare.json")
    for argv, message in (
            (["predict", "ftfa", "--gamma", "1", "--r", "1", "--sigma", "1", "--target", "1"],
             "--target applies with --federation only"),
            (["predict", "ftfa", "--federation", bare], "got a bare list (read by "
                                                        "--clients-file)"),
            (["predict", "ftfa", "--gamma", "1", "--r", "1", "--sigma", "1", "--clients-file",
              bare, "--target", "0"], "--target applies with --federation (a bare"),
            (["compare", "ftfa", "--federation", path, "--d", "20", "--global", "oracle"],
             "applies with --global federated"),
            (["advise", "--federation", bare], "got a bare list")):
        code, _, err = _run(argv, capsys)
        assert code == 2 and err.count("\n") == 1 and message in err, err
    ambiguous = _write(tmp_path, _with(0, name="1"), "amb.json")
    code, _, err = _run(["predict", "ftfa", "--federation", ambiguous, "--target", "1"], capsys)
    assert code == 2 and "ambiguous" in err


def _fed_lists():
    """GOOD's clients in file order (client b's n = 50 with d = 100: gamma 2)."""
    return dict(gamma=[0.5, 2.0, 1.5], r=[1.0, 0.5, 1.5], sigma=[0.5, 1.0, 0.5])


def test_predict_federation_target_is_that_clients_finite_m_limit(tmp_path, capsys):
    """--target J (index or name) reports client J of clients_limit over the file's clients in
    file order (an independent call: the CLI puts the target first); the bare list with the
    target in the model options, and the object given to --clients-file, say the same."""
    path = _write(tmp_path, GOOD)
    ref = riskcalc.clients_limit("rtfa", lam=0.7, **_fed_lists())
    for j, target in enumerate(("0", "b", "c")):
        code, out, err = _run(["predict", "rtfa", "--lam", "0.7", "--federation", path,
                               "--target", target, "--json"], capsys)
        assert code == 0, err
        assert "rho ignored" in err         # a key the method does not use: a note
        got = json.loads(out)
        assert got["risk"] == pytest.approx(ref.risk[j], rel=1e-12)
        assert got["params"]["gamma"] == _fed_lists()["gamma"][j]
    lists = _fed_lists()
    others = [{k: lists[k][j] for k in ("gamma", "r", "sigma")} for j in (0, 2)]
    bare = _write(tmp_path, others, "others.json")
    code, out, _ = _run(["predict", "rtfa", "--lam", "0.7", "--gamma", "2", "--r", "0.5",
                         "--sigma", "1", "--clients-file", bare, "--json"], capsys)
    assert code == 0 and json.loads(out)["risk"] == pytest.approx(ref.risk[1], rel=1e-12)
    code, out, _ = _run(["predict", "rtfa", "--lam", "0.7", "--clients-file", path,
                         "--target", "b", "--json"], capsys)
    assert code == 0 and json.loads(out)["risk"] == pytest.approx(ref.risk[1], rel=1e-12)
    # A local baseline has no global model: the target's exact limit.
    code, out, _ = _run(["predict", "local_ridge", "--lam", "0.3", "--federation", path,
                         "--target", "2", "--json"], capsys)
    exact = riskcalc.limit("local_ridge", gamma=1.5, rho=1.8, sigma=0.5, lam=0.3)
    assert code == 0 and json.loads(out)["risk"] == pytest.approx(exact.risk, rel=1e-12)


def test_covariate_shift_and_relative_spectrum_files(tmp_path, capsys):
    """file: SPECs are relative to the federation file (not to the working directory); a client
    without a spectrum has the identity, not the target's."""
    sub = tmp_path / "sub"
    sub.mkdir()
    np.savetxt(sub / "eig.txt", np.r_[np.full(50, 0.5), np.full(50, 2.0)])
    clients = [dict(c) for c in CLIENTS]
    clients[0]["spectrum"] = "file:eig.txt"
    path = _write(sub, {**GOOD, "clients": clients})
    code, out, err = _run(["predict", "ftfa", "--federation", path, "--target", "1", "--json"],
                          capsys)
    assert code == 0, err
    spectra = [os.path.join(sub, "eig.txt"), "identity", "identity"]
    ref = riskcalc.clients_limit("ftfa", **_fed_lists(),
                                 spectra=[riskcalc.spectrum.ordered_eigenvalues(
                                     "file:" + spectra[0], 100), "identity", "identity"])
    assert json.loads(out)["risk"] == pytest.approx(ref.risk[1], rel=1e-10)


def test_bare_lists_keep_their_meaning_in_advise(tmp_path, capsys):
    """advise: a bare list is ALL clients (n with --d), as the object is; same candidates."""
    lists = _fed_lists()
    bare = [{k: lists[k][j] for k in ("gamma", "r", "sigma")} for j in range(3)]
    bare[1] = {"n": 50, "r": 0.5, "sigma": 1.0}
    p_bare = _write(tmp_path, bare, "bare.json")
    p_obj = _write(tmp_path, {**GOOD, "clients": [{k: v for k, v in c.items() if k != "rho"}
                                                  for c in CLIENTS]})
    argv = ["--methods", "fedavg,ftfa", "--json"]
    code, out_bare, err = _run(["advise", "--clients-file", p_bare, "--d", "100", *argv],
                               capsys)
    assert code == 0, err
    code, out_obj, err = _run(["advise", "--federation", p_obj, *argv], capsys)
    assert code == 0, err
    assert json.loads(out_bare)["candidates"] == json.loads(out_obj)["candidates"]
    fed = riskcalc.Federation.from_file(p_obj)
    assert fed.gamma.tolist() == [0.5, 2.0, 1.5]


@pytest.fixture(scope="module")
def estimated(tmp_path_factory):
    """estimate --json of a small two-point-covariance federation (d = 30)."""
    from montecarlo.linear.federation import sample_federation

    tmp = tmp_path_factory.mktemp("est")
    fed = riskcalc.Federation(gamma=[0.4, 0.5, 0.6], r=[1.0, 1.2, 1.5], sigma=[0.5, 0.8, 1.0],
                              spectrum=riskcalc.Spectrum([0.5, 3.0], weights=[0.5, 0.5]))
    X, _, y, _ = sample_federation(fed, 30, 5, 0)
    ids = np.repeat([3, 5, 9], [x.shape[0] for x in X])
    np.savez(tmp / "fed.npz", X=np.vstack(X), y=np.concatenate(y), client=ids)
    code = main(["estimate", "--data", str(tmp / "fed.npz"), "--json"])
    assert code == 0
    return tmp


def test_estimate_json_round_trip(estimated, capsys):
    """estimate --json is a federation file accepted as is by advise --federation, predict
    --federation --target and compare --federation; its SPECs are plain numbers."""
    npz = estimated / "fed.npz"
    code, out, _ = _run(["estimate", "--data", npz, "--json"], capsys)
    obj = json.loads(out)
    path = _write(estimated, out, "est.json")
    assert obj["fedrisk_federation"] == 1 and obj["d"] == 30
    spec = obj["clients"][0]["spectrum"]
    assert spec.startswith("two-point:") and "np." not in out and "float64" not in out
    assert [c["name"] for c in obj["clients"]] == ["client3", "client5", "client9"]
    fed = riskcalc.Federation.from_file(path)
    np.testing.assert_array_equal(fed.gamma, [30 / c["n"] for c in obj["clients"]])
    code, adv, err = _run(["advise", "--federation", path, "--methods", "fedavg,ftfa",
                           "--json"], capsys)
    assert code == 0, err
    code, chained, _ = _run(["advise", "--data", npz, "--methods", "fedavg,ftfa", "--json"],
                            capsys)
    assert json.loads(adv)["candidates"] == json.loads(chained)["candidates"]
    ref = riskcalc.clients_limit("rtfa", lam=0.4, gamma=fed.gamma, r=fed.r, sigma=fed.sigma,
                                 spectrum=riskcalc.Spectrum.parse(spec))
    code, out, err = _run(["predict", "rtfa", "--lam", "0.4", "--federation", path,
                           "--target", "client5", "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["risk"] == pytest.approx(ref.risk[1], rel=1e-12)
    code, out, err = _run(["compare", "rtfa", "--lam", "0.4", "--federation", path,
                           "--target", "2", "--reps", "2", "--no-progress", "--json"],
                          capsys)                         # --d: the file's d
    assert code == 0, err
    got = json.loads(out)
    assert got["predicted"]["risk"] == pytest.approx(ref.risk[2], rel=1e-12)
    assert got["simulated"]["d"] == 30


def test_identity_estimate_is_scaled_c(tmp_path):
    """Sigma = c I (c = 4) is written scaled:C (a SPEC every verb reads) with r unscaled: the
    same risks as the identity with r scaled by sqrt(c) (the estimate's Python federation)."""
    from montecarlo.linear.federation import sample_federation
    from riskcalc.estimate import estimate

    fed = riskcalc.Federation(gamma=[0.5, 0.5, 0.6], r=[1.0, 1.2, 1.5], sigma=[0.5, 0.8, 1.0])
    X, _, y, _ = sample_federation(fed, 30, 2, 0)
    est = estimate(2.0 * np.vstack(X), np.concatenate(y), np.repeat([0, 1, 2], [len(v) for v in y]))
    assert est.spectrum() is None                      # the spread is not resolved
    obj = est.as_dict()
    c = obj["estimate"]["spectrum"]["moments"][0]
    assert obj["clients"][0]["spectrum"] == f"scaled:{c!r}" and 3.0 < c < 5.0
    fed_obj = riskcalc.Federation.from_file(_write(tmp_path, obj))
    fed_py = est.federation()
    np.testing.assert_allclose(fed_obj.r * np.sqrt(c), fed_py.r, rtol=1e-12)
    a = riskcalc.clients_limit("ftfa", **fed_obj.limit_kwargs())
    b = riskcalc.clients_limit("ftfa", **fed_py.limit_kwargs())
    np.testing.assert_allclose(a.risk, b.risk, rtol=1e-10)


def test_advise_summary_table_beyond_ten_clients(tmp_path, capsys):
    """12 clients: per candidate mean, worst and quantiles; per-client rows by --per-client and
    --csv (one row per candidate and client, equal to the JSON risks)."""
    rng = np.random.default_rng(3)
    clients = [{"name": f"k{j}", "gamma": float(g), "r": float(r), "sigma": 0.5}
               for j, (g, r) in enumerate(zip(rng.uniform(0.4, 1.6, 12),
                                              rng.uniform(0.5, 1.5, 12)))]
    path = _write(tmp_path, {"fedrisk_federation": 1, "clients": clients})
    csv_path = tmp_path / "rows.csv"
    code, out, err = _run(["advise", "--federation", path, "--methods", "fedavg",
                           "--csv", csv_path], capsys)
    assert code == 0, err
    assert "q10" in out and "q90" in out and "client 11" not in out
    assert "--per-client" in out
    code, out, _ = _run(["advise", "--federation", path, "--methods", "fedavg",
                         "--per-client"], capsys)
    assert code == 0 and "client 11 (k11): fedavg" in out
    code, out, _ = _run(["advise", "--federation", path, "--methods", "fedavg", "--json"],
                        capsys)
    cands = json.loads(out)["candidates"]
    assert json.loads(out)["federation"]["names"] == [c["name"] for c in clients]
    import csv

    rows = list(csv.DictReader(open(csv_path)))
    assert len(rows) == 12 * len(cands)
    for row in rows:
        want = cands[int(row["rank"]) - 1]
        assert row["method"] == want["method"] and row["weights"] == want["weights"]["name"]
        assert float(row["risk"]) == want["risks"][int(row["client"])]
        assert row["name"] == f"k{row['client']}"


def test_no_output_over_an_input_and_atomic_writes(tmp_path, capsys):
    path = _write(tmp_path, GOOD)
    before = path.read_text()
    bare = _write(tmp_path, [{"gamma": 2.0, "r": 0.5, "sigma": 1.0}], "bare.json")
    for argv in (["advise", "--federation", path, "--csv", path],
                 ["sweep", "ftfa", "--gamma", "1", "--r", "1", "--sigma", "1", "--d", "20",
                  "--global", "federated", "--clients-file", bare, "--out", bare],
                 ["sweep", "ftfa", "--federation", path, "--d", "20", "--cache", path]):
        code, _, err = _run(argv, capsys)
        assert code == 2 and "is the input file of" in err, err
    assert path.read_text() == before
    assert bare.read_text() == json.dumps([{"gamma": 2.0, "r": 0.5, "sigma": 1.0}])
    out = tmp_path / "out.txt"
    out.write_text("old")
    with pytest.raises(KeyboardInterrupt):
        with atomic(out) as fh:
            fh.write("half")
            raise KeyboardInterrupt
    assert out.read_text() == "old" and sorted(os.listdir(tmp_path)) == sorted(
        ["fed.json", "bare.json", "out.txt"])
    with atomic(out) as fh:
        fh.write("new")
    assert out.read_text() == "new"


# --- the strict number layer ------------------------------------------------------------------

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


def test_estimate_refuses_what_it_cannot_estimate(tmp_path, capsys):
    """Complex or zero data, a single array and a device are one-line refusals; an estimate
    clipped at 0 has no standard error ('n/a' and a note, never '+- inf')."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((90, 6))
    y = X @ np.ones(6) + rng.standard_normal(90)
    ids = np.repeat([0, 1, 2], 30)
    cases = {"complex": (dict(X=X + 1j, y=y, client=ids), "X must be an array of real numbers, "
                                                          "got complex"),
             "zerox": (dict(X=0 * X, y=y, client=ids), "X is 0 in every entry"),
             "zeroy": (dict(X=X, y=0 * y, client=ids), "y is 0 in every row")}
    for name, (arrays, message) in cases.items():
        np.savez(tmp_path / f"{name}.npz", **arrays)
        code, _, err = _run(["estimate", "--data", tmp_path / f"{name}.npz"], capsys)
        assert code == 2 and err.count("\n") == 1 and message in err, err
    np.save(tmp_path / "x.npy", X)
    code, _, err = _run(["estimate", "--data", tmp_path / "x.npy"], capsys)
    assert code == 2 and "a single array (.npy)" in err and "allow_pickle" not in err
    (tmp_path / "t.npz").write_text("not numpy")
    code, _, err = _run(["estimate", "--data", tmp_path / "t.npz"], capsys)
    assert code == 2 and "not a .npz file" in err and "allow_pickle" not in err
    np.savez(tmp_path / "two.npz", X=X[:60], y=y[:60] + np.r_[np.zeros(30), 3 * np.ones(30)],
             client=ids[:60])
    code, out, err = _run(["estimate", "--data", tmp_path / "two.npz"], capsys)
    assert code == 0 and "inf" not in out and "with 2 clients" in out


def test_logistic_family_reads_the_same_file(tmp_path, capsys):
    """--model logistic: gamma (or n with d) and r per client, signal from the file; sigma is
    ignored with a warning; the answer equals the bare list's with the target first."""
    path = _write(tmp_path, {**GOOD, "signal": 2.0})
    base = ["predict", "rtfa", "--model", "logistic", "--lam", "1", "--global-lam", "0.1",
            "--json"]
    code, out, err = _run([*base, "--federation", path, "--target", "b"], capsys)
    assert code == 0, err
    assert "rho, sigma ignored (not used by the logistic model)" in err
    others = _write(tmp_path, [{"gamma": 0.5, "r": 1.0}, {"gamma": 1.5, "r": 1.5}], "o.json")
    code, ref, err = _run([*base, "--gamma", "2", "--r", "0.5", "--signal", "2",
                           "--clients-file", others], capsys)
    assert code == 0, err
    assert json.loads(out)["risk"] == json.loads(ref)["risk"]
    code, _, err = _run([*base, "--federation", path, "--signal", "2"], capsys)
    assert code == 2 and "--signal does not apply with --federation" in err
    shifted = _write(tmp_path, {**_with(0, spectrum="scaled:2"), "signal": 2.0}, "s.json")
    code, _, err = _run([*base, "--federation", shifted], capsys)
    assert code == 2 and "client 0 ('a'): spectrum 'scaled:2': the logistic family" in err


@pytest.mark.parametrize("text, message", [
    ('[{"gamma": true, "r": 1, "sigma": 1}]', "client 0: gamma must be a number, got True"),
    ('[{"gamma": 2, "r": 1, "sigma": false}]', "client 0: sigma must be a number, got False"),
    ('[{"gamma": "1", "r": 1, "sigma": 1}]', "client 0: gamma must be a number, got '1'"),
    ('[{"gamma": 2, "r": 1, "r": 2, "sigma": 1}]', "client 0: key r given twice"),
    ('[{"gamma": 1e101, "r": 1, "sigma": 1}]', "gamma must lie in [1e-100, 1e+100]"),
    ("[" * 5000 + "]" * 5000, "JSON nested 5000 levels deep"),
])
def test_bare_lists_are_read_as_strictly_by_every_verb(text, message, tmp_path, capsys):
    """The fuzz's silent coercions (a bool or string read as a number, the last of two
    duplicate keys kept) and its RecursionError, through each verb's --clients-file."""
    path = _write(tmp_path, text)
    model = ["--gamma", "1", "--r", "1"]
    for argv in (["predict", "ftfa", *model, "--sigma", "1", "--clients-file", path],
                 ["compare", "ftfa", *model, "--sigma", "1", "--d", "20", "--global",
                  "federated", "--clients-file", path],
                 ["predict", "rtfa", "--model", "logistic", *model, "--signal", "1", "--lam",
                  "1", "--global-lam", "1", "--clients-file", path],
                 ["advise", "--clients-file", path]):
        code, out, err = _run(argv, capsys)
        assert code == 2 and out == "" and err.count("\n") == 1, (argv, err)
        assert err.startswith(f"error: --clients-file {path}: ") and message in err, (argv, err)
