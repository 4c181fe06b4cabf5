"""The rounds of federated training under COVARIATE SHIFT: each client's covariance Sigma_j, all
diagonal in one shared basis (``riskcalc.linear.engine.joint_spectrum``). FedAvg with one local
step per round (``one_step``), K >= 2 local steps (``curves``; the pencil dense, ``pencil``, or
by its chain structure, ``chain``): the server model; the clients' own models after the local
steps of round T (``own``, any K with M K^2 <= 200) and their FTFA / RTFA personalization from
the server model of round T (``personalize``); Algorithm 1 under shift is not covered."""
