"""Issue 32, fuzz38 (rooms): what this fuzz found, each test failing before."""

import pickle

import numpy as np
import pytest

import riskcalc
from tests.helpers import run_cli


def test_a_rounds_limit_pickles_and_its_lazy_parts_answer_after():
    # F1 (session 37's leftover): RoundsLimit held closures (its own models and
    # personalizations, solved on first use): pickle.dumps raised "Can't pickle local object"
    # (a result sent between processes: joblib, dask). Now the lazy parts are solved again
    # after unpickling, to the same values.
    res = riskcalc.rounds_limit("pfedme", gamma=[0.5, 1.5], r=[1, 1], sigma=[0.5, 0.5],
                                signal=1.0, rounds=[1, 5], local_steps=np.inf, lam=1.0)
    back = pickle.loads(pickle.dumps(res))
    assert back == res
    np.testing.assert_array_equal(back.personalized_risk(lam=0.5),
                                  res.personalized_risk(lam=0.5))
    again = pickle.loads(pickle.dumps(back))     # after its lazy part ran
    np.testing.assert_array_equal(again.personalized_risk(lam=0.3),
                                  res.personalized_risk(lam=0.3))


@pytest.mark.parametrize("n_i", ["9007199254740993", "100000000000000001"])
def test_bounds_refuses_a_count_no_double_holds(n_i, capsys):
    # F2 (session 37's leftover): --n_i 9007199254740993 was read through a float, computed
    # and printed as n_i=9007199254740992.0. Now refused naming the option; counts a double
    # holds exactly (2**53, 1e17) answer as before.
    argv = ["bounds", "lower_bound_ier", "--d", "10", "--N", "1e17", "--R", "1", "--n_i"]
    code, out, err = run_cli(argv + [n_i], capsys)
    assert code == 2 and out == ""
    assert err.startswith(f"error: --n_i is a client's number of samples: {n_i} is not a "
                          "double") and err.count("\n") == 1
    for exact, shown in (("9007199254740992", "n_i=9007199254740992.0 "), ("1e17", "n_i=1e+17 ")):
        code, out, err = run_cli(argv + [exact], capsys)
        assert code == 0 and shown in out


def test_two_spectra_of_many_atoms_are_recorded_apart():
    # F3 (session 37's leftover): beyond 3 atoms a spectrum was recorded in a result's JSON
    # and frames by its count, range and mean only: these two (risks 0.7355 and 0.7342) both
    # read "discrete[5 atoms in [0.5, 1.5], mean 1]". Now a fingerprint of every atom follows.
    a = riskcalc.Spectrum(np.linspace(0.5, 1.5, 5))
    b = riskcalc.Spectrum(np.array([0.5, 0.7, 1.0, 1.3, 1.5]))
    assert a.describe() == b.describe()
    ra, rb = (riskcalc.limit("ftfa", gamma=2, r=1, sigma=0.5, spectrum=s) for s in (a, b))
    assert ra.risk != rb.risk
    assert ra.as_dict()["params"]["spectrum"] != rb.as_dict()["params"]["spectrum"]
    assert ra.as_dict()["params"]["spectrum"].startswith(a.describe() + " sha256:")
    again = riskcalc.limit("ftfa", gamma=1, r=1, sigma=0.5,
                           spectrum=riskcalc.Spectrum(np.linspace(0.5, 1.5, 5)))
    assert again.as_dict()["params"]["spectrum"] == ra.as_dict()["params"]["spectrum"]


def test_a_symlinked_federation_file_says_where_its_file_spectra_are_read(tmp_path, capsys):
    # F4 (session 37's leftover): a federation file given through a symbolic link reads its
    # file: SPECs in the link's folder (decided: the folder the user names it in, as a shell
    # there would); the spectrum beside the link's target was not read and the error said only
    # "does not exist". Now it says relative to which folder, and why.
    (tmp_path / "B").mkdir()
    (tmp_path / "A").mkdir()
    (tmp_path / "B" / "eig.txt").write_text("1\n2\n3\n4\n")
    (tmp_path / "B" / "fed.json").write_text(
        '{"fedrisk_federation": 1, "clients": [{"gamma": 0.5, "r": 1, "sigma": 0.5, '
        '"spectrum": "file:eig.txt"}, {"gamma": 1.5, "r": 1, "sigma": 0.5}]}')
    (tmp_path / "A" / "fed.json").symlink_to(tmp_path / "B" / "fed.json")
    argv = ["predict", "ftfa", "--target", "0", "--federation"]
    code, out, err = run_cli(argv + [tmp_path / "A" / "fed.json"], capsys)
    assert code == 2 and err.count("\n") == 1
    assert f"'{tmp_path / 'A' / 'eig.txt'}' does not exist (a file: path is relative to the " \
           f"folder the federation file is given in, {tmp_path / 'A'}, also when that file " \
           "is a symbolic link)" in err
    code, out, err = run_cli(argv + [tmp_path / "B" / "fed.json"], capsys)
    assert code == 0, err


def _federation_data(d=20, m=3, n=40, seed=0):
    """Rows of m clients of paper 003's model (Sec. 2), n each, dimension d."""
    rng = np.random.default_rng(seed)
    client = np.repeat(np.arange(m), n)
    theta = (rng.standard_normal(d) + 0.5 * rng.standard_normal((m, d))) / np.sqrt(d)
    X = rng.standard_normal((m * n, d))
    y = np.einsum("ij,ij->i", X, theta[client]) + 0.5 * rng.standard_normal(m * n)
    return X, y, client


def test_estimate_checks_its_route_before_the_work(tmp_path, monkeypatch):
    # F5: estimate(..., route="lsq") computed the jackknife's Gram traces of every group
    # before refusing the route; estimate_file read the whole data file first (97 MB of CSV:
    # tens of seconds for a typo). Now the route is checked first.
    from riskcalc.estimate import estimate, estimate_file, estimator

    def no_work(*args):
        raise AssertionError("the work started")

    monkeypatch.setattr(estimator, "_gram_traces", no_work)
    monkeypatch.setattr(estimator, "load", no_work)
    for route in ("lsq", None, "LEAST-SQUARES"):
        with pytest.raises(ValueError, match="route must be one of auto, moments, least-sq"):
            estimate(*_federation_data(), route=route)
        with pytest.raises(ValueError, match="route must be one of auto, moments, least-sq"):
            estimate_file(tmp_path / "fed.npz", route=route)


def test_two_estimates_compare_by_value():
    # F6: Estimate's generated __eq__ compared its arrays as tuples: est == est2 raised "The
    # truth value of an array with more than one element is ambiguous" (the other results
    # compare by value, riskcalc._frames.equal).
    from riskcalc.estimate import estimate

    X, y, client = _federation_data()
    est = estimate(X, y, client)
    assert est == pickle.loads(pickle.dumps(est))
    assert est != estimate(X, y + 0.1, client)


def test_estimate_with_values_refuses_a_vector_it_cannot_read():
    # F7: Estimate.with_values (the bootstrap's plausible estimates) took a vector of the wrong
    # length with an IndexError (or, longer, silently), and NaN into the federation file
    # (as_dict: signal NaN, spectrum 'scaled:nan'). Now a ValueError naming flat.
    from riskcalc.estimate import estimate

    est = estimate(*_federation_data())
    for flat in (np.zeros(3), np.zeros(14)):
        with pytest.raises(ValueError, match=r"flat must hold the 13 values of FLAT for 3 "):
            est.with_values(flat)
    with pytest.raises(ValueError, match="flat must be a finite number"):
        est.with_values(np.full(13, np.nan))
    assert est.with_values(np.ones(13)).values["spread"] == 0.0


@pytest.mark.parametrize("name", ["bogus", "sigma2", None, ["r"]])
def test_estimate_root_names_what_it_takes(name):
    # F8: Estimate.root("bogus") raised KeyError: 'bogus2' (root("sigma2"): 'sigma22', a
    # list: TypeError). Now a ValueError listing sigma, r, rho, centre_norm.
    from riskcalc.estimate import estimate

    est = estimate(*_federation_data())
    with pytest.raises(ValueError, match="name must be one of sigma, r, rho, centre_norm; got"):
        est.root(name)
    assert est.root("centre_norm")[0] > 0


@pytest.mark.parametrize("moments, match", [(("1", 2, 3), "m1 must be a real number"),
                                            ((-1.0, 2.0, 0.0), r"m1 must lie in \(0, inf\)"),
                                            ((1.0, 2.0, np.inf), "m3 must be a finite number")])
def test_gauss_two_atoms_names_a_bad_moment(moments, match):
    # F9: gauss_two_atoms("1", 2, 3) raised TypeError (** on a str); m1 = -1 was refused as
    # "spectrum eigenvalue must lie in [1e-100, 1e+100], got -1.0", naming no moment. The
    # exact moments of two-point:1,4,0.3 still give its atoms.
    from riskcalc.estimate import gauss_two_atoms

    with pytest.raises(ValueError, match=match):
        gauss_two_atoms(*moments)
    sp = gauss_two_atoms(*(0.3 + 0.7 * 4.0 ** k for k in (1, 2, 3)))
    np.testing.assert_allclose(np.r_[sp.atoms, sp.weights], [1, 4, 0.3, 0.7], rtol=1e-12)


@pytest.mark.parametrize("d, n", [(1, 3), (2, 3), (3, 5)])
def test_estimate_auto_takes_a_route_it_can_take(d, n):
    # F10: for d < 4, route auto took least squares at n_j >= 1.5 d and then refused the data
    # ("the least-squares route needs every n_j > d + 2 = 4 rows; client 0 has 3", d = 2):
    # auto refused what moments answers. Now auto takes least squares only where it applies.
    from riskcalc.estimate import estimate

    data = _federation_data(d=d, m=3, n=n)
    assert estimate(*data).route == "moments"
    assert estimate(*data) == estimate(*data, route="moments")
    assert estimate(*_federation_data(d=3, m=3, n=6)).route == "least-squares"


def test_two_spectra_of_few_atoms_are_recorded_apart():
    # F11 (F3's twin up to 3 atoms): describe() prints six digits, so atoms 1 and 1.0000001
    # (RTFA risks 1.22837121 and 1.22837126) were both recorded 'discrete[0.5@1, 0.5@4]'. Now
    # a fingerprint follows where six digits do not give the numbers exactly.
    a, b = riskcalc.Spectrum([1.0, 4.0]), riskcalc.Spectrum([1.0000001, 4.0])
    ra, rb = (riskcalc.limit("rtfa", gamma=2, r=1, sigma=0.5, lam=0.3, spectrum=s).as_dict()
              for s in (a, b))
    assert ra["params"]["spectrum"] == "discrete[0.5@1, 0.5@4]"
    assert rb["params"]["spectrum"].startswith("discrete[0.5@1, 0.5@4] sha256:")
