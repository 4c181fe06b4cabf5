"""Numbers read from command-line text and written into messages: ``decimal`` and ``integer``
read what an option or a file writes in decimal notation (and nothing else Python's ``float`` and
``int`` would take), ``shown_apart`` prints a value so that it reads differently from the edge it
is compared with, ``distinct`` refuses a list that gives a value twice.
"""

from __future__ import annotations

import re
from decimal import Decimal

from riskcalc._validate import MAX_DIGITS, _short

#: A number as text: ASCII decimal or scientific notation, or inf / infinity / nan (refused as
#: not finite where the parameter is checked).
_DECIMAL = re.compile(r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
                      r"|inf|infinity|nan)", re.IGNORECASE)


class Underflow(ValueError):
    """A nonzero number written below the smallest float (``decimal``)."""


class Overflow(ValueError):
    """A finite number written beyond the largest float (``decimal(..., finite=True)``)."""


def decimal(text: str, *, finite: bool = False) -> float:
    """The number ``text`` writes in decimal or scientific notation (surrounding spaces
    allowed), else ValueError. Python's ``float`` also reads "1_0" as 10 and other scripts'
    digits ("\u0661" as 1): a typing error would become another number silently. A nonzero
    number below the smallest float is refused: "1e-400" was read as 0 (``--lam 1e-400`` at
    gamma = 1 printed inf, the ridgeless risk). ``finite``: a finite number beyond the largest
    float ("1e400", read as inf) is refused as an ``Overflow`` (the files' readers and the
    command line's number options but --max-minutes, which explains 1e400 itself)."""
    if not isinstance(text, str) or not _DECIMAL.fullmatch(text.strip()):
        raise ValueError(f"expected a number in decimal notation (such as 0.5 or 1e-3), got "
                         f"{_short(text)}")
    value = float(text)
    if value == 0 and any(c in "123456789" for c in text.strip().lower().partition("e")[0]):
        raise Underflow(f"{_short(text)} is nonzero but below the smallest positive float "
                         "(about 4.9e-324), which would read it as 0: give a number above "
                         "1e-300, or 0 where 0 is allowed")
    if finite and value in (float("inf"), float("-inf")) and "inf" not in text.lower():
        raise Overflow(f"{_short(text.strip())} overflows: beyond the largest float (about "
                       "1.8e308), it would be read as infinite")
    return value



def integer(text: str, name: str) -> int:
    """The integer ``text`` writes in decimal notation (``decimal``'s), also as an integral
    decimal such as "20.0" or "1e3" (the Python API takes d=20.0 too), read exactly (not
    through a float: "20.0000000000000001" is no integer); else ValueError naming ``name``."""
    number = text.strip() if isinstance(text, str) else ""
    exact = Decimal(number) if _DECIMAL.fullmatch(number) else Decimal("NaN")
    if exact.is_finite() and exact == exact.to_integral_value():
        if exact.is_zero() or exact.adjusted() < MAX_DIGITS:
            return int(exact)
        raise ValueError(f"{name} must be an integer of at most {MAX_DIGITS} digits, got "
                         f"{_short(text)}")
    raise ValueError(f"{name} must be an integer, got {_short(text)}")


def shown_apart(value: float, edge: float, digits: int = 4) -> str:
    """``value`` in ``%g`` with ``digits`` significant digits, or as many more (up to 17) as
    it takes to print differently from ``edge``: a step 2.0003 past the stability edge 2
    printed "2 >= 2" and "like 1^(2 k)", and a contraction 0.99999999 "1 (converges:
    true)"."""
    value = float(value)
    for k in range(digits, 18):
        text = f"{value:.{k}g}"
        if value == edge or float(text) != edge:
            return text
    return repr(value)


def distinct(option: str, values: list) -> list:
    """``values`` (a command-line list, ``--rounds 1,1,1``, ``--gamma 0.5,0.5``) when no value
    is given twice; else a ValueError naming the option and the value: a list's values are the
    points of a table or grid, each computed once (a repeated one was computed and printed, or
    simulated, again)."""
    seen = set()
    for v in values:
        if v in seen:
            raise ValueError(f"{option} lists {v:g} twice: give each value once (the values "
                             "are the rows of the table or the points of the grid)")
        seen.add(v)
    return values


def claims_once(claim_ids) -> None:
    """Refuse a ``--claim`` id given twice on a command line (``riskcalc check``, ``python -m
    paper_checks.sensitivity``): each claim is checked once, and ``paper_checks.select`` (the
    Python API) keeps a repeated id once; the sensitivity run merged what ``check`` refused."""
    twice = [i for i in claim_ids or [] if claim_ids.count(i) > 1]
    if twice:
        raise ValueError(f"--claim {twice[0]} given twice: give each claim once (each is "
                         "checked once)")
