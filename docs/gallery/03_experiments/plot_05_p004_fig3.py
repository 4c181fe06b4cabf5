"""
FedProx with the adaptive lam of the authors' code vs GlobalTrain and LocalTrain
================================================================================

Figure ``p004-fig3``. Source: Anonymous (under review), Fig. 3 (App. C.2), Thm 1.

The caption printed below the figure says what is drawn, with every parameter and the seed.
The full version: ``riskcalc figures p004-fig3 --out DIR``.
"""

import figures

out = figures.draw("p004-fig3", quick=True)
print(out.text)
