"""Issue 32, twentieth hardening pass: every verb bounded by time (this morning's fuzz). Each
test pins a case that was unbounded before (the old behaviour in its comment) and runs in well
under a second: the refusals come before any solve.
"""

import re
import time

import pytest

import riskcalc

FTFA = dict(gamma=2.0, r=1.0, sigma=0.5, step_size=0.1)


# was: optimal_steps had no max_seconds; the most its refusal allowed (max_steps = 19999999)
# took ~7 min of CPU with no way to ask for less.
def test_optimal_steps_takes_max_seconds_like_rounds_limit():
    start = time.process_time()
    with pytest.raises(ValueError, match="max_seconds") as err:
        riskcalc.optimal_steps("ftfa", max_steps=199999, max_seconds=0.1, **FTFA)
    assert time.process_time() - start < 0.5            # refused before solving
    fits = int(re.search(r"max_steps <= (\d+)", str(err.value)).group(1))
    assert 0 < fits < 199999
    # What the refusal names does fit, and is answered as without a limit.
    named = riskcalc.optimal_steps("ftfa", max_steps=fits, max_seconds=0.1, **FTFA)
    assert named.risk == riskcalc.optimal_steps("ftfa", max_steps=fits, **FTFA).risk
    with pytest.raises(ValueError, match="max_steps <= "):
        riskcalc.optimal_steps("ftfa", max_steps=fits + 1, max_seconds=0.1, **FTFA)


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), "1", [1.0]])
def test_optimal_steps_max_seconds_is_checked(bad):
    with pytest.raises(ValueError, match="max_seconds"):
        riskcalc.optimal_steps("ftfa", max_steps=10, max_seconds=bad, **FTFA)
