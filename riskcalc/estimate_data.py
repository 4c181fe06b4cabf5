"""The data ``riskcalc.estimate`` starts from: reading them from a file and checking them.

A ``.npz`` file holds the arrays ``X`` (N x d), ``y`` (N,) and ``client`` (N,); a CSV file has
a header naming a ``client`` and a ``y`` column, every other column being a feature. Checked:
matching shapes, finite values, integer client ids; each problem is a ``ValueError`` naming the
array (or the file) and what it must be.
"""

from __future__ import annotations

import os
import zipfile

import numpy as np

#: The arrays of a ``.npz`` data file.
ARRAYS = ("X", "y", "client")


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
        kind = np.asarray(arr).dtype.kind if not isinstance(arr, (str, bytes)) else "U"
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
    try:
        ids = client.astype(float)
    except (TypeError, ValueError):
        raise ValueError("client ids must be integers") from None
    if not np.all(np.isfinite(ids)) or np.any(ids != np.round(ids)):
        raise ValueError("client ids must be integers, got non-integer values")
    return X, y, ids.astype(np.int64)


def load(path):
    """(X, y, client) from a ``.npz`` with arrays X, y, client, or a CSV with a header naming
    a ``client`` and a ``y`` column (every other column a feature)."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise ValueError(f"--data {path}: no such file")
    if not os.path.isfile(path):
        raise ValueError(f"--data {path}: not a regular file (a .npz or .csv data file)")
    if path.endswith(".csv"):
        return _load_csv(path)
    try:
        data = np.load(path, allow_pickle=False)
    except (OSError, EOFError, ValueError):
        # ValueError: a text or pickle file (numpy's advice to allow pickles is unsafe).
        raise ValueError(f"--data {path}: not a .npz file of arrays X, y, client (a data "
                         "CSV must be named *.csv)") from None
    if not isinstance(data, np.lib.npyio.NpzFile):
        raise ValueError(f"--data {path}: a single array (.npy); the data are a .npz of the "
                         "arrays X (N x d), y (N,), client (N,), e.g. numpy.savez(PATH, X=X, "
                         "y=y, client=client)")
    try:
        with data:
            missing = [k for k in ARRAYS if k not in data.files]
            if missing:
                raise ValueError(f"--data {path}: missing array(s) {', '.join(missing)} (need X "
                                 f"(N x d), y (N,), client (N,); the file has "
                                 f"{', '.join(data.files) or 'none'})")
            return tuple(_array(path, data, k) for k in ARRAYS)
    except (OSError, EOFError, zipfile.BadZipFile) as exc:
        raise ValueError(f"--data {path}: not a .npz file ({exc})") from None


def _array(path, data, key):
    """Array ``key`` of the open .npz ``data``, pickled objects refused by name."""
    try:
        return data[key]
    except ValueError:
        # numpy's message suggests allow_pickle=True: unsafe advice for a file from elsewhere.
        raise ValueError(f"--data {path}: array {key} holds Python objects (a pickle), which "
                         "are not loaded (a pickle can run code); save numeric arrays") from None


def _load_csv(path):
    try:
        with open(path, encoding="utf-8") as fh:
            header = [h.strip() for h in fh.readline().strip().split(",")]
    except UnicodeDecodeError:
        raise ValueError(f"--data {path}: not a text CSV (not UTF-8: binary data?)") from None
    for col in ("client", "y"):
        if col not in header:
            raise ValueError(f"--data {path}: the CSV header needs a '{col}' column; got "
                             f"{', '.join(header)}")
    try:
        table = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2, encoding="utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"--data {path}: not a text CSV (not UTF-8: binary data?)") from None
    except ValueError as exc:
        raise ValueError(f"--data {path}: not a numeric CSV ({exc})") from None
    if table.size == 0:
        raise ValueError(f"--data {path}: no data rows under the header")
    if table.shape[1] != len(header):
        raise ValueError(f"--data {path}: {table.shape[1]} columns, header names {len(header)}")
    feats = [k for k, h in enumerate(header) if h not in ("client", "y")]
    return table[:, feats], table[:, header.index("y")], table[:, header.index("client")]
