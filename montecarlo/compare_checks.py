"""The options ``compare`` and ``sweep`` share, checked before any work: the measure keyword
and its deprecated alias, the ``Setting``, options without effect in the chosen mode
(``unused_options``, also the command line's check, named as its options), the run's reps and
personalization steps, and its time estimate. Re-exported by ``montecarlo.compare``."""

from __future__ import annotations

import warnings

from montecarlo.linear.estimators import get_estimator
from montecarlo.linear.instances import Setting, linear_replicate_seconds
from montecarlo.linear.measure import KINDS, no_steps
from montecarlo.runner import budget
from riskcalc._validate import as_array, one_of, positive_int


def measure_keyword(measure, kind):
    """``measure=`` (default conditional) or its deprecated alias ``kind=`` (fuzz41 api F4)."""
    if kind is None:
        return "conditional" if measure is None else measure
    if measure is not None:
        raise ValueError("give measure= only (kind= is its deprecated alias), not both")
    warnings.warn("kind= is deprecated: the measure is measure= (as in montecarlo.compare("
                  "method, ...) and --measure)", DeprecationWarning, stacklevel=3)
    return kind


def as_setting(setting, where: str) -> Setting:
    """``setting`` if a ``Setting``, else ValueError (a dict was an AttributeError; F9)."""
    if not isinstance(setting, Setting):
        raise ValueError(f"{where}: setting must be a montecarlo.linear.instances.Setting "
                         f"(e.g. Setting(d=200)), got {type(setting).__name__} "
                         f"{setting!r:.40}; montecarlo.compare(method, ..., d=D) takes the "
                         "Setting's fields as keywords")
    return setting


def federation_unused(setting: Setting, method: str) -> None:
    """``unused_options`` for a ``Setting``'s federation under the oracle (ignored: F17), and
    its federated model for a ``method`` that uses none (was taken: fuzz41 left F6)."""
    if setting.global_model == "federated":
        unused_options(method, "federated", [], student_t=True)
    elif setting.global_model == "oracle":
        unused_options("", "oracle", [
            k for k in ("gammas", "rs", "sigmas") if getattr(setting, k) is not None] + (
            [] if setting.weights == "samples" else ["weights"]), student_t=True)


def conditional_signal(kind: str, spectrum, setting: Setting, where: str) -> None:
    """Refuse, before any work, the one case the conditional measure has no route for: the
    federated global model under a ``spectrum`` whose signal direction is not uniform (its
    averages over the other clients' directions take E[u u^T] = I / d). The message said
    "the federated global model needs the signal direction uniform", from the first
    replicate, read as a limit of the theory, which ``riskcalc.limit`` answers (fuzz42 api2
    F3). Under covariate shift (``setting.spectra``) no measure has a route: the message
    advised measure='empirical', which refused it in turn."""
    if spectrum is None or spectrum.signal_is_uniform:
        return
    if setting.spectra is not None:
        raise ValueError(f"{where}: the simulator's instances have no route for covariate shift "
                         "(Setting.spectra) under a non-uniform signal direction (spectrum "
                         "signal_weights unequal to its weights), under either measure")
    if kind == "conditional" and setting.global_model == "federated":
        raise ValueError(f"{where}: the simulator's conditional measure has no route for the "
                         "federated global model under a non-uniform signal direction "
                         "(spectrum signal_weights unequal to its weights): simulate it with "
                         "measure='empirical'; the prediction itself is riskcalc.limit(..., "
                         f"clients={setting.clients})")


def check_run(reps, kind, steps, step_size, method=None):
    """Validate the simulation options shared by ``compare`` and ``sweep`` (``method``: steps
    are refused for one without personalization)."""
    reps = positive_int("reps", reps, minimum=2)
    if not one_of(kind, KINDS):
        raise ValueError(f"measure must be one of {', '.join(KINDS)}; got {kind!r}")
    if steps is not None:
        steps = positive_int("steps", steps, minimum=0)
        if step_size is None:   # Python's names (was "--steps needs --step-size"; fuzz38 F18)
            raise ValueError("steps needs step_size")
        # One number (an array was a TypeError from float(); fuzz38 steps F13).
        step_size = float(as_array("step size", step_size, low=0.0, low_open=True, ndim=0))
        if method is not None:
            no_steps(method, get_estimator(method))
    elif step_size is not None:
        raise ValueError("step_size is only used with steps")
    return reps, steps, step_size


def check_minutes(max_minutes, tasks: int, setting: Setting, gamma, method: str, n_jobs,
                  scheduler, what: str) -> None:
    """``montecarlo.runner.budget.check_minutes`` for ``tasks`` replicates estimated by
    ``montecarlo.linear.instances.linear_replicate_seconds`` (the command line's estimate).
    Was: the Python API ran whatever it was given (the limit was the command line's alone,
    which checks --max-minutes itself and passes None)."""
    if max_minutes is None:
        return
    seconds = tasks * linear_replicate_seconds(setting, gamma, get_estimator(method).centered)
    budget.check_minutes(max_minutes, seconds, n_jobs, scheduler,
                         f"{what} at d = {setting.d}", "lower reps, d or clients")


def unused_options(method: str, global_model, given, student_t: bool,
                   cli: bool = False, noise: str = "gaussian",
                   measure: str = "conditional", eigvecs: str = "aligned",
                   features: str = "gaussian") -> None:
    """Options without effect in the chosen mode are errors: a ``noise`` law other than
    Gaussian under the conditional ``measure`` (the exact expectation over the noise given the
    designs, in which only sigma^2 enters: ``--noise rademacher`` printed the Gaussian numbers,
    fuzz38 docs F3), the federation's (``given`` holds the names of those given:
    ``clients``, ``clients_file``, ``weights``, ``gammas``, ``rs``, ``sigmas``, and ``df``)
    under the oracle global model (the centre theta_0 itself), a federated global model for
    a method that has none, ``df`` without Student-t draws (``student_t``). ``cli``: named as
    the command line's options (``riskcalc compare`` and ``sweep``), else as this module's
    keywords: clients=5 with global_model="oracle", weights="uniform" or gammas under the
    oracle, df=7 with Gaussian draws and a federated model for a local baseline were taken
    and ignored; so were Haar-random ``eigvecs`` of Gaussian ``features`` (a rotated Gaussian
    vector is the same Gaussian vector in distribution)."""
    def name(key):
        return "--" + key.replace("_", "-") if cli else key

    if one_of(eigvecs, ("random",)) and one_of(features, ("gaussian",)):
        raise ValueError(
            ("--eigvecs random has no effect with --features gaussian (the default" if cli
             else "eigvecs='random' has no effect with features='gaussian' (the default")
            + ": a rotated Gaussian vector has the same law, so the simulation is the aligned "
            "one in distribution); give " + ("--features rademacher or student-t" if cli else
                                             "features='rademacher' or 'student-t'")
            + " to see the eigenvectors matter or not")
    if noise != "gaussian" and measure == "conditional":
        raise ValueError(
            (f"--noise {noise} has no effect under --measure conditional (the default" if cli
             else f"noise={noise!r} has no effect with measure='conditional' (the default")
            + ": the exact expectation over the noise given the designs, in which only its "
            "variance sigma^2 enters); give " + ("--measure empirical" if cli else
                                                 "measure='empirical'") + " to draw the noise")
    federated = "--global federated" if cli else "global_model='federated'"
    others = [name(k) for k in given if k != "df"]
    if global_model != "federated" and others:
        raise ValueError(f"{', '.join(others)} {'applies' if cli and len(others) == 1 else 'apply'}"
                         f" with {federated} only (the oracle global model is the centre "
                         "theta_0 itself, whatever the other clients)")
    if global_model == "federated" and not get_estimator(method).centered:
        raise ValueError(f"{federated} does not apply to {method}: it uses no global model")
    if "df" in given and not student_t:
        raise ValueError(f"{name('df')} applies with " + (
            "--features student-t or --noise student-t" if cli else
            "features='student-t' or noise='student-t'") + " only")
