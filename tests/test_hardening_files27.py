"""Output files never clobber what they must not (issue 32; fuzz files27): a stream named as a
file (/dev/stdout under ``>> log`` or a pipe) is written as the stream or refused, never renamed
over; a ``--plugin`` file is an input like any other; a figure set is installed whole or not at
all."""

from __future__ import annotations

import json
import os

import pytest

from riskcalc import plugins as rplugins
from riskcalc._files import stream
from tests.helpers import run_cli

SWEEP = ["sweep", "rtfa", "--gamma", "2", "--sigma", "1", "--r", "1", "--lam", "1", "--d", "40",
         "--reps", "2", "--no-progress"]
FEDERATION = os.path.join(os.path.dirname(__file__), "..", "docs", "examples",
                          "federation.json")


@pytest.fixture
def plugin_environment(monkeypatch):
    """A --plugin run records its files in the environment: put back as it was after the test
    (so that no later worker loads a deleted tmp file)."""
    monkeypatch.setenv(rplugins.ENV, "")


def test_stream_names_the_descriptor_behind_the_links():
    assert stream("/dev/stdout") == "stdout"
    assert stream("/dev/stderr") == "stderr"
    assert stream("/proc/self/fd/1") == "stdout"
    assert stream("/dev/fd/7") == "descriptor 7"
    assert stream("/proc/1/fd/1") == "a descriptor of process 1"
    assert stream("/dev/null") is None
    assert stream("/tmp/out.csv") is None


@pytest.mark.parametrize("target", ["log", "pipe"])
def test_sweep_out_dev_stdout_is_the_stream_not_a_rename_over_its_file(tmp_path, capsys,
                                                                        target):
    """``--out /dev/stdout >> log`` replaced the log by the CSV (the rename went over the file
    the redirect opened); ``| head`` failed on /proc/PID/fd/pipe:[N]. The rows go to stdout as
    with ``--out -``, and the file behind descriptor 1 is left as it was."""
    log = tmp_path / "so.txt"
    log.write_text("old\n")
    saved = os.dup(1)
    if target == "log":
        fd = os.open(log, os.O_WRONLY | os.O_APPEND)
    else:
        fd, reader = os.pipe()[::-1]
        os.close(reader)   # nothing is written to the pipe; closed, a write would fail loudly
    os.dup2(fd, 1)
    try:
        code, out, err = run_cli(SWEEP + ["--out", "/dev/stdout"], capsys)
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(fd)
    assert code == 0, err
    assert log.read_text() == "old\n"
    assert out.splitlines()[0].startswith("method,gamma,")
    assert len(out.splitlines()) == 2


@pytest.mark.parametrize("argv, option, hint", [
    (SWEEP + ["--out", "/dev/stderr"], "--out", "use --out - (or no --out) for stdout"),
    (SWEEP + ["--cache", "/dev/stdout"], "--cache", "give a file name"),
    (["simulate", "paper000-fig1", "--out", "/dev/stdout"], "--out", "give a file name"),
    (["advise", "--federation", FEDERATION, "--csv", "/dev/fd/1"], "--csv", "give a file name"),
])
def test_a_stream_named_as_an_output_file_is_refused_up_front(capsys, argv, option, hint):
    code, out, err = run_cli(argv, capsys)
    assert code == 2 and out == ""
    assert err.startswith(f"error: {option} /dev/") and "an open stream" in err
    assert err.rstrip().endswith(hint) and len(err.splitlines()) == 1


@pytest.mark.parametrize("name, fmt", [("o.JSONL", "jsonl"), ("o.Json", "jsonl"),
                                       ("o.CSV", "csv")])
def test_sweep_format_from_the_extension_in_either_case(tmp_path, capsys, name, fmt):
    """``--out o.JSONL`` wrote CSV: the extension was compared case-sensitively."""
    path = tmp_path / name
    argv = list(SWEEP)
    argv[argv.index("--gamma") + 1] = "2,4"
    code, _, err = run_cli(argv + ["--out", path], capsys)
    assert code == 0, err
    assert f"({fmt})" in err
    lines = path.read_text().splitlines()
    if fmt == "jsonl":
        assert [json.loads(line)["gamma"] for line in lines] == [2.0, 4.0]
    else:
        assert lines[0].startswith("method,gamma,") and len(lines) == 3


@pytest.mark.parametrize("verb", [SWEEP + ["--out"], SWEEP + ["--cache"],
                                  ["simulate", "paper000-fig1", "--out"],
                                  ["advise", "--federation", FEDERATION, "--csv"]])
def test_an_output_naming_the_plugin_file_is_refused(tmp_path, capsys, plugin_environment,
                                                      verb):
    """``--plugin P.py sweep ... --out P.py`` replaced the plugin's source by the CSV."""
    plugin = tmp_path / "myplug.py"
    plugin.write_text("SOURCE = 1\n")
    other = tmp_path / "other.py"
    other.write_text("OTHER = 1\n")
    code, out, err = run_cli(["--plugin", other, "--plugin", plugin] + verb + [plugin], capsys)
    assert code == 2 and out == ""
    assert err == (f"error: {verb[-1]} {plugin} is the input file of --plugin {plugin}: "
                   "write the output elsewhere\n")
    assert plugin.read_text() == "SOURCE = 1\n"


def _set(folder, fig_id, text, exts=("csv", "txt", "pdf")):
    """Files ``fig_id.EXT`` in ``folder`` holding ``text`` and the extension."""
    folder.mkdir(exist_ok=True)
    for ext in exts:
        (folder / f"{fig_id}.{ext}").write_text(f"{text} {ext}")
    return {ext: folder / f"{fig_id}.{ext}" for ext in exts}


@pytest.mark.parametrize("failure", ["directory", "interrupt"])
def test_a_set_failing_halfway_through_its_install_leaves_the_previous_set(tmp_path,
                                                                           monkeypatch,
                                                                           failure):
    """A rename failing (the PNG's place a directory) or interrupted after the CSV, caption
    and PDF were in left them of the new set beside the old PNG; each is put back, a file
    the previous set did not have is removed, and the stale image moved away returns."""
    from figures import install

    out, staging = tmp_path / "out", tmp_path / "staging"
    _set(out, "f", "old", exts=("csv", "pdf"))        # no caption before: a new file
    (out / "f.svg").write_text("old stale")
    staged = _set(staging, "f", "new", exts=("csv", "txt", "pdf", "png"))
    files = install.set_files("f", out)
    if failure == "directory":
        files["png"].mkdir()
    else:
        renames, real = [], os.replace

        def replace(src, dst):
            renames.append(dst)
            if len(renames) == 5:    # the stale image, CSV, caption, PDF, then the PNG
                raise KeyboardInterrupt
            real(src, dst)
        monkeypatch.setattr(install.os, "replace", replace)
    with pytest.raises(IsADirectoryError if failure == "directory" else KeyboardInterrupt):
        install.install(staged, files, [out / "f.svg"], staging)
    monkeypatch.undo()
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["f.csv", "f.pdf", "f.svg"] + (["f.png"] if failure == "directory" else []))
    assert [(out / n).read_text() for n in ("f.csv", "f.pdf", "f.svg")] == [
        "old csv", "old pdf", "old stale"]


def test_a_set_installs_whole_and_keeps_each_file_in_place_until_replaced(tmp_path,
                                                                          monkeypatch):
    """Each file replaced by one rename (the previous one linked aside, not moved): at every
    rename, every file of the previous set is still there."""
    from figures import install

    out, staging = tmp_path / "out", tmp_path / "staging"
    files = _set(out, "f", "old", exts=("csv", "txt", "pdf", "png"))
    staged = _set(staging, "f", "new", exts=("csv", "txt", "pdf", "png"))
    real = os.replace

    def replace(src, dst):
        assert all(p.is_file() for p in files.values())
        real(src, dst)
    monkeypatch.setattr(install.os, "replace", replace)
    install.install(staged, files, [], staging)
    assert [files[e].read_text() for e in files] == [f"new {e}" for e in files]


def test_figures_refuses_a_directory_in_the_set_before_drawing(tmp_path, capsys, monkeypatch):
    """A directory where the set writes its PDF was the raw '[Errno 21] Is a directory' of a
    rename after the CSV and caption were replaced: now one line naming --out and the file,
    before any drawing, from the command and from ``figures.build``."""
    import figures
    import figures.core

    def draw(*args, **kwargs):
        raise AssertionError("drawn before the set's files were checked")
    monkeypatch.setattr(figures.core, "draw", draw)
    (tmp_path / "p003-thm1-ftfa.pdf").mkdir()
    code, out, err = run_cli(["figures", "p003-thm1-ftfa", "--quick", "--out", tmp_path,
                              "--no-progress"], capsys)
    assert code == 2 and out == ""
    assert err == (f"error: --out {tmp_path}: p003-thm1-ftfa.pdf is a directory, where the "
                   "figure set writes a file: move it away\n")
    with pytest.raises(ValueError, match="p003-thm1-ftfa.pdf is a directory"):
        figures.build("p003-thm1-ftfa", tmp_path, quick=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p003-thm1-ftfa.pdf"]
