"""The data ``riskcalc.estimate`` starts from: reading them from a file and checking them.

A ``.npz`` file holds the arrays ``X`` (N x d), ``y`` (N,) and ``client`` (N,); a CSV file has
a header naming a ``client`` and a ``y`` column, every other column being a feature. Checked:
matching shapes, finite values, integer client ids (``check_data``), then data the model cannot
have produced (``check_variation``, ``check_repeated_rows``); each problem is a ``ValueError``
naming the array (or the file) and what it must be.

Bounded before reading: ``load`` reads the arrays' shapes from the ``.npz`` member headers (a
compressed file can expand a thousandfold) or bounds the rows of a CSV by its size (every
number takes at least two bytes, a digit and a comma or line end), and refuses data whose
estimate would need more memory (``working_bytes``) than ``memory_limit`` allows: half of this
machine's available memory (``MemAvailable``), at the time of the call. ``working_bytes``
counts what ``riskcalc.estimate.estimate`` holds at its peak: the N x d features (and the
CSV table they are cut from, or the product ``X * y``), the client x group sums of X^T y
(at most N x d: every group holds a row of every client), the least-squares inverses (m d^2
< N d, every n_j > d), boolean masks of X, and ``GROUPS`` + 5 Gram-size d x d matrices
(the groups' Gram matrices, their sum and the jackknife's S, S^2).
"""

from __future__ import annotations

import csv
import os
import re
import zipfile

import numpy as np

from riskcalc._validate import _not_real
from riskcalc._text import Underflow, decimal

#: The arrays of a ``.npz`` data file.
ARRAYS = ("X", "y", "client")
#: Number of jackknife groups of ``riskcalc.estimate`` (fewer when a client has fewer rows).
GROUPS = 20
#: Fraction of the available memory an estimate may take (``memory_limit``).
MEMORY_FRACTION = 0.5


def working_bytes(N: int, d: int, m: int = 0, least_squares: bool = False) -> float:
    """Upper bound on the bytes ``riskcalc.estimate.estimate`` holds at its peak for N rows of
    d features from m clients (module docstring): 8 (4 N d + (2 GROUPS + 5) d^2) + N d (masks)
    + 48 N, plus 16 (3 m + 4)^2 (the estimates' covariance and the jackknife's product) and,
    on the least-squares route, 40 (3 m + 1) m^2 + 16 (3 m + 1) m d (its coefficients A, their
    products with theta_hat and the contractions' intermediates, ``riskcalc.estimate.lsq``).
    ``m = 0``: the part known from the shapes of the arrays alone. Measured with
    ``tracemalloc`` (d = 5-600, m = 2-1000): 1.1-2.1x the peak (1.2x at m = 200 on the
    least-squares route)."""
    N, d, m = float(N), float(d), float(m)
    out = 8.0 * (4 * N * d + (2 * GROUPS + 5) * d * d) + N * d + 48.0 * N
    if m:
        out += 16.0 * (3 * m + 4) ** 2
    if least_squares:
        out += 40.0 * (3 * m + 1) * m * m + 16.0 * (3 * m + 1) * m * d
    return out


def memory_limit() -> float:
    """Bytes an estimate may take: ``MEMORY_FRACTION`` of the available memory (Linux
    ``MemAvailable``; elsewhere the free pages, or the physical memory)."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return MEMORY_FRACTION * 1024.0 * int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    pages = os.sysconf("SC_AVPHYS_PAGES") if hasattr(os, "sysconf") else 0
    return MEMORY_FRACTION * float(os.sysconf("SC_PAGE_SIZE") * (
        pages or os.sysconf("SC_PHYS_PAGES")))


def check_memory(where: str, N, d, how: str, m: int = 0, least_squares: bool = False) -> None:
    """Refuse, before the work, data of N rows x d features (from m clients) whose estimate
    needs more than ``memory_limit`` (``working_bytes``); ``where`` starts the message."""
    need, limit = working_bytes(N, d, m, least_squares), memory_limit()
    if need > limit:
        rows = working_bytes(N, d)
        # What cuts the need: the rows' part, or the clients' (the least-squares route's is
        # cubic in m: 1000 clients of 30 rows needed 112 GiB, where fewer rows would not help).
        advice = ["a subsample of each client's rows"] if rows > 0.25 * need else []
        if (2 * GROUPS + 5) * d > 4 * N:
            advice.append("fewer features")
        if m and need - rows > 0.25 * need:
            advice.append("fewer clients")
        if least_squares:
            advice.append("route moments")
        raise ValueError(f"{where}{how} N = {N:g} rows of d = {d:g} features"
                         + (f" from m = {m} clients" if m else "")
                         + f", whose estimate needs about {need / 2 ** 30:.3g} GiB of memory, "
                         f"more than the {limit / 2 ** 30:.3g} GiB limit (half this machine's "
                         f"available memory); estimate from {' or '.join(advice)}"
                         + (" (or save the data as .npz, whose size is read exactly)"
                            if "up to" in how else ""))


#: Largest magnitude of an entry of X or y (and inverse of the smallest nonzero largest one).
DATA_SCALE = 1e20


def check_data(X, y, client):
    """``(X, y, client)`` as float, float and int64 arrays, checked.

    Parameters
    ----------
    X : array_like (N, d)
    y : array_like (N,)
    client : array_like (N,)
        Client id of each row (integer values).

    Returns
    -------
    tuple of ndarray

    Raises
    ------
    ValueError
        For non-numeric arrays, shapes that do not match, NaN or infinite values, or client ids
        that are not integers.
    """
    arrays = {"X": X, "y": y, "client": client}
    for name, arr in arrays.items():
        why = _not_real(arr)     # the one layer's refusals (a masked array's mask was dropped)
        if why is not None:
            raise ValueError(f"{name} must be an array of real numbers ({why})")
        kind = np.asarray(arr).dtype.kind
        if kind == "b":
            # A boolean is not a number (riskcalc._validate): True/False read as 1/0 would
            # silently be taken for measurements.
            raise ValueError(f"{name} must be an array of real numbers, got booleans (True/"
                             f"False); if 0/1 values are meant, save {name}.astype(float)")
        if kind not in "iuf":
            # Complex data would lose its imaginary part, strings and objects are no numbers.
            what = {"c": "complex", "U": "strings", "S": "strings", "O": "objects"}.get(
                kind, f"of type {np.asarray(arr).dtype}")
            raise ValueError(f"{name} must be an array of real numbers, got {what}")
    try:
        X = np.asarray(X, dtype=float)
        y = np.asarray(y, dtype=float)
        client = np.asarray(client)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"X, y and client must be numeric arrays ({exc})") from None
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"X must be a non-empty 2-D array (N x d), got shape {X.shape}")
    for name, arr in (("y", y), ("client", client)):
        if arr.shape != (X.shape[0],):
            raise ValueError(f"{name} must have shape ({X.shape[0]},) like the rows of X, got "
                             f"{arr.shape}")
    for name, arr in (("X", X), ("y", y)):
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} has NaN or infinite values ({np.sum(~np.isfinite(arr))} "
                             "entries); remove or impute them first")
        # The spectral moments and their jackknife covariance hold eighth powers of X's
        # entries: measured on 300 x 10 data, every estimate scales exactly from 1e-25 to 1e25
        # and overflows at 1e30 (X * 1e200 gave "Eigenvalues did not converge", X * 1e-200
        # "Singular matrix"); DATA_SCALE keeps a margin for larger N and d.
        top = float(np.max(np.abs(arr))) if arr.size else 0.0
        if top > DATA_SCALE or 0.0 < top < 1.0 / DATA_SCALE:
            raise ValueError(f"{name}'s largest entry is {top:.3g} in magnitude, outside "
                             f"[{1.0 / DATA_SCALE:g}, {DATA_SCALE:g}] (the moments' high "
                             f"powers would overflow or underflow); rescale {name} (sigma, r "
                             "and rho scale with y, the spectrum with X^2)")
    if client.dtype.kind in "iu":
        # Integer ids as given: through floats, ids past 2^53 merged (2^62, 2^62 + 1 and
        # 2^62 + 2 were read as one client).
        if client.size and client.dtype.kind == "u" and client.max() > np.iinfo(np.int64).max:
            raise ValueError("client ids must be integers below 2^63, got "
                             f"{int(client.max())}")
        return X, y, client.astype(np.int64)
    try:
        ids = client.astype(float)
    except (TypeError, ValueError):
        raise ValueError("client ids must be integers") from None
    if not np.all(np.isfinite(ids)) or np.any(ids != np.round(ids)):
        raise ValueError("client ids must be integers, got non-integer values")
    if ids.size and np.max(np.abs(ids)) >= 2.0 ** 53:
        # A float holds every integer only up to 2^53: larger ids may be two clients read as one.
        raise ValueError(f"client ids given as floating-point numbers must lie below 2^53 "
                         f"in magnitude (beyond, two ids can be read as one), got "
                         f"{np.max(np.abs(ids)):.17g}; renumber the clients (or save integer "
                         "ids in a .npz)")
    return X, y, ids.astype(np.int64)


def check_variation(X, y) -> None:
    """ValueError for checked data (``check_data``) that vary too little for any estimate: X
    or y 0 everywhere (the moments would divide by zero), or data the model (rows x_i drawn
    independently, mean zero; y = x^T theta_j + noise) cannot have produced, every estimate
    from them an artefact of the formulas: one row of X repeated in every sample, one value
    of y in every row."""
    if not np.any(X):
        raise ValueError("X is 0 in every entry: there is no covariance to estimate")
    if not np.any(y):
        raise ValueError("y is 0 in every row: there is neither signal nor noise to estimate")
    if X.shape[0] > 1 and np.all(X == X[0]):
        raise ValueError("X has the same row in every sample: the features do not vary, so "
                         "no covariance, signal or noise can be told apart (is X the right "
                         "array?)")
    if y.size > 1 and np.all(y == y[0]):
        raise ValueError(f"y is {y[0]:g} in every row: a response that never varies carries no "
                         "signal to estimate (is y the right column?)")


def rank_deficient(X, inverse, m):
    """None when every client's design (rows of ``X`` with ``inverse == j``) has rank d,
    else (the first such client's index, its rank)."""
    for j in range(m):
        rank = np.linalg.matrix_rank(X[inverse == j])
        if rank < X.shape[1]:
            return j, rank
    return None


def check_repeated_rows(X, y, client) -> None:
    """ValueError where a client holds the same (x, y) row twice: the estimates assume
    independent samples, and a repeated row (oversampling, a join that matched twice) is taken
    for two: every row of 30 distinct ones twice (d = 20, sigma 0.5, r 0) estimated sigma
    0.3 +- 0.03 and r 0.7 +- 0.2, 20 distinct ones (= d) sigma 4e-14. Its sort copies the rows
    (about 2 N d floats, within ``working_bytes``): after ``check_memory``."""
    rows = np.column_stack([client.astype(float), y, X])
    unique = np.unique(rows, axis=0).shape[0]
    if unique < rows.shape[0]:
        raise ValueError(f"{rows.shape[0] - unique} rows repeat an earlier row of the same "
                         "client (the same x and y): the estimates assume independent samples, "
                         "and a repeated row counts twice; remove the repeats (numpy.unique("
                         "..., axis=0) per client) or check how the data were joined")


def load(path):
    """(X, y, client) from a ``.npz`` with arrays X, y, client, or a CSV with a header naming
    a ``client`` and a ``y`` column (every other column a feature)."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise ValueError(f"--data {path}: no such file")
    if not os.path.isfile(path):
        raise ValueError(f"--data {path}: not a regular file (a .npz or .csv data file)")
    if path.lower().endswith(".csv"):       # DATA.CSV was "not a .npz file ..."
        return _load_csv(path)
    with open(path, "rb") as fh:    # not loaded: 10^12 entries claimed was "not enough memory"
        if fh.read(6) == b"\x93NUMPY":
            raise ValueError(f"--data {path}: a single array (.npy); the data are a .npz of the "
                             "arrays X (N x d), y (N,), client (N,), e.g. numpy.savez(PATH, "
                             "X=X, y=y, client=client)")
    _check_npz(path)
    try:
        data = np.load(path, allow_pickle=False)
    except (OSError, EOFError, ValueError, zipfile.BadZipFile):
        # BadZipFile: a file that starts like a zip archive but is not one (was a traceback).
        # ValueError: a text or pickle file (numpy's advice to allow pickles is unsafe).
        raise ValueError(f"--data {path}: not a .npz file of arrays X, y, client (a data "
                         "CSV must be named *.csv)") from None
    try:
        with data:
            missing = [k for k in ARRAYS if k not in data.files]
            if missing:
                raise ValueError(f"--data {path}: missing array(s) {', '.join(missing)} (need X "
                                 f"(N x d), y (N,), client (N,); the file has "
                                 f"{', '.join(data.files) or 'none'})")
            extra = [k for k in data.files if k not in ARRAYS]
            if extra:           # was ignored silently (weights saved as w=... were not used)
                raise ValueError(f"--data {path}: unknown array(s) {', '.join(extra)}: the "
                                 "data are X (N x d), y (N,) and client (N,) only; save the "
                                 "others elsewhere")
            return tuple(_array(path, data, k) for k in ARRAYS)
    except (OSError, EOFError, zipfile.BadZipFile) as exc:
        raise ValueError(f"--data {path}: not a .npz file ({exc})") from None


def _check_npz(path) -> None:
    """``check_memory`` on the shapes of X, y and client read from their member headers
    (nothing else is read): N the most rows any of them claims, d the size of X's row (a 1-d
    X: 1). A file that is not a .npz of these arrays is left to ``np.load``'s checks."""
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
    except (OSError, EOFError, ValueError, KeyError, zipfile.BadZipFile, RuntimeError):
        return
    twice = sorted({n for n in names if names.count(n) > 1})    # numpy reads one silently
    if twice:
        raise ValueError(f"--data {path}: the archive holds array {twice[0]} twice (members "
                         "read as one name: which is meant is ambiguous); save it again with "
                         "numpy.savez")
    rows = [int(np.prod(sh[:1])) for k, sh in shapes.items() if k == "X"]
    rows += [int(np.prod(sh)) for k, sh in shapes.items() if k != "X"]
    if rows:
        X = shapes.get("X", (0, 1))
        check_memory(f"--data {path}: ", max(rows), int(np.prod(X[1:])) if len(X) > 1 else 1,
                     "X holds" if max(rows) == rows[0] and "X" in shapes else "the arrays hold")


def _array(path, data, key):
    """Array ``key`` of the open .npz ``data``, pickled objects refused by name."""
    try:
        return data[key]
    except ValueError as exc:
        if "pickle" not in str(exc):    # a truncated array was said to hold a pickle
            raise ValueError(f"--data {path}: array {key} cannot be read ({exc}): a truncated "
                             "or damaged file? save it again with numpy.savez") from None
        # numpy's message suggests allow_pickle=True: unsafe advice for a file from elsewhere.
        raise ValueError(f"--data {path}: array {key} holds Python objects (a pickle), which "
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
                raise ValueError(f"--data {path}: no header line within its first "
                                 f"{HEADER_BYTES // 2 ** 20} MiB (a data CSV starts with a "
                                 "header naming a 'client' and a 'y' column and the features)")
            header = [h.strip() for h in next(csv.reader([line.strip()]), []) or [""]]
            # numpy.savetxt's header is "# client,y,...": a commented first line naming both
            named = [h.strip() for h in line.strip().lstrip("#").split(",")]
            if line.startswith("#") and "client" in named and "y" in named:
                header = named
    except UnicodeDecodeError:
        raise ValueError(f"--data {path}: not a text CSV (not UTF-8: binary data?)") from None
    if header == [""]:      # was: "the CSV header needs a 'client' column; got " (nothing)
        raise ValueError(f"--data {path}: empty (no header line): a data CSV starts with a "
                         "header naming a 'client' and a 'y' column and the features")
    if len(header) == 1 and any(sep in header[0] for sep in ";\t"):
        sep = "';'" if ";" in header[0] else "tabs"
        raise ValueError(f"--data {path}: the CSV header is one column {header[0][:60]!r}: "
                         f"columns must be separated by commas (this file seems to use {sep})")
    for col in ("client", "y"):
        if col not in header:
            raise ValueError(f"--data {path}: the CSV header needs a '{col}' column; got "
                             f"{', '.join(header)}")
        if header.count(col) > 1:
            raise ValueError(f"--data {path}: the CSV header names '{col}' {header.count(col)}"
                             " times; which column is meant is ambiguous")
    # A row of len(header) numbers takes at least 2 len(header) bytes.
    check_memory(f"--data {path}: ", max(1, os.path.getsize(path) // (2 * len(header))),
                 len(header) - 2, "the file may hold up to")
    try:
        table = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2, encoding="utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"--data {path}: not a text CSV (not UTF-8: binary data?)") from None
    except ValueError as exc:
        # numpy's advice to pass ``usecols`` is for its Python callers, not for this file.
        why = _bad_line(path, header) or re.sub(r";? ?use `usecols`.*$", "",
                                                str(exc).strip()).rstrip(". ")
        raise ValueError(f"--data {path}: not a numeric CSV ({why})") from None
    if table.size == 0:
        raise ValueError(f"--data {path}: no data rows under the header")
    why = None if np.all(np.isfinite(table)) else _bad_line(path, header)   # 1e400 overflows
    if why:
        raise ValueError(f"--data {path}: {why}")
    if table.shape[1] != len(header):
        raise ValueError(f"--data {path}: {table.shape[1]} columns, header names {len(header)}")
    feats = [k for k, h in enumerate(header) if h not in ("client", "y")]
    if not feats:   # was "X must be a non-empty 2-D array (N x d), got shape (3, 0)"
        raise ValueError(f"--data {path}: the CSV has no feature column (only client and y); "
                         "every column other than client and y is a feature of X")
    return table[:, feats], table[:, header.index("y")], table[:, header.index("client")]


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
            cells = text.split(",")
            if len(cells) != len(header):
                return (f"line {line_no} has {len(cells)} fields, the header "
                        f"{len(header)}")
            for k, cell in enumerate(cells):
                where = f"line {line_no}, column {k + 1} ({header[k]!r}): {cell.strip()[:40]!r}"
                try:
                    value = decimal(cell)       # as numpy reads it: float() took "1_0" as 10
                except Underflow:
                    continue                    # a number numpy reads as 0
                except ValueError:
                    return f"{where} is not a number"
                if np.isinf(value) and "inf" not in cell.lower():
                    return (f"{where} overflows: beyond the largest float (about 1.8e308), "
                            "it would be read as infinite; rescale the column")
    return None
