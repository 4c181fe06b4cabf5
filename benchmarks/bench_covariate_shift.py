"""Covariate shift at finite M: predicted (riskcalc) vs simulated (montecarlo), and speed.

1. Agreement grid: three federations with per-client covariances diagonal in one shared basis
   (``riskcalc.linear.finite_clients.shift``, ``finite_clients.maml_sigma``,
   ``finite_clients.pfedme_sigma``), by default FedAvg, FTFA and RTFA (lam = 0.5) with the
   FedAvg global model (``--methods`` adds MAML-FL, alpha = 0.05, and pFedMe, lam = 0.5, each
   with its own global model) over M in {2, 5, 20} simulated clients, gamma in {0.5, 1.5} for
   the target (the others cycle through gamma 1 and 3), weights n_j / N:
   ``anti``: target two-point:1,4,0.5, others the anti-aligned two-point:4,1,0.5;
   ``scaled``: target scaled:2, others identity, scaled:0.5 and two-point:1,4,0.5;
   ``powerlaw``: target powerlaw:1 (d eigenvalues), others scaled:0.5 and two-point:4,1,0.5.
   Each row: the prediction at the simulated d (``montecarlo.compare.federated_limit``: the
   joint measure of the simulated coordinates), the replicate mean (exact conditional
   expectation given X), its standard error, and whether |difference| <= 3 s.e. + 0.5%.
   Every replicate's federation is sampled once and measured for every method.
2. Finite-d error: the ``--fd-federations`` (default ``anti`` and ``powerlaw``) at M = 5,
   gamma = 1.5, the methods, at d = 100, 200, 400, 800 (``--fd-dims``, ``--fd-reps``
   replicates).
3. Speed: every client's limit in a federation of 1000 distinct clients of three covariance
   types (two-point, anti-aligned two-point and scaled:2; then with powerlaw:1 at d = 200 in
   place of scaled:2), goal < 2 s, for the methods (pFedMe with the power law is slow: minutes).

With ``--cache FILE`` every replicate and prediction is appended to FILE as it finishes
(``montecarlo.runner.tasks.run_tasks``), so an interrupted run resumes; ``--jobs`` runs the
replicates in parallel (results do not depend on it).

Run: ``python benchmarks/bench_covariate_shift.py [--methods fedavg,ftfa,rtfa] [--d 400]
[--reps 6] [--federations anti,scaled,powerlaw] [--fd-reps 16] [--fd-federations
anti,powerlaw] [--fd-dims 100,200,400,800] [--skip-grid (1 and 2)] [--skip-agreement] [--skip-fd]
[--skip-speed]
[--cache FILE] [--jobs 1]``.
"""

import argparse
import time

import numpy as np

import riskcalc
from montecarlo.compare import federated_limit
from montecarlo.linear.instances import Setting, sample_instance
from montecarlo.linear.measure import measure
from montecarlo.runner.stats import mean_se
from montecarlo.runner.tasks import run_tasks

#: method -> (tuning name, value) or None (untuned)
TUNINGS = {"fedavg": None, "ftfa": None, "rtfa": ("lam", 0.5), "maml_fl": ("alpha", 0.05),
           "pfedme": ("lam", 0.5)}
DEFAULT_METHODS = ("fedavg", "ftfa", "rtfa")
FEDERATIONS = {
    "anti": ("two-point:1,4,0.5", ("two-point:4,1,0.5",)),
    "scaled": ("scaled:2", ("identity", "scaled:0.5", "two-point:1,4,0.5")),
    "powerlaw": ("powerlaw:1", ("scaled:0.5", "two-point:4,1,0.5")),
}


def _spec(method, target, gamma, d):
    sp = riskcalc.Spectrum.parse(target, d=d)
    tune = TUNINGS[method]
    return riskcalc.ClientSpec(method, gamma=gamma, r=1.0, sigma=0.5,
                               spectrum=None if sp.is_identity else sp,
                               **({tune[0]: tune[1]} if tune else {}))


def _setting(spectra, m, d):
    return Setting(d=d, clients=m, global_model="federated", weights="samples",
                   spectra=tuple(spectra), gammas=(1.0, 3.0))


def run(task: dict) -> dict:
    """One task: the prediction of one method (``kind`` "predict") or one replicate's
    federation, sampled once and measured for every method (``kind`` "simulate")."""
    spectra, gamma, m, d = task["spectra"], task["gamma"], task["clients"], task["d"]
    setting = _setting(spectra, m, d)
    if task["kind"] == "predict":
        meth = task["method"]
        return {meth: federated_limit(_spec(meth, spectra[0], gamma, d), setting, "auto").risk}
    # The sampled federation does not depend on the method (``sample_instance``): one serves
    # them all; an untuned method ignores its tuning value.
    inst = sample_instance(_spec("ftfa", spectra[0], gamma, d), setting, task["seed"],
                           task["rep"])
    return {meth: float(measure(inst, meth, [(TUNINGS[meth] or (None, 0.0))[1]])["risk"][0])
            for meth in task["methods"]}


def points(rows, methods, reps, args, desc):
    """Per row (federation, gamma, M, d, seed) and method: (prediction, mean, se) of the
    target's risk on ``reps`` federations."""
    tasks = []
    for name, gamma, m, d, seed in rows:
        base = {"spectra": (FEDERATIONS[name][0],) + FEDERATIONS[name][1], "gamma": gamma,
                "clients": m, "d": d}
        tasks += [{**base, "kind": "predict", "method": meth} for meth in methods]
        tasks += [{**base, "kind": "simulate", "methods": list(methods), "seed": seed,
                   "rep": k} for k in range(reps)]
    res = run_tasks(run, tasks, cache=args.cache, n_jobs=args.jobs, progress=True, desc=desc,
                    command="bench_covariate_shift")
    out, per = [], len(methods) + reps
    for j in range(len(rows)):
        block = res[j * per:(j + 1) * per]
        preds, sims = block[:len(methods)], block[len(methods):]
        out.append({meth: (preds[i][meth], *mean_se([s[meth] for s in sims]))
                    for i, meth in enumerate(methods)})
    return out


def grid(methods, args):
    d, reps = args.d, args.reps
    print(f"1. agreement grid, d = {d}, {reps} replicates (risk; ok: |diff| <= 3 se + 0.5%)")
    print(f"{'federation':<10} {'M':>3} {'gamma':>5} {'method':<7} {'predicted':>10} "
          f"{'simulated':>10} {'se':>8} {'rel.diff':>9} ok")
    rows = [(name, gamma, m, d, 5) for name in args.federations for m in (2, 5, 20)
            for gamma in (0.5, 1.5)]
    bad = 0
    for (name, gamma, m, _, _), res in zip(rows, points(rows, methods, reps, args, "grid")):
        for meth, (pred, mean, se) in res.items():
            ok = abs(mean - pred) <= 3 * se + 0.005 * pred
            bad += not ok
            print(f"{name:<10} {m:>3} {gamma:>5} {meth:<7} {pred:>10.5f} {mean:>10.5f} "
                  f"{se:>8.5f} {(mean - pred) / pred:>+9.4f} {'yes' if ok else 'NO'}",
                  flush=True)
    print(f"   rows outside the allowance: {bad}")


def finite_d(methods, args):
    print(f"2. finite-d error, M = 5, gamma = 1.5, {args.fd_reps} replicates (rel. diff of the "
          "risk +- its s.e.)")
    rows = [(name, 1.5, 5, d, 11) for name in args.fd_federations for d in args.fd_dims]
    for (name, _, _, d, _), res in zip(rows, points(rows, methods, args.fd_reps, args,
                                                     "finite-d")):
        print(f"   {name:<9} d = {d:>4}: " + "  ".join(
            f"{meth} {(mean - pred) / pred:+.4f} +- {se / pred:.4f}"
            for meth, (pred, mean, se) in res.items()), flush=True)


def speed(methods):
    print("3. speed: every client's limit, 1000 distinct clients, three covariance types")
    rng = np.random.default_rng(0)
    m = 1000
    gam, r, sig = rng.uniform(0.5, 4.0, m), rng.uniform(0.5, 2.0, m), rng.uniform(0.2, 1.0, m)
    for third, d in (("scaled:2", None), ("powerlaw:1", 200)):
        types = ("two-point:1,4,0.5", "two-point:4,1,0.5", third)
        spectra = [types[j % 3] for j in range(m)]
        for meth in methods:
            tune = TUNINGS[meth]
            best = np.inf
            for _ in range(3):
                t0 = time.perf_counter()
                riskcalc.clients_limit(meth, gamma=gam, r=r, sigma=sig, spectra=spectra, d=d,
                                       **({tune[0]: tune[1]} if tune else {}))
                best = min(best, time.perf_counter() - t0)
            print(f"   {', '.join(types)}{'' if d is None else f' (d = {d})'}: {meth:<6} "
                  f"{best:.3f} s", flush=True)


def _names(choices):
    def parse(text):
        names = tuple(s for s in text.split(",") if s)
        bad = [s for s in names if s not in choices]
        if bad or not names:
            raise argparse.ArgumentTypeError(f"expected a comma-separated list of "
                                             f"{', '.join(choices)}; got {text!r}")
        return names
    return parse


def _dims(text):
    try:
        dims = tuple(int(s) for s in text.split(","))
    except ValueError:
        dims = ()
    if not dims or min(dims) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers like 100,200; got {text!r}")
    return dims


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--methods", type=_names(tuple(TUNINGS)), default=DEFAULT_METHODS)
    ap.add_argument("--d", type=int, default=400)
    ap.add_argument("--reps", type=int, default=6)
    ap.add_argument("--federations", type=_names(tuple(FEDERATIONS)),
                    default=tuple(FEDERATIONS))
    ap.add_argument("--fd-reps", type=int, default=16)
    ap.add_argument("--fd-federations", type=_names(tuple(FEDERATIONS)),
                    default=("anti", "powerlaw"))
    ap.add_argument("--fd-dims", type=_dims, default=(100, 200, 400, 800))
    ap.add_argument("--skip-grid", action="store_true", help="skip sections 1 and 2")
    ap.add_argument("--skip-agreement", action="store_true", help="skip section 1")
    ap.add_argument("--skip-fd", action="store_true", help="skip section 2")
    ap.add_argument("--skip-speed", action="store_true")
    ap.add_argument("--cache", help="JSON-lines file of finished tasks (resumes a run)")
    ap.add_argument("--jobs", type=int, default=1)
    args = ap.parse_args()
    if not args.skip_speed:
        speed(args.methods)
    if not (args.skip_grid or args.skip_agreement):
        grid(args.methods, args)
    if not (args.skip_grid or args.skip_fd):
        finite_d(args.methods, args)


if __name__ == "__main__":
    main()
