"""Reading ``riskcalc.estimate``'s data from a file: ``.npz`` or CSV, bounded before reading.

``load`` reads the arrays' shapes from the ``.npz`` member headers (a compressed file can expand a
thousandfold) or bounds the rows of a CSV by its size (every number takes at least two bytes, a
digit and a comma or line end), and refuses data whose estimate would need more memory than
``riskcalc.estimate.data.memory_limit`` allows (``check_memory``); the arrays it returns are
checked by ``riskcalc.estimate.data.check_data``.
"""

from __future__ import annotations

import csv
import os
import re
import tokenize
import zipfile

import numpy as np

from riskcalc._files import NPY_HEADER_ERRORS, npy_damage, unreadable, user_path
from riskcalc._text import Overflow, Underflow, decimal
from riskcalc.estimate.data import ARRAYS, check_memory


def load(path):
    """(X, y, client) from a ``.npz`` with arrays X, y, client, or a CSV with a header naming
    a ``client`` and a ``y`` column (every other column a feature)."""
    if not isinstance(path, (str, bytes, os.PathLike)):     # was a TypeError from os
        # (estimate_file checked it, load(None) did not: fuzz40 small F7)
        raise ValueError(f"path must be a file path (a str or os.PathLike), got "
                         f"{type(path).__name__}")
    path = user_path(path)
    if not path.strip():    # was "--data : no such file"; the CLI names --data (cli.estimate)
        raise ValueError("path needs a file name, got an empty one")
    why = unreadable(path)
    if why:
        raise ValueError(f"data file {path}: " + ("no such file" if why == "does not exist"
                                               else why))
    if not os.path.isfile(path):
        raise ValueError(f"data file {path}: not a regular file (a .npz or .csv data file)")
    if path.lower().endswith(".csv"):       # DATA.CSV was "not a .npz file ..."
        return _load_csv(path)
    with open(path, "rb") as fh:    # not loaded: 10^12 entries claimed was "not enough memory"
        if fh.read(6) == b"\x93NUMPY":
            raise ValueError(f"data file {path}: a single array (.npy); the data are a .npz of the "
                             "arrays X (N x d), y (N,), client (N,), e.g. numpy.savez(PATH, "
                             "X=X, y=y, client=client)")
    _check_npz(path)
    try:
        data = np.load(path, allow_pickle=False)
    except (OSError, zipfile.BadZipFile, *NPY_HEADER_ERRORS):
        # BadZipFile: a file that starts like a zip archive but is not one (was a traceback).
        # ValueError: a text or pickle file (numpy's advice to allow pickles is unsafe).
        raise ValueError(f"data file {path}: not a .npz file of arrays X, y, client (a data "
                         "CSV must be named *.csv)") from None
    try:
        with data:
            missing = [k for k in ARRAYS if k not in data.files]
            if missing:
                raise ValueError(f"data file {path}: missing array(s) {', '.join(missing)} (need X "
                                 f"(N x d), y (N,), client (N,); the file has "
                                 f"{', '.join(data.files) or 'none'})")
            extra = [k for k in data.files if k not in ARRAYS]
            if extra:           # was ignored silently (weights saved as w=... were not used)
                raise ValueError(f"data file {path}: unknown array(s) {', '.join(extra)}: the "
                                 "data are X (N x d), y (N,) and client (N,) only; save the "
                                 "others elsewhere")
            return tuple(_array(path, data, k) for k in ARRAYS)
    except (OSError, EOFError, zipfile.BadZipFile) as exc:
        raise ValueError(f"data file {path}: not a .npz file ({exc})") from None


def _check_npz(path) -> None:
    """``check_memory`` on the shapes of X, y and client read from their member headers
    (nothing else is read), after y's and client's are checked against the rows of a 2-D X:
    N the most rows any of them claims, d the size of X's row (a 1-d X: 1). A file that is
    not a .npz of these arrays is left to ``np.load``'s checks."""
    shapes, names = {}, []
    try:
        with zipfile.ZipFile(path) as zf:
            # numpy reads a member "X" as X too (its shape went unchecked: "Unable to allocate")
            names = [n[:-4] if n.endswith(".npy") else n for n in zf.namelist()]
            for key in ARRAYS:
                member = next((n for n in (f"{key}.npy", key) if n in zf.namelist()), None)
                if member is not None:
                    with zf.open(member) as fh:
                        version = np.lib.format.read_magic(fh)
                        shapes[key] = (np.lib.format.read_array_header_1_0(fh)
                                       if version == (1, 0)
                                       else np.lib.format.read_array_header_2_0(fh))[0]
    except (OSError, KeyError, zipfile.BadZipFile, RuntimeError, *NPY_HEADER_ERRORS):
        return
    twice = sorted({n for n in names if names.count(n) > 1})    # numpy reads one silently
    if twice:
        raise ValueError(f"data file {path}: the archive holds array {twice[0]} twice (members "
                         "read as one name: which is meant is ambiguous); save it again with "
                         "numpy.savez")
    X = shapes.get("X")
    for key in ("y", "client"):
        if X is not None and len(X) == 2 and min(X) > 0 and shapes.get(key, X[:1]) != X[:1]:
            # as check_data says it, before the memory the longest array would need (y of
            # 10^9 entries beside 6 rows of X was refused for 106 GiB of memory)
            raise ValueError(f"data file {path}: {key} must have shape ({X[0]},) like the rows of "
                             f"X, got {shapes[key]}")
    rows = [int(np.prod(sh[:1])) for k, sh in shapes.items() if k == "X"]
    rows += [int(np.prod(sh)) for k, sh in shapes.items() if k != "X"]
    if rows:
        X = shapes.get("X", (0, 1))
        check_memory(f"data file {path}: ", max(rows), int(np.prod(X[1:])) if len(X) > 1 else 1,
                     "X holds" if max(rows) == rows[0] and "X" in shapes else "the arrays hold")


def _array(path, data, key):
    """Array ``key`` of the open .npz ``data``, pickled objects refused by name."""
    try:
        return data[key]
    except (ValueError, tokenize.TokenError) as exc:
        if npy_damage(exc) or "pickle" not in str(exc):    # a truncated array was said to
            why = npy_damage(exc) or exc                      # hold a pickle
            raise ValueError(f"data file {path}: array {key} cannot be read ({why}): a truncated "
                             "or damaged file? save it again with numpy.savez") from None
        # numpy's message suggests allow_pickle=True: unsafe advice for a file from elsewhere.
        raise ValueError(f"data file {path}: array {key} holds Python objects (a pickle), which "
                         "are not loaded (a pickle can run code); save numeric arrays") from None


#: Longest header line of a data CSV (characters): a million features' names.
HEADER_BYTES = 16 << 20


def _load_csv(path):
    try:
        # utf-8-sig: a spreadsheet's byte-order mark is not part of the first column's name
        # (was: "needs a 'client' column; got \ufeffclient, y, ...").
        with open(path, encoding="utf-8-sig") as fh:
            # csv's reader: a quoted header ("client","y","x0", as spreadsheets write it) was
            # refused as "needs a 'client' column; got "client", "y", ...".
            # At most HEADER_BYTES: a file without a newline (20 GB of NULs) was read whole
            # as one "line" until memory ran out ("not enough memory ()").
            line = fh.readline(HEADER_BYTES)
            if len(line) >= HEADER_BYTES and not line.endswith("\n"):
                raise ValueError(f"data file {path}: no header line within its first "
                                 f"{HEADER_BYTES // 2 ** 20} MiB (a data CSV starts with a "
                                 "header naming a 'client' and a 'y' column and the features)")
            header = [h.strip() for h in next(csv.reader([line.strip()]), []) or [""]]
            # numpy.savetxt's header is "# client,y,...": a commented first line naming both
            named = [h.strip() for h in line.strip().lstrip("#").split(",")]
            if line.startswith("#") and "client" in named and "y" in named:
                header = named
    except UnicodeDecodeError:
        raise ValueError(f"data file {path}: not a text CSV (not UTF-8: binary data?)") from None
    if header == [""]:      # was: "the CSV header needs a 'client' column; got " (nothing)
        raise ValueError(f"data file {path}: empty (no header line): a data CSV starts with a "
                         "header naming a 'client' and a 'y' column and the features")
    if len(header) == 1 and any(sep in header[0] for sep in ";\t"):
        sep = "';'" if ";" in header[0] else "tabs"
        raise ValueError(f"data file {path}: the CSV header is one column {header[0][:60]!r}: "
                         f"columns must be separated by commas (this file seems to use {sep})")
    for col in ("client", "y"):
        if col not in header:
            raise ValueError(f"data file {path}: the CSV header needs a '{col}' column; got "
                             f"{', '.join(header)}")
        if header.count(col) > 1:
            raise ValueError(f"data file {path}: the CSV header names '{col}' {header.count(col)}"
                             " times; which column is meant is ambiguous")
    # A row of len(header) numbers takes at least 2 len(header) bytes.
    check_memory(f"data file {path}: ", max(1, os.path.getsize(path) // (2 * len(header))),
                 len(header) - 2, "the file may hold up to")
    try:
        # Quoted fields ("0","1.5", as spreadsheets may write every field) are numbers too:
        # the quoted header was read, the quoted numbers refused (fuzz40 fuzz F12).
        table = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2, encoding="utf-8",
                           quotechar='"')
    except UnicodeDecodeError:
        raise ValueError(f"data file {path}: not a text CSV (not UTF-8: binary data?)") from None
    except ValueError as exc:
        # numpy's advice to pass ``usecols`` is for its Python callers, not for this file.
        why = _bad_line(path, header) or re.sub(r";? ?use `usecols`.*$", "",
                                                str(exc).strip()).rstrip(". ")
        raise ValueError(f"data file {path}: not a numeric CSV ({why})") from None
    if table.size == 0:
        raise ValueError(f"data file {path}: no data rows under the header")
    why = None if np.all(np.isfinite(table)) else _bad_line(path, header)   # 1e400 overflows
    if why:
        raise ValueError(f"data file {path}: {why}")
    if table.shape[1] != len(header):
        raise ValueError(f"data file {path}: {table.shape[1]} columns, header names {len(header)}")
    feats = [k for k, h in enumerate(header) if h not in ("client", "y")]
    if not feats:   # was "X must be a non-empty 2-D array (N x d), got shape (3, 0)"
        raise ValueError(f"data file {path}: the CSV has no feature column (only client and y); "
                         "every column other than client and y is a feature of X")
    client = table[:, header.index("client")]
    if client.size and np.max(np.abs(client)) >= 2.0 ** 53:
        client = _integer_ids(path, header.index("client"), client)
    return table[:, feats], table[:, header.index("y")], client


def _integer_ids(path, column, floats):
    """The client column of the CSV ``path`` as exact int64 ids when every field is an integer
    of the int64 range, else ``floats`` (read as numpy reads it): ids past 2^53, such as
    64-bit hashes, were read through floats, merged there, and refused as "given as
    floating-point numbers", naming a rounded id the file does not hold."""
    ids = []
    with open(path, encoding="utf-8-sig") as fh:
        next(fh, None)
        for line in fh:
            text = line.split("#", 1)[0].strip()     # loadtxt's comments and blank lines
            if text:
                cell = next(csv.reader([text]))[column].strip()
                if not re.fullmatch(r"[-+]?[0-9]{1,19}", cell) or not (
                        -2 ** 63 <= int(cell) < 2 ** 63):
                    return floats
                ids.append(int(cell))
    return np.array(ids, dtype=np.int64) if len(ids) == len(floats) else floats


def _bad_line(path, header):
    """Where a CSV stops being numeric or a number overflows, as a text editor counts (the
    header is line 1), or None: numpy's own message counts data rows from 0 in one case and
    from 1 in another."""
    with open(path, encoding="utf-8-sig") as fh:
        next(fh, None)
        for line_no, line in enumerate(fh, 2):
            text = line.split("#", 1)[0].strip()     # loadtxt's comments and blank lines
            if not text:
                continue
            cells = next(csv.reader([text]))     # as loadtxt splits it, quotes read
            if len(cells) != len(header):
                return (f"line {line_no} has {len(cells)} fields, the header "
                        f"{len(header)}")
            for k, cell in enumerate(cells):
                where = f"line {line_no}, column {k + 1} ({header[k]!r})"
                try:       # as numpy reads it: float() took "1_0" as 10
                    decimal(cell, finite=True)
                except Underflow:
                    continue                    # a number numpy reads as 0
                except Overflow as exc:
                    return f"{where}: {exc}; rescale the column"
                except ValueError:
                    return f"{where}: {cell.strip()[:40]!r} is not a number"
    return None
