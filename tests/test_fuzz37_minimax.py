"""Issue 32, fuzz37 (minimax): what this fuzz found, each test failing before."""

import re

import mpmath
import numpy as np
import pytest

from riskcalc import minimax as mm
from tests.helpers import run_cli

mpf = mpmath.mpf
BIG, TINY = mpf("1.7976931348623157e308"), mpf("2.2250738585072014e-308")


def _exponents(seed, count, width):
    """``count`` rows of ``width`` powers of ten drawn from [-100, 100] (the bounds command's
    range), fixed by ``seed``."""
    return np.random.default_rng(seed).integers(-100, 101, size=(count, width))


def _agrees(call, want, rel=1e-12):
    """``call()`` within ``rel`` of the mpmath value ``want``, or, where ``want`` has no float
    (above the largest or nonzero below the smallest normal one), a ValueError saying so."""
    if want > BIG or 0 < want < TINY:
        with pytest.raises(ValueError, match="it has no float value"):
            call()
        return
    got = call()
    assert np.isfinite(got) and abs(mpf(got) - want) <= rel * want, (got, want)


def _fedavg_ier(b, u, s2, r, n):
    return b * s2 / (u ** 2 * n) + b ** 3 * r ** 2 / u ** 2


def _fedprox000_ier(b, u, ls, s2, dia, r, ni, n, m):
    k = (u + 1 / u) * (b * ls + (s2 * b ** 2 + b ** 2 + s2) / u ** 2) + u * dia ** 2
    return k * (min(r / mpmath.sqrt(ni), 1 / ni) + mpmath.sqrt(m) / n)


def test_fedavg_ier_where_beta_cubed_overflows():
    """F1: paper 000's FedAvg IER bound (Thm 6, eq. 11) multiplied beta^3 R^2 first: at
    beta = mu = sigma2 = R = N = 1e100 it returned inf for the bound 1e300 (the command line
    refused it as an overflow); the weighted form (eq. 10) did the same. A bound past the
    floats is a ValueError. Reference: mpmath, the same formula, 40 points of [1e-100, 1e100]."""
    assert mm.fedavg_ier_bound(1e100, 1e100, 1e100, 1e100, 1e100) == pytest.approx(1e300)
    assert mm.fedavg_weighted_bounds(1e100, 1e100, 1, 1e100, 1e100, [0.5, 0.5],
                                     [10, 10])[1] == pytest.approx(1e300)
    with mpmath.workdps(50):
        for b, u, s2, r, n in _exponents(1, 40, 5):
            b, u = max(b, u), max(min(b, u), max(b, u) - 99)
            n = max(n, b - u + 1)                     # N >= 4 beta / mu, N <= 1e100
            args = [10.0 ** e for e in (b, u, s2, r, n)]
            _agrees(lambda: mm.fedavg_ier_bound(*args), _fedavg_ier(*map(mpf, args)))


def test_fedprox000_ier_where_its_constant_overflows():
    """F3: paper 000's FedProx IER (Thm 12, eq. 29) formed its factor K first, whose
    sigma^2 beta^2 / mu^2 * (mu + 1/mu) is 1e337 at sigma2 = 1e100, beta = 1e60, mu = 1e-39:
    inf for the bound 1e237 at R = 0, n_i = N = 1e100."""
    args = (1e60, 1e-39, 1, 1e100, 1, 0, 1e100, 1e100, 1)
    with mpmath.workdps(50):
        want = _fedprox000_ier(*map(mpf, args))
    assert mm.fedprox_ier_bound(*args) == pytest.approx(float(want), rel=1e-12)
    with mpmath.workdps(50):
        for b, u, ls, s2, dia, r, ni, n, m in _exponents(3, 40, 9):
            b, u = max(b, u), max(min(b, u), max(b, u) - 99)
            ni = max(abs(ni), b - u + 1)                              # n_i >= 4 beta / mu
            # A federation that exists: the other m - 1 clients hold >= 4 beta/mu samples
            # each, so N >= n_i + (m - 1) 4 beta/mu (10^n >= 10 * 10^max(ni, m + b - u + 1)),
            # and one client (m = 1) holds all N = n_i.
            m = min(abs(m) if ni < 100 else 0, max(0, 98 - (b - u)))
            n = ni if m == 0 else max(abs(n), ni + 1, m + b - u + 2)
            args = [10.0 ** e for e in (b, u, ls, s2, dia, r, ni, n, m)]
            _agrees(lambda: mm.fedprox_ier_bound(*args), _fedprox000_ier(*map(mpf, args)))


def _fedprox_constants(L, mu, rho, g=32):
    c2 = max(((1 + mpmath.sqrt(3)) * rho / mu) ** 2, g * L ** 2 / mu ** 2)
    c4 = max((rho * (1 + mpmath.sqrt(4 * c2 + 5)) / mu) ** 2, (6 * g + 6) * L ** 2 / mu ** 2)
    return g * rho ** 2 / mu ** 2, c2, 6 * g * rho ** 2 / mu ** 2, c4


def test_fedprox_theorem1_bounds_where_the_constants_overflow():
    """F4: paper 004's Theorem 1 (eqs. 6-7) formed C1..C4 first: the global error bound was inf
    for 6.4e201 at rho = L = n = m = 1e100, mu = R = 1e-100 (C1 = 3.2e401 over N = 1e200),
    and at rho = R = 0 with L/mu = 1e200 the local bound was NaN (C4 = 0 * inf) for 0, C4
    itself NaN and C2 inf (silently: both past the floats, now a ValueError giving them)."""
    with pytest.raises(ValueError, match=r"C2 of Theorem 1 \(paper 004\) is 3.200e\+401"):
        mm.fedprox_constants(1e100, 1e-100, 0)
    assert mm.fedprox_local_error_bound(1e100, 1e-100, 0, 0, 1e100, 1e100) == 0
    args = (1e100, 1e-100, 1e100, 1e-100, 1e100, 1e100)
    assert mm.fedprox_global_error_bound(*args) == pytest.approx(6.4e201, rel=1e-12)
    with mpmath.workdps(50):
        for L, mu, rho, r, n, m in _exponents(4, 40, 6):
            L, mu = max(L, mu), min(L, mu)
            args = [10.0 ** e for e in (L, mu, rho, r, abs(n), abs(m))]
            L, mu, rho, r, n, m = map(mpf, args)
            c1, c2, c3, c4 = _fedprox_constants(L, mu, rho)
            _agrees(lambda: mm.fedprox_global_error_bound(*args),
                    c1 / (n * m) + c2 * min(1 / n, r ** 2))
            _agrees(lambda: mm.fedprox_local_error_bound(*args),
                    c3 / (n * m) + c4 * min(1 / n, r ** 2))
            _agrees(lambda: mm.fedprox_constants(*args[:3], rederived=True).C4,
                    _fedprox_constants(L, mu, rho, 64)[3])


def _fedprox_lambda(L, mu, rho, r, n, m):
    if r > 1 / mpmath.sqrt(n):
        return rho ** 2 / (n * mu * r ** 2)
    den = L ** 2 * r ** 2 + rho ** 2 / (n * m)
    ratio = (2 * L ** 2 * r ** 2 + rho ** 2 / n) / den if den else 0
    return max(64 * (L / mu) ** 2 * L, max(2 * L / mu, 5) * mu * ratio) - mu


def test_fedprox_lambda_where_its_products_leave_the_floats():
    """F5: paper 004's prescribed lambda (Thm 1, eqs. 34, 82) was 0 for 1.17e-161 where
    n mu R^2 overflowed (rho = 6.58e75, R = 2.19e97, n = 9.03e92, mu = 8.55e24), and inf
    (silently) where 64 kappa^2 L is past the floats."""
    args = (3.27e71, 8.55e24, 6.58e75, 2.19e97, 9.03e92, 2.19e59)
    with mpmath.workdps(50):
        want = _fedprox_lambda(*map(mpf, args))
    assert mm.fedprox_lambda(*args).lam == pytest.approx(float(want), rel=1e-12, abs=0)
    with pytest.raises(ValueError, match="the lambda of Theorem 1 .* is 6.400e\\+501"):
        mm.fedprox_lambda(1e100, 1e-100, 1, 0, 1, 1)
    with mpmath.workdps(50):
        for L, mu, rho, r, n, m in _exponents(5, 60, 6):
            L, mu = max(L, mu), min(L, mu)
            args = [10.0 ** e for e in (L, mu, rho, r, abs(n), abs(m))]
            _agrees(lambda: mm.fedprox_lambda(*args).lam, _fedprox_lambda(*map(mpf, args)))


@pytest.mark.parametrize("name", ["logistic_constants", "logistic_constants_printed"])
def test_logistic_mu0_below_the_floats_is_refused(name, capsys):
    """F6: Lemma 7's curvature mu0 = (e^{T/2} + e^{-T/2})^-2 (paper 000, eq. 12) at
    T = c_X D sqrt(d) = 900 is e^-900 = 1.4e-391: ``bounds`` printed mu0=0 (a strong convexity
    of 0); now one error line giving it. Below T ~ 708 it answers (mpmath: 8.0803e-308)."""
    code, out, err = run_cli(["bounds", name, "--c_x", "30", "--D", "30", "--d", "1"], capsys)
    assert code == 2 and out == "" and "mu0 of Lemma 7 (paper 000) is 1.364e-391" in err
    mu0 = mm.logistic_constants(1, 1, 5e5, printed=name.endswith("printed"))["mu0"]
    assert mu0 == pytest.approx(8.080287516446302e-308, rel=1e-12, abs=0)


def test_complexity_orders_of_an_accuracy_above_one():
    """F7: the orders O(kappa_g log 1/eps) of paper 004's Corollary 1 (eqs. 13-14) and
    O(sqrt(lam/mu) log 1/eps) of paper 001's Theorem 4.2 were negative for eps > 1 (eps = 2 at
    dist0 = gap0 = 100: 21 and 57 rounds, orders -1.26 and -6.93); eps is read relative to
    dist0 / gap0, as the exact counts read it (0 at or above them); and Thm 4.2's
    log(L lam n / mu) overflowed at 1e100 each (local_order inf)."""
    out = mm.fedprox_complexity(10, 1, 1, 2, dist0=100)
    kappa_g = (10 / 11) / 0.5
    assert out["rounds"] == 21 and out["rounds_order"] == pytest.approx(kappa_g * np.log(50))
    assert out["gradient_order"] == pytest.approx(10 * np.log(50))
    none = mm.fedprox_complexity(10, 1, 1, 200, dist0=100)
    assert none["rounds"] == 0 and none["rounds_order"] == none["gradient_order"] == 0
    agd = mm.iapgd_agd_complexity(10, 1, 100, 10, 2, gap0=100)
    # 58 = ceil(log(400) / -log(1 - sqrt(1/101))) (mpmath: 57.17), the corrected rate of paper
    # 001 Thm 4.2 (fuzz41 paper F1; 57 under the printed 1 - sqrt(1/100))
    assert agd["rounds"] == 58 and agd["rounds_order"] == pytest.approx(10 * np.log(50))
    big = mm.iapgd_agd_complexity(1e100, 1e-100, 1e100, 1e100, 1e-3)
    with mpmath.workdps(50):
        li = mpmath.log(1000)
        want = mpmath.sqrt(2 * mpf(1e100) / mpf(1e-100)) * li * (
            mpmath.log(mpf(1e100) ** 3 / mpf(1e-100) ** 2) + li)
    assert big["local_order"] == pytest.approx(float(want), rel=1e-12)


@pytest.mark.parametrize("L, mu, lam", [(1.6e-18, 2.8e-70, 4.15), (1e-5, 1e-28, 4.5e89),
                                        (2e-13, 1.7e-42, 5.4e83)])
def test_fedprox_inner_length_where_lam_dwarfs_L(L, mu, lam):
    """F8: Corollary 1 of paper 004 (eqs. 12, 115) with eta = 1/L_l: 1 - eta mu_l =
    (L - mu)/(L + lam) was taken as 1 - eta (mu + lam), which rounds to 0 (K = 1 for 8) or
    past it (K = 15 for 3) where lam >> L; gradient_evaluations = rounds * K with it.
    Reference: mpmath, 60 digits, the smallest K with (2 + 64 (lam/mu)^2) q^K <= 1/16."""
    with mpmath.workdps(60):
        q = (mpf(L) - mpf(mu)) / (mpf(L) + mpf(lam))
        want = mpmath.ceil(mpmath.log((2 + 64 * (mpf(lam) / mpf(mu)) ** 2) * 16) / -mpmath.log(q))
    out = mm.fedprox_complexity(L, mu, lam, 1e-3)
    assert out["K"] == int(want) and out["gradient_evaluations"] == out["rounds"] * int(want)


@pytest.mark.parametrize("theorem", [np.array([11, 12]), np.array([11])])
def test_proof_lambda_theorem_is_one_number(theorem):
    """F9: fedprox_proof_lambda's theorem (paper 000, Thms 11 or 12) given as an array of two
    was numpy's "truth value ... is ambiguous" (naming nothing), and array([11]) was taken
    where [11] was refused."""
    with pytest.raises(ValueError, match="theorem must be 11 or 12"):
        mm.fedprox_proof_lambda(0.1, 100, 10, 1.0, theorem=theorem)
    assert mm.fedprox_proof_lambda(0.1, 100, 10, 1.0, theorem=np.int64(12)) == 0.01


def test_prox_oracle_lower_bound_keeps_theorem31_hypotheses(capsys):
    """F10: paper 001's local prox-oracle lower bound (Sec. 3.2: "the construction from
    Theorem 3.1", whose hypotheses are L >= mu, lam >= mu) answered lam = 1e-100 < mu = 1 with
    6.9e-51 calls, without a note, where the same theorem's bound (thm31_lower_bound) refuses."""
    code, out, err = run_cli(["bounds", "prox_oracle_lower_bound", "--L", "1", "--mu", "1",
                              "--lam", "1e-100", "--eps", "0.5"], capsys)
    assert code == 2 and out == ""
    assert "lam must be >= mu (Theorem 3.1 of paper 001), got lam=1e-100, mu=1" in err
    assert mm.prox_oracle_lower_bound(4, 1, 1, 0.5) == pytest.approx(np.log(2))


def test_a_value_far_below_the_floats_is_written_as_a_power():
    """F6: mu0 at T = c_X D sqrt(d) = 1e250 (every parameter 1e100) is e^-1e250: the
    refusal wrote out the 250 digits of its decimal exponent."""
    with pytest.raises(ValueError, match=r"mu0 of Lemma 7 \(paper 000\) is 10\^-4\.34294e\+249,"):
        mm.logistic_constants(1e100, 1e100, 1e100)


def test_bounds_echoes_a_parameter_with_the_digits_given(capsys):
    """F11: ``bounds`` echoed each parameter in %g: --R 0.1,0.1000000001 printed two rows
    "R=0.1" with different answers (paper 004's lambda switches branch at R = 1/sqrt(n))."""
    code, out, err = run_cli(["bounds", "fedprox_lambda", "--L", "1", "--mu", "1", "--rho", "1",
                              "--R", "0.1,0.1000000001", "--n", "100", "--m", "10"], capsys)
    assert code == 0 and "R=0.1 n=100 m=10  ->  lam=63 is_lower=True" in out
    assert "R=0.1000000001 n=100 m=10  ->  lam=1 is_lower=False" in out


def test_theorem31_bound_below_the_floats_is_refused(capsys):
    """F12: paper 001's Theorem 3.1 (eq. 3) 1/4 q^(C+1) dist0 after C = 1e6 rounds at
    q = 0.9 (L = lam = 1e4, mu = 1) is 2.8e-45761: ``bounds`` printed value=0; now one error
    line giving it. Where it is a float it answers as before (mpmath: 0.0784478544675375...)."""
    code, out, err = run_cli(["bounds", "thm31_lower_bound", "--L", "1e4", "--mu", "1", "--lam",
                              "1e4", "--rounds", "1e6"], capsys)
    assert code == 2 and out == "" and "is 2.810e-45761, nonzero but below" in err
    with mpmath.workdps(40):
        want = mpf(1) / 4 * (1 - 10 * mpmath.sqrt(mpf(1) / 9999)) ** 11
    assert mm.thm31_distance_lower_bound(1e4, 1, 1e4, 10) == pytest.approx(float(want),
                                                                           rel=1e-12)


@pytest.mark.parametrize("call, message", [
    (lambda: mm.bilevel_constants(1e200, 1e200, 1e200), "L must lie in [1e-100, 1e+100]"),
    (lambda: mm.fedavg_aer_bound(1, 1, 1, 1e-200, 4), "R must be 0 or lie in [1e-100, 1e+100]"),
    (lambda: mm.lower_bound_aer(4.3e168, 1.1e226, 7.4e200, 1.8e105), "d must lie in"),
    (lambda: mm.apgd_complexity(1, 1, 1, 1e-300), "eps must lie in [1e-100, 1), got 1e-300"),
    (lambda: mm.thm31_distance_lower_bound(1e4, 1, 1e4, 1e200), "rounds must be 0 or lie in"),
    (lambda: mm.evaluate("lower_bound_aer", d=1e-150, N=10, m=2, R=0), "d must lie in"),
])
def test_python_bounds_take_the_range_the_command_takes(call, message):
    """F13: the command line takes parameters of magnitude 0 or in [1e-100, 1e100] (docs,
    safety); the Python functions took any float and answered past it silently: mu_g = inf
    and kappa_g = NaN in bilevel_constants at L = mu = lam = 1e200, 3.1e210 for 2.9e143 in
    lower_bound_aer (d m overflowed; a fuzz over [1e-300, 1e300]: silent inf, 0, NaN or wrong
    values in 30 of the 41 bounds, an OverflowError in fedprox_lambda). They now refuse it as
    the command does."""
    with pytest.raises(ValueError, match=re.escape(message)):
        call()


@pytest.mark.parametrize("call, message", [
    (lambda: mm.dichotomy_aer_bound(1, 1, 1, 1, 10, 10), "N must be >= 4*beta*m/mu (Theorems "
     "4 and 6 of paper 000: every client needs n_i >= 4*beta/mu), got N=10, beta=1, mu=1, m=10"),
    (lambda: mm.dichotomy_ier_bound(2, 0.5, 1, 1, 1, 5, 100), "got n_i=5, beta=2, mu=0.5"),
    (lambda: mm.local_aer_weighted(1, 1, 1, [0.5, 0.5], [3, 10]), "n must be >= 4*beta/mu"),
    (lambda: mm.fedprox_aer_bound(1, 1, 1, 1, 10, 10), "(Theorem 11 of paper 000"),
    (lambda: mm.fedprox_aer_bound_weighted(1, 1, 1, 1, [0.5, 0.5], [3, 10]), "Theorem 11"),
    (lambda: mm.fedprox_ier_bound(1, 1, 1, 1, 1, 0.1, [25, 3], 100, 4),
     "(Theorem 12 of paper 000: every client needs n_i >= 4*beta/mu), got n_i=3"),
])
def test_paper000_bounds_keep_n_i_at_least_4_beta_over_mu(call, message):
    """F14: paper 000's Theorems 4, 6, 11 and 12 assume n_i >= 4 beta/mu for every client;
    local_ier and the FedAvg bounds refused below it, but the dichotomous strategy (eqs.
    18-19, "under the assumptions in Theorems 4 and 6"), the weighted local AER and the FedProx
    bounds (eqs. 25-30) answered without a note (dichotomy_aer at N = m = 10: one sample per
    client for 4 needed)."""
    with pytest.raises(ValueError, match=re.escape(message)):
        call()


def test_bounds_count_written_with_a_fraction_is_refused(capsys):
    """F15: ``bounds`` tested a count (--d, --N, --m, --n_i, --n, --rounds) on the float its
    text reads as: --n_i 4.0000000000000001 (4.0 as a float) passed as 4 samples; the text is
    now read exactly, as the other verbs read their counts (1e3 and 4.0 still are whole)."""
    code, out, err = run_cli(["bounds", "local_ier", "--beta", "1", "--mu", "1", "--loss_sup",
                              "1", "--n_i", "4.0000000000000001"], capsys)
    assert code == 2 and out == ""
    assert ("--n_i is a client's number of samples: it must be a whole number, got "
            "'4.0000000000000001'") in err
    code, out, err = run_cli(["bounds", "local_ier", "--beta", "1", "--mu", "1", "--loss_sup",
                              "1", "--n_i", "4.0,1e3"], capsys)
    assert code == 0 and "n_i=1000  ->  value=0.001" in out


def test_arrays_that_do_not_broadcast_are_named():
    """F16: parameters given as arrays of shapes that do not broadcast were numpy's "operands
    could not be broadcast together with shapes (3,) (2,)" (naming no parameter) in 329 of the
    387 pairs of the registered bounds' parameters, and apgd_complexity and
    iapgd_katyusha_complexity answered L (or L_tilde) of 2 values with lam of 3 by outputs of
    different shapes."""
    with pytest.raises(ValueError, match=r"got N of shape \(3,\), m of shape \(2,\)"):
        mm.lower_bound_aer(10, np.array([1e3, 1e4, 1e5]), [10, 20], 0.1)
    with pytest.raises(ValueError, match=r"got L of shape \(2,\), lam of shape \(3,\)"):
        mm.apgd_complexity([2.0, 3.0], 1.0, [1.0, 2.0, 3.0], 0.5)
