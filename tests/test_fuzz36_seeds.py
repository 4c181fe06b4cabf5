"""Issue 32, fuzz36 (seeds): what this fuzz found, each test failing before."""

import numpy as np

from montecarlo.sweep import sweep
from montecarlo.linear.instances import Setting


def test_sweep_cache_follows_a_client_spectrum_file(tmp_path):
    """F1: a sweep's task named another client's ``file:PATH`` spectrum (covariate shift), not
    its numbers: rerun with its ``--cache`` after the file changed, it took the former file's
    simulations beside the new file's predictions (simulated bias 0.849 for 2.37, predicted
    2.54), silently."""
    eig, cache = tmp_path / "eig.txt", tmp_path / "c.jsonl"
    setting = dict(d=8, clients=2, global_model="federated", gammas=(1.5,),
                   spectra=("identity", f"file:{eig}"))

    def run(cache_file):
        rows = sweep("rtfa", gamma=2.0, r=1.0, sigma=0.5, lam=0.5, reps=2,
                                setting=Setting(**setting), cache=cache_file, progress=False)
        return rows[0]["simulated_bias"]

    np.savetxt(eig, [1.0] * 4 + [4.0] * 4)
    first = run(cache)
    np.savetxt(eig, [1.0] * 4 + [100.0] * 4)
    assert run(cache) == run(None) != first
