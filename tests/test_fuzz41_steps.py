"""Issue 32, fuzz41 (steps): what this fuzz found, each test failing before."""

from riskcalc import steps_limit


def test_mixed_one_client_steps_count_the_diverging_points_among_all():
    """F1: ``steps_limit(clients=[1, 4, 5])`` past the edge (gamma 0.5, 10 steps of 0.8) noted
    "2 of 2 points diverge" beside three points (the one client's, which stay put, left out
    of the count's total); now "2 of 3"."""
    res = steps_limit("ftfa", gamma=0.5, r=1.0, sigma=0.5, steps=10, step_size=0.8,
                      clients=[1, 4, 5])
    assert list(res.converges) == [True, False, False]
    assert "2 of 3 points diverge" in res.notes[0] and res.notes[1].startswith("one client")
