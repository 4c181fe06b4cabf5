"""Issue 32, fuzz36 (lead): what this fuzz found, each test failing before."""

import argparse

from riskcalc.cli import build_parser


def _subparsers():
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices


def test_max_minutes_help_names_the_logistic_limit_only_where_there_is_a_model_option():
    """``--max-minutes``' help said "with --model logistic the solvers' own 60 s" in every
    verb, also in check, figures, simulate and check-method, which take no ``--model``."""
    seen = set()
    for name, p in _subparsers().items():
        opts = {o: a for a in p._actions for o in a.option_strings}
        if "--max-minutes" not in opts:
            continue
        logistic = "--model" in opts and "logistic" in (opts["--model"].choices or ())
        assert ("--model logistic" in opts["--max-minutes"].help) == logistic, name
        seen.add((name, logistic))
    assert {n for n, lg in seen if lg} == {"predict", "compare", "sweep", "advise"}
    assert {n for n, lg in seen if not lg} >= {"check", "figures", "simulate", "check-method"}
