"""Issue 32, fuzz40 (small): what this fuzz found, each test failing before."""
from tests.helpers import run_cli

P = ["predict", "ftfa", "--gamma", "2", "--r", "1", "--sigma", "0.5"]


def test_max_minutes_past_float_range_says_how_to_ask_for_no_limit(capsys):
    """F1: ``--max-minutes 1e400`` (read as inf) was refused as "got inf" alone, though the docs
    said a value beyond a year sets no timer; the message now says what 1e400 became and what
    sets no timer (the docs: a finite value)."""
    code, out, err = run_cli(P + ["--max-minutes", "1e400"], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "1e400 reads as inf" in err and "e.g. 1e300" in err


def test_long_spectrum_spec_is_echoed_cut(capsys):
    """F2: a malformed SPEC was echoed whole (a 4009-character two-point SPEC, over 4000
    characters of message); now its first 60 characters and its length."""
    spec = "two-point:" + ",".join(["1"] * 2000)
    code, out, err = run_cli(P + ["--spectrum", spec], capsys)
    assert code == 2 and err.count("\n") == 1 and len(err) < 300
    assert "(4009 characters) is not one of identity" in err
