"""What advise batches in the finite-M limits, against the one-at-a-time route:
``clients_limit``'s grouping of identical clients (``finite_clients.unique_rows``) against
numpy's own ``np.unique(axis=0)``; rows of RTFA penalties under covariate shift in one
evaluation (``shift_group_limits`` with 2-D lam, ``riskcalc.advise.tune.rtfa_lams``' grid)
against ``clients_limit`` row by row."""

import numpy as np
import pytest

from riskcalc.linear.engine.joint_spectrum import joint_spectrum
from riskcalc.linear.finite_clients import clients_limit, unique_rows
from riskcalc.linear.finite_clients.shift.limits import shift_group_limits


@pytest.mark.parametrize("m", [1, 2, 7, 300])
def test_unique_rows_equal_numpy(m):
    rng = np.random.default_rng(m)
    for ties in (False, True):
        table = rng.uniform(0.1, 3.0, (m, 6))
        if ties:
            # Repeated clients, a shared column, the types' small integers and a tie broken
            # in the last column only.
            table = np.vstack([table, table[: m // 2 + 1]])
            table[:, 3], table[:, 4] = 0.0, rng.integers(0, 3, table.shape[0])
            table[-1] = table[0]
            table[-1, 5] += 1.0
        want = np.unique(table, axis=0, return_inverse=True, return_counts=True)
        got = unique_rows(table)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1].ravel())
        np.testing.assert_array_equal(got[2], want[2])
        np.testing.assert_array_equal(got[0][got[1]], table)


@pytest.mark.parametrize("weights", ["samples", [0.1, 0.4, 0.2, 0.3, 0.5]])
def test_rows_of_penalties_equal_clients_limit_row_by_row(weights):
    """Five clients, three covariances (two of one type), 7 rows of penalties over 1e-3..1e3:
    one evaluation equals clients_limit at each row to rounding (1e-13)."""
    spectra = ["two-point:1,4,0.5", "two-point:4,1,0.5", "scaled:2", "two-point:1,4,0.5",
               "scaled:2"]
    gam, r, sigma = [0.5, 1.5, 2.0, 0.8, 3.0], [0.5, 1.0, 1.5, 0.2, 1.2], [1.0, 0.5, 0.5, 0.9, 0.3]
    rng = np.random.default_rng(3)
    lams = np.exp(rng.uniform(np.log(1e-3), np.log(1e3), (7, 5)))
    p = weights if isinstance(weights, str) else np.asarray(weights) / np.sum(weights)
    joint = joint_spectrum(spectra)
    bias, var = shift_group_limits("rtfa", np.array(gam), np.array(r), np.array(sigma),
                                   np.ones(5), lams, p, joint, joint.types)
    assert bias.shape == var.shape == lams.shape
    for row, b, v in zip(lams, bias, var):
        ref = clients_limit("rtfa", gamma=gam, r=r, sigma=sigma, lam=row, weights=weights,
                            spectra=spectra)
        np.testing.assert_allclose(b + v, ref.risk, rtol=1e-13)
