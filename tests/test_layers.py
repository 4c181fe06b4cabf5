"""DESIGN.md layering: theory (riskcalc but its cli) imports neither simulation nor consumers;
simulation (montecarlo) imports no consumer (figures, paper_checks)."""

import ast
import pathlib

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
