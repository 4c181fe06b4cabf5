"""Shortcuts of ``advise`` at 1000 clients under covariate shift (shift1000 of
``benchmarks/bench_advise.py``), each against the long way:

* the optimal-weights searches start RTFA and MAML-FL from FTFA's optimal weights too, and
  pFedMe from MAML-FL's (``riskcalc.advise.weights``' docstring: RTFA 124 -> 47 gradient
  calls there): the starts each search is given, recorded, on a small Sigma = I federation
  (the same wiring as under shift);
* ``shift_gradient``'s one complex step in both roles of the weights equals the two steps.
"""

import os
import sys

import numpy as np
import pytest

import riskcalc.advise.candidates as advise_mod
from riskcalc.advise import Federation, advise, tune
from riskcalc.linear.engine.joint_spectrum import joint_spectrum
from riskcalc.linear.finite_clients.shift.limits import evaluate, global_point

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "benchmarks"))
from bench_advise import SHIFT_TYPES  # noqa: E402

FED = Federation(gamma=[0.5, 1.5, 2.0, 3.0], r=[0.5, 1.0, 1.5, 0.8],
                 sigma=[1.0, 0.5, 0.5, 0.9])


def _record(monkeypatch, methods, lbfgs=True):
    """The advice and, per search in order, the starts it was given and what its ``more``
    returned each time it was asked (None: no ``more``). ``lbfgs``: every search on the
    L-BFGS-B route (``weights.optimize``), as at 1000 clients."""
    if lbfgs:
        monkeypatch.setattr(advise_mod.wopt, "NEWTON_MAX", 0)
    calls = []
    real = advise_mod.wopt.optimize

    def spy(objective, starts, m, *args, more=None, **kwargs):
        given = [(np.array(p, float), np.array(x, float)) for p, x in starts]
        extra = None if more is None else []

        def asked():
            out = more()
            extra.append([(np.array(p, float), np.array(x, float)) for p, x in out])
            return out

        calls.append((given, extra))
        return real(objective, starts, m, *args, more=None if more is None else asked,
                    **kwargs)

    monkeypatch.setattr(advise_mod.wopt, "optimize", spy)
    return advise(FED, methods), calls


@pytest.fixture(scope="module")
def recorded():
    with pytest.MonkeyPatch.context() as mp:
        return _record(mp, ["ftfa", "rtfa", "maml_fl", "pfedme"])


def test_searches_start_from_a_related_pipelines_optimal_weights(recorded):
    adv, (ftfa, rtfa, maml, pfedme) = recorded
    near = next(c.p for c in adv.candidates if (c.method, c.weights) == ("ftfa", "optimal"))
    # RTFA: the sample and uniform starts, then FTFA's weights with the penalties tuned there
    # (lam = 0, interpolation best, as a small penalty: ``_rtfa``'s log_start).
    assert len(rtfa[0]) == 2 and len(rtfa[1]) == 1 and len(rtfa[1][0]) == 1
    (p_r, x_r), = rtfa[1][0]
    lam = tune.rtfa_lams(FED, near)[0]
    np.testing.assert_array_equal(p_r, near)
    np.testing.assert_array_equal(
        x_r, np.log(np.where(lam > 0, lam, 1e-8 * np.max(lam, initial=1e-8))))
    # MAML-FL: its two starts, then FTFA's weights with each of their alphas.
    assert len(maml[0]) == 2 and len(maml[1]) == 1 and len(maml[1][0]) == 2
    for (p, x), (q, y) in zip(maml[0], maml[1][0]):
        np.testing.assert_array_equal(q, near)
        np.testing.assert_array_equal(y, x)
        assert not np.array_equal(p, near)
    # pFedMe: its two starts, then MAML-FL's optimal weights with each of their lams.
    maml_p = next(c.p for c in adv.candidates if (c.method, c.weights) == ("maml_fl", "optimal"))
    assert len(pfedme[0]) == 2 and len(pfedme[1]) == 1 and len(pfedme[1][0]) == 2
    for (p, x), (q, y) in zip(pfedme[0], pfedme[1][0]):
        np.testing.assert_array_equal(q, maml_p)
        np.testing.assert_array_equal(y, x)
    # FTFA itself: the sample and uniform weights only.
    assert len(ftfa[0]) == 2 and ftfa[1] is None
    # The searches keep the best point found: never worse than the added start.
    cand = {(c.method, c.weights): c for c in adv.candidates}
    start = advise_mod.clients_limit("rtfa", lam=np.exp(x_r), weights=near,
                                     **FED.limit_kwargs()).mean_risk
    assert cand["rtfa", "optimal"].mean_risk <= start


def test_no_extra_start_off_the_lbfgs_route_or_without_ftfa(monkeypatch):
    # Small federations (simplex_newton, SLSQP): not asked for (weights' docstring, het5).
    _, calls = _record(monkeypatch, ["ftfa", "rtfa", "maml_fl"], lbfgs=False)
    assert [(len(given), extra) for given, extra in calls] == [(2, None), (2, []), (2, [])]
    _, calls = _record(monkeypatch, ["rtfa"])
    assert [(len(given), extra) for given, extra in calls] == [(2, [[]])]


@pytest.mark.parametrize("method", ["fedavg", "ftfa", "rtfa"])
def test_one_step_in_both_weights_is_the_two_steps(method):
    """``shift_gradient`` moves p_self and p_oth in one complex step: with the pair sum
    linearized the risks see p_self alone and the columns p_oth alone, so each part equals
    its own step's bit for bit."""
    rng = np.random.default_rng(7)
    m = 6
    gam, r, sig = rng.uniform(0.3, 4.0, m), rng.uniform(0.2, 2.0, m), rng.uniform(0.1, 1.5, m)
    p = rng.uniform(0.5, 2.0, m)
    p /= p.sum()
    lam = rng.uniform(0.1, 3.0, m) if method == "rtfa" else np.zeros(m)
    joint = joint_spectrum([SHIFT_TYPES[j % 3] for j in range(m)])
    typ, count, tgt = joint.types, np.ones(m), np.arange(m)
    g, om, _, _, rho = global_point(gam, p, count, typ, joint.weights, joint.values)
    base = {"p_self": p, "p_oth": p, "g": g, "wt_tot": np.bincount(typ, om, minlength=3),
            "rho_tot": rho, "lam": lam}
    memo = {}
    parts = evaluate(method, gam, r, sig, count, joint=joint, typ=typ, tgt=tgt,
                     pairs=count / m, memo=memo, **base)[2]

    def step(*names):
        args = dict(base, **{n: base[n] + 1e-30j for n in names})
        b, v, cols = evaluate(method, gam, r, sig, count, joint=joint, typ=typ, tgt=tgt,
                              pairs=parts, memo=memo, **args)
        return (b + v).imag, np.array(cols).imag

    both, own, others = step("p_self", "p_oth"), step("p_self"), step("p_oth")
    assert np.all(own[0] != 0) and np.all(others[1] != 0)
    np.testing.assert_array_equal(both[0], own[0])
    np.testing.assert_array_equal(both[1], others[1])
