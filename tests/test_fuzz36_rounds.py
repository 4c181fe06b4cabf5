"""Issue 32, fuzz36 (rounds): what this fuzz found, each test failing before."""

import json

from tests.helpers import run_cli


def test_rtfa_after_rounds_under_covariate_shift_on_the_command_line(tmp_path, capsys):
    """``predict rtfa --rounds`` with per-client spectra was refused ("fedavg and pfedme/fedprox
    only") while ``rounds_limit("fedavg", spectra=...).personalized_risk(lam=...)`` and its
    simulation answer it (and ``predict fedavg --steps`` gives FTFA there): F1."""
    others = tmp_path / "others.json"
    others.write_text(json.dumps([{"gamma": 2.0, "r": 0.5, "sigma": 1.0,
                                   "spectrum": "scaled:3"}]))
    code, out, err = run_cli(["predict", "rtfa", "--gamma", 0.5, "--r", 1, "--sigma", 0.5,
                              "--clients-file", others, "--signal", 1, "--rounds", "0,5",
                              "--local-steps", 1, "--local-step-size", 0.1, "--lam", 0.3,
                              "--json"], capsys)
    assert code == 0, err
    rows = json.loads(out)
    assert [r["personalization"]["method"] for r in rows] == ["rtfa", "rtfa"]
    assert [round(r["personalized_risk"], 6) for r in rows] == [0.334293, 0.260618]
