"""Minimax rates, upper bounds and complexity bounds of papers 000, 004 and 001.

Pure, vectorized functions (numpy broadcasting); each docstring cites its paper file and
theorem/equation and states what is a constant and what holds "up to constants". Printed
formulas that cannot hold are documented in ``ERRATA`` sections, and corrected forms are the
defaults (the printed ones stay reachable with ``printed=True`` / ``rederived=False``).

- :mod:`riskcalc.minimax.chen`: paper 000 (Chen, Zheng, Long, Su), FedAvg / local training /
  dichotomous-strategy excess risks; :mod:`riskcalc.minimax.chen_lower`: its minimax lower
  bounds; :mod:`riskcalc.minimax.chen_fedprox`: its FedProx excess risks.
- :mod:`riskcalc.minimax.fedprox`: paper 004, FedProx with explicit constants;
  :mod:`riskcalc.minimax.fedprox_bilevel`: the bilevel algorithm's complexities;
  :mod:`riskcalc.minimax.fedprox_table1`: its Table 1.
- :mod:`riskcalc.minimax.hanzely` (lower bounds) and :mod:`riskcalc.minimax.hanzely_upper` (upper
  complexities): paper 001 (Hanzely et al.), communication and local-oracle
  lower bounds and upper complexities.
- :data:`BOUNDS`: name -> :class:`BoundSpec` (function, parameters, description, paper ref).
"""

from riskcalc.minimax.chen import (dichotomy_aer_bound, dichotomy_ier_bound, dichotomy_threshold,
                                   fedavg_aer_bound, fedavg_ier_bound, fedavg_weighted_bounds,
                                   local_aer_weighted, local_ier_bound)
from riskcalc.minimax.chen_fedprox import (fedprox_aer_bound, fedprox_aer_bound_weighted,
                                           fedprox_ier_bound, fedprox_proof_lambda,
                                           fedprox_regime)
from riskcalc.minimax.chen_lower import (excess_lower_bound_aer, excess_lower_bound_ier,
                                         logistic_constants, lower_bound_aer, lower_bound_ier)
from riskcalc.minimax.fedprox import (FedProxConstants, LambdaPrescription, fedprox_constants,
                                      fedprox_global_error_bound, fedprox_lambda,
                                      fedprox_lambda_interval, fedprox_local_error_bound,
                                      local_case2_lambda)
from riskcalc.minimax.fedprox_bilevel import (bilevel_constants, fedprox_complexity,
                                              inner_loop_iterations, outer_rate)
from riskcalc.minimax.fedprox_table1 import table1_rates, table1_regime
from riskcalc.minimax.hanzely import (communication_lower_bound, gradient_oracle_lower_bound,
                                      prox_oracle_lower_bound, summand_oracle_lower_bound,
                                      thm31_distance_lower_bound)
from riskcalc.minimax.hanzely_upper import (al2sgd_complexity, apgd_complexity,
                                            iapgd_agd_complexity, iapgd_katyusha_complexity,
                                            optimal_method)
from riskcalc.minimax.registry import BOUNDS, BoundSpec, evaluate

__all__ = [
    "BOUNDS", "BoundSpec", "FedProxConstants", "LambdaPrescription", "al2sgd_complexity",
    "apgd_complexity", "bilevel_constants", "communication_lower_bound", "dichotomy_aer_bound",
    "dichotomy_ier_bound", "dichotomy_threshold", "evaluate", "excess_lower_bound_aer",
    "excess_lower_bound_ier", "fedavg_aer_bound", "fedavg_ier_bound", "fedavg_weighted_bounds",
    "fedprox_aer_bound", "fedprox_aer_bound_weighted", "fedprox_complexity", "fedprox_constants",
    "fedprox_global_error_bound", "fedprox_ier_bound", "fedprox_lambda", "fedprox_proof_lambda",
    "fedprox_lambda_interval", "fedprox_local_error_bound", "fedprox_regime",
    "gradient_oracle_lower_bound", "iapgd_agd_complexity", "iapgd_katyusha_complexity",
    "inner_loop_iterations", "local_aer_weighted", "local_case2_lambda", "local_ier_bound",
    "logistic_constants", "lower_bound_aer", "lower_bound_ier", "optimal_method", "outer_rate",
    "prox_oracle_lower_bound", "summand_oracle_lower_bound", "table1_rates", "table1_regime",
    "thm31_distance_lower_bound",
]
