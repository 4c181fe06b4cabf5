"""The linear-model family: exact high-dimensional limits of paper 003's linear model.

Client i observes y = x^T theta_i + noise with x = Sigma^(1/2) z and d / n_i -> gamma_i
(Cheng, Chadha, Duchi, *Federated asymptotics*, ``../shared/papers/003_4b976ddf5225c17e.txt``).
The modules: three routes to the limits (``marchenko_pastur`` closed forms, the effective
ridge ``kappa``, the paper's Stieltjes forms ``stieltjes``), the method registry
(``methods``), the client specification shared with the simulations (``model``), the limits
and tuning (``limits``, ``tuning``), and finite personalization steps (``finite_steps`` with
``weighted_mp``), a finite number of clients in the global model (``finite_clients``), and
steps from that finite-M model (``finite_clients_steps`` with the pencil engine
``resolvent_pencil``).
"""
