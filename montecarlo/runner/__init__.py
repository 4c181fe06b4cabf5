"""The task runner of every simulation: seeds (``seeding``), work and memory estimates
(``budget``), parallel, resumable task lists (``tasks``), replicate statistics (``stats``) and
BLAS threads (``threads``). Imports no model: the model rooms import it."""
