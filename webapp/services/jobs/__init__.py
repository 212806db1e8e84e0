"""Work that runs without an officer: the timer worker (timers), the "deadline near" notices
(reminders), the delivery loop (delivery_worker), held steps (incidents) and what administrators
see of the workers (monitoring). Imports cases and the packages below it."""
