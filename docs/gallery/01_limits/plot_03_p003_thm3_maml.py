"""
MAML-FL risk vs gamma and vs alpha (Thm 3)
==========================================

Figure ``p003-thm3-maml``. Source: Cheng, Chadha & Duchi (2023), Thm 3 (eqs. 11-13).

The caption printed below the figure says what is drawn, with every parameter and the seed.
The full version: ``riskcalc figures p003-thm3-maml --out DIR``.
"""

import figures

out = figures.draw("p003-thm3-maml", quick=True)
print(out.text)
