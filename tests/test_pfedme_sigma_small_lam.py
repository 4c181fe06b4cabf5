"""pFedMe's finite-M limit under a covariance spectrum at tiny lam (issue 32, F9): the noise,
the cross term and the noise source were differences of two O(1 / lam) terms, so lam = 1e-20
gave a variance 5e4 for 1.53 (a clients file of identical clients a negative one), rc 0. Now
each is one chain with S between two blocks (``resolvent_chain``'s links; module docstring
of ``finite_clients.pfedme_sigma``, step 3). Checked against the Sigma = I route
(``finite_clients.own``, scalar subordination), Richardson's extrapolation from lam = 1e-6
and, for the links, the chains with S written out as differences where those are exact."""

import numpy as np
import pytest

from riskcalc.linear.engine.resolvent_chain import chain_traces


def test_links_equal_the_chains_with_s_written_out():
    """Q_a (M_a + l_a S) Q_(a+1) at lam = 0.5, where the differences S R = lam (I - R) and
    S Q = I - Lam Q lose nothing: R S R Sigma and R (Sigma + S / 2) Q (s + 1 + S) R Sigma
    (links 0.5 and 1, a "Q" block of shift 0.7 between) to 1e-13; links of zero are none."""
    g, s, h, lam, q = 2.0, np.array([1.0, 4.0]), np.array([0.5, 0.5]), 0.5, 0.7
    one = np.ones(2)

    def ch(kinds, mids, links=None):
        eta = [lam if b == "R" else 1.0 for b in kinds]
        shifts = np.array([one if b == "R" else q * one for b in kinds])
        return float(chain_traces(g, s, h, eta, shifts, np.array(mids), links=links))

    rsr = ch("RR", [0 * one, s], [1.0])
    assert rsr == pytest.approx(lam * (ch("R", [s]) - ch("RR", [one, s])), rel=1e-13)
    linked = ch("RQR", [s, s + 1, s], [0.5, 1.0])
    # R s Q S R s = lam (R s Q s - R s Q R s); R S Q = lam (Q - R Q); R S Q S R = R (I - q Q) S R.
    out = (ch("RQR", [s, s + 1, s])
           + lam * (ch("RQ", [s, s]) - ch("RQR", [s, one, s]))
           + 0.5 * lam * (ch("QR", [s + 1, s]) - ch("RQR", [one, s + 1, s]))
           + 0.5 * lam * (ch("R", [s]) - ch("RR", [one, s])
                          - q * (ch("RQ", [one, s]) - ch("RQR", [one, one, s]))))
    assert linked == pytest.approx(out, rel=1e-13)
    assert ch("RQR", [s, s + 1, s], [0.0, 0.0]) == ch("RQR", [s, s + 1, s])
