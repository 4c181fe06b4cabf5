"""The checks of one value of a federation file, for ``riskcalc.federation_file``'s reader
(``reader``).

Each check takes ``probe`` (the ``FederationFile`` being read: its ``error`` names the file and
the client, its ``d`` sizes ``powerlaw:P`` spectra) and the client index ``j`` (None: the
top level), and returns the value checked or raises one ValueError line naming the file, the
client and the key: ``check_keys`` (duplicate and unknown keys of an object), ``check_number``
(a finite JSON number in the range of ``riskcalc._validate.RANGES``), ``check_integer``,
``check_spec`` (a SPEC's syntax and size, ``file:`` made absolute) and ``check_se`` (the
standard errors). Nothing is coerced: a string or boolean where a number belongs is an error (a
numpy integer or float, in a dict given to ``from_object``, is the number it holds).
"""

from __future__ import annotations

import difflib
import os

import numpy as np

from riskcalc._files import user_path
from riskcalc._validate import MAX_INT, RANGES
from riskcalc.json_strict import NonFinite, WholeText
from riskcalc.json_strict import kind as _kind
from riskcalc.spectrum import ordered_steps, spec_kind, step_count



def check_keys(probe, j, obj, allowed, what):
    dups = getattr(obj, "duplicates", ())
    if dups:
        raise probe.error(j, f"key {dups[0]} given twice (JSON keeps only one "
                             "value; remove the other)")
    unknown = [k for k in obj if k not in allowed]
    if unknown:
        # The nearest key first: the list names every key of the schema, some of which the
        # verb reading the file then refuses ('name' in predict's --clients-file).
        near = difflib.get_close_matches(str(unknown[0]), allowed, n=1, cutoff=0.75)
        raise probe.error(j, f"unknown key {_short(unknown[0])}"
                             + (f" (did you mean {near[0]!r}?)" if near else "")
                             + f" ({what} keys of the schema: {', '.join(allowed)})")


def check_number(probe, j, key, value, ranges=None):
    """``value`` of ``key``: a finite JSON number in its range, ``ranges[key]`` = ``(low, high,
    why)`` where the model family's differs from ``RANGES`` (``why`` names it in the message;
    ``reader.read``), else ``RANGES``'s."""
    value = _python(value)
    low, high, why = (ranges or {}).get(key) or (*RANGES.get(key, RANGES["r"]), "")
    shown = f"[{low:g}, {high:g}]" + (f" {why}" if why else "")
    if isinstance(value, NonFinite):
        problem = value.problem
        if problem and low > 0:     # "give 0 or a number above 1e-300": gamma takes neither
            problem = f"{problem.partition(': give ')[0]}: {key} must lie in {shown}"
        raise probe.error(j, f"{key}: {problem}" if problem else
                          f"{key} must be a finite number, got {value!r}")
    if type(value) not in (int, float):
        raise probe.error(j, f"{key} must be a number, got {value!r} ({_kind(value)}; "
                             "numbers are JSON numbers, not strings or booleans)")
    if not np.isfinite(_float(value)):
        raise probe.error(j, f"{key} must be a finite number in {shown}, got {_short(value)}")
    if key == "gamma":
        ok = low <= value <= high
    else:
        ok = 0.0 <= value <= high
    if not ok:      # (a family's range as its verbs print it: 1e+11, not 100000000000.0)
        raise probe.error(j, f"{key} must lie in {shown}, got "
                             + (f"{value:g}" if why else _short(value)))
    return float(value)


def check_integer(probe, j, key, value, minimum, maximum=MAX_INT):
    # An int is whole, however long (10^400 was 'must be an integer', then its digits).
    if isinstance(value, WholeText):
        raise probe.error(j, f"{key} must be an integer, got {value.text[:40]} (a float reads "
                             f"it as {float(value):.17g})")
    value = _python(value)
    if isinstance(value, NonFinite) or type(value) not in (int, float) or (
            type(value) is float and not (np.isfinite(value) and value == int(value))):
        raise probe.error(j, f"{key} must be an integer, got {_short(value)}"
                             + (f" ({_kind(value)})" if type(value) in (str, bool) else ""))
    # Written with a fraction or an exponent (a float), 2^53 + 1 reads as 2^53: exact below.
    inexact = type(value) is float and abs(value) >= MAX_INT
    if inexact or not minimum <= value <= maximum:
        raise probe.error(j, f"{key} must be an integer >= {minimum} and <= {maximum}, got "
                             f"{_short(value)}"
                             + (" (a number written with a fraction or an exponent is exact "
                                "below 2^53 only: write the integer's digits)" if inexact
                                else ""))
    return int(value)


def _python(value):
    """A numpy integer or float (``from_object``'s dict built in Python) as the Python number
    it holds: np.float64(0.5) was refused as "numbers are JSON numbers, not strings or
    booleans", which every other entry of the API takes. numpy's bool is no number."""
    if isinstance(value, WholeText):    # a number: 2.00000000000000001 is gamma 2.0
        return float(value)
    return value.item() if isinstance(value, (np.integer, np.floating)) else value


def _float(value) -> float:
    """``value`` as a float, inf for an integer too large for one."""
    try:
        return float(value)
    except OverflowError:
        return np.inf


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:20]}...({len(text)} characters)"


def check_spec(probe, j, value, base, seen):
    """A SPEC string, its syntax and size checked now (so that its errors name the client);
    ``file:`` made absolute against ``base``."""
    if not isinstance(value, str):
        raise probe.error(j, f"spectrum must be a SPEC string (identity, scaled:C, "
                             f"two-point:A,B,W, powerlaw:P[,D], file:PATH), got {value!r}")
    raw = value
    kind, arg = spec_kind(value)    # "file: x.txt" was joined to the folder as " x.txt"
    if kind == "file" and arg and (base is not None or arg.startswith("~")):
        full = user_path(arg)           # "file:~/eig.txt" was the folder's "~/eig.txt"
        value = "file:" + (full if base is None or os.path.isabs(full)
                           else os.path.join(base, full))
    if value in seen:
        return value
    # seen: SPEC -> its number of steps, and None -> the most of them. The distinct spectra
    # times the most steps bound the joint measure's size (``joint_spectrum.check_size``)
    # before each is expanded: 100 distinct powerlaw:P,10000000 took 5 s each to check here.
    from riskcalc.linear.engine.joint_spectrum import check_size

    types = len(seen) - (None in seen) + 1
    try:
        check_size(types, max(seen.get(None, 1), step_count(value, probe.d) or 1))
        _, values = ordered_steps(value, probe.d)
        check_size(types, max(seen.get(None, 1), values.size))
    except ValueError as exc:
        text = str(exc)
        if probe.d is None and "powerlaw needs the number" in text:
            return value            # sized later, by the verb's --d
        if value != raw and os.path.islink(probe.path) and not os.path.exists(value[5:]):
            # The link's folder, as a shell there reads the path (``reader._base``); said,
            # since the file beside the link's target is not read.
            text += (f" (a file: path is relative to the folder the federation file is given "
                     f"in, {base}, also when that file is a symbolic link)")
        raise probe.error(j, f"spectrum: {text}") from None
    seen[value], seen[None] = values.size, max(seen.get(None, 1), values.size)
    return value


def check_se(probe, j, value):
    if not isinstance(value, dict):
        raise probe.error(j, f"se must be an object of standard errors, got {_kind(value)}")
    check_keys(probe, j, value, ("gamma", "n", "r", "sigma", "rho"), "se")
    out = {}
    for key, v in value.items():
        out[key] = None if v is None else check_number(probe, j, f"se.{key}", v)
    return out
