"""
Effect of local updates on FedProx, the authors' setup
======================================================

Figure ``p004-fig2``. Source: Anonymous (under review), Fig. 2, Sec. 6.3, Cor. 1; ZLHe0/fedprox-bilevel.

The caption printed below the figure says what is drawn, with every parameter and the seed.
The full version: ``riskcalc figures p004-fig2 --out DIR``.
"""

import figures

out = figures.draw("p004-fig2", quick=True)
print(out.text)
