"""The service layer, one package per purpose. Web pages, the JSON API, the CLI, the timer worker
and the simulator all call these functions; none of them holds business logic of its own.

From the top down (a package imports only those below it; ``tasks`` and ``cases`` share a level):

- ``panchayats`` — a Panchayat set up: the training Panchayat, the demo data;
- ``jobs``, ``reports``, ``intake`` — the timer worker and other work without an officer; the registers;
  running paper cases brought in at their stage (one, or several from a CSV file);
- ``cases``, ``tasks`` — opening a case, claims, animal events, corrections, migration, search,
  the case page; "My tasks", a task's form, who may and how much;
- ``running`` — the unit of work, a case run on the engine, the task table, the acts;
- ``papers`` — documents as issued, the notice board, PDFs;
- ``money``, ``notify``, ``diagrams`` — the ledger and tariffs; notifications and channels; process
  versions and drafts;
- ``people`` — users, passwords, scope.

The arrows are checked by ``tests/test_layers.py`` (pyproject.toml, ``[tool.importlinter]``)."""
