"""The service layer: one module per intent (repository, cases, tasks, timers, ledger, users,
notifications). Web pages, the JSON API, the CLI, the timer worker and the simulator all call
these functions; none of them holds business logic of its own."""
