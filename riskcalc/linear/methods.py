"""The method registry: one entry per method, holding what the theory says about it.

Every personalized method of paper 003 (``003_4b976ddf5225c17e.txt``) reduces, for the client
it personalizes, to one of two limits (DESIGN.md, "Methods are a registry"):

* zero personalization (FedAvg, eq. 6): the client uses the global model, which converges to
  the center theta_0; bias ||theta_0 - theta_i||_Sigma^2 -> r^2 int s dG, variance 0
  (Cor. 3.1);
* a ridge(less) regression of the client's own data, shrunk toward a center at distance
  ``r`` (FTFA, RTFA, MAML-FL, pFedMe: toward the global model) or ``rho`` (local baselines:
  toward 0), with penalty ``lam`` (0 for the min-norm interpolants).

``montecarlo`` registers the finite-sample estimator of each entry under the same name.
A method from outside the package joins the registry through ``register_method`` with its own
``limit`` function (and ``montecarlo.register_estimator`` on the simulation side); see
``docs/extending.rst``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from riskcalc._validate import METHOD_ALIASES, canonical_method, flag, one_of
from riskcalc.papers import cite


@dataclass(frozen=True)
class Method:
    """A registered method.

    Attributes
    ----------
    name : str
        Registry key (``fedavg``, ``local``, ``local_ridge``, ``ftfa``, ``rtfa``, ``maml_fl``,
        ``pfedme``).
    title : str
        Human-readable name.
    signal : str
        ``"r"`` (distance ||theta_i - theta_0||) or ``"rho"`` (norm ||theta_i||): the norm of
        what the client must still learn from its own data.
    tuning : str or None
        The tuning parameter the method takes: ``"lam"``, ``"alpha"`` or None.
    personalized : bool
        False for FedAvg (the client keeps the global model).
    reference : str
        Paper file and result the limit comes from.
    limit : callable or None
        None for the built-in methods, whose limits ``riskcalc.limit`` dispatches on the
        attributes above. A registered method supplies ``limit(spec, route) -> (bias,
        variance)``: its limits for a validated ``ClientSpec`` (parameters broadcast together,
        route ``"closed"``, ``"kappa"`` or ``"paper"`` as resolved by ``riskcalc.limit``), as
        arrays of the broadcast shape of the spec's parameters.
    """

    name: str
    title: str
    signal: str
    tuning: str | None
    personalized: bool
    reference: str
    limit: Callable | None = None

    @property
    def ridge(self) -> bool:
        """True when the client's regression is the ridge of paper 003 with penalty ``lam``
        (built-in methods only: a registered method's ``lam`` means what its limit says)."""
        return self.tuning == "lam" and self.limit is None

    @property
    def parameters(self) -> tuple[str, ...]:
        """Parameters the method takes, besides ``gamma``, ``sigma`` and ``spectrum``."""
        return (self.signal,) + ((self.tuning,) if self.tuning else ())


_P = cite("003")

METHODS: dict[str, Method] = {m.name: m for m in (
    Method("fedavg", "FedAvg (zero personalization)", "r", None, False, f"{_P}, eq. 6, Cor. 3.1"),
    Method("local", "local min-norm (zero collaboration)", "rho", None, True,
           f"{_P}, eq. 9, Cor. 3.1"),
    Method("local_ridge", "local ridge (zero collaboration)", "rho", "lam", True,
           f"{_P}, eq. 10, Cor. 3.1"),
    Method("ftfa", "fine-tuned FedAvg", "r", None, True, f"{_P}, eqs. 6-7, Thm 1"),
    Method("rtfa", "ridge-tuned FedAvg", "r", "lam", True, f"{_P}, eqs. 6 and 8, Thm 2"),
    Method("maml_fl", "MAML-FL with fine-tuning", "r", "alpha", True, f"{_P}, eqs. 12-13, Thm 3"),
    Method("pfedme", "pFedMe", "r", "lam", True, f"{_P}, eq. 14, Thm 4"),
)}


BUILTIN = frozenset(METHODS)
SIGNALS = ("r", "rho")
TUNINGS = (None, "lam", "alpha")


def register_method(method: Method) -> Method:
    """Add ``method`` to ``METHODS``, so that ``riskcalc.limit`` and the command line know it.

    Parameters
    ----------
    method : Method
        Its ``name`` must be a new lower-case identifier, ``title`` and ``reference``
        non-empty strings, ``signal`` one of ``SIGNALS``,
        ``tuning`` one of ``TUNINGS`` (the parameters ``ClientSpec`` validates), and ``limit``
        a callable (see ``Method``).

    Returns
    -------
    Method
        ``method``, registered.

    Raises
    ------
    ValueError
        For a name already registered (built-in or not), or a malformed entry.

    Examples
    --------
    >>> def limit(spec, route):          # keep half of FTFA's personalization
    ...     ...
    >>> m = Method("half_ftfa", "FTFA shrunk halfway", "r", None, True, "my notes", limit)
    >>> register_method(m) is m
    True
    >>> unregister_method("half_ftfa")
    """
    if not isinstance(method, Method):
        raise ValueError(f"register_method takes a riskcalc.Method, got {type(method).__name__}")
    name = method.name
    if not (isinstance(name, str) and name.isidentifier() and name == name.lower()):
        raise ValueError(f"method name must be a lower-case identifier, got {name!r}")
    if name in METHODS:
        raise ValueError(f"method {name!r} is already registered "
                         f"({'built-in' if name in BUILTIN else METHODS[name].reference})")
    if name in METHOD_ALIASES:      # was registered, and unreachable: limit() reads the alias
        raise ValueError(f"method name {name!r} is the built-in alias of "
                         f"{METHOD_ALIASES[name]}; choose another name")
    flag("personalized", method.personalized)     # personalized="no" read as True
    # None was printed as "None (name); None" by predict (fuzz40 api F10).
    for attr in ("title", "reference"):
        if not (isinstance(getattr(method, attr), str) and getattr(method, attr).strip()):
            raise ValueError(f"method {name!r}: {attr} must be a non-empty string, got "
                             f"{getattr(method, attr)!r:.40}")
    # one_of: a 1-element array ['r'] passed ``in`` and broke every limit with "unhashable".
    if not one_of(method.signal, SIGNALS):
        raise ValueError(f"signal must be one of {', '.join(SIGNALS)}; got {method.signal!r}")
    if method.tuning is not None and not one_of(method.tuning, TUNINGS[1:]):
        raise ValueError(f"tuning must be one of None, lam, alpha; got {method.tuning!r}")
    if not callable(method.limit):
        raise ValueError(f"method {name!r} needs a callable limit(spec, route)")
    METHODS[name] = method
    return method


def unregister_method(name: str) -> None:
    """Remove a method added by ``register_method`` (the built-in ones stay).

    Parameters
    ----------
    name : str
        The name it was registered under.

    Returns
    -------
    None

    Raises
    ------
    ValueError
        For a built-in method or a name that is not registered.
    """
    # By its entry: the alias fedprox was a KeyError, a list "unhashable type" (fuzz40 api F2).
    info = get_method(name)
    if info.name in BUILTIN:
        raise ValueError(f"method {name!r} is built-in and cannot be unregistered")
    del METHODS[info.name]


def get_method(name: str) -> Method:
    """The registered method called ``name``.

    Parameters
    ----------
    name : str
        A key of ``METHODS`` (built-in: fedavg, local, local_ridge, ftfa, rtfa, maml_fl,
        pfedme; or a registered method).

    Returns
    -------
    Method
        Its registry entry (title, signal and tuning parameters, reference, limit).

    Raises
    ------
    ValueError
        Listing the valid names, for any other ``name``.
    """
    try:
        return METHODS[canonical_method(name)]
    except (KeyError, TypeError):
        raise ValueError(f"method must be one of {', '.join(METHODS)}; got {name!r}") from None
