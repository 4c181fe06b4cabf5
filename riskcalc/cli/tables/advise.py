"""``riskcalc advise``'s output: the ranked candidates as a text table and as CSV rows.

The text table (``print_table``) lists every client's risk for up to ``PER_CLIENT_MAX``
clients; beyond, each candidate's mean, worst and quantiles of the per-client risks, with one
row per client under ``per_client``. ``write_csv``: one row per candidate and client
(``CSV_COLUMNS``), with ``--bootstrap``'s interval bounds (``riskcalc.cli.tables.bootstrap``).
Used by ``riskcalc.cli.advise`` and, for the logistic family, ``riskcalc.cli.logistic.advise``.
"""

from __future__ import annotations

import csv

import numpy as np

from riskcalc.cli.tables import bootstrap
from riskcalc._files import atomic

#: Largest federation whose per-client risks the text table prints inline.
PER_CLIENT_MAX = 10
#: Candidates tied with the recommended one that the text names.
TIES_SHOWN = 6
#: Quantiles of the per-client risks in the summary table.
QUANTILES = (0.1, 0.5, 0.9)


def _fmt(v) -> str:
    return "inf" if v is None or v == float("inf") else f"{v:.4g}"


def _quantile(values, q: float) -> float:
    """``numpy.quantile``'s linear interpolation, infinite where it reaches an infinite risk
    (numpy's is NaN there, inf - inf: a client at gamma = 1 printed 'nan')."""
    s = np.sort(np.asarray(values, dtype=float))
    pos = q * (s.size - 1)
    lo, t = int(np.floor(pos)), pos - np.floor(pos)
    if t == 0.0 or np.isinf(s[lo]):
        return float(s[lo])
    hi = s[lo + 1]
    return float("inf") if np.isinf(hi) else float(s[lo] + (hi - s[lo]) * t)


def _tuning(c, wide: bool = False) -> str:
    parts = []
    for k, v in c.tuning.items():
        if isinstance(v, list) and wide:
            parts.append(f"{k}: {_summary(v)}")
        elif isinstance(v, list):
            parts.append(f"{k}=[{', '.join(_fmt(x) for x in v)}]")
        elif v is not None or k == "local_steps":   # None: the exact local solve, K = inf
            parts.append(f"{k}={_fmt(v)}")
    return " ".join(parts) or "-"


def _summary(values) -> str:
    """A per-client list in one cell: the value when all agree, else median and range."""
    arr = np.asarray([np.inf if v is None else v for v in values], dtype=float)
    if np.all(arr == arr[0]):
        return _fmt(arr[0])
    return f"median {_fmt(float(np.median(arr)))} in [{_fmt(arr.min())}, {_fmt(arr.max())}]"


def _label(j, names) -> str:
    return str(j) if names is None or names[j] is None else f"{j} ({names[j]})"


def print_table(result, per_client: bool = False, names=None) -> None:
    """The ranked candidates, the recommendation, the weight gains and the skips: every
    client's risk inline up to ``PER_CLIENT_MAX`` clients, else per candidate the mean, worst
    and quantiles of the per-client risks (``per_client``: one row per client as well)."""
    fed = result.federation
    wide = fed.m > PER_CLIENT_MAX
    print(f"federation: {fed.m} clients, {fed.covariance_text()}")
    if wide:
        qs = "".join(f" {'q' + format(100 * q, 'g'):>8}" for q in QUANTILES)
        print(f"{'rank':>4}  {'method':<14}{'weights':<9} {'mean':>8} {'worst':>8}{qs}  "
              "(quantiles of the per-client risk)")
    else:
        print(f"{'rank':>4}  {'method':<14}{'weights':<9} {'mean':>8} {'worst':>8}  "
              "per-client risks")
    for k, c in enumerate(result.candidates, 1):
        d = c.as_dict()
        if wide:
            risks = np.where(np.isfinite(c.risks), c.risks, np.inf)
            cells = "".join(f" {_fmt(_quantile(risks, q)):>8}" for q in QUANTILES)
        else:
            cells = "  " + " ".join(f"{_fmt(x):>7}" for x in d["risks"])
        # One space before each number: 9-character ones (1.234e+05) ran into the next.
        print(f"{k:>4}  {c.method:<14}{c.weights:<9} {_fmt(d['mean_risk']):>8}"
              f" {_fmt(d['worst_risk']):>8}{cells}")
        print(f"{'':>6}tuning: {_tuning(c, wide)}")
    rec = result.recommended
    how = "no global model" if rec.p is None else f"{rec.weights} weights"
    lead = "best (at rounding level)" if result.at_rounding() else "recommended"
    print(f"{lead} for the federation: {rec.method} ({how}) "
          f"(mean risk {_fmt(rec.mean_risk)}, worst client {_fmt(rec.worst_risk)})")
    from riskcalc.advise.result import TIE_ATOL, TIE_RTOL, scale

    ties = result.ties()
    if ties:
        shown = [f"{result.candidates[k].method} ({result.candidates[k].weights})"
                 for k in ties[:TIES_SHOWN]]
        more = f" and {len(ties) - TIES_SHOWN} more" if len(ties) > TIES_SHOWN else ""
        print(f"  tied (mean risk equal within {TIE_RTOL:g} relative or {TIE_ATOL:g} x the "
              f"risk scale {_fmt(scale(result.federation))}): {', '.join(shown)}{more}")
    if result.at_rounding():
        print(f"  not a recommendation: its mean risk is at rounding level (0 within "
              f"{TIE_ATOL:g} x the risk scale), so the {len(ties) + 1} pipelines tied with it "
              "are equally good (noise-free data?)")
    if rec.p is not None:
        print("  weights p_j: " + (_summary(rec.p) if wide
                                   else ", ".join(f"{x:.4g}" for x in rec.p)))
    rows = result.per_client()
    if wide and not per_client:
        best = {}
        for row in rows:
            key = f"{row['method']} ({row['weights']} weights)" if row["weights"] != "none" \
                else f"{row['method']} (no global model)"
            best[key] = best.get(key, 0) + 1
        print("  best per client: " + ", ".join(f"{v} x {k}" for k, v in
                                                sorted(best.items(), key=lambda kv: -kv[1]))
              + " (one row per client: --per-client, --json or --csv FILE)")
    else:
        for row in rows:
            how = ("no global model" if row["weights"] == "none"
                   else f"{row['weights']} weights")
            j = row["client"]
            tail = "" if not wide else f" (recommended: {_fmt(_json_risk(rec.risks[j]))})"
            tied = f", tied with {row['tied']} other(s)" if row["tied"] else ""
            print(f"  client {_label(j, names)}: {row['method']} ({how}), risk "
                  f"{_fmt(row['risk'])}{tail}{tied}")
    for g in result.weight_gains():
        print(f"optimal weights, {g['method']}: mean risk {_fmt(g['optimal'])} vs samples "
              f"{_fmt(g['samples'])}, uniform {_fmt(g.get('uniform'))} "
              f"({_gain_text(g['gain_vs_samples'])})")
    for method, why in result.refused:
        print(f"refused: {method}: {why}")
    for s in result.skipped:
        print(f"skipped: {s}")


def _gain_text(gain) -> str:
    """The optimal weights' relative gain over sample weights, "no gain" where it rounds to
    0.00% (was printed "gain -0.00%" for a rounding-level loss) or is undefined (None)."""
    if gain is None or round(100 * gain, 2) == 0:
        return "no gain over samples"
    return f"gain {100 * gain:.2f}% over samples"


def _json_risk(v):
    return None if not np.isfinite(v) else float(v)


#: Columns of ``--csv``.
CSV_COLUMNS = ("rank", "method", "weights", "client", "name", "risk", "p", "lam", "alpha",
               "steps", "step_size", "rounds", "local_steps", "global_step")


def write_csv(result, path, names=None, intervals=None) -> None:
    """One row per candidate and client (``CSV_COLUMNS``; an infinite risk is ``inf``, as
    in the table, the sweep's CSV and ``local_steps``: it was an empty cell, which reads as
    missing), written atomically; with ``intervals`` (``--bootstrap``) the bounds of the risk
    too."""
    m = result.federation.m
    extra = () if intervals is None else bootstrap.CSV_COLUMNS
    with atomic(path, newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=CSV_COLUMNS + extra)
        writer.writeheader()
        for k, c in enumerate(result.candidates, 1):
            for j in range(m):
                row = {"rank": k, "method": c.method, "weights": c.weights, "client": j,
                       "name": "" if names is None or names[j] is None else names[j],
                       "risk": repr(float(c.risks[j])),
                       "p": "" if c.p is None else repr(float(c.p[j]))}
                # The rounds candidates' T, K (inf: the exact local solve) and server step
                # were left out: their rows did not say which pipeline they were.
                for key in CSV_COLUMNS[7:]:
                    v = c.tuning.get(key)
                    if key == "local_steps" and key in c.tuning and v is None:
                        v = float("inf")
                    row[key] = "" if v is None else repr(v[j] if isinstance(v, list) else v)
                if intervals is not None:
                    row.update(bootstrap.csv_cells(intervals, c, j))
                writer.writerow(row)
