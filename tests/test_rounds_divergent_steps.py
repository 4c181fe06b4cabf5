"""Issue 32 / 29 (fuzz pass 17): FTFA after the rounds with a divergent step is a result on the
covariate-shift chain route too (``shift.personalize_chain``, "Divergence": its scaled basis),
and the options around it are read and refused the same way on every route: ``--steps`` named
as the option without --rounds as with it, and a step size given with exact local solves
(``local_steps=inf``, no step) refused by ``rounds_limit`` as the command line refuses
``--local-step-size`` there.
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
    if "spectrum" not in kw:    # without it the exact local solve answers
        assert np.isfinite(riskcalc.rounds_limit(method, local_steps=np.inf, **args).risk).all()


#: Both clients of covariance I, the first written so that the covariate-shift route (its
#: pencils, its chain personalization) takes it: Sigma = I's route is then an independent one.
IDENTITY_SHIFT = ["two-point:1,1,0.5", "identity"]


def _chain_curve(monkeypatch, **kw):
    """The covariate-shift curve with the personalization forced onto the chain route (the
    curves solved first on the dense pencil, M K^2 = 2)."""
    import riskcalc.linear.dynamics.shift.curves as shift_curves

    curve = riskcalc.rounds_limit("fedavg", **kw, spectra=IDENTITY_SHIFT)
    curve.personalized_risk(steps=1, step_size=0.01)
    monkeypatch.setattr(shift_curves, "MAX_UNKNOWNS", 1)
    return curve


def test_divergent_ftfa_on_the_chain_route_grows_at_the_steps_rate(monkeypatch):
    """Noiseless (r = sigma = 0): client 0's personalized risk is R(k) = E sum_l (1 - eta'
    l)^(2k) |<u_l, w_T - theta>|^2 over its sample eigenvalues l, a moment sequence of a
    positive measure on [(1 - sqrt g)^2, (1 + sqrt g)^2]: log-convex in k (Cauchy-Schwarz:
    R(k)^2 <= R(k - 1) R(k + 1)), so R(k + 1) / R(k) is nondecreasing, and at most rho^2, rho
    = max abs(1 - eta' l) there (1.62 at eta' = 0.9, g = 0.5). On the chain route (forced: it
    answered these steps with a refusal before) at k = 1, 2, equal to Sigma = I's route, k = 0
    the server model; at T = 1 (the fixed point is theta itself here: risk 0)."""
    kw = dict(gamma=[0.5, 2.0], r=0.0, sigma=0.0, signal=1.0, rounds=[1], local_steps=1,
              step_size=0.05)
    curve, plain = _chain_curve(monkeypatch, **kw), riskcalc.rounds_limit("fedavg", **kw)
    eta, g = 0.9, 0.5
    R = np.array([curve.personalized_risk(steps=k, step_size=eta) for k in (1, 2)])
    want = np.array([plain.personalized_risk(steps=k, step_size=eta) for k in (1, 2)])
    np.testing.assert_allclose(R, want, rtol=1e-8)
    R = np.concatenate([curve.global_risk[None, :, :], R])     # k = 0: the server model
    rho = max(abs(1.0 - eta * (1.0 - np.sqrt(g)) ** 2), abs(1.0 - eta * (1.0 + np.sqrt(g)) ** 2))
    ratio = R[1:, 0] / R[:-1, 0]
    assert np.all(ratio[1] >= ratio[0] * (1.0 - 1e-9))
    assert np.all(ratio <= rho ** 2 * (1.0 + 1e-9))


def test_steep_divergence_on_the_chain_route_equals_sigma_identity(monkeypatch):
    """Growth 290^4 and 582^4 per unit (2 steps of 100): the scaled chain against Sigma = I's
    Marchenko-Pastur route, every T (measured 2e-14 at 4 steps, where the dense route is
    7e-12 off)."""
    kw = dict(gamma=[0.5, 2.0], r=1.0, sigma=0.5, signal=1.0, rounds=[0, 1, np.inf],
              local_steps=1, step_size=0.05)
    got = _chain_curve(monkeypatch, **kw).personalized_risk(steps=2, step_size=100.0)
    want = riskcalc.rounds_limit("fedavg", **kw).personalized_risk(steps=2, step_size=100.0)
    assert want.min() > 1e7
    np.testing.assert_allclose(got, want, rtol=1e-8)
