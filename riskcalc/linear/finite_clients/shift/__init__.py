"""Finite-M limits under COVARIATE SHIFT: each client with its own covariance Sigma_j, all
diagonal in one shared basis (``riskcalc.linear.engine.joint_spectrum``).

Paper 003 (``003_4b976ddf5225c17e.txt``) eqs. 6-8 and Thms 1-2 with the FedAvg global model
over M clients, extended (derived here) to commuting covariances:

* ``limits``: FedAvg, FTFA and RTFA (``shift_group_limits``; the D-valued subordination and its
  derivation in the module docstring), the global point shared with MAML-FL and pFedMe on the
  joint atoms (``global_point``), and the work estimate (``check_work``);
* ``chains``: the targets' resolvent chains, and the weight-independent parts remembered
  between evaluations (``remember``, ``warm_roots``);
* ``pairs``: the (targets x clients) sums in O(M);
* ``gradient``: exact gradients of the mean risk in the client weights (``advise``);
* ``conditioning``: the refusals of limits that lose their digits across a wide eigenvalue
  span.

MAML-FL and pFedMe under covariate shift are ``finite_clients.maml_sigma`` and
``finite_clients.pfedme_sigma`` on the joint atoms.
"""
