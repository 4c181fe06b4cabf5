"""Named simulation presets: the papers' logistic and quadratic experiments, every constant
overridable.

A preset is an instance builder with default parameters, a grid (over an instance parameter,
simulated as one batched instance, or over an algorithm hyperparameter, looped), and a set of
labelled methods (algorithm + hyperparameters). ``resolve`` turns a preset and its overrides
into the JSON task template of a replicate, checked before any work; running the replicates:
``montecarlo.experiments.presets_run``.

Overrides (``riskcalc simulate --set KEY=VALUE``):

* ``R=0:20:21`` (``start:stop:num``, evenly spaced), ``R=0,5,10`` or ``R=3``: any instance
  parameter or the grid;
* ``fedavg.rounds=10``: a hyperparameter of one method (by label; labels may hold dots, as in
  ``fedprox_0.44.lam=0.5``); ``*.rounds=10``: of every method that takes it;
* ``methods=fedavg,local``: keep some methods;
* ``exact=true``: also compute each objective's exact minimizer (optimization error, and the
  statistical error of the minimizer itself); needs strong convexity (``l2 > 0``);
* ``target=1e4``: also report the rounds needed to get ``target`` times closer to the exact
  minimizer (paper 001 Fig. 2).
"""

from __future__ import annotations

import inspect
import json
from dataclasses import dataclass, field

import numpy as np

from montecarlo.experiments.algorithms import ALGORITHMS
from montecarlo.runner.budget import require_memory
from montecarlo.experiments.problems import paper000_instance, paper004_instance, quadratic_instance
from riskcalc._validate import as_array, positive_int, real
from riskcalc._text import decimal, distinct
from riskcalc.papers import cite

BUILDERS = {"paper000": paper000_instance, "paper004": paper004_instance,
            "quadratic": quadratic_instance}


@dataclass(frozen=True)
class Preset:
    """A named experiment.

    Attributes
    ----------
    name, description, source : str
    builder : str
        Key of ``BUILDERS`` (the instance constructor).
    params : dict
        Instance parameters (the grid parameter included when it is an instance parameter).
    grid : str
        Name of the swept parameter.
    grid_values : list of float
        Its default values (used when ``grid`` is a method hyperparameter).
    methods : dict
        ``label -> (algorithm name, hyperparameters)``.
    exact : bool
        Compute exact minimizers by default.
    target : float or None
        Default reduction factor for ``rounds_to_target``.
    summary : str
        The column ``riskcalc simulate`` prints a table of.
    """

    name: str
    description: str
    source: str
    builder: str
    params: dict
    grid: str
    methods: dict
    grid_values: list = field(default_factory=list)
    exact: bool = False
    target: float | None = None
    summary: str = "accuracy"


PRESETS = {p.name: p for p in [
    Preset(
        "paper000-fig1",
        "Chen et al. Fig. 1: FedAvg, PureLocalTraining, fine-tuning and FedProx(lam = 0, 0.44, 4)"
        " on federated logistic regression, R = 0..20",
        cite("000", "Sec. 3.3 and Appendix D"),
        "paper000", dict(R=[float(r) for r in range(21)], m=5, n=100, d=100, n_test=5000,
                         labels="bernoulli", l2=0.0),
        "R",
        {"fedavg": ("fedavg", {}), "local": ("local", {}), "finetune": ("finetune", {}),
         "fedprox_0": ("fedprox", {"lam": 0.0}), "fedprox_0.44": ("fedprox", {"lam": 0.44}),
         "fedprox_4": ("fedprox", {"lam": 4.0})}),
    Preset(
        "paper004-synthetic",
        "FedProx paper Fig. 1(a)/(d), this toolkit's earlier reconstruction (d = 60, shared "
        "centre, ridge): GlobalTrain, LocalTrain (gradient descent) and bilevel FedProx (lam = "
        "0.02, 0.1, 0.5; Cor. 1 steps), R in [0, 3]; the authors' own setup is run by the "
        "figures p004-fig1a, -fig1d, -fig2, -fig3 and -fig5 (riskcalc figures; settings "
        "montecarlo.experiments.paper004.AUTHORS_PRESETS, not presets of simulate)",
        cite("004", "Sec. 6.1, App. C"),
        "paper004", dict(R=[0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0], m=10, n=200, d=60,
                         n_test=5000, labels="argmax", l2=1e-2),
        "R",
        {"global": ("fedavg", {"rounds": 300, "local_epochs": 1, "batch_size": None,
                               "lr": 0.1, "global_lr": 1.0}),
         "local": ("local", {"epochs": 300, "batch_size": None, "lr": 0.1}),
         "fedprox_0.02": ("fedprox_bilevel", {"lam": 0.02, "rounds": 30, "inner_steps": 50}),
         "fedprox_0.1": ("fedprox_bilevel", {"lam": 0.1, "rounds": 30, "inner_steps": 50}),
         "fedprox_0.5": ("fedprox_bilevel", {"lam": 0.5, "rounds": 30, "inner_steps": 50})},
        exact=True, summary="local_stat_err"),
    Preset(
        "paper001-fig2",
        "Hanzely et al. Fig. 2: communication rounds of APGD1 and APGD2 to get 1e4 times closer "
        "to the optimum of the mixing objective, quadratic clients (m = 50, d = 50, L = 1), "
        "versus lam",
        cite("001", "Sec. 4.1 and Sec. 5 (Fig. 2)"),
        "quadratic", dict(m=50, d=50, L=1.0, mu=1e-2, R=1.0, noise=0.1),
        "lam",
        {"apgd1": ("apgd1", {"iterations": 2000}), "apgd2": ("apgd2", {"iterations": 2000})},
        grid_values=[float(v) for v in np.geomspace(1e-2, 1e2, 9)],
        exact=True, target=1e4, summary="rounds_to_target"),
]}


#: Points of a ``--set`` range: a grid of a simulation preset, each point a run of replicates.
MAX_RANGE_POINTS = 1000


def parse_value(text: str):
    """A ``--set`` value: JSON (number, true/false, null, list), ``start:stop:num`` (evenly
    spaced floats), a comma-separated list of numbers, or else the text itself."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    except ValueError:
        # An integer past Python's 4300 digits: its message advised sys.set_int_max_str_digits
        # (fuzz40 fuzz F10).
        raise ValueError("holds an integer of more than 4300 digits, beyond every number a "
                         "setting takes") from None
    if text.count(":") == 2:
        try:
            a, b, k = text.split(":")
            num, a, b = int(k), decimal(a), decimal(b)
            if not (1 <= num <= MAX_RANGE_POINTS and np.isfinite(a) and np.isfinite(b)):
                raise ValueError
        except ValueError:
            raise ValueError(f"a range must read start:stop:num with finite start and stop and "
                             f"num an integer in [1, {MAX_RANGE_POINTS}], got {text!r}"
                             ) from None
        if num == 1 and a != b:
            # One point is start: the stop was dropped silently (lam=1:2:1 ran lam = 1 alone;
            # fuzz39 fuzz2 F3).
            raise ValueError(f"the range {text!r} has 1 point, which cannot reach its stop "
                             f"{b:g} (start:stop:num spaces num points from start to stop, "
                             "both included): give num >= 2, or the one value")
        return [float(v) for v in np.linspace(a, b, num)]
    if "," in text:
        try:
            return [decimal(v) for v in text.split(",")]
        except ValueError:
            pass  # a list of names (``methods=a,b``), kept as text
    try:
        value = decimal(text)   # nan, inf: a number, refused as not finite where it is checked
    except ValueError:
        return text
    return value if not np.isfinite(value) else text


def resolve(name: str, overrides: dict | None = None) -> dict:
    """The JSON task template of a preset after applying overrides (validated).

    Parameters
    ----------
    name : str
        A key of ``PRESETS``.
    overrides : dict, optional
        ``KEY -> value`` as described in the module docstring.

    Returns
    -------
    dict
        ``{"preset", "builder", "params", "grid", "grid_values", "methods", "exact",
        "target"}``.
    """
    if not isinstance(name, str) or name not in PRESETS:     # a list was a TypeError
        raise ValueError(f"preset must be one of {sorted(PRESETS)}, got {name!r}")
    if overrides is not None and not isinstance(overrides, dict):
        # a list of pairs or "m=2" was an AttributeError ('list' object has no 'items')
        raise ValueError("overrides must be a dict of KEY -> value (the --set settings), got "
                         f"{type(overrides).__name__}")
    p = PRESETS[name]
    spec = {"preset": p.name, "builder": p.builder, "params": dict(p.params), "grid": p.grid,
            "grid_values": list(p.grid_values), "exact": p.exact, "target": p.target,
            "methods": {k: [a, dict(h)] for k, (a, h) in p.methods.items()}}
    builder_args = set(inspect.signature(BUILDERS[p.builder]).parameters) - {"seed", "rep"}
    # numpy scalars and arrays as Python numbers and lists: the task key is their JSON
    # (run_preset with {"m": numpy.int64(2)} was a TypeError, "not JSON serializable").
    overrides = {k: v.tolist() if isinstance(v, (np.generic, np.ndarray)) else v
                 for k, v in (overrides or {}).items()}
    keep = overrides.pop("methods", None)
    for key, value in overrides.items():
        if key == "exact":
            spec["exact"] = _boolean(key, value)
        elif key == "target":
            # ndim=0: target=[10] was float()'s TypeError traceback (fuzz41 sim F6).
            spec["target"] = None if value is None else float(as_array(
                "target (the reduction factor)", value, low=1.0, low_open=True, ndim=0))
        elif "." in key:
            _set_hyper(spec, key, value)
        elif key == spec["grid"] and key not in builder_args:
            # A grid of the methods' penalty (paper001-fig2's lam), checked here as the
            # algorithms do (lam > 0): lam=0 was refused in a worker, after the progress bar;
            # a nested list (lam=[[1,2]]) was a TypeError traceback (fuzz39 fuzz2 F7).
            spec["grid_values"] = [float(v) for v in np.atleast_1d(
                as_array(key, value, low=0.0, low_open=True, ndim=1))]
        elif key in builder_args:
            spec["params"][key] = value
        else:
            raise ValueError(f"unknown setting {key!r} for preset {name}: instance parameters "
                             f"are {sorted(builder_args)}; method settings are LABEL.PARAM "
                             f"with LABEL in {sorted(spec['methods'])} or '*'; also "
                             "'methods', 'exact', 'target'")
    if keep is not None:  # after the method settings, so that they may name any label
        keep = keep.split(",") if isinstance(keep, str) else [str(k) for k in np.atleast_1d(keep)]
        unknown = [k for k in keep if k not in spec["methods"]]
        if not keep:    # was: methods=[] ran and wrote a table without a method
            raise ValueError(f"methods must name at least one of {sorted(spec['methods'])}")
        if unknown:
            raise ValueError(f"methods must be among {sorted(spec['methods'])}, got {unknown}")
        twice = [k for k in keep if keep.count(k) > 1]      # was: run once, silently
        if twice:
            raise ValueError(f"methods lists {twice[0]} twice: give each method once")
        spec["methods"] = {k: spec["methods"][k] for k in keep}
    if overrides.get("target") is not None and not spec["exact"]:
        # Counted to the exact minimizer: without it a target given had no effect (NaN
        # rounds_to_target in paper000-fig1's CSV, no note; fuzz39 fuzz2 F8).
        raise ValueError("target counts the rounds to get target times closer to the exact "
                         f"minimizer, which preset {spec['preset']} does not compute here: add "
                         "--set exact=true, or leave out target")
    if spec["target"] is not None and spec["exact"]:
        for label, (_, hyper) in spec["methods"].items():
            every = hyper.get("record_every", 1)
            if isinstance(every, (int, float)) and not isinstance(every, bool) and every > 1:
                # The count is the first recorded iterate on target: apgd1.record_every=1e9
                # reported 200 rounds (the last iterate) for APGD1's 19 (fuzz42 sim F6).
                raise ValueError(f"{label}.record_every = {every:g} keeps every {every:g}-th "
                                 "iterate, and rounds_to_target counts only those: its count "
                                 "would be rounded up to that grid; leave record_every at 1, "
                                 "or leave out target (--set target=null)")
    grid = spec["params"].get(spec["grid"], spec["grid_values"])
    if np.size(grid) == 0:
        raise ValueError(f"the grid of {spec['grid']} is empty; give at least one value")
    # A grid value given twice was one row of the table (R=0.5,0.5), silently.
    # A 1-d list of numbers (R=[[1,2]] was a TypeError traceback; fuzz39 fuzz2 F7).
    distinct(spec["grid"], [float(v) for v in np.atleast_1d(real(spec["grid"], grid, ndim=1))])
    _check_memory(p.builder, spec["params"], len(spec["grid_values"]), spec["exact"])
    # Fail now, not in a worker, on a bad parameter: on an instance of at most 2 clients,
    # samples and dimensions (the sizes are checked above); the full one took minutes at
    # m = 2, d = 6000 (two d x d QR factors per client) before the time estimate was made.
    sizes = {k: v.default for k, v in inspect.signature(BUILDERS[p.builder]).parameters.items()
             if k in ("m", "d", "n", "n_test")}
    sizes = {k: min(int(spec["params"].get(k, v)), 2) for k, v in sizes.items()}
    BUILDERS[p.builder](**{**spec["params"], **sizes})
    return spec


def _check_memory(builder: str, params: dict, grid: int, exact: bool) -> None:
    """Refuse, before allocating, an instance that cannot fit in memory: the logistic builders
    hold m (n + n_test) x d features and, per grid value, labels and models; the exact solvers
    (``exact``, ``montecarlo.experiments.objectives``) m d x d Hessians per grid value; the quadratic builder
    three m x d x d arrays (``montecarlo.experiments.problems``). Three float64 copies of each count."""
    full = {k: v.default for k, v in inspect.signature(BUILDERS[builder]).parameters.items()}
    full.update(params)
    m, d = (positive_int(k, full[k]) for k in ("m", "d"))
    if builder == "quadratic":
        floats, what = 3 * m * d * d, f"d = {d} (m = {m})"
    else:
        n, n_test = positive_int("n", full["n"]), positive_int("n_test", full["n_test"])
        floats = m * (n + n_test) * d + max(grid, 1) * m * (n + d + (d * d if exact else 0))
        what = f"d = {d} (m = {m}, n = {n}, n_test = {n_test})"
    require_memory(8 * 3 * floats, what, "lower d, m or n_test with --set")


def _boolean(key, value):
    if isinstance(value, bool):
        return value
    if str(value).lower() in ("1", "true", "yes"):
        return True
    if str(value).lower() in ("0", "false", "no"):
        return False
    raise ValueError(f"{key} must be true or false, got {value!r}")


def _split_key(spec, key):
    """``LABEL.PARAM`` -> (LABEL, PARAM), matching the longest label, since labels such as
    ``fedprox_0.5`` hold dots themselves."""
    for label in sorted(spec["methods"], key=len, reverse=True) + ["*"]:
        if key.startswith(label + ".") and len(key) > len(label) + 1:
            return label, key[len(label) + 1:]
    raise ValueError(f"method label must be one of {sorted(spec['methods'])} or '*', "
                     f"got {key.rsplit('.', 1)[0]!r} (in {key!r})")


def _set_hyper(spec, key, value):
    label, hp = _split_key(spec, key)
    if hp == spec["grid"]:
        # Each grid value is passed to every method in place of its own (presets_run): an
        # apgd1.lam=2 under paper001-fig2's lam grid ran at the grid's lam, silently.
        raise ValueError(f"{key}: {hp} is the grid of preset {spec['preset']}, given to every "
                         f"method at each grid value; set it with --set {hp}=VALUE[,VALUE...]")
    if isinstance(value, (list, tuple, dict)) or getattr(value, "ndim", 0) > 0:
        # One value per method setting (fedavg.lr=[1] was a TypeError traceback in a worker,
        # after the progress bar; fuzz39 fuzz2 F7).
        raise ValueError(f"{key}: a method setting takes one value (a number, true/false, "
                         f"null or a name), got {value!r}; the grid of preset "
                         f"{spec['preset']} is {spec['grid']} (--set {spec['grid']}=V1,V2,...)")
    labels = list(spec["methods"]) if label == "*" else [label]
    hit = False
    for lab in labels:
        algo, hyper = spec["methods"][lab]
        accepted = set(inspect.signature(ALGORITHMS[algo]).parameters) - {"data", "seed", "rep"}
        if hp in accepted:
            hyper[hp] = value
            hit = True
        elif label != "*":
            raise ValueError(f"{lab}.{hp}: algorithm {algo} takes {sorted(accepted)}")
    if not hit:
        raise ValueError(f"no method of this preset takes {hp!r}")
