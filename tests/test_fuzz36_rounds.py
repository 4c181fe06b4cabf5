"""Issue 32, fuzz36 (rounds): what this fuzz found, each test failing before."""

import json

import numpy as np
import pytest

import riskcalc
from tests.helpers import run_cli


def test_rtfa_after_rounds_under_covariate_shift_on_the_command_line(tmp_path, capsys):
    """``predict rtfa --rounds`` with per-client spectra was refused ("fedavg and pfedme/fedprox
    only") while ``rounds_limit("fedavg", spectra=...).personalized_risk(lam=...)`` and its
    simulation answer it (and ``predict fedavg --steps`` gives FTFA there): F1."""
    others = tmp_path / "others.json"
    others.write_text(json.dumps([{"gamma": 2.0, "r": 0.5, "sigma": 1.0,
                                   "spectrum": "scaled:3"}]))
    code, out, err = run_cli(["predict", "rtfa", "--gamma", 0.5, "--r", 1, "--sigma", 0.5,
                              "--clients-file", others, "--signal", 1, "--rounds", "0,1",
                              "--local-steps", "inf", "--lam", 0.3, "--json"], capsys)
    assert code == 0, err
    rows = json.loads(out)
    assert [r["personalization"]["method"] for r in rows] == ["rtfa", "rtfa"]
    assert [round(r["personalized_risk"], 6) for r in rows] == [0.334293, 0.214964]


def test_rounds_to_eps_below_the_curves_resolution_is_refused():
    """FedAvg with exact local solves, contraction 0.2: eps = 1e-18 of the risk and 1e-300 of
    the distance were both answered T = 23, where the curve is the fixed point to rounding
    (rho^T < 1e-16); the gaps fall like 0.2^T and reach those eps only past T = 60 (the risk's
    1e-300 past T = 420): F2."""
    kw = dict(gamma=[0.5, 2], r=0.5, sigma=0.5, signal=1.0, local_steps=np.inf, max_rounds=60)
    for of, eps in (("risk", 1e-18), ("distance", 1e-300)):
        with pytest.raises(ValueError, match=r"below what the curve resolves.*eps >= 1\.\d+e-12"):
            riskcalc.rounds_to_eps("fedavg", eps=eps, of=of, **kw)
    assert riskcalc.rounds_to_eps("fedavg", eps=1e-10, **kw).rounds == 14
