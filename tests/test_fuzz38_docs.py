"""Issue 32, fuzz38 (docs): what this fuzz found, each test failing before."""

import pathlib
import re

import pytest

import riskcalc
from tests.helpers import run_cli

TWO_POINT = "two-point:1,4,0.5"
ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_maml_fl_with_a_spectrum_and_too_many_clients_is_refused():
    """F1: README ("What it does not cover") says finite-M pFedMe beyond 1e8 clients under a
    spectrum is refused; MAML-FL's route loses its digits the same way (about M eps) and
    answered: its bias, which lies above the M -> infinity limit (FTFA's, 1.0 here) by 24 / M,
    came out 5.6e-3 BELOW it at M = 1e14 and 1.74 at M = 2^53. Beyond 1e8 clients it is now
    refused as pFedMe's is; at 1e8 it still answers, 2e-7 above the oracle limit."""
    args = dict(gamma=2.0, sigma=0.5, r=1.0, alpha=0.5, spectrum=TWO_POINT)
    for clients in (10 ** 14, 2 ** 53):
        with pytest.raises(riskcalc.SolverError, match=r"^maml_fl's finite-M limit under a "
                                                       r"spectrum loses digits beyond 1e\+08"):
            riskcalc.limit("maml_fl", clients=clients, **args)
    near = riskcalc.limit("maml_fl", clients=10 ** 8, **args)
    oracle = riskcalc.limit("ftfa", gamma=2.0, sigma=0.5, r=1.0, spectrum=TWO_POINT)
    assert 0 < near.bias - oracle.bias < 3e-7
    assert near.risk == pytest.approx(oracle.risk, rel=1e-6)


def test_federation_file_number_below_the_smallest_float_is_refused(tmp_path, capsys):
    """F2: docs/cli.rst: in a federation file "nothing is coerced", with the command line's
    ranges; ``--sigma 1e-400`` is refused (nonzero, read as 0 by float), but ``"sigma":
    1e-400`` in the file was read as 0 silently (printed "sigma = 0.0"). It is now the same
    refusal, naming the file, the client and the key."""
    fed = tmp_path / "fed.json"
    fed.write_text('{"fedrisk_federation": 1, "clients": [{"gamma": 2, "r": 1, "sigma": 1e-400},'
                   ' {"gamma": 0.5, "r": 1, "sigma": 1}]}')
    code, out, err = run_cli(["predict", "ftfa", "--federation", fed], capsys)
    assert code == 2 and out == ""
    assert err == (f"error: --federation {fed}: client 0: sigma: '1e-400' is nonzero but below "
                   "the smallest positive float (about 4.9e-324), which would read it as 0: give "
                   "a number above 1e-300, or 0 where 0 is allowed\n")
    code, _, err = run_cli(["predict", "ftfa", "--gamma", "2", "--r", "1", "--sigma", "1e-400"],
                           capsys)
    assert code == 2 and "'1e-400' is nonzero but below the smallest positive float" in err
    fed.write_text(fed.read_text().replace("1e-400", "0e-400"))
    assert run_cli(["predict", "ftfa", "--federation", fed], capsys)[0] == 0


@pytest.mark.parametrize("noise", ["rademacher", "student-t"])
def test_noise_law_under_the_conditional_measure_is_refused(noise, capsys):
    """F3: docs/simulation.rst offers ``--noise rademacher|student-t`` to show that the limits
    do not depend on Gaussianity, and docs/safety.rst says options without effect are errors;
    under the default conditional measure (the exact expectation over the noise given the
    designs) the noise is never drawn: ``compare ftfa ... --noise rademacher`` printed the
    Gaussian run's numbers to the last digit. It is refused there, in Python too; with
    ``--measure empirical`` the law is drawn."""
    argv = ["compare", "ftfa", "--gamma", "2", "--r", "1", "--sigma", "0.5", "--d", "40",
            "--reps", "2", "--no-progress", "--noise", noise]
    code, out, err = run_cli(argv, capsys)
    assert code == 2 and out == ""
    assert err.startswith(f"error: --noise {noise} has no effect under --measure conditional")
    assert run_cli(argv + ["--measure", "empirical"], capsys)[0] == 0
    import montecarlo

    with pytest.raises(ValueError, match=rf"^noise='{noise}' has no effect with measure="):
        montecarlo.compare("ftfa", gamma=2.0, r=1.0, sigma=0.5, d=40, reps=2, noise=noise)


def test_documented_sweep_over_clients_names_the_federated_model(capsys):
    """F4: docs/cli.rst's synopsis (``sweep ... --out results.csv [--clients 5,20,100]``) and
    docs/finite_clients.rst ("``sweep --clients 5,20,100`` runs the grid once per number of
    clients") give --clients alone, which the command refuses ("--clients applies with
    --global federated only"): every documented grid over clients now says --global
    federated, as the command needs."""
    code, out, err = run_cli(["sweep", "rtfa", "--gamma", "2", "--r", "1", "--sigma", "0.5",
                              "--lam", "0.1", "--d", "40", "--reps", "2", "--clients", "5,20",
                              "--out", "never.csv"], capsys)
    assert code == 2 and out == "" and "--clients applies with --global federated only" in err
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.rst"))]
    grids = [(p.name, m.group(0)) for p in pages for m in re.finditer(
        r"(\S+\s+){2}--clients \d+,\d+", p.read_text())]
    assert len(grids) >= 3
    assert [g for g in grids if "--global federated --clients" not in " ".join(g[1].split())] == []


def test_readme_gives_bootstrap_with_data_only(capsys):
    """F5: README's table of verbs gave ``riskcalc advise --federation FED.json ...
    [--bootstrap]``, which the command refuses (``--bootstrap needs --data``: the draws need
    the estimates' joint covariance, which only data give); the row now offers --bootstrap
    with ``--data FED.npz`` only."""
    fed = ROOT / "docs" / "examples" / "federation.json"
    code, out, err = run_cli(["advise", "--federation", fed, "--bootstrap"], capsys)
    assert code == 2 and out == "" and err.startswith("error: --bootstrap needs --data")
    row = next(line for line in (ROOT / "README.md").read_text().splitlines()
               if line.startswith("| `riskcalc advise "))
    assert "--data FED.npz [--bootstrap]" in row and row.count("--bootstrap") == 1


def test_errata_page_states_the_early_stopping_finding_right():
    """F6: docs/errata.rst said FTFA in paper 003's linear model (gamma = 2, r = 1, sigma^2 =
    0.1, step 0.15) is best "after about 20 gradient steps (0.579), rising to 0.601 at
    convergence"; the exact curve is lowest at k = 16 (0.5774; 0.579 is k = 20) and the
    converged limit is 0.600 (r^2 (1 - 1/gamma) + sigma^2 / (gamma - 1), Thm 1; 0.601 was a
    simulated k = 1000), as docs/finite_steps.rst says."""
    args = dict(gamma=2.0, r=1.0, sigma=0.1 ** 0.5, step_size=0.15)
    best = riskcalc.optimal_steps("ftfa", max_steps=200, **args)
    assert best.params["steps"] == 16 and round(best.risk, 3) == 0.577
    assert round(float(riskcalc.steps_limit("ftfa", steps=20, **args).risk), 3) == 0.579
    assert riskcalc.limit("ftfa", gamma=2.0, r=1.0, sigma=0.1 ** 0.5).risk == pytest.approx(0.6)
    text = " ".join((ROOT / "docs" / "errata.rst").read_text().split())
    assert "lowest after 16 gradient steps (0.577; 0.579 after 20), rising to 0.600" in text
