"""
FedProx with many clients and 10% client sampling, the authors' setup
=====================================================================

Figure ``p004-fig5``. Source: Anonymous (under review), Fig. 5 (App. C), Thm 2; ZLHe0/fedprox-bilevel.

The caption printed below the figure says what is drawn, with every parameter and the seed.
The full version: ``riskcalc figures p004-fig5 --out DIR``.
"""

import figures

out = figures.draw("p004-fig5", quick=True)
print(out.text)
