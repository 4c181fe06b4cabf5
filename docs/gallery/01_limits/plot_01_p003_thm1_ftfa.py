"""
FTFA risk vs gamma (Thm 1), theory vs simulation
================================================

Figure ``p003-thm1-ftfa``. Source: Cheng, Chadha & Duchi (2023), Thm 1 (eqs. 5-7).

The caption printed below the figure says what is drawn, with every parameter and the seed.
The full version: ``riskcalc figures p003-thm1-ftfa --out DIR``.
"""

import figures

out = figures.draw("p003-thm1-ftfa", quick=True)
print(out.text)
