"""FedAvg with K local steps under a shared covariance spectrum (derived here): K = 1 by one scalar
subordination function per contour node (``one_step``; the edges of the round map's spectrum,
``edges``), K >= 2 through the linear pencil (``curves``; the pencil's two-point solve,
``pencil_pairs``), the clients' own models after the K local steps of round T (``own``, the
dense extended pencil; ``own_chain``, its chain structure)."""
