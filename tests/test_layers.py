"""DESIGN.md layering: theory (riskcalc but its cli) imports neither simulation nor consumers;
simulation (montecarlo) imports no consumer (figures, paper_checks); the command imports only
what the named subcommand needs."""

import ast
import functools
import json
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
THEORY = sorted(p for p in (ROOT / "riskcalc").rglob("*.py") if "cli" not in p.parts)
SIMULATION = sorted((ROOT / "montecarlo").rglob("*.py"))


@functools.cache
def import_nodes(path):
    """The import statements of a module, anywhere in the file: each module is parsed once per
    session (about 0.9 s of CPU for the two packages), not once per test reading it."""
    return tuple(node for node in ast.walk(ast.parse(path.read_text()))
                 if isinstance(node, (ast.Import, ast.ImportFrom)))


def imported_roots(path):
    """Top-level package names a module imports (anywhere in the file)."""
    roots = set()
    for node in import_nodes(path):
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


LIGHT = [
    ["predict", "ftfa", "--gamma", "2", "--r", "1", "--sigma", "0.5"],
    ["predict", "rtfa", "--gamma", "2", "--r", "1", "--sigma", "0.5", "--lam", "0.3",
     "--clients", "5"],
    ["bounds", "--list"],
    ["--help"],
]


@pytest.fixture(scope="module")
def heavy_after():
    """The heavy packages loaded after each command of ``LIGHT``, all run in one fresh process,
    one after the other: modules only accumulate, so a command's list holds what the commands
    before it loaded and its own (the first command loading one is the first to fail), and a
    command that loads none has an empty list, as in a process of its own."""
    code = ("import json, sys\nfrom riskcalc.cli import main\n"
            "for argv in json.loads(sys.argv[1]):\n"
            "    try:\n        main(argv)\n    except SystemExit:\n        pass\n"
            "    heavy = sorted({m.split('.')[0] for m in sys.modules} & "
            "{'montecarlo', 'scipy', 'joblib', 'matplotlib', 'figures', 'paper_checks'})\n"
            "    sys.stderr.write('heavy: ' + json.dumps(heavy) + '\\n')\n")
    out = subprocess.run([sys.executable, "-c", code, json.dumps(LIGHT)], capture_output=True,
                         text=True, cwd=ROOT)
    lists = [json.loads(line[len("heavy: "):]) for line in out.stderr.splitlines()
             if line.startswith("heavy: ")]
    assert len(lists) == len(LIGHT), out.stderr
    return lists


@pytest.mark.parametrize("index", range(len(LIGHT)), ids=[" ".join(a[:2]) for a in LIGHT])
def test_light_commands_do_not_load_simulation_or_scipy(heavy_after, index):
    # Start-up (issue 12): only the named subcommand's module is imported, so a theory-only
    # call never pays for the simulation code, joblib or scipy.
    assert heavy_after[index] == [], LIGHT[index]


@functools.cache
def module_graph():
    """Every riskcalc and montecarlo module and the modules of the two packages it imports,
    lazy imports inside functions included (a circle through a lazy import is still a circle).
    Built once per session; its readers do not change it."""
    mods = {}
    for pkg in ("riskcalc", "montecarlo"):
        for p in (ROOT / pkg).rglob("*.py"):
            rel = p.relative_to(ROOT).with_suffix("")
            parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
            mods[".".join(parts)] = p

    def resolve(name):
        while name not in mods and "." in name:
            name = name.rsplit(".", 1)[0]
        return name if name in mods else None

    graph = {}
    for name, path in mods.items():
        edges = set()
        for node in import_nodes(path):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [f"{node.module}.{a.name}" for a in node.names]
            else:
                continue
            for t in targets:
                r = resolve(t)
                # A module reaching its own package's __init__ (riskcalc.linear.engine.kappa
                # importing riskcalc) is how Python imports any submodule, not a circle.
                if r is not None and r != name and not name.startswith(r + "."):
                    edges.add(r)
        graph[name] = edges
    return graph


def test_no_import_circles():
    graph = module_graph()
    index, low, stack, on_stack, circles = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert circles == []


def test_the_linear_engine_imports_no_room():
    graph = module_graph()
    engine = [m for m in graph if m.startswith("riskcalc.linear.engine")]
    assert engine
    for m in engine:
        outside = {t for t in graph[m] if t.startswith("riskcalc.linear.")
                   and not t.startswith("riskcalc.linear.engine")}
        assert not outside, (m, outside)


@pytest.mark.parametrize("folder", ["riskcalc", "montecarlo"])    # every room, since session 38
def test_rooms_stay_small(folder):
    for d in [ROOT / folder, *(p for p in (ROOT / folder).rglob("*") if p.is_dir())]:
        modules = [p for p in d.glob("*.py") if p.name != "__init__.py"]
        assert len(modules) <= 12, (d, len(modules))


def test_the_riskcalc_top_level_stays_small():
    # The top level holds the shared helpers (validation, text, files, frames, errors), the
    # strict JSON layer and the registries; the families and a verb's theory are rooms
    # (riskcalc/estimate/, riskcalc/spectrum/, riskcalc/federation_file/ since session 38).
    # 12 modules besides __init__ then: a new module goes into a room, not here.
    modules = [p.name for p in (ROOT / "riskcalc").glob("*.py") if p.name != "__init__.py"]
    assert len(modules) <= 12, sorted(modules)
