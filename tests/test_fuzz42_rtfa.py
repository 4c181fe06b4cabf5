"""Issue 32, fuzz42 (rtfa): what this fuzz found, each test failing before.

The references are 700-digit mpmath evaluations of the same finite-M limits (Sigma = I,
``riskcalc.linear.finite_clients.identity``), with the traces taken over the whole
Marchenko-Pastur law (no atom split) and the subordination solved to full precision.
"""

import pytest

from riskcalc import clients_limit


@pytest.mark.parametrize("method, want", [("rtfa", 1.4999999699000006e-20),
                                          ("fedavg", 1.4999999999000001e-20)])
def test_f1_data_rich_bias_not_a_rounding_floor(method, want):
    # gamma [1e-10, 2] at lam 1e8: the data-rich client's own bias J0 - 2 p J3 + p^2 Jfb
    # cancelled O(1) terms: RTFA printed 3.3e-16 for 1.5e-20 (FedAvg lost its own share).
    kw = {"lam": 1e8} if method == "rtfa" else {}
    got = clients_limit(method, gamma=[1e-10, 2], r=1, sigma=1, **kw).bias[0]
    assert got == pytest.approx(want, rel=1e-6, abs=0)


@pytest.mark.parametrize("method, want", [("rtfa", 3.9999999192000015e-20),
                                          ("fedavg", 3.9999999992000003e-20)])
def test_f2_data_rich_subordination_without_cancellation(method, want):
    # gamma [1e-10, 1]: u = (1 - (1 - gamma) x) / ... and D Q - 1 = var_b / g^2 - D sum qv
    # cancelled ~1e-10 terms (1.5e-7 and 6e-7 relative): the bias was off by 2e-7.
    kw = {"lam": 1e8} if method == "rtfa" else {}
    got = clients_limit(method, gamma=[1e-10, 1], r=1, sigma=1, **kw).bias[0]
    assert got == pytest.approx(want, rel=1e-12, abs=0)


@pytest.mark.parametrize("method, want", [("rtfa", 3.9999999200000014e-200),
                                          ("fedavg", 4.0000000000000002e-200)])
def test_f3_data_poor_variance_of_the_resolvent_not_underflowed(method, want):
    # gamma [1e-100, 1]: the data-poor client's var_r ~ gamma x^4 = 1e-400 underflowed to 0,
    # so the data-rich client lost a quarter of its bias (3e-200; RTFA 2.2e-16 before F2).
    kw = {"lam": 1e8} if method == "rtfa" else {}
    got = clients_limit(method, gamma=[1e-100, 1], r=1, sigma=1, **kw).bias[0]
    assert got == pytest.approx(want, rel=1e-12, abs=0)


def test_f4_rtfa_quadrature_converges_relative_to_small_traces():
    # lam 1.3e-4 beside the data-rich client's u = 0.63 (the quadrature route): its traces
    # ~ lam^2 converged to the rules' 1e-12 absolute tolerance, the bias off by 6e-8.
    got = clients_limit("rtfa", gamma=[3.62143e-07, 0.000353582, 5.77462e-07], r=1, sigma=1,
                        lam=1.3e-4).bias[0]
    assert got == pytest.approx(5.0215482816083998e-9, rel=1e-12, abs=0)


def test_f5_pfedme_at_a_huge_penalty_is_fedavg():
    # pFedMe -> FedAvg as lam -> infinity (within O(1/lam)): at gamma [1e-10, 1], lam 1e12
    # the data-rich client's bias was 4.0000007e-20 for FedAvg's 3.9999999992e-20 (the
    # data-poor client's var_b = tau((1 / (b + t) - g)^2) lost 7e-7 to cancellation).
    got = clients_limit("pfedme", gamma=[1e-10, 1], r=1, sigma=1, lam=1e12).bias[0]
    assert got == pytest.approx(3.9999999992000003e-20, rel=1e-10, abs=0)


def test_f6_pfedme_data_rich_shift_below_rounding():
    # gamma [1e-100, 1], lam 1e12: the data-rich client's t ~ 1e-100 was solved from
    # G(t) = g, where it is below rounding (t ~ eps): bias 1.2e-32 for FedAvg's 4e-200.
    got = clients_limit("pfedme", gamma=[1e-100, 1], r=1, sigma=1, lam=1e12).bias[0]
    assert got == pytest.approx(4.0000000000000002e-200, rel=1e-10, abs=0)


def test_f7_rtfa_tuning_risks_agree_with_the_limit():
    # RTFA's tuning risks (advise) subtracted the data-rich client's own term from the sums
    # over the federation: at gamma [1e-10, 1], sigma 1e-12, its risk 1e-20 for 4e-20.
    import numpy as np

    from riskcalc.linear.finite_clients.identity import rtfa_risks

    got = rtfa_risks(np.array([1e-10, 1.0]), np.ones(2), np.full(2, 1e-12), "samples",
                     [[1e8, 1e8]])[0, 0]
    want = clients_limit("rtfa", gamma=[1e-10, 1], r=1, sigma=1e-12, lam=1e8).risk[0]
    assert got == pytest.approx(want, rel=1e-12, abs=0)
