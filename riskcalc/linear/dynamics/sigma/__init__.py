"""The rounds under a covariance spectrum shared by the clients (derived here): FedAvg with
one local step per round (``fedavg_sigma``: one scalar subordination function per contour node)
or K >= 2 (``fedavg_sigma_k`` through the linear pencil of ``sigma_pencil``, 1 + M K blocks,
solved densely or, for M K^2 > 100, through its chain structure, ``sigma_chain``),
and paper 004's Algorithm 1 with exact prox (``prox_sigma``: the same pencil with one block per
client; the server model and the clients' own models, read off the transposed pencil's
two-point blocks (i, i)); FedAvg's own models after the K local steps of round T
(``fedavg_own``: the pencil extended by one deterministic row per client); personalization
(FTFA, RTFA) from the round-T server model of either (``personalize_sigma``: one more chain
per client, downstream of the round map); FedAvg's own models beyond the dense extended
pencil in ``fedavg/own_chain``; Algorithm 1 with K warm-started local steps
(``algorithm1_sigma_k``, dense or through ``algorithm1_chain``; its contour machinery and the
personalization after its rounds in ``algorithm1/``). Entry point:
``riskcalc.rounds_limit(..., spectrum=...)``."""
