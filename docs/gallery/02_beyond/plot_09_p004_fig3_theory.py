"""
Paper 004's Figure 3 on the linear model: error against heterogeneity, adaptive lam
===================================================================================

Figure ``p004-fig3-theory``. Source: paper 004's Fig. 3 (App. C.2; Thm 1): with lam chosen
from the heterogeneity, FedProx tracks the better of GlobalTrain and LocalTrain at every R.
Exact limits of the statistical errors (paper 004 Sec. 4) of GlobalTrain (FedAvg), LocalTrain
and paper 004's Algorithm 1 at small, medium, large and the risk-optimal lam, after T rounds of
K local steps and at T = infinity, on paper 003's linear model, through simulated federations.
The risk-optimal lam comes out as gamma sigma^2 / r^2, the form of Thm 1's rule.

The caption printed below the figure says what is drawn, with every parameter and the seed.
The full version: ``riskcalc figures p004-fig3-theory --out DIR``.
"""

import figures

out = figures.draw("p004-fig3-theory", quick=True)
print(out.text)
