"""Issue 32, fuzz40 (scale): what this fuzz found, each test failing before."""

import numpy as np
import pytest

from riskcalc.linear.dynamics import rounds_limit
from riskcalc.spectrum import Spectrum
from tests.helpers import run_cli

FED = dict(gamma=[0.5, 2.0, 4.0], r=[1.0, 0.5, 0.8], sigma=0.5, rounds=[0, 1, 5, np.inf])


def test_scaled_identity_answers_the_own_models_at_a_small_step_times_scale(capsys):
    """F1: FedAvg under scaled:1e-4 (Sigma = 1e-4 I), step 0.1: the own models' pencil lost
    them (eta c = 1e-5) and the CLI printed "local risk n/a: ... pooled N near d" at
    sum_j min(1, 1/gamma_j) = 1.5; K = 2 refused the whole curve so. Sigma = c I is exactly
    Sigma = I with step c eta and the models times sqrt(c) (the risk unchanged, the distance
    to the fixed point times c)."""
    code, out, err = run_cli(["predict", "fedavg", "--gamma", "2", "--r", "1", "--sigma", "0.5",
                              "--signal", "1", "--clients", "3", "--rounds", "1,2",
                              "--local-steps", "1", "--local-step-size", "0.1",
                              "--spectrum", "scaled:1e-4"], capsys)
    assert code == 0 and "n/a" not in out and "pooled N" not in out + err
    for K, c in ((5, 1e-11),):
        eta = 0.05 / c
        res = rounds_limit("fedavg", signal=1.0, local_steps=K, step_size=eta,
                           spectrum=Spectrum([c], [1.0]), **FED)
        ref = rounds_limit("fedavg", signal=np.sqrt(c), local_steps=K, step_size=eta * c,
                           **dict(FED, r=np.sqrt(c) * np.array(FED["r"])))
        for got, want in ((res.risk, ref.risk), (res.local_risk, ref.local_risk),
                          (res.distance_to_fixed_point * c, ref.distance_to_fixed_point)):
            np.testing.assert_allclose(got, want, rtol=1e-12)


def test_spectrum_routes_are_scale_covariant_at_a_tiny_top():
    """F2: under two atoms times c = 1e-11 (the steps times 1 / c, the models times 1 /
    sqrt(c): exactly the c = 1 federation), Algorithm 1 with K = 2 answered 2e-3 off, silently,
    and FedAvg with K = 2 was refused as "pooled N near d": the pencils form L0 + s E with L0
    of order 1. The routes now solve the spectrum rescaled to its top atom 1 and map back."""
    fed = dict(gamma=[0.5, 2.0], sigma=0.5, rounds=[0, 5, np.inf])

    def run(name, c, **kw):
        return rounds_limit(name, **fed, r=np.array([1.0, 0.5]) / np.sqrt(c),
                            signal=1.0 / np.sqrt(c), local_steps=2, step_size=0.05 / c,
                            spectrum=Spectrum([c, 3.0 * c], [0.5, 0.5]), **kw)
    for name, kw in (("fedavg", {}), ("pfedme", {"lam": 0.5})):
        ref, res = run(name, 1.0, **kw), run(name, 1e-11, **{k: v * 1e-11 for k, v in kw.items()})
        for got, want in ((res.risk, ref.risk), (res.global_risk, ref.global_risk),
                          (res.distance_to_fixed_point * 1e-11, ref.distance_to_fixed_point)):
            np.testing.assert_allclose(got, want, rtol=1e-12)
        if name == "pfedme":        # personalization's step mapped back too
            np.testing.assert_allclose(res.personalized_risk(steps=2, step_size=0.05 / 1e-11),
                                       ref.personalized_risk(steps=2, step_size=0.05),
                                       rtol=1e-12)


def test_a_tiny_step_times_spectrum_names_the_step_size():
    """F3: FedAvg's own models under two-point:1,4,0.5 at step_size 3e-5 (the round map's top
    5e-4: the pencil's density scan loses its bottom to rounding) were refused as "pooled N near
    d: sum_j min(1, 1/gamma_j) near 1" at 1.5; now the step size is named."""
    res = rounds_limit("fedavg", gamma=[2.0, 2.0, 2.0], r=1.0, sigma=0.5, signal=1.0,
                       rounds=[1, 2], local_steps=1, step_size=3e-5,
                       spectrum=Spectrum([1.0, 4.0], [0.5, 0.5]))
    with pytest.raises(ValueError, match=r"step_size: the round map's spectrum tops at 0\.00052 "
                                         r".*\(sum_j min\(1, 1/gamma_j\) = 1\.5 is off"):
        res.local_risk


def test_personalization_under_a_tiny_spectrum_is_scale_covariant():
    """F4: FedAvg's FTFA personalization (K = 1, two atoms times 1e-10, the steps times 1e10,
    the models times 1e5: exactly the unit federation) was a SolverError "the contour encloses
    1 of the round map's spectrum, not all of it": ``personalize_sigma`` too now solves at the
    spectrum's top atom 1."""
    fed = dict(gamma=[0.5, 2.0], sigma=0.5, rounds=[0, 3], local_steps=1)

    def run(c):
        res = rounds_limit("fedavg", **fed, r=np.array([1.0, 0.5]) / np.sqrt(c),
                           signal=1.0 / np.sqrt(c), step_size=0.05 / c,
                           spectrum=Spectrum([c, 3.0 * c], [0.5, 0.5]))
        return res.personalized_risk(steps=1, step_size=0.05 / c)
    np.testing.assert_allclose(run(1e-10), run(1.0), rtol=1e-12)


def test_covariate_shift_routes_are_scale_covariant_at_a_tiny_top():
    """F5: covariate shift (two-point:c,4c,0.5 and scaled:2c, c = 1e-10, the steps times 1 / c,
    the models times 1 / sqrt(c): exactly c = 1): Algorithm 1 with K = 2 answered 3.7e-5 off,
    silently; FedAvg with K = 1 was a SolverError "the contour encloses 1.00001 of the round
    map's spectrum". The shift routes now solve the joint spectrum at its largest value 1."""
    def run(name, c, **kw):
        return rounds_limit(name, gamma=[0.5, 2.0], sigma=0.5, rounds=[0, 3, np.inf],
                            r=np.array([1.0, 0.5]) / np.sqrt(c), signal=1.0 / np.sqrt(c),
                            local_steps=2 if kw else 1, step_size=0.05 / c,
                            spectra=[f"two-point:{c!r},{4 * c!r},0.5", f"scaled:{2 * c!r}"],
                            **{k: v * c for k, v in kw.items()})
    for name, kw in (("pfedme", {"lam": 0.5}), ("fedavg", {})):
        res, ref = run(name, 1e-10, **kw), run(name, 1.0, **kw)
        for got, want in ((res.risk, ref.risk), (res.global_risk, ref.global_risk),
                          (res.distance_to_fixed_point * 1e-10, ref.distance_to_fixed_point)):
            np.testing.assert_allclose(got, want, rtol=1e-12)


def test_an_unstable_even_step_under_a_scaled_identity_names_the_step_size(capsys):
    """F6: FedAvg with K = 2 under scaled:1e4 at step_size 0.3 (step_size times the top of the
    sample spectrum 1.7e4: the local steps diverge, which even K does not cover) said "support
    edge of the round map: no real solution at the start of the scan (inputs beyond floating
    point range?)"; scaled:1.0001 at 0.5, "the contour encloses 0.857337 of the round map's
    spectrum". Sigma = c I is refused as Sigma = I is, the top c (1 + sqrt(gamma_j))^2."""
    for spec, step, top in (("scaled:1e4", "0.3", "1.749e+04"), ("scaled:1.0001", "0.5", "2.915")):
        code, _, err = run_cli(["predict", "fedavg", "--gamma", "2", "--r", "1", "--sigma", "0.5",
                                "--signal", "1", "--clients", "3", "--rounds", "1,inf",
                                "--local-steps", "2", "--local-step-size", step,
                                "--spectrum", spec], capsys)
        assert code == 2 and err.startswith(
            "error: step_size: local gradient descent diverges on a client (step_size times its "
            f"sample spectrum's top c (1 + sqrt(gamma_j))^2 = {top} > 2, Sigma = c I"), err


def test_even_local_steps_at_their_stability_edge_name_the_step_size():
    """F7: FedAvg with K = 2 at step_size (1 + sqrt(3))^2 = 2 (the documented edge, allowed)
    raised "support edge of the round map: no real solution at the start of the scan (inputs
    beyond floating point range?)", and within 1e-9 of it "gamma: ... (pooled N = d: sum_j
    1/gamma_j = 0.8333333333, near 1)"; the same under scaled:2 at half the step (F1's route).
    The filter vanishes at that client's top: step_size is named."""
    edge = 2.0 / (1.0 + np.sqrt(3.0)) ** 2
    for step, spec in ((edge, None), (edge * (1 - 1e-9), None), (edge / 2, "scaled:2")):
        with pytest.raises(ValueError, match=r"^step_size: step_size \(1 \+ sqrt\(gamma_j\)\)\^2 "
                                             r"= [12][.0-9]* is at 2, the stability edge"):
            rounds_limit("fedavg", gamma=[2.0, 3.0], r=1.0, sigma=0.5, signal=1.0,
                         rounds=[1, 10], local_steps=2, step_size=step, spectrum=spec)


def test_a_slow_penalty_with_pooled_samples_short_of_d_is_not_called_the_threshold():
    """F8: Algorithm 1 with K = 1, 2 under two-point:0.5,1 at gamma (2, 3) (sum_j min(1,
    1/gamma_j) = 0.83) and lam 1e-2 (Sigma = I's top at K = 2: 1 - 6.9e-6) was refused as
    "the round map's spectrum reaches 1 (pooled N = d exactly: sum_j min(1, 1/gamma_j) = 1)";
    now the slow penalty is."""
    with pytest.raises(ValueError, match=r"^lam: the round map's top came out within 1e-9 of 1 "
                                         r"with sum_j min\(1, 1/gamma_j\) = 0\.8333, off"):
        rounds_limit("pfedme", gamma=[2.0, 3.0], r=1.0, sigma=0.5, signal=1.0, rounds=[1, 10],
                     local_steps=1, step_size=0.05, lam=1e-2,
                     spectrum=Spectrum([0.5, 1.0], [0.5, 0.5]))
