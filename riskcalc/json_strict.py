"""Strict, bounded JSON text: the parser layer under ``riskcalc.federation_file``.

``load`` reads a JSON file bounded before parsing: its size (``riskcalc._files.file_size``
before reading; a device such as ``/dev/zero`` is read no further than the limit), its bytes
(UTF-8, a byte-order mark dropped) and its nesting (counted without recursion, so a file nested
a million levels deep is refused, not a RecursionError). It keeps what ``json`` would silently
resolve, for the schema's checks to name by client and key: an object's duplicate keys
(``json`` keeps the last; here ``duplicates``), ``NaN`` / ``Infinity`` (not JSON numbers),
integers longer than Python converts and nonzero numbers below the smallest float (``NonFinite``
markers). Every error is one line starting with ``where``.
"""

from __future__ import annotations

import json
import os
import re
import sys
from decimal import Decimal

import numpy as np

from riskcalc._text import Overflow, Underflow, decimal
from riskcalc._files import file_size

__all__ = ["NonFinite", "WholeText", "kind", "load"]


class NonFinite:
    """What the JSON parser makes of ``NaN``, ``Infinity``, ``-Infinity`` (not JSON numbers),
    of an integer too long to convert and of a nonzero number below the smallest float: kept as
    a marker so that the check names the client and the key (``problem``: why, where "not
    finite" is not the reason)."""

    def __init__(self, text, problem=None):
        self.text, self.problem = text, problem

    def __repr__(self):
        return self.text


class WholeText(float):
    """A JSON number whose float is whole though its text is not an integer
    (``200.00000000000001``, which a float reads as 200.0): a number where one is wanted, no
    integer (``"n": 200.00000000000001`` was taken as 200 clients' samples, where the command
    line refuses ``--d 20.0000000000000001``); ``text`` is as written."""

    text = ""


class _Object(dict):
    """A JSON object that remembers its duplicate keys (``json``'s default keeps the last)."""

    duplicates = ()


def _pairs(pairs):
    obj = _Object(pairs)
    if len(obj) != len(pairs):
        seen, dups = set(), []
        for k, _ in pairs:
            if k in seen and k not in dups:
                dups.append(k)
            seen.add(k)
        obj.duplicates = tuple(dups)
    return obj


def load(path, where: str, *, max_bytes: int, max_depth: int, what: str, nesting: str):
    """The parsed JSON of ``path``: bounded in size and depth before parsing (module
    docstring). ``what``: the kind of file and what ``max_bytes`` holds, ``"a federation file
    (about 200,000 clients)"``; ``nesting``: the levels of its schema, named in the depth
    error."""
    file_size(path, max_bytes, where, what)
    kind_of, _, holds = what.partition(" (")
    try:
        with _open(path) as fh:
            raw = fh.read(max_bytes + 1)       # a device such as /dev/zero: at most this
    except OSError as exc:
        raise ValueError(f"{where}: {exc.strerror or exc}") from None
    if len(raw) > max_bytes:
        raise ValueError(f"{where}: more than {max_bytes // 2 ** 20} MiB, larger than {what}")
    if not raw.strip():
        # A named pipe nobody writes to reads as empty (``_open``), like an empty file.
        raise ValueError(f"{where}: empty" + ("" if os.path.isfile(path) else
                                             " (a pipe or device with nothing to read)"))
    try:
        text = raw.decode("utf-8-sig")          # a byte-order mark is not content
    except UnicodeDecodeError as exc:
        raise ValueError(f"{where}: not UTF-8 text (byte {exc.start}: "
                         f"{raw[exc.start:exc.start + 1]!r}); {kind_of} is JSON "
                         "text") from None
    depth = _depth(text)
    if depth > max_depth:
        raise ValueError(f"{where}: JSON nested {depth} levels deep; {kind_of} nests "
                         f"at most {max_depth} ({nesting})")
    try:
        return json.loads(text, object_pairs_hook=_pairs, parse_constant=NonFinite,
                          parse_int=_json_integer, parse_float=_json_float)
    except ValueError as exc:          # JSONDecodeError
        raise ValueError(f"{where}: not valid JSON ({exc})") from None


def _open(path):
    """``open(path, "rb")`` that does not wait for a writer: a named pipe (FIFO) nobody writes
    to blocked ``open`` forever (``--clients-file FIFO`` hung); opened without blocking, then
    read blocking, it reads as empty, while a pipe with a writer reads as before."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _json_integer(text: str):
    """A JSON integer; one longer than Python converts (4300 digits: its error advises
    ``sys.set_int_max_str_digits``) is a ``NonFinite`` marker, so that the check names the
    client and the key."""
    digits = len(text.lstrip("-"))
    if digits > sys.get_int_max_str_digits() > 0:
        return NonFinite(f"an integer of {digits} digits")
    return int(text)


def _json_float(text: str):
    """A JSON number with a fraction or an exponent; one that is nonzero but below the smallest
    float (``"sigma": 1e-400``, which ``float`` reads as 0, where the command line refuses
    ``--sigma 1e-400``: ``riskcalc._text.decimal``) is a ``NonFinite`` marker saying so
    (fuzz38 docs F2), and so is one beyond the largest float (``"r": 1e999`` was "r must be a
    finite number ..., got inf", a value the file does not hold)."""
    try:
        value = decimal(text, finite=True)
    except (Underflow, Overflow) as exc:
        return NonFinite(text, str(exc))
    if value == int(value) and Decimal(text) != Decimal(text).to_integral_value():
        value = WholeText(value)
        value.text = text
    return value


def _depth(text: str) -> int:
    """The deepest nesting of brackets outside strings (without recursion)."""
    bare = re.sub(r'"(?:[^"\\]|\\.)*"', '""', text)
    codes = np.frombuffer(bare.encode("utf-8"), dtype=np.uint8)
    step = (np.isin(codes, (ord("["), ord("{"))).astype(np.int64)
            - np.isin(codes, (ord("]"), ord("}"))))
    return int(np.cumsum(step).max(initial=0))


def kind(value) -> str:
    """What a parsed JSON value is, in words ("an object", "a string", ...); a ``NonFinite``
    marker is its text ("NaN", "an integer of 5000 digits": the messages said "NonFinite")."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, NonFinite):
        return value.text
    if isinstance(value, WholeText):
        return "a number"
    return {bool: "a boolean", str: "a string", int: "a number", float: "a number",
            list: "a list", type(None): "null"}.get(type(value), type(value).__name__)
