"""Issue 32, fuzz42 (api2): what this fuzz found, each test failing before."""

import numpy as np
import pytest

import riskcalc
from montecarlo.compare import compare
from montecarlo.linear.instances import Setting
from riskcalc.estimate import estimate
from riskcalc.linear.dynamics.tuning import optimal_rounds
from tests.helpers import run_cli

_X = np.random.default_rng(0).normal(size=(40, 3))
_Y = _X @ np.ones(3)
_ROUNDS = dict(gamma=2.0, r=1.0, sigma=1.0, signal=0.0, local_steps=2, step_size=0.1)
_STEPS = dict(gamma=2.0, r=1.0, sigma=1.0, step_size=0.2)
_LOGISTIC = dict(method="local_ridge", signal=1.0, lam=1.0)

#: Every public function taking max_seconds / max_minutes, called cheaply with ``limit``.
CALLS = {
    "rounds_limit": lambda t: riskcalc.rounds_limit("fedavg", rounds=3, max_seconds=t,
                                                    **_ROUNDS),
    "optimal_rounds": lambda t: optimal_rounds("fedavg", max_rounds=4, max_seconds=t,
                                               **_ROUNDS),
    "optimal_steps": lambda t: riskcalc.optimal_steps("ftfa", max_steps=4, max_seconds=t,
                                                      **_STEPS),
    "steps_limit": lambda t: riskcalc.steps_limit("ftfa", steps=3, max_seconds=t, **_STEPS),
    "steps_limit clients": lambda t: riskcalc.steps_limit("ftfa", steps=3, clients=3,
                                                          max_seconds=t, **_STEPS),
    "logistic_limit": lambda t: riskcalc.logistic_limit(gamma=2.0, r=1.0, max_seconds=t,
                                                        **_LOGISTIC),
    "logistic_clients_limit": lambda t: riskcalc.logistic_clients_limit(
        gamma=[2.0, 2.0], r=[1.0, 1.0], max_seconds=t, **_LOGISTIC),
    "estimate": lambda t: estimate(_X, _Y, np.repeat([0, 1], 20), max_seconds=t),
    "compare": lambda t: compare(riskcalc.ClientSpec("ftfa", gamma=2.0, r=1.0, sigma=1.0),
                                 Setting(d=10), reps=2, seed=0, max_minutes=t),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_an_infinite_time_limit_is_no_limit_everywhere(name):
    """F1: rounds_limit, optimal_rounds, optimal_steps, steps_limit and montecarlo.compare
    refused max_seconds / max_minutes = inf ("must be a finite number in (0, inf)") where
    logistic_limit, logistic_clients_limit and estimate took it: one rule now
    (``riskcalc._validate.max_time``), inf = no limit, and 0 refused alike."""
    for limit in (np.inf, np.float64(np.inf)):
        assert CALLS[name](limit) is not None
    with pytest.raises(ValueError, match=r"^max_(seconds|minutes) must lie in \(0, inf\], "
                                         r"got 0\.0$"):
        CALLS[name](0)


def test_simulate_help_says_a_repeated_set_key_is_layered(capsys):
    """F2: ``simulate --set lam=1 --set lam=2`` keeps lam = 2 where ``predict --lam 1 --lam 2``
    is refused; the layering is documented (docs/simulation.rst: "--set R=0 --set R=1 simulates
    R = 1") and tests/test_cli_simulate.py relies on it, but --help spoke of a later KEY over
    an earlier, different one only. It now says the same KEY is layered too."""
    code, out, _ = run_cli(["simulate", "--help"], capsys)
    assert code == 0
    assert "--set lam=1 --set lam=2 simulates lam = 2" in " ".join(out.split())


@pytest.mark.parametrize("call", ["compare", "sweep"])
def test_a_federated_non_uniform_signal_is_named_a_limit_of_the_simulator(call):
    """F3: compare (and sweep) with clients=5 under Spectrum([1, 4], [.5, .5],
    signal_weights=[.9, .1]) said "the federated global model needs the signal direction
    uniform" from the first replicate, while riskcalc.limit(..., clients=5) answers the case
    (0.694; measure="empirical" simulates 0.683 +- 0.014). The refusal now comes before any
    work, names the conditional measure as the missing simulation route and points to
    measure='empirical' and riskcalc.limit."""
    import montecarlo
    from montecarlo.sweep import sweep

    spectrum = riskcalc.Spectrum([1.0, 4.0], [0.5, 0.5], signal_weights=[0.9, 0.1])
    kw = dict(gamma=0.5, sigma=1.0, r=1.0, lam=1.0, spectrum=spectrum, reps=2)
    message = (rf"^{call}: the simulator's conditional measure has no route for the federated "
               r"global model .* measure='empirical'; the prediction itself is "
               r"riskcalc\.limit\(\.\.\., clients=5\)$")
    with pytest.raises(ValueError, match=message):
        if call == "compare":
            montecarlo.compare("rtfa", d=40, clients=5, **kw)
        else:
            sweep("rtfa", setting=Setting(d=40, clients=5, global_model="federated"),
                  progress=False, **kw)


@pytest.mark.parametrize("measure", ["conditional", "empirical"])
def test_covariate_shift_with_a_non_uniform_signal_advises_no_measure(measure):
    """F4: the same spectrum with Setting.spectra (covariate shift): F3's message advised
    measure='empirical', which then refused with "covariate shift needs the signal direction
    uniform" from the first replicate. Both measures are now refused before any work, as a
    limit of the simulator's instances."""
    spec = riskcalc.ClientSpec("rtfa", gamma=0.5, sigma=1.0, r=1.0, lam=1.0,
                               spectrum=riskcalc.Spectrum([1.0, 4.0], [0.5, 0.5],
                                                          signal_weights=[0.9, 0.1]))
    setting = Setting(d=40, clients=3, global_model="federated",
                      spectra=("two-point:1,4,0.5", "two-point:1,2,0.5"))
    with pytest.raises(ValueError, match=r"^compare: the simulator's instances have no route "
                                         r"for covariate shift .* under either measure$"):
        compare(spec, setting, reps=2, measure=measure)


@pytest.mark.parametrize("max_minutes", [None, 10.0])
def test_n_jobs_is_named_alike_whatever_the_time_limit(max_minutes):
    """F5: montecarlo.compare(..., n_jobs=0) said "n_jobs must be an integer >= 1" with a
    max_minutes (its time check reads n_jobs first) but "jobs must be ..." with
    max_minutes=None (montecarlo.runner.tasks.run_tasks named it by the command line's
    option, without its dashes). Both name the Python parameter now."""
    with pytest.raises(ValueError, match=r"^n_jobs must be an integer >= 1"):
        compare(riskcalc.ClientSpec("ftfa", gamma=2.0, r=1.0, sigma=1.0), Setting(d=10),
                reps=2, n_jobs=0, max_minutes=max_minutes)


def test_a_repeated_set_key_applies_at_its_last_place():
    """F6: ``--set *.iterations=50 --set apgd1.iterations=5 --set *.iterations=60`` ran apgd1
    at 5 iterations, not the last layer's 60: the settings' dict kept a repeated KEY at its
    first place, so it applied before apgd1.iterations. --help and docs/simulation.rst say a
    later setting overrides an earlier one."""
    from montecarlo.experiments.presets import resolve
    from riskcalc.cli.simulate import parse_settings

    spec = resolve("paper001-fig2", parse_settings(
        ["*.iterations=50", "apgd1.iterations=5", "*.iterations=60"]))
    assert {label: hyper["iterations"] for label, (_, hyper) in spec["methods"].items()} == {
        "apgd1": 60, "apgd2": 60}
