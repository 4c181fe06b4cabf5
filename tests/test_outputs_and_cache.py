"""Outputs checked before any work; a task cache that survives torn and foreign lines."""

import json
import os
import subprocess
import sys

import pytest
from threadpoolctl import threadpool_limits

from montecarlo.runner.tasks import CacheWarning, load_cache, run_tasks, task_key
from riskcalc.cli import main


def _square(task):
    return {"y": task["x"] ** 2}


HEADER = '{"fedrisk_cache": 2, "command": "tasks"}\n'


@pytest.mark.parametrize("junk", ["{}", "[1, 2]", '{"key": 3, "result": 1}', "null", '"text"'])
def test_cache_lines_that_are_not_records_are_skipped(tmp_path, junk):
    cache = tmp_path / "c.jsonl"
    cache.write_text(HEADER + junk + "\n")
    tasks = [{"x": 2}, {"x": 3}]
    with pytest.warns(CacheWarning, match="line 2 is not a complete record"):
        assert run_tasks(_square, tasks, cache=cache, progress=False) == [{"y": 4}, {"y": 9}]
    with pytest.warns(CacheWarning):
        assert set(load_cache(cache)) == {task_key(t) for t in tasks}


@pytest.mark.parametrize("content", [
    b"method,gamma,risk\nftfa,2,0.75\n",                   # a results CSV
    bytes(range(256)) * 8,                                   # binary garbage
    b'{"fedrisk_cache": 1, "command": "tasks"}\n',          # another format version
    b'{"fedrisk_cache": 2, "command": "simulate"}\n',       # another command than sweep
    b"{}\n",
])
def test_a_file_that_is_not_a_cache_is_refused_and_left_alone(tmp_path, content):
    cache = tmp_path / "c.jsonl"
    cache.write_bytes(content)
    with pytest.raises(ValueError, match="cache"):
        run_tasks(_square, [{"x": 2}], cache=cache, progress=False, command="sweep")
    assert cache.read_bytes() == content


def test_binary_line_is_reported_with_its_number(tmp_path):
    cache = tmp_path / "c.jsonl"
    run_tasks(_square, [{"x": 2}], cache=cache, progress=False)
    with open(cache, "ab") as fh:
        fh.write(b"\xff\xfe\x00\n")
    with pytest.raises(ValueError, match="line 3 is binary"):
        load_cache(cache)


def test_version_1_cache_without_header_still_resumes(tmp_path):
    cache = tmp_path / "c.jsonl"
    cache.write_text(json.dumps({"key": task_key({"x": 2}), "task": {"x": 2},
                                 "result": {"y": -1}}) + "\n")
    assert run_tasks(_square, [{"x": 2}, {"x": 3}], cache=cache,
                     progress=False) == [{"y": -1}, {"y": 9}]


def test_torn_last_line_does_not_swallow_the_next_record(tmp_path):
    cache = tmp_path / "c.jsonl"
    run_tasks(_square, [{"x": 2}], cache=cache, progress=False)
    with open(cache, "a") as fh:
        fh.write('{"key": "abc", "res')              # an interrupted write, no newline
    with pytest.warns(CacheWarning, match="line 3"):
        run_tasks(_square, [{"x": 2}, {"x": 5}], cache=cache, progress=False)
    lines = cache.read_text().splitlines()
    assert json.loads(lines[-1])["result"] == {"y": 25}
    with pytest.warns(CacheWarning):
        assert set(load_cache(cache)) == {task_key({"x": 2}), task_key({"x": 5})}


@pytest.mark.parametrize("argv", [
    "sweep ftfa --gamma 2 --r 1 --sigma 0.5 --d 50 --reps 3 --out {missing}/x.csv",
    "sweep ftfa --gamma 2 --r 1 --sigma 0.5 --d 50 --reps 3 --cache {missing}/c.jsonl",
    "sweep ftfa --gamma 2 --r 1 --sigma 0.5 --d 50 --reps 3 --out {tmp}",
    "simulate paper000-fig1 --out {missing}/x.csv",
    "simulate paper000-fig1 --out {tmp}/x.csv --cache {missing}/c.jsonl",
    "figures p003-region --out {file}/sub",
])
def test_unwritable_outputs_fail_before_any_work(tmp_path, capsys, monkeypatch, argv):
    import figures.core
    import montecarlo.experiments.presets_run
    import montecarlo.sweep

    def no_work(*args, **kwargs):
        raise AssertionError("work started before the output was checked")

    for module in (montecarlo.sweep, montecarlo.experiments.presets_run, figures.core):
        monkeypatch.setattr(module, "run_tasks", no_work)
    (tmp_path / "f").write_text("")
    args = argv.format(missing=tmp_path / "no" / "such", tmp=tmp_path, file=tmp_path / "f")
    assert main(args.split()) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err


def test_memory_is_estimated_before_allocating():
    from montecarlo.linear.instances import Setting, check_memory

    check_memory(Setting(d=1000), 2.0)                      # a few MB: fine
    # Petabytes: beyond any machine this runs on.
    with pytest.raises(ValueError, match=r"d = 10000000 .*--d, --gamma on the command line"):
        check_memory(Setting(d=10**7), 2.0)
    with pytest.raises(ValueError, match="d = 1000000 "):
        check_memory(Setting(d=10**6, clients=1000, global_model="federated"), 2.0)


def test_sweep_is_byte_identical_for_any_number_of_workers(tmp_path):
    # d = 600 is above montecarlo.linear.decomposition.SMALL_GRAM, where BLAS would otherwise thread in
    # this process but not in the workers; one BLAS thread per task makes the bits agree. Two
    # threads in this process, as a user has them (the suite runs on one: conftest.py). At
    # gamma = 0.8 (n = 750) every client's Gram matrix is above SMALL_GRAM as well (at gamma = 2,
    # n = 300, they are small and one-threaded anyway); its 2 replicates are 2 tasks, 2 workers.
    outs = []
    for jobs in ("1", "2"):
        out = tmp_path / f"j{jobs}.csv"
        with threadpool_limits(limits=2, user_api="blas"):
            code = main(["sweep", "rtfa", "--gamma", "0.8", "--r", "1", "--sigma", "0.5",
                         "--lam", "0.1,1", "--d", "600", "--reps", "2", "--global", "federated",
                         "--clients", "3", "--jobs", jobs, "--no-progress", "--out", str(out)])
        assert code == 0
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]


def test_one_blas_thread_even_when_scipy_loads_after_the_first_task():
    # The thread controller is built once per process; built before scipy.linalg (which brings
    # its own OpenBLAS) was imported, it used to leave scipy's BLAS threaded in this process.
    code = ("from montecarlo.runner.threads import small_blas\n"
            "with small_blas():\n    pass\n"
            "import scipy.linalg\n"
            "from threadpoolctl import threadpool_info\n"
            "with small_blas():\n"
            "    print(sorted({i['num_threads'] for i in threadpool_info()"
            " if i['user_api'] == 'blas'}))\n")
    # Two threads by default in the child, or the suite's one-thread setting (conftest.py)
    # would make the test pass whatever small_blas does.
    env = dict(os.environ, OMP_NUM_THREADS="2", OPENBLAS_NUM_THREADS="2")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=env)
    assert out.stdout.strip() == "[1]"
