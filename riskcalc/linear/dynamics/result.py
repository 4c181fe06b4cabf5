"""``RoundsLimit``: the result of ``rounds_limit`` (``riskcalc.linear.dynamics.api``), with the
own models and personalizations after round T computed on first access (DESIGN.md, "Contracts
added in the fourth round")."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from riskcalc import _frames
from riskcalc.errors import SolverError
from riskcalc.linear.dynamics.inputs import weight_vector
from riskcalc.linear.dynamics.sigma.budget import budgets


@contextmanager
def beyond_floats():
    """An OverflowError of the curves' arithmetic (Algorithm 1 at global_step 1e100: a contour
    of infinitely many nodes) as the SolverError that names what to lower, not a traceback."""
    try:
        yield
    except OverflowError as exc:
        raise SolverError(f"rounds limit: {exc} (the round map's spectrum is beyond floating "
                          "point reach; lower global_step or step_size)") from None


class Again:
    """A lazy part (``name``: ``_local`` or ``_personal``) of an unpickled ``RoundsLimit``:
    its call (``rounds_limit``, method, keyword arguments) solved again on first use, then
    that result's part."""

    def __init__(self, call, name: str):
        self.call, self.name, self.part = call, name, None

    def solved(self):
        if self.part is None:
            solve, method, kwargs = self.call
            self.part = getattr(solve(method, **kwargs), self.name)
        return self.part

    def __call__(self, *args, **kwargs):
        return self.solved()(*args, **kwargs)

    @property
    def tops(self):
        """Covariate shift's tops of the clients' sample spectra (``shift.curves``)."""
        return self.solved().tops


@dataclass(frozen=True)
class RoundsLimit:
    """Limits along the rounds (``rounds_limit``); arrays of shape (M, len(rounds)).

    Attributes
    ----------
    method : str
    params : dict
    rounds : ndarray (R,)
        The rounds in the order given (inf for the fixed point).
    bias, variance, risk : ndarray (M, R)
        FedAvg: client j's risk E||w_T - theta_j||^2 of the server model after T rounds and
        its parts; Algorithm 1 (``pfedme``): of client j's own model after its T-th local
        phase (DESIGN.md, fourth round).
    local_risk : ndarray (M, R)
        Client j's risk of its own model after the local phase of round T (a property,
        computed on first access; for Algorithm 1 the same as ``risk``).
    global_risk : ndarray (M, R)
        The server model's risk for each client: for FedAvg the same as ``risk``.
    distance_to_fixed_point : ndarray (R,)
        The limit of ||w_T - w_inf||^2 of the server model (paper 004, Cor. 1's epsilon);
        w_inf = D^+ c is the fixed point of the round map (it exists even when the iteration
        diverges).
    contraction : float
        max abs(1 - g x) over the nonzero spectrum of the round map's matrix D (g: FedAvg's
        global step; Algorithm 1's gamma lam): the exact limit of the spectral radius of the
        (symmetric) round map on its range; Algorithm 1 with an odd K above 1 / (L + lam):
        an upper bound where ``diagnostics["contraction_is_bound"]`` is True.
    converges : bool
        contraction < 1 (FedAvg: also where 1 - g a, below 1, rounds to 1: global_step * a
        below about 1e-16).
    diagnostics : dict
        The spectrum's edges and atom at 0, the contour nodes, the scalar solves, and
        ``memory_estimate`` (bytes: the estimated peak memory) where the route estimates it
        (under a spectrum: FedAvg with K >= 2, Algorithm 1).
    notes : tuple of str
        Where the limits are other than the parameters suggest (as ``ClientsLimit.notes``):
        local steps solved as the exact local solve they equal to rounding, pooled samples
        that do not span R^d (``rounds_limit``'s ``notes``).
    """

    method: str
    params: dict
    rounds: np.ndarray
    bias: np.ndarray
    variance: np.ndarray
    risk: np.ndarray
    global_risk: np.ndarray
    distance_to_fixed_point: np.ndarray
    contraction: float
    converges: bool
    diagnostics: dict = field(default_factory=dict, compare=False)
    _local: object = field(default=None, compare=False, repr=False)
    _personal: object = field(default=None, compare=False, repr=False)
    _cache: dict = field(default_factory=dict, compare=False, repr=False)
    _budget: tuple = field(default=(None, None), compare=False, repr=False)
    _call: tuple = field(default=None, compare=False, repr=False)
    notes: tuple = field(default=())
    __eq__ = _frames.equal    # arrays by value (riskcalc._frames.equal)

    def __getstate__(self):
        """The state pickled (a result sent between processes: joblib, dask): the lazy parts
        (closures over the solved curves) become ``Again``, which solves the same
        ``rounds_limit`` call again on first use after unpickling (the same values: the
        routes are deterministic); what was already computed is sent as it is."""
        state = dict(self.__dict__)
        for name in ("_local", "_personal"):
            if state[name] is not None:
                state[name] = Again(self._call, name)
        # The joint route's curves (closures): solved again if asked.
        state["_cache"] = {k: v for k, v in self._cache.items() if k != "joint curves"}
        return state

    @property
    def local_risk(self) -> np.ndarray:
        """(M, R): client j's risk E||v_j - theta_j||^2 of its OWN model after its K local
        steps of round T (started from the server model w_{T-1}; T = 0: the zero model;
        T = inf: from the fixed point). Computed on first access (a double contour,
        ``riskcalc.linear.dynamics.local_models``; with a spectrum
        ``riskcalc.linear.dynamics.sigma.fedavg.own``; under covariate shift
        ``riskcalc.linear.dynamics.shift.own``, ``shift.own_chain`` beyond M K^2 = 200), then
        cached."""
        if "local" not in self._cache:
            with budgets(*self._budget):
                bias, variance = self._local()
            self._cache["local"] = bias + variance
        return self._cache["local"]

    def to_frame(self):
        """A pandas DataFrame with one row per client and round (``riskcalc._frames.frame``;
        client-major, the rounds in the order given, inf for the fixed point): the method,
        ``client`` (0..M-1), ``rounds``, the client's gamma, r, sigma (and weight, and
        covariance under covariate shift), the shared parameters, bias, variance, risk,
        global_risk, the round's ``distance_to_fixed_point``, ``contraction`` (an upper bound
        where ``contraction_is_bound``, as the JSON rows say) and ``converges``.
        An overflowed value is inf, as in the arrays. ``local_risk`` and ``personalized_risk``
        are computed on demand and are not columns: add them as
        ``frame["local_risk"] = res.local_risk.ravel()``.

        Needs pandas (``pip install 'fedrisk[frames]'``); ImportError saying so otherwise.
        """
        shape = self.risk.shape
        cols = {"method": self.method, "client": np.arange(shape[0])[:, None],
                "rounds": self.rounds}
        for k, v in self.params.items():
            if k == "spectrum":     # the shared spectrum's atoms and weights, as a label
                from riskcalc.spectrum import Spectrum

                v = Spectrum(v["atoms"], weights=v["weights"]).record()
            elif k == "spectra":    # each client's SPEC or its number of eigenvalues, as in
                k = "spectrum"      # ClientsLimit.to_frame
                v = [s if isinstance(s, str) else f"{len(s)} eigenvalues" for s in v]
            # Per-client lists (gamma, r, sigma, weights, spectra) as a column of clients.
            cols[k] = np.asarray(v)[:, None] if isinstance(v, (list, tuple)) else v
        cols.update({k: getattr(self, k) for k in ("bias", "variance", "risk", "global_risk",
                                                   "distance_to_fixed_point")})
        cols.update(contraction=float(self.contraction),
                    contraction_is_bound=bool(self.diagnostics.get("contraction_is_bound")),
                    converges=bool(self.converges))
        return _frames.frame(cols, shape)

    def as_dict(self, *, local: bool = False) -> dict:
        """Plain JSON values, strict (inf and NaN become None): the content of ``riskcalc
        predict METHOD --rounds ... --json`` for every client. ``rounds`` (None for the fixed
        point); ``bias``, ``variance``, ``risk``, ``global_risk`` as (M, R) nested lists (the
        command line's row for round index t holds client 0's ``[0][t]``, and its
        ``clients_risk`` every client's ``[j][t]`` of ``risk``); ``distance_to_fixed_point``
        (R,); ``diagnostics``: ``contraction``, ``converges`` and ``contraction_is_bound`` where
        True; ``notes`` (a list of str). With ``local`` also ``local_risk`` (M, R), computed on
        first access as the property is; ``personalized_risk`` is asked by its method."""
        keys = ("bias", "variance", "risk", "global_risk", "distance_to_fixed_point")
        out = {"method": self.method, "params": _frames.json_numbers(self.params),
               "rounds": [None if np.isinf(T) else int(T) for T in self.rounds],
               **{k: _frames.json_numbers(getattr(self, k)) for k in keys},
               "diagnostics": {"contraction": _frames.json_numbers(self.contraction),
                               "converges": bool(self.converges)}}
        if self.diagnostics.get("contraction_is_bound"):    # Algorithm 1, odd K, large eta
            out["diagnostics"]["contraction_is_bound"] = True
        out["notes"] = list(self.notes)
        if local:
            out["local_risk"] = _frames.json_numbers(self.local_risk)
        return out

    def personalized_risk(self, *, steps=None, step_size=None, lam=None) -> np.ndarray:
        """(M, R): client j's risk after personalizing the server model of round T (T = 0:
        the zero model; inf: the fixed point) by FTFA, ``steps`` full-batch gradient steps of
        size ``step_size`` on its own loss, or by RTFA, the ridge ``lam`` toward the server
        model. Exact limit, derived in ``riskcalc.linear.dynamics.personalize`` (paper 003,
        ``003_4b976ddf5225c17e.txt``, Sec. 7 Alg. 5 and Sec. 3.2, from the round-T model);
        under covariate shift ``riskcalc.linear.dynamics.shift.personalize`` (``shift.
        personalize_chain`` beyond M (K + k)^2 = 200; local_steps = inf: ``shift.kinf``);
        with a shared spectrum in ``riskcalc.linear.dynamics.sigma.personalize_sigma`` (an
        extended pencil, about 2-4 times the cost of ``local_risk``; FedAvg's exact local solves
        extend the transpose of ``sigma.fedavg.exact``'s pencil; Algorithm 1 with finite
        local_steps: ``riskcalc.linear.dynamics.sigma.algorithm1.personalize``; beyond M (K +
        k)^2 = 200 covariate shift's chain route with one covariance type; under
        covariate shift, Algorithm 1: ``riskcalc.linear.dynamics.shift.algorithm1.personalize``
        (finite local_steps), ``riskcalc.linear.dynamics.shift.algorithm1.prox`` (exact prox)).

        FTFA with a divergent step (step_size (1 + sqrt(gamma_j))^2 >= 2) is a result, as for
        ``riskcalc.steps_limit``: the risk grows with ``steps``, inf (JSON null) for a client
        whose growth (1 - step_size s)^(2 steps) passes 1e250
        (``riskcalc.linear.dynamics.personalize.ftfa_stability`` says which clients converge).

        Raises
        ------
        ValueError
            Neither or both of FTFA's (steps, step_size) and RTFA's lam, or a bad value.
        """
        from riskcalc.linear.dynamics.personalize import (filter_terms, ftfa_stability,
                                                          overflowed, personalization_filter)

        pi, key = personalization_filter(steps, step_size, lam)
        spec = self.params.get("spectrum")
        shift = "spectra" in self.params      # covariate shift: the curves' ``personalize``
        over = np.zeros(self.risk.shape[0], bool)
        if key["personalization"] == "ftfa":
            gam, top = np.asarray(self.params["gamma"], float), None
            if spec is not None:    # the top of each client's sample spectrum under H
                from riskcalc.linear.dynamics.sigma.sigma_pencil import stable_top

                top = stable_top(spec["atoms"], spec["weights"], gam)
            elif shift:             # under its own covariance (the curves' ``personalize``)
                top = self._personal.tops
            over = ftfa_stability(gam, key["steps"], key["step_size"], top=top)[1]
            if spec is None and not shift and over.any() and not over.all():
                # Each client's terms read pi on its own spectrum only (Gauss-Chebyshev nodes
                # inside it): capped at the others' largest top, the filter is unchanged for
                # them and finite for the clients set to inf below.
                cap = float(np.max((1.0 + np.sqrt(gam[~over])) ** 2))
                pi = (lambda f: lambda s: f(np.minimum(s, cap)))(pi)
        name = tuple(sorted(key.items()))
        if name not in self._cache:
            if over.all():
                risk = np.zeros(self.risk.shape)
            elif spec is None and not shift and self._personal is None:    # (fuzz41 path F8)
                bias, variance = self._local(filter_terms(pi))
                risk = bias + variance
            else:       # a spectrum: riskcalc.linear.dynamics.sigma.personalize_sigma (shared),
                        # riskcalc.linear.dynamics.shift.personalize (covariate shift)
                with budgets(*self._budget):
                    bias, variance = self._personalized_sigma(key)
                risk = bias + variance
            p = self.params
            self._cache[name] = overflowed(risk, over, self.rounds, p["signal"], p["r"],
                                           p["sigma"])
        return self._cache[name]

    def _personalized_joint(self, kw, spectrum):
        """(bias, variance) of ``personalized_risk`` (FedAvg; Algorithm 1 with finite K) under a
        shared spectrum beyond the extended pencil's M (K + k_b)^2 = 200 unknowns, which
        ``personalize_sigma`` and ``sigma.algorithm1.personalize`` refuse: covariate shift's
        route (``shift.curves`` / ``shift.algorithm1.curves`` and their chain personalizations)
        with every client of the one covariance type, where its pencils are the shared
        spectrum's (``tests/test_rounds_sigma_personal_joint.py`` checks it against the shared
        routes below the threshold). The curves are solved again on that route's contour."""
        from riskcalc.linear.dynamics.personalize import ftfa_stability
        from riskcalc.linear.dynamics.shift.algorithm1.curves import shift_alg1_curves
        from riskcalc.linear.dynamics.shift.curves import shift_k_curves
        from riskcalc.linear.dynamics.sigma.sigma_pencil import stable_top
        from riskcalc.linear.engine.joint_spectrum import JointSpectrum

        par = self.params
        gam, rr, sig = (np.asarray(par[k], float) for k in ("gamma", "r", "sigma"))
        joint = JointSpectrum(spectrum.weights, spectrum.atoms[None, :],
                              np.zeros(gam.size, int))
        p, K = weight_vector(par["weights"], gam), int(par["local_steps"])
        if self.method != "fedavg" and kw["personalization"] == "ftfa" and not np.all(
                ftfa_stability(gam, kw["steps"], kw["step_size"],
                               top=stable_top(spectrum.atoms, spectrum.weights, gam))[0]):
            raise ValueError("step_size: FTFA's steps diverge on a client (step_size times the "
                             "top of its sample spectrum >= 2); after Algorithm 1's rounds "
                             "beyond M (K + k)^2 = 200 unknowns only convergent steps are "
                             "covered: give step_size < 2 / top, or fewer steps")
        if "joint curves" not in self._cache:     # solved once for every personalization asked
            self._cache["joint curves"] = (
                shift_k_curves(gam, rr, sig, p, par["signal"], par["step_size"], K,
                               par["global_step"], self.rounds, joint)
                if self.method == "fedavg" else
                shift_alg1_curves(gam, rr, sig, p, par["signal"], par["lam"], par["step_size"],
                                  K, par["global_step"], self.rounds, joint))
        out = self._cache["joint curves"]
        with beyond_floats():
            return out["personalize"](kind=kw["personalization"], k=kw.get("steps"),
                                      eta2=kw.get("step_size"), lam2=kw.get("lam"))

    def _personalized_sigma(self, kw):
        """(bias, variance) of ``personalized_risk`` under the shared spectrum of ``params``
        (``kw``: ``personalization_filter``'s description)."""
        from riskcalc.linear.dynamics.sigma.personalize_sigma import (MAX_UNKNOWNS,
                                                                      personalized_sigma,
                                                                      rtfa_floor)
        from riskcalc.linear.dynamics.sigma.guards import unit_top
        from riskcalc.spectrum import Spectrum

        par = self.params
        spec = par.get("spectrum")
        kb = kw["steps"] if kw["personalization"] == "ftfa" else 1
        if (spec is not None and np.isfinite(par["local_steps"])
                and len(par["gamma"]) * (par["local_steps"] + kb) ** 2 > MAX_UNKNOWNS):
            return self._personalized_joint(
                kw, Spectrum(spec["atoms"], weights=spec["weights"]))
        if self._personal is not None:      # the curves' own route (Algorithm 1, finite K; shift)
            with beyond_floats():
                return self._personal(kind=kw["personalization"], k=kw.get("steps"),
                                      eta2=kw.get("step_size"), lam2=kw.get("lam"))
        gam, rr, sig = (np.asarray(par[k], float) for k in ("gamma", "r", "sigma"))
        spectrum = Spectrum(spec["atoms"], weights=spec["weights"])
        eta2, lam2 = kw.get("step_size"), kw.get("lam")
        if kw["personalization"] == "rtfa":       # its floor named in the given units
            rtfa_floor(gam, spectrum, lam2)
        # At the spectrum's top atom 1 (``guards.unit_top``; scale 1e-10 was a SolverError).
        u = unit_top(spectrum, rr, par["signal"], par["step_size"], par.get("lam"),
                     par["global_step"])[0]
        with beyond_floats():
            return personalized_sigma(
                self.method, gam, u["r"], sig, weight_vector(par["weights"], gam), u["signal"],
                self.rounds, u["spectrum"], local_steps=par["local_steps"],
                step_size=u["eta"], lam=u.get("lam"), g=u.get("g", par["global_step"]),
                kind=kw["personalization"], k=kw.get("steps"),
                eta2=None if eta2 is None else eta2 * u["c"],
                lam2=None if lam2 is None else lam2 / u["c"],
                spectrum_edges=(*self.diagnostics["edges"], self.diagnostics["atom_at_zero"]))
