"""The papers' iterative federated algorithms, vectorized over clients and instance grids.

Each algorithm is a plain function ``algo(data, **hyperparameters) -> Trajectory`` where
``data`` is a ``montecarlo.experiments.problems.Instance`` (or a ``montecarlo.experiments.objectives.ClientLosses``);
stochastic ones also take ``seed`` and ``rep`` and draw from ``replicate_rng(seed, rep, 10)``.
A ``Trajectory`` records the local and global iterates at every checkpoint together with
communication rounds and local oracle calls, and names the objective the algorithm minimizes,
so ``montecarlo.experiments.metrics`` can split optimization error (to ``objectives.minimize``) from
statistical error (to the true models).

========================  ==========================================================  =========
name                      source                                                      objective
========================  ==========================================================  =========
``fedavg``                paper 000 Alg. 1, paper 003 Alg. 4                          global
``local``                 PureLocalTraining, paper 000 eq. 3, paper 003 Alg. 3         local
``finetune``              FedAvg + local fine-tuning, paper 000 Sec. 3.3, 003 Alg. 5   local
``fedprox``               paper 000 Alg. 2 (two-stage)                                 fedprox
``fedprox_bilevel``       paper 004 Alg. 1 (Thm 2 / Cor. 1 step sizes)                 fedprox
``pfedme``                Dinh et al. 2020, paper 003 Alg. 8                           fedprox
``l2gd``                  Hanzely & Richtarik 2020 (paper 001 Table 1)                 fedprox
``apgd1``, ``apgd2``      paper 001 Sec. 4.1 (Algs 2-3)                                fedprox
========================  ==========================================================  =========
"""

from montecarlo.experiments.algorithms._core import Trajectory
from montecarlo.experiments.algorithms.fedavg import fedavg, finetune, local_training
from montecarlo.experiments.algorithms.fedprox import bilevel_constants, fedprox, fedprox_bilevel
from montecarlo.experiments.algorithms.mixing import apgd1, apgd2, l2gd
from montecarlo.experiments.algorithms.pfedme import pfedme

ALGORITHMS = {
    "fedavg": fedavg,
    "local": local_training,
    "finetune": finetune,
    "fedprox": fedprox,
    "fedprox_bilevel": fedprox_bilevel,
    "pfedme": pfedme,
    "l2gd": l2gd,
    "apgd1": apgd1,
    "apgd2": apgd2,
}

__all__ = ["ALGORITHMS", "Trajectory", "apgd1", "apgd2", "bilevel_constants", "fedavg",
           "fedprox", "fedprox_bilevel", "finetune", "l2gd", "local_training", "pfedme"]
