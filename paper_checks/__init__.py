"""paper_checks: every checkable claim of the four papers, with evidence and a verdict.

A consumer layer (DESIGN.md): it imports ``riskcalc`` (theory, ``riskcalc.minimax``) and
``montecarlo`` (simulation) and is imported by neither. One module per paper registers its
claims in ``CLAIMS`` (``paper_checks.core``):

* ``p003_*``: Cheng, Chadha, Duchi, *Federated asymptotics* (003_4b976ddf5225c17e.txt), one
  module per part of the paper (``p003_thm12``, ``p003_sec3``, ``p003_sec4``, ``p003_sec6``,
  ``p003_sec5``);
* ``p000_*``: Chen, Zheng, Long, Su, *Minimax estimation for personalized FL* (``000_...``; 002
  is the same paper), one module per part (``p000_lemma7``, ``p000_sec31``, ``p000_sec32``,
  ``p000_sec4``);
* ``p004``, ``p004_code``, ``p004_rates``, ``p004_rounds``: *The effect of personalization in FedProx*
  (004_98172ed3646eef14.txt): the paper, its authors' code, Thm 1's rates and Cor. 1;
* ``p001``, ``p001_lower``: Hanzely et al., *Lower bounds and optimal algorithms for
  personalized FL* (``001_...``): the algorithms, and Sec. 3.2's lower bounds with Table 2;
* ``p000_lower``, ``p000_weights``, ``p000_prop10``: paper 000's Thm 8 / Cor. 9 as lower
  bounds, Thm 6 with general weights, Prop. 10; ``p000_sec33``: Fig. 1's right panel, Thm 8's
  threshold rule and eqs. (18)-(19); ``p003_lemmas``: paper 003's Assumption A3 examples and
  Sec. 6 lemmas; ``p004_lemmas``: paper 004's App. A lemmas; ``p004_proofs``,
  ``p004_conditions``: the steps of paper 004's App. B proofs (Lemma 7, Thm 2, Cor. 1), graded
  one by one; ``errata``: claims added later.

``run_claims`` evaluates a selection; ``python -m paper_checks.report`` regenerates REPORT.md;
``riskcalc check`` prints the table or JSON.
"""

import sys

#: ``python -m paper_checks.NAME`` runs these; every other module is part of the catalogue.
COMMANDS = ("coverage", "report", "sensitivity")


def _run_as_module() -> str:
    """NAME while ``python -m NAME`` locates its module (runpy imports the packages on its
    path first, with ``sys.argv[0] == "-m"`` and the arguments after NAME in the rest), else
    the empty string."""
    if sys.argv[:1] != ["-m"]:
        return ""
    return sys.orig_argv[-len(sys.argv)].removeprefix("-m")


_RUN = _run_as_module()
if _RUN.startswith("paper_checks.") and _RUN.split(".")[1] not in COMMANDS:
    # The imports below load every module but the commands, so runpy then found the module in
    # sys.modules and printed a RuntimeWarning (python -m paper_checks.core; fuzz42 bounds F4).
    print(f"error: {_RUN} is part of the claim catalogue, not a command: run the claims with "
          "`riskcalc check` (--claim ID, --paper PAPER), or python -m paper_checks."
          f"{{{','.join(COMMANDS)}}}", file=sys.stderr)
    raise SystemExit(2)

from paper_checks import (errata, p000_afp, p000_appendix, p000_lemma7,  # noqa: F401
                          p000_lower, p000_mean, p000_prop10, p000_sec4, p000_sec31, p000_sec32,
                          p000_sec33, p000_stability, p000_weights, p001, p001_iapgd, p001_thm31,
                          p001_lower, p003_lemmas, p003_sec3, p003_sec4, p003_sec5, p003_sec6,
                          p003_thm12, p004, p004_appB, p004_code, p004_conditions,
                          p004_lemmas, p004_proofs, p004_rates, p004_rounds)
from paper_checks.core import CLAIMS, KINDS, PAPERS, VERDICTS, Claim, Config, Outcome
from paper_checks.runner import run_claims, select

__all__ = ["CLAIMS", "KINDS", "PAPERS", "VERDICTS", "Claim", "Config", "Outcome", "run_claims",
           "select"]
