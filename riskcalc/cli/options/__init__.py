"""The readers of the model verbs' options (``predict``, ``compare``, ``sweep``, ``advise``):
``families`` (``--model FAMILY``), ``fedargs`` (``--federation``, ``--clients-file``),
``clients_file`` (a bare ``--clients-file`` list: the other clients) and
``rounds`` (``--rounds T,...``: the risk along federated training; its tables are
``riskcalc.cli.tables.rounds``)."""
