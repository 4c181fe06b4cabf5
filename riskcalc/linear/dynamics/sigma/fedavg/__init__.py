"""FedAvg with K local steps under a shared covariance spectrum: the pieces beyond
``sigma.fedavg_sigma_k`` (the clients' own models through the chain structure, ``own_chain``)."""
