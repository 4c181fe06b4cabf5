"""Issue 32, fuzz40 (advise): what this fuzz found, each test failing before.

The area was advise's speed at 100-1000 clients (a speed task first: ``benchmarks/
bench_advise_decision.py`` checks the decisions against a baseline tree, and
``benchmarks/bench_advise_measured.txt`` holds the measurements); these tests pin the
mechanisms and the message fixed."""

import pytest


def test_advise_methods_empty_says_so():
    """F2: ``advise_logistic(fed, methods=[])`` (and ``advise``) said "got an empty name in
    []": an empty sequence has no name at all; the message says methods is empty and which
    pipelines it takes."""
    from riskcalc.advise import advise, federation
    from riskcalc.advise.logistic import LogisticFederation, advise_logistic

    fed = LogisticFederation(gamma=[0.5, 2.0], r=[0.5, 1.5], signal=1.0, global_lam=0.05)
    for call in (lambda m: advise_logistic(fed, methods=m),
                 lambda m: advise(federation.from_clients(
                     [{"gamma": 0.5, "r": 1.0, "sigma": 1.0}] * 2), methods=m)):
        for empty in ([], ()):
            with pytest.raises(ValueError, match=r"methods is empty: name at least one of "
                                                 r"fedavg, .*or leave methods out") as info:
                call(empty)
            assert "empty name" not in str(info.value)
