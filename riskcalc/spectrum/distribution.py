"""Covariance spectra: the eigenvalue distribution H of Sigma_i and the signal distribution G.

Paper 003 (``003_4b976ddf5225c17e.txt``), Sec. 6.3, after Hastie-Montanari-Rosset-Tibshirani
(HMRT19): with Sigma = sum_j s_j v_j v_j^T, the limits depend on Sigma and on the signal
theta (here theta_i - theta_0, or theta_i for the local baselines) only through

    H(s) = (1/d) sum_j 1{s >= s_j},      G(s) = (1/||theta||^2) sum_j (v_j^T theta)^2 1{s >= s_j}.

When the direction of theta is uniform on the sphere (the prior of paper 003, Sec. 2) the
weights of G equal those of H in the limit, which is the default here.

Spectrum files (``file:PATH``, ``Spectrum.from_file``) are read by ``riskcalc.spectrum.file``;
a SPEC's eigenvalues in order (covariate shift's covariances in one shared basis) by
``riskcalc.spectrum.ordered``.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from riskcalc._validate import as_array, positive_int, real
from riskcalc.spectrum.file import _read_ordered
from riskcalc.spectrum.ordered import (EIGENVALUE_RANGE, MAX_EIGENVALUES, _numbers,
                                       ordered_steps, power_law_values, shown, spec_kind)

__all__ = ["Spectrum", "as_spectrum", "spec_uses_d"]


@dataclass(frozen=True, eq=False)
class Spectrum:
    """A discrete eigenvalue distribution H and signal distribution G on the same atoms.

    Parameters
    ----------
    atoms : array_like
        Distinct or repeated positive eigenvalues s_j (repeated atoms are merged).
    weights : array_like, optional
        Mass of H on each atom (non-negative, summing to one); uniform by default.
    signal_weights : array_like, optional
        Mass of G on each atom: the share of ||theta||^2 carried by that eigenspace. Defaults
        to ``weights`` (uniform direction of theta, paper 003 Sec. 2).

    Examples
    --------
    >>> Spectrum([1.0, 4.0], weights=[0.5, 0.5]).mean
    2.5
    """

    atoms: np.ndarray
    weights: np.ndarray = None
    signal_weights: np.ndarray = None
    signal_is_uniform: bool = field(init=False)

    def __post_init__(self):
        atoms = real("spectrum eigenvalues", self.atoms)
        if atoms.ndim > 1:
            # A covariance matrix is not its eigenvalues (flattening it read [[1, 2], [2, 5]]
            # as the eigenvalues 1, 2, 2, 5).
            raise ValueError(_not_a_list(atoms))
        if atoms.size > MAX_EIGENVALUES:     # before the sort that merges ties (minutes)
            raise ValueError(f"spectrum eigenvalues: {atoms.size} given, more than "
                             f"{MAX_EIGENVALUES:g}, the most a spectrum may have; give their "
                             "histogram (atoms and weights) instead")
        atoms = np.atleast_1d(as_array("spectrum eigenvalue", atoms, low=EIGENVALUE_RANGE[0],
                                       high=EIGENVALUE_RANGE[1]))
        if atoms.size == 0:
            raise ValueError("spectrum needs at least one eigenvalue")
        weights = _distribution("spectrum weights", self.weights, atoms.size)
        uniform = self.signal_weights is None
        signal = weights if uniform else _distribution(
            "spectrum signal_weights", self.signal_weights, atoms.size)
        # Sort (solvers bracket with the smallest atom) and merge repeated atoms: an empirical
        # spectrum often has ties, and every integral over H costs one pass over the atoms.
        # Atoms already strictly monotone (a power law) need neither: the sort took 6.7 s
        # of Spectrum.power_law(1, 10**7)'s 7.1 s.
        steps = np.diff(atoms)
        if np.all(steps < 0) or np.all(steps > 0):
            flip = slice(None, None, -1 if atoms.size > 1 and steps[0] < 0 else 1)
            # (+ 0.0: copies, and a weight -0.0 is 0.0 as bincount's sums make it)
            uniq, weights = atoms[flip].copy(), weights[flip] + 0.0
            signal = weights if uniform else signal[flip] + 0.0
        else:
            uniq, inverse = np.unique(atoms, return_inverse=True)
            weights = np.bincount(inverse, weights=weights, minlength=uniq.size)
            signal = weights if uniform else np.bincount(inverse, weights=signal,
                                                         minlength=uniq.size)
        # An atom without mass in H or G is no eigenvalue: the finite-M pFedMe limit beside
        # one at 1e100 of weight 0 gave "NaN in the traces", finite steps "Silverstein's
        # equation: Newton did not confirm the root" (Sigma = I both).
        keep = (weights > 0) | (signal > 0)
        if not keep.all():
            uniq, weights, signal = uniq[keep], weights[keep], signal[keep]
        atoms = uniq
        # Read-only, as the frozen fields: s.atoms[0] = -3 (past the checks, unsorted) gave
        # "route kappa: the limit is not a finite number" (the arrays are the spectrum's own).
        for arr in (atoms, weights, signal):
            arr.flags.writeable = False
        object.__setattr__(self, "atoms", atoms)
        object.__setattr__(self, "weights", weights)
        object.__setattr__(self, "signal_weights", signal)
        object.__setattr__(self, "signal_is_uniform", uniform)

    # --- constructors -------------------------------------------------------------------
    @classmethod
    def identity(cls) -> "Spectrum":
        """Sigma = I: H is the point mass at 1 (the isotropic case of paper 003)."""
        return cls([1.0])

    @classmethod
    def two_point(cls, a: float, b: float, w: float) -> "Spectrum":
        """Mass ``w`` at eigenvalue ``a`` and ``1 - w`` at ``b``."""
        w = float(as_array("two-point weight w", w, low=0.0, high=1.0, ndim=0))  # [0.25]: TypeError
        return cls([a, b], weights=[w, 1.0 - w])

    @classmethod
    def power_law(cls, p: float, d: int) -> "Spectrum":
        """Eigenvalues proportional to j^-p, j = 1..d, scaled to mean 1
        (``ordered.power_law_values``)."""
        return cls.from_eigenvalues(power_law_values(p, d))

    @classmethod
    def from_eigenvalues(cls, eigenvalues) -> "Spectrum":
        """The empirical distribution of the given eigenvalues (each of mass 1/d), eq. (4).

        ``eigenvalues`` must be one number or a 1-d list of them: a matrix is refused (a
        covariance matrix is not its eigenvalues; pass ``numpy.linalg.eigvalsh(C)``).
        """
        # The layer's reading (was np.asarray: [True, 2.0] taken as 1, 2 and Decimals refused).
        s = real("spectrum eigenvalues", eigenvalues)
        if s.ndim > 1:
            raise ValueError(_not_a_list(s))
        return cls(s.ravel())

    @classmethod
    def from_file(cls, path) -> "Spectrum":
        """Eigenvalues from a ``.npy`` file of a 1-d array, or a text file of numbers
        separated by whitespace or commas (``#`` starts a comment, as
        ``numpy.savetxt`` writes a header); a matrix (a 2-d array, or text rows of equal
        length > 1) is refused."""
        if not isinstance(path, (str, bytes, os.PathLike)):     # was a TypeError from os
            raise ValueError(f"path must be a file path (a str or os.PathLike), got "
                             f"{type(path).__name__}")
        s = _read_ordered(os.fsdecode(path))
        try:
            return cls.from_eigenvalues(s)
        except ValueError as exc:
            raise ValueError(f"spectrum file {path!r}: {exc}") from None

    @classmethod
    def parse(cls, text: str, d: int | None = None) -> "Spectrum":
        """Build a spectrum from the command-line SPEC syntax of DESIGN.md.

        ``identity``; ``two-point:A,B,W`` (mass W at A, 1 - W at B); ``powerlaw:P`` or
        ``powerlaw:P,D`` (j^-P over D eigenvalues, mean 1; D defaults to ``d``);
        ``file:PATH`` (``.npy`` or text of eigenvalues); ``scaled:C`` (C times the identity).
        """
        if not isinstance(text, str):   # str() of pathlib.Path("identity") was a SPEC
            raise ValueError("spectrum must be a SPEC string (identity, scaled:C, "
                             "two-point:A,B,W, powerlaw:P[,D], file:PATH), got "
                             f"{type(text).__name__}")
        kind, arg = spec_kind(text)
        if kind == "identity" and not arg:
            return cls.identity()
        if kind == "file" and arg:      # "file: x.txt" named the file " x.txt"
            return cls.from_file(arg)
        nums = _numbers(text, arg)
        if kind == "powerlaw" and len(nums) == 1 and d is None:
            # "or give --d" was also said to the Python calls that take no d
            raise ValueError(f"spectrum {shown(text)}: powerlaw needs the number of eigenvalues; "
                             "write powerlaw:P,D (or give d where the call takes one: "
                             "--d on the command line)")
        make = {("two-point", 3): lambda: cls.two_point(*nums),
                ("scaled", 1): lambda: cls([nums[0]]),
                ("powerlaw", 1): lambda: cls.power_law(nums[0], d),
                ("powerlaw", 2): lambda: cls.power_law(*nums)}.get((kind, len(nums)))
        if make is not None:
            try:
                return make()
            except ValueError as exc:   # "power-law exponent p must lie in [0, inf), got -1.0"
                raise ValueError(f"spectrum {shown(text)}: {exc}") from None   # named no SPEC
        raise ValueError(f"spectrum {shown(text)} is not one of identity, two-point:A,B,W, "
                         "powerlaw:P[,D], file:PATH, scaled:C")

    # --- value semantics ----------------------------------------------------------------
    def __eq__(self, other) -> bool:
        """Equal when both have the same atoms, weights and signal weights, and both or
        neither were given signal weights (routes that need G = H refuse given ones): value
        equality (was identity: ``Spectrum([1, 2]) == Spectrum([1, 2])`` was False)."""
        if not isinstance(other, Spectrum):
            return NotImplemented
        return self is other or (self.signal_is_uniform == other.signal_is_uniform and all(
            np.array_equal(a, b) for a, b in ((self.atoms, other.atoms),
                                             (self.weights, other.weights),
                                             (self.signal_weights, other.signal_weights))))

    def __hash__(self) -> int:
        """A hash consistent with ``__eq__`` (of every atom, weight and signal weight)."""
        return hash((self.signal_is_uniform, self._fingerprint))

    @cached_property
    def _fingerprint(self) -> str:
        """The sha256 of every atom, weight and signal weight, computed once (0.93 s for 10^7
        atoms, spent by every ``record()`` call before)."""
        values = np.concatenate([self.atoms, self.weights, self.signal_weights])
        return hashlib.sha256(values.tobytes()).hexdigest()

    # --- properties ---------------------------------------------------------------------
    @property
    def is_identity(self) -> bool:
        """True when H is the point mass at 1 (Sigma = I)."""
        return self.atoms.size == 1 and self.atoms[0] == 1.0

    @property
    def identity_scale(self) -> float | None:
        """c where Sigma = c I with a uniform signal direction (one atom: equal atoms are merged
        and atoms of weight 0 dropped on construction), else None: the routes that reduce
        Sigma = c I exactly to Sigma = I (finite-M MAML-FL/pFedMe, divergent finite steps, the
        rounds limits) read it here."""
        if self.atoms.size == 1 and self.signal_is_uniform:
            return float(self.atoms[0])
        return None

    @property
    def mean(self) -> float:
        """Mean eigenvalue, tr(Sigma)/d."""
        return float(self.atoms @ self.weights)

    @property
    def signal_mean(self) -> float:
        """The integral of s dG: ||theta||_Sigma^2 / ||theta||^2."""
        return float(self.atoms @ self.signal_weights)

    def eigenvalues(self, d: int) -> np.ndarray:
        """d eigenvalues whose empirical distribution approximates H (its (j - 1/2)/d quantiles).

        Exact when every weight is a multiple of 1/d, as for ``from_eigenvalues`` with d equal
        to the number of eigenvalues given.
        """
        d = positive_int("d", d, maximum=MAX_EIGENVALUES)   # 10^12 asked for 7 TiB
        cdf = np.cumsum(self.weights)
        idx = np.searchsorted(cdf, (np.arange(d) + 0.5) / d, side="right")
        return self.atoms[np.minimum(idx, self.atoms.size - 1)][::-1].copy()

    def describe(self) -> str:
        """A short human-readable label."""
        if self.is_identity:
            return "identity"
        # Signal weights other than the eigenvalues' are named (they were left out: two
        # spectra with different signal directions, and different limits, read the same).
        if self.atoms.size <= 3:
            parts = ", ".join(f"{w:g}@{a:g}" for a, w in zip(self.atoms, self.weights))
            signal = ", ".join(f"{w:g}@{a:g}" for a, w in zip(self.atoms, self.signal_weights))
            return f"discrete[{parts}" + ("" if self.signal_is_uniform
                                          else f"; signal weights {signal}") + "]"
        return (f"discrete[{self.atoms.size} atoms in [{self.atoms[0]:.3g}, "
                f"{self.atoms[-1]:.3g}], mean {self.mean:.4g}" + (
                    "" if self.signal_is_uniform
                    else f", signal weights of mean eigenvalue {self.signal_mean:.4g}") + "]")

    def record(self) -> str:
        """``describe()``, and where it does not give every number exactly (beyond 3 atoms it
        gives their count, range and mean; up to 3, six digits) a fingerprint of every atom,
        weight and signal weight: the label results record in their frames and JSON, the same
        for two spectra only when they are the same (two of 30 atoms with one range and mean,
        or atoms 1 and 1.0000001, read alike)."""
        text = self.describe()
        if self.atoms.size <= 3 and all(float(f"{v:g}") == v for v in np.concatenate(
                [self.atoms, self.weights, self.signal_weights])):
            return text
        return f"{text} sha256:{self._fingerprint[:16]}"


def spec_uses_d(spec) -> bool:
    """Whether a dimension d given beside ``spec`` is used: a ``powerlaw:P`` SPEC (d sizes it)
    or ``file:PATH`` (d checks its count); other SPECs, arrays and Spectrum objects carry their
    own eigenvalues."""
    return isinstance(spec, str) and ":" in spec and spec_kind(spec)[0] in ("powerlaw", "file")


def as_spectrum(value, d: int | None = None):
    """``value`` as a Spectrum: None (Sigma = I) and a Spectrum as given, a SPEC string read by
    ``Spectrum.parse`` (``d`` sizes ``powerlaw:P``). Every API entry taking ``spectrum=`` goes
    through here, so each takes what the others take (``riskcalc.limit`` refused the SPEC
    strings ``clients_limit`` and ``rounds_limit`` read)."""
    if value is None or isinstance(value, Spectrum):
        return value
    if isinstance(value, str):
        kind, arg = spec_kind(value)
        if d is not None and (kind == "file" or (kind == "powerlaw" and "," in arg)):
            # An explicit number of eigenvalues must be d, as in spectra (a file of 4 beside
            # d = 5 was taken silently for a shared spectrum).
            ordered_steps(value, d)
        return Spectrum.parse(value, d=d)
    raise ValueError("spectrum must be a riskcalc.Spectrum or a SPEC string (identity, "
                     "scaled:C, two-point:A,B,W, powerlaw:P[,D], file:PATH), got "
                     f"{type(value).__name__}")


def _distribution(name, w, size):
    if w is None:
        return np.full(size, 1.0 / size)
    w = np.atleast_1d(as_array(name, w, low=0.0, ndim=1))
    if w.size != size:
        raise ValueError(f"{name} has {w.size} entries for {size} eigenvalues")
    total = w.sum()
    if abs(total - 1.0) > 1e-9:
        raise ValueError(f"{name} must sum to 1, got {total:.10g}")
    return w / total


def _not_a_list(s) -> str:
    """The refusal of a matrix where eigenvalues are expected, saying how to pass them."""
    shape = " x ".join(map(str, s.shape))
    square = s.ndim == 2 and s.shape[0] == s.shape[1]
    what = ("a square matrix (a covariance?)" if square else "an array")
    return (f"expected a 1-d list of eigenvalues, got {what} of shape {shape}; save its "
            "eigenvalues instead, e.g. numpy.save(PATH, numpy.linalg.eigvalsh(C)) for a "
            "covariance matrix C")
