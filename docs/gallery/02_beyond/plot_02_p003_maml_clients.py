"""
MAML-FL approaching FTFA as the number of clients grows (Thm 3)
===============================================================

Figure ``p003-maml-clients``. Source: Cheng, Chadha & Duchi (2023), Thms 1 and 3 (eqs. 6-7, 11-13).

The caption printed below the figure says what is drawn, with every parameter and the seed.
The full version: ``riskcalc figures p003-maml-clients --out DIR``.
"""

import figures

out = figures.draw("p003-maml-clients", quick=True)
print(out.text)
