"""Predicted vs simulated: riskcalc's limit next to the simulation mean with honest error bars.

For one ``ClientSpec``, ``compare`` runs ``reps`` independent replicates (each its own sampled
instance, paper 003 Sec. 2), measures the target client's bias, variance and risk on each
(``montecarlo.linear.measure``, eq. 3), and reports per quantity the predicted limit
(``riskcalc.spec_limit``, Thms 1-4 / Cor. 3.1), the replicate mean, its standard error, the
relative difference, and whether the prediction lies inside the 95% Student-t interval of the
mean. Replicates are tasks of ``montecarlo.runner.tasks.run_tasks`` seeded by
``montecarlo.runner.seeding``: the same seed gives the same numbers whatever the number of workers.
The prediction (``predicted``, ``federated_limit``, ``federated_steps_limit``) is
``montecarlo.prediction``'s, the replicate tasks (``replicate_task``, ``spec_to_dict``, ...)
``montecarlo.replicates``'; those names stay importable from here.

``compare_method`` takes plain keyword arguments instead of a ``ClientSpec`` and a
``Setting``; the module itself is callable as that function, ``montecarlo.compare(method,
gamma=..., sigma=..., d=..., reps=...)``.
"""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass, fields

from montecarlo.runner.budget import check_tasks
from montecarlo.linear.estimators import tuning_value
from montecarlo.compare_checks import (as_setting, check_minutes, check_run, conditional_signal,
                                      federation_unused, measure_keyword, unused_options)
from montecarlo.linear.instances import Setting, check_memory, scalar_spec
from montecarlo.prediction import federated_limit, federated_steps_limit, predicted
from montecarlo.replicates import (QUANTITIES, replicate_task, spec_from_dict, spec_to_dict,
                                  task_inputs, valid_replicate)
from montecarlo.runner.seeding import check_seed
from montecarlo.runner.stats import none_if_nan, summarize
from montecarlo.runner.tasks import cached_count, run_tasks
from riskcalc import _frames
from riskcalc._validate import positive_int
from riskcalc.linear.model import ClientSpec, as_spec
from riskcalc.spectrum import Spectrum

__all__ = ["QUANTITIES", "Comparison", "check_run", "compare", "compare_method",
           "federated_limit", "federated_steps_limit", "none_if_nan", "predicted",
           "replicate_task", "spec_from_dict", "spec_to_dict", "summarize", "unused_options"]

#: Default ``max_minutes`` of ``compare`` and ``sweep``: the command line's --max-minutes
#: default (``riskcalc.cli.shared.guards.MAX_MINUTES``).
MAX_MINUTES = 10.0


@dataclass(frozen=True)
class Comparison:
    """Result of ``compare``; ``as_dict`` is the DESIGN.md JSON contract of ``riskcalc compare``.

    Attributes
    ----------
    limit : riskcalc.LimitResult
        The prediction.
    summary : dict
        Per quantity, the output of ``summarize``.
    setting : Setting
        How instances were sampled.
    reps, seed, n : int
        Replicates, seed, and the target's sample size n = round(d / gamma).
    kind : str
        ``conditional`` or ``empirical``.
    steps, step_size : optional
        Finite personalization, if any.
    """

    limit: object
    summary: dict
    setting: Setting
    reps: int
    seed: int
    n: int
    kind: str
    steps: int | None
    step_size: float | None

    def as_dict(self) -> dict:
        """``{"method", "params", "bias", "variance", "risk", "predicted", "simulated",
        "comparison", "setting"}`` as strict JSON values, as ``LimitResult.as_dict``: a
        number past the floats (a simulation of diverging steps) or undefined is None (they
        were inf and NaN, which ``json.dumps`` writes as Infinity and NaN, not JSON)."""
        num = _frames.json_numbers
        out = self.limit.as_dict()
        out["predicted"] = {q: out[q] for q in QUANTITIES}
        sim = {q: num(self.summary[q]["mean"]) for q in QUANTITIES}
        sim.update({f"{q}_se": num(self.summary[q]["se"]) for q in QUANTITIES})
        sim.update(reps=self.reps, d=self.setting.d, n=self.n, seed=self.seed,
                   measure=self.kind)
        out["simulated"] = sim
        out["comparison"] = {q: {"rel_diff": num(self.summary[q]["rel_diff"]),
                                 "ci95": [num(self.summary[q]["low"]),
                                          num(self.summary[q]["high"])],
                                 "inside_ci95": bool(self.summary[q]["inside"])}
                             for q in QUANTITIES}
        out["setting"] = {**self.setting.as_dict(), "steps": self.steps,
                          "step_size": self.step_size}
        return out

    def to_frame(self):
        """A pandas DataFrame indexed by quantity (bias, variance, risk): predicted, simulated
        mean, se, the 95% interval, rel_diff and inside_ci95. Needs pandas
        (``pip install 'fedrisk[frames]'``)."""
        pd = _frames.pandas()
        rows = {q: {"predicted": float(getattr(self.limit, q)), "simulated": s["mean"],
                    "se": s["se"], "ci95_low": s["low"], "ci95_high": s["high"],
                    "rel_diff": s["rel_diff"], "inside_ci95": bool(s["inside"])}
                for q, s in self.summary.items()}
        return pd.DataFrame.from_dict(rows, orient="index").rename_axis("quantity")


def compare(spec: ClientSpec, setting: Setting, *, reps: int = 20, seed: int = 0,
            measure: str | None = None, steps: int | None = None,
            step_size: float | None = None, route: str = "auto", n_jobs: int = 1,
            scheduler: str | None = None, progress: bool = False, cache=None,
            max_minutes: float | None = MAX_MINUTES, kind: str | None = None) -> Comparison:
    """Predicted (riskcalc) vs simulated (montecarlo) bias, variance and risk of one client.

    Paper 003 (``003_4b976ddf5225c17e.txt``): the limits of Thms 1-4 / Cor. 3.1 against the
    finite-d measurement of eq. (3) on instances of Sec. 2.

    Parameters
    ----------
    spec : ClientSpec
        The target client's model (scalar parameters).
    setting : Setting
        d, clients, global model, distributions.
    reps : int
        Number of replicates, >= 2 (an error bar needs two).
    seed : int
        Seed of the experiment (``montecarlo.runner.seeding``).
    measure : {"conditional", "empirical"}
        Measurement (``montecarlo.linear.measure``; default conditional).
    steps, step_size : optional
        Personalize with this many full-batch gradient steps (paper 003, Algs. 5-6) instead
        of the converged closed form; the prediction is then the finite-step limit
        (``riskcalc.steps_limit``) where it is implemented (FTFA, RTFA and the local
        baselines, theta in a uniform direction), else the converged limit with a note
        saying so.
    route : str
        riskcalc route of the prediction.
    n_jobs, scheduler, progress, cache
        Passed to ``montecarlo.runner.tasks.run_tasks``.
    max_minutes : float or None
        Refuse a run estimated to take longer (``check_minutes``; None: no limit).
    kind : str, optional
        Deprecated alias of ``measure`` (a DeprecationWarning).

    Examples
    --------
    >>> from riskcalc import ClientSpec
    >>> c = compare(ClientSpec("ftfa", gamma=2.0, r=1.0, sigma=0.5), Setting(d=200), reps=4)
    >>> bool(c.summary["risk"]["inside"])
    True
    """
    kind = measure_keyword(measure, kind)
    spec, setting = as_spec(spec, "compare"), as_setting(setting, "compare")
    federation_unused(setting, spec.method)
    reps, steps, step_size = check_run(reps, kind, steps, step_size, spec.method)
    conditional_signal(kind, spec.spectrum, setting, "compare")
    seed = check_seed(seed)
    scalar_spec(spec)
    check_memory(setting, spec.gamma)
    check_tasks(reps, f"{reps} replicates", "lower reps")
    base = {"spec": spec_to_dict(spec), "setting": setting.as_dict(), "seed": seed,
            "kind": kind, "tunings": [tuning_value(spec)], "steps": steps,
            "step_size": step_size, **task_inputs(spec.method, setting)}
    tasks = [{**base, "rep": rep} for rep in range(reps)]
    # A resumed run is bounded by the replicates ``cache`` lacks.
    cached = 0 if max_minutes is None else cached_count(cache, "compare", tasks,
                                                        valid_replicate)
    check_minutes(max_minutes, reps - cached, setting, spec.gamma, spec.method, n_jobs,
                  scheduler, f"{reps} replicates" + (f" ({cached} of them in cache)"
                                                     if cached else ""))
    limit = predicted(spec, route, steps, step_size, setting)
    results = run_tasks(replicate_task, tasks, cache=cache, n_jobs=n_jobs,
                        scheduler=scheduler, progress=progress, desc=f"compare {spec.method}",
                        command="compare", valid=valid_replicate)
    summary = {q: {k: v[0] for k, v in summarize([res[q] for res in results],
                                                  [getattr(limit, q)],
                                                  scale=[limit.risk]).items()}
               for q in QUANTITIES}
    return Comparison(limit, summary, setting, reps, seed, results[0]["n"], kind, steps,
                      step_size)


def compare_method(method: str, *, gamma, sigma, d: int, r=None, rho=None, lam=None,
                   alpha=None, spectrum=None, reps: int = 20, seed: int = 0,
                   clients: int | None = None, global_model: str | None = None,
                   weights: str = "samples", measure: str = "conditional",
                   steps: int | None = None, step_size: float | None = None,
                   route: str = "auto", n_jobs: int = 1, scheduler: str | None = None,
                   progress: bool = False, cache=None,
                   max_minutes: float | None = MAX_MINUTES, **setting_options) -> Comparison:
    """Predicted vs simulated bias, variance and risk of one client, from plain keywords.

    ``montecarlo.compare(method, ...)`` calls this function: the module is callable. It
    builds the ``ClientSpec`` and ``Setting`` that ``compare`` takes (what ``riskcalc
    compare`` does from its options). Paper 003 (Cheng, Chadha & Duchi 2023), Thms 1-4 and
    Cor. 3.1 against simulated instances of its Sec. 2 model.

    Parameters
    ----------
    method : str
        A ``riskcalc.METHODS`` name (``"ftfa"``, ``"rtfa"``, ...).
    gamma, sigma, r, rho, lam, alpha, spectrum
        The client's model and the method's tuning, as in ``riskcalc.limit`` (scalars).
    d : int
        Dimension of the simulated instances (the target has n = round(d / gamma) samples).
    reps : int
        Independent replicates, >= 2.
    seed : int
        Seed of the experiment: the same seed gives the same numbers for any ``n_jobs``.
    clients : int, optional
        Number of clients M of a federated global model (implies ``global_model =
        "federated"``); the prediction is then the exact finite-M limit where implemented.
    global_model : {"oracle", "federated"}, optional
        Default: ``"federated"`` when ``clients`` is given, else ``"oracle"`` (the centre
        theta_0, the M -> infinity limit). As on the command line, options without effect
        are errors: ``clients``, ``weights``, ``gammas``, ``rs``, ``sigmas`` under the oracle,
        ``"federated"`` for the local baselines, ``df`` without Student-t draws.
    weights : {"samples", "uniform"}
        Client weights of the federated global objective (default n_j / N, as everywhere).
    measure : {"conditional", "empirical"}
        Exact expectation given the designs, or the test risk of sampled parameters and noise.
    steps, step_size : optional
        Personalize by this many full-batch gradient steps of this size.
    route : str
        The riskcalc route of the prediction.
    n_jobs, scheduler, progress, cache
        As in ``compare`` (worker processes, a dask scheduler, a progress bar on stderr, a
        resumable JSON-lines cache; ``cache=`` was a TypeError naming ``Setting``: fuzz39
        fuzz2 F5).
    max_minutes : float or None
        Refuse a run estimated to take longer (``check_minutes``; None: no limit).
    **setting_options
        Further fields of ``Setting`` (``eigvecs``, ``features``, ``noise``, ``df``,
        ``gammas``, ``rs``, ``sigmas``).

    Returns
    -------
    Comparison
        ``limit`` (the prediction), ``summary`` (per quantity: simulated mean, standard error,
        95% interval, relative difference, whether the prediction lies inside), ``as_dict()``
        and ``to_frame()``.

    Examples
    --------
    >>> import montecarlo
    >>> c = montecarlo.compare("ftfa", gamma=2.0, r=1.0, sigma=0.5, d=200, reps=4)
    >>> bool(c.summary["risk"]["inside"])
    True
    """
    # A keyword of neither compare nor Setting was a TypeError naming Setting (kind=, the
    # measure's name in compare(spec, setting), included; fuzz40 fuzz F5).
    unknown = sorted(set(setting_options) - SETTING_OPTIONS)
    if unknown:
        raise ValueError(f"unknown keyword(s) {', '.join(unknown)}: besides the model, tuning "
                         "and run keywords, compare takes the Setting fields "
                         f"{', '.join(sorted(SETTING_OPTIONS))}"
                         + ("; the measure is measure= here" if "kind" in unknown else ""))
    if isinstance(spectrum, str):   # powerlaw:P sized by d, as --spectrum is by --d (F16)
        spectrum = Spectrum.parse(spectrum, d=positive_int("d", d, minimum=2))
    spec = ClientSpec(method, gamma=gamma, sigma=sigma, r=r, rho=rho, lam=lam, alpha=alpha,
                      spectrum=spectrum)
    if global_model is None:
        global_model = "oracle" if clients is None else "federated"
    unused_options(spec.method, global_model, (["clients"] if clients is not None else []) + (
        [] if isinstance(weights, str) and weights == "samples" else ["weights"]) + [
        k for k in ("gammas", "rs", "sigmas", "df") if k in setting_options],
        "student-t" in (setting_options.get("features"), setting_options.get("noise")),
        noise=setting_options.get("noise", "gaussian"), measure=measure,
        eigvecs=setting_options.get("eigvecs", "aligned"),
        features=setting_options.get("features", "gaussian"))
    if clients is not None:
        setting_options["clients"] = clients
    setting = Setting(d=d, global_model=global_model, weights=weights, **setting_options)
    return compare(spec, setting, reps=reps, seed=seed, measure=measure, steps=steps,
                   step_size=step_size, route=route, n_jobs=n_jobs, scheduler=scheduler,
                   progress=progress, cache=cache, max_minutes=max_minutes)


#: The ``Setting`` fields ``compare_method`` passes on from its ``**setting_options`` (the
#: others are its own keywords).
SETTING_OPTIONS = frozenset(f.name for f in fields(Setting)) - {"d", "clients", "global_model",
                                                                 "weights"}


class _CallableModule(types.ModuleType):
    """This module, callable: ``montecarlo.compare(method, ...)`` is ``compare_method``, while
    ``montecarlo.compare.compare``, ``Comparison`` and the rest stay reachable as before."""

    def __call__(self, *args, **kwargs) -> Comparison:
        return compare_method(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
