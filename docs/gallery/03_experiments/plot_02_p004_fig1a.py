"""
Statistical error vs heterogeneity R, the authors' setup (GlobalTrain, LocalTrain, FedProx as run and as described)
===================================================================================================================

Figure ``p004-fig1a``. Source: Anonymous (under review), Fig. 1(a), Sec. 6.2, App. C; ZLHe0/fedprox-bilevel.

The caption printed below the figure says what is drawn, with every parameter and the seed.
The full version: ``riskcalc figures p004-fig1a --out DIR``.
"""

import figures

out = figures.draw("p004-fig1a", quick=True)
print(out.text)
