"""The papers' numbered equations, classified, for the coverage counted from their numbering.

``find_equations(paper)`` lists every numbered equation of a paper's text (main body, proofs and
appendices) at the line where its label stands. ``EQUATIONS`` classifies each of them, by
number or by a span of numbers ``"22-49"`` (the line is the first one's):

``claim``
    an identity, a bound or a rate the paper asserts: counted, and graded as the numbered
    results of ``paper_checks.numbered`` (``full``, ``partial`` or ``none``, by claim ids, the
    note saying what is missing); an equation inside a numbered result counts too (the papers
    number it twice);
``definition``
    an objective, an estimator, an algorithm's update or schedule, a notation, an assumption or
    a hypothesis of a result: not counted;
``proof step``
    a step of a proof (the result it proves is graded in ``paper_checks.numbered.RESULTS``):
    not counted, the claims that check it named.

``tests/test_fuzz38_number2.py`` keeps the table equal to the texts: every label found once,
1, 2, ... with no gap, each classified once, at the line the text has it.
"""

from __future__ import annotations

import re
from pathlib import Path

from paper_checks.core import PAPERS
from paper_checks.numbered import _MAIN, papers_dir

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


_D, _P = "definition", "proof step"
#: ``(paper, number or span, line, kind, status, claim ids, note)``, every equation once; a
#: claim's status is ``full``, ``partial`` or ``none``, the others' is empty.
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
    ("003", "12", 791, "claim", "full", ["003.eq12.maml-linear-objective",
                                           "003.thm3.maml-equals-ftfa"],
     "MAML-FL's global model in the linear model: (11) with the least-squares loss is (12)"),
    ("003", "13", 825, "claim", "full", ["003.sec31.gd-to-minnorm"],
     "MAML-FL's fine-tuning run to convergence is the min-norm interpolant (as eq. 7)"),
    ("003", "14", 959, "claim", "full", ["003.eq14.pfedme-joint-problem",
                                           "003.thm4.pfedme-equals-rtfa"],
     "pFedMe run to convergence is the joint problem (14), and (14)'s limits"),
    ("003", "15", 1922, "claim", "full", ["003.sec63.eq15-bias"], "Def. 6.1, FTFA's bias"),
    ("003", "16", 1936, "claim", "full", ["003.sec63.eq16-variance"],
     "Def. 6.1, FTFA's variance"),
    ("003", "17", 1970, "claim", "full", ["003.sec63.eq17-bias"], "Def. 6.2, RTFA's bias"),
    ("003", "18", 1978, "claim", "full", ["003.sec63.eq18-variance"],
     "Def. 6.2, RTFA's variance"),
    ("003", "19-20", 2039, _P, "", ["003.thm1.proof-steps"],
     "Thm 1's proof (Sec. 6.4): the global and client models, checked line by line"),
    ("003", "21-23", 4123, _P, "", [], "Thm 3's proof (Sec. 6.6): events and their bounds"),
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
    ("000", "24", 1681, _P, "", [], "Prop. 10's proof, the basic inequality for the IER; "
     "printed with p_s on L_s only, not on its lam/2 term: true (p_s <= 1) but too weak for "
     "(22), and App. C.2 uses it with p_s (p_1 lam/2 ||w_hat - w_*||^2)"),
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
    ("000", "31-34", 2172, _P, "", [], "Thm 8's proof, eq. (14) (App. A)"),
    ("000", "35-37", 3042, _D, "", [], "App. B: the bilevel objective, F_i and the prox"),
    ("000", "38", 3141, _D, "", [], "Lemma 15's hypothesis on K_t"),
    ("000", "39", 3150, "claim", "full", ["000.lemma15.outer-loop"], "Lemma 15's bound"),
    ("000", "40-42", 3668, _P, "", [], "Lemma 14's proof (App. B.1)"),
    ("000", "43", 4379, _P, "", [], "Lemma 15's proof (App. B.2)"),
    ("000", "44-47", 4888, _P, "", [], "Thm 6's proof, eqs. (9)-(10)"),
    ("000", "48", 5606, _D, "", [], "Prop. 21's hypotheses on n_i and p_i lam"),
    ("000", "49", 5693, _D, "", [], "Prop. 22's hypotheses on T and K_T"),
    ("000", "50", 5729, _P, "", [], "Prop. 22's proof"),
    ("000", "51", 5853, _D, "", [], "Prop. 23's hypotheses on T and K_T"),
    ("000", "52", 5906, _P, "", [], "Prop. 23's proof"),
    ("000", "53-57", 6154, _D, "", [], "Lemma 24's conditions (approximate minimizers)"),
    ("000", "58", 6187, "claim", "full", ["000.lemma24.approximate-stability"],
     "Lemma 24's stability bound"),
    ("000", "59", 6214, _D, "", [], "Lemma 24's error term E_lam,i"),
    ("000", "60", 6454, "claim", "full", ["000.lemma27.global-stability"], "Lemma 27's bound"),
    ("000", "61", 6892, _P, "", [], "Lemma 28's proof"),
    ("000", "62", 7106, _D, "", [], "Prop. 30's hypotheses on T and K_T"),
    ("000", "63", 7167, "claim", "full", ["000.prop30.lambda-ier"], "Prop. 30, first bound"),
    ("000", "64", 7179, "claim", "full", ["000.prop30.lambda-ier"], "Prop. 30, second bound"),
    ("000", "65", 7374, _P, "", [], "Thm 12's proof"),
    ("000", "66", 7794, _P, "", [], "Lemma 31's proof"),
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
    ("004", "15-17", 555, _D, "", [], "App. A's notation"),
    ("004", "18", 571, _D, "", [], "the objective with client-wise lam_i (future work)"),
    ("004", "19-20", 585, _P, "", [], "Lemma 4's proof (its statement is not numbered)"),
    ("004", "21", 613, _P, "", [], "Lemma 5's proof"),
    ("004", "22-49", 647, _P, "", [], "Thm 1's proof, global bound (App. A.3.2)"),
    ("004", "50", 849, _P, "", ["004.thm1.eq50-split"], "Thm 1's proof, the split of the error"),
    ("004", "51-58", 853, _P, "", [], "Thm 1's proof, global bound (App. A.3.2)"),
    ("004", "59-74", 893, _P, "", [], "Thm 1's proof, local bound (App. A.3.3)"),
    ("004", "75", 1025, _P, "", ["004.eq75.kappa-dropped"], "Thm 1's proof, lambda's threshold"),
    ("004", "76-80", 1029, _P, "", [], "Thm 1's proof, local bound (App. A.3.3)"),
    ("004", "81-82", 1051, _P, "", [], "Remark 2: the conditions on lam of Thm 1's proof"),
    ("004", "83-88", 1097, _P, "", [], "Lemma 2's proof (App. B.2.1)"),
    ("004", "89", 1127, "claim", "full", ["004.lemma6.inner-contraction"],
     "Lemma 6's contraction"),
    ("004", "90", 1135, "claim", "full", ["004.lemma7.outer-contraction"],
     "Lemma 7's contraction"),
    ("004", "91-92", 1139, _P, "", [], "Lemma 7's proof: the estimator grad^ F (notation)"),
    ("004", "93-96", 1147, _P, "", ["004.lemma7.proof-steps"],
     "Lemma 7's proof: every step checked, each tight where it must be"),
    ("004", "97", 1178, _P, "", [], "Thm 2's proof: e_t (notation)"),
    ("004", "98-101", 1182, _P, "", ["004.thm2.proof-steps", "004.eq100.q-factor",
                                     "004.thm2.proof-conditions"],
     "Thm 2's proof: the recursion's steps; (100)'s q lacks (1 - eta mu_l)^K (erratum-harmless)"),
    ("004", "102-103", 1214, _P, "", [], "Thm 2's proof: the combined recursion (its condition "
     "(104) is checked, not these lines one by one)"),
    ("004", "104", 1222, _P, "", ["004.thm2.proof-conditions"], "Thm 2's proof: the coupling "
     "condition"),
    ("004", "105", 1230, _P, "", [], "Thm 2's proof: the choice of eps_g"),
    ("004", "106-114", 1234, _P, "", ["004.thm2.proof-conditions"],
     "Thm 2's proof: the conditions; (109) is not collected in (111)-(114), which still imply "
     "(108)"),
    ("004", "115-118", 1270, _P, "", ["004.cor1.proof-steps"], "Cor. 1's proof (App. B.4)"),
    ("004", "119-123", 1288, _P, "", ["004.eq123.prox-argument"],
     "Thm 2's local rate, proof (App. B.5); (123)'s last line erratum-harmless"),
    ("001", "1", 78, _D, "", [], "the objective f"),
    ("001", "2", 124, _D, "", [], "the mixing objective"),
    ("001", "3", 527, "claim", "full", ["001.thm31.hypothesis"], "Thm 3.1's lower bound"),
    ("001", "4", 678, "claim", "full", ["001.eq4.prox-sign"],
     "PGD's step as a prox (printed sign corrected)"),
    ("001", "5", 714, "claim", "full", ["001.eq4.prox-sign"],
     "the update with h = f (its rate L/mu log 1/eps, in the text, is not run: coverage."
     "STATEMENTS has it partial)"),
    ("001", "6", 746, "claim", "full", ["001.eq4.prox-sign"],
     "the update with h = lam psi + mu/(2n) norm^2, FedProx's step (its rate lam/mu log "
     "1/eps, in the text, is not run)"),
    ("001", "7", 833, _D, "", [], "IAPGD's inexactness condition"),
]
#: How many numbered equations each text has (``find_equations``; a test keeps them equal).
EQUATION_COUNT = {"003": 23, "000": 66, "004": 123, "001": 7}


def span(number: str) -> range:
    """The equation numbers of an ``EQUATIONS`` row: ``"12"`` or ``"22-49"``."""
    first, _, last = number.partition("-")
    return range(int(first), int(last or first) + 1)


def equation_rows() -> list[tuple]:
    """The ``kind == "claim"`` rows of ``EQUATIONS`` as ``(paper, label, line, part, status,
    claim ids, note)``, the shape of ``RESULTS``, for ``coverage.numbered_coverage``."""
    return [(paper, f"eq. ({number})", line, _MAIN, status, ids, note)
            for paper, number, line, kind, status, ids, note in EQUATIONS if kind == "claim"]


def proof_step_counts() -> dict:
    """``{paper: {"listed": n, "graded": k}}``: the numbered proof steps of each paper, and how
    many of them a claim checks one by one (rows of ``EQUATIONS`` that name claim ids)."""
    out = {paper: {"listed": 0, "graded": 0} for paper in EQUATION_COUNT}
    for paper, number, _line, kind, _status, ids, _note in EQUATIONS:
        if kind == _P:
            out[paper]["listed"] += len(span(number))
            out[paper]["graded"] += len(span(number)) if ids else 0
    return out
