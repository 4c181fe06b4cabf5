"""What a new user meets first (issue 23): the version (one source of truth with pyproject),
show_versions, the license and citation files, the README's shape, the API pages covering
riskcalc.__all__, help texts, and papers cited by authors and year in outputs."""

import contextlib
import importlib.metadata
import io
import pathlib
import re
import subprocess
import sys
import tomllib

import pytest

import riskcalc
from riskcalc.cli import COMMANDS, main
from riskcalc.papers import PAPERS, cite

ROOT = pathlib.Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def run_cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(list(argv))
        except SystemExit as exc:
            status = exc.code
    return status, out.getvalue(), err.getvalue()


def test_version_has_one_source_of_truth():
    # pyproject reads the version from riskcalc/_version.py; nothing else writes it.
    assert "version" not in PYPROJECT["project"]
    assert "version" in PYPROJECT["project"]["dynamic"]
    attr = PYPROJECT["tool"]["setuptools"]["dynamic"]["version"]["attr"]
    module, name = attr.rsplit(".", 1)
    assert getattr(importlib.import_module(module), name) == riskcalc.__version__
    assert re.fullmatch(r"\d+\.\d+\.\d+", riskcalc.__version__)
    # When the package is installed (CI: pip install -e), its metadata agrees.
    try:
        installed = importlib.metadata.version("fedrisk")
    except importlib.metadata.PackageNotFoundError:
        installed = riskcalc.__version__
    assert installed == riskcalc.__version__


def test_cli_version_prints_the_package_version():
    status, out, _ = run_cli("--version")
    assert status == 0 and out.strip() == f"riskcalc {riskcalc.__version__}"
    run = subprocess.run([sys.executable, "-m", "riskcalc", "--version"], cwd=ROOT,
                         capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout.strip() == f"riskcalc {riskcalc.__version__}"


def test_show_versions_reports_python_dependencies_and_blas(capsys):
    import numpy

    from riskcalc._show_versions import versions

    riskcalc.show_versions()
    out = capsys.readouterr().out
    assert riskcalc.__version__ in out and sys.version.split()[0] in out
    assert f"numpy: {numpy.__version__}" in out
    info = versions()
    assert set(info) == {"system", "dependencies", "optional", "blas"}
    assert info["dependencies"]["scipy"] is not None
    # numpy's own BLAS is always found by threadpoolctl.
    assert any(lib.get("internal_api") in {"openblas", "mkl", "blis", "accelerate"}
               for lib in info["blas"]), info["blas"]


def test_import_does_not_load_the_version_report():
    code = ("import sys, riskcalc\n"
            "print(sorted({'threadpoolctl', 'scipy'} & set(sys.modules)))")
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True)
    assert run.stdout.strip() == "[]", run.stdout + run.stderr


def test_license_matches_pyproject():
    text = (ROOT / "LICENSE").read_text()
    assert PYPROJECT["project"]["license"]["text"] == "MIT"
    assert text.startswith("MIT License") and "The fedrisk developers" in text


def test_citation_file_is_valid_cff():
    yaml = pytest.importorskip("yaml")
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    # The keys CFF 1.2.0 requires, with the types its schema gives them.
    assert cff["cff-version"] == "1.2.0"
    assert isinstance(cff["message"], str) and cff["message"]
    assert isinstance(cff["title"], str) and "fedrisk" in cff["title"]
    assert cff["authors"] == [{"name": "The fedrisk developers"}]
    assert str(cff["version"]) == riskcalc.__version__
    assert cff["license"] == "MIT" and cff["type"] == "software"
    for ref in cff["references"]:
        assert {"type", "title", "authors"} <= set(ref) and ref["authors"]
        assert all("name" in a or {"family-names", "given-names"} <= set(a)
                   for a in ref["authors"])
    titles = {ref["title"] for ref in cff["references"]}
    assert {p.title for p in PAPERS.values()} <= titles


def test_help_texts_show_percent_signs_once():
    for argv in [["--help"]] + [[name, "--help"] for name in COMMANDS]:
        status, out, err = run_cli(*argv)
        assert status == 0, (argv, err)
        assert "%%" not in out, argv


def test_outputs_cite_papers_by_authors_and_year():
    status, out, _ = run_cli("predict", "rtfa", "--gamma", "2", "--r", "1", "--sigma", "0.5",
                             "--lam", "0.5")
    assert status == 0
    header = out.splitlines()[0]
    assert cite("003", "eqs. 6 and 8, Thm 2") in header and ".txt" not in header
    status, out, _ = run_cli("bounds", "fedprox_lambda", "--L", "1", "--mu", "1", "--rho", "1",
                             "--R", "0.01", "--n", "100", "--m", "10")
    assert status == 0 and cite("004", "Thm 1") in out and ".txt" not in out
    assert cite("003", "Thm 2") == "Cheng, Chadha & Duchi (2023), Thm 2"
    with pytest.raises(ValueError, match="paper_id"):
        cite("002")


def test_montecarlo_compare_is_callable_with_plain_keywords():
    import montecarlo
    from montecarlo.compare import Comparison, compare
    from montecarlo.linear.instances import Setting

    got = montecarlo.compare("rtfa", gamma=2.0, r=1.0, sigma=0.5, lam=0.5, d=60, reps=3,
                             seed=7)
    spec = riskcalc.ClientSpec("rtfa", gamma=2.0, r=1.0, sigma=0.5, lam=0.5)
    want = compare(spec, Setting(d=60), reps=3, seed=7)
    assert isinstance(got, Comparison) and got.as_dict() == want.as_dict()
    # clients=M means the federated global model and the finite-M prediction.
    fed = montecarlo.compare("ftfa", gamma=2.0, r=1.0, sigma=0.5, d=40, reps=2, clients=4)
    assert fed.setting.global_model == "federated" and fed.limit.route == "finite_clients"
    assert fed.limit.risk == riskcalc.limit("ftfa", gamma=2.0, r=1.0, sigma=0.5, clients=4,
                                            weights="uniform").risk
    with pytest.raises(ValueError, match="reps"):
        montecarlo.compare("ftfa", gamma=2.0, r=1.0, sigma=0.5, d=40, reps=1)


README = (ROOT / "README.md").read_text()


def section(title):
    return README.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_readme_is_short_with_the_front_door_sections():
    assert len(README.splitlines()) <= 150
    for title in ("Install", "Quick start", "In Python", "What it computes", "Command line",
                  "Documentation", "How to cite", "License"):
        assert f"\n## {title}\n" in README, title
    # .ci/run executes the second line of the Quick start block: the whole test suite.
    block = re.search(r"```[a-z]*\n(.*?)```", section("Quick start"), re.S).group(1)
    lines = [ln for ln in block.splitlines() if ln.strip()]
    assert len(lines) == 2 and lines[1].endswith("python -m pytest -q -n 2"), lines
    # Every paper by authors and title; every CLI verb in the table.
    for p in PAPERS.values():
        assert p.title in " ".join(README.split()), p.id
    for verb in COMMANDS:
        assert f"`riskcalc {verb} " in section("Command line"), verb
    assert "sphinx-build -W -b html docs OUT" in section("Documentation")
    assert "CITATION.cff" in section("How to cite") and "MIT" in section("License")


def test_readme_python_example_runs(tmp_path, monkeypatch):
    pytest.importorskip("pandas")
    code = re.search(r"```python\n(.*?)```", section("In Python"), re.S).group(1)
    assert len(code.strip().splitlines()) <= 12
    monkeypatch.chdir(tmp_path)
    scope = {}
    exec(compile(code, "README.md", "exec"), scope)
    assert scope["res"].risk == pytest.approx(0.6403882032, rel=1e-9)
    assert bool(scope["c"].summary["risk"]["inside"]) or abs(
        scope["c"].summary["risk"]["rel_diff"]) < 0.02
    assert (tmp_path / "region.png").stat().st_size > 0


def test_every_public_name_is_in_the_api_reference():
    import montecarlo

    api = (ROOT / "docs" / "api.rst").read_text()
    entries = set(re.findall(r"^   ([A-Za-z_][\w.]*)$", api, re.M))
    assert set(riskcalc.__all__) <= entries, set(riskcalc.__all__) - entries
    assert set(montecarlo.__all__) - {"compare"} <= entries
    assert ":func:`montecarlo.compare.compare_method`" in api
