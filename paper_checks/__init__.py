"""paper_checks: every checkable claim of the four papers, with evidence and a verdict.

A consumer layer (DESIGN.md): it imports ``riskcalc`` (theory, ``riskcalc.minimax``) and
``montecarlo`` (simulation) and is imported by neither. One module per paper registers its
claims in ``CLAIMS`` (``paper_checks.core``):

* ``p003``: Cheng, Chadha, Duchi, *Federated asymptotics* (003_4b976ddf5225c17e.txt);
* ``p000``: Chen, Zheng, Long, Su, *Minimax estimation for personalized FL* (``000_...``; 002 is
  the same paper);
* ``p004``: *The effect of personalization in FedProx* (004_98172ed3646eef14.txt);
* ``p001``: Hanzely et al., *Lower bounds and optimal algorithms for personalized FL* (``001_...``).

``run_claims`` evaluates a selection; ``python -m paper_checks.report`` regenerates REPORT.md;
``riskcalc check`` prints the table or JSON.
"""

from paper_checks import errata, more_claims, p000, p001, p003, p004, p004_code  # noqa: F401
from paper_checks.core import CLAIMS, KINDS, PAPERS, VERDICTS, Claim, Config, Outcome
from paper_checks.runner import run_claims, select

__all__ = ["CLAIMS", "KINDS", "PAPERS", "VERDICTS", "Claim", "Config", "Outcome", "run_claims",
           "select"]
