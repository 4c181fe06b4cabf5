"""Issue 32, fuzz38 (own2): what this fuzz found, each test failing before."""

import numpy as np
import pytest

import riskcalc
from riskcalc.errors import SolverError


def _maml(gamma, alpha):
    n = len(gamma)
    return riskcalc.clients_limit("maml_fl", gamma=gamma, r=[1.0] * n, sigma=[1.0] * n,
                                  alpha=alpha)


@pytest.mark.parametrize("gamma, alpha", [([1e100, 0.5], 0.1), ([1e100, 0.5], 0.001),
                                          ([1e100, 0.5, 0.5], 0.1)])
def test_maml_weights_overflowing_say_so(gamma, alpha):
    # F1: "no bracket for tau(A^-1)" or the quadrature blaming "lam or u too small?": the
    # cause is MAML-FL's psi(s) = s (1 - alpha s)^4 overflowing on the client at 1e100.
    with pytest.raises(SolverError, match=r"psi .* overflows double precision .* gamma = "
                                          r"1e\+100; it stays finite up to gamma ~ \d\.\d+e\+6"):
        _maml(gamma, alpha)


def test_maml_dwarfing_client_is_bracketed():
    # F1: gamma 1e60 beside 0.5 at alpha = 30 said "no bracket for tau(A^-1)" (Jensen's lower
    # bound ~ 1e-60 times the root, beyond 200 doublings). The answer is exact here: the
    # client at 1e60 carries no weight, the global model is client 2's weighted least
    # squares, unbiased with the plain least-squares variance sigma^2 gamma / (1 - gamma) = 1,
    # so client 1's risk is 2 r^2 + 1 = 3 and client 2's own least squares 1.
    np.testing.assert_allclose(_maml([1e60, 0.5], 30.0).risk, [3.0, 1.0], rtol=1e-9)


@pytest.mark.parametrize("method, gamma, tuning, k", [
    ("maml_fl", 2.0, {"alpha": 0.1}, 52), ("maml_fl", 2.0, {"alpha": 0.1}, 53),
    ("maml_fl", 100.0, {"alpha": 10.0}, 31), ("pfedme", 0.3, {"lam": 1e-3}, 25)])
def test_many_clients_at_identity_answer_on_the_one_over_m_expansion(method, gamma, tuning, k):
    # F2: SolverError "no root in its bracket" at these M (sporadic from 2^25): Newton's start
    # handed solve_g unnormalized weights, and Newton refused a merit already at rounding
    # (steps of relative size ~ M eps). Checked against L + c/M + c2/M^2, c and c2 from
    # M = 1e5 and 1e6 (within 7e-11 over M = 2^24..2^53 and 42 settings).
    def risk(m):
        return riskcalc.limit(method, gamma=gamma, r=1.0, sigma=0.5, clients=m, **tuning).risk

    lim = riskcalc.limit(method, gamma=gamma, r=1.0, sigma=0.5, **tuning).risk
    a, b, m = 10 ** 5, 10 ** 6, 2 ** k
    c2 = ((risk(a) - lim) * a - (risk(b) - lim) * b) / (1 / a - 1 / b)
    c = (risk(b) - lim) * b - c2 / b
    assert risk(m) == pytest.approx(lim + c / m + c2 / m ** 2, rel=1e-9, abs=0)


def test_phi_vanishing_on_the_spectrum_does_not_fake_a_cap():
    # F3: MAML-FL at gamma (1.5, 1.5), alpha = 1 - 1e-12 (phi's zero 1/alpha on the spectrum)
    # refused as "pinned ... one client's weight dwarfs the others'" (one group) where
    # alpha = 1 answers 3.6111: the inner solve halved t toward 0, into a quadrature failure
    # taken for a cap. The atom of S_l at 0 bounds t_l from below ((1 - 1/gamma_l) / g).
    at_one = _maml([1.5, 1.5], 1.0).risk
    np.testing.assert_allclose(_maml([1.5, 1.5], 1 - 1e-12).risk, at_one, rtol=1e-9)
