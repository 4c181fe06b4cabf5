"""``riskcalc simulate``: presets, overrides, CSV output, errors, reproducibility."""

import csv

import pytest

from riskcalc.cli import main

TINY = ["--set", "R=0,10", "--set", "m=3", "--set", "n=20", "--set", "d=5",
        "--set", "n_test=200", "--set", "methods=fedavg,local,fedprox_0.44",
        "--set", "*.rounds=3", "--set", "local.epochs=5", "--no-progress"]


def read(path):
    with open(path) as fh:
        return list(csv.DictReader(fh))


def test_list(capsys):
    assert main(["simulate", "--list"]) == 0
    out = capsys.readouterr().out
    for name in ("paper000-fig1", "paper004-synthetic", "paper001-fig2"):
        assert name in out


def test_run_writes_csv_and_summary(tmp_path, capsys):
    out = tmp_path / "r.csv"
    assert main(["simulate", "paper000-fig1", *TINY, "--reps", "2", "--seed", "3",
                 "--out", str(out)]) == 0
    rows = read(out)
    assert len(rows) == 2 * 2 * 3                                   # reps x R x methods
    assert {r["method"] for r in rows} == {"fedavg", "local", "fedprox_0.44"}
    assert {r["rounds"] for r in rows if r["method"] == "fedavg"} == {"3"}
    assert all(0.0 <= float(r["accuracy"]) <= 1.0 for r in rows)
    assert "accuracy" in capsys.readouterr().out


def test_reproducible_and_independent_of_workers(tmp_path):
    a, b, c = tmp_path / "a.csv", tmp_path / "b.csv", tmp_path / "c.csv"
    args = ["simulate", "paper000-fig1", *TINY, "--reps", "2"]
    assert main([*args, "--out", str(a)]) == 0
    assert main([*args, "--out", str(b), "--jobs", "2"]) == 0
    assert read(a) == read(b)
    assert main([*args, "--seed", "1", "--out", str(c)]) == 0
    assert read(a) != read(c)


def test_trajectory_rows(tmp_path):
    out = tmp_path / "t.csv"
    assert main(["simulate", "paper000-fig1", *TINY, "--set", "methods=fedavg",
                 "--trajectory", "--out", str(out)]) == 0
    rows = read(out)
    assert [int(r["checkpoint"]) for r in rows if r["value"] == "0.0"] == [0, 1, 2, 3]


def test_exact_and_target_columns(tmp_path):
    out = tmp_path / "q.csv"
    assert main(["simulate", "paper001-fig2", "--set", "m=5", "--set", "d=5",
                 "--set", "lam=0.1,10", "--set", "*.iterations=400", "--no-progress",
                 "--out", str(out)]) == 0
    rows = read(out)
    assert len(rows) == 4
    assert all(float(r["rounds_to_target"]) < 400 for r in rows)
    assert all(float(r["local_opt_err"]) < 1e-6 for r in rows)


def test_labels_with_dots_take_settings():
    from montecarlo.experiments.presets import resolve

    spec = resolve("paper000-fig1", {"fedprox_0.44.lam": 0.5, "*.rounds": 7,
                                     "fedprox_4.rounds": 9})
    assert spec["methods"]["fedprox_0.44"][1]["lam"] == 0.5
    assert spec["methods"]["fedprox_4"][1] == {"lam": 4.0, "rounds": 9}
    assert spec["methods"]["fedprox_0"][1] == {"lam": 0.0, "rounds": 7}


@pytest.mark.parametrize("args, text", [
    (["paper000-fig1", "--set", "colour=red"], "colour"),
    (["paper000-fig1", "--set", "fedavg.speed=2"], "speed"),
    (["paper000-fig1", "--set", "fedprox_0.45.lam=2"], "fedprox_0.45"),
    (["paper000-fig1", "--set", "nokey"], "KEY=VALUE"),
    (["paper000-fig1", "--set", "R=-1"], "R"),
    (["paper000-fig1", "--set", "methods=sgd"], "methods"),
    # A count beyond the grid's cap or not an integer (it said "num >= 1"), a stop at inf.
    (["paper000-fig1", "--set", "R=0:20:1e9"], "num an integer in [1, 1000]"),
    (["paper000-fig1", "--set", "R=0:20:5000"], "num an integer in [1, 1000]"),
    (["paper000-fig1", "--set", "R=0:inf:3"], "finite start and stop"),
    (["nosuch"], "preset"),
    (["paper000-fig1", "--reps", "0"], "reps"),
    (["paper000-fig1", "--seed", "-2"], "seed"),
])
def test_bad_input_is_one_line_error(tmp_path, capsys, args, text):
    out = tmp_path / "x.csv"
    assert main(["simulate", *args, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and text in err and "Traceback" not in err
    assert not out.exists()


def test_out_required(capsys):
    assert main(["simulate", "paper000-fig1"]) == 2
    assert "--out" in capsys.readouterr().err


def test_scalar_grid_value_is_a_grid_of_one(tmp_path):
    # Common random numbers: the row of R = 10 is the same whether it is alone or in a list.
    one, two = tmp_path / "one.csv", tmp_path / "two.csv"
    args = ["simulate", "paper000-fig1", *TINY, "--reps", "1"]
    assert main([*args, "--set", "R=10", "--out", str(one)]) == 0
    assert main([*args, "--out", str(two)]) == 0
    assert read(one) == [r for r in read(two) if r["value"] == "10.0"]


def test_exact_minimizers_without_ridge_on_separable_data_are_refused(tmp_path, capsys):
    # n = 5 < d = 20 per client: every client's data are separable, no finite minimizer.
    out = tmp_path / "e.csv"
    assert main(["simulate", "paper000-fig1", *TINY, "--set", "n=5", "--set", "d=20",
                 "--set", "*.batch_size=null", "--set", "l2=0", "--set", "exact=true",
                 "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and "l2" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
