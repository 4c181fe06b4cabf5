"""Issue 32, third pass: data files bounded before they are read, the estimate's memory bounded
before its work (checked against tracemalloc), the direction covariance in closed form (checked
against the sum over its columns), and the logistic simulations' time model."""

import tracemalloc
import zipfile
from unittest import mock

import numpy as np
import pytest

from montecarlo.runner import budget
from riskcalc.cli import main
from riskcalc.estimate import data as estimate_data
from riskcalc.estimate import files as estimate_files
from riskcalc.estimate import estimate
from riskcalc.estimate.pairs import distances, geometry
from riskcalc.spectrum import Spectrum
from riskcalc.spectrum.file import MAX_FILE_BYTES, MAX_TEXT_BYTES


def _run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _fake_npz(path, shape):
    """A .npz whose X header claims ``shape``, and y and client as many rows, and holds no data
    (what a compressed file of zeros expands to, without writing it)."""
    with zipfile.ZipFile(path, "w") as zf:
        for key, claimed in (("X", shape), ("y", shape[:1]), ("client", shape[:1])):
            with zf.open(f"{key}.npy", "w") as fh:
                np.lib.format.write_array_header_1_0(
                    fh, {"descr": "<f8", "fortran_order": False, "shape": claimed})


def _federation(rng, N, d, m):
    X = rng.standard_normal((N, d))
    y = X @ rng.standard_normal(d) / np.sqrt(d) + rng.standard_normal(N)
    return X, y, np.repeat(np.arange(m), N // m)


def test_huge_npz_refused_from_its_header(tmp_path, capsys):
    """X of 1e7 x 1e4 (800 GB) is refused from its header: one line naming the file, the memory
    it needs, the limit and what to do; np.load never runs (the file holds no data, so reading
    it would fail with another message)."""
    path = tmp_path / "big.npz"
    _fake_npz(path, (10 ** 7, 10 ** 4))
    code, out, err = _run(["estimate", "--data", str(path)], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    for part in (f"--data {path}:", "N = 1e+07 rows of d = 10000", "GiB limit",
                 "available memory", "subsample"):
        assert part in err, err


def test_huge_response_array_refused_from_its_header(tmp_path):
    """Any of the three arrays may be the large one: y claiming 1e11 entries next to a 3 x 3 X
    is refused before reading, too (as not matching X's rows: fuzz39 spec F6)."""
    path = tmp_path / "bigy.npz"
    with zipfile.ZipFile(path, "w") as zf:
        for key, shape in (("X", (3, 3)), ("y", (10 ** 11,)), ("client", (3,))):
            with zf.open(f"{key}.npy", "w") as fh:
                np.lib.format.write_array_header_1_0(
                    fh, {"descr": "<f8", "fortran_order": False, "shape": shape})
    with pytest.raises(ValueError, match=r"y must have shape \(3,\) like the rows of X, got "
                                         r"\(100000000000,\)"):
        estimate_files.load(path)


def test_limit_applies_to_real_files(tmp_path, capsys):
    """Under a 1 MB limit a 2 MB .npz and a CSV that may hold as much are refused before
    reading (the CSV's advice: .npz, whose size is exact); without it the .npz is estimated."""
    rng = np.random.default_rng(0)
    X, y, c = _federation(rng, 2000, 30, 4)
    np.savez(tmp_path / "fed.npz", X=X, y=y, client=c)
    table = np.column_stack([c, y, X])
    np.savetxt(tmp_path / "fed.csv", table, delimiter=",", fmt="%.6g",
               header="client,y," + ",".join(f"x{k}" for k in range(30)), comments="")
    with mock.patch.object(estimate_data, "memory_limit", lambda: 1e6):
        code, _, err = _run(["estimate", "--data", str(tmp_path / "fed.npz")], capsys)
        assert code == 2 and "N = 2000 rows of d = 30" in err, err
        code, _, err = _run(["estimate", "--data", str(tmp_path / "fed.csv")], capsys)
        assert code == 2 and "may hold up to" in err and "save the data as .npz" in err, err
    code, out, err = _run(["estimate", "--data", str(tmp_path / "fed.npz"), "--json"], capsys)
    assert code == 0, err


def test_spectrum_file_uses_the_shared_size_check(tmp_path):
    """64 MiB as .npy; 8 MiB as text, whose parse holds Python strings (8 MiB of "1 1 ..."
    peaked at 293 MiB)."""
    path = tmp_path / "sp.npy"
    with open(path, "wb") as fh:
        fh.truncate(MAX_FILE_BYTES + 1)                       # sparse: nothing written
    with pytest.raises(ValueError, match="larger than a list of eigenvalues"):
        Spectrum.from_file(path)
    path = tmp_path / "sp.txt"
    with open(path, "wb") as fh:
        fh.truncate(MAX_TEXT_BYTES + 1)
    with pytest.raises(ValueError, match="larger than a text list of eigenvalues.*npy"):
        Spectrum.from_file(path)


@pytest.mark.parametrize("N, d, m, route", [(4000, 60, 4, "least-squares"),
                                            (400, 200, 4, "moments"),
                                            (1500, 10, 30, "least-squares"),
                                            (1500, 4, 500, "moments")])
def test_working_bytes_bounds_the_measured_peak(tmp_path, N, d, m, route):
    """``working_bytes`` is at least the peak tracemalloc measures (numpy reports its buffers
    to it) while a .npz is read and estimated, in both routes, with many clients and with
    d^2 > N d; and not above 3x of it where the arrays dominate (measured 1.2-2.1x)."""
    X, y, c = _federation(np.random.default_rng(1), N, d, m)
    np.savez(tmp_path / "fed.npz", X=X, y=y, client=c)
    del X, y, c
    tracemalloc.start()
    try:
        est = estimate(*estimate_files.load(tmp_path / "fed.npz"), route=route)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    bound = estimate_data.working_bytes(N, d, m, least_squares=route == "least-squares")
    assert est.route == route
    assert peak <= bound, (peak, bound)
    if m <= 4:
        assert bound <= 3 * peak, (peak, bound)


def test_estimate_refuses_many_clients_beyond_memory():
    X, y, c = _federation(np.random.default_rng(2), 900, 3, 300)
    with mock.patch.object(estimate_data, "memory_limit", lambda: 1e6):
        with pytest.raises(ValueError, match="from m = 300 clients.*fewer clients"):
            estimate(X, y, c)


def _geometry_by_columns(values, d, kappa):
    """The direction covariance as the sum over its M + M + M (M - 1) / 2 sources of the
    outer products of their images under ``distances`` (the definition; O(M^4) memory)."""
    r = np.sqrt(np.maximum(values["r2"], 0.0))
    c = np.sqrt(max(float(values["centre_norm2"]), 0.0))
    m = r.size
    base = np.concatenate(distances(np.zeros(m), np.zeros((m, m))), axis=None)
    cols = []
    for j in range(m):
        sq = np.zeros(m)
        sq[j] = r[j] ** 2 * np.sqrt(2 * max(kappa - 1.0, 0.0) / (d + 2))
        cols.append((sq, np.zeros((m, m))))
        sq, cross = np.zeros(m), np.zeros((m, m))
        sd = c * np.sqrt(kappa / d)
        sq[j] = 2 * r[j] * sd
        cross[j, :] += r[j] * sd
        cross[:, j] += r[j] * sd
        cross[j, j] = 0.0
        cols.append((sq, cross))
        for k in range(j + 1, m):
            cross = np.zeros((m, m))
            cross[j, k] = cross[k, j] = r[j] * r[k] * np.sqrt(kappa / d)
            cols.append((np.zeros(m), cross))
    J = np.array([np.concatenate(distances(sq, cross), axis=None) - base
                  for sq, cross in cols]).T
    return J @ J.T


@pytest.mark.parametrize("m", [2, 3, 4, 7, 12])
def test_geometry_closed_form_equals_its_columns(m):
    rng = np.random.default_rng(m)
    for kappa in (1.0, 1.8):
        values = {"r2": rng.uniform(-0.2, 2.0, m), "centre_norm2": rng.uniform(0.0, 3.0)}
        want = _geometry_by_columns(values, 50, kappa)
        np.testing.assert_allclose(geometry(values, 50, kappa), want, rtol=1e-12,
                                   atol=1e-14 * np.abs(want).max())


def test_logistic_time_model_scales():
    """Monotone in d and in n = d / gamma; d^3 at large d (fixed gamma); a federation costs at
    least its target's and pooled fits, FedProx at least FEDPROX_STEPS fits of every client;
    the command of issue 32 (compare --model logistic --d 400 --clients 5 --reps 8, measured
    ~0.2 s a replicate, refused at an estimated 11.9 min before) is estimated under a minute.
    The comparison with measured times is ``benchmarks/bench_logistic_budget.py``."""
    f = budget.logistic_replicate_seconds
    ds = [10, 50, 100, 400, 1600, 6400]
    for g in (0.1, 1.0, 10.0):
        assert all(f(a, g) < f(b, g) for a, b in zip(ds, ds[1:]))
    for d in ds:
        assert f(d, 0.1) > f(d, 1.0) > f(d, 10.0)
    assert 7.5 < f(20000, 1.0) / f(10000, 1.0) <= 8.0
    gammas = [2.0] * 5
    fed = budget.logistic_pipeline_seconds(400, 2.0, gammas)
    assert fed == pytest.approx(f(400, 2.0) + f(400, 0.4))
    prox = budget.logistic_pipeline_seconds(400, 2.0, gammas, fedprox=True)
    assert prox == pytest.approx(fed + budget.FEDPROX_STEPS * 5 * f(400, 2.0))
    assert 8 * fed < 60.0
    # Every penalty of a sweep's lam list is a fit (measured ten lams: 3.6-5.8x one lam).
    assert f(400, 1.0, lams=10) > 9 * f(400, 1.0, lams=1) - 9 * budget.LOGISTIC_D_SECONDS * 400
    ones = [1.0] * 5
    assert (budget.logistic_pipeline_seconds(400, 1.0, ones, lams=10)
            >= 3.6 * budget.logistic_pipeline_seconds(400, 1.0, ones))   # measured ratio 3.6


@pytest.mark.parametrize("m", [2, 3, 4, 6])
def test_least_squares_coefficients_equal_the_linear_maps_images(m):
    """``riskcalc.estimate.lsq.coefficients`` (closed form) against its definition: the image of
    each unit perturbation of theta_hat_k . theta_hat_l under the estimates (``distances``), one
    pair at a time (what the route computed before, in O(m^4) time)."""
    from riskcalc.estimate.lsq import coefficients

    def estimates(P):
        sq = np.diag(P).copy()
        r2, centre2 = distances(sq, P)
        return np.concatenate([np.zeros(m), sq, r2, [centre2]])

    want = np.empty((3 * m + 1, m, m))
    for k in range(m):
        for l in range(k, m):
            E = np.zeros((m, m))
            E[k, l] = E[l, k] = 1.0
            want[:, k, l] = want[:, l, k] = estimates(E) / (2.0 if k != l else 1.0)
    np.testing.assert_allclose(coefficients(m), want, rtol=0, atol=1e-15)
