"""Issue 32, fuzz41 (api): what this fuzz found, each test failing before."""

import pytest

import riskcalc


def test_f1_grid_pooled_refusal_names_the_point():
    """F1: ``limit('ftfa', gamma=[[2], [3]], clients=[3, 10])`` refused pooled N <= d without
    saying at which of the four points (it is gamma 3 with 3 clients)."""
    with pytest.raises(ValueError, match=r"^at gamma = 3, clients = 3: .*pooled N > d"):
        riskcalc.limit("ftfa", gamma=[[2], [3]], r=1, sigma=0.5, clients=[3, 10])
