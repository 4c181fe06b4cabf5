"""The coverage denominator from the papers: every numbered result, and how the claims cover it.

``find_results(paper)`` reads the paper's text file and lists every numbered Theorem, Lemma,
Proposition and Corollary where it is STATED (a line that starts with the label followed by its
title, a period or its hypothesis; later mentions such as "Theorem 3 shows" are not
statements), main body and appendices, and every table whose caption is not a dataset or
hyperparameter table (the tables of rates). ``RESULTS`` grades each of them, with the paper's
own numbering and the line of the text file where it is stated:

``full``
    the claims check the statement as stated, over the range it claims, and its mutants (where
    declared, ``paper_checks.sensitivity``) are rejected;
``partial``
    they check part of it (the note says which part is missing, or which mutant passes);
``none``
    no claim checks it (the note says what one would need);
``not checkable``
    no numerical check is possible (the note says why); it leaves the denominator.

``tests/test_paper_checks_coverage.py`` fails if a result found in the text is missing here (or
listed here but not found), so nothing is left out by choice. Share = (full + partial/2) /
(full + partial + none), per paper and overall (``paper_checks.coverage``).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from paper_checks.core import PAPERS

_HEAD = re.compile(r"^(?:<\|[^|]*\|>)?(Theorem|Lemma|Proposition|Corollary) (\d+(?:\.\d+)?)"
                   r"(?:\.(?!\d)|\*| \(| \*| (?:Let|Suppose|Under|Consider|Assume)\b)")
_TABLE = re.compile(r"^(?:<\|[^|]*\|>)?Table (\d+): (.*)")
_NOT_A_RESULT = re.compile(r"Dataset|Hyperparameters")


def papers_dir() -> Path | None:
    """The folder of the papers' text files: ``$FEDRISK_PAPERS``, ``../shared/papers`` beside
    the repository, or ``/work/shared/papers``; None if none exists."""
    here = Path(__file__).resolve().parent.parent
    for cand in (os.environ.get("FEDRISK_PAPERS"), here.parent / "shared" / "papers",
                 "/work/shared/papers"):
        if cand and (Path(cand) / PAPERS["003"]).exists():
            return Path(cand)
    return None


def find_results(paper: str, folder: Path | None = None) -> list[tuple[str, int]]:
    """``[(label, line)]`` of the numbered results stated in ``paper``'s text, in text order
    (first statement of each label)."""
    folder = folder or papers_dir()
    seen = {}
    lines = (Path(folder) / PAPERS[paper]).read_text().splitlines()
    for number, line in enumerate(lines, start=1):
        m = _HEAD.match(line)
        if m:
            seen.setdefault(f"{m.group(1)} {m.group(2)}", number)
            continue
        t = _TABLE.match(line)
        if t and not _NOT_A_RESULT.search(t.group(2)):
            seen.setdefault(f"Table {t.group(1)}", number)
    return list(seen.items())


_MAIN = "main text"

#: Claims whose mutant ``paper_checks.sensitivity`` (quick) found ACCEPTED: the results they
#: check cannot count as full (``coverage.numbered_coverage``). Measured with ``python -m
#: paper_checks.sensitivity``; ``tests/test_paper_checks_sensitivity.py`` re-runs the cheap ones.
MUTANT_PASSES = frozenset({
    "003.lemma62.moment-bound",            # the bound sits 1e3-1e4 above the moment
    "000.thm8.threshold-rule",             # a rule's loss is capped by m on the grid
    "004.lemma1.global-vs-globaltrain",    # eq. (4) sits >= 260x above on every instance tried
})
# (paper, label, line, part, status, claim ids, note)
RESULTS = [
    # --- 003: Cheng, Chadha, Duchi ------------------------------------------------------------
    ("003", "Theorem 1", 408, _MAIN, "full",
     ["003.thm1.isotropic-bias", "003.thm1.isotropic-variance", "003.sec63.eq15-bias",
      "003.sec63.eq16-variance"], ""),
    ("003", "Theorem 2", 510, _MAIN, "full",
     ["003.thm2.isotropic-bias", "003.thm2.isotropic-variance", "003.thm2.mp-closed-form",
      "003.thm2.lambda-star", "003.thm2.optimal-risk", "003.sec63.eq17-bias",
      "003.sec63.eq18-variance"], ""),
    ("003", "Corollary 3.1", 614, _MAIN, "full",
     ["003.cor31.fedavg", "003.cor31.local-minnorm", "003.cor31.local-ridge"], ""),
    ("003", "Theorem 3", 831, _MAIN, "full",
     ["003.thm3.maml-equals-ftfa", "003.thm3.general-covariance"], ""),
    ("003", "Theorem 4", 988, _MAIN, "full",
     ["003.thm4.pfedme-equals-rtfa", "003.thm4.general-covariance"], ""),
    ("003", "Lemma 6.1", 1164, "Sec. 6 (proofs)", "full", ["003.lemma61.rademacher-moments"],
     ""),
    ("003", "Lemma 6.2", 1253, "Sec. 6 (proofs)", "partial", ["003.lemma62.moment-bound"],
     "the bound (K unspecified) sits 1e3-1e4 above the moment at every size the lemma allows "
     "(n_j ~ d): the mutant bound / 100 still holds, so only 'below with K = 1' is shown"),
    ("003", "Lemma 6.3", 1403, "Sec. 6 (proofs)", "full", ["003.lemma63.concentration"], ""),
    ("003", "Lemma 6.4", 1779, "Sec. 6 (proofs)", "full", ["003.lemma64.inverse-continuity"],
     ""),
    ("003", "Lemma 6.5", 4502, "Sec. 6 (proofs)", "not checkable", [],
     "its conclusion is cut from the text extraction (only the hypothesis, a spectrum of "
     "E Sigma_hat in [a, b], survives): there is no statement to check"),
    # --- 000: Chen, Zheng, Long, Su ---------------------------------------------------------
    ("000", "Theorem 4", 498, _MAIN, "full", ["000.thm4.local-rate"], ""),
    ("000", "Theorem 6", 601, _MAIN, "full", ["000.thm6.fedavg-rate", "000.thm6.general-weights"],
     ""),
    ("000", "Lemma 7", 720, _MAIN, "full",
     ["000.lemma7.loss-sup", "000.lemma7.beta-sigma", "000.lemma7.mu0"], ""),
    ("000", "Theorem 8", 915, _MAIN, "full", ["000.thm8.lower-bound", "000.thm8.dichotomy-rate"],
     ""),
    ("000", "Corollary 9", 1012, _MAIN, "full", ["000.cor9.lower-bound"], ""),
    ("000", "Proposition 10", 1560, _MAIN, "full", ["000.prop10"], ""),
    ("000", "Theorem 11", 1702, _MAIN, "partial", ["000.thm11.fedprox-aer"],
     "checked at the exact FedProx minimizer; Alg. 2 run with the schedules (26)-(27) is not"),
    ("000", "Theorem 12", 1867, _MAIN, "partial", ["000.thm12.fedprox-ier"],
     "checked at the exact FedProx minimizer; Alg. 2 run with the schedules (26)-(27) is not"),
    ("000", "Lemma 13", 2087, "App. A (lower bounds)", "full",
     ["000.lemma13.homogeneous-lower", "000.thm8.lower-bound"], ""),
    ("000", "Lemma 14", 3109, "App. B (optimization)", "full", ["000.lemma14.inner-loop"],
     ""),
    ("000", "Lemma 15", 3132, "App. B (optimization)", "full", ["000.lemma15.outer-loop"],
     ""),
    ("000", "Proposition 16", 3155, "App. B (optimization)", "full",
     ["000.prop16.afp-optimization"], ""),
    ("000", "Lemma 17", 4460, "App. B (optimization)", "full",
     ["000.lemma17.envelope-constants"], ""),
    ("000", "Lemma 18", 4468, "App. B (optimization)", "full", ["000.lemma18.gradient-bound"],
     ""),
    ("000", "Lemma 19", 4491, "App. B (optimization)", "full",
     ["000.lemma19.minibatch-variance"], ""),
    ("000", "Proposition 21", 5593, "App. C (stability)", "full",
     ["000.prop21.fedprox-stability"], ""),
    ("000", "Proposition 22", 5685, "App. C (stability)", "full",
     ["000.prop22.afp-stability-rate"], ""),
    ("000", "Proposition 23", 5818, "App. C (stability)", "full", ["000.prop23.lambda-aer"],
     ""),
    ("000", "Lemma 24", 6140, "App. C (stability)", "full",
     ["000.lemma24.approximate-stability"], ""),
    ("000", "Lemma 25", 6218, "App. C (stability)", "full",
     ["000.lemma25.approximate-minimizers"], ""),
    ("000", "Lemma 26", 6366, "App. C (stability)", "full",
     ["000.lemma26.loss-to-parameter-stability"], ""),
    ("000", "Lemma 27", 6433, "App. C (stability)", "full", ["000.lemma27.global-stability"],
     ""),
    ("000", "Lemma 28", 6673, "App. C (stability)", "full",
     ["000.lemma28.parameter-stability"], ""),
    ("000", "Proposition 29", 7044, "App. C (stability)", "full",
     ["000.prop29.global-estimation"], ""),
    ("000", "Proposition 30", 7084, "App. C (stability)", "full", ["000.prop30.lambda-ier"],
     ""),
    ("000", "Lemma 31", 7618, "App. C (stability)", "full", ["000.lemma31.prox-estimate"], ""),
    # --- 001: Hanzely et al. -----------------------------------------------------------------
    ("001", "Table 1", 253, _MAIN, "full",
     ["001.fig2.apgd1-vs-apgd2", "001.table1.iapgd-agd-optimality", "001.thm42.complexities"],
     ""),
    ("001", "Table 2", 413, _MAIN, "full",
     ["001.sec32.lower-bounds", "001.sec2.summand-lower-bound", "001.table2.prox-row"],
     "the matches are measured: gradient and summand rows on worst cases, the prox row by "
     "APGD1/APGD2's rounds against sqrt(min{L, lam}/mu); the prox lower bound's own worst "
     "case is Thm 3.1's (graded there)"),
    ("001", "Theorem 3.1", 503, _MAIN, "full", ["001.thm31.hypothesis"], ""),
    ("001", "Theorem 4.2", 858, _MAIN, "full",
     ["001.thm42.inexact-agd", "001.thm42.outer-rate", "001.thm42.complexities",
      "001.thm42.local-order-scale"], ""),
    ("001", "Theorem 4.3", 1000, _MAIN, "full",
     ["001.thm43.iapgd-katyusha", "001.thm43.katyusha-optimality"], ""),
    ("001", "Theorem 4.4", 1089, _MAIN, "partial",
     ["001.thm44.al2sgd-complexities", "001.thm44.communication-optimality",
      "001.thm44.local-optimality"],
     "checked against the L-Katyusha derivation; AL2SGD+ itself is not run"),
    # --- 004: FedProx fine-grained ------------------------------------------------------------
    ("004", "Lemma 1", 81, _MAIN, "partial",
     ["004.lemma1.global-vs-globaltrain", "004.lemma1.eq5-local-inequality"],
     "eq. (5) is attained to 1/2 on mean estimation (its /100 mutant rejected); eq. (4) holds "
     "but its bound sits >= 260x above the left side on every instance tried (at most 0.0038 "
     "on the closest quadratic case found), so its /100 mutant passes"),
    ("004", "Theorem 1", 91, _MAIN, "full",
     ["004.thm1.rates", "004.thm1.adaptive-lambda", "004.thm1.eq50-split"], ""),
    ("004", "Table 1", 105, _MAIN, "full",
     ["004.table1.chen-column", "004.table1.middle-column", "004.thm1.rates"], ""),
    ("004", "Lemma 2", 134, _MAIN, "full", ["004.lemma2.bilevel-constants"], ""),
    ("004", "Lemma 3", 138, _MAIN, "full", ["004.lemma3.envelope-gradient"], ""),
    ("004", "Theorem 2", 156, _MAIN, "full", ["004.thm2.linear-rate", "004.appC.global-step",
                                              "004.thm2.exact-limit-rate",
                                              "004.thm2.inner-steps-exact"],
     ""),
    ("004", "Corollary 1", 168, _MAIN, "full", ["004.cor1.gradient-evaluations",
                                                "004.cor1.rounds-exact-limit",
                                                "004.cor1.computation-exact"], ""),
    ("004", "Table 2", 178, _MAIN, "partial", ["004.cor1.gradient-evaluations"],
     "its FedProx row is Cor. 1 (checked); the other rows restate other papers' complexities"),
    ("004", "Lemma 4", 579, "App. A.2", "full", ["004.lemma4.local-global-gap"], ""),
    ("004", "Lemma 5", 603, "App. A.2", "full", ["004.lemma5.globaltrain-error"], ""),
    ("004", "Lemma 6", 1125, "App. B.2", "full", ["004.lemma6.inner-contraction"], ""),
    ("004", "Lemma 7", 1133, "App. B.2", "full", ["004.lemma7.outer-contraction"], ""),
    ("004", "Table 4", 1496, "App. C.3", "not checkable", [],
     "accuracies on MNIST-type datasets with the authors' client splits, not available "
     "offline"),
]

# --- numbered equations ---------------------------------------------------------------------
#: An equation's label where the extraction keeps it: ``(12)`` (or ``(12)$$``) ending a line,
#: or ``\\tag{12}`` ending a line (paper 004's LaTeX extraction).
_EQ = re.compile(r"(?:\((\d{1,3})\)\s*(?:\$\$)?|\\tag\{(\d{1,3})\}\s*(?:\$\$)?)\s*$")


def find_equations(paper: str, folder: Path | None = None) -> list[tuple[str, int]]:
    """``[(number, line)]`` of ``paper``'s numbered equations: the first line that ENDS with
    the label (a later mention, "from (4)", rarely ends a line, and never before the label);
    in text order. The labels found run 1, 2, ... with no gap in every paper (a test checks
    it), which is how a lost label would show."""
    folder = folder or papers_dir()
    seen = {}
    lines = (Path(folder) / PAPERS[paper]).read_text().splitlines()
    for number, line in enumerate(lines, start=1):
        m = _EQ.search(line)
        if m:
            seen.setdefault(m.group(1) or m.group(2), number)
    return list(seen.items())


#: Equations numbered from here on sit in the proofs and appendices (003: Sec. 6.4-6.6 from line
#: 1980; 000: App. A-C from line 2087; 004: App. A-C from line 555): not graded one by one (see
#: ``EQUATIONS``), except those listed there.
APPENDIX_FROM = {"003": 19, "000": 31, "004": 15, "001": 8}
_D, _P = "definition", "proof step"
_M3, _M4 = ["003.thm3.maml-equals-ftfa"], ["003.thm4.pfedme-equals-rtfa"]
#: Every numbered equation before ``APPENDIX_FROM``, and the appendix ones a claim checks:
#: ``(paper, number, line, kind, status, claim ids, note)``. ``kind`` is ``claim`` (an identity,
#: a bound or a rate the paper asserts: counted, graded ``full``/``partial``/``none`` as
#: ``RESULTS``, the note saying what is missing), ``definition`` (an objective, an estimator, an
#: algorithm's update or schedule, a notation, an assumption or a theorem's hypothesis: not
#: counted) or ``proof step`` (a step of a proof: not counted, the result it proves is graded).
#: An equation inside a numbered result is counted here too: the papers number it twice.
EQUATIONS = [
    ("003", "1", 30, _D, "", [], "the multicriterion objective"),
    ("003", "2", 42, _D, "", [], "the weighted federated objective"),
    ("003", "3", 190, _D, "", [], "the risk split into the bias B_i and variance V_i it defines"),
    ("003", "4", 226, _D, "", [], "the empirical spectral distribution"),
    ("003", "5", 296, _D, "", [], "FedAvg's objective"),
    ("003", "6", 335, _D, "", [], "FTFA's global model (least squares)"),
    ("003", "7", 347, "claim", "full", ["003.sec31.gd-to-minnorm"],
     "FTFA run to convergence is the min-norm interpolant closest to the global model"),
    ("003", "8", 505, _D, "", [], "RTFA's client model"),
    ("003", "9", 594, _D, "", [], "the local min-norm interpolant"),
    ("003", "10", 609, _D, "", [], "the local ridge estimator"),
    ("003", "11", 778, _D, "", [], "MAML-FL's objective"),
    ("003", "12", 791, "claim", "full", ["003.eq12.maml-linear-objective"] + _M3,
     "MAML-FL's global model in the linear model: (11) with the least-squares loss is (12)"),
    ("003", "13", 825, "claim", "full", ["003.sec31.gd-to-minnorm"],
     "MAML-FL's fine-tuning run to convergence is the min-norm interpolant (as eq. 7)"),
    ("003", "14", 959, "claim", "partial", _M4 + ["003.alg8.pfedme-inner"],
     "pFedMe run to convergence is the joint problem (14): the limits of (14) are checked; "
     "pFedMe's iterations are not run to it"),
    ("003", "15", 1922, "claim", "full", ["003.sec63.eq15-bias"], "Def. 6.1, FTFA's bias"),
    ("003", "16", 1936, "claim", "full", ["003.sec63.eq16-variance"],
     "Def. 6.1, FTFA's variance"),
    ("003", "17", 1970, "claim", "full", ["003.sec63.eq17-bias"], "Def. 6.2, RTFA's bias"),
    ("003", "18", 1978, "claim", "full", ["003.sec63.eq18-variance"],
     "Def. 6.2, RTFA's variance"),
    ("000", "1", 49, _D, "", [], "the optimal local model"),
    ("000", "2", 83, _D, "", [], "the global ERM objective"),
    ("000", "3", 164, _D, "", [], "PureLocalTraining's objective"),
    ("000", "4", 193, "claim", "full", ["000.thm8.lower-bound"],
     "the introduction's IER lower bound: eq. 15 with balanced n_i"),
    ("000", "5", 350, _D, "", [], "Def. 1, the IER"),
    ("000", "6", 364, _D, "", [], "Def. 2, the AER"),
    ("000", "7", 424, _D, "", [], "the global model w_p"),
    ("000", "8", 532, _D, "", [], "the weighted objective"),
    ("000", "9", 616, "claim", "full", ["000.thm6.fedavg-rate", "000.thm6.general-weights"],
     "Thm 6, FedAvg's AER"),
    ("000", "10", 636, "claim", "full", ["000.thm6.fedavg-rate", "000.thm6.general-weights"],
     "Thm 6, FedAvg's IER"),
    ("000", "11", 674, "claim", "full", ["000.thm6.fedavg-rate"], "FedAvg with p_i = n_i/N"),
    ("000", "12", 750, "claim", "full", ["000.lemma7.mu0"], "Lemma 7, mu_0"),
    ("000", "13", 762, "claim", "full", ["000.lemma7.beta-sigma"],
     "Lemma 7, the Hessian and its bound xx^T/4"),
    ("000", "14", 946, "claim", "full", ["000.thm8.lower-bound", "000.thm8.dichotomy-rate"],
     "Thm 8, the AER lower bound"),
    ("000", "15", 968, "claim", "full", ["000.thm8.lower-bound", "000.thm8.dichotomy-rate"],
     "Thm 8, the IER lower bound"),
    ("000", "16", 1040, "claim", "full", ["000.cor9.lower-bound"], "Cor. 9, AER"),
    ("000", "17", 1064, "claim", "full", ["000.cor9.lower-bound"], "Cor. 9, IER"),
    ("000", "18", 1117, "claim", "full", ["000.eq18.general-weights"],
     "the dichotomous strategy's AER"),
    ("000", "19", 1146, "claim", "partial", ["000.eq18-19.proportional-weights"],
     "the dichotomous strategy's IER: checked for p_i = n_i/N only"),
    ("000", "20", 1322, _D, "", [], "FedProx's objective"),
    ("000", "21", 1579, "claim", "full", ["000.prop10"], "Prop. 10, the AER"),
    ("000", "22", 1593, "claim", "full", ["000.prop10"], "Prop. 10, the IER"),
    ("000", "23", 1634, _P, "", [], "Prop. 10's proof, the basic inequality for the AER"),
    ("000", "24", 1681, _P, "", [], "Prop. 10's proof, the basic inequality for the IER"),
    ("000", "25", 1714, _D, "", [], "Thm 11's hypothesis on the weights (C_p)"),
    ("000", "26", 1736, _D, "", [], "Alg. 2's step sizes and inner iterations (Thm 11)"),
    ("000", "27", 1763, _D, "", [], "Alg. 2's final-stage step sizes (Thm 11)"),
    ("000", "28", 1827, "claim", "partial", ["000.thm11.fedprox-aer"],
     "Thm 11: checked at the exact FedProx minimizer; Alg. 2 with (26)-(27) is not run"),
    ("000", "29", 1950, "claim", "partial", ["000.thm12.fedprox-ier"],
     "Thm 12: checked at the exact FedProx minimizer; Alg. 2 with (26)-(27) is not run"),
    ("000", "30", 1992, "claim", "partial", ["000.thm11.fedprox-aer",
                                             "000.eq30.fedprox-middle-regime"],
     "FedProx's AER at its lambda: checked at the exact minimizer; Alg. 2 is not run"),
    ("004", "1", 19, _D, "", [], "FedProx's objective"),
    ("004", "2", 49, _D, "", [], "LocalTrain and GlobalTrain"),
    ("004", "3", 71, _D, "", [], "Assumption 2 (smoothness)"),
    ("004", "4", 83, "claim", "partial", ["004.lemma1.global-vs-globaltrain"],
     "Lemma 1: holds, but >= 260x below its bound on every instance: its /100 mutant passes"),
    ("004", "5", 85, "claim", "full", ["004.lemma1.eq5-local-inequality"], "Lemma 1"),
    ("004", "6", 93, "claim", "full", ["004.thm1.rates", "004.thm1.eq50-split"],
     "Thm 1, the global rate"),
    ("004", "7", 95, "claim", "full", ["004.thm1.rates"], "Thm 1, the local rate"),
    ("004", "8", 126, _D, "", [], "the bilevel form (F and F_i defined)"),
    ("004", "9", 130, _D, "", [], "the client's minimizer, a prox"),
    ("004", "10", 142, "claim", "full", ["004.lemma3.envelope-gradient"],
     "the server step: grad F = lam (w - w_*(w)), Lemma 3's identity"),
    ("004", "11", 150, _D, "", [], "the local gradient steps"),
    ("004", "12", 158, _D, "", [], "Thm 2's hypothesis on K"),
    ("004", "13", 170, "claim", "full", ["004.cor1.gradient-evaluations",
                                         "004.cor1.rounds-exact-limit"], "Cor. 1, rounds"),
    ("004", "14", 172, "claim", "full", ["004.cor1.gradient-evaluations",
                                         "004.cor1.computation-exact"],
     "Cor. 1, gradient evaluations"),
    ("004", "50", 849, _P, "", ["004.thm1.eq50-split"], "Thm 1's proof, the split of the error"),
    ("004", "75", 1025, _P, "", ["004.eq75.kappa-dropped"], "Thm 1's proof, lambda's threshold"),
    ("001", "1", 78, _D, "", [], "the objective f"),
    ("001", "2", 124, _D, "", [], "the mixing objective"),
    ("001", "3", 527, "claim", "full", ["001.thm31.hypothesis"], "Thm 3.1's lower bound"),
    ("001", "4", 678, "claim", "full", ["001.eq4.prox-sign"],
     "PGD's step as a prox (printed sign corrected)"),
    ("001", "5", 714, "claim", "full", ["001.eq4.prox-sign"], "the update with h = f"),
    ("001", "6", 746, "claim", "full", ["001.eq4.prox-sign"],
     "the update with h = lam psi + mu/(2n) norm^2: FedProx's step"),
    ("001", "7", 833, _D, "", [], "IAPGD's inexactness condition"),
]
#: How many numbered equations each text has (``find_equations``; a test keeps them equal).
EQUATION_COUNT = {"003": 23, "000": 66, "004": 123, "001": 7}


def equation_rows() -> list[tuple]:
    """The ``kind == "claim"`` rows of ``EQUATIONS`` as ``(paper, label, line, part, status,
    claim ids, note)``, the shape of ``RESULTS``, for ``coverage.numbered_coverage``."""
    return [(paper, f"eq. ({number})", line, _MAIN, status, ids, note)
            for paper, number, line, kind, status, ids, note in EQUATIONS if kind == "claim"]
