"""Issue 32, fuzz41 (bounds): what this fuzz found, each test failing before."""

import itertools
import random

import pytest

import riskcalc.cli.bounds as cli_bounds
from riskcalc.minimax import BOUNDS
from tests.helpers import run_cli
from tests.test_minimax import VALID


def test_f1_grid_evaluated_by_chunks(monkeypatch, capsys):
    """F1: a grid of 100,000 points called every bound once per point (10-20 s of CPU, no
    progress, no limit); it is now one call per chunk of points."""
    calls = []
    real = cli_bounds.evaluate
    monkeypatch.setattr(cli_bounds, "evaluate", lambda *a, **k: calls.append(1) or real(*a, **k))
    grid = ",".join(str(0.001 * (i + 1)) for i in range(1000))
    code, out, _ = run_cli(["bounds", "fedavg_aer", "--beta", 1, "--mu", 1, "--loss_sup", 1,
                            "--R", grid, "--N", "100,200"], capsys)
    assert code == 0 and out.count("->") == 2000 and len(calls) == 1


def _grid(rng, spec):
    given = {}
    for p in spec.params:
        if p in VALID:
            vals = {VALID[p] * 10 ** rng.uniform(-0.5, 0.5) for _ in range(rng.choice([1, 2, 2]))}
            if p in cli_bounds.COUNTS:
                vals = {float(max(1, round(v))) for v in vals}
            given[p] = sorted(vals)
    return given


@pytest.mark.parametrize("seed", range(24))
def test_f1_grid_rows_equal_each_point_alone(seed):
    """F1: the chunked grid gives each point's numbers bit for bit as that point alone (on
    arrays: numpy's scalar route differs in the last bit, mu0 of logistic_constants_printed)."""
    rng = random.Random(seed)
    name = "logistic_constants_printed" if seed == 0 else rng.choice(sorted(BOUNDS))
    given = _grid(rng, BOUNDS[name])
    combos = list(itertools.product(*given.values()))
    try:
        rows = cli_bounds._chunk(name, list(given), combos)
    except ValueError:
        return
    assert len(rows) == len(combos)
    for combo, row in zip(combos, rows):
        assert cli_bounds._chunk(name, list(given), [combo]) == [row]


class _Ran(Exception):
    pass


def _ran(*args, **kwargs):
    raise _Ran


@pytest.mark.parametrize("target, refused", [("source", True), ("other", True),
                                             ("report", False), ("new", False)])
def test_f2_report_out_only_over_a_previous_report(target, refused, tmp_path, monkeypatch,
                                                   capsys):
    """F2: ``python -m paper_checks.report --out paper_checks/p001.py`` replaced a source file
    of the package with the report after the run; an existing file that is not a previous
    report is now refused before the run (a previous report, or a new file, is written)."""
    import paper_checks
    from paper_checks import report

    monkeypatch.setattr(paper_checks, "run_claims", _ran)
    (tmp_path / "other.txt").write_text("notes\n")
    (tmp_path / "report.md").write_text(report.HEADER + "\n\nold\n")
    out = {"source": report.__file__.replace("report.py", "p001.py"),
           "other": tmp_path / "other.txt", "report": tmp_path / "report.md",
           "new": tmp_path / "new.md"}[target]
    before = open(out).read() if target == "source" else None
    with pytest.raises(SystemExit if refused else _Ran) as exc:
        report.main(["--quick", "--no-sensitivity", "--out", str(out)])
    if refused:
        assert exc.value.code == 2
        assert "an existing file that is not a report" in capsys.readouterr().err
    if before is not None:
        assert open(out).read() == before


def test_f3_an_overflowing_value_is_shown_as_typed(capsys):
    """F3: ``bounds ... --c_x 1,-1e999`` was told "got -inf", a value nobody typed; it now
    says what was typed overflows, as the other verbs' number options do."""
    code, out, err = run_cli(["bounds", "logistic_constants", "--c_x", "1,-1e999", "--D", 1,
                              "--d", 4], capsys)
    assert code == 2 and out == ""
    assert err.strip() == ("error: --c_x: '-1e999' overflows: beyond the largest float "
                           "(about 1.8e308), it would be read as infinite")


@pytest.mark.parametrize("module", ["report", "sensitivity"])
def test_f4_paper_checks_jobs_capped_at_the_cores(module, tmp_path, monkeypatch, capsys):
    """F4: ``python -m paper_checks.report --jobs 99999`` (and ``paper_checks.sensitivity``)
    asked for 99999 worker processes; the count is capped at the cores (a note says so), as
    ``riskcalc check --jobs`` is."""
    import importlib

    import montecarlo.runner.budget
    import paper_checks

    mod = importlib.import_module(f"paper_checks.{module}")
    asked = []

    def record(claims, **kwargs):
        asked.append(kwargs["n_jobs"])
        raise _Ran

    monkeypatch.setattr(montecarlo.runner.budget, "cores", lambda: 2)
    monkeypatch.setattr(paper_checks, "run_claims", record)
    monkeypatch.setattr(mod, "sensitivity", record, raising=False)
    argv = (["--quick", "--out", str(tmp_path / "r.md")] if module == "report"
            else ["--claim", "001.eq4.prox-sign", "--claim", "001.sec2.summand-lower-bound"])
    with pytest.raises(_Ran):
        mod.main([*argv, "--jobs", "99999"])
    assert asked == [2] and "capped at the 2 cores" in capsys.readouterr().err


def test_f1_a_refusal_in_a_chunk_names_its_grid_point(capsys):
    """F1: a grid point refused inside a chunk (the 4501st of 5000: m > N) is refused with the
    message of that point alone, naming it, as point by point."""
    n_values = ",".join(str(1000 + i) for i in range(2500)) + ",3," + ",".join(
        str(5000 + i) for i in range(2499))
    code, out, err = run_cli(["bounds", "lower_bound_aer", "--d", 1, "--m", 4, "--R", "0.1,1",
                              "--N", n_values], capsys)
    assert code == 2 and out == ""
    assert err.strip() == "error: m must be <= N, got m=4, N=3"
