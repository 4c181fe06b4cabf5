"""The linear-model family: exact high-dimensional limits of paper 003's linear model.

Client i observes y = x^T theta_i + noise with x = Sigma^(1/2) z and d / n_i -> gamma_i
(Cheng, Chadha, Duchi, *Federated asymptotics*, ``../shared/papers/003_4b976ddf5225c17e.txt``).
Rooms by setting, each with one public entry, over one engine:

* ``methods`` (the registry), ``model`` (the ``ClientSpec`` shared with the simulations);
* ``limits``: the family's front door, ``limit`` / ``spec_limit`` and ``LimitResult``: the
  oracle (M -> infinity) limits of Thms 1-4 (three routes over the engine) and the dispatch to
  ``finite_clients`` when a number of clients is given; ``tuning``: the optimal ridge;
* ``finite_clients/``: a finite number M of clients in the global model (entry
  ``clients_limit``; one module per setting: ``identity`` Sigma = I, ``sigma`` a shared
  spectrum, ``own`` / ``maml_sigma`` (``maml_pencils``) / ``pfedme_sigma`` MAML-FL and pFedMe
  with their own objectives, ``shift/`` covariate shift);
* ``steps/``: finite personalization gradient steps (entry ``steps.limits.steps_limit``; from the
  exact centre in ``limits``, from the finite-M model in ``finite_clients``);
* ``engine/``: the random-matrix deterministic equivalents the rooms share (it imports no room).
"""
