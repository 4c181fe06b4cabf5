"""The text tables of ``predict`` and ``compare`` along the rounds (``riskcalc.cli.options.rounds``
computes them; ``--json`` prints its rows instead), and the readers of a ``RoundsLimit`` that
both the tables and the rows use (``own_models``, ``ftfa_converges``).

A diverging round map (``converges: false``) is a result: its curve grows with T until it
passes the floating-point range, where the JSON rows hold null. The tables show those cells
as ``overflow`` and say why under the table (they showed ``inf``, and values past 1e+100 wider
than their column, without a word).
"""

from __future__ import annotations

import numpy as np

from riskcalc._text import shown_apart
from riskcalc.cli.shared import guards

#: Methods with rounds, and what each runs.
METHODS = {"fedavg": "FedAvg with local gradient descent",
           "pfedme": "paper 004's Algorithm 1 (bilevel FedProx)",
           "rtfa": "FedAvg with local gradient descent, then RTFA from the server model"}
#: Width of a number's column; ``cell`` keeps every finite float within it.
WIDTH = 13
#: The line under a table with an ``overflow`` cell (here, and the steps tables of ``predict``
#: and ``compare``).
OVERFLOW = "  overflow: past the floating-point range (1.8e+308; null in --json)"


def cell(value, width: int = WIDTH, digits: int = 8) -> str:
    """``value`` right-aligned in ``width`` characters: ``n/a`` for NaN (not computed),
    ``overflow`` beyond the floats (inf, JSON null), ``digits`` significant digits (one fewer
    past 1e+99, whose exponent has three digits: ``1.234567e+300`` fits 13 characters)."""
    if value is None or np.isinf(value):
        return f"{'overflow':>{width}}"
    if np.isnan(value):
        return f"{'n/a':>{width}}"
    return f"{value:>{width}.{digits - (abs(value) >= 1e100)}g}"


def overflow_note(res, cells) -> list:
    """The line under a table with an ``overflow`` cell (none otherwise)."""
    if not any(c is None or np.isinf(c) for c in cells):
        return []
    why = (" (the round map diverges, converges: false: the risk grows without bound in T)"
           if not res.converges else "")
    return [OVERFLOW + why]


def predict_text(args, res, pers, asked_pers, local) -> None:
    """``predict METHOD --rounds ...``'s table: a row per T for the target (client 0);
    ``local``: ``own_models``' pair."""
    name = "RTFA risk" if args.method == "rtfa" else "FTFA risk"
    m = res.risk.shape[0]
    print(f"{METHODS[args.method]} ({args.method}) along the rounds; derived here (exact limit, "
          f"M = {m} client{'s' if m > 1 else ''}, "
          f"{sigma_words(res.params)})")
    print(guards.params_line(res.params))
    print(round_map_line(res))
    own = res.method == "pfedme"       # its ``risk`` is the clients' own models'
    print(f"  {'rounds':>7} {'bias':>13} {'variance':>13} {'risk':>13} {'mean risk':>13} "
          f"{'server risk' if own else 'local risk':>13}"
          + ("" if pers is None else f" {name:>13}"))
    last, why = (res.global_risk, None) if own else local
    shown = []
    for t, T in enumerate(res.rounds):
        label = "inf" if np.isinf(T) else str(int(T))
        with np.errstate(over="ignore"):
            row = [res.bias[0, t], res.variance[0, t], res.risk[0, t], res.risk[:, t].mean(),
                   last[0, t]] + ([] if pers is None else [pers[0, t]])
        shown += row
        print(f"  {label:>7} " + " ".join(cell(v) for v in row))
    for line in overflow_note(res, shown):
        print(line)
    for line in res.notes:      # RoundsLimit.notes (exact local solves, pooled N < d)
        print(f"  note: {line}")
    if pers is not None:
        print(f"  {name}: the target's model after {describe(asked_pers)}")
        if "lam" not in asked_pers and not ftfa_converges(res, asked_pers):
            top = ("the top of its sample spectrum" if {"spectrum", "spectra"} & set(res.params)
                   else "(1 + sqrt(gamma))^2")
            print(f"  FTFA diverges (converges: false): step_size times {top} >= 2, the "
                  "risk grows with --steps; overflow where its growth passes 1e250 (null in "
                  "--json)")
    if own:
        print("  risk: the target's own model after its local phase of round T (the prox of "
              "the server model w_{T-1}); server risk: the server model's after T rounds")
    else:
        print("  risk: the server model's after T rounds; local risk: the target's own model "
              "after its K local steps of round T")
        if why is not None:
            print(f"  local risk n/a: {why}")


def compare_text(args, pred, out, ftfa, notes=()) -> None:
    """``compare METHOD --rounds ...``'s table: predicted next to simulated per T (``out``:
    the JSON rows, ``ftfa``: the personalization after round T or None, ``notes``: lines
    printed under the parameters, the realized gammas' and ``RoundsLimit.notes``)."""
    print(f"{METHODS[args.method]} ({args.method}) along the rounds: predicted (exact limit) vs "
          f"simulated at d = {args.d}, {args.reps} replicates, seed {args.seed}")
    print(guards.params_line(pred.params))
    for line in notes:          # why the gammas shown are not those asked, and the limit's
        print(f"  note: {line}")
    print(round_map_line(pred))
    shown = ("risk",) if ftfa is None else ("risk", "personalized_risk")
    if ftfa is not None:
        print(f"  {'':>7} {'risk':<45} {describe(ftfa)}")
    print(f"  {'rounds':>7}" + f" {'predicted':>12} {'simulated':>12} {'std.err':>10} "
          f"{'rel.diff':>9}" * len(shown))
    values = []
    for row in out:
        label = "inf" if row["rounds"] is None else str(row["rounds"])
        cells = []
        for q in shown:
            p, s, se = row["predicted"][q], row["simulated"][q], row["simulated"][q + "_se"]
            values += [p, s]
            rel = ("n/a" if p in (None, 0) or not np.isfinite(s)
                   else f"{100 * (s - p) / p:+.3f}%")
            cells.append(f" {cell(p, 12, 6)} {cell(s, 12, 6)} "
                         f"{f'{se:.3g}' if np.isfinite(se) else 'n/a':>10} {rel:>9}")  # not nan
        print(f"  {label:>7}" + "".join(cells))
    for line in overflow_note(pred, values):
        print(line)


def describe(pers) -> str:
    """The personalization after round T in words (text output)."""
    if "lam" in pers:
        return f"RTFA: the ridge lam = {pers['lam']:g} toward the server model of round T"
    return (f"FTFA: {pers['steps']} steps of {pers['step_size']:g} from the server model of "
            "round T (full-batch gradient steps on its own loss)")

def sigma_words(params) -> str:
    """The covariance of a rounds result in words (text output)."""
    if "spectra" in params:
        return "covariate shift: a covariance per client"
    return "Sigma with a spectrum" if "spectrum" in params else "Sigma = I"


def own_models(res, again=None):
    """``(local, why)``: ``res.local_risk`` and None, or where its route refuses (a size or time
    limit, ``ValueError``) the rows that pass alone and the refusal's message. ``again(T)``
    solves the rounds ``[T]`` alone (a ``RoundsLimit``): the rows of the refused list are
    asked one by one, NaN (``n/a``) where a row is refused alone too (``--rounds 1000,inf``
    showed n/a on both rows where ``inf`` alone has its own models)."""
    try:
        return res.local_risk, None
    except ValueError as exc:
        why = str(exc)
    local = np.full(res.risk.shape, np.nan)
    if again is not None and len(res.rounds) > 1:
        for t, T in enumerate(res.rounds):
            try:
                local[:, t] = again(T).local_risk[:, 0]
            except ValueError:
                continue
    return local, why


def ftfa_converges(res, pers, target: int = 0) -> bool:
    """Whether FTFA's steps ``pers`` from the server model converge for client ``target``
    (``riskcalc.linear.dynamics.personalize.ftfa_stability``)."""
    from riskcalc.linear.dynamics.personalize import ftfa_stability

    spec, top = res.params.get("spectrum"), None
    if spec is not None:    # the top of each client's sample spectrum under H
        from riskcalc.linear.dynamics.sigma.sigma_pencil import stable_top

        top = stable_top(spec["atoms"], spec["weights"], res.params["gamma"])
    elif "spectra" in res.params:   # under each client's own covariance (``shift.curves``)
        top = res._personal.tops
    return bool(ftfa_stability(res.params["gamma"], int(pers["steps"]),
                               float(pers["step_size"]), top=top)[0][target])

def round_map_line(res) -> str:
    """The text line of the limiting round map's diagnostics (``predict`` and ``compare``: a
    diverging curve was shown by ``compare`` without saying it diverges)."""
    bound = (" (an upper bound: the bottom of the spectrum is not computed)"
             if res.diagnostics.get("contraction_is_bound") else "")
    return (f"  round map: contraction {shown_apart(res.contraction, 1.0, 6)}{bound} "
            f"(converges: {'true' if res.converges else 'false'})")
