"""Helpers shared by the test files (not fixtures: plain functions to import)."""

from riskcalc.cli import main


def run_cli(argv, capsys):
    """(exit code, stdout, stderr) of the command line ``riskcalc ARGV`` run in this process
    (``riskcalc.cli.main``; pytest's ``capsys`` captures the output). An argparse usage error
    exits by ``SystemExit``: its code is returned as the command's."""
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err
