"""
Total error vs communication rounds, the authors' setup
=======================================================

Figure ``p004-fig1d``. Source: Anonymous (under review), Fig. 1(d), Sec. 6.3, App. C; ZLHe0/fedprox-bilevel.

The caption printed below the figure says what is drawn, with every parameter and the seed.
The full version: ``riskcalc figures p004-fig1d --out DIR``.
"""

import figures

out = figures.draw("p004-fig1d", quick=True)
print(out.text)
