"""
RTFA at lam* vs FTFA, FedAvg and local training (Thm 2, Cor. 3.1)
=================================================================

Figure ``p003-optimal``. Source: Cheng, Chadha & Duchi (2023), Thms 1-2, Cor. 3.1, optimal lambda (Sec. 3).

The caption printed below the figure says what is drawn, with every parameter and the seed.
The full version: ``riskcalc figures p003-optimal --out DIR``.
"""

import figures

out = figures.draw("p003-optimal", quick=True)
print(out.text)
