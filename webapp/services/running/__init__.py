"""Running a case on the engine: one unit of work per business operation (uow), a case run
(case_run) with its live instances (live), the task table kept in step (task_table), holds on a
failed step (holds), the triggers raised around each run (alerts), what followed in words
(follows) and the acts kept with the case as they found it (acts). Imports diagrams, notify,
money, papers and people."""
