"""pFedMe's finite-M limit with a spectrum or under covariate shift, its client groups solved
as batches (riskcalc.linear.finite_clients.pfedme_sigma: one batch of scalar roots and chains
for every group, each with its own eigenvalues on the joint atoms; operator_subordination's
Newton and middles over stacked groups).

Independent checks of the batched path: many distinct clients with Sigma = I against
finite_clients.own's scalar subordination (a different solve of the same limit), and under
covariate shift the exact identities of grouping (a group of n identical clients is n
clients) and of relabelling (permuting the clients permutes the risks), which fail if a
batch's rows are scattered to the wrong groups, and the path before batching (each group's
roots and chains solved alone, ``_one_by_one`` below, the module's previous code), which
fails if a type's atoms reach the wrong batch."""

import numpy as np
import pytest

from riskcalc import Spectrum
from riskcalc.linear.engine import kappa
from riskcalc.linear.engine.joint_spectrum import joint_spectrum
from riskcalc.linear.engine.operator_subordination import joint_layout, middles
from riskcalc.linear.engine.resolvent_chain import chain_traces, chain_vectors, diagonal_roots
from riskcalc.linear.finite_clients.identity import client_weights
from riskcalc.linear.finite_clients import pfedme_sigma
from riskcalc.linear.finite_clients.own import own_group_limits
from riskcalc.linear.finite_clients.pfedme_sigma import (pfedme_shift_group_limits,
                                                         pfedme_sigma_group_limits)

TYPES = ("two-point:1,4,0.5", "two-point:4,1,0.5", "scaled:2")


def _clients(m, seed):
    rng = np.random.default_rng(np.random.SeedSequence([30, 1000, m, seed]))
    return (np.exp(rng.uniform(np.log(0.3), np.log(4.0), m)), rng.uniform(0.2, 2.0, m),
            rng.uniform(0.1, 1.5, m))


@pytest.mark.parametrize("weights", ["samples", "uniform"])
def test_many_distinct_clients_identity_matches_scalar_subordination(weights):
    """25 distinct clients (one batch of 25 points) with Sigma = I against the scalar route."""
    gam, r, sig = _clients(25, 0)
    cnt = np.ones(25)
    b, v = pfedme_sigma_group_limits(gam, r, sig, cnt, 0.8, weights, Spectrum.identity())
    bo, vo = own_group_limits("pfedme", gam, r, sig, cnt, 0.8, weights)
    np.testing.assert_allclose(b, bo, rtol=1e-9)
    np.testing.assert_allclose(v, vo, rtol=1e-9)


@pytest.mark.parametrize("weights", ["samples", "uniform"])
def test_shift_groups_merge_and_relabel(weights):
    """Covariate shift, three interleaved types: groups of sizes 1-3 equal the same clients
    listed one by one, and a permutation of the groups permutes the limits."""
    gam, r, sig = _clients(9, 1)
    typ = np.array([0, 2, 1, 1, 0, 2, 2, 1, 0])
    cnt = np.array([2, 1, 3, 1, 1, 2, 1, 1, 2])
    joint = joint_spectrum(list(TYPES))
    b, v = pfedme_shift_group_limits(gam, r, sig, cnt, 0.6, weights, joint, typ)
    rep = np.repeat(np.arange(9), cnt)
    be, ve = pfedme_shift_group_limits(gam[rep], r[rep], sig[rep], np.ones(rep.size), 0.6,
                                       weights, joint, typ[rep])
    np.testing.assert_allclose(be, b[rep], rtol=1e-10)
    np.testing.assert_allclose(ve, v[rep], rtol=1e-10)
    perm = np.random.default_rng(np.random.SeedSequence(7)).permutation(9)
    bp, vp = pfedme_shift_group_limits(gam[perm], r[perm], sig[perm], cnt[perm], 0.6, weights,
                                       joint, typ[perm])
    np.testing.assert_allclose(bp, b[perm], rtol=1e-12)
    np.testing.assert_allclose(vp, v[perm], rtol=1e-12)


def _one_by_one(gam, r, sigma, count, lam, weights, joint, typ):
    """pFedMe under covariate shift as computed before batching: the shifts t from the
    batched solve, then every group's diagonal roots and resolvent chains one group at a time
    (scalar points, each on its own type's atoms)."""
    sv, typ, h, Phi, marginals = joint_layout(joint, typ)
    p = client_weights(gam, count, weights)
    M = count.sum()
    pop = (count * p) @ (lam * sv[typ] / (sv[typ] + lam))
    t, _ = pfedme_sigma.solve_shifts(
        lambda tt: pfedme_sigma._states(tt, gam, sv[typ], h, p, lam)[4:], count,
        np.tile((M - 1) / M * pop, (gam.size, 1)), "reference")
    c, Lam, _, _, Gs, Ls = pfedme_sigma._states(t, gam, sv[typ], h, p, lam)
    trs, e_v = [], []
    for k in range(gam.size):
        s, one = sv[typ[k]], np.ones(h.size)
        spec = {"R": (lam, one), "Q": (1.0, Lam[k])}
        root = {b: float(diagonal_roots(gam[k], s, h, *x)) for b, x in spec.items()}

        def tr(blocks, mids, vector=False, g=gam[k], s=s, spec=spec, root=root):
            args = (g, s, h, [spec[b][0] for b in blocks], [spec[b][1] for b in blocks],
                    np.array(mids), [root[b] for b in blocks])
            return chain_vectors(*args) * mids[-1] / h if vector else float(chain_traces(*args))

        trs.append(tr)
        v, w, tk = p[k] * lam ** 2 / c[k], 1.0 / c[k], t[k]
        e_v.append((tr("R", [w], 1) + tr("QR", [w, v], 1) - tr("R", [tk * w * w], 1)
                    - tr("RQ", [tk * v, w * w], 1) - tr("QR", [w, tk * w * v], 1)
                    - tr("QRQ", [w, tk * v, w * v], 1)) / p[k])
    Zs = middles(Gs[0], Ls, t, count, r, sigma, p, gam, Phi, e_v)
    bias, var = np.empty(gam.size), np.empty(gam.size)
    for a, tr in enumerate(trs):
        s, one = sv[typ[a]], np.ones(h.size)
        v, w, ta, pa, ga = p[a] * lam ** 2 / c[a], 1.0 / c[a], t[a], p[a], gam[a]

        def fkzk(Z, tr=tr, s=s, v=v, w=w):
            return (tr("RR", [s, Z * w * w]) + tr("RRQ", [s, Z * w * v, w])
                    + tr("RRQ", [s, v, w * Z * w]) + tr("RRQQ", [s, v, w * Z * v, w]))

        bias[a] = r[a] ** 2 * fkzk(Zs[a, 0]) + fkzk(Zs[a, 1])
        fkr = tr("RRR", [s, w, one]) + tr("RRQR", [s, v, w, one])
        fkrtk = (tr("RRR", [s, w, ta * w]) + tr("RRRQ", [s, w, ta * v, w])
                 + tr("RRQR", [s, v, w, ta * w]) + tr("RRQRQ", [s, v, w, ta * v, w]))
        cross = (tr("RR", [s, w]) + tr("RRQ", [s, v, w]) - tr("RRR", [one, s, w])
                 - tr("RRRQ", [one, s, v, w]))
        own = float(kappa.ridge_factors(ga, lam, marginals[a])[1])
        var[a] = (sigma[a] ** 2 * (own + 2 * pa * ga * cross + pa * ga * (fkr - fkrtk)
                                   + pa ** 2 * ga * fkzk(Zs[a, 2])) + fkzk(Zs[a, 3]))
    return bias, var


@pytest.mark.parametrize("weights", ["samples", "uniform"])
def test_shift_batches_equal_the_groups_one_by_one(weights):
    """Twelve distinct clients of three interleaved types: the batched chains equal each
    group's chains solved alone."""
    gam, r, sig = _clients(12, 2)
    typ = np.arange(12) % 3
    joint = joint_spectrum(list(TYPES))
    b, v = pfedme_shift_group_limits(gam, r, sig, np.ones(12), 1.3, weights, joint, typ)
    rb, rv = _one_by_one(gam, r, sig, np.ones(12), 1.3, weights, joint, typ)
    np.testing.assert_allclose(b, rb, rtol=1e-9)
    np.testing.assert_allclose(v, rv, rtol=1e-9)
