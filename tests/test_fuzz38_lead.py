"""Issue 32, fuzz38 (lead): what the lead's own reading of this session's reports found, each
test failing before."""
import numpy as np

from riskcalc.advise import weights


def test_optimal_weights_keep_their_floor_on_every_route():
    # L-BFGS-B bounds z, not p = z / sum z: a z summing to 2.2 with z_0 at the floor gave
    # p_0 = 1.5e-5 for the floor P_MIN / 3 = 3.3e-5 (own2's item 5 saw 1.74e-5 on 3 clients);
    # the point returned is now projected onto the floored simplex, a point already on it kept.
    m = 3
    floor = weights.P_MIN / m
    x = np.array([floor, 1.0, 0.9, 0.3])
    p, extra, value = weights._better(lambda q, e: float(np.sum(q ** 2)), x, m,
                                      np.full(m, 1 / m), np.array([0.3]), np.inf)
    assert p.min() >= floor * (1 - 1e-12)
    assert abs(p.sum() - 1.0) < 1e-12
    assert value == float(np.sum(p ** 2))
    inside = np.array([0.2, 0.3, 0.5])
    assert np.array_equal(weights._floored(inside, m), inside)
    # the Euclidean projection: every weight above the floor moved by the same amount
    moved = x[1:3] / x[:m].sum() - p[1:3]
    assert abs(moved[0] - moved[1]) < 1e-15


def test_logistic_grid_with_every_point_beyond_the_reach():
    # A local-ridge grid whose every ||w_i|| lies beyond the Gauss-Hermite reach (signal 0,
    # r = hypot(10, R) >= 10: figures' p000-fig1-theory) raised numpy's "number sections must
    # be larger than 0." after the grid was split into parts (h38logi F19); the grid answers
    # as its points one by one.
    import riskcalc
    r = np.array([10.0, 12.0])
    grid = riskcalc.logistic_limit(gamma=0.5, signal=0.0, r=r, lam=0.1).test_error
    one = [riskcalc.logistic_limit(gamma=0.5, signal=0.0, r=float(x), lam=0.1).test_error
           for x in r]
    assert np.allclose(grid, one, rtol=1e-8, atol=0)
