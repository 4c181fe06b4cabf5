"""Issue 32, fuzz40 (fuzz): what this fuzz found, each test failing before."""

import json

from tests.helpers import run_cli

SIMULATE = ["simulate", "paper001-fig2", "--set", "lam=1", "--set", "m=3", "--set", "d=3",
            "--no-progress"]


def test_simulate_writes_json_lines_for_a_jsonl_name(tmp_path, capsys):
    """F1: ``simulate --out x.jsonl`` (or .JSON) wrote CSV under the JSON-lines name; now JSON
    lines, one object a row in the CSV's columns, a non-finite number null (as ``sweep``
    writes); any other name stays CSV."""
    for name in ("x.jsonl", "x.JSON"):
        code, out, err = run_cli(SIMULATE + ["--out", tmp_path / name], capsys)
        assert code == 0, err
        rows = [json.loads(line) for line in (tmp_path / name).read_text().splitlines()]
        assert len(rows) == 2 and rows[0]["preset"] == "paper001-fig2"
        assert rows[0]["accuracy"] is None and rows[0]["rounds_to_target"] > 0
    assert run_cli(SIMULATE + ["--out", tmp_path / "x.csv"], capsys)[0] == 0
    assert (tmp_path / "x.csv").read_text().startswith("preset,rep,grid")


def _square(task):
    return task * task


def test_python_paths_take_a_leading_tilde_as_the_home_folder(monkeypatch, tmp_path):
    """F2: in Python, ``cache="~/c.jsonl"`` (``montecarlo`` runs), ``figures`` folders and
    ``montecarlo.sweep.write_rows(rows, "~/o.csv")`` took ``~`` literally (a folder named "~"
    in the working folder, or "folder ~ does not exist") where the command line reads it as
    the home folder; one helper (``riskcalc._validate.path``) now expands it for all."""
    from figures.core import folder
    from montecarlo.runner.tasks import cached_count, run_tasks
    from montecarlo.sweep import write_rows

    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)
    assert run_tasks(_square, [2, 3], cache="~/c.jsonl", progress=False) == [4, 9]
    assert (home / "c.jsonl").is_file() and cached_count("~/c.jsonl", None, [2, 3]) == 2
    assert folder("out_dir", "~/figs") == home / "figs"
    write_rows([{"a": 1.0}], "~/o.csv")
    assert (home / "o.csv").is_file() and not (tmp_path / "~").exists()
