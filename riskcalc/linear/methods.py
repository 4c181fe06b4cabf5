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
"""

from __future__ import annotations

from dataclasses import dataclass


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
    """

    name: str
    title: str
    signal: str
    tuning: str | None
    personalized: bool
    reference: str

    @property
    def ridge(self) -> bool:
        """True when the client's regression carries the penalty ``lam``."""
        return self.tuning == "lam"

    @property
    def parameters(self) -> tuple[str, ...]:
        """Parameters the method takes, besides ``gamma``, ``sigma`` and ``spectrum``."""
        return (self.signal,) + ((self.tuning,) if self.tuning else ())


_P = "003_4b976ddf5225c17e.txt"

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


def get_method(name: str) -> Method:
    """The registered method called ``name``; ValueError listing the valid names otherwise."""
    try:
        return METHODS[name]
    except (KeyError, TypeError):
        raise ValueError(f"method must be one of {', '.join(METHODS)}; got {name!r}") from None
