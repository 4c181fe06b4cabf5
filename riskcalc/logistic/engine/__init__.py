"""The numerical machinery under every logistic fixed point, with or without a spectrum: the
proximal map of the logistic loss (``prox``), the tensor quadrature of the CGMT expectations
(``gaussian``), the warm starts shared along grids (``warm``) and a solve's deadline
(``deadline``). It imports nothing else of the family."""
