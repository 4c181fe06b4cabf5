"""The data ``riskcalc.estimate`` starts from: checking them (read by ``riskcalc.estimate.files``).

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

import os

import numpy as np

from riskcalc._validate import _not_real

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


def shared_rows(X, y, client) -> str | None:
    """A note where two clients hold the same (x, y) row (a client's rows copied under a second
    id, a join that matched twice), else None: the estimates assume independent clients, and
    a client copied under another id was estimated at r = 0 from it without a word (fuzz42
    misc F7). Rows are compared only where their y is repeated (one sort of N numbers); run
    after ``check_repeated_rows`` (so a repeat is across clients)."""
    _, key, count = np.unique(y, return_inverse=True, return_counts=True)
    candidates = np.flatnonzero(count[key.ravel()] > 1)
    if candidates.size == 0:
        return None
    _, row, count = np.unique(np.column_stack([y[candidates], X[candidates]]), axis=0,
                              return_inverse=True, return_counts=True)
    if not np.any(count > 1):
        return None
    twice = candidates[np.flatnonzero(row.ravel() == np.flatnonzero(count > 1)[0])]
    return (f"{int(np.sum(count - 1))} rows of a client repeat a row of another (the same x "
            f"and y; clients {client[twice[0]]} and {client[twice[1]]} first): the estimates "
            "assume independent clients, and a client's rows copied under another id make the "
            "two look alike (r near 0); check how the data were joined")
