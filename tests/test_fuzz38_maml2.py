"""Issue 32, fuzz38 (maml2): what this fuzz found, each test failing before."""

import pytest

import riskcalc
from riskcalc.errors import IllConditioned

TWO_POINT = "two-point:1,4,0.3"


def _maml(gamma, alpha):
    return riskcalc.limit("maml_fl", gamma=gamma, r=1.0, sigma=1.0, alpha=alpha, clients=4,
                          spectrum=TWO_POINT)


def test_maml_fl_near_pooled_n_equal_d_gives_the_same_answer_whatever_came_before():
    """F1: 4 clients on two-point:1,4,0.3 at gamma 3.8 (N/d - 1 = 0.053), alpha 0.04: solved
    from scratch and after a solve at alpha 0.05 (warm start) the risks differed by ~1e-10
    relative (1e-9 to 1e-8 at alpha 0.1), far above the M eps / (N/d - 1) = 2e-14 the
    near-pooled check assumes (alpha 0.01 after 0.02: 1.8e-12 apart). Near pooled N = d the
    route now always starts from scratch."""
    from riskcalc.linear.finite_clients import maml_sigma
    maml_sigma._LAST.clear()
    cold = _maml(3.8, 0.01)
    _maml(3.8, 0.02)
    warm = _maml(3.8, 0.01)
    assert (warm.bias, warm.variance) == (cold.bias, cold.variance)


def test_maml_fl_near_pooled_n_equal_d_refuses_digits_two_paths_disagree_on():
    """F1: at alpha 0.1 (gamma 3.8) two continuation paths' risks differ by 1.1e-8 relative
    (paths from first steps 1/7 to 1/20: spread 4.5e-9 in the bias, 9.7e-9 in the variance)
    and the route printed 10 digits; it now solves a second path and refuses beyond 1e-8."""
    with pytest.raises(IllConditioned,
                       match=r"near pooled N = d \(N/d - 1 = 0\.0526\) two continuation paths "
                             r"give risks .* apart relative \(it answers up to 1e-08\)"):
        _maml(3.8, 0.1)


def test_maml_fl_refusal_names_heavy_clients_at_pooled_n_equal_d(monkeypatch):
    """F2: explicit weights [1e-9, 1, 1] at gamma 2 under a spectrum (alpha 0.1) ran 9-30 s,
    then cited "N/d - 1 = 0.5" and the filter alone: without client 0, whose samples count
    1e-9 of the others' in the weighted objective, the other two sit exactly at pooled
    N = d. Now the refusal also gives the equal-weight N/d - 1 whose Marchenko-Pastur edge
    bounds the weighted Hessian's (1.2e-5), says near pooled N = d and offers weights closer
    to each other (alpha 0.01 answers, within 5e-8 of Sigma = I on two-point:1,1.0000001).
    Companion pencils that spend the shifts' budget at once stand in for the 20 s of the
    hard case."""
    from riskcalc.linear.finite_clients import maml_pencils, maml_sigma

    class Hard(maml_pencils.Companions):
        def state(self, t):
            raise maml_pencils.Stuck(True)

    monkeypatch.setattr(maml_sigma, "Companions", Hard)
    monkeypatch.setattr(maml_sigma, "_LAST", {})
    with pytest.raises(riskcalc.SolverError,
                       match=r"at N/d - 1 = 0\.5 \(with the clients' samples weighted by p_j "
                             r"gamma_j as the objective weighs them, as near pooled N = d as "
                             r"N/d - 1 = 1\.2e-05 with equal weights\), alpha = 0\.1: near "
                             r"pooled N = d, .*; weights closer to each other, a gamma further "
                             r"from pooled N = d or a smaller alpha"):
        riskcalc.clients_limit("maml_fl", gamma=[2.0, 2.0, 2.0], r=1.0, sigma=1.0, alpha=0.1,
                               weights=[1e-9, 1.0, 1.0], spectrum=TWO_POINT)
