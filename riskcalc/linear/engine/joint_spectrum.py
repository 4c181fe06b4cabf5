"""The joint spectral measure of a federation whose clients' covariances commute.

Covariate shift (issue 20, DESIGN.md "third round"): client j has covariance Sigma_j, and all
the Sigma_j are diagonal in ONE shared basis, Sigma_j = diag(s_j(1), ..., s_j(d)). Every
limit of ``riskcalc.linear.finite_clients.shift`` depends on the federation only through the
JOINT empirical measure of the coordinates,

    mu = (1/d) sum_k delta_(s_1(k), ..., s_T(k)),

over the T distinct covariances ("types") of the federation: its atoms are the tuples of
eigenvalues the types take on one coordinate, and its weights the fraction of coordinates
with that tuple. Each marginal is that type's spectrum H_t; how the marginals are coupled
(e.g. ``two-point:1,4,0.5`` against ``two-point:4,1,0.5``: anti-aligned, two joint atoms
(1, 4) and (4, 1) of weight 1/2; against ``two-point:1,4,0.5`` itself: aligned, (1, 1) and
(4, 4)) is what the order of a SPEC's expansion fixes (``riskcalc.spectrum.ordered_steps``).

Construction (exact, finitely many atoms): each type is a step function on [0, 1) (coordinate
k of d at (k - 1/2) / d). The joint measure is the common refinement of the types' steps:
its atoms are the intervals between consecutive edges of the union of all edges, each of
weight its length, with the tuple of the types' values there; tuples that repeat are merged.
The number of atoms is at most the total number of steps (two for a two-point spectrum, one
for ``identity`` or ``scaled:C``, D for a power law or a file of D eigenvalues), so power law
against identity is the D-point grid of the power law, and power law against an anti-aligned
two-point spectrum has at most D + 1 atoms. There is no discretization error: the measure of
the step functions is exact, and the d coordinates of a simulated federation realize it up to
the placement of a two-point spectrum's edge W at round(W d) / d, an error O(1/d) in the
weights (``riskcalc.spectrum.ordered_eigenvalues``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from riskcalc._validate import positive_int, real
from riskcalc.spectrum import (MAX_EIGENVALUES, Spectrum, ordered_steps, spec_key, spec_kind,
                               spec_uses_d, step_count)


@dataclass(frozen=True)
class JointSpectrum:
    """The joint measure of a federation's commuting covariances (module docstring).

    Attributes
    ----------
    weights : ndarray (K,)
        Mass of each joint atom (positive, summing to one).
    values : ndarray (T, K)
        The eigenvalue of each type on each joint atom.
    types : ndarray (M,) of int
        The type (row of ``values``) of each client.
    """

    weights: np.ndarray
    values: np.ndarray
    types: np.ndarray

    def marginal(self, t: int) -> Spectrum:
        """Type t's spectrum H_t (uniform signal direction)."""
        return Spectrum(self.values[t], weights=self.weights)

    @property
    def shared(self) -> bool:
        """True when every client has the same covariance (one type)."""
        return self.values.shape[0] == 1


def _key(spec):
    """The memo key of one client's spectrum, its values checked first: a key made by
    ``np.asarray(spec, float)`` read ["1", "4"] and [True, 4] as [1, 4] (silently, when that
    measure was remembered) and raised a TypeError for complex values or a ``Spectrum``."""
    if isinstance(spec, str):
        return spec_key(spec)
    _not_a_spectrum_object(spec)
    return np.asarray(real("the spectrum array", spec), float).tobytes()


def _types(specs):
    """The distinct spectra's keys (a dict, in order of appearance) and each client's type.
    A list of SPEC strings (a federation's clients) is remembered whole: the optimal weights
    call the limits hundreds of times with the same list (1000 clients: ~2 ms a call to key
    them one by one)."""
    whole = tuple(specs) if all(type(s) is str for s in specs) else None
    if whole is not None and whole in _TYPES:
        keys, types = _TYPES[whole]
        return keys, types.copy()
    keys, types = {}, np.empty(len(specs), dtype=int)
    for j, spec in enumerate(specs):
        types[j] = keys.setdefault(_key(spec), len(keys))
    if whole is not None:
        if len(_TYPES) >= _MEASURES_SIZE:
            _TYPES.clear()
        _TYPES[whole] = keys, types.copy()
    return keys, types


def _not_a_spectrum_object(spec) -> None:
    if isinstance(spec, Spectrum):
        raise ValueError("spectra: a client's covariance is a SPEC or its eigenvalues in the "
                         "shared basis order, not a riskcalc.Spectrum (its atoms and weights "
                         "fix no order, so no coupling between clients); give e.g. "
                         "'two-point:A,B,W' or the list of its d eigenvalues")


def joint_spectrum(specs, d: int | None = None) -> JointSpectrum:
    """The joint measure of the covariances ``specs`` (one per client) of a federation.

    Parameters
    ----------
    specs : sequence of (str or array_like)
        Each client's SPEC or ordered eigenvalues (``riskcalc.spectrum.ordered_steps``).
    d : int, optional
        The dimension (the length of ``powerlaw:P``; explicit lengths must equal it).

    Returns
    -------
    JointSpectrum

    Raises
    ------
    ValueError
        For a malformed spectrum, or clients whose spectra list different numbers of
        eigenvalues (one per coordinate of the shared basis: they must agree).
    """
    specs = list(specs)
    if not specs:
        raise ValueError("the federation needs at least one client spectrum")
    d = None if d is None else positive_int("d", d)      # was a TypeError for d = "50"
    keys, types = _types(specs)
    # The measure depends on the distinct spectra only: remembered (every evaluation of the
    # finite-M limits builds it again; the optimal weights make hundreds), but for files,
    # which may change between calls.
    memo = (tuple(keys), d)
    if any(isinstance(k, str) and spec_kind(k)[0] == "file" for k in keys):
        weights, atoms = _measure(_first(specs, keys), d)
        return JointSpectrum(weights, atoms, types)
    if memo not in _MEASURES:
        if len(_MEASURES) >= _MEASURES_SIZE:
            _MEASURES.clear()
        _MEASURES[memo] = _measure(_first(specs, keys), d)
    weights, atoms = _MEASURES[memo]
    return JointSpectrum(weights, atoms, types)



def spectra_joint(spectra, spectrum, gamma, d=None):
    """(spectrum, joint, specs) of a call's ``spectra`` (covariate shift: a SPEC, or one SPEC
    or eigenvalue list per client, or one eigenvalue list shared) beside its ``spectrum`` and
    ``gamma`` (a scalar or one per client): the joint measure of the clients' covariances, or,
    when they are all equal, the shared spectrum (None for the identity) and no joint measure;
    ``specs`` the list of the spectra given. ValueError for both given, an empty or malformed
    ``spectra`` or one whose length is neither 1 nor the clients'."""
    if spectrum is not None:
        raise ValueError("give spectrum (shared by the clients) or spectra (one per "
                         "client), not both")
    for spec in spectra if isinstance(spectra, (list, tuple)) else [spectra]:
        if type(spec) is not str:
            _not_a_spectrum_object(spec)    # was a TypeError (read as one eigenvalue list)
    if not isinstance(spectra, (str, list, tuple, np.ndarray)) or (
            not isinstance(spectra, str) and len(spectra) == 0):
        # was a TypeError (3), KeyError ({}) or IndexError ([]).
        raise ValueError("spectra must be a SPEC, one SPEC (or eigenvalue list) per "
                         f"client, or one eigenvalue list shared, got {spectra!r:.40}")
    # One shared eigenvalue list only when every entry is a number: [True, 'identity', ...]
    # was read as one list and refused as "could not convert string to float: 'identity'".
    single = isinstance(spectra, str) or all(
        np.ndim(s) == 0 and not isinstance(s, str) for s in spectra)
    specs = [spectra] if single else list(spectra)
    m_given = np.size(gamma) if np.ndim(gamma) else len(specs)
    if len(specs) not in (1, m_given):
        raise ValueError(f"spectra lists {len(specs)} client spectra for {m_given} clients")
    joint = joint_spectrum(specs * (m_given if len(specs) == 1 else 1), d)
    if not joint.shared:
        return None, joint, specs
    shared = joint.marginal(0)
    return (None if shared.is_identity else shared), None, specs

#: Joint measures remembered by ``joint_spectrum`` (the distinct spectra and d -> measure);
#: lists of SPEC strings -> their keys and types (``_types``).
_MEASURES = {}
_TYPES = {}
_MEASURES_SIZE = 32


#: Most values (types x joint steps) of a joint measure: as many as one spectrum may hold
#: (``riskcalc.spectrum.MAX_EIGENVALUES``). The finite-M solves work on (types x atoms) arrays:
#: a federation file of 219 bytes, ``powerlaw:1`` against ``identity`` at d = 10^7 (2 x 10^7
#: values), took 32 s and 1.8 GB in ``predict ftfa``, three power laws 47 s and 2.6 GB; 6 types
#: x 10^6 took 13 s and 0.44 GB.
MAX_JOINT_VALUES = MAX_EIGENVALUES


def check_size(types: int, steps: int) -> None:
    """ValueError, saying what fits, when ``types`` distinct spectra on ``steps`` joint steps
    exceed ``MAX_JOINT_VALUES`` (before the (types x steps) array is built)."""
    if types * steps > MAX_JOINT_VALUES:
        raise ValueError(
            f"the clients' {types} distinct spectra on {steps} eigenvalue steps make a joint "
            f"measure of {types * steps:.3g} values, more than {MAX_JOINT_VALUES:g} (the "
            "solve's memory and time grow with it: 2e7 values took 32 s and 1.8 GB); what "
            f"fits: at most {max(1, MAX_JOINT_VALUES // steps)} distinct spectra of this "
            f"size, or spectra of at most {MAX_JOINT_VALUES // types} eigenvalues each "
            "(a smaller d, or powerlaw:P,D with a smaller D)")


def _measure(distinct, d):
    """(weights, values) of the joint measure of the ``distinct`` spectra, in type order."""
    # Bounded before any spectrum is expanded (each power law's steps cost 0.5 s and 8 bytes a
    # million), then before the (types x steps) array.
    sizes = [n for n in (step_count(spec, d) for spec in distinct) if n is not None]
    check_size(len(distinct), max(sizes, default=1))
    steps = [ordered_steps(spec, d) for spec in distinct]
    explicit = {v.size for spec, (_, v) in zip(distinct, steps)
                if not isinstance(spec, str) or spec_kind(spec)[0] in ("file", "powerlaw")}
    if len(explicit) > 1:
        raise ValueError("the clients' spectra list different numbers of eigenvalues "
                         f"({', '.join(str(n) for n in sorted(explicit))}): every client's "
                         "covariance has one eigenvalue per coordinate of the shared basis")
    edges = np.unique(np.concatenate([e for e, _ in steps]))
    check_size(len(distinct), edges.size - 1)
    mid, width = 0.5 * (edges[:-1] + edges[1:]), np.diff(edges)
    values = np.array([v[np.searchsorted(e, mid, side="right") - 1] for e, v in steps])
    atoms, inverse = np.unique(values, axis=1, return_inverse=True)
    weights = np.bincount(inverse.ravel(), weights=width, minlength=atoms.shape[1])
    weights, atoms = weights / weights.sum(), atoms
    weights.flags.writeable = atoms.flags.writeable = False   # shared between calls
    return weights, atoms


def _first(specs, keys):
    """The first spec of each type, in type order."""
    first = {}
    for spec in specs:
        first.setdefault(keys[_key(spec)], spec)
    return [first[t] for t in range(len(first))]


def uses_d(spectrum, spectra) -> bool:
    """Whether the d of ``rounds_limit`` and ``clients_limit`` is used: a ``powerlaw:P`` (d
    sizes it) or ``file:PATH`` (d checks its count) in ``spectra`` or, without them, in
    ``spectrum`` (as ``riskcalc.federation_file.FederationFile.uses_d``)."""
    given = ([spectrum] if spectra is None else [spectra] if isinstance(spectra, str)
             else list(spectra))
    return any(spec_uses_d(x) for x in given)


def d_if_used(d, spectra) -> dict:
    """The keyword ``{"d": d}`` to pass beside ``spectra`` where one of them uses it
    (``uses_d``), else none: ``clients_limit`` and ``rounds_limit`` refuse a d nothing uses."""
    return {"d": d} if d is not None and uses_d(None, spectra) else {}


def check_d_used(d, spectrum, spectra) -> None:
    """ValueError when a dimension ``d`` is given that nothing uses (``uses_d``): the limits
    of ``rounds_limit`` and ``clients_limit`` do not depend on it, so it was taken and
    dropped (fuzz passes 12 and 16)."""
    if d is not None and not uses_d(spectrum, spectra):
        raise ValueError(f"d = {d!r}: d applies to powerlaw:P in spectra (covariate shift) "
                         "or spectrum, and to file:PATH there (it sizes or checks their "
                         "eigenvalues), only: nothing here uses it; leave it out")
