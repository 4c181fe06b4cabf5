"""The rounds of federated training under COVARIATE SHIFT: each client's covariance Sigma_j, all
diagonal in one shared basis (``riskcalc.linear.engine.joint_spectrum``). FedAvg with one local
step per round (``one_step``), K >= 2 local steps (``curves``; the pencil dense, ``pencil``, or
by its chain structure, ``chain``): the server model; the clients' own models after the local
steps of round T (``own``; beyond M K^2 = 200 on the chain route ``own_chain``) and their FTFA /
RTFA personalization from the server model of round T (``personalize``, ``personalize_chain``);
paper 004's Algorithm 1 under shift: ``algorithm1``."""
