"""Issue 32, "never a second copy": ``advise --model logistic`` estimates its work as the sum of
``riskcalc.logistic.work.finite_seconds`` over the calls it makes (the estimate predict's
refusal uses), not with a table of its own that was linear in the distinct clients and blind
to the signal's scale.

Measured before (process CPU, one thread, a machine loaded by two other sessions): the whole
advice of 5 distinct clients at signal 5 took 82 s against 33 s estimated (RTFA alone 74 s
against 13 s); 50 distinct clients at signal 1 took 90 s, estimated 314 s. Now 261 s and
324 s (1.6 to 4.0 times the CPU taken over the nine federations measured)."""

import json
from collections import Counter

import numpy as np
import pytest

import riskcalc.advise.logistic as advise
from riskcalc.advise.logistic import (EVALUATIONS, PIPELINES, LogisticFederation,
                                      advise_logistic, estimate_seconds)
from riskcalc.cli import main
from riskcalc.logistic import work
from riskcalc.logistic.tuning import LAM_RANGE


class _Fake:
    """A ``LogisticClientsResult`` stand-in: a risk with one minimum at lam = 0.3."""

    def __init__(self, n, lam):
        t = 0.0 if lam is None else float(np.log(lam / 0.3))
        self.risk = np.full(n, 1.0 + t * t)
        self.test_error = np.full(n, 0.1)
        self.notes = ()


def _record(monkeypatch, fed):
    """Replace the solver entry by ``_Fake`` and record its calls: ``(method, weights, r of
    the targets)`` per call (no fixed point is solved)."""
    calls = []

    def fake(**kw):
        targets = fed.r if kw["target"] is None else fed.r[[kw["target"]]]
        calls.append((kw["method"], kw["weights"], tuple(targets)))
        return _Fake(len(targets), kw["lam"])
    monkeypatch.setattr(advise, "logistic_clients_limit", fake)
    return calls


@pytest.mark.parametrize("gamma", [[0.5, 0.5, 2.0], [1.0, 1.0, 1.0]])
def test_estimate_costs_the_calls_advise_makes(monkeypatch, gamma):
    # Three clients, two distinct (the first two equal), or one gamma (one weighting).
    fed = LogisticFederation(gamma=gamma, r=[1.0, 1.0, 0.5], signal=1.0, global_lam=0.1)
    calls = _record(monkeypatch, fed)
    advise_logistic(fed)
    searches = Counter(calls)
    assert max(searches.values()) <= EVALUATIONS
    # Each search costed EVALUATIONS times at the search's smallest penalty; FedAvg's call
    # (one per weighting) solves the global model every later call of that weighting finds
    # remembered.
    expected = Counter()
    for (method, _, targets), _ in searches.items():
        if method == "fedavg":
            expected[(method, None, targets, True)] += 1
        else:
            expected[(method, LAM_RANGE[0], targets, False)] += EVALUATIONS
    costed = Counter()
    for method, lam, targets, pooled, count in advise._solves(fed, PIPELINES):
        costed[(method, lam, tuple(targets), pooled)] += count
    assert costed == expected

    def seconds(gam, r, signal, lam, global_lam, method, targets, pooled=True):
        assert (list(gam), list(r), signal, global_lam) == (list(fed.gamma), list(fed.r),
                                                             fed.signal, fed.global_lam)
        return 1.0
    # every costed call is a work.finite_seconds of this federation
    monkeypatch.setattr(advise, "finite_seconds", seconds)
    assert estimate_seconds(fed) == sum(expected.values())


def test_estimate_is_the_sum_of_finite_seconds():
    fed = LogisticFederation(gamma=[0.5, 2.0], r=[1.0, 0.5], signal=2.0, global_lam=0.1)
    args = (fed.gamma, fed.r, fed.signal)
    glob = work.finite_seconds(*args, None, 0.1, "fedavg", fed.r)
    per = {m: sum(work.finite_seconds(*args, LAM_RANGE[0], 0.1, m, [r], pooled=False)
                  for r in fed.r) for m in ("rtfa", "local_ridge")}
    fedprox = work.finite_seconds(*args, LAM_RANGE[0], 0.1, "pfedme", fed.r, pooled=False)
    # Two weightings (unequal gammas); local ridge has no global model and one weighting.
    assert estimate_seconds(fed, ["fedavg"]) == pytest.approx(2 * glob)
    assert estimate_seconds(fed, ["rtfa"]) == pytest.approx(2 * (glob + EVALUATIONS
                                                                 * per["rtfa"]))
    assert estimate_seconds(fed, ["local_ridge"]) == pytest.approx(EVALUATIONS
                                                                   * per["local_ridge"])
    assert estimate_seconds(fed, ["fedprox"]) == pytest.approx(2 * (glob + EVALUATIONS
                                                                    * fedprox))
    # The global model once per weighting for all the pipelines that share it.
    assert estimate_seconds(fed) == pytest.approx(2 * glob + 2 * EVALUATIONS * (
        per["rtfa"] + fedprox) + EVALUATIONS * per["local_ridge"])


def test_a_remembered_global_model_is_not_costed_again():
    g, r = [0.5, 1.0, 2.0], [1.0, 1.0, 0.5]
    for method, lam in (("rtfa", 0.1), ("pfedme", 0.1), ("fedavg", None)):
        full = work.finite_seconds(g, r, 2.0, lam, 0.1, method, r)
        bare = work.finite_seconds(g, r, 2.0, lam, 0.1, method, r, pooled=False)
        assert full - bare == pytest.approx(work.finite_seconds(g, r, 2.0, None, 0.1, "fedavg",
                                                                r) - work.SECONDS_CALL)
    assert work.finite_seconds(g, r, 2.0, None, 0.1, "fedavg", r,
                               pooled=False) == work.SECONDS_CALL
    # local ridge uses no global model either way
    assert work.finite_seconds(g, r, 2.0, 0.1, 0.1, "local_ridge", r) == work.finite_seconds(
        g, r, 2.0, 0.1, 0.1, "local_ridge", r, pooled=False)


def _fed(groups, signal=1.0):
    return LogisticFederation(gamma=np.linspace(0.5, 2.0, groups),
                              r=np.linspace(0.8, 1.2, groups), signal=signal, global_lam=0.1)


def test_estimate_grows_quadratically_in_the_distinct_clients():
    # The global model and the FedProx point are joint fixed points over the G groups:
    # (EVALS_PER_ROOT + G + 3) and (EVALS_PER_ROOT + 3G) evaluations of G rules per root.
    assert estimate_seconds(_fed(100)) > 2.5 * estimate_seconds(_fed(50))
    for method in ("fedavg", "pfedme"):
        assert estimate_seconds(_fed(100), [method]) > 3 * estimate_seconds(_fed(50),
                                                                              [method])
    # 50 groups measured at 90 s of CPU (58 s of it the FedProx searches)
    assert estimate_seconds(_fed(50)) >= 90.0 and estimate_seconds(_fed(50), ["pfedme"]) >= 58


def test_estimate_reacts_to_the_signal_scale():
    # Measured: RTFA's searches over 5 groups took 1.4 s at signal 1 and 74 s at signal 5 (the
    # label weight's axis beyond the Gauss-Hermite reach climbs the whole ladder), 27 s over 2.
    assert estimate_seconds(_fed(5, 5.0), ["rtfa"]) >= 73.6
    assert estimate_seconds(_fed(2, 5.0), ["rtfa"]) >= 27.2
    assert estimate_seconds(_fed(5, 1.0), ["rtfa"]) >= 1.4
    assert estimate_seconds(_fed(5, 5.0)) > 5 * estimate_seconds(_fed(5, 1.0))


def test_fine_tuning_ladder_levels():
    # signal 1, r 1: all axes Gauss-Hermite, the first level settles (measured: 24 or 32);
    # signal 5, r 1: the label weight's axis beyond the reach, the whole ladder (measured);
    # signal 10: panels from the path rule on, two levels of panels at once (measured: 32).
    def levels(signal, r):
        kappa = np.hypot(signal, r)
        return work.ladder3(kappa, (signal ** 2 / kappa, signal * r / kappa,
                                    signal * r / kappa))
    assert levels(1.0, 1.0) == (16, 24)
    assert levels(5.0, 1.0) == (16, 24, 32, 48, 72, 100)
    assert levels(10.0, 1.0) == (16, 24)
    # signal = r = 10: margins' axes beyond the reach do not climb (2.9 s measured at M = 5)
    assert levels(10.0, 10.0) == (16, 24)


def test_cli_refuses_before_solving_on_the_new_estimate(tmp_path, capsys, monkeypatch):
    def never(*a, **k):
        raise AssertionError("solved although refused")
    monkeypatch.setattr(advise, "advise_logistic", never)
    rng = np.random.default_rng(1)
    # 5 groups at signal 5 took 82 s (estimated 33 s before: let through at one minute), and
    # the pipelines named to keep fit; 500 distinct clients, hours: refused at once.
    for groups, signal, minutes, fits in ((5, 5.0, 1.0, "fedavg,pfedme"), (500, 1.0, 10.0, "")):
        gamma = (np.linspace(0.5, 2.0, groups) if groups == 5
                 else rng.uniform(0.3, 3.0, groups))
        r = np.linspace(0.8, 1.2, groups) if groups == 5 else rng.uniform(0.2, 2.0, groups)
        path = tmp_path / f"fed{groups}.json"
        path.write_text(json.dumps({"fedrisk_federation": 1, "signal": signal, "clients": [
            {"gamma": float(a), "r": float(b)} for a, b in zip(gamma, r)]}))
        code = main(["advise", "--model", "logistic", "--federation", str(path),
                     "--global-lam", "0.1", "--max-minutes", str(minutes), "--no-progress"])
        err = capsys.readouterr().err.strip().splitlines()
        assert code == 2 and len(err) == 1
        assert f"advise --model logistic ({groups} clients): estimated" in err[0]
        fed = LogisticFederation(gamma=gamma, r=r, signal=signal, global_lam=0.1)
        assert estimate_seconds(fed) > 60.0 * minutes
        if fits:
            assert f"--methods {fits} would take about" in err[0]
            assert estimate_seconds(fed, fits.split(",")) <= 60.0 * minutes
        else:
            assert "every pipeline alone exceeds it" in err[0]
