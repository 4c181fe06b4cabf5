"""Issue 32 / 29 (fuzz pass 17): FTFA after the rounds with a divergent step, and the options
around it, read and refused the same way on every route: ``--steps`` named as the option without
--rounds as with it, and a step size given with exact local solves (``local_steps=inf``, no
step) refused by ``rounds_limit`` as the command line refuses ``--local-step-size`` there.
"""

import numpy as np
import pytest

import riskcalc
from tests.test_hardening_ninth import _one_error_line


# was: "error: steps must lie in [0, inf), got -1.0" (the Python name, the float).
@pytest.mark.parametrize("extra", [[], ["--clients", "3"]])
def test_plain_steps_named_as_the_option(extra, capsys):
    line = _one_error_line(["predict", "ftfa", "--gamma", "0.5", "--r", "1", "--sigma", "1",
                            "--steps", "-1", "--step-size", "0.1", *extra], capsys)
    assert line == "error: --steps must be an integer >= 0 and <= 9007199254740992, got -1"


# was: accepted and dropped (the same curve at every step_size).
@pytest.mark.parametrize("method, kw", [("fedavg", {}), ("pfedme", {"lam": 1.0}),
                                        ("fedavg", {"spectrum": "two-point:1,4,0.5"})])
def test_step_size_with_exact_local_solves_is_refused(method, kw):
    args = dict(gamma=[0.5, 2.0], r=1.0, sigma=0.5, signal=1.0, rounds=[1], **kw)
    with pytest.raises(ValueError, match=r"^step_size = 0\.1: local_steps=inf is the exact "
                       r"local solve, no step: step_size applies to finite local_steps only; "
                       r"leave it out$"):
        riskcalc.rounds_limit(method, local_steps=np.inf, step_size=0.1, **args)
    # Without it the exact local solve answers.
    assert np.isfinite(riskcalc.rounds_limit(method, local_steps=np.inf, **args).risk).all()


def test_divergent_ftfa_on_the_chain_route_grows_at_the_steps_rate(monkeypatch):
    """Noiseless, one target (r = sigma = 0): the identity client's personalized risk is
    R(k) = E sum_l (1 - eta' l)^(2k) |<u_l, w_T - theta>|^2 over its sample eigenvalues l, a
    moment sequence of a positive measure on [(1 - sqrt g)^2, (1 + sqrt g)^2]: log-convex in k
    (Cauchy-Schwarz: R(k)^2 <= R(k - 1) R(k + 1)), so R(k + 1) / R(k) is nondecreasing, and at
    most rho^2, rho = max |1 - eta' l| there (1.62 at eta' = 0.9, g = 0.5). On the chain route
    (forced: it answered these steps with a refusal before), at T = 0 and 1 (the fixed point
    is theta itself here: risk 0)."""
    import riskcalc.linear.dynamics.shift.curves as shift_curves

    curve = riskcalc.rounds_limit("fedavg", gamma=[0.5, 2.0], r=0.0, sigma=0.0, signal=1.0,
                                  rounds=[0, 1], local_steps=1, step_size=0.05,
                                  spectra=["identity", "scaled:2"])
    curve.personalized_risk(steps=1, step_size=0.01)       # the curves solved (dense pencil)
    monkeypatch.setattr(shift_curves, "MAX_UNKNOWNS", 1)
    eta, g = 0.9, 0.5
    R = np.array([curve.personalized_risk(steps=k, step_size=eta)[0] for k in (1, 2, 3)])
    rho = max(abs(1.0 - eta * (1.0 - np.sqrt(g)) ** 2), abs(1.0 - eta * (1.0 + np.sqrt(g)) ** 2))
    ratio = R[1:] / R[:-1]
    assert np.all(ratio[1] >= ratio[0] * (1.0 - 1e-9))
    assert np.all(ratio <= rho ** 2 * (1.0 + 1e-9)) and np.all(ratio[1] > 1.0)
