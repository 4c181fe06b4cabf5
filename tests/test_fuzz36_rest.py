"""Issue 32, fuzz36 (rest): what this fuzz found, each test failing before."""

import math

import pytest

from riskcalc import minimax as mm
from tests.helpers import run_cli


def test_thm31_bound_where_q_rounds_to_one():
    """F1: q = 1 - 10 sqrt(mu/lam) rounds to 1 below mu/lam ~ 1e-34, and q^(C+1) gave the
    bound 0.25 dist0 at mu/lam = 1e-40, C = 1e20 for its 0.25 e^-10 dist0 (paper 001,
    Thm 3.1, eq. 3: (1 - 1e-19)^(1e20 + 1) = e^-10)."""
    value = mm.thm31_distance_lower_bound(1e40, 1.0, 1e40, 1e20)
    assert value == pytest.approx(0.25 * math.exp(-10), rel=1e-9)


def test_communication_lower_bound_where_q_rounds_to_one(capsys):
    """F1: with q rounded to 1 the fewest rounds were 0 (mu/lam = 1e-40, eps = 1e-100) for
    ceil(log(4e-100)/log(1 - 1e-19) - 1) ~ 2.29e21, and past 2^63 astype(int) wrapped."""
    value = mm.communication_lower_bound(1e40, 1.0, 1e40, 1e-100)
    assert value == pytest.approx(math.log(4e-100) / math.log1p(-1e-19), rel=1e-9)
    code, out, err = run_cli(["bounds", "communication_lower_bound", "--L", "1e40", "--mu", "1",
                              "--lam", "1e40", "--eps", "1e-100", "--dist0", "1"], capsys)
    assert code == 0 and "value=2.28872e+21" in out


PLUGIN = '''
import numpy as np, riskcalc
def limit(spec, route):
    res = riskcalc.limit("ftfa", gamma=spec.gamma, sigma=spec.sigma, r=spec.r, route=route)
    return {value}, np.asarray(res.variance)
riskcalc.register_method(riskcalc.Method("fz36", "x", "r", None, True, "x", limit))
'''


@pytest.mark.parametrize("value, kind", [("np.asarray(res.bias) + 1j", "complex numbers"),
                                         ("str(res.bias)", "text"),
                                         ("np.asarray(True)", "booleans"),
                                         ("None", "Python objects")])
def test_plugin_limit_of_complex_text_or_booleans_is_refused(value, kind, tmp_path, capsys,
                                                             monkeypatch):
    """F2: a plugin's limit returning bias 0.5 + 1j printed bias 0.5 (the float cast dropped
    the imaginary part), "0.5" and True were read as numbers, and None was called "a
    non-finite number"."""
    import riskcalc
    from riskcalc import plugins

    monkeypatch.delenv(plugins.ENV, raising=False)
    path = tmp_path / f"fz36_{kind.split()[0]}.py"
    path.write_text(PLUGIN.format(value=value))
    try:
        code, out, err = run_cli(["--plugin", path, "predict", "fz36", "--gamma", "2", "--r",
                                  "1", "--sigma", "0.5"], capsys)
    finally:
        if "fz36" in riskcalc.METHODS:
            riskcalc.unregister_method("fz36")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert f"limit returned {kind}" in err and "expected real numbers" in err


def test_check_method_refuses_an_infinite_limit(capsys):
    """F3: at gamma = 1 (ridgeless variance infinite) the simulation rows said "ok variance
    predicted inf, simulated -18.8, tolerance inf"; an infinite limit is inside no interval."""
    code, out, err = run_cli(["check-method", "ftfa", "--gamma", "1", "--d", "4", "--reps",
                              "2"], capsys)
    assert code == 2 and out == ""
    assert "variance of ftfa is infinite at gamma = 1" in err and "--gamma" in err


def test_check_method_refuses_a_grid_past_the_range(capsys):
    """F3: --lam 1e100 (in range) gave pfedme a FAIL row and exit 1 for the vectorized check's
    own 2e100; now refused before any work, saying why."""
    code, out, err = run_cli(["check-method", "pfedme", "--lam", "1e100", "--d", "4", "--reps",
                              "2"], capsys)
    assert code == 2 and out == "" and "0.5 to 2 times --lam" in err


@pytest.mark.parametrize("argv, what", [
    (["bounds", "local_ier", "--list"], "local_ier"),
    (["bounds", "--list", "--beta", "1"], "--beta"),
    (["figures", "--list", "--all"], "--all"),
    (["figures", "--list", "--out", "DIR"], "--out")])
def test_list_with_options_it_ignores_is_refused(argv, what, capsys):
    """F4: ``--list`` printed the list and ignored a bound NAME or parameter, figure ids,
    --all or --out given with it (nothing evaluated or built, exit 0); simulate refused
    this already."""
    code, out, err = run_cli(argv, capsys)
    assert code == 2 and out == "" and f"{what} does not apply with it" in err


def test_check_list_json_prints_json(capsys):
    """F4: ``check --list --json`` printed the text table."""
    import json

    code, out, err = run_cli(["check", "--list", "--json", "--paper", "001"], capsys)
    rows = json.loads(out)
    assert code == 0 and rows and set(rows[0]) == {"id", "kind", "location"}


def test_out_linked_to_a_cache_not_yet_written_is_refused(tmp_path, capsys):
    """F5: ``simulate --out LINK --cache C`` with LINK a symbolic link to C, C not yet
    written: passed as different files, and the CSV written through the link replaced the
    cache."""
    link = tmp_path / "out.csv"
    link.symlink_to(tmp_path / "cache.jsonl")
    code, out, err = run_cli(["simulate", "paper001-fig2", "--set", "m=2", "--set", "d=2",
                              "--set", "lam=1", "--out", link, "--cache",
                              tmp_path / "cache.jsonl", "--no-progress"], capsys)
    assert code == 2 and "--out and --cache must be different files" in err
    assert not (tmp_path / "cache.jsonl").exists()


def test_simulate_counts_each_iterations_fixed_cost(tmp_path, capsys):
    """F6: at m = d = 2 the estimate scaled with m d^2 alone: apgd1.iterations=1e9 was
    estimated at 164 s and started (~75 us an iteration: about a day)."""
    code, out, err = run_cli(["simulate", "paper001-fig2", "--set", "m=2", "--set", "d=2",
                              "--set", "lam=1", "--set", "apgd1.iterations=1e9", "--out",
                              tmp_path / "never.csv", "--no-progress"], capsys)
    assert code == 2 and out == "" and "days of work" in err and "--max-minutes" in err


def test_a_method_setting_of_the_grid_parameter_is_refused():
    """F7: paper001-fig2's grid is lam, passed to every method at each grid value, so
    ``--set apgd1.lam=2`` ran at the grid's lam, silently."""
    from montecarlo.experiments.presets import resolve

    with pytest.raises(ValueError, match="lam is the grid of preset paper001-fig2"):
        resolve("paper001-fig2", {"apgd1.lam": 2.0})


@pytest.mark.parametrize("argv, word", [
    (["paper001-fig2", "--set", "m=2", "--set", "d=2", "--set", "lam=1", "--set",
      "apgd1.iterations=10"], "not reached"),
    (["paper004-synthetic", "--set", "m=2", "--set", "n=2", "--set", "d=2", "--set",
      "n_test=2", "--set", "R=0", "--set", "methods=global", "--set", "global.lr=1e100"],
     "diverged")])
def test_simulate_table_names_a_mean_that_is_no_number(argv, word, tmp_path, capsys):
    """F8: the summary table printed ``inf`` (APGD1 not reaching the target in its 10
    iterations) and ``nan`` (FedAvg overflowing at lr = 1e100) as results."""
    code, out, err = run_cli(["simulate", *argv, "--out", tmp_path / "o.csv",
                              "--no-progress"], capsys)
    table = out.splitlines()[2]
    assert code == 0 and word in table and "inf" not in table and "nan" not in table
    assert out.splitlines()[-1].startswith(f"{word}: ")


def test_simulate_table_rounds_to_target_not_computed(tmp_path, capsys):
    """F8: with ``target=null`` rounds_to_target is not computed (NaN): printed nan."""
    code, out, err = run_cli(["simulate", "paper001-fig2", "--set", "m=2", "--set", "d=2",
                              "--set", "lam=1", "--set", "target=null", "--out",
                              tmp_path / "o.csv", "--no-progress"], capsys)
    assert code == 0 and "not computed" in out.splitlines()[2] and "nan" not in out


def test_check_method_of_a_method_without_estimator_says_so(tmp_path, capsys, monkeypatch):
    """F9: a plugin method with a limit alone was "method must be one of fedavg, ...; got
    'fz36'" in check-method, as if unknown (predict runs it)."""
    import riskcalc
    from riskcalc import plugins

    monkeypatch.delenv(plugins.ENV, raising=False)
    path = tmp_path / "fz36_noest.py"
    path.write_text(PLUGIN.format(value="np.asarray(res.bias)"))
    try:
        code, out, err = run_cli(["--plugin", path, "check-method", "fz36", "--d", "4",
                                  "--reps", "2"], capsys)
    finally:
        if "fz36" in riskcalc.METHODS:
            riskcalc.unregister_method("fz36")
    assert code == 2 and "has a limit but no finite-sample estimator" in err


def test_run_preset_takes_numpy_scalars():
    """F10: ``run_preset`` with numpy scalars among the overrides (m = numpy.int64(2)) was a
    TypeError, "Object of type int64 is not JSON serializable" (the task key)."""
    import numpy as np

    from montecarlo.experiments.presets_run import run_preset

    rows = run_preset("paper001-fig2", {"m": np.int64(2), "d": np.int64(2), "lam": np.float64(1),
                                        "apgd1.iterations": np.int64(10)}, progress=False)
    assert len(rows) == 2


def test_a_matrix_for_an_instance_constant_is_refused():
    """F10: ``noise=[[1, 2], [3, 4]]`` was a TypeError of float() in the quadratic builder."""
    from montecarlo.experiments.presets import resolve

    with pytest.raises(ValueError, match="noise must be a number"):
        resolve("paper001-fig2", {"noise": [[1, 2], [3, 4]]})


def test_select_takes_one_claim_id_as_a_string():
    """F11: ``paper_checks.select(None, "001.sec2.summand-lower-bound")`` iterated the string:
    "unknown claim id(s): '0', '0', '1', '.', ..."."""
    from paper_checks import select

    assert [c.id for c in select(None, "001.sec2.summand-lower-bound")] == [
        "001.sec2.summand-lower-bound"]


def test_figures_cache_path_taken_by_a_file_is_named(tmp_path, capsys):
    """F12: a file DIR/.cache (where the simulation cache folder goes) gave the raw
    "error: [Errno 17] File exists: 'DIR/.cache'", naming no option."""
    (tmp_path / ".cache").write_text("")
    code, out, err = run_cli(["figures", "p004-fig3", "--quick", "--out", tmp_path,
                              "--no-progress", "--jobs", "1"], capsys)
    assert code == 2 and ".cache is not a folder" in err and "--no-cache" in err


@pytest.mark.parametrize("name", ["local_case2_lambda", "local_case2_lambda_printed"])
def test_local_case2_lambda_without_noise_or_heterogeneity(name, capsys):
    """F13: at rho = R = 0 both sides of paper 004's eq. (72) vanish for every lambda; the
    minimal lambda was 0/0 = NaN, refused on the command line as an "overflow"; now -mu
    (every lambda >= 0 works, as the docstring's negative values say)."""
    code, out, err = run_cli(["bounds", name, "--L", "1", "--mu", "0.5", "--rho", "0", "--R",
                              "0", "--n", "100", "--m", "10"], capsys)
    assert code == 0 and "value=-0.5" in out


def test_fedprox_complexity_of_no_rounds_with_a_huge_inner_loop(capsys):
    """F14: 0 rounds (eps above dist0) times K = 3.5e27 (a float, past int64): K's cast to
    int64 was an OverflowError, a traceback of ``riskcalc bounds``."""
    code, out, err = run_cli(["bounds", "fedprox_complexity", "--L", "1e30", "--mu", "1000",
                              "--lam", "1e-100", "--eps", "1e100", "--dist0", "1e30"], capsys)
    assert code == 0 and "rounds=0 gradient_evaluations=0" in out


def test_iapgd_agd_steps_where_the_logged_product_overflows():
    """F15: the log of 1152 L lam n^2 (2 sqrt(lam/mu) + 1)^2 / mu^2 (paper 001, Thm 4.2) was
    taken of the product, ~1e364 at L = 1e-3, mu = 1e-100, lam = 1e30, n = 1e3: local_steps
    inf (NaN at 0 rounds), refused as an overflow; its log is 844.27 (mpmath)."""
    out = mm.iapgd_agd_complexity(1e-3, 1e-100, 1e30, 1e3, 1e100, 1e3)
    assert out["rounds"] == 0 and out["local_steps"] == 0
    one = mm.iapgd_agd_complexity(1e-3, 1e-100, 1e30, 1e3, 1e-3, 1e3)
    a = 844.2739379592143                   # mpmath, 40 digits
    b = 4 * math.sqrt(1e-100 * (1e-3 + 1e30) / (1e30 * (1e-100 + 1e30)))
    k = one["rounds"]
    assert one["local_steps"] == pytest.approx(k * a + b * k * (k - 1) / 2, rel=1e-12)


def test_dichotomy_ier_at_no_heterogeneity_with_extreme_curvature(capsys):
    """F16: at R = 0 the first term of paper 000's eq. (19) is 0, but beta^3/mu^2 overflowed
    first (beta = 1e100, mu = 1e-100): inf * 0 = NaN, refused as an overflow, for the bound
    beta sigma^2/(mu^2 N) = 1e230. Since fuzz37 minimax F14 the input is refused: n_i = 1 is
    below Theorems 4 and 6's n_i >= 4 beta/mu = 4e200 (eq. 19 holds under them), and with it
    beta^3/mu^2 <= 6.25e298 does not overflow."""
    code, out, err = run_cli(["bounds", "dichotomy_ier", "--beta", "1e100", "--mu", "1e-100",
                              "--loss_sup", "1e30", "--sigma2", "1e30", "--R", "0", "--n_i",
                              "1", "--N", "1e100"], capsys)
    assert code == 2 and "n_i must be >= 4*beta/mu (Theorems 4 and 6" in err
