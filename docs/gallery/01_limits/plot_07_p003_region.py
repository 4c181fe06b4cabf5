"""
Region where FTFA beats FedAvg (Thm 1, Cor. 3.1)
================================================

Figure ``p003-region``. Source: Cheng, Chadha & Duchi (2023), Thm 1 and Cor. 3.1 (Sec. 3).

The caption printed below the figure says what is drawn, with every parameter and the seed.
The full version: ``riskcalc figures p003-region --out DIR``.
"""

import figures

out = figures.draw("p003-region", quick=True)
print(out.text)
