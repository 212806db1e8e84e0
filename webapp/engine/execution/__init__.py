"""Running instances on SpiffWorkflow: start, resume, complete, fire timers (runtime) and the stored
state with the clock its timers read (state). Over :mod:`webapp.engine.diagrams`, whose parsed
processes it runs."""
