"""FedAvg along the communication rounds under a covariance spectrum shared by the clients
(derived here): ``fedavg_sigma`` for one local step per round (one scalar subordination
function per contour node), ``sigma_pencil`` and ``fedavg_sigma_k`` for K >= 2 local steps (a
linear pencil of 1 + M K blocks); ``prox_sigma`` for paper 004's Algorithm 1 with exact prox
(the pencil with one block per client; the server model). Entry point:
``riskcalc.rounds_limit(..., spectrum=...)``."""
