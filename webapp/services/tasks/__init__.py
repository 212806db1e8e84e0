"""Officers' tasks: "My tasks" from the task table (tasklist), one task with its form and
completing it (tasks), who may and how much (rules), what a form's schema says of the data
(form_schema) and why a task is not open yet (why_not_open). Imports running and the packages
below it; tasks and cases call each other (a task completes on its case)."""
