"""Issue 32, fuzz37 (fuzzlogi): what this fuzz found, each test failing before."""

import pytest

import riskcalc
from riskcalc import Spectrum


def test_spectrum_small_lam_continues_below_1e4():
    """F1: the spectrum's one-point path stopped its continuation at lam = 1e-4 and jumped to
    the lam asked: at gamma = 4 (separable data), lam = 1e-6, two-point 1, 2 it was
    "quadrature not converged at the finest ladder level 190" after 19 s (gamma 1, signal r
    0.2, lam 1e-8: after 90 s). The value is the continuation's, which under Sigma = 4 I
    agrees with the isotropic limit to 1e-14 (the exact rescaling: twice the norms, lam / 4)."""
    res = riskcalc.logistic_limit(gamma=4.0, signal=0.5, r=0.5, lam=1e-6,
                                  spectrum=Spectrum([1.0, 2.0]))
    assert res.risk == pytest.approx(33.848094461524134, rel=1e-8)


def test_spectrum_global_model_small_global_lam():
    """F1: the spectrum's global model stopped at global_lam = 1e-4 likewise: FedAvg at gamma
    = 6 x 2 clients, global_lam = 1e-6 under Sigma = 4 I was "quadrature not converged" after
    28 s (global_lam = 1e-8 at gamma 6 under two-point 1, 2 took 330 s), Sigma = I answers."""
    res = riskcalc.logistic_clients_limit(gamma=[6.0, 6.0], r=[0.5, 0.5], signal=0.5,
                                          global_lam=1e-6, method="fedavg",
                                          spectrum=Spectrum([4.0]))
    # The Sigma = I route at twice the norms, global_lam / 4 (risk / 4): 0.5 s more to run.
    assert res.risk[0] == pytest.approx(19.221418696345857, rel=1e-9)


def test_spectrum_fixed_point_stops_at_max_seconds():
    """F2: the spectrum's fixed point had no deadline (Sigma = I has one): lam = 0 just below
    the Candes-Sur threshold at the margin scale ``||w_i||_Sigma`` (gamma = h (1 - 1e-4)) ran
    past 300 s with ``max_seconds = 10``; now refused at the limit, saying why."""
    import time

    import numpy as np

    spectrum = Spectrum([1.0, 2.0])
    h = riskcalc.mle_threshold(float(np.hypot(1.0, 0.5) * np.sqrt(1.5)))
    begun = time.perf_counter()
    with pytest.raises(ValueError, match=r"still solving at max_seconds = 0\.2 .*0\.0001 "
                                         r"below the Candes-Sur threshold h = 0\.40290"):
        riskcalc.logistic_limit(gamma=h * (1 - 1e-4), signal=1.0, r=0.5, lam=0.0,
                                spectrum=spectrum, max_seconds=0.2)
    assert time.perf_counter() - begun < 2.0


def test_finite_m_spectrum_estimates_its_work():
    """F3: the finite-M limits under a spectrum had no work estimate (``max_seconds`` was
    never read): FedAvg, RTFA and local ridge at 3 clients under scaled:1e4 (margins 100 times
    Sigma = I's) ran 14-51 s with ``max_seconds = 5`` while the oracle limit there, and Sigma
    = I at the same margins, are refused before solving."""
    with pytest.raises(ValueError, match=r"^the finite-M logistic limit \(signal = 1, r up to "
                                         r"0\.5, 1 distinct clients; under this spectrum "
                                         r"\(mean eigenvalue 1e\+04\) the margins' scale is 100 "
                                         r"\|\|w_i\|\|\): estimated at .* max_seconds = 5; "
                                         r"signal and r at most"):
        riskcalc.logistic_limit(gamma=0.5, signal=1.0, r=0.5, clients=3, global_lam=0.1,
                                method="fedavg", spectrum=Spectrum([1e4]), max_seconds=5)


@pytest.mark.parametrize("kw", [dict(signal=0.0, r=0.0), dict(signal=2.0, r=1.0, clients=3)])
def test_spectrum_local_ridge_at_its_largest_lam(kw):
    """F4: local ridge under a spectrum at lam = 1e4, the edge of its measured range
    (``ranges.SPECTRUM_LAM_MAX``), was "no convergence at lam = 10000" under two-point 1, 2
    (M = 3, signal 1, r 0.5) and under Sigma = 4 I at w_i = 0: the large-lam start floored the
    fluctuation's norm rho at 1e-3, 20 times the solution's 5.7e-5. Checked by the exact
    rescaling Sigma = 4 I (halved norms, lam / 4, risk / 4)."""
    half = {k: v / 2 if k in ("signal", "r") else v for k, v in kw.items()}
    res = riskcalc.logistic_limit(gamma=0.5, lam=1e4, method="local_ridge",
                                  spectrum=Spectrum([4.0]), **half)
    iso = riskcalc.logistic_limit(gamma=0.5, lam=2500.0, method="local_ridge", **kw)
    assert res.risk == pytest.approx(iso.risk / 4, rel=1e-9)
    two = riskcalc.logistic_limit(gamma=0.5, lam=1e4, method="local_ridge",
                                  spectrum=Spectrum([1.0, 2.0]), **half)
    norm2 = half["signal"] ** 2 + half["r"] ** 2
    assert abs(two.risk - norm2) < 1e-3 * max(norm2, 1.0)        # lam -> inf: ||w_i||^2


@pytest.mark.parametrize("change, match", [
    (dict(signal="1"), "^signal must be a real number, got '1'"),
    (dict(signal=True), "^signal must be a real number, got True"),
    (dict(lams="0.5"), "^lam must be a real number"),
    (dict(lams=[True]), "^lam must be a real number"),
    (dict(lams=[0.5 + 0j]), "^lam must be a real number.*complex"),
    (dict(lams=[]), "^lams must list at least one penalty"),
])
def test_one_client_simulation_reads_numbers_strictly(change, match):
    """F5: ``montecarlo.logistic.ridge.simulate`` made its signal, r and lams float() before
    any check: signal "1" or True, lams "0.5", [True] or [0.5 + 0j] (with numpy's
    ComplexWarning) ran as numbers, lams [] returned empty arrays; the pipeline refuses them."""
    from montecarlo.logistic.ridge import simulate

    kw = {**dict(gamma=1.0, signal=1.0, r=0.5, lams=[0.5], d=10, reps=2), **change}
    with pytest.raises(ValueError, match=match):
        simulate(**kw)


def test_finite_m_spectrum_own_solves_stop_at_max_seconds():
    """F6: at finite M under a spectrum the clients' own fixed points (local ridge, and RTFA's
    local MLE at lam = 0, both by ``own``) had no deadline: lam = 0 at gamma = h (1 - 1e-4)
    ran past 60 s with ``max_seconds = 2`` (the estimate cannot see the MLE's growth). The
    global model (~0.07 s quiet) must finish first for the own solves to be the ones stopped:
    0.22 s left it unfinished on a loaded machine (session 40), hence 0.6 s."""
    import time

    import numpy as np

    h = riskcalc.mle_threshold(float(np.hypot(1.0, 0.5) * np.sqrt(1.5)))
    begun = time.perf_counter()
    with pytest.raises(ValueError, match=r"^lam = 0: .*still solving at max_seconds = 0\.6 "):
        riskcalc.logistic_clients_limit(gamma=[h * (1 - 1e-4)] * 2, r=[0.5, 0.5], signal=1.0,
                                        lam=0.0, global_lam=0.1, spectrum=Spectrum([1.0, 2.0]),
                                        max_seconds=0.6)
    assert time.perf_counter() - begun < 3.0


def test_mle_threshold_at_large_signal_strength():
    """F7: ``mle_threshold`` minimized over t in [0, 50], but the minimizer is ~0.379 kappa:
    beyond kappa ~ 132 it returned the bracket edge's value, h(150) = 0.006842 for 0.006768
    and h(1000) = 0.0043 for 0.0010153 (mpmath at 30 digits), so lam = 0 at gamma = 0.003,
    ||w_i|| = 1000 (separable data) was taken for an existing MLE and solved."""
    assert riskcalc.mle_threshold(1000.0) == pytest.approx(0.0010152651533899303, rel=1e-9)
    with pytest.raises(ValueError, match="no finite minimizer"):
        riskcalc.logistic_limit(gamma=0.003, signal=1000.0, r=0.0, lam=0.0, max_seconds=None)


def test_compare_predicts_at_the_simulated_spectrum(capsys):
    """F8: ``compare --model logistic --spectrum SPEC --d D`` simulated Sigma's d eigenvalues
    (``Spectrum.eigenvalues(d)``, quantiles) but predicted at SPEC: powerlaw:1,1000 at d = 50
    simulated mean eigenvalue 0.755 against a limit at 1 (test error +18%, outside the
    interval). Now predicted at the realized spectrum with a note, as for d / n (the sweep
    too): two-point:1,4,0.3 at d = 5 simulates weights 0.2, 0.8."""
    import json

    from tests.helpers import run_cli

    code, out, err = run_cli(["compare", "rtfa", "--model", "logistic", "--gamma", "1",
                              "--signal", "1", "--r", "0.5", "--lam", "0.5", "--spectrum",
                              "two-point:1,4,0.3", "--d", "5", "--reps", "2", "--json",
                              "--no-progress"], capsys)
    assert code == 0, err
    row = json.loads(out)
    assert row["params"]["spectrum"] == "discrete[0.2@1, 0.8@4]"
    assert any("the d = 5 eigenvalues the simulation realizes" in n for n in row["notes"])
    res = riskcalc.logistic_limit(gamma=1.0, signal=1.0, r=0.5, lam=0.5,
                                  spectrum=Spectrum([1.0, 4.0], weights=[0.2, 0.8]))
    assert row["predicted"]["risk"] == pytest.approx(res.risk, rel=1e-12)


def test_finite_m_spectrum_global_model_stops_at_max_seconds():
    """F9: the global model under a spectrum had no deadline: FedAvg at global_lam = 0, 2
    clients at gamma 1e-4 inside the whitened pool's separability threshold (0.82874 under
    two-point 1, 2) ran past 60 s with ``max_seconds = 3`` (Sigma = I refuses in 0.2 s)."""
    import time

    begun = time.perf_counter()
    with pytest.raises(ValueError, match=r"^fedavg under this spectrum \(global_lam = 0\) "
                                         r"was still solving at max_seconds = 0\.22 "):
        riskcalc.logistic_clients_limit(gamma=[0.8286530655643303] * 2, r=[0.5, 0.5],
                                        signal=1.0, global_lam=0.0, method="fedavg",
                                        spectrum=Spectrum([1.0, 2.0]), max_seconds=0.22)
    assert time.perf_counter() - begun < 2.0


@pytest.mark.parametrize("method", ["rtfa", "pfedme"])
def test_finite_m_spectrum_fine_tuning_stops_at_max_seconds(method):
    """F10: RTFA's fine-tuning and the FedProx point under a spectrum had no deadline: at lam =
    1e-8 (2 clients, gamma 2 and 0.5) they took 9 and 14 s with ``max_seconds = 3``."""
    import time

    gamma = 2.0 if method == "rtfa" else 0.5
    begun = time.perf_counter()
    with pytest.raises(ValueError, match=rf"^{method} under this spectrum \(lam = 1e-08, "
                                         r"global_lam = 0\.1\) was still solving"):
        riskcalc.logistic_clients_limit(gamma=[gamma] * 2, r=[0.5, 0.5], signal=1.0, lam=1e-8,
                                        global_lam=0.1, method=method,
                                        spectrum=Spectrum([1.0, 2.0]), max_seconds=0.1)
    assert time.perf_counter() - begun < 2.0


@pytest.mark.parametrize("change, match", [
    (dict(gamma=["1"]), "^gamma must be a real number"),
    (dict(r=[True]), "^r must be a real number"),
    (dict(lam=["0.5"]), "^lam must be a real number"),
    (dict(gamma=[1 + 0j]), "^gamma must be a real number.*complex"),
    (dict(clients=[True], global_lam=0.1), "^clients must be a real number"),
])
def test_logistic_sweep_reads_its_lists_strictly(change, match):
    """F11: ``sweep_logistic`` read its grid lists by ``numpy.asarray(v, float)``: gamma
    ["1"], r [True], lam ["0.5"] and clients [True] ran as numbers, [1 + 0j] was a TypeError
    from float()."""
    from montecarlo.logistic.sweep import sweep_logistic

    kw = {**dict(gamma=[1.0], r=[0.5], signal=1.0, lam=[0.5], d=10, reps=2), **change}
    with pytest.raises(ValueError, match=match):
        sweep_logistic("rtfa", **kw)


def test_simulations_take_a_spec_string():
    """F12: the logistic simulations took ``spectrum`` as a Spectrum only: a SPEC string (which
    ``riskcalc.logistic_limit`` takes) or a list was an AttributeError ('str' object has no
    attribute 'is_identity') in ``ridge.simulate``, ``pipeline.simulate_pipeline`` and
    ``sweep_logistic``."""
    from montecarlo.logistic.pipeline import simulate_pipeline
    from montecarlo.logistic.ridge import simulate
    from montecarlo.logistic.sweep import sweep_logistic

    spec = "two-point:1,2,0.5"
    one = simulate(gamma=1.0, signal=1.0, r=0.5, lams=[0.5], d=10, reps=2, spectrum=spec)
    assert one["sigma_risk"][0][0] > 0
    rows = sweep_logistic("rtfa", gamma=[1.0], r=[0.5], signal=1.0, lam=[0.5], d=10, reps=2,
                          spectrum=spec)
    assert rows[0]["spectrum"] == "discrete[0.5@1, 0.5@2]"
    with pytest.raises(ValueError, match="^spectrum must be a riskcalc.Spectrum or a SPEC"):
        simulate_pipeline(gamma=1.0, signal=1.0, r=0.5, lams=[0.5], global_lam=0.1, d=10,
                          reps=2, clients=2, spectrum=[1.0, 2.0])


def test_spectrum_grid_that_does_not_broadcast_names_the_parameters():
    """F13: under a spectrum, gamma (2,) beside lam (3,) was numpy's "shape mismatch: objects
    cannot be broadcast to a single shape. Mismatch is between arg 0 with shape (2,) and arg
    3 ..." (the work estimate broadcast first); Sigma = I names gamma, signal, r and lam."""
    with pytest.raises(ValueError, match=r"^gamma, signal, r and lam do not broadcast together: "
                                         r"shapes \(2,\), \(\), \(\), \(3,\)"):
        riskcalc.logistic_limit(gamma=[0.5, 1.0], signal=1.0, r=0.5, lam=[0.1, 0.2, 0.3],
                                spectrum=Spectrum([1.0, 2.0]))


def test_fedprox_point_stops_at_max_seconds():
    """F14: the FedProx / pFedMe joint point (Sigma = I) had no deadline: lam = 1e-8 at 3
    clients of gamma 0.5 (separable data) ran 36 s with ``max_seconds = 5``, then failed with
    "a quadrature rule of 1.69e+08 nodes"; its estimate cannot see the norms grow."""
    import time

    begun = time.perf_counter()
    with pytest.raises(ValueError, match=r"^pfedme \(lam = 1e-08, global_lam = 0\.1\) was "
                                         r"still solving at max_seconds = 0\.1 "):
        riskcalc.logistic_limit(gamma=0.5, signal=1.0, r=0.5, lam=1e-8, clients=3,
                                global_lam=0.1, method="pfedme", max_seconds=0.1)
    assert time.perf_counter() - begun < 2.0


def test_fine_tuning_stops_at_max_seconds():
    """F15: RTFA's fine-tuning at finite M (Sigma = I) had no deadline: lam = 1e-12 at 2
    clients of gamma 2 (separable) ran 31 s with ``max_seconds = 3``."""
    import time

    begun = time.perf_counter()
    with pytest.raises(ValueError, match=r"^rtfa \(lam = 1e-12\) was still solving at "
                                         r"max_seconds = 0\.2 "):
        riskcalc.logistic_clients_limit(gamma=[2.0, 2.0], r=[0.5, 0.5], signal=1.0, lam=1e-12,
                                        global_lam=0.1, max_seconds=0.2)
    assert time.perf_counter() - begun < 2.0
