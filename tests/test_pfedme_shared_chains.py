"""pFedMe's pieces under covariate shift from shared chain solves
(riskcalc.linear.finite_clients.pfedme_sigma.group_pieces: chains that differ in their closing
middle alone share one functional, and tau(F K Z K) is one vector per group through the
trace's cyclicity) against the chains written out term by term (module docstring of
``pfedme_sigma``, step 3, each trace its own ``chain_traces`` solve: the route before
sharing), on clients of three covariance types with complex steps in the weights too."""

import numpy as np
import pytest

from riskcalc.linear.engine.joint_spectrum import joint_spectrum
from riskcalc.linear.engine.operator_subordination import joint_layout
from riskcalc.linear.engine.resolvent_chain import root_step
from riskcalc.linear.finite_clients import pfedme_sigma as pf

TYPES = ("two-point:1,4,0.5", "two-point:4,1,0.5", "scaled:2")


def setup(m=9, lam=0.7):
    rng = np.random.default_rng(7)
    gam = np.exp(rng.uniform(np.log(0.3), np.log(4.0), m))
    p = rng.uniform(0.5, 1.5, m) / m
    joint = joint_spectrum([TYPES[j % 3] for j in range(m)])
    sv, typ, h, _, _ = joint_layout(joint, joint.types)
    sg = sv[typ]
    t = pf.solve_point(gam, sg, h, p, lam, np.ones(m))
    return gam, sg, h, p, lam, t


def written_out(t, gam, sg, h, p, lam, roots=None):
    """e_v, tau(F K Z K) (a function), cross and noise with one chain solve per trace."""
    c, Lam, C, _, _, _ = pf._states(t, gam, sg, h, p, lam, roots)
    v, w = (p * lam ** 2)[:, None] / c, 1.0 / c
    tr = pf._traces(gam, sg, h, lam, Lam, C)
    one = np.ones_like(sg)

    def ed(blocks, mids):
        return tr(blocks, mids, vector=True) * mids[-1] / h

    ekr = ed("R", [w]) + ed("QR", [w, v])
    ekrtk = (ed("R", [t * w * w]) + ed("RQ", [t * v, w * w]) + ed("QR", [w, t * w * v])
             + ed("QRQ", [w, t * v, w * v]))

    def fkzk(Z):
        return (tr("RR", [sg, Z * w * w]) + tr("RRQ", [sg, Z * w * v, w])
                + tr("RRQ", [sg, v, w * Z * w]) + tr("RRQQ", [sg, v, w * Z * v, w]))

    fkr = tr("RRR", [sg, w, one]) + tr("RRQR", [sg, v, w, one])
    fkrtk = (tr("RRR", [sg, w, t * w]) + tr("RRRQ", [sg, w, t * v, w])
             + tr("RRQR", [sg, v, w, t * w]) + tr("RRQRQ", [sg, v, w, t * v, w]))
    rsrk = tr("RR", [sg, w]) + tr("RRQ", [sg, v, w])
    rrsrk = tr("RRR", [one, sg, w]) + tr("RRRQ", [one, sg, v, w])
    return (ekr - ekrtk) / p[:, None], fkzk, rsrk - rrsrk, fkr - fkrtk


def _close(a, b, rtol):
    scale = np.max(np.abs(b))
    assert scale > 0
    np.testing.assert_allclose(a, b, rtol=0, atol=rtol * scale)


@pytest.mark.parametrize("step", [False, True])
def test_shared_chains_equal_the_written_out_traces(step):
    """Every piece to 1e-12 of its largest entry (two routes through different chains: the
    same deterministic equivalents, rounding apart; noise is a difference of terms ~1e2
    times its size), tau(F K Z K) on random middles and a stack of two; with a complex step
    in the weights, the imaginary parts (the tangents) to 1e-10."""
    gam, sg, h, p, lam, t = setup()
    roots = None
    if step:
        C0 = pf._states(t, gam, sg, h, p, lam)[2]
        p = p + 1j * 1e-30 * np.linspace(1, 2, p.size)
        Lam = pf._states(t, gam, sg, h, p, lam, C0)[1]
        roots = C0
        assert np.iscomplexobj(root_step(gam, sg, h, 1.0, Lam, C0))
    new = pf.group_pieces(t, gam, sg, h, p, lam, roots)
    ev, fkzk, cross, noise = written_out(t, gam, sg, h, p, lam, roots)
    Z = np.random.default_rng(3).normal(size=(2,) + sg.shape)
    pairs = [(new["e_v"], ev), (new["cross"], cross), (new["noise"], noise),
             (new["fkzk"](Z[0]), fkzk(Z[0])), (new["fkzk"](Z), np.stack([fkzk(z) for z in Z]))]
    for a, b in pairs:
        _close(a.real, b.real, 1e-12)
        if step:
            _close(a.imag, b.imag, 1e-10)


def test_sub_chain_table_equals_each_sub_chain_solved_alone():
    """``chain_traces(table=True)``: entry (a, b) is the functional of the sub-chain of
    blocks a..b and middles a..b - 1 solved alone (``chain_vectors``; 1e-14 relative, the
    same arithmetic), zero below the diagonal."""
    gam, sg, h, p, lam, t = setup()
    c, Lam, C, _, _, _ = pf._states(t, gam, sg, h, p, lam)
    v, w = (p * lam ** 2)[:, None] / c, 1.0 / c
    tr = pf._traces(gam, sg, h, lam, Lam, C)
    one = np.ones_like(sg)
    blocks, mids = "RRQRQ", [sg, v, w, t * v, one]
    table = tr(blocks, mids, table=True)
    assert table.shape == sg.shape[:1] + (5, 5) + sg.shape[1:]
    for a in range(5):
        for b in range(5):
            if b < a:
                assert not np.any(table[:, a, b])
                continue
            alone = tr(blocks[a:b + 1], mids[a:b] + [one], vector=True)
            _close(table[:, a, b], alone, 1e-14)
