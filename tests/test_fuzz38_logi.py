"""Issue 32, fuzz38 (logi): what this fuzz found, each test failing before."""

import numpy as np
import pytest

import riskcalc


@pytest.mark.parametrize("kw", [dict(clients=2), dict(clients=2, spectrum="scaled:4")])
def test_finite_clients_refuse_a_signal_beyond_the_test_metrics_rule_up_front(kw):
    """F1 (note37 2.4): ``logistic_limit(gamma=1, signal=1700, r=1, lam=1, clients=2,
    global_lam=1)`` solved for 24 s (71 s loaded) and then refused: every target's test
    metrics are computed on the ladder's finest rule, whose label-weight panels reach
    ``||w_i|| <= 1692``; or, loaded, refused at max_seconds blaming "nearly separable data" at
    lam = 1. Now refused before any solve (the work estimate would refuse first here: 1e-3 s),
    under a spectrum at ``||w_i|| sqrt(<s>)``."""
    signal = 900.0 if "spectrum" in kw else 1700.0
    with pytest.raises(ValueError, match=r"at 1[78]00, beyond 1692: the finite-M limits' test "
                                         r"metrics .*lower signal and r"):
        riskcalc.logistic_limit(gamma=1.0, signal=signal, r=1.0, lam=1.0, global_lam=1.0,
                                max_seconds=1e-3, **kw)


def test_a_residual_is_not_started_when_it_would_end_past_the_deadline(monkeypatch):
    """F2 (note37 2.4): the deadline was checked only before each residual evaluation, so one
    evaluation on the largest rules (~20 s) started just before it overran it, and predict's
    ``--max-minutes`` timer (3 s later) stopped the command with its generic message before
    the solver's own. Now the slowest evaluation so far under the same deadline, started now,
    must end by it (from a second on: ``PREDICTED_FROM``, here 0): 50 ms evaluations with 80 ms
    left stop after the first."""
    import time

    from riskcalc.logistic.engine import deadline as module
    from riskcalc.logistic.engine.deadline import Overtime, by_deadline

    monkeypatch.setattr(module, "PREDICTED_FROM", 0.0)
    calls = []

    def slow(x):
        calls.append(x)
        time.sleep(0.05)
        return x

    deadline = time.perf_counter() + 0.08
    by_deadline(slow, deadline)(1)
    with pytest.raises(Overtime):   # the next root solve's residual, under the same deadline
        by_deadline(slow, deadline)(2)
    assert calls == [1]


def test_the_pipelines_time_estimate_counts_its_exact_test_metrics():
    """F3 (note37 2.4): ``logistic_pipeline_seconds`` counted the Newton fits only: a replicate
    at signal 1690, d = 4, M = 2 took 4.9 s (12 s loaded), nearly all in the exact test
    metrics' 5e7-node rule (three calls: the global model, RTFA, local ridge), estimated at
    0.011 s. Now the metrics at ``||w_i||_Sigma`` are counted, by the sweep's estimate too."""
    from montecarlo.logistic.sweep_checks import replicate_seconds
    from montecarlo.runner.budget import logistic_pipeline_seconds

    assert 3.0 < logistic_pipeline_seconds(4, 1.0, [1.0, 1.0], kappa=1690.0) < 10.0
    assert 3.0 < replicate_seconds("rtfa", [(1.0, 0.5, 2)], None, 4, 1, 1690.0) < 10.0
    assert replicate_seconds("rtfa", [(1.0, 0.5, 2)], None, 4, 1, 1.0) < 0.05


@pytest.mark.parametrize("which", ["ridge", "pipeline"])
def test_the_logistic_simulators_take_max_minutes(which):
    """F4 (note37 2.4): ``ridge.simulate`` and ``simulate_pipeline`` had no ``max_minutes``
    (the logistic sweep has one): d = 3000, gamma = 0.1 (30,000 samples) x 50 replicates,
    estimated at 62 min, started at once. Now refused before any replicate, as the sweep and
    ``montecarlo.compare`` refuse (one helper, ``montecarlo.runner.budget.check_minutes``)."""
    from montecarlo.logistic.pipeline import simulate_pipeline
    from montecarlo.logistic.ridge import simulate

    kw = dict(gamma=0.1, signal=1.0, r=1.0, lams=[1.0], d=3000, reps=50, max_minutes=1)
    with pytest.raises(ValueError, match=r"^max_minutes = 1: 50 replicates .*at d = 3000 are "
                                         r"estimated at .* min of work on 1 worker\(s\); lower"):
        if which == "ridge":
            simulate(**kw)
        else:
            simulate_pipeline(global_lam=1.0, clients=2, **kw)


def test_the_logistic_ratio_note_states_the_sizes_simulated():
    """F5 (note37 2.5): the note of a moved ratio said ``n = round(d / gamma)`` for the
    logistic simulations, whose sizes are ``max(1, round(d / gamma))``: at d = 4, gamma = 10
    the rule as stated gives 0 samples, the simulation 1 (gamma 4)."""
    from montecarlo.logistic.pipeline import client_sizes
    from montecarlo.prediction import simulated_ratios

    ratios, note = simulated_ratios(4, [10.0], sizes=client_sizes)
    assert ratios == [4.0] and "n = max(1, round(d / gamma))" in note
    _, note = simulated_ratios(4, [1.0, 10.0], sizes=client_sizes)
    assert "n_j = max(1, round(d / gamma_j))" in note


def test_logistic_advise_says_which_criterion_ranks(tmp_path, capsys):
    """F6 (note37, small): ``advise --model logistic`` under a spectrum put local ridge first
    on the mean of ``||w_hat - w_j||^2`` (the documented criterion, docs/logistic_cli.rst)
    while its test error printed below was the worst (0.3925 against 0.3701), and nothing
    said which criterion ranked. The text and the JSON now name it."""
    import json

    from tests.helpers import run_cli

    path = tmp_path / "fed.json"
    path.write_text(json.dumps({"fedrisk_federation": 1, "signal": 1.0, "clients": [
        {"gamma": 1.0, "r": 0.5}, {"gamma": 1.0, "r": 0.5}]}))
    argv = ["advise", "--model", "logistic", "--federation", path, "--global-lam", "1",
            "--methods", "fedavg", "--no-progress"]
    code, out, _ = run_cli(argv, capsys)
    assert code == 0 and "ranked by the mean over the clients of risk = ||w_hat - w_j||^2" in out
    code, out, _ = run_cli(argv + ["--json"], capsys)
    assert json.loads(out)["ranked_by"].startswith("the mean over the clients of risk")


def test_a_spectrum_file_count_is_checked_against_the_federations_d(tmp_path, capsys):
    """F7 (note37 2.5, SPEC errors): beside a federation file with d = 5, ``--spectrum
    file:E`` listing 3 eigenvalues was answered by ``predict --model logistic`` (its d sized
    powerlaw:P only) and refused by ``advise --model logistic`` and by the same file's own
    client spectra, advise's refusal naming neither --spectrum nor the file. Both verbs now
    refuse it naming --spectrum (advise the file too)."""
    import json

    from tests.helpers import run_cli

    (tmp_path / "eig.txt").write_text("1\n2\n3\n")
    path = tmp_path / "fed.json"
    path.write_text(json.dumps({"fedrisk_federation": 1, "signal": 1.0, "d": 5, "clients": [
        {"gamma": 1.0, "r": 0.5}, {"gamma": 2.0, "r": 0.5}]}))
    spec = f"file:{tmp_path / 'eig.txt'}"
    common = ["--model", "logistic", "--federation", path, "--global-lam", "1",
              "--spectrum", spec]
    code, out, err = run_cli(["predict", "rtfa", "--lam", "1"] + common, capsys)
    assert code == 2 and out == "" and err.startswith(
        f"error: --spectrum {spec} (d = 5): spectrum '{spec}' has 3 eigenvalues for d = 5")
    code, out, err = run_cli(["advise", "--no-progress"] + common, capsys)
    assert code == 2 and err.startswith(f"error: --spectrum {spec} (--federation {path}: d = "
                                        f"5): spectrum '{spec}' has 3 eigenvalues for d = 5")


def test_logistic_results_are_strict_json_by_the_packages_one_conversion():
    """F8 (note37 twins): ``riskcalc.logistic.result`` converted numbers by its own ``_plain``
    (NaN as None, inf kept: ``json.dumps`` wrote ``Infinity``, not JSON) beside a local copy
    of ``riskcalc._frames.json_numbers`` (inf as None). One conversion now: a result holding
    inf (here put in by hand: the limits refuse inf inputs) dumps as strict JSON; an integer
    grid parameter stays integer."""
    import dataclasses
    import json

    import numpy as np

    res = riskcalc.logistic_limit(gamma=2.0, signal=1.0, r=1.0, lam=1.0)
    out = dataclasses.replace(res, risk=np.inf, params={**res.params, "grid": np.arange(2)})
    text = json.dumps(out.as_dict(), allow_nan=False)
    assert '"risk": null' in text and '"grid": [0, 1]' in text


@pytest.mark.parametrize("which", ["ridge", "pipeline"])
def test_the_logistic_simulators_bound_their_task_lists(which, monkeypatch):
    """F9: ``ridge.simulate`` and ``simulate_pipeline`` listed every replicate's task before
    any check: ``reps = 2**53`` never returned (memory), 3e6 took 19-27 s and 1-1.6 GB before
    the time refusal. Now the task bookkeeping is checked first (``check_tasks``, as the
    sweep) and the list is built after the time check (here a 16 MB machine)."""
    from montecarlo.logistic.pipeline import simulate_pipeline
    from montecarlo.logistic.ridge import simulate
    from montecarlo.runner import budget

    monkeypatch.setattr(budget, "physical_memory", lambda: float(2 ** 24))
    kw = dict(gamma=1.0, signal=1.0, r=1.0, lams=[1.0], d=4, reps=10 ** 4, max_minutes=1e-9)
    with pytest.raises(ValueError, match=r"^10000 replicates make 1e\+04 tasks, whose "
                                         r"bookkeeping alone"):
        if which == "ridge":
            simulate(**kw)
        else:
            simulate_pipeline(global_lam=1.0, clients=2, **kw)


def test_the_pipeline_simulation_reads_its_switches_strictly():
    """F10: ``simulate_pipeline(pfedme="no")`` (or ``fedprox=0.5``) switched FedProx on (its
    M proximal Newton solves per outer step), as ``bool("no")``; now refused, as
    ``riskcalc._validate.flag`` refuses other switches."""
    from montecarlo.logistic.pipeline import simulate_pipeline

    kw = dict(gamma=1.0, signal=1.0, r=1.0, lams=[1.0], global_lam=1.0, d=4, reps=2, clients=2)
    with pytest.raises(ValueError, match="^pfedme must be True or False, got 'no'"):
        simulate_pipeline(pfedme="no", **kw)
    with pytest.raises(ValueError, match="^fedprox must be True or False, got 0.5"):
        simulate_pipeline(fedprox=0.5, **kw)



def test_the_ridge_simulations_memory_refusal_shows_n_briefly():
    """F11: at gamma = 1e-300 the memory refusal printed n = d / gamma as a 301-digit
    integer; now to four digits."""
    from montecarlo.logistic.ridge import simulate

    with pytest.raises(ValueError, match=r"\(n = d / gamma = 4e\+300 samples\) needs about"):
        simulate(gamma=1e-300, signal=1.0, r=1.0, lams=[1.0], d=4, reps=2)


def test_array_signals_and_spec_strings_in_the_logistic_python_entries():
    """F12: ``sweep_logistic(signal=[1, 2])`` and ``LogisticFederation(signal=[1, 2])`` were
    TypeErrors from ``float()`` ("only 0-dimensional arrays ..."), and
    ``LogisticFederation(spectrum="scaled:2")`` an AttributeError ('str' object has no
    attribute 'is_identity') where the limits read a SPEC string. Now the signal is refused
    naming it, and the SPEC string is read (``riskcalc.spectrum.as_spectrum``)."""
    from montecarlo.logistic.sweep import sweep_logistic
    from riskcalc.advise.logistic import LogisticFederation

    with pytest.raises(ValueError, match="^signal must be a number, got an array"):
        sweep_logistic("rtfa", gamma=1.0, r=1.0, signal=[1.0, 2.0], lam=1.0, d=4, reps=2,
                       progress=False)
    with pytest.raises(ValueError, match="^signal must be a number, got an array"):
        LogisticFederation(gamma=[1.0, 2.0], r=[1.0, 1.0], signal=[1.0, 2.0], global_lam=1.0)
    fed = LogisticFederation(gamma=[1.0, 2.0], r=[1.0, 1.0], signal=1.0, global_lam=1.0,
                             spectrum="scaled:2")
    assert fed.spectrum.mean == 2.0
    assert LogisticFederation(gamma=[1.0, 2.0], r=[1.0, 1.0], signal=1.0, global_lam=1.0,
                              spectrum="identity").spectrum is None


def test_a_refusal_before_the_deadline_says_why_it_came_early():
    """F13 (after F2): ``logistic_limit(gamma=h (1 - 1e-3), signal=1, r=1, lam=0)`` refused
    "was still solving at max_seconds = 60 (48.8 s)": F2 stopped it before an evaluation as
    slow as its slowest would overrun, and the message read as a contradiction. Now it says
    so (``deadline.elapsed``)."""
    from riskcalc.logistic.work import overtime

    early = str(overtime(0.39, 1.0, 1.0, 0.0, 48.8, 60.0))
    assert "at max_seconds = 60 (48.8 s: its next residual evaluation, as slow as its slowest " \
           "so far, would have ended past it)" in early
    assert "at max_seconds = 60 (61.2 s);" in str(overtime(0.39, 1.0, 1.0, 0.0, 61.2, 60.0))


def test_a_bad_spectrum_beside_a_federation_without_d_is_one_error_line(tmp_path, capsys):
    """F14 (F7's own regression, found by this fuzz): ``advise --model logistic --spectrum
    scaled:0`` beside a federation file without d was a TypeError traceback (F7's message
    formatted the missing d); now one error line naming --spectrum."""
    import json

    from tests.helpers import run_cli

    path = tmp_path / "fed.json"
    path.write_text(json.dumps({"fedrisk_federation": 1, "signal": 1.0, "clients": [
        {"gamma": 1.0, "r": 0.5}, {"gamma": 2.0, "r": 0.5}]}))
    code, out, err = run_cli(["advise", "--model", "logistic", "--federation", path,
                              "--global-lam", "1", "--spectrum", "scaled:0", "--no-progress"],
                             capsys)
    assert code == 2 and out == "" and err.startswith("error: --spectrum scaled:0: spectrum "
                                                      "'scaled:0': spectrum eigenvalue must")


def test_a_federation_files_own_spectrum_is_not_blamed_on_spectrum(tmp_path, capsys):
    """F15 (F7's own regression, found by this fuzz): with the clients' powerlaw:1 spectra in
    a federation file without d, both logistic verbs blamed the option the user did not give
    ("--spectrum None: ...", "--spectrum powerlaw:1: ..."); now the file's clients are named."""
    import json

    from tests.helpers import run_cli

    path = tmp_path / "fed.json"
    path.write_text(json.dumps({"fedrisk_federation": 1, "signal": 1.0, "clients": [
        {"gamma": 1.0, "r": 0.5, "spectrum": "powerlaw:1"},
        {"gamma": 2.0, "r": 0.5, "spectrum": "powerlaw:1"}]}))
    common = ["--model", "logistic", "--federation", path, "--global-lam", "1"]
    code, _, err = run_cli(["advise", "--no-progress"] + common, capsys)
    assert code == 2 and err.startswith(f"error: --federation {path}: the clients' spectrum: "
                                        "spectrum 'powerlaw:1': powerlaw needs")
    code, _, err = run_cli(["predict", "rtfa", "--lam", "1"] + common, capsys)
    # Since fuzz39 spec F11 the refusal names the file's client too.
    assert code == 2 and err.startswith(f"error: --federation {path}: client 0: spectrum: "
                                        "spectrum 'powerlaw:1': powerlaw needs")


def test_the_cosine_at_a_subnormal_r_is_computed(recwarn):
    """F16: ``logistic_limit(gamma=2, signal=1, r=5e-324, lam=1)`` returned a NaN cosine with
    numpy's "invalid value encountered in scalar divide" (``||w_i - c|| ||w_hat - c||``
    underflowed to 0; grids: NaN, silently), where r = 1e-300 gave 0. Now the unit vector is
    formed first: the cosine is 0 to rounding, as at 1e-300, on both routes."""
    res = riskcalc.logistic_limit(gamma=2.0, signal=1.0, r=5e-324, lam=1.0)
    grid = riskcalc.logistic_limit(gamma=[2.0, 3.0], signal=1.0, r=5e-324, lam=1.0)
    assert abs(res.cosine) < 1e-12 and np.all(np.abs(grid.cosine) < 1e-12)
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_logistic_advise_checks_progress_before_solving():
    """F17: ``advise_logistic(fed, progress=5)`` solved the first pipeline and then raised
    "TypeError: 'int' object is not callable"; the linear ``advise`` refuses it up front, as
    this now does."""
    from riskcalc.advise.logistic import LogisticFederation, advise_logistic

    fed = LogisticFederation(gamma=[1.0, 2.0], r=[0.5, 1.0], signal=1.0, global_lam=1.0)
    with pytest.raises(ValueError, match="^progress must be a callable"):
        advise_logistic(fed, ["fedavg"], progress=5)


def test_a_logistic_grid_within_the_reach_is_estimated_and_solved_in_parts(monkeypatch):
    """F19: the grid's work estimate counted only the points beyond the Gauss-Hermite reach,
    and the others were solved all at once: ``logistic_limit`` over a 1000 x 1000 grid of
    (gamma, signal) with ``max_seconds=2`` ran past 120 s and 8 GB (1e4 points: 24 s,
    1.7 GB). Now every point is estimated (``NEAR_SECONDS``; that grid: refused at once,
    2.5e3 s) and solved ``NEAR_CHUNK`` points at a time (1e4: 218 MB), the same values (to
    rounding: the batched sums' order).
    Here a 4 s point and 2-point parts, on a small grid."""
    from riskcalc.logistic import grid

    kw = dict(gamma=[0.5, 1.0, 2.0], signal=[[0.5], [1.0]], r=1.0, lam=0.3)
    whole = riskcalc.logistic_limit(**kw)
    monkeypatch.setattr(grid, "NEAR_CHUNK", 2)
    np.testing.assert_allclose(riskcalc.logistic_limit(**kw).risk, whole.risk, rtol=1e-14)
    monkeypatch.setattr(grid, "NEAR_SECONDS", 4.0)
    with pytest.raises(ValueError, match=r"^the logistic grid \(6 points, 0 beyond the "
                                         r"Gauss-Hermite reach.*estimated at 24 s.*fewer grid"):
        riskcalc.logistic_limit(max_seconds=10, **kw)


@pytest.mark.parametrize("kw", [dict(clients=2, global_lam=1.0), dict(spectrum="scaled:2")])
def test_a_grid_too_long_for_max_seconds_advises_fewer_points(kw):
    """F20: a finite-M or spectrum grid (here 10 x 10) over max_seconds advised only "raise
    max_seconds" (its per-point cost does not fall with the norms, so no smaller signal was
    advised either); the grid's own remedy, fewer points, is now named."""
    with pytest.raises(ValueError, match=r"over the limit max_seconds = 0\.01; fewer grid "
                                         r"points, or raise max_seconds"):
        riskcalc.logistic_limit(gamma=np.linspace(0.5, 2.0, 10), r=1.0, lam=1.0,
                                signal=np.linspace(0.5, 1.0, 10)[:, None], max_seconds=0.01,
                                **kw)
