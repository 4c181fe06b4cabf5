"""The replicate tasks of ``compare`` and ``sweep``: JSON-serializable descriptions of one
replicate (``spec_to_dict``, ``spec_from_dict``, ``task_inputs`` for the cache key), the unit of
work that measures it (``replicate_task``: paper 003, eq. 3, ``montecarlo.linear.measure``) and
the check of a cached result's layout (``valid_replicate``), for ``montecarlo.runner.tasks``.
"""

from __future__ import annotations

import hashlib
import math
import inspect
from pathlib import Path

import numpy as np

from montecarlo.linear.estimators import BUILTIN, get_estimator
from montecarlo.linear.instances import Setting, sample_instance
from montecarlo.linear.measure import measure
from riskcalc.linear.model import ClientSpec
from riskcalc.spectrum import spec_kind
from riskcalc.spectrum import Spectrum
from riskcalc.spectrum.ordered import ordered_eigenvalues

QUANTITIES = ("bias", "variance", "risk")


def spec_to_dict(spec: ClientSpec) -> dict:
    """A JSON-serializable form of ``spec`` (``spec_from_dict`` inverts it exactly)."""
    out = {"method": spec.method}
    for name in ("gamma", "sigma", "r", "rho", "lam", "alpha"):
        v = getattr(spec, name)
        out[name] = None if v is None else float(v)
    sp = spec.spectrum
    out["spectrum"] = None if sp is None else {
        "atoms": sp.atoms.tolist(), "weights": sp.weights.tolist(),
        "signal_weights": None if sp.signal_is_uniform else sp.signal_weights.tolist()}
    return out


def spec_from_dict(data: dict) -> ClientSpec:
    """The ``ClientSpec`` serialized by ``spec_to_dict``."""
    data = dict(data)
    sp = data.pop("spectrum")
    return ClientSpec(spectrum=None if sp is None else Spectrum(**sp), **data)


def task_inputs(method: str, setting) -> dict:
    """What a replicate task reads beyond its own numbers, as digests for its cache key
    (``run_tasks``): ``spectra_files``, the SHA-1 of each ``file:PATH`` SPEC's eigenvalues in
    ``setting.spectra`` (covariate shift), and ``estimator``, the SHA-1 of the source files of
    a registered (plugin) method's estimator functions; ``{}`` when there is neither. Was: a
    task named the file or the method, and a sweep (or ``compare``) rerun with its cache after
    the file or the plugin changed took the former simulations beside the new predictions."""
    out = {}
    files = sorted({s for s in setting.spectra or () if spec_kind(s)[0] == "file"})
    if files:
        out["spectra_files"] = {s: hashlib.sha1(ordered_eigenvalues(s, setting.d).tobytes())
                                .hexdigest() for s in files}
    est = get_estimator(method)
    if est.name not in BUILTIN:
        digest = hashlib.sha1(repr((est.global_tuned, est.personalized, est.ridge,
                                    est.centered)).encode())
        for fn in (est.global_weight, est.personal_filter):
            try:      # the whole module: a helper the function calls counts too
                digest.update(Path(inspect.getsourcefile(inspect.unwrap(fn))).read_bytes())
            except (TypeError, OSError):   # None, or no source file (a function of a REPL)
                digest.update(repr(fn).encode())    # its address: a key of this run only
        out["estimator"] = digest.hexdigest()
    return out


def replicate_task(task: dict) -> dict:
    """Measure one replicate described by a task dict (the unit of work of ``run_tasks``).

    Keys: ``spec`` (``spec_to_dict``), ``setting`` (``Setting.as_dict``), ``seed``, ``rep``,
    ``kind``, ``tunings`` (list of lam/alpha values sharing one decomposition), ``steps``,
    ``step_size``. Returns lists ``bias``, ``variance``, ``risk`` (one entry per tuning value)
    and the target's sample size ``n``. Paper 003, eq. (3) (see ``montecarlo.linear.measure``).
    """
    spec = spec_from_dict(task["spec"])
    setting = Setting(**task["setting"])
    est = get_estimator(spec.method)
    inst = sample_instance(spec, setting, task["seed"], task["rep"],
                           federated=setting.global_model == "federated" and est.centered)
    out = measure(inst, spec.method, task["tunings"], kind=task["kind"],
                  steps=task["steps"], step_size=task["step_size"])
    return {**{k: np.asarray(v, dtype=float).tolist() for k, v in out.items()},
            "n": int(inst.n[0])}


def valid_replicate(task: dict, result) -> bool:
    """Whether a cached ``result`` has the layout ``replicate_task`` returns for ``task``:
    lists ``bias``, ``variance``, ``risk`` of one number per tuning value and the integer
    ``n`` (``run_tasks(valid=)``: another layout reruns; it was a traceback, or NaN rows).
    A NaN, which no replicate returns (diverging steps are inf), is no number either: JSON's
    ``NaN`` in an edited record was taken, an empty simulated mean in the rows (fuzz39 fuzz
    F8). Each quantity is a quadratic form, >= 0, and the ``conditional`` measure's risk is
    bias + variance (``measure``): an edited record with bias 5.0 beside a risk of 0.69 was
    taken, in the rows' means (fuzz39 fuzz2 F4)."""
    def numbers(v):
        return isinstance(v, list) and len(v) == len(task["tunings"]) and all(
            isinstance(x, (int, float)) and not isinstance(x, bool) and x >= 0 for x in v)

    if not (isinstance(result, dict) and all(numbers(result.get(q)) for q in QUANTITIES)
            and isinstance(result.get("n"), int) and not isinstance(result["n"], bool)):
        return False
    return task.get("kind") != "conditional" or all(
        math.isclose(r, b + v, rel_tol=1e-12)
        for b, v, r in zip(*(result[q] for q in QUANTITIES)))
