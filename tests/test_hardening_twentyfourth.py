"""Issue 32, twenty-fourth hardening pass: the layer's leftovers (seeds read as the other
counts are, the memory limit as the other real parameters) and a small fuzz of the Python API's
type coercion. Each test pins a case that was mishandled before this pass (the old behaviour
in its comment); bad input is a ValueError naming the parameter.
"""

from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

import riskcalc
from riskcalc._validate import positive_int
from riskcalc._text import integer
from tests.test_rounds_memory import CASE


# was: "seed must be an integer >= 0, got 3.0" while --seed 3.0 ran as seed 3, and d=20.0,
# clients=3.0 or steps=2.0 are read as integers by every other count of the API.
@pytest.mark.parametrize("seed", [3.0, np.float64(3.0), np.array(3), Fraction(6, 2),
                                  Decimal("3"), np.uint8(3)])
def test_an_integral_seed_is_the_seed_the_command_line_reads(seed):
    from montecarlo.runner.seeding import check_seed, replicate_rng

    assert check_seed(seed) == integer("3.0", "--seed") == 3
    assert type(check_seed(seed)) is int
    assert np.array_equal(replicate_rng(seed, 1).standard_normal(4),
                          replicate_rng(3, 1).standard_normal(4))


# A float beyond 2^53 is not the integer written (1e23 is 99999999999999991611392, where
# --seed 1e23 reads 10^23): refused, while an exact type keeps its value at any size.
def test_a_float_seed_beyond_two_to_the_53_is_refused():
    from montecarlo.runner.seeding import check_seed

    with pytest.raises(ValueError, match=r"^seed must be an integer >= 0, got 1e\+23: a float "
                                         r"beyond 2\^53"):
        check_seed(1e23)
    assert check_seed(Decimal("1e23")) == integer("1e23", "--seed") == 10 ** 23
    assert check_seed(2.0 ** 53) == 2 ** 53


# was: 1 (a 0-d boolean array passed int(value) == value; np.bool_ and True were refused).
@pytest.mark.parametrize("value", [np.array(True), np.array(False)])
def test_a_boolean_array_is_no_count(value):
    from montecarlo.runner.seeding import check_seed

    with pytest.raises(ValueError, match=r"^d must be an integer >= 0 .*a boolean is not"):
        positive_int("d", value, minimum=0)
    with pytest.raises(ValueError, match="a boolean is not a number"):
        check_seed(value)


# was: "max_gigabytes must be a finite number > 0 (or None: 4 GB), got Decimal('1E-6')"
# where max_seconds, and every other real parameter, takes Decimal and Fraction.
@pytest.mark.parametrize("limit", [Decimal("1e-6"), Fraction(1, 10 ** 6), np.array(1e-6)])
def test_max_gigabytes_is_read_as_every_real_parameter(limit):
    from riskcalc.linear.dynamics.sigma import budget

    assert budget.gigabytes(limit) == 1e-6
    with pytest.raises(ValueError, match=r"more than the 1e-06 GB allowed"):
        riskcalc.rounds_limit("fedavg", **CASE, max_gigabytes=limit)


# was: level=Decimal("0.9") refused ("level must be a number in (0, 1)") and max_seconds not
# checked at all: -1 stopped the bootstrap after no draw, nan never, True after one second.
@pytest.mark.parametrize("bad", [-1.0, -np.inf, np.nan, True, "60"])
def test_bootstrap_max_seconds_is_checked(bad):
    from riskcalc.advise.uncertainty import bootstrap

    with pytest.raises(ValueError, match="^max_seconds must "):
        bootstrap(None, None, max_seconds=bad)


@pytest.mark.parametrize("level", [Decimal("0.9"), Fraction(9, 10), np.float32(0.9)])
def test_bootstrap_level_is_read_as_every_real_parameter(level):
    from riskcalc.advise.uncertainty import bootstrap

    # The level passes; the next check (one draw) is what refuses.
    with pytest.raises(ValueError, match=r"^draws \(an interval needs two\)"):
        bootstrap(None, None, level=level, draws=1, max_seconds=np.inf)
    with pytest.raises(ValueError, match=r"^level must lie in \(0, 1\), got 1.0"):
        bootstrap(None, None, level=Decimal(1))


# --- a fuzz of the Python API's types (about 150 inputs) -----------------------------------

# was: "TypeError: unhashable type: 'list'" (the alias lookup before the list of names).
@pytest.mark.parametrize("method", [["ftfa"], np.array("ftfa")])
def test_a_method_that_is_no_string_is_refused_naming_the_methods(method):
    with pytest.raises(ValueError, match=r"^method must be one of fedavg, .*; got "):
        riskcalc.limit(method, gamma=2.0, r=1.0, sigma=0.5)
    with pytest.raises(ValueError, match=r"^method must be one of fedavg, pfedme"):
        riskcalc.rounds_limit(method, gamma=2.0, r=1.0, sigma=0.5, signal=1.0, rounds=1,
                              local_steps=1, step_size=0.1)
    assert riskcalc.limit(np.str_("fedprox"), gamma=2.0, r=1.0, sigma=0.5, lam=0.3).risk == \
        riskcalc.limit("pfedme", gamma=2.0, r=1.0, sigma=0.5, lam=0.3).risk


# was: [True, 2.0] read as the eigenvalues 1 and 2, and [Decimal(1), Decimal(4)] refused as
# "object data", where Spectrum([...]) refuses the one and takes the other.
def test_from_eigenvalues_reads_numbers_as_the_layer_does():
    from riskcalc import Spectrum

    with pytest.raises(ValueError, match="spectrum eigenvalues .*it holds a boolean"):
        Spectrum.from_eigenvalues([True, 2.0])
    exact = Spectrum.from_eigenvalues([Decimal(1), Fraction(4)])
    assert exact.describe() == Spectrum([1.0, 4.0]).describe() == "discrete[0.5@1, 0.5@4]"


# was: montecarlo.compare(d=1) simulated a 1-dimensional problem where compare --d 1 is
# refused (as simulate_rounds(d=1) already was).
def test_the_simulation_needs_d_of_two_as_the_command_line(capsys):
    import montecarlo
    from tests.test_hardening_ninth import _one_error_line

    with pytest.raises(ValueError, match=r"^d must be an integer >= 2 "):
        montecarlo.compare("ftfa", gamma=0.5, r=1.0, sigma=0.5, d=1, reps=2)
    line = _one_error_line("compare ftfa --gamma 0.5 --r 1 --sigma 0.5 --d 1 --reps 2".split(),
                           capsys)
    assert line.startswith("error: --d must be an integer >= 2 "), line


# was: gamma=bytearray(b"2") computed at gamma = 50 (numpy reads bytes as uint8 numbers),
# also inside a list, where bytes b"2" and the string "2" are refused.
@pytest.mark.parametrize("value, held", [(bytearray(b"2"), "bytes are not numbers"),
                                         (memoryview(b"2"), "bytes are not numbers"),
                                         ([bytearray(b"2")], "it holds bytes"),
                                         ([[bytearray(b"2")], [bytearray(b"3")]],
                                          "it holds bytes")])
def test_bytes_are_not_numbers(value, held):
    with pytest.raises(ValueError, match="^gamma must be a (list of )?real number.*" + held):
        riskcalc.limit("ftfa", gamma=value, r=1.0, sigma=0.5)


# was: "lam must lie in (0, inf), got 0.0" for Decimal(0), np.float32(0) or a 0-d array, where
# lam=0 says why 0 is out (the limit lam -> 0, not taken along the rounds).
@pytest.mark.parametrize("zero", [0, Decimal(0), np.float32(0), np.array(0.0)])
def test_every_zero_lam_gets_the_reason(zero):
    from riskcalc.linear.dynamics.personalize import personalization_filter

    with pytest.raises(ValueError, match=r"^lam: RTFA's ridge toward the round-T server model"):
        personalization_filter(lam=zero)
