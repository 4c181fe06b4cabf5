"""Coverage of the papers' checkable main-text statements and numbered results; rendered into
REPORT.md by ``paper_checks.report`` (with ``paper_checks.figure_notes``, the written comparison
of paper 004's figures with the authors' own setup).

``STATEMENTS`` lists every distinct checkable statement of each paper's main text (theorems,
corollaries, lemmas with a formula, propositions, numbered equations claimed as results,
synthetic-experiment statements, tables of rates), counted from the papers' text, one row
each: ``(paper, location, what it states, status, claim ids, note)``. ``status`` is
``full`` (the claims check the statement in its scope), ``partial`` (they check part of it: the
note says which part is missing), ``none`` (no claim yet: the note says what one would need)
or ``not checkable`` (private data, unavailable datasets: the note says why; excluded from the
share). Statements only in proofs or appendices are not counted, even when a claim checks them.

``python -m paper_checks.coverage [--json]`` prints the counts per paper and the share
(full + partial/2) / (full + partial + none).
"""

from __future__ import annotations

import argparse
import json
import sys

STATUSES = ("full", "partial", "none", "not checkable")

# (paper, location, statement, status, claim ids, note)
STATEMENTS = [
    # --- paper 003: Cheng, Chadha, Duchi, Federated asymptotics -------------------------------
    ("003", "Thm 1", "FTFA's isotropic bias limit r^2 (1 - 1/gamma)", "full",
     ["003.thm1.isotropic-bias"], ""),
    ("003", "Thm 1", "FTFA's isotropic variance limit sigma^2/(gamma - 1)", "full",
     ["003.thm1.isotropic-variance"], ""),
    ("003", "Thm 2", "RTFA's isotropic bias limit r^2 lam^2 m'(-lam)", "full",
     ["003.thm2.isotropic-bias"], ""),
    ("003", "Thm 2", "RTFA's isotropic variance limit sigma^2 gamma (m - lam m')", "full",
     ["003.thm2.isotropic-variance"], ""),
    ("003", "Thm 2", "closed form of the Marchenko-Pastur Stieltjes transform m(z)", "full",
     ["003.thm2.mp-closed-form"], ""),
    ("003", "Thm 2", "m_i is the Stieltjes transform of the spectral measure of Sigma_i", "full",
     ["003.thm2.stieltjes-of-sample-covariance"], ""),
    ("003", "Thm 2", "optimal lambda* = sigma^2 gamma / r^2", "full", ["003.thm2.lambda-star"],
     ""),
    ("003", "Thm 2", "risk at lambda*", "full", ["003.thm2.optimal-risk"], ""),
    ("003", "Sec. 3.2", "RTFA at lambda* beats FTFA", "full", ["003.thm2.rtfa-beats-ftfa"], ""),
    ("003", "Thm 2 / Cor. 3.1", "limits lam -> 0 (FTFA) and lam -> infinity", "full",
     ["003.thm2.lambda-limits"], ""),
    ("003", "Cor. 3.1", "FedAvg's limit", "full", ["003.cor31.fedavg"], ""),
    ("003", "Cor. 3.1, eq. 9", "local min-norm limit", "full", ["003.cor31.local-minnorm"], ""),
    ("003", "Cor. 3.1, eq. 10", "local ridge limit", "full", ["003.cor31.local-ridge"], ""),
    ("003", "Cor. 3.1", "local ridge at its optimal lambda", "full",
     ["003.cor31.local-ridge-optimum"], ""),
    ("003", "Sec. 3.3", "FTFA vs FedAvg: which wins, by gamma and r", "full",
     ["003.sec33.ftfa-vs-fedavg"], ""),
    ("003", "Sec. 3.3", "FTFA beats local training", "full", ["003.sec33.ftfa-beats-local"], ""),
    ("003", "Sec. 3.3", "first-order expansion in rho - r", "full",
     ["003.sec33.rho-r-expansion"], ""),
    ("003", "Sec. 3.3 / 6.9", "RTFA beats FedAvg", "full", ["003.sec69.rtfa-beats-fedavg"], ""),
    ("003", "Sec. 3.3", "RTFA beats local training", "full", ["003.sec33.rtfa-beats-local"], ""),
    ("003", "Sec. 3.1, eqs. 6-7", "gradient descent from theta_0 converges to the min-norm "
     "interpolator", "full", ["003.sec31.gd-to-minnorm"], ""),
    ("003", "Thm 3, eqs. 11-13", "MAML-FL has FTFA's limit (isotropic)", "full",
     ["003.thm3.maml-equals-ftfa", "003.eq12.maml-linear-objective"], ""),
    ("003", "Thm 3 under A2", "MAML-FL has FTFA's limit (general covariance)", "full",
     ["003.thm3.general-covariance"], ""),
    ("003", "Thm 4, eq. 14", "pFedMe has RTFA's limit (isotropic)", "full",
     ["003.thm4.pfedme-equals-rtfa", "003.eq14.pfedme-joint-problem"], ""),
    ("003", "Thm 4 under A2", "pFedMe has RTFA's limit (general covariance)", "full",
     ["003.thm4.general-covariance"], ""),
    ("003", "Assumption A3", "the two worked examples (p_j = 1/m and p_j = n_j/N)", "full",
     ["003.a3.worked-examples"], ""),
    ("003", "Def. 6.1, eq. 15", "FTFA bias for general Sigma", "full", ["003.sec63.eq15-bias"],
     ""),
    ("003", "Def. 6.1, eq. 16", "FTFA variance for general Sigma", "full",
     ["003.sec63.eq16-variance"], ""),
    ("003", "Def. 6.2, eq. 17", "RTFA bias for general Sigma", "full", ["003.sec63.eq17-bias"],
     ""),
    ("003", "Def. 6.2, eq. 18", "RTFA variance for general Sigma", "full",
     ["003.sec63.eq18-variance"], ""),
    ("003", "Lemma 6.1", "moments of Rademacher sums", "full",
     ["003.lemma61.rademacher-moments"], ""),
    ("003", "Lemma 6.2", "moment bound of weighted sums of client designs", "partial",
     ["003.lemma62.moment-bound"], "the bound sits 1e3-1e4 above the moment; its mutant "
     "(bound / 100) passes"),
    ("003", "Lemma 6.3", "concentration of the pooled sample covariance", "full",
     ["003.lemma63.concentration"], ""),
    ("003", "Lemma 6.4", "continuity of the inverse", "full", ["003.lemma64.inverse-continuity"],
     ""),
    ("003", "Lemma 6.5", "spectrum bounds of the pooled sample covariance", "none", [],
     "the lemma's conclusion is cut from the text extraction (only its hypothesis, a spectrum "
     "of E Sigma_hat in [a, b], survives); the original statement is needed"),
    ("003", "Alg. 8", "pFedMe's inner problem", "full", ["003.alg8.pfedme-inner"], ""),
    ("003", "Sec. 5, Remark after Thm 3", "more personalization steps are better",
     "not checkable", ["003.sec5.steps-monotone", "003.finding.steps-early-stopping"],
     "a conclusion from the real-data experiments; in the paper's own linear model it fails "
     "(a finding, not a verdict)"),
    ("003", "Sec. 5, Figs 1-12, Tables 1-5", "real-data experiments", "not checkable",
     ["003.sec5.experiments"], "needs the authors' pretrained networks and federated datasets"),
    # --- paper 000: Chen, Zheng, Long, Su, Minimax estimation for personalized FL -------------
    ("000", "Lemma 7", "||l||_inf of the logistic instances", "full", ["000.lemma7.loss-sup"], ""),
    ("000", "Lemma 7, eq. 13", "beta = sigma^2 = c_X^2 d / 4", "full", ["000.lemma7.beta-sigma"],
     ""),
    ("000", "Lemma 7, eq. 12", "strong convexity mu_0", "full", ["000.lemma7.mu0"], ""),
    ("000", "Thm 4", "PureLocalTraining's IER bound beta ||l||_inf/(mu n_i)", "full",
     ["000.thm4.local-rate"], ""),
    ("000", "Thm 6, eq. 9", "FedAvg's AER bound for weights p", "full",
     ["000.thm6.fedavg-rate", "000.thm6.general-weights"], ""),
    ("000", "Thm 6, eq. 10", "FedAvg's IER bound for weights p", "full",
     ["000.thm6.fedavg-rate", "000.thm6.general-weights"], ""),
    ("000", "Eq. 11", "FedAvg's bounds with p_i = n_i/N", "full", ["000.thm6.fedavg-rate"], ""),
    ("000", "Thm 6 (discussion)", "p_i = n_i/N minimizes the variance term sum p_i^2/n_i",
     "full", ["000.thm6.general-weights"], ""),
    ("000", "Thm 8, eq. 14", "minimax lower bound on the AER", "full",
     ["000.thm8.lower-bound", "000.thm8.dichotomy-rate"], ""),
    ("000", "Thm 8, eq. 15", "minimax lower bound on the IER", "full",
     ["000.thm8.lower-bound", "000.thm8.dichotomy-rate"], ""),
    ("000", "Cor. 9, eq. 16", "lower bound on the AER excess risk", "full",
     ["000.cor9.lower-bound"], ""),
    ("000", "Cor. 9, eq. 17", "lower bound on the IER excess risk", "full",
     ["000.cor9.lower-bound"], ""),
    ("000", "Sec. 3.3", "the dichotomy: FedAvg attains the rate for R^2 <~ m/N, local training "
     "for R^2 >~ m/N", "full", ["000.thm8.dichotomy-rate"], ""),
    ("000", "Sec. 3.3", "the dichotomous strategy's threshold R^2 = ||l||_inf/mu m/N",
     "partial", ["000.thm8.threshold-rule"],
     "holds up to constants, but a threshold rule's loss is capped by m on the simulated "
     "grid, so the exponent mutant passes"),
    ("000", "Eq. 18", "the dichotomous strategy's AER for weights p", "full",
     ["000.eq18.general-weights"], ""),
    ("000", "Eq. 19", "the dichotomous strategy's IER for weights p", "partial",
     ["000.eq18-19.proportional-weights"], "checked for p_i = n_i/N only"),
    ("000", "Display after eq. 19", "with p_i = n_i/N the bounds match Cor. 9", "full",
     ["000.eq18-19.proportional-weights"], ""),
    ("000", "Sec. 3.3", "FedAvg followed by fine-tuning is minimax optimal along its path",
     "partial", ["000.fig1.finetune-follows-max"], "checked in the Fig. 1 simulation only"),
    ("000", "Fig. 1 (left), App. D", "fine-tuning follows the better of FedAvg and local",
     "full", ["000.fig1.finetune-follows-max"], ""),
    ("000", "Fig. 1 (right), App. D", "FedProx's lambda interpolates", "full",
     ["000.fig1.fedprox-right-panel"], ""),
    ("000", "Alg. 2", "FedProx, general version (branches)", "full",
     ["000.alg2.swapped-branches"], ""),
    ("000", "Prop. 10, eq. 21", "AER <= E_OPT + 2 sum p_i gamma_i + lam/2 sum p_i ||w_avg - "
     "w*_i||^2", "full", ["000.prop10"], ""),
    ("000", "Prop. 10, eq. 22", "IER_i <= E_OPT/p_i + 2 gamma_i + lam/2 ||w_g - w*_i||^2",
     "full", ["000.prop10"], ""),
    ("000", "Thm 11, eqs. 28, 30", "FedProx's AER bound", "partial", ["000.thm11.fedprox-aer"],
     "checked at the exact FedProx minimizer; Alg. 2 run with schedules (26)-(27) is not"),
    ("000", "Thm 12, eq. 29", "FedProx's IER bound", "partial", ["000.thm12.fedprox-ier"],
     "checked at the exact FedProx minimizer; Alg. 2 run with schedules (26)-(27) is not"),
    ("000", "Sec. 4, after eq. 30", "the regimes of eq. (30)", "full",
     ["000.eq30.fedprox-middle-regime"], ""),
    # --- paper 001: Hanzely et al., Lower bounds and optimal algorithms -----------------------
    ("001", "Thm 3.1, eq. 3", "distance lower bound for span-restricted algorithms", "full",
     ["001.thm31.hypothesis"], ""),
    ("001", "Thm 3.1 (text after)", "communication rounds >= sqrt(min{L, lam}/mu) log 1/eps",
     "partial", ["001.sec32.lower-bounds", "001.table1.iapgd-agd-optimality"],
     "matched by the upper bounds; the worst-case instance of Thm 3.1 (appendix, not in the "
     "text) is not run"),
    ("001", "Sec. 3.2", "prox-oracle lower bound sqrt(min{lam, L}/mu) log 1/eps", "partial",
     ["001.sec32.lower-bounds"], "matched by APGD1/APGD2's prox counts; Thm 3.1's worst-case "
     "instance (appendix, not in the text) is not run"),
    ("001", "Sec. 3.2", "gradient-oracle lower bound sqrt(L/mu) log 1/eps (Nesterov's "
     "worst-case quadratic)", "full", ["001.sec32.lower-bounds"], ""),
    ("001", "Sec. 3.2 / Sec. 2", "summand-oracle lower bound", "partial",
     ["001.sec2.summand-lower-bound"],
     "the two printed forms are compared with each other and with the literature; no "
     "finite-sum worst case is run"),
    ("001", "Sec. 4.1, Table 1", "APGD1: sqrt(lam/mu) log 1/eps rounds and prox calls", "full",
     ["001.fig2.apgd1-vs-apgd2", "001.sec41.below-mu"], ""),
    ("001", "Sec. 4.1, Table 1", "APGD2: sqrt(L/mu) log 1/eps rounds and gradients", "full",
     ["001.fig2.apgd1-vs-apgd2"], ""),
    ("001", "Sec. 4.1, eqs. 4-6", "the proximal gradient step (4) and its splittings (5), (6)",
     "partial", ["001.eq4.prox-sign"], "the updates are checked exactly on quadratics; the "
     "non-accelerated rates L/mu log 1/eps of (5) and lam/mu log 1/eps of (6) are not run"),
    ("001", "Thm 4.2", "IAPGD's outer linear rate", "partial",
     ["001.thm42.outer-rate", "001.sec41.below-mu"],
     "exact local prox; the inexact AGD inner loop at T_k is not run"),
    ("001", "Thm 4.2", "IAPGD + AGD complexities", "full",
     ["001.thm42.complexities", "001.thm42.local-order-scale"], ""),
    ("001", "Table 1, after Thm 4.2", "IAPGD + AGD optimal if lam <= L", "full",
     ["001.table1.iapgd-agd-optimality"], ""),
    ("001", "Thm 4.3", "IAPGD + Katyusha complexities", "full", ["001.thm43.iapgd-katyusha"],
     ""),
    ("001", "Thm 4.3 (text after)", "its optimality condition", "full",
     ["001.thm43.katyusha-optimality"], ""),
    ("001", "Thm 4.4", "AL2SGD+ complexities", "partial",
     ["001.thm44.al2sgd-complexities", "001.thm44.below-mu"],
     "checked against the L-Katyusha derivation; AL2SGD+ itself is not run"),
    ("001", "Thm 4.4 (text after)", "AL2SGD+'s communication optimality", "full",
     ["001.thm44.communication-optimality"], ""),
    ("001", "Thm 4.4 (text after)", "AL2SGD+'s local optimality", "full",
     ["001.thm44.local-optimality"], ""),
    ("001", "Table 2", "which lower and upper complexities match, per oracle", "full",
     ["001.sec32.lower-bounds"], ""),
    ("001", "Sec. 5, Fig. 2", "APGD1 vs APGD2 on quadratics (n = d = 50)", "full",
     ["001.fig2.apgd1-vs-apgd2"], ""),
    ("001", "Sec. 5, Fig. 1", "IAPGD+Katyusha, AL2SGD+, L2SGD+ on LIBSVM logistic regression",
     "not checkable", [], "uses LIBSVM datasets (a1a, ...) that cannot be downloaded here"),
    # --- paper 004: The effect of personalization in FedProx ---------------------------------
    ("004", "Lemma 1, eq. 4", "FedProx's global model vs GlobalTrain", "partial",
     ["004.lemma1.global-vs-globaltrain"], "holds, but >= 260x below its bound on every "
     "instance tried: its /100 mutant passes"),
    ("004", "Lemma 1, eq. 5", "FedProx's local models vs the global one", "full",
     ["004.lemma1.eq5-local-inequality"], ""),
    ("004", "Thm 1, eq. 6", "global rate C1/N + C2 min{1/n, R^2}", "full",
     ["004.thm1.rates", "004.thm1.eq50-split"], ""),
    ("004", "Thm 1, eq. 7", "local rate C3/N + C4 min{1/n, R^2}", "full", ["004.thm1.rates"], ""),
    ("004", "Thm 1", "the adaptive lambda", "full", ["004.thm1.adaptive-lambda"], ""),
    ("004", "Table 1", "rates of Chen et al., of FedProx and the lower bound, per regime",
     "full", ["004.table1.chen-column", "004.table1.middle-column", "004.thm1.rates"], ""),
    ("004", "Lemma 2", "the bilevel problem's constants", "full",
     ["004.lemma2.bilevel-constants"], ""),
    ("004", "Lemma 3", "the Moreau envelope's gradient", "full",
     ["004.lemma3.envelope-gradient"], ""),
    ("004", "Thm 2, eq. 12", "bilevel FedProx's linear rate", "full",
     ["004.thm2.linear-rate", "004.appC.global-step", "004.thm2.exact-limit-rate",
      "004.thm2.inner-steps-exact"], ""),
    ("004", "Cor. 1, eq. 13", "communication rounds kappa (lam + mu)/(lam + L) log 1/eps",
     "full", ["004.cor1.gradient-evaluations", "004.fig1d.communication-vs-lambda",
              "004.cor1.rounds-exact-limit"], ""),
    ("004", "Cor. 1, eq. 14", "gradient evaluations K x rounds independent of lam", "full",
     ["004.cor1.gradient-evaluations", "004.cor1.computation-exact"], ""),
    ("004", "Sec. 3, Sec. 6.1", "the statistical error of each objective's minimizer", "full",
     ["004.sec61.statistical-error"], ""),
    ("004", "Sec. 6.1", "the synthetic data (w_k ~ N(0, R))", "full", ["004.sec61.R-scale"], ""),
    ("004", "App. C", "the smoothness constant and steps", "full", ["004.appC.smoothness"], ""),
    ("004", "Alg. 1 vs code", "the experiments run Alg. 1", "full", ["004.code.server-step"], ""),
    ("004", "Sec. 6.2, Fig. 1(a)", "FedProx interpolates between GlobalTrain and LocalTrain",
     "full", ["004.fig1a.interpolation"], ""),
    ("004", "Sec. 6.3, Fig. 1(d)", "larger lam: more rounds, lower error at low R", "full",
     ["004.fig1d.communication-vs-lambda"], ""),
    ("004", "Sec. 6.3, Fig. 2", "more local updates lower the error early", "full",
     ["004.fig2.local-updates"], ""),
    ("004", "App. C.2, Fig. 3", "the adaptive lambda beats both baselines", "not checkable",
     ["004.fig3.adaptive-lambda"], "Thm 1's lambda is undefined on the separable clients"),
    ("004", "App. C, Fig. 5", "many clients with sampling", "full",
     ["004.fig5.client-sampling"], ""),
    ("004", "Sec. 6, Figs 1(b), 1(c), 1(e), 1(f), 4", "MNIST logistic and CNN experiments",
     "not checkable", [], "needs MNIST and the authors' splits (not available offline)"),
]


def numbered_coverage(claim_ids=None, insensitive=None, equations=False) -> dict:
    """Per paper ``{"full", "partial", "none", "not_checkable", "share", "statements"}`` over
    the papers' numbered results (``paper_checks.numbered.RESULTS``: the denominator read from
    the texts), and with ``equations`` also over their numbered equations that state a claim
    (``paper_checks.equations.EQUATIONS``). A result counted ``full`` whose claims include one
    in ``insensitive`` (a claim that accepted a mutant in ``paper_checks.sensitivity``; by
    default the measured ``paper_checks.numbered.MUTANT_PASSES``) is counted ``partial``; with
    ``claim_ids``, one whose claims are not all registered counts as ``none``."""
    from paper_checks.equations import equation_rows
    from paper_checks.numbered import MUTANT_PASSES, RESULTS

    insensitive = MUTANT_PASSES if insensitive is None else _id_set(insensitive)
    rows = []
    for paper, label, line, part, status, ids, note in RESULTS + (
            equation_rows() if equations else []):
        bad = sorted(set(ids) & set(insensitive))
        if status == "full" and bad:
            status, note = "partial", "a mutant passes: " + ", ".join(bad)
        rows.append((paper, f"{label} (line {line}, {part})", label, status, ids, note))
    return coverage(rows, claim_ids=claim_ids)


def coverage(statements=STATEMENTS, claim_ids=None) -> dict:
    """Per paper ``{"full", "partial", "none", "not_checkable", "share", "statements"}``.

    ``share`` = (full + partial/2) / (full + partial + none). With ``claim_ids`` (the ids that
    exist), a statement whose claims do not all exist counts as ``none``: the table cannot
    claim a check that is not registered."""
    claim_ids = None if claim_ids is None else _id_set(claim_ids)
    out = {}
    for paper, loc, what, status, ids, note in statements:
        if status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {status!r}")
        missing = [i for i in ids if claim_ids is not None and i not in claim_ids]
        if missing and status in ("full", "partial"):
            status, note = "none", "claims not registered: " + ", ".join(missing)
        row = out.setdefault(paper, {"full": 0, "partial": 0, "none": 0, "not_checkable": 0,
                                     "statements": []})
        row[status.replace(" ", "_")] += 1
        row["statements"].append({"location": loc, "statement": what, "status": status,
                                  "claims": list(ids), "note": note})
    for row in out.values():
        total = row["full"] + row["partial"] + row["none"]
        row["share"] = (row["full"] + row["partial"] / 2) / total if total else 1.0
    return out


def _id_set(ids) -> set:
    """Claim ids as a set, a string being one id (it was read as its characters; fuzz41 F8)."""
    return {ids} if isinstance(ids, str) else set(ids)


def overall(cov: dict) -> tuple[int, float]:
    """(checkable statements, (full + partial/2) / total) over all papers; the share is 1 where
    no statement is checkable, as ``coverage``'s per paper (it was a ZeroDivisionError for an
    empty listing or one of not-checkable statements only; fuzz42 bounds F10)."""
    tot = sum(r["full"] + r["partial"] + r["none"] for r in cov.values())
    got = sum(r["full"] + r["partial"] / 2 for r in cov.values())
    return tot, got / tot if tot else 1.0


def main(argv=None) -> int:
    from paper_checks import CLAIMS

    ap = argparse.ArgumentParser(prog="python -m paper_checks.coverage", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", action="store_true", help="print the coverage as JSON")
    args = ap.parse_args(argv)
    from paper_checks.equations import proof_step_counts

    cov = numbered_coverage(claim_ids=set(CLAIMS))
    steps = proof_step_counts()
    if args.json:
        # Each paper's row: the results' counts (the pinned keys) and, beside them, the
        # counts with the equations that state a claim and the proof steps graded.
        both = numbered_coverage(claim_ids=set(CLAIMS), equations=True)
        for paper, row in cov.items():
            row["with_equations"] = {k: both[paper][k] for k in ("full", "partial", "none")}
            row["proof_steps"] = steps[paper]
        print(json.dumps(cov))
        return 0
    print("Numbered results of the papers (Theorems, Lemmas, Propositions, Corollaries, tables, "
          "figures; paper_checks.numbered):")
    for paper, row in cov.items():
        print(f"{paper}: full {row['full']}, partial {row['partial']}, none {row['none']}, not "
              f"checkable {row['not_checkable']}: {row['share']:.1%}")
    total, share = overall(cov)
    print(f"all: {total} checkable numbered results, (full + partial/2) / total = {share:.1%}")
    both = numbered_coverage(claim_ids=set(CLAIMS), equations=True)
    print("With the numbered equations that state a claim (paper_checks.equations):")
    for paper, row in both.items():
        print(f"{paper}: full {row['full']}, partial {row['partial']}, none {row['none']}: "
              f"{row['share']:.1%}")
    total, share = overall(both)
    print(f"all: {total} checkable numbered results and equations, (full + partial/2) / total "
          f"= {share:.1%}")
    print("Numbered proof steps (not counted above), graded one by one: " + ", ".join(
        f"{p} {s['graded']} of {s['listed']}" for p, s in steps.items()))
    print("none:")
    for paper, row in both.items():
        for st in row["statements"]:
            if st["status"] in ("none", "not checkable"):
                print(f"  {paper} {st['location']}: {st['status']}: {st['note']}")
    main_text = coverage(claim_ids=set(CLAIMS))
    total, share = overall(main_text)
    print(f"Main-text statements (the finer listing of STATEMENTS): {total} checkable, "
          f"(full + partial/2) / total = {share:.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
