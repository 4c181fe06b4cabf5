"""One finite-M limit at advise's scale: CPU of ``riskcalc.clients_limit`` per method and route.

Issue 30, item 1 (covariate shift with 1000 distinct clients): ``advise`` evaluates each
method's finite-M limit many times (tuning grids, optimal weights), so the seconds of ONE
evaluation bound what it can do. Each case runs one evaluation in a fresh subprocess (one BLAS
thread) on the clients of ``bench_advise.federation`` (the pinned shift1000 federation's law:
gamma_j log-uniform on [0.3, 4], r_j on [0.2, 2], sigma_j on [0.1, 1.5], every client distinct)
with M clients:

* ``shift``: covariate shift, the three covariance types of ``bench_advise.SHIFT_TYPES``;
* ``two-point``, ``powerlaw50``: one shared spectrum (two-point:1,4,0.5; powerlaw:1,50).

It reports the evaluation's CPU seconds (``time.process_time`` around the call, imports
excluded) and, with ``--baseline DIR`` (a source tree, e.g. ``git archive <commit> | tar -x -C
DIR``), the same from DIR in the same run, the ratio, and the largest relative difference of
the clients' risks.

Measured 2026-11-26 by this script (shared 2-core machine, load average 4-8), pFedMe at
lam = 1 and MAML-FL at alpha = 0.05, sample weights, against 5c8e073 (before pFedMe's client
groups were batched)::

    case                      new       5c8e073    ratio   clients' risks
    pfedme:shift:100          0.061 s    1.01 s     17x    max rel diff 3.9e-13
    pfedme:shift:1000         0.081 s    13.1 s    161x    2.0e-12
    pfedme:two-point:1000     0.077 s    13.8 s    179x    1.7e-12
    pfedme:powerlaw50:300     0.183 s    3.82 s     21x    1.4e-13
    maml_fl:shift:100         0.75 s     0.82 s    1.1x    1.6e-13 (unchanged route)

Many atoms cost the atoms x atoms algebra per group: powerlaw:1,200 at 1000 clients 8.8 s
against 19 s, peak memory 1.0 GB for both (``/usr/bin/time -v``).

Run: ``OMP_NUM_THREADS=1 python benchmarks/bench_advise_limits.py [--cases pfedme:shift:1000,...]
[--baseline DIR]``.
"""

import argparse
import json
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROUTES = {"shift": None, "two-point": "two-point:1,4,0.5", "powerlaw50": "powerlaw:1,50"}
TUNING = {"pfedme": {"lam": 1.0}, "maml_fl": {"alpha": 0.05}, "rtfa": {"lam": 1.0}}
DEFAULT = ("pfedme:shift:100,pfedme:shift:1000,pfedme:two-point:1000,pfedme:powerlaw50:300,"
           "maml_fl:shift:100")

CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[2])
from bench_advise import CASES, SHIFT_TYPES, federation
from riskcalc.linear.finite_clients import clients_limit
method, route, m, spec, tuning = json.loads(sys.argv[3])
CASES["limit"] = (m, SHIFT_TYPES if route == "shift" else None, None)
fed = federation("limit")
kw = {k: [c[k] for c in fed] for k in ("gamma", "r", "sigma")}
if route == "shift":
    kw["spectra"] = [c["spectrum"] for c in fed]
else:
    from riskcalc.spectrum import Spectrum
    kw["spectrum"] = Spectrum.parse(spec)
start = time.process_time()
res = clients_limit(method, weights="samples", **tuning, **kw)
print(json.dumps({"cpu": time.process_time() - start, "risk": res.risk.tolist()}))
"""


def run(tree: str, case: str, timeout: float):
    """(evaluation CPU seconds, risks) of one case from source tree ``tree``, or None past
    ``timeout`` seconds."""
    method, route, m = case.split(":")
    arg = json.dumps([method, route, int(m), ROUTES[route], TUNING.get(method, {})])
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
               PYTHONPATH=tree)
    try:
        proc = subprocess.run([sys.executable, "-c", CHILD, tree,
                               os.path.join(ROOT, "benchmarks"), arg], env=env, cwd=tree,
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    if proc.returncode != 0:
        raise RuntimeError(f"{case} from {tree}: {proc.stderr.strip()[-400:]}")
    out = json.loads(proc.stdout)
    return out["cpu"], np.array(out["risk"])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default=DEFAULT, help="METHOD:ROUTE:M, comma-separated")
    ap.add_argument("--baseline", metavar="DIR")
    ap.add_argument("--timeout", type=float, default=900.0)
    args = ap.parse_args(argv)
    for case in args.cases.split(","):
        new = run(ROOT, case, args.timeout)
        line = f"{case:<24} new {'> timeout' if new is None else f'{new[0]:8.3f} s'}"
        if args.baseline:
            old = run(args.baseline, case, args.timeout)
            if old is None:
                line += f" | baseline: past {args.timeout:g} s"
            else:
                line += f" | baseline {old[0]:8.3f} s"
                if new is not None:
                    rel = np.max(np.abs(new[1] - old[1]) / np.abs(old[1]))
                    line += f", ratio {old[0] / new[0]:7.1f}x, risks max rel diff {rel:.2g}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
