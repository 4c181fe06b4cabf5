"""One federation file for every verb (riskcalc.federation_file, --federation/--target): predict's
target is that client's finite-M limit, covariate shift and relative spectra, bare lists keep
their old per-verb meaning, estimate --json round-trips into advise, predict and compare, no
output over an input, estimate's refusals and the logistic family's reading of the same file."""

import json
import os

import numpy as np
import pytest

import riskcalc
from riskcalc.cli import main
from riskcalc._files import atomic
from tests.federation_helpers import CLIENTS, GOOD, _run, _with, _write


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
    # compare predicts at the spectrum its d = 30 eigenvalues realize (fuzz39 fuzz F1): the
    # file's spectrum there, quantized to multiples of 1/30.
    from montecarlo.prediction import realized_spectrum

    real, note = realized_spectrum(riskcalc.Spectrum.parse(spec), 30)
    at_d = riskcalc.clients_limit("rtfa", lam=0.4, gamma=fed.gamma, r=fed.r, sigma=fed.sigma,
                                  spectrum=real)
    assert note is not None and any("eigenvalues the simulation realizes" in n
                                    for n in got["notes"])
    assert got["predicted"]["risk"] == pytest.approx(at_d.risk[2], rel=1e-12)
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
