"""What the result classes share: pandas on demand (the ``to_frame`` methods need it, the
package does not: extra ``frames``), the one table builder of their ``to_frame`` (``frame``),
their equality (``equal``) and their numbers as strict JSON (``json_numbers``)."""

from dataclasses import fields

import numpy as np


def json_numbers(v):
    """``v`` (a number, an array, or dicts, lists and tuples of them, nested: a result's
    parameters) as strict JSON values: floats (nested lists for an array), inf and NaN as None
    (``json.dumps`` writes them as Infinity and NaN, which is not JSON); integers stay
    integers, booleans booleans, text and None as they are."""
    if isinstance(v, np.ndarray) and v.ndim == 0:
        v = v[()]
    if isinstance(v, dict):
        return {k: json_numbers(x) for k, x in v.items()}
    if isinstance(v, (float, np.floating)) or isinstance(v, np.ndarray) and v.dtype.kind == "f":
        arr = np.asarray(v, dtype=float)
        return np.where(np.isfinite(arr), arr, None).tolist()
    if isinstance(v, (list, tuple, np.ndarray)):
        return [json_numbers(x) for x in v]
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, str) or v is None:
        return v
    if isinstance(v, (int, np.integer)):
        return int(v)
    return json_numbers(float(v))


def pandas():
    """The pandas module, or ImportError saying how to install it."""
    try:
        import pandas
    except ImportError:
        raise ImportError("to_frame needs pandas, an optional dependency: "
                          "pip install 'fedrisk[frames]' (or pip install pandas)") from None
    return pandas


def frame(columns: dict, shape=None):
    """A pandas DataFrame of ``columns`` broadcast together: one row per point of ``shape``
    (default: the broadcast shape of the columns that are arrays or lists), in C order, each
    array raveled and each scalar repeated; one row when every column is a scalar.

    Parameters
    ----------
    columns : dict
        Column name -> scalar, list or ndarray (lists are read as arrays).
    shape : tuple, optional
        The points' shape (a result's ``risk``); every array column broadcasts to it.
    """
    pd = pandas()
    cols = {k: np.asarray(v) if isinstance(v, (list, np.ndarray)) else v
            for k, v in columns.items()}
    if shape is None:
        shape = np.broadcast_shapes(*(v.shape for v in cols.values()
                                      if isinstance(v, np.ndarray)))
    size = int(np.prod(shape))
    return pd.DataFrame({k: np.broadcast_to(v, shape).ravel() if isinstance(v, np.ndarray)
                         else [v] * size for k, v in cols.items()})


def equal(a, b):
    """``a == b`` for the results (dataclasses): every field that takes part in comparison
    equal, arrays by value and NaN equal to NaN (the same undefined cosine), so that the same
    limit is the same result. The generated ``__eq__`` compared the fields as tuples: a result
    holding arrays raised "The truth value of an array with more than one element is
    ambiguous", and one holding a NaN was unequal to itself."""
    if type(a) is not type(b):
        return NotImplemented
    return all(_same(getattr(a, f.name), getattr(b, f.name)) for f in fields(a) if f.compare)


def _same(x, y) -> bool:
    """Equality of two field values: dicts and lists item by item, numbers and arrays by value
    (NaN equal to NaN), anything else by ``==``."""
    if isinstance(x, dict) and isinstance(y, dict):
        return x.keys() == y.keys() and all(_same(x[k], y[k]) for k in x)
    if isinstance(x, (list, tuple)) and isinstance(y, (list, tuple)):
        return len(x) == len(y) and all(_same(u, v) for u, v in zip(x, y))
    try:
        return bool(np.array_equal(x, y, equal_nan=True))
    except TypeError:       # text, None: no NaN to test
        return bool(x == y)
