"""The rounds under a covariance spectrum shared by the clients (derived here). Shared machinery:
the linear pencil (``sigma_pencil``: 1 + M K blocks, solved densely; the edges of its round
map's spectrum, ``pencil_edges``), its chain structure (``sigma_chain``, ``chain_basis``: for
M K^2 > 100; its cost, ``chain_cost``), the work guards (``guards``). Rooms by
algorithm: ``fedavg`` (one local step per round, ``fedavg.one_step``: one scalar subordination
function per contour node; K >= 2, ``fedavg.curves``; the clients' own models after the K local
steps of round T, ``fedavg.own`` and, beyond the dense extended pencil, ``fedavg.own_chain``) and
``algorithm1`` (paper 004's Algorithm 1 with K warm-started local steps: ``algorithm1.curves``,
dense through ``algorithm1.pencil`` or through ``algorithm1.chain``; its complex-spectrum region,
contour machinery, cost and personalization). Algorithm 1 with exact prox: ``prox_sigma`` (the
same pencil with one block per client; the server model and the clients' own models read off
the transposed pencil's two-point blocks (i, i)); personalization (FTFA, RTFA) from the round-T
server model of FedAvg or of exact-prox Algorithm 1: ``personalize_sigma`` (one more chain per
client, downstream of the round map; that extended pencil: ``personal.pencil``). Entry point:
``riskcalc.rounds_limit(..., spectrum=...)``."""
