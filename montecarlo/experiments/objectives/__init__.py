"""The federated objectives of the papers (paper 000 eqs. 2, 3, 20; paper 004 eq. 1; paper 001
eq. 2): their losses, gradients and Hessians (``losses``) and their exact minimizers by damped
Newton (``minimizers``), re-exported here under their names of one module."""

from montecarlo.experiments.objectives.losses import (LOSSES, OBJECTIVES, ClientLosses,
                                                      objective_value)
from montecarlo.experiments.objectives.minimizers import minimize, prox

__all__ = ["LOSSES", "OBJECTIVES", "ClientLosses", "objective_value", "minimize", "prox"]
