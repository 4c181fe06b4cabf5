"""Issue 32, session 26's fuzz (``/work/wt/fuzz26_report.md`` in the session note): advise
--rounds lost the whole advice to one candidate's solver failure; Algorithm 1's rate at small
eta lam."""

import numpy as np
import pytest

import riskcalc.linear.dynamics as dynamics
from riskcalc.advise import Federation, advise
from riskcalc.errors import SolverError

FED = dict(gamma=[0.5, 1.5, 2.0], r=[0.3, 0.5, 1.0], sigma=[1.0, 0.5, 0.5])


@pytest.mark.parametrize("method", ["fedavg", "pfedme"])
def test_advise_rounds_skips_a_candidate_whose_solver_fails(method, monkeypatch):
    """Every r_j = 0 under a two-point spectrum: pFedMe tunes lam to 2.7e8, where the
    spectrum route's pencil did not converge; that SolverError ended ``advise --rounds``
    ("error: rounds limit with a spectrum ...") instead of skipping the one candidate.
    Forced here on a small federation for either kind of rounds candidate."""
    real = dynamics.rounds_limit

    def failing(name, **kw):
        if name == method:
            raise SolverError("rounds limit: Newton's method on the pencil did not converge")
        return real(name, **kw)

    monkeypatch.setattr(dynamics, "rounds_limit", failing)
    adv = advise(Federation(**FED), methods=["fedavg", "pfedme"], rounds=5, signal=1.0)
    names = {c.method for c in adv.candidates}
    assert {"fedavg", "pfedme"} <= names
    assert f"{method}_rounds" not in names
    assert any(s.startswith(f"{method} along the rounds") and "did not converge" in s
               for s in adv.skipped), adv.skipped
    other = "pfedme" if method == "fedavg" else "fedavg"
    assert f"{other}_rounds" in names
    assert np.isfinite(adv.recommended.mean_risk)
