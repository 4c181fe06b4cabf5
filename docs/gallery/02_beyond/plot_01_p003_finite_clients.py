"""
FTFA and RTFA vs the number of clients: exact finite-M limits
=============================================================

Figure ``p003-finite-clients``. Source: Cheng, Chadha & Duchi (2023), Thms 1-2 (eqs. 6-8); finite M: riskcalc/linear/finite_clients/__init__.py, sigma.py.

The caption printed below the figure says what is drawn, with every parameter and the seed.
The full version: ``riskcalc figures p003-finite-clients --out DIR``.
"""

import figures

out = figures.draw("p003-finite-clients", quick=True)
print(out.text)
