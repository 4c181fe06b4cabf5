"""The public contracts of DESIGN.md, parameter validation, and edge cases of the limits."""

import numpy as np
import pytest

import riskcalc
from riskcalc import SolverError, Spectrum, solvers
from tests.conftest import SPECTRA


def test_design_contract():
    res = riskcalc.limit("rtfa", gamma=2.0, r=1.0, sigma=0.5, lam=0.5)
    assert all(isinstance(v, float) for v in (res.bias, res.variance, res.risk))
    assert res.risk == pytest.approx(res.bias + res.variance, rel=1e-15)
    spec = riskcalc.Spectrum([1.0, 4.0], weights=[0.5, 0.5])
    assert isinstance(riskcalc.limit("ftfa", gamma=2.0, r=1.0, sigma=0.5, spectrum=spec).risk, float)
    assert riskcalc.optimal_lambda("rtfa", gamma=2.0, r=1.0, sigma=0.5, spectrum=None) == 0.5
    assert set(riskcalc.METHODS) == {"fedavg", "local", "local_ridge", "ftfa", "rtfa",
                                     "maml_fl", "pfedme"}


def test_isotropic_theorem_values():
    # Paper 003: Thm 1 / Thm 3 (r^2 (1 - 1/gamma), sigma^2/(gamma - 1)), Cor. 3.1 (r^2, 0).
    g, r, s = 3.0, 1.5, 0.8
    for m in ("ftfa", "maml_fl"):
        kw = {"alpha": 0.1} if m == "maml_fl" else {}
        res = riskcalc.limit(m, gamma=g, r=r, sigma=s, **kw)
        assert res.bias == pytest.approx(r**2 * (1 - 1 / g), rel=1e-14)
        assert res.variance == pytest.approx(s**2 / (g - 1), rel=1e-14)
    fed = riskcalc.limit("fedavg", gamma=g, r=r, sigma=s)
    assert (fed.bias, fed.variance) == (pytest.approx(r**2), 0.0)
    loc = riskcalc.limit("local", gamma=g, rho=2.0, sigma=s)
    assert loc.bias == pytest.approx(4.0 * (1 - 1 / g), rel=1e-14)


def test_pfedme_equals_rtfa_and_local_ridge_uses_rho():
    kw = dict(gamma=[0.5, 2.0, 8.0], sigma=0.6, lam=[0.01, 0.3, 3.0])
    a = riskcalc.limit("rtfa", r=1.2, **kw)
    b = riskcalc.limit("pfedme", r=1.2, **kw)
    c = riskcalc.limit("local_ridge", rho=1.2, **kw)
    np.testing.assert_array_equal(a.risk, b.risk)
    np.testing.assert_array_equal(a.risk, c.risk)


def test_lambda_limits(spectrum):
    # lam -> 0 gives FTFA (min-norm interpolation); lam -> infinity gives FedAvg.
    kw = dict(gamma=np.array([0.5, 1.5, 3.0]), r=1.0, sigma=0.5, spectrum=spectrum)
    ftfa = riskcalc.limit("ftfa", **kw)
    fedavg = riskcalc.limit("fedavg", **kw)
    tiny = riskcalc.limit("rtfa", lam=1e-10, **kw)
    huge = riskcalc.limit("rtfa", lam=1e10, **kw)
    np.testing.assert_allclose(tiny.risk, ftfa.risk, rtol=1e-6)
    np.testing.assert_allclose(huge.risk, fedavg.risk, rtol=1e-6)


def test_broadcasting_matches_pointwise():
    g = np.array([0.5, 2.0, 4.0])
    lam = np.array([[0.1], [1.0]])
    grid = riskcalc.limit("rtfa", gamma=g, r=1.0, sigma=0.5, lam=lam)
    assert grid.risk.shape == (2, 3)
    for i in range(2):
        for j in range(3):
            one = riskcalc.limit("rtfa", gamma=g[j], r=1.0, sigma=0.5, lam=lam[i, 0])
            assert grid.risk[i, j] == pytest.approx(one.risk, rel=1e-14)


def test_interpolation_threshold_is_explicit():
    res = riskcalc.limit("ftfa", gamma=1.0, r=1.0, sigma=0.5)
    assert res.variance == np.inf and res.bias == 0.0
    assert any("infinite" in n for n in res.notes)
    assert res.as_dict()["variance"] is None
    # No noise: nothing to amplify, the risk stays finite.
    assert riskcalc.limit("ftfa", gamma=1.0, r=1.0, sigma=0.0).risk == 0.0
    spec = Spectrum.two_point(1.0, 4.0, 0.5)
    for route in ("kappa", "paper"):
        r2 = riskcalc.limit("local", gamma=1.0, rho=1.0, sigma=0.5, spectrum=spec, route=route)
        assert r2.variance == np.inf and r2.bias == 0.0


def test_underparameterized_is_least_squares():
    res = riskcalc.limit("ftfa", gamma=0.25, r=1.0, sigma=1.0)
    assert res.bias == 0.0 and res.variance == pytest.approx(0.25 / 0.75, rel=1e-14)
    assert any("least squares" in n for n in res.notes)


@pytest.mark.parametrize("kwargs, word", [
    (dict(method="rtfa", gamma=0.0, r=1, sigma=1, lam=1), "gamma"),
    (dict(method="rtfa", gamma=-1.0, r=1, sigma=1, lam=1), "gamma"),
    (dict(method="rtfa", gamma=2.0, r=1, sigma=1, lam=-0.1), "lam"),
    (dict(method="rtfa", gamma=2.0, r=1, sigma=-1, lam=1), "sigma"),
    (dict(method="rtfa", gamma=2.0, r=-1, sigma=1, lam=1), "r"),
    (dict(method="rtfa", gamma=float("nan"), r=1, sigma=1, lam=1), "gamma"),
    (dict(method="rtfa", gamma=2.0, r=1, sigma=1, lam=float("inf")), "lam"),
    (dict(method="rtfa", gamma=2.0, r=1, sigma=1), "lam"),
    (dict(method="rtfa", gamma=2.0, r=1, sigma=1, lam=5e-324), "lam"),
    (dict(method="rtfa", gamma=2.0, r=1, sigma=1, lam=1e101), "lam"),
    (dict(method="rtfa", gamma=1e308, r=1, sigma=0.5, lam=0.5), "gamma"),
    (dict(method="rtfa", gamma=1e-101, r=1, sigma=0.5, lam=0.5), "gamma"),
    (dict(method="rtfa", gamma=2.0, r=1, sigma=1e200, lam=0.5), "sigma"),
    (dict(method="ftfa", gamma=2.0, r=1e101, sigma=1), "r"),
    (dict(method="local", gamma=2.0, rho=1e101, sigma=1), "rho"),
    (dict(method="ftfa", gamma=2.0, r=1, sigma=1, lam=1), "lam"),
    (dict(method="ftfa", gamma=2.0, rho=1, sigma=1), "rho"),
    (dict(method="local", gamma=2.0, r=1, sigma=1), "r"),
    (dict(method="maml_fl", gamma=2.0, r=1, sigma=1), "alpha"),
    (dict(method="nope", gamma=2.0, r=1, sigma=1), "method"),
    (dict(method="ftfa", gamma="two", r=1, sigma=1), "gamma"),
    (dict(method="ftfa", gamma=2.0, r=1, sigma=1, spectrum=3), "spectrum"),   # a SPEC is taken
    (dict(method="ftfa", gamma=2.0, r=1, sigma=1, route="fast"), "route"),
    (dict(method="ftfa", gamma=2.0, r=1, sigma=1, spectrum=Spectrum([1.0, 2.0]),
          route="closed"), "closed"),
])
def test_bad_input_names_the_parameter(kwargs, word):
    method = kwargs.pop("method")
    with pytest.raises(ValueError, match=word):
        riskcalc.limit(method, **kwargs)


def test_optimal_lambda_validation_and_edges():
    with pytest.raises(ValueError, match="no ridge penalty"):
        riskcalc.optimal_lambda("ftfa", gamma=2, r=1, sigma=1)
    with pytest.raises(ValueError, match="how"):
        riskcalc.optimal_lambda("rtfa", gamma=2, r=1, sigma=1, how="guess")
    aligned = Spectrum([1.0, 4.0], signal_weights=[0.9, 0.1])
    with pytest.raises(ValueError, match="uniform signal"):
        riskcalc.optimal_lambda("rtfa", gamma=2, r=1, sigma=1, spectrum=aligned, how="closed")
    assert riskcalc.optimal_lambda("rtfa", gamma=2, r=1, sigma=0) == 0.0
    assert riskcalc.optimal_lambda("rtfa", gamma=2, r=0, sigma=1) == np.inf
    assert riskcalc.optimal_lambda("local_ridge", gamma=3, rho=2, sigma=1) == pytest.approx(0.75)
    with pytest.raises(ValueError, match="infinite"):
        riskcalc.optimal_limit("rtfa", gamma=2, r=0, sigma=1)


@pytest.mark.parametrize("name", [k for k, v in SPECTRA.items() if v.signal_is_uniform])
def test_numeric_optimum_matches_closed_form_for_uniform_signal(name):
    # lam* = sigma^2 gamma / r^2 holds for every H when G = H (Bayes-optimality of ridge);
    # minimizing the exact limit numerically must find it.
    spectrum = SPECTRA[name]
    for gamma, r, sigma in [(0.5, 1.0, 0.5), (2.0, 1.0, 0.5), (5.0, 0.7, 1.3)]:
        num = riskcalc.optimal_lambda("rtfa", gamma=gamma, r=r, sigma=sigma, spectrum=spectrum,
                                      how="numeric")
        assert num == pytest.approx(sigma**2 * gamma / r**2, rel=1e-5)


def test_numeric_optimum_for_aligned_signal_is_a_minimum():
    spec = Spectrum([0.1, 3.0], weights=[0.3, 0.7], signal_weights=[0.9, 0.1])
    lam = riskcalc.optimal_lambda("rtfa", gamma=2.0, r=1.0, sigma=0.5, spectrum=spec)
    closed = 0.25 * 2.0
    assert abs(lam / closed - 1) > 0.05  # G != H moves the optimum away from the formula
    risk = (lambda l: riskcalc.limit("rtfa", gamma=2.0, r=1.0, sigma=0.5, lam=l,
                                     spectrum=spec).risk)
    assert risk(lam) < risk(lam * 1.01) and risk(lam) < risk(lam / 1.01)


def test_spectrum_constructors_and_parse(tmp_path):
    assert Spectrum.parse("identity").is_identity
    tp = Spectrum.parse("two-point:1,4,0.25")
    np.testing.assert_allclose(tp.weights, [0.25, 0.75])
    assert tp.mean == pytest.approx(3.25)
    pl = Spectrum.parse("powerlaw:1,100")
    assert pl.atoms.size == 100 and pl.mean == pytest.approx(1.0, rel=1e-14)
    assert pl.atoms[-1] / pl.atoms[0] == pytest.approx(100.0)
    assert Spectrum.parse("powerlaw:0.5", d=10).atoms.size == 10
    txt = tmp_path / "eig.txt"
    txt.write_text("1 2, 2\n5")
    sp = Spectrum.parse(f"file:{txt}")
    np.testing.assert_allclose(sp.atoms, [1, 2, 5])
    np.testing.assert_allclose(sp.weights, [0.25, 0.5, 0.25])
    npy = tmp_path / "eig.npy"
    np.save(npy, np.array([3.0, 1.0]))
    np.testing.assert_allclose(Spectrum.parse(f"file:{npy}").atoms, [1, 3])


@pytest.mark.parametrize("text, word", [
    ("powerlaw:1", "number of eigenvalues"), ("two-point:1,2", "not one of"),
    ("two-point:1,-2,0.5", "eigenvalue"), ("two-point:1,2,1.5", "weight"),
    ("gauss", "not one of"), ("two-point:a,b,c", "numbers"), ("file:/no/such", "does not exist"),
    ("powerlaw:-1,10", "exponent"), ("powerlaw:1,0", "size"),
])
def test_bad_spectrum(text, word):
    with pytest.raises(ValueError, match=word):
        Spectrum.parse(text)


def test_spectrum_validation():
    with pytest.raises(ValueError, match="sum to 1"):
        Spectrum([1.0, 2.0], weights=[0.5, 0.6])
    with pytest.raises(ValueError, match="entries"):
        Spectrum([1.0, 2.0], weights=[1.0])
    with pytest.raises(ValueError, match="eigenvalue"):
        Spectrum([0.0, 1.0])
    merged = Spectrum([2.0, 1.0, 2.0], signal_weights=[0.5, 0.0, 0.5])
    np.testing.assert_allclose(merged.atoms, [1.0, 2.0])
    np.testing.assert_allclose(merged.weights, [1 / 3, 2 / 3])
    np.testing.assert_allclose(merged.signal_weights, [0.0, 1.0])


def test_eigenvalues_realize_the_spectrum():
    tp = Spectrum.two_point(1.0, 4.0, 0.25)
    eig = tp.eigenvalues(8)
    assert sorted(eig) == [1.0, 1.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0]
    pl = Spectrum.power_law(1.0, 50)
    np.testing.assert_allclose(np.sort(pl.eigenvalues(50)), pl.atoms)


def test_solver_raises_instead_of_returning_garbage(monkeypatch):
    monkeypatch.setattr(solvers, "MAXITER", 1)
    with pytest.raises(SolverError, match="no convergence"):
        riskcalc.limit("rtfa", gamma=2.0, r=1, sigma=1, lam=0.3, spectrum=Spectrum([1.0, 4.0]))
    with pytest.raises(SolverError, match="bracket"):
        solvers.increasing_root(lambda x, m: (x + 1.0, x), np.array([1.0]), np.array([2.0]))


@pytest.mark.parametrize("method", list(riskcalc.METHODS))
@pytest.mark.parametrize("gamma", [1e-100, 0.5, 2.0, 1e100])
@pytest.mark.parametrize("scale", [0.0, 1e-100, 1e100])
def test_range_corners_give_finite_limits(method, gamma, scale):
    # Every corner of the accepted ranges: no overflow, no NaN (an inf variance only at the
    # ridgeless interpolation threshold gamma = 1, which is not a corner).
    info = riskcalc.get_method(method)
    kwargs = {info.signal: scale, "sigma": scale}
    for name in info.parameters:
        kwargs.setdefault(name, {"lam": 1e-100 if gamma > 1 else 1e100, "alpha": 0.1}.get(name))
    for spectrum in (None, Spectrum([1.0, 4.0])):
        res = riskcalc.limit(method, gamma=gamma, spectrum=spectrum, **kwargs)
        assert all(np.isfinite(v) and v >= 0 for v in (res.bias, res.variance, res.risk))


def test_arrays_that_do_not_broadcast_name_their_parameters():
    with pytest.raises(ValueError, match=r"gamma \(3,\), r/rho \(2,\) do not broadcast"):
        riskcalc.limit("rtfa", gamma=[1, 2, 3], r=[1, 2], sigma=0.5, lam=0.5)


@pytest.mark.parametrize("method, lam", [("rtfa", 1e300), ("pfedme", 1e-101)])
def test_clients_limit_takes_the_one_range_of_lam(method, lam):
    # Beyond LAM_RANGE the finite-M routes failed with a SolverError ("NaN in the traces").
    with pytest.raises(ValueError, match=r"lam must be 0 or lie in \[1e-100, 1e\+100\]"):
        riskcalc.clients_limit(method, gamma=[1, 2], r=[1, 1], sigma=[0.5, 0.5], lam=lam)


def test_pfedme_at_a_tiny_penalty_says_which_parameter():
    # The client at gamma = 1 has risk ~ lam^-1/2 (30.6 at lam = 1e-4); from 1e-5 the scalar
    # route fails, and its error named neither pfedme nor lam ("no bracket for tau(A^-1)").
    # The spectrum route on the identity spectrum answers for it down to about 4e-17 (fuzz39
    # fall F1: 1e-12 answers now); at 1e-20 both refuse, with the scalar route's message.
    with pytest.raises(SolverError, match=r"pfedme at lam = 1e-20: .* give a larger lam"):
        riskcalc.clients_limit("pfedme", gamma=[1, 2], r=[1, 1], sigma=[0.5, 0.5], lam=1e-20)
