"""Spectrum files: the numbers of a ``.npy`` or text file of eigenvalues (``file:PATH``, read by
``Spectrum.from_file`` and ``ordered.ordered_steps``), refused before reading
when the file is too large or not a regular file, and, when it is not a list of numbers, refused
saying why (a text file's line number and a short prefix of its first bad field, never its
lines)."""

from __future__ import annotations

import os
import re

import numpy as np

from riskcalc._files import NPY_HEADER_ERRORS, npy_damage, unreadable, user_path
from riskcalc._files import file_size
from riskcalc._text import Overflow, Underflow, decimal

#: Largest spectrum file read (8 million eigenvalues as .npy): a device such as /dev/zero, or a
#: file that is not a list of eigenvalues, is refused before it is read.
MAX_FILE_BYTES = 64 * 2 ** 20
#: Largest text spectrum file: its numbers are parsed as Python strings first, ~36 bytes of
#: memory per byte of text (measured: 293 MiB for 8 MiB of "1 1 1 ..."); longer lists go
#: in a .npy file.
MAX_TEXT_BYTES = 8 * 2 ** 20


def _check_size(path, npy: bool):
    if npy:
        file_size(path, MAX_FILE_BYTES, f"spectrum file {path!r}",
                  "a list of eigenvalues (8 million as .npy)")
    else:
        file_size(path, MAX_TEXT_BYTES, f"spectrum file {path!r}",
                  "a text list of eigenvalues (save longer lists with numpy.save as .npy)")


def _regular_file(path) -> None:
    """Raise ValueError unless ``path`` is an existing regular file (saying which it is not)."""
    why = unreadable(path)
    if why:
        raise ValueError(f"spectrum file {path!r} {why}")
    if not os.path.isfile(path):
        raise ValueError(f"spectrum file {path!r} is not a regular file (a folder, device or "
                         "pipe); give a .npy or text file of eigenvalues")


def _read_ordered(path):
    """The numbers of a ``.npy`` or text file (numbers separated by whitespace or commas,
    ``#`` starting a comment), keeping a text file's rows: rows of equal length > 1 form a
    table (a matrix, 2-D), other layouts are a list of numbers."""
    path = user_path(path)
    if not path.strip():    # was "spectrum file '' does not exist"
        raise ValueError("spectrum file: needs a file name, got an empty one")
    _regular_file(path)
    npy = _is_npy(path)
    _check_size(path, npy)
    try:
        if npy:
            _check_npy_header(path)
            s = np.load(path, allow_pickle=False)
            if not isinstance(s, np.ndarray):
                raise ValueError("not a single array")
            if s.ndim == 0:     # was read as one eigenvalue, where a text file is a list
                raise ValueError("a 0-d array (a number saved without a list); save the "
                                 "eigenvalues as a 1-d array, e.g. numpy.save(PATH, [value])")
            return s        # its callers refuse complex or boolean values (a cast would not)
        with open(path, encoding="utf-8-sig") as fh:    # a BOM is not a number
            content = fh.read()
        # "#" starts a comment, as in a data CSV (numpy.loadtxt's rule): numpy.savetxt writes
        # its header so (was refused: "line 1: expected numbers ..., got '#'").
        lines = [line.partition("#")[0] for line in content.split("\n")]
        empty = next((k for k, line in enumerate(lines, 1) if _EMPTY_FIELD.search(line)), None)
        if empty:       # "1,,2" was read as 1, 2: a value left out, silently
            raise ValueError(f"line {empty}: an empty field "
                             f"{_where_empty(lines[empty - 1])} (a value left out?); give "
                             "every eigenvalue, a comma between two")
        rows = [line.replace(",", " ").split() for line in lines]
        # numpy, like float(), reads "1_000" as 1000 and other scripts' digits as digits:
        # a character outside plain decimal notation sends the fields to the strict check.
        if _UNUSUAL.search("\n".join(lines)) and _bad_line(rows):
            raise ValueError(_bad_line(rows))
        filled = [r for r in rows if r]
        lengths = [len(r) for r in filled]
        if len(lengths) > 2 and lengths in (list(range(1, len(lengths) + 1)),
                                            list(range(len(lengths), 0, -1))):
            # A covariance's lower or upper triangle was read as its entries (fuzz41 api F21);
            # two rows (1, 2) stay a list: "1, 2\n4" is one as often as a 2 x 2 triangle.
            raise ValueError(f"rows of {', '.join(map(str, lengths))} numbers: a triangular "
                             "matrix (half a covariance?), not a list; save its eigenvalues "
                             "(numpy.linalg.eigvalsh of the full matrix), or write the list "
                             "on one line")
        try:
            if len(filled) > 1 and len({len(r) for r in filled}) == 1 and len(filled[0]) > 1:
                values = np.array(filled, dtype=float)
            else:
                values = np.array([x for r in filled for x in r], dtype=float)
        except ValueError:
            raise ValueError(_bad_line(rows) or "expected numbers separated by spaces or "
                             "commas") from None
        if not (values.all() and np.isfinite(values).all()):
            _refuse_beyond_float(rows)
        return values
    except _BeyondFloat as exc:     # 1e-400 was "... got 0.0", 1e400 "... got inf"
        raise ValueError(f"spectrum file {path!r}: {exc}") from None
    except (OSError, *NPY_HEADER_ERRORS) as exc:
        raise ValueError(f"spectrum file {path!r} is not a list of numbers: "
                         f"{_unreadable(exc)}") from None


def _bad_line(rows) -> str | None:
    """Which line of a spectrum text file (split into fields) is not numbers in decimal
    notation (``riskcalc._text.decimal``), or None: its number and a short prefix of its
    first bad field only, as the file may be any text (given /etc/passwd, the message must not
    print its lines)."""
    for number, fields in enumerate(rows, 1):
        for text in fields:
            try:
                decimal(text)
            except Underflow:
                continue            # a number (``_refuse_beyond_float``)
            except ValueError:
                shown = text if len(text) <= 8 else text[:6] + "..."
                return (f"line {number}: expected numbers separated by spaces or commas, got "
                        f"{shown!r}")
    return None


def _is_npy(path) -> bool:
    """Whether ``path`` is named ``.npy`` (any case) or starts as a .npy file does: eig.NPY and
    a .npy saved under another name were read as text ("not UTF-8 text (byte 0: binary
    data?)"). A .npz archive is refused saying so."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(6)
    except OSError as exc:
        raise ValueError(f"spectrum file {path!r} cannot be read ({exc.strerror})") from None
    if head.startswith(b"PK\x03\x04") and not path.lower().endswith(".npy"):
        raise ValueError(f"spectrum file {path!r} is a zip archive (a .npz of several arrays?): "
                         "save the eigenvalues as one array with numpy.save (.npy)")
    return path.lower().endswith(".npy") or head == b"\x93NUMPY"


def _check_npy_header(path) -> None:
    """ValueError when a .npy file's header claims more data than the file holds: numpy
    allocates the claimed array first (10^12 entries: "not enough memory (Unable to allocate
    7.28 TiB ...)"); a file without numpy's header is left to np.load."""
    with open(path, "rb") as fh:
        try:
            version = np.lib.format.read_magic(fh)
            shape, _, dtype = (np.lib.format.read_array_header_1_0(fh) if version == (1, 0)
                               else np.lib.format.read_array_header_2_0(fh))
        except NPY_HEADER_ERRORS:
            return              # no .npy header: np.load says why
        held = os.path.getsize(path) - fh.tell()
    claimed = float(np.prod(shape, dtype=float)) * dtype.itemsize
    if not dtype.hasobject and claimed > held:
        raise ValueError(f"its header claims an array of shape {shape} ({claimed:.3g} bytes) "
                         f"but the file holds {held} bytes of data (truncated?)")


class _BeyondFloat(ValueError):
    """A number of a spectrum text file that a float cannot hold (``_refuse_beyond_float``)."""


def _refuse_beyond_float(rows) -> None:
    """_BeyondFloat naming the first field of a text file (split into fields) written nonzero
    but read as 0, or finite but read as infinite (``decimal``'s Overflow), if any."""
    for number, fields in enumerate(rows, 1):
        for text in fields:
            try:
                decimal(text, finite=True)
            except Underflow:
                shown = repr(text if len(text) <= 12 else text[:10] + "...")
                raise _BeyondFloat(f"line {number}: {shown} underflows: nonzero but below the "
                                   "smallest positive float (about 4.9e-324), it would be "
                                   "read as 0, and eigenvalues must be positive") from None
            except Overflow as exc:
                raise _BeyondFloat(f"line {number}: {exc}") from None


#: A comma with no number before it on its line, since the last comma or after it ("1,,2",
#: ",1", "1, 2,"): a comma stands between two numbers, as in the command line's lists
#: ("--gamma 2," is refused); the file's "1,2," was read where "1,,2" was refused (fuzz41
#: api F5).
_EMPTY_FIELD = re.compile(r"^\s*,|,\s*,|,\s*$")


def _where_empty(line) -> str:
    """Where ``_EMPTY_FIELD`` matched ``line``, for the message."""
    if re.search(r",\s*,", line):
        return "between commas"
    return "before the first comma" if re.match(r"\s*,", line) else "after the last comma"


#: A character of a spectrum text file outside decimal notation, whitespace and commas.
_UNUSUAL = re.compile(r"[^0-9eE.+\-,\s]")


def _unreadable(exc) -> str:
    """Why a spectrum file could not be read, for its user: numpy's "allow_pickle=False" would
    advise loading a pickle (which can run code), and a codec error names no file kind."""
    if npy_damage(exc):
        return f"{npy_damage(exc)} (a damaged .npy?); save the array again with numpy.save"
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 text (byte {exc.start}: binary data?); give a .npy or text file"
    if "allow_pickle" in str(exc) or "pickle" in str(exc):
        return ("it holds Python objects or is no .npy file (a pickle is never loaded: it "
                "can run code); save a numeric array with numpy.save")
    return str(exc)
