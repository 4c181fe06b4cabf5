"""Issue 32, fuzz40 (scale): what this fuzz found, each test failing before."""

import numpy as np

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
    for K, c in ((1, 1e-4), (2, 1e-6), (5, 1e-11), (2, 1e4)):
        eta = 0.05 / c
        res = rounds_limit("fedavg", signal=1.0, local_steps=K, step_size=eta,
                           spectrum=Spectrum([c], [1.0]), **FED)
        ref = rounds_limit("fedavg", signal=np.sqrt(c), local_steps=K, step_size=eta * c,
                           **dict(FED, r=np.sqrt(c) * np.array(FED["r"])))
        for got, want in ((res.risk, ref.risk), (res.local_risk, ref.local_risk),
                          (res.distance_to_fixed_point * c, ref.distance_to_fixed_point)):
            np.testing.assert_allclose(got, want, rtol=1e-12)
