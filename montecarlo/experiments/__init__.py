"""The papers' own federated experiments: problem instances (``problems``), objectives and exact
minimizers (``objectives``), per-checkpoint metrics (``metrics``), the algorithms the papers run
(``algorithms``), named presets (``presets``) and their runs (``presets_run``), paper 004's
synthetic experiment (``paper004``) and the minimax-rate simulations (``rates``,
``rates_instances``, ``rates_rounds``)."""
