"""Ordered expansions: covariances diagonal in one shared basis (covariate shift).

Spectrum forgets the order of the eigenvalues (it is a distribution). A federation whose
clients have different covariances Sigma_j, all diagonal in one shared basis, needs the order:
a SPEC then describes the function k -> s_k on the coordinates k = 1..d of the shared basis,
seen as a step function on [0, 1) (coordinate k sits at (k - 1/2) / d). Convention of
DESIGN.md: ``two-point:A,B,W`` has A on [0, W) and B on [W, 1); ``powerlaw:P[,D]`` the values
j^-P / mean, j = 1..D, in that order; ``file:PATH`` the file's values in file order;
``identity`` and ``scaled:C`` are constant.

A ``riskcalc.Spectrum`` is built from a SPEC's values (``power_law_values``), so the range
every eigenvalue is checked against and the largest number of eigenvalues are kept here,
below it (the package ``riskcalc.spectrum`` re-exports them and the functions of this module).
"""

from __future__ import annotations

import numpy as np

from riskcalc._validate import as_array, positive_int, real
from riskcalc._text import Overflow, Underflow, decimal
from riskcalc.spectrum.file import _read_ordered

#: Eigenvalues the limits are computed for: like the other scales of ``ClientSpec``, within
#: these bounds every product of the routes stays below 1e300 (beyond them the paper route
#: returned NaN for eigenvalues 1e300 and 1e-300).
EIGENVALUE_RANGE = (1e-100, 1e100)
#: Most eigenvalues a SPEC expands to (``powerlaw:P,D``, a federation's d): 80 MB of floats; far
#: more atoms than the limits need (powerlaw:1,100000000 took minutes and 9 GB).
MAX_EIGENVALUES = 10 ** 7


def power_law_values(p: float, d: int) -> np.ndarray:
    """The d eigenvalues j^-p / their mean, j = 1..d, in the order of j (non-increasing), or
    ValueError when the smallest falls below ``EIGENVALUE_RANGE``, naming the p that fits."""
    p = float(as_array("power-law exponent p", p, low=0.0, ndim=0))   # [1.0]: a TypeError
    d = positive_int("power-law size d", d, maximum=MAX_EIGENVALUES)
    # In logarithms: j^-p underflows to 0 for a large p (p = 1e300 said "spectrum
    # eigenvalue must lie in [1e-100, 1e+100], got 0.0", naming no p).
    logs = -p * np.log(np.arange(1, d + 1, dtype=float))
    # Mean 1; logs[0] = 0 is the largest (logaddexp.reduce took 2.7 s at d = 10^7)
    logs -= np.log(np.sum(np.exp(logs))) - np.log(d)
    span = (logs[-1] - logs[0]) / np.log(10.0)
    if logs[-1] < np.log(EIGENVALUE_RANGE[0]):
        raise ValueError(f"power-law exponent p = {p:g} with d = {d}: the eigenvalues "
                         f"span {-span:.4g} decades, beyond the eigenvalue range "
                         f"[{EIGENVALUE_RANGE[0]:g}, {EIGENVALUE_RANGE[1]:g}]; lower p "
                         f"below about {p * (100.0 + logs[0] / np.log(10.0)) / -span:.3g}")
    s = np.arange(1, d + 1, dtype=float) ** -p
    return s / s.mean()


def spec_kind(spec: str) -> tuple:
    """(kind, argument) of the SPEC string ``spec``: the kind before the first colon in lower
    case without the spaces around it (``powerlaw : 1,5`` was refused while ``powerlaw: 1, 5``
    was read), the argument after it without its surrounding spaces; a ``file:`` path keeps
    its case."""
    kind, _, arg = spec.strip().partition(":")
    return kind.strip().lower(), arg.strip()


def spec_key(spec: str) -> str:
    """The SPEC string ``spec`` written one way (``spec_kind``), to tell two SPECs apart: a
    key made by lower-casing the whole SPEC took ``file:A.txt`` and ``file:a.txt``, two files,
    for one spectrum (the second client got the first file's eigenvalues)."""
    kind, arg = spec_kind(spec)
    return f"{kind}:{arg}" if arg else kind


def shown(text) -> str:
    """The SPEC ``text`` as a message echoes it: its repr, cut to its first 60 characters and
    its length when longer (a 4000-character two-point SPEC was echoed whole, twice); a
    ``file:`` SPEC whole, as it names the file."""
    if len(text) <= 60 or spec_kind(text)[0] == "file":
        return repr(text)
    return f"{text[:60]!r}... ({len(text)} characters)"


def _numbers(text, arg):
    """The comma-separated numbers ``arg`` of the SPEC ``text`` (decimal notation)."""
    try:
        return [decimal(x, finite=True) for x in arg.split(",")] if arg else []
    except Overflow as exc:     # "scaled:1e400" said "got inf" (fuzz41 api F11)
        raise ValueError(f"spectrum {shown(text)}: {exc}") from None
    except Underflow:
        # decimal's advice, "give 0 or ...", is refused for an eigenvalue C, A or B
        tiny = next(x.strip() for x in arg.split(",") if _underflows(x))
        raise ValueError(f"spectrum {shown(text)}: {shown(tiny)} is nonzero but below the smallest "
                         "positive float (about 4.9e-324), which would read it as 0: an "
                         f"eigenvalue C, A or B must lie in [{EIGENVALUE_RANGE[0]:g}, "
                         f"{EIGENVALUE_RANGE[1]:g}], an exponent P or a weight W may be 0 or "
                         "above 1e-300") from None
    except ValueError:
        raise ValueError(f"spectrum {shown(text)}: {shown(arg)} is not a comma-separated list of "
                         "numbers") from None


def _underflows(text) -> bool:
    """Whether ``decimal`` refuses ``text`` as an Underflow."""
    try:
        decimal(text)
    except Underflow:
        return True
    except ValueError:
        pass
    return False


def ordered_steps(spec, d: int | None = None):
    """The covariance ``spec`` describes in the shared basis, as a step function on [0, 1).

    Parameters
    ----------
    spec : str or array_like
        A SPEC (``identity``, ``scaled:C``, ``two-point:A,B,W``, ``powerlaw:P[,D]``,
        ``file:PATH``) or the eigenvalues themselves (1-D, in the shared basis order).
    d : int, optional
        The dimension: the number of eigenvalues of ``powerlaw:P``; a spectrum with an explicit
        number of eigenvalues (a file, an array, ``powerlaw:P,D``) must have d of them.

    Returns
    -------
    edges : ndarray (n + 1,)
        0 = e_0 < e_1 < ... < e_n = 1.
    values : ndarray (n,)
        The eigenvalue (> 0) on [e_(k-1), e_k).

    Raises
    ------
    ValueError
        For a malformed SPEC, a non-positive eigenvalue, a covariance matrix instead of its
        eigenvalues, or a number of eigenvalues other than ``d``.
    """
    d = None if d is None else positive_int("d", d)
    if not isinstance(spec, str):
        values = _ordered_array(real("the spectrum array", spec), "the spectrum array")
    else:
        kind, arg = spec_kind(spec)
        if kind == "identity" and not arg:
            return np.array([0.0, 1.0]), np.array([1.0])
        if kind == "file" and arg:      # the path without the spaces after "file:"
            values = _ordered_array(_read_ordered(arg), f"spectrum file {arg!r}")
        else:
            nums = _numbers(spec, arg)
            if kind == "scaled" and len(nums) == 1:
                return np.array([0.0, 1.0]), _in_range("scaled:C factor C", np.array(nums))
            if kind == "two-point" and len(nums) == 3:
                a, b = _in_range("two-point eigenvalue", np.array(nums[:2]))
                w = float(as_array("two-point weight w", nums[2], low=0.0, high=1.0))
                edges = np.array([0.0, w, 1.0])
                keep = np.diff(edges) > 0
                return np.concatenate([[0.0], edges[1:][keep]]), np.array([a, b])[keep]
            if kind == "powerlaw" and len(nums) in (1, 2):
                size = (positive_int("power-law size d", nums[1], maximum=MAX_EIGENVALUES)
                        if len(nums) == 2 else d)
                if size is None:
                    raise ValueError(f"spectrum {shown(spec)}: powerlaw needs the number of "
                                     "eigenvalues; write powerlaw:P,D or give d (--d on the "
                                     "command line)")
                values = power_law_values(nums[0], size)          # j^-P: decreasing in j
            else:
                raise ValueError(f"spectrum {shown(spec)} is not one of identity, scaled:C, "
                                 "two-point:A,B,W, powerlaw:P[,D], file:PATH")
    if d is not None and values.size != d:
        raise ValueError(f"spectrum {shown(spec) if isinstance(spec, str) else repr('array')} has "
                         f"{values.size} eigenvalues for d = {d}: a client's covariance lists "
                         "one eigenvalue per coordinate of the shared basis")
    return np.linspace(0.0, 1.0, values.size + 1), values


def step_count(spec, d: int | None = None) -> int | None:
    """The number of steps ``ordered_steps(spec, d)`` would return, read from the SPEC without
    expanding it (a power law of 10^7 eigenvalues takes seconds and 80 MB); None when only the
    expansion tells (a file, an unsized or malformed SPEC: ``ordered_steps`` reports those)."""
    if not isinstance(spec, str):
        return int(np.size(spec))
    kind, arg = spec_kind(spec)
    if kind in ("identity", "scaled"):
        return 1
    if kind == "two-point":
        return 2
    if kind == "powerlaw":
        try:
            nums = _numbers(spec, arg)
        except ValueError:
            return None
        size = nums[1] if len(nums) == 2 else d
        return int(size) if size is not None and 1 <= size <= MAX_EIGENVALUES else None
    return None


def ordered_eigenvalues(spec, d: int) -> np.ndarray:
    """The d eigenvalues of ``spec`` in the shared basis order: the step function of
    ``ordered_steps`` at (k - 1/2) / d, k = 1..d (for ``two-point:A,B,W`` the first
    round(W d) coordinates have A)."""
    d = positive_int("d", d)
    edges, values = ordered_steps(spec, d)
    pos = (np.arange(d) + 0.5) / d
    return values[np.searchsorted(edges, pos, side="right") - 1].copy()


def _ordered_array(values, what):
    """A 1-D array of positive eigenvalues; a covariance matrix is refused with the way to
    pass its eigenvalues, and so is any array of more than one dimension, as ``Spectrum``
    refuses it (a 3 x 1 .npy was read here, refused by ``Spectrum.from_file``)."""
    if values.ndim == 2 and min(values.shape) > 1:
        raise ValueError(f"{what} is a {values.shape[0]} x {values.shape[1]} matrix: clients' "
                         "covariances must be diagonal in one shared basis; give the "
                         "eigenvalues in that basis as one list (e.g. np.diag(Sigma), saved "
                         "with np.save or one number per line)")
    if values.ndim > 1:
        raise ValueError(f"{what} is an array of shape {' x '.join(map(str, values.shape))}: "
                         "give the eigenvalues as a 1-d list (e.g. numpy.save(PATH, "
                         "values.ravel()))")
    values = values.ravel()
    if values.size == 0:
        raise ValueError(f"{what} has no eigenvalues")
    try:
        return _in_range("spectrum eigenvalue", values)
    except ValueError as exc:   # named no file: "client 0: spectrum: spectrum eigenvalue ..."
        raise ValueError(f"{what}: {exc}") from None


def _in_range(name, values):
    """Eigenvalues in ``EIGENVALUE_RANGE``, the range ``Spectrum`` takes: an ordered expansion
    is checked when its SPEC is read, not first where a solver builds a Spectrum of it."""
    return as_array(name, values, low=EIGENVALUE_RANGE[0], high=EIGENVALUE_RANGE[1])
