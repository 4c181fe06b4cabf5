"""A bounded memo of pure solves keyed on their inputs' exact values (``pencil_edges.edges``):
the key holds a pencil's class and the dtype, shape and bytes of each of its attributes (its
solves read nothing else), so a kept value is the one a new solve would return."""

from __future__ import annotations

from collections import OrderedDict
from numbers import Number

import numpy as np


class Kept:
    """The values of the last ``size`` distinct keys (least recently used dropped first), each
    key of at most ``max_bytes`` of arrays."""

    def __init__(self, size: int, max_bytes: int):
        self.size, self.max_bytes, self._kept = size, max_bytes, OrderedDict()

    def key(self, pencil, *arrays):
        """The key of ``pencil`` (its class, its attributes) and of ``arrays`` (array-likes or
        None, as float arrays), or None (nothing kept): an attribute other than a number, a
        string or a non-object array, or more than ``max_bytes`` of arrays."""
        parts = [(name, exact(v)) for name, v in sorted(vars(pencil).items())]
        if any(k is None for _, k in parts):
            return None
        parts += [(str(i), ("none",) if a is None else exact(np.asarray(a, float)))
                  for i, a in enumerate(arrays)]
        held = sum(len(k[2]) for _, k in parts if len(k) == 3)
        return None if held > self.max_bytes else (type(pencil), tuple(parts))

    def get(self, key):
        """The kept value of ``key`` (marked as just used), or None."""
        if key is None or key not in self._kept:
            return None
        self._kept.move_to_end(key)
        return self._kept[key]

    def put(self, key, value):
        """Keep ``value`` under ``key`` (None: nothing kept), dropping the least recently used
        beyond ``size``."""
        if key is None:
            return
        self._kept[key] = value
        if len(self._kept) > self.size:
            self._kept.popitem(last=False)

    def clear(self):
        """Forget every kept value."""
        self._kept.clear()


def exact(v):
    """(dtype, shape, bytes) of an array, (type name, repr) of a number or a string (repr: -0.0
    is not 0.0), else None."""
    if isinstance(v, np.ndarray):
        return None if v.dtype.hasobject else (v.dtype.str, v.shape, v.tobytes())
    if isinstance(v, (Number, str)):
        return type(v).__name__, repr(v)
    return None
