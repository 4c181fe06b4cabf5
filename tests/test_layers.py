"""DESIGN.md layering: theory (riskcalc but its cli) imports neither simulation nor consumers;
simulation (montecarlo) imports no consumer (figures, paper_checks); the command imports only
what the named subcommand needs."""

import ast
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
THEORY = sorted(p for p in (ROOT / "riskcalc").rglob("*.py") if "cli" not in p.parts)
SIMULATION = sorted((ROOT / "montecarlo").rglob("*.py"))


def imported_roots(path):
    """Top-level package names a module imports (anywhere in the file)."""
    roots = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            roots |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            roots.add(node.module.split(".")[0])
    return roots


@pytest.mark.parametrize("path", THEORY, ids=lambda p: str(p.relative_to(ROOT)))
def test_theory_imports_no_simulation(path):
    assert not imported_roots(path) & {"montecarlo", "figures", "paper_checks"}


@pytest.mark.parametrize("path", SIMULATION, ids=lambda p: str(p.relative_to(ROOT)))
def test_simulation_imports_no_consumer(path):
    assert not imported_roots(path) & {"figures", "paper_checks"}


@pytest.mark.parametrize("argv", [
    ["predict", "ftfa", "--gamma", "2", "--r", "1", "--sigma", "0.5"],
    ["predict", "rtfa", "--gamma", "2", "--r", "1", "--sigma", "0.5", "--lam", "0.3",
     "--clients", "5"],
    ["bounds", "--list"],
    ["--help"],
])
def test_light_commands_do_not_load_simulation_or_scipy(argv):
    # Start-up (issue 12): only the named subcommand's module is imported, so a theory-only
    # call never pays for the simulation code, joblib or scipy.
    code = ("import sys\nfrom riskcalc.cli import main\n"
            "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            "heavy = sorted({m.split('.')[0] for m in sys.modules} & "
            "{'montecarlo', 'scipy', 'joblib', 'matplotlib', 'figures', 'paper_checks'})\n"
            "sys.stderr.write(repr(heavy))\n")
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True,
                         cwd=ROOT)
    assert out.stderr.strip().splitlines()[-1] == "[]", out.stderr
