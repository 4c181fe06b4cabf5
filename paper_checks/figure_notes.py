"""The written comparison of paper 004's figures, rebuilt from the authors' own setup
(``figures/p004_*.py``), with the paper's text: rendered into REPORT.md by
``paper_checks.report``."""

# Paper 004's figures rebuilt from the authors' setup (figures/p004_*.py): what matches the
# paper's text, what does not, and why. Numbers: full-mode builds (seed 0), last-round ITR
# (mean ||w_k - W_k^T||) unless stated.
P004_FIGURES = [
    ("p004-fig1a (Fig. 1(a))",
     "The orderings the text describes: at R = 0.1 GlobalTrain 5.22 < lam = 0.5 5.36 < 0.1 5.87 "
     "< 0.02 6.97 < LocalTrain 9.47; at R = 3 LocalTrain 11.54 < 0.02 11.73 < 0.1 12.54 < 0.5 "
     "13.26 < GlobalTrain 13.36; LocalTrain varies least over R (x1.36 against x2.56 for "
     "GlobalTrain). 004.fig1a.interpolation holds.",
     "LocalTrain's curve is not the quantity Sec. 3 defines: each client's classes are "
     "separable, so LocalTrain has no minimizer and its error is a distance after 500 x 150 "
     "steps that grows with the horizon (at R = 3, 11.54; with ten times the horizon 14.06, "
     "above every other curve). The pooled data are not separable, so GlobalTrain's and "
     "FedProx's minimizers exist and their curves are within 5% of the minimizers' errors. R "
     "does not change the training data, only rescales the target; every curve sits above an "
     "exact floor set by the random start (5.03 at R = 0.1, 10.52 at R = 3); norms, not "
     "squares.",
     "The curves are distances from one fixed set of iterates to the targets R Z_k: each "
     "crosses over at the R where its iterates' scale best matches the target's, which is "
     "what produces the interpolation picture."),
    ("p004-fig1d (Fig. 1(d))",
     "Larger lam takes more rounds to settle (at R = 0.1, lam = 0.02 is within 1% of its final "
     "ITR after 5 rounds, lam = 0.5 after about 10); at low R lam = 0.5 ends lowest among FedProx "
     "(5.36 vs 6.97), at high R lam = 0.02 (11.73 vs 13.26), as Sec. 6.3 says.",
     "The 'total error' levels include the floor and the horizon effect of Fig. 1(a).",
     "Same runs as Fig. 1(a), per round."),
    ("p004-fig2 (Fig. 2)",
     "More local updates lower the error in early rounds; from 25 to 150 updates the gain after "
     "5 rounds is x1.16 for lam = 0.02 and x1.09 for lam = 0.5 (004.fig2.local-updates holds).",
     "The notebook runs lam = 0.5 only (the figure's comparison of small and large lam is "
     "re-run here with lam = 0.02); after 20 rounds the gains are small for both (x1.02, x1.01).",
     "With persistent client models and 150 local steps the local problems are nearly solved "
     "each round; extra steps matter only early."),
    ("p004-fig3 (Fig. 3)",
     "Nothing to compare to: the published notebooks never run the adaptive rule.",
     "Run anyway (--adapt_mu, start lam = 0.1), the rule picks lam = 0.0213 for every R, "
     "because the training data and hence the estimated heterogeneity do not depend on R; it "
     "then behaves as lam = 0.02 (ITR 6.90 at R = 0.1 vs GlobalTrain 5.22; 11.76 at R = 3 vs "
     "LocalTrain 11.54). 004.fig3.adaptive-lambda is not checkable.",
     "Thm 1's lam needs mu and rho at the clients' local minimizers, which do not exist (each "
     "client's classes are separable; the pooled problem does have a minimizer). On the "
     "linear model (p004-fig3-theory: exact limits after T rounds and at T = inf, through "
     "simulations) the risk-optimal lam is gamma sigma^2 / r^2 = sigma^2 / (n R^2) (the "
     "Gaussian hierarchical posterior), the edge lam <= rho^2 / (n mu R^2) of Thm 1's range "
     "with mu = 1, rho = sigma."),
    ("p004-fig5 (Fig. 5)",
     "1,000 clients, 10% sampled, R = 2: smaller lam lowers the error faster in the first "
     "rounds and, scored at other R (same data), smaller lam overtakes larger lam as R grows "
     "(004.fig5.client-sampling holds).",
     "The paper's panels at several R and with 100 clients come from runs the notebook does "
     "not contain (it runs R = 2, 1,000 clients); the code's sampling is unseeded.",
     "As in Fig. 1, R only changes the target, so one run per lam gives every R."),
]

