"""The officers' pages: My tasks and the inbox (officer), the case pages (cases), a task's
form (task_forms), the check step (check), documents, registers, the public board (public),
notification preferences (notify), the training clock (training) and the diagrams (diagrams)."""
