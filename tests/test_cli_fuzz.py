"""Bad input across every verb: exit status 2, exactly one ``error:`` line, no traceback.

Each row is a command a user could type; none may start work, print a traceback or a NaN.
They run in-process through ``riskcalc.cli.main`` (fast); ``test_console_script`` runs a few
through the installed ``riskcalc`` command to cover the real entry point.
"""

import json
import shlex
import subprocess
import sys

import pytest

from riskcalc.cli import main

P = "predict rtfa --gamma 2 --r 1 --sigma 0.5"
C = "compare ftfa --gamma 2 --r 1 --sigma 0.5"
S = "sweep rtfa --gamma 2 --r 1 --sigma 0.5 --lam 0.1,1"
BAD = [
    # predict: ranges, types, combinations
    "predict",
    "predict nosuch --gamma 2 --sigma 1",
    "predict rtfa --gamma 2 --r 1 --lam 0.5",
    f"{P}",
    f"{P} --lam -1",
    f"{P} --lam nan",
    f"{P} --lam inf",
    f"{P} --lam 1e101",
    "predict rtfa --gamma 0 --r 1 --sigma 0.5 --lam 0.5",
    "predict rtfa --gamma -2 --r 1 --sigma 0.5 --lam 0.5",
    "predict rtfa --gamma 1e308 --r 1 --sigma 0.5 --lam 0.5",
    "predict rtfa --gamma 2 --r 1 --sigma 1e200 --lam 0.5",
    "predict rtfa --gamma 2 --r -1 --sigma 0.5 --lam 0.5",
    "predict rtfa --gamma two --r 1 --sigma 0.5 --lam 0.5",
    "predict ftfa --gamma 2 --r 1 --sigma 0.5 --lam 0.5",
    "predict local --gamma 2 --r 1 --sigma 0.5",
    "predict maml_fl --gamma 2 --r 1 --sigma 0.5",
    f"{P} --lam 0.5 --spectrum nosuch",
    f"{P} --lam 0.5 --spectrum two-point:1,4",
    f"{P} --lam 0.5 --spectrum two-point:1,4,1.5",
    f"{P} --lam 0.5 --spectrum two-point:-1,4,0.5",
    f"{P} --lam 0.5 --spectrum powerlaw:1",
    f"{P} --lam 0.5 --spectrum file:/no/such/file.npy",
    f"{P} --lam 0.5 --route fast",
    f"{P} --lam 0.5 --spectrum identity --route paper --steps 3",
    f"{P} --lam 0.5 --steps 3",
    f"{P} --lam 0.5 --step-size 0.1",
    f"{P} --lam 0.5 --steps -1 --step-size 0.1",
    f"{P} --lam 0.5 --clients 0",
    f"{P} --lam 0.5 --clients 2.5",
    f"{P} --lam 0.5 --weights samples",
    f"{P} --lam 0.5 --clients-file /no/such.json",
    f"{P} --lam 0.5 --clients 5 --steps 2 --step-size 0.1",
    f"{P} --lam 0.5 --model quadratic",
    "predict rtfa --model logistic --gamma 2 --r 1 --lam 0.5",
    "predict ftfa --model logistic --gamma 2 --signal 1 --r 1",
    "predict rtfa --model logistic --gamma 2 --signal -1 --r 1 --lam 0.5",
    "predict rtfa --model logistic --gamma 2 --signal 1 --r 1 --lam 0.5 --sigma 1",
    f"{P} --lam 0.5 --signal 1",
    # compare
    f"{C}",
    f"{C} --d 0",
    f"{C} --d -5",
    f"{C} --d 2.5",
    f"{C} --d 10000000",
    f"{C} --d 100 --reps 1",
    f"{C} --d 100 --reps 0",
    f"{C} --d 100 --seed -1",
    f"{C} --d 100 --global nowhere",
    f"{C} --d 100 --measure exact",
    f"{C} --d 100 --features cauchy",
    f"{C} --d 100 --noise cauchy",
    f"{C} --d 100 --df 3",
    f"{C} --d 100 --eigvecs skew",
    f"{C} --d 1 --gamma 4",
    f"{C} --d 100 --steps 3",
    f"{C} --d 100 --jobs 0",
    # sweep
    f"{S}",
    f"{S} --d 40 --lam 0.1,x",
    f"{S} --d 40 --lam 0.1,,1",
    f"{S} --d 40 --gamma 2,-1",
    f"{S} --d 40 --clients 2,3.5 --global federated",
    f"{S} --d 40 --format xml",
    f"{S} --d 40 --out /no/such/dir/x.csv",
    f"{S} --d 40 --cache /no/such/dir/c.jsonl",
    # simulate
    "simulate",
    "simulate nosuch --out x.csv",
    "simulate paper000-fig1",
    "simulate paper000-fig1 --set R=-1 --out {tmp}/x.csv",
    "simulate paper000-fig1 --set nokey --out {tmp}/x.csv",
    "simulate paper000-fig1 --set m=0 --out {tmp}/x.csv",
    "simulate paper000-fig1 --set methods=sgd --out {tmp}/x.csv",
    "simulate paper000-fig1 --reps 0 --out {tmp}/x.csv",
    "simulate paper000-fig1 --out /no/such/dir/x.csv",
    # memory needs estimated before allocating (petabytes: beyond any machine)
    "simulate paper000-fig1 --set d=20000000 --out {tmp}/x.csv",
    "simulate paper001-fig2 --set d=3000000 --out {tmp}/x.csv",
    "simulate paper004-synthetic --set d=1000000 --out {tmp}/x.csv",
    # bounds
    "bounds nosuch",
    "bounds lower_bound_aer --d 10 --N 1000",
    "bounds lower_bound_aer --d -10 --N 1000 --m 10 --R 0.5",
    "bounds lower_bound_aer --d 10 --N 1000 --m 10 --R x",
    # check
    "check --paper 999",
    "check --claim no.such.claim",
    "check --jobs 0",
    # figures
    "figures",
    "figures nosuch --out {tmp}/f",
    "figures p003-region",
    "figures --all p003-region --out {tmp}/f",
    "figures p003-region --out {tmp}/file",
    "figures p003-region --out {tmp}/f --jobs 0",
    # top level
    "",
    "nosuchverb",
]


@pytest.mark.parametrize("command", BAD)
def test_bad_input_is_one_error_line(command, tmp_path, capsys):
    (tmp_path / "file").write_text("")
    argv = shlex.split(command.format(tmp=tmp_path))
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    assert code == 2, (command, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), (command, err)
    assert "Traceback" not in err and "nan" not in out.lower()


def test_table_is_large_and_covers_every_verb():
    verbs = {c.split()[0] for c in BAD if c}
    assert len(BAD) >= 60
    assert verbs >= {"predict", "compare", "sweep", "simulate", "bounds", "check", "figures"}


@pytest.mark.parametrize("command", [
    "predict rtfa --gamma 1e308 --r 1 --sigma 0.5 --lam 0.5",
    "compare ftfa --gamma 2 --r 1 --sigma 0.5 --d 10000000",
    "nosuchverb",
])
def test_console_script(command):
    proc = subprocess.run([sys.executable, "-m", "riskcalc", *command.split()],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1


def test_in_range_extremes_print_finite_json(capsys):
    for args in ("--gamma 1e100 --r 1e100 --sigma 1e100 --lam 1e-100",
                 "--gamma 1e-100 --r 1e100 --sigma 1e100 --lam 1e100"):
        assert main(["predict", "rtfa", *args.split(), "--json"]) == 0
        res = json.loads(capsys.readouterr().out)
        assert all(isinstance(res[q], float) for q in ("bias", "variance", "risk"))
