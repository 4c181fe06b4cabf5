"""pandas on demand: the ``to_frame`` methods need it, the package does not (extra ``frames``);
and the one table builder of the results' ``to_frame`` (``frame``)."""

import numpy as np


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
