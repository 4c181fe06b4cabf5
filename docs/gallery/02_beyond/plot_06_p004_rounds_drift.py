"""
Client drift: FedAvg's risk along the rounds for K = 1, 5, 50 local steps
=========================================================================

Figure ``p004-rounds-drift``. Source: the rounds-versus-local-computation trade-off of paper
004 (Sec. 5 after Thm 2, Cor. 1), for FedAvg on paper 003's linear model; derived here
(``riskcalc.rounds_limit``).

The caption printed below the figure says what is drawn, with every parameter and the seed.
The full version: ``riskcalc figures p004-rounds-drift --out DIR``.
"""

import figures

out = figures.draw("p004-rounds-drift", quick=True)
print(out.text)
