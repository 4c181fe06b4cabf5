"""Issue 32, fuzz41 (logi): what this fuzz found, each test failing before."""

import pytest

import riskcalc
from riskcalc.errors import SolverError


def test_fine_tuning_rule_beyond_memory_is_refused_before_it_is_built():
    # F2: RTFA at lam = 1e-300 beside a separable client (gamma [0.5, 1], r [1, 0.5], signal 1,
    # global_lam 0.1) with max_seconds = 30 built a 3.8e7-node 3-d rule: 23.7 s, 2.8 GB (the
    # node cap 5e7 let it through). Its memory (full tensor while building, kept nodes while
    # evaluating) is now counted before building, and beyond 1 GB refused saying so.
    from riskcalc.logistic.blocks.finetune import Rule3

    with pytest.raises(SolverError, match=r"3\.28e\+07 nodes .* would take about 2\.4 GB of "
                                          r"memory, beyond 1 GB: .* give a larger lam"):
        Rule3(1.4, 24, (10.0, 10.0, 10.0))
