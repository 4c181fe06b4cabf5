"""Issue 32, the findings of a fresh fuzz of about 230 inputs (their numbers, #1-#12, are the
issue note's of session 26): advise --rounds lost to one candidate's solver failure, Algorithm
1's rate at small eta lam, estimate on repeated rows, the own models under shift holding M
times their blocks, and messages that named the wrong cause or none."""

import numpy as np
import pytest

import riskcalc
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


G3 = dict(gamma=[0.5] * 3, r=1.0, sigma=1.0, signal=1.0, local_steps=1, step_size=0.1)


@pytest.fixture
def no_quadrature_scan(monkeypatch):
    """The quadrature edge scan (``QuadPsiLaws``) made to fail: 2 s per edge, 39 s per call."""
    from riskcalc.linear.dynamics.algorithm1.laws import QuadPsiLaws

    def slow(self, omega):
        raise AssertionError("the quadrature edge scan ran")

    monkeypatch.setattr(QuadPsiLaws, "cauchy", slow)


def test_small_lam_is_local_gradient_descent(no_quadrature_scan):
    """Algorithm 1 (g = 1 / lam, K = 1) at lam -> 0: each client's own model takes T plain
    local gradient steps (the prox's pull to the server vanishes), ``steps_limit('local')``:
    fuzz26 #2, which ran for minutes at lam = 1e-12 (0.01: 42 s, the folds failing and the
    quadrature scan taking over), now by the exact partial fractions in about 2 s."""
    own = riskcalc_rounds(lam=1e-9, rounds=[10]).risk[:, 0]
    local = riskcalc.steps_limit("local", gamma=0.5, sigma=1.0, rho=2 ** 0.5, steps=10,
                                 step_size=0.1).risk
    np.testing.assert_allclose(own, local, rtol=1e-6)


def test_exact_edges_meet_the_folds():
    """The partial fractions' top of the round map against the folds' (``fast_contraction``,
    an independent route) where both answer (lam 0.03): the quadrature scan's was 4.5e-7
    outside."""
    from riskcalc.linear.dynamics.algorithm1 import rate
    from riskcalc.linear.dynamics.algorithm1.laws import PsiLaws

    gam, p = np.full(3, 0.5), np.full(3, 1.0 / 3.0)
    fold = rate.fast_contraction(gam, p, 0.03, 0.1, 1, 1.0 / 0.03)["top"]
    exact = rate.contraction(gam, p, 0.03, 0.1, 1, 1.0 / 0.03, laws=PsiLaws)["top"]
    assert abs(fold - exact) < 1e-10


def test_below_floating_point_refused_at_once(no_quadrature_scan):
    """lam = 1e-16 (eta lam = 1e-17): the folds and the partial fractions failed and the
    quadrature scan after them, after 40 s; eta lam below the rounding of 1 is refused at once,
    naming the smallest lam the route takes (whose curves are within 1e-8 of lam -> 0's)."""
    with pytest.raises(ValueError, match=r"eta lam = 1e-17 is below the rounding.*lam >= 2.22e-15"):
        riskcalc_rounds(lam=1e-16, rounds=[5])
    near = riskcalc_rounds(lam=5e-15, rounds=[10]).risk[:, 0]     # eta lam = 5e-16 answers
    local = riskcalc.steps_limit("local", gamma=0.5, sigma=1.0, rho=2 ** 0.5, steps=10,
                                 step_size=0.1).risk
    np.testing.assert_allclose(near, local, rtol=1e-8)


def riskcalc_rounds(**kw):
    return riskcalc.rounds_limit("pfedme", **G3, **kw)


def test_a_skip_for_infinite_risks_says_why():
    """Two clients at gamma = 1: MAML-FL's risk is infinite at every alpha of its grid (no
    SolverError), and the skip ended on an empty reason ("... (0.00025 to 0.5): ")."""
    adv = advise(Federation(gamma=[1.0, 1.0], r=[1.0, 1.0], sigma=[1.0, 1.0]),
                 methods=["fedavg", "maml_fl"])
    why = [s for s in adv.skipped if s.startswith("maml_fl")]
    assert why and all("interpolation threshold" in s for s in why), adv.skipped


def test_ftfa_with_rounds_points_to_the_verb_that_does_it(capsys):
    """``predict ftfa --rounds`` is refused (FTFA is a personalization of a server model):
    the refusal names the command that prints FTFA after T rounds."""
    from riskcalc.cli import main

    code = main(["predict", "ftfa", "--gamma", "0.5", "--sigma", "1", "--r", "1", "--signal",
                 "1", "--clients", "3", "--rounds", "10", "--local-steps", "1",
                 "--local-step-size", "0.3"])
    err = capsys.readouterr().err
    assert code == 2 and "predict fedavg --rounds ... --steps S --step-size E" in err, err


def test_pencil_size_refusal_names_clients_not_local_steps():
    """The spectrum pencil with 201 clients and one block each (as for local_steps = inf,
    the exact local solve) said "spectrum with local_steps = 1" to a user who gave inf, and
    named no fix."""
    from riskcalc.linear.dynamics.sigma.sigma_pencil import SigmaPencil

    with pytest.raises(ValueError, match=r"201 clients and 1 local-step block.*at most 200 "
                                         r"clients") as info:
        SigmaPencil([0.5, 2.0], [0.5, 0.5], np.full(201, 0.5), np.full(201, 1 / 201), 0.1, 1)
    assert "local_steps = 1" not in str(info.value)


def test_estimate_refuses_repeated_rows():
    """Every row of a client twice (fuzz26 #5): the estimates took the repeats for samples and
    answered confidently wrong (sigma 0.3 +- 0.03 for 0.5, sigma 4e-14 where 20 distinct rows
    met d = 20); refused, counting the repeats. The same rows once are estimated."""
    from riskcalc.estimate import estimate

    rng = np.random.default_rng(5)
    X = rng.standard_normal((90, 20))
    y = X @ (rng.standard_normal(20) / np.sqrt(20)) + 0.5 * rng.standard_normal(90)
    client = np.repeat([0, 1, 2], 30)
    assert estimate(X, y, client) is not None
    twice = np.concatenate([np.arange(90), np.arange(90)])
    with pytest.raises(ValueError, match=r"^90 rows repeat an earlier row of the same client"):
        estimate(X[twice], y[twice], client[twice])
    other = client[twice].copy()
    other[90:] = (other[90:] + 1) % 3          # the same rows under another client: no repeat
    assert estimate(X[twice], y[twice], other) is not None


def test_rtfa_global_lam_range_says_why_and_what_answers():
    """RTFA's global_lam stops at 1e3 (FedAvg's at 1e20): the refusal was the bare range;
    it says why and names local ridge, RTFA's global_lam -> inf limit (at 1e3 already within
    1e-5: 2.833272 against 2.833251 for three clients at gamma 2, lam 0.1)."""
    from riskcalc.logistic.finite_clients import logistic_clients_limit

    with pytest.raises(ValueError, match=r"\[0, 1000\] for rtfa, got 1e\+12: .*local ridge"):
        logistic_clients_limit(method="rtfa", gamma=[2.0] * 3, r=[1.0] * 3, signal=1.0,
                               lam=0.1, global_lam=1e12)


def test_own_models_under_shift_hold_only_each_clients_block(monkeypatch):
    """The own models' two-point blocks under covariate shift (``shift.own_chain``): client i
    in its own measure only. The full (couplings, M, M + 1, N, 2 N) array was built and its
    diagonal kept: 6.4 GB at 301 clients (fuzz26 #6, 'Unable to allocate' under a 6 GB cap),
    beyond the memory estimate, which counts the diagonal; now 1.9 GB peak there, 19 s. The
    diagonal mode equals the full array's diagonal (two clients, two covariances, K = 2)."""
    import riskcalc.linear.dynamics.shift.curves as sc
    import riskcalc.linear.dynamics.shift.own as so
    import riskcalc.linear.dynamics.shift.own_chain as oc
    from riskcalc.linear.dynamics.shift.chain import ShiftChain
    from riskcalc.linear.engine.joint_spectrum import joint_spectrum

    calls = []
    blocks = oc.own_blocks

    def record(own, one, couplings, hv, columns=None):
        calls.append((own, one, couplings, hv, columns))
        return blocks(own, one, couplings, hv, columns)

    contour = {}

    def keep(pen, c, *args, **kw):          # the dense route's contour, as its tests take it
        contour["c"] = c
        return dense(pen, c, *args, **kw)

    dense = so.own_models_shift
    monkeypatch.setattr(so, "own_models_shift", keep)
    monkeypatch.setattr(oc, "own_blocks", record)
    gam, r, sig, p = (np.array(x) for x in ([0.3, 0.6], [0.5, 1.0], [0.5, 0.7], [0.4, 0.6]))
    rounds = np.array([0.0, 1, 3])
    joint = joint_spectrum(["two-point:1,4,0.5", "two-point:3,1,0.5"])
    sc.shift_k_curves(gam, r, sig, p, 1.0, 0.15, 2, 0.8, rounds, joint, route="dense")["local"]()
    oc.own_models_shift_chain(ShiftChain(joint, gam, p, 0.15, 2), contour["c"], gam, r, sig, p,
                              1.0, rounds)
    assert calls
    for own, one, couplings, hv, columns in calls:
        diag = np.arange(own.M)
        full = own.two_point(one, couplings, hv, columns=columns)
        part = own.two_point(one, couplings, hv, columns=columns, diagonal=True)
        assert part.shape == full[:, diag, 1 + diag].shape and part.ndim == full.ndim - 1
        np.testing.assert_allclose(part, full[:, diag, 1 + diag], rtol=1e-13, atol=0)
