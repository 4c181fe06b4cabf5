"""Issue 32, fuzz40 (api): what this fuzz found, each test failing before."""

import os

import numpy as np
import pytest

import riskcalc

INFINITE = "min-norm variance is infinite"


def test_no_noise_at_the_interpolation_threshold_is_not_noted_infinite():
    """F1: ``limit('local', gamma=1, sigma=0, rho=1)`` (and rtfa at lam 0) answered variance 0
    (right: no noise) with the note "... where the min-norm variance is infinite"; the note now
    says the variance is 0 with no noise, and the infinite one is kept for the points with
    sigma > 0 only."""
    for method, kw in (("local", dict(rho=1.0)), ("rtfa", dict(r=1.0, lam=0.0)),
                       ("ftfa", dict(r=1.0))):
        res = riskcalc.limit(method, gamma=1.0, sigma=0.0, **kw)
        assert res.variance == 0.0
        assert not any(INFINITE in n for n in res.notes), res.notes
        assert any("0 with no noise" in n for n in res.notes), res.notes
    res = riskcalc.limit("ftfa", gamma=[1.0, 2.0], sigma=[[0.0], [1.0]], r=1.0)
    assert np.isinf(res.variance[1, 0]) and res.variance[0, 0] == 0.0
    assert sum(INFINITE in n for n in res.notes) == 1
    res = riskcalc.limit("ftfa", gamma=[1.0, 2.0], sigma=[0.0, 1.0], r=1.0)
    assert np.isfinite(res.variance).all()
    assert not any(INFINITE in n for n in res.notes), res.notes


def test_register_and_unregister_refuse_non_names():
    """F2: ``register_method`` took ``signal=np.array(['r'])`` (``in`` read a 1-element array
    as 'r') and every limit of the method then failed with "unhashable type";
    ``unregister_method('fedprox')`` raised KeyError and ``unregister_method(['x'])``
    TypeError."""
    def lim(spec, route):
        return 1.0, 0.0
    for signal, tuning in ((np.array(["r"]), None), ("r", np.array(["lam"]))):
        with pytest.raises(ValueError, match="must be one of"):
            riskcalc.register_method(riskcalc.Method("fz40api", "t", signal, tuning, True, "x",
                                                     lim))
    assert "fz40api" not in riskcalc.METHODS
    with pytest.raises(ValueError, match="built-in"):
        riskcalc.unregister_method("fedprox")
    with pytest.raises(ValueError, match="method must be one of"):
        riskcalc.unregister_method(["x"])
    assert "pfedme" in riskcalc.METHODS


def test_optimal_limit_beyond_the_penalties_of_limit_names_lam_star():
    """F3: ``optimal_limit('rtfa', gamma=2, sigma=1e-60, r=1)`` (lam* = 2e-120) and r = 1e-60
    (lam* = 2e120) were refused with ``limit``'s "lam must be 0 or lie in ...: beyond, the
    limits equal those at lam = 0 ... to 100 digits", for a lam never given; the message now
    names lam* and which limit the optimum approaches."""
    for kw, says in ((dict(sigma=1e-60, r=1.0), "lam = 0 (min-norm)"),
                     (dict(sigma=1.0, r=[1.0, 1e-60]), "method fedavg")):
        with pytest.raises(ValueError, match=r"lam\* = sigma\^2 gamma / r\^2 = 2e[-+]120") as e:
            riskcalc.optimal_limit("rtfa", gamma=2.0, **kw)
        assert says in str(e.value)


def test_the_lam_range_refusal_does_not_send_gamma_one_to_an_infinite_lam_zero():
    """F4: ``limit('rtfa', gamma=1, lam=1e-101, ...)`` was refused saying the limits beyond
    [1e-100, 1e100] "equal those at lam = 0 ... to 100 digits": at gamma = 1 the ridge
    variance is sigma^2 / (2 sqrt(lam)) (5e49 at lam = 1e-100) and lam = 0's is infinite."""
    kw = dict(gamma=1.0, sigma=1.0, r=1.0)
    assert riskcalc.limit("rtfa", lam=1e-100, **kw).variance == pytest.approx(5e49, rel=1e-12)
    with pytest.raises(ValueError, match="lam must be 0 or lie in") as e:
        riskcalc.limit("rtfa", lam=1e-101, **kw)
    assert "except near gamma = 1" in str(e.value)


def test_client_specs_with_array_parameters_compare_by_value():
    """F5: ``ClientSpec('rtfa', gamma=[2, 3], ...) == ClientSpec('rtfa', gamma=[2, 3], ...)``
    raised numpy's "The truth value of an array with more than one element is ambiguous"
    (the generated ``__eq__`` compared field tuples); it compares arrays by value now, as
    ``LimitResult`` does."""
    def spec(gamma):
        return riskcalc.ClientSpec("rtfa", gamma=gamma, sigma=1.0, r=1.0, lam=0.5)
    assert spec([2.0, 3.0]) == spec([2, 3]) and spec([2.0, 3.0]) != spec([2.0, 4.0])
    assert spec(2.0) == spec(2) and hash(spec(2.0)) == hash(spec(2))


def test_plugin_paths_as_a_new_user_gives_them(tmp_path, monkeypatch):
    """F6: ``plugins.load("/x/p.py")`` loaded the path's characters ("plugin /: no such
    file"); ``load_plugin(None)`` and ``load_plugin(b"p.py")`` were pathlib TypeErrors;
    ``load_plugin("~/p.py")`` looked in a folder named "~"."""
    from riskcalc import plugins
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv(plugins.ENV, "")
    (tmp_path / "fz40p.py").write_text("X = 1\n")
    with pytest.raises(ValueError, match="takes a list of plugin files"):
        plugins.load(str(tmp_path / "fz40p.py"))
    with pytest.raises(ValueError, match="must be a str or os.PathLike, got NoneType"):
        plugins.load_plugin(None)
    plugins.load(iter(["~/fz40p.py"]))
    assert os.environ[plugins.ENV] == str((tmp_path / "fz40p.py").resolve())
    plugins.load_plugin(os.fsencode(tmp_path / "fz40p.py"))


def test_a_plugin_limit_that_recurses_gives_one_short_message(tmp_path):
    """F7: a plugin's limit calling ``riskcalc.limit`` on itself wrapped the PluginError of
    every level again: a 12,575-character message; the innermost one is kept now."""
    from riskcalc import plugins
    path = tmp_path / "fz40rec.py"
    path.write_text("import riskcalc\n"
                    "def lim(s, r):\n"
                    "    return riskcalc.limit('fz40rec', gamma=2, sigma=1, r=1).bias, 0.0\n"
                    "riskcalc.register_method(riskcalc.Method('fz40rec', 't', 'r', None, True,"
                    " 'x', lim))\n")
    plugins.load_plugin(path)
    try:
        with pytest.raises(ValueError, match="raised RecursionError") as e:
            riskcalc.limit("fz40rec", gamma=2.0, sigma=1.0, r=1.0)
        assert len(str(e.value)) < 300 and str(e.value).count("fz40rec.py") == 1
    finally:
        riskcalc.unregister_method("fz40rec")


def test_a_registered_limit_returning_a_masked_value_is_refused():
    """F8: a registered limit returning ``np.ma.masked_array(1.0, mask=True)`` answered bias
    1.0 (the masked entry's data), where every input refuses a masked array."""
    def lim(spec, route):
        return np.ma.masked_array([1.0, 2.0], mask=[False, True]), np.zeros(2)
    riskcalc.register_method(riskcalc.Method("fz40mask", "t", "r", None, True, "x", lim))
    try:
        with pytest.raises(ValueError, match="returned a masked bias"):
            riskcalc.limit("fz40mask", gamma=[2.0, 3.0], sigma=1.0, r=1.0)
    finally:
        riskcalc.unregister_method("fz40mask")


def test_a_root_of_an_equation_that_is_not_a_number_is_no_root():
    """F9: ``solvers.increasing_root`` of a function NaN at a bracket end (or inside) returned
    a bracket end as the root (NaN > 0 and NaN < 0 are both False): a number derived from
    NaN, which the limits' own finiteness checks could not see."""
    from riskcalc import solvers
    from riskcalc.errors import SolverError

    def nan_inside(x, mask):
        return np.where(abs(x - 2.0) < 0.6, np.nan, x - 2.0), x

    for fun, match in ((lambda x, mask: (x * np.nan, x), "no root in its bracket"),
                       (nan_inside, "not a number inside its bracket")):
        with pytest.raises(SolverError, match=match):
            solvers.increasing_root(fun, np.array([1.0]), np.array([3.0]))
    assert solvers.increasing_root(lambda x, mask: (x - 2.0, x), np.array([1.0]),
                                   np.array([3.0])) == pytest.approx(2.0, rel=1e-14)


def test_a_method_without_a_title_or_reference_is_refused():
    """F10: ``Method('m', None, 'r', None, True, None, limit)`` registered, and ``predict m``
    printed its heading as "None (m); None"."""
    for title, ref in ((None, "x"), ("t", None), (" ", "x"), ("t", ["a"])):
        with pytest.raises(ValueError, match="must be a non-empty string"):
            riskcalc.register_method(riskcalc.Method("fz40t", title, "r", None, True, ref,
                                                     lambda spec, route: (1.0, 0.0)))
    assert "fz40t" not in riskcalc.METHODS
