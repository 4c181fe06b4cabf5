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
