"""``clients_limit``'s grouping of identical clients (``finite_clients.unique_rows``) against
numpy's own ``np.unique(axis=0)``: the same groups, order, inverse and counts."""

import numpy as np
import pytest

from riskcalc.linear.finite_clients import unique_rows


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
