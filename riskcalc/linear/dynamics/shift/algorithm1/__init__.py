"""Paper 004's Algorithm 1 with K warm-started local steps under COVARIATE SHIFT (derived
here): the dense pencil with each client's eigenvalue on the joint measure's atoms
(``pencil``), its chain structure for M K^2 beyond the dense route (``chain``) with its time
estimate (``cost``), the curves of the server model and of the clients' own models, each
client's risk in its own covariance (``curves``), and personalization (FTFA, RTFA) from the
round-T server model (``personalize``)."""
