"""Issue 32: the logistic family at extreme but finite inputs. Each input beyond the range
where the solver is measured to hold is refused up front (ValueError naming the parameter
and its range; CLI: one line ``error: ...``, exit 2); at the edges of the accepted ranges the
answers are checked against the known limits (lam -> inf and gamma -> inf: w_hat -> c)."""

import re

import pytest

import riskcalc
from riskcalc.cli import main
from riskcalc.spectrum import Spectrum
from riskcalc.logistic.ranges import GAMMA_RANGE, GLOBAL_LAM_MAX, LAM_MAX

BASE = dict(gamma=1.0, signal=2.0, r=0.5, lam=0.3)


@pytest.mark.parametrize("change, name", [
    (dict(signal=1e300), "signal"), (dict(r=1e300), "r"), (dict(gamma=1e-100), "gamma"),
    (dict(gamma=1e100), "gamma"), (dict(lam=1e50), "lam"), (dict(gamma=[1.0, 1e100]), "gamma"),
    (dict(lam=[0.3, 1e300]), "lam")])
def test_refused_up_front(change, name):
    with pytest.raises(ValueError, match=rf"^{name} must lie in"):
        riskcalc.logistic_limit(**{**BASE, **change})


def test_signal_refused_without_work_limit():
    # max_seconds=None skipped the work estimate, whose signal ** 2 overflowed; the range is
    # the shared one of riskcalc._validate.RANGES, as on the command line.
    with pytest.raises(ValueError, match=r"^signal must lie in \[0, 1e\+100\]"):
        riskcalc.logistic_limit(**{**BASE, "signal": 1e300}, max_seconds=None)


@pytest.mark.parametrize("gamma, lam", [(1e9, 1e-6), ([1e9, 1.0], 1e-6)])
def test_solution_outside_the_window_refused(gamma, lam):
    # mu ~ gamma / lam = 1e15 is beyond the clip e^30 of the residuals: refused, not returned.
    with pytest.raises(ValueError, match="out of the solver's reach"):
        riskcalc.logistic_limit(gamma=gamma, signal=2.0, r=0.5, lam=lam)


@pytest.mark.parametrize("centre", ["oracle", "fedavg"])
def test_largest_lam_is_the_centre(centre):
    # lam -> inf: w_hat -> c, so risk -> ||w_i - c||^2 = (1 - alpha)^2 S^2 + r^2 (u orthogonal
    # to w_0), c = alpha w_0 with alpha = 1 (oracle) or FedAvg's scale; the gap is O(1/lam)
    # (measured 7.4e-10 at lam = 1e8 for the oracle).
    alpha = 1.0 if centre == "oracle" else riskcalc.fedavg_centre_scale(2.0, 0.5)
    res = riskcalc.logistic_limit(**{**BASE, "lam": LAM_MAX}, centre=centre)
    assert res.risk == pytest.approx((1 - alpha) ** 2 * 4.0 + 0.25, abs=1e-7)
    assert res.q < 1e-6 and res.mu == pytest.approx(1.0 / LAM_MAX, rel=1e-6)


def test_cosine_at_largest_lam_is_not_rounding():
    # The cosine is cos + k / lam + O(1/lam^2): extrapolated from lam = 1e4 and 1e5 (where
    # rounding is 1e-13) to lam = LAM_MAX it must agree within the ladder's 1e-7.
    c4, c5, top = (riskcalc.logistic_limit(**{**BASE, "lam": lam}).cosine
                   for lam in (1e4, 1e5, LAM_MAX))
    k = (c4 - c5) / (1e-4 - 1e-5)
    assert top == pytest.approx(c5 + k * (1.0 / LAM_MAX - 1e-5), abs=1e-7)


def test_largest_gamma_is_the_centre():
    # gamma -> inf (n / d -> 0): the data do not move w_hat off c = w_0, risk -> r^2 + O(1/gamma)
    # (measured 0.25 + 4.9e-9 at gamma = 1e11).
    res = riskcalc.logistic_limit(**{**BASE, "gamma": GAMMA_RANGE[1]})
    assert res.risk == pytest.approx(0.25, abs=1e-6)


def test_smallest_gamma_is_finite_and_stable():
    # gamma -> 0: w_hat -> the population minimizer; q ~ sqrt(gamma) (measured 8.624e-07 at
    # 1e-12, 8.624e-09 at 1e-16), so q / sqrt(gamma) and the risk settle.
    lo, mid = (riskcalc.logistic_limit(**{**BASE, "gamma": g}) for g in (GAMMA_RANGE[0], 1e-12))
    assert lo.risk == pytest.approx(mid.risk, rel=1e-9)
    assert lo.q / 1e-8 == pytest.approx(mid.q / 1e-6, rel=1e-3)


@pytest.mark.parametrize("method, high", [("rtfa", GLOBAL_LAM_MAX["rtfa"]),
                                          ("fedavg", GLOBAL_LAM_MAX["global"])])
def test_global_lam_refused(method, high):
    kw = dict(gamma=1.0, signal=2.0, r=0.5, clients=5, global_lam=1e300, method=method)
    if method == "rtfa":
        kw["lam"] = 0.3
    with pytest.raises(ValueError, match="^" + re.escape(f"global_lam must lie in [0, {high:g}]")):
        riskcalc.logistic_limit(**kw)


def test_global_lam_largest_fedavg_is_zero_model():
    # global_lam -> inf: the global model -> 0, so FedAvg's risk -> ||w_i||^2 = S^2 + r^2.
    res = riskcalc.logistic_limit(gamma=1.0, signal=2.0, r=0.5, clients=5,
                                  global_lam=GLOBAL_LAM_MAX["global"], method="fedavg")
    assert res.risk == pytest.approx(4.25, abs=1e-9)


@pytest.mark.parametrize("extra, name", [
    (["--gamma", "1e-100", "--lam", "0.3"], "gamma"), (["--gamma", "1e100", "--lam", "0.3"],
                                                       "gamma"),
    (["--gamma", "1", "--lam", "1e50"], "lam"),
    (["--gamma", "1", "--lam", "0.3", "--clients", "5", "--global-lam", "1e300"],
     "global_lam")])
def test_cli_one_line_exit_2(extra, name, capsys):
    code = main(["predict", "rtfa", "--model", "logistic", "--signal", "2", "--r", "0.5",
                 *extra])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.startswith(f"error: {name} must lie in") and err.count("\n") == 1


def _two_point():
    return Spectrum.two_point(0.5, 2.0, 0.5)


@pytest.mark.parametrize("change, name", [
    (dict(gamma=1e-100), "gamma"), (dict(gamma=1e100), "gamma"), (dict(lam=1e5), "lam"),
    (dict(signal=1e300), "signal")])
def test_spectrum_path_refused(change, name):
    with pytest.raises(ValueError, match=rf"^{name} must lie in"):
        riskcalc.logistic_limit(**{**BASE, **change}, spectrum=_two_point())


def test_spectrum_solution_outside_the_window_refused():
    with pytest.raises(ValueError, match="out of the solver's reach"):
        riskcalc.logistic_limit(gamma=1e9, signal=2.0, r=0.5, lam=1e-6, spectrum=_two_point())


@pytest.mark.parametrize("kw, name", [
    (dict(gamma=1e-100), "gamma"), (dict(gamma=1e100), "gamma"), (dict(lam=1e50), "lam"),
    (dict(lam=1e50, method="local_ridge"), "lam"), (dict(signal=1e300), "signal"),
    (dict(gamma=[1.0, 1e100]), "gamma"), (dict(global_lam=[1.0, 1e4]), "global_lam"),
    (dict(lam=1e5, method="local_ridge", spectrum="two-point"), "lam")])
def test_finite_clients_refused(kw, name):
    kw = {**BASE, "clients": 5, "global_lam": 1.0, **kw}
    if kw.get("spectrum") == "two-point":
        kw["spectrum"] = _two_point()
    with pytest.raises(ValueError, match=rf"^{name} must lie in"):
        riskcalc.logistic_limit(**kw)


def test_finite_clients_largest_lam_is_the_global_model():
    # lam -> inf: RTFA's fine-tuned model -> the global model, and the joint FedProx / pFedMe
    # w_j -> the shared model = FedAvg's (both O(1/lam); pfedme is solved even at 1e50).
    kw = dict(gamma=1.0, signal=2.0, r=0.5, clients=5, global_lam=1.0)
    fedavg = riskcalc.logistic_limit(**kw, method="fedavg").risk
    assert riskcalc.logistic_limit(**kw, lam=LAM_MAX).risk == pytest.approx(fedavg, abs=1e-7)
    assert riskcalc.logistic_limit(**kw, lam=1e50, method="pfedme").risk == pytest.approx(
        fedavg, abs=1e-12)


def test_pfedme_largest_global_lam_is_local_ridge():
    # global_lam -> inf: the shared model -> 0, so w_j -> ridge toward 0 (local ridge).
    kw = dict(gamma=1.0, signal=2.0, r=0.5, lam=0.3, clients=5)
    ridge = riskcalc.logistic_limit(**kw, global_lam=1.0, method="local_ridge").risk
    top = riskcalc.logistic_limit(**kw, global_lam=GLOBAL_LAM_MAX["global"], method="pfedme")
    assert top.risk == pytest.approx(ridge, abs=1e-7)
