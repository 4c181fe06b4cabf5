"""Covariate shift's target chains batched across covariance types: per-point atoms in
``riskcalc.linear.engine.resolvent_chain`` (each point with its own eigenvalues on shared
atom masses) against the shared-atoms route point by point (the unbatched route), and
``clients_limit(..., spectra=)`` against a copy of the old code's numbers (5fcbd35, one batch
per type; MAML-FL's own variances one group at a time)."""

import numpy as np
import pytest

from riskcalc.linear.engine.resolvent_chain import chain_traces, chain_vectors, diagonal_roots
from riskcalc.linear.finite_clients import clients_limit

RNG = np.random.default_rng(np.random.SeedSequence([30, 1000, 7]))
B, N, K = 7, 3, 4
W = np.array([0.2, 0.5, 0.3])
ATOMS = RNG.uniform(0.3, 5.0, (B, N))
GAMMA = RNG.uniform(0.3, 4.0, B)
GAMMA[:3] += 1.2                                 # projection blocks need gamma > 1
ETA = np.column_stack([RNG.uniform(0.1, 3.0, B), np.zeros(B), RNG.uniform(0.1, 3.0, (B, K - 2))])
ETA[3:, 1] = 0.4                                 # gamma may be <= 1 there: a ridge block
SHIFTS = RNG.uniform(0.1, 2.0, (B, K, N))
MIDDLES = RNG.uniform(-1.0, 2.0, (B, K, N))


def test_per_point_atoms_equal_the_shared_atoms_route():
    roots = np.column_stack([diagonal_roots(GAMMA, ATOMS, W, ETA[:, a], SHIFTS[:, a])
                             for a in range(K)])
    traces = chain_traces(GAMMA, ATOMS, W, ETA, SHIFTS, MIDDLES)
    with_roots = chain_traces(GAMMA, ATOMS, W, ETA, SHIFTS, MIDDLES, roots)
    vectors = chain_vectors(GAMMA, ATOMS, W, ETA, SHIFTS, MIDDLES, roots)
    for b in range(B):
        one = [diagonal_roots(GAMMA[b], ATOMS[b], W, ETA[b, a], SHIFTS[b, a]) for a in range(K)]
        # The same elementwise operations per point; only a dot product's rounding order
        # may differ (a few ulps of terms of the values' size).
        np.testing.assert_allclose(roots[b], one, rtol=1e-14)
        ref = chain_traces(GAMMA[b], ATOMS[b], W, ETA[b], SHIFTS[b], MIDDLES[b])
        np.testing.assert_allclose([traces[b], with_roots[b]], ref, rtol=1e-13)
        np.testing.assert_allclose(vectors[b] @ MIDDLES[b, -1], ref, rtol=1e-13)
    # The points differ (the test would see atoms mixed up between points).
    assert np.ptp(traces) > 0.1 * np.max(np.abs(traces))


def test_per_point_atoms_shape_errors():
    with pytest.raises(ValueError, match="atoms must have shape"):
        chain_traces(GAMMA, ATOMS[:, :2], W, ETA, SHIFTS, MIDDLES)
    with pytest.raises(ValueError, match="one number of points"):
        chain_traces(GAMMA, ATOMS[:3], W, ETA, SHIFTS, MIDDLES)
    with pytest.raises(ValueError, match="shift and atoms must have shape"):
        diagonal_roots(GAMMA, ATOMS[:, :2], W, ETA[:, 0], SHIFTS[:, 0])


#: Four clients of three covariance types (two of the first), explicit weights; the old
#: code's bias and variance per client (5fcbd35, ``repr`` of its floats).
KW = dict(gamma=[0.6, 1.7, 2.5, 3.2], r=[0.4, 1.2, 0.8, 1.5], sigma=[0.9, 0.3, 0.6, 1.1],
          spectra=["two-point:1,4,0.5", "two-point:4,1,0.5", "scaled:2", "two-point:1,4,0.5"],
          weights=[0.4, 0.1, 0.3, 0.2])
OLD = {
    "fedavg": ([1.3312460386444567, 3.7026755752484912, 2.027486697822256, 4.877925672909938],
               [0.40009631593036, 0.5199674494236429, 0.3680255061416011, 0.4000963159303598]),
    "ftfa": ([0.0, 1.7322470691136962, 1.7501339495549106, 4.143511609072977],
             [1.2149999999999999, 0.35798296427781784, 0.5163070815736535,
              0.9244348274202547]),
    "rtfa": ([0.019976275756180287, 2.017343714303599, 1.8158504504188517, 4.143516320974787],
             [0.9374897138301622, 0.30990334090468574, 0.4095453124935593,
              0.9241362376474319]),
}


OLD["maml_fl"] = ([0.0, 1.460333832291979, 1.2906402350551107, 3.8492675472023965],
                  [1.2149999999999999, 0.36062291277534425, 0.5367084217702333,
                   0.9478927625108501])

OLD["pfedme"] = ([0.13011529542255126, 1.570618128540785, 1.1435128673902932, 3.745611196269225],
                 [0.5798929251016516, 0.3518402572453404, 0.5312254817417356,
                  0.8682498317142514])
TUNING = {"rtfa": {"lam": [0.05, 0.7, 2.0, 1e-3]}, "maml_fl": {"alpha": 0.05},
          "pfedme": {"lam": 0.8}}


@pytest.mark.parametrize("method", sorted(OLD))
def test_shift_limits_equal_the_old_code(method):
    """FedAvg, FTFA, RTFA (chains of every type in one batch), MAML-FL (its own
    least-squares variances in one batch per type) and pFedMe (every group in one batch)
    against the old code's numbers, each twice (the second from the memo)."""
    from riskcalc.linear.finite_clients.shift import chains as shift_chains

    shift_chains._MEMO.clear()
    first = clients_limit(method, **TUNING.get(method, {}), **KW)
    # The second call starts its roots from the first's (``shift_chains.warm_roots``): the
    # same roots to rounding, not necessarily to the bit (pFedMe: 8e-16 apart).
    np.testing.assert_allclose(clients_limit(method, **TUNING.get(method, {}), **KW).risk,
                               first.risk, rtol=1e-13, atol=0)
    tuning = TUNING.get(method, {})
    res = clients_limit(method, **tuning, **KW)
    bias, var = OLD[method]
    # The batch changes only the order of roundings (bit-identical here when measured).
    np.testing.assert_allclose(res.bias, bias, rtol=1e-13, atol=0)
    np.testing.assert_allclose(res.variance, var, rtol=1e-13)


def test_memo_gives_the_same_numbers_and_stays_bounded(monkeypatch):
    """The own variances and R's roots are remembered across calls that change the weights
    only (``shift_chains.remember``): the same numbers as solved afresh, and the memo stays
    bounded."""
    from riskcalc.linear.finite_clients.shift import chains as shift_chains

    tuning = {"lam": [0.05, 0.7, 2.0, 1e-3]}
    shift_chains._MEMO.clear()
    fresh = clients_limit("rtfa", **tuning, **KW)
    assert len(shift_chains._MEMO) > 0
    moved = dict(KW, weights=[0.1, 0.4, 0.3, 0.2])
    again = clients_limit("rtfa", **tuning, **moved)        # R's roots and own from the memo
    shift_chains._MEMO.clear()
    solved = clients_limit("rtfa", **tuning, **moved)
    np.testing.assert_array_equal(again.risk, solved.risk)
    # The weights matter (the memo did not return the first call's risks).
    assert np.max(np.abs(again.risk - fresh.risk)) > 1e-3
    monkeypatch.setattr(shift_chains, "_MEMO_SIZE", 3)
    for k in range(3):
        clients_limit("rtfa", lam=0.1 + k, **KW)
    assert len(shift_chains._MEMO) == 3
