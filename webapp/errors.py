"""The product's exceptions, mapped once to HTTP status codes and messages (webapp.web.errors).

Every refusal carries a message an officer can act on; a deadline refusal names the last day.
"""

from __future__ import annotations

from typing import Any

from webapp.i18n import M_

# a lost race: the words every refusal of a transaction that lost to another at the same moment says
CONFLICT_MESSAGE = M_("someone else changed this case at the same moment; nothing of yours was saved. "
                      "Reload the case and try again.")


class Rule130Error(Exception):
    """Base class. ``code`` is the machine-readable error code of the API."""

    code = "error"
    status = 400

    def __init__(self, message: str, **details: object) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class Refused(Rule130Error):
    """The input is well formed but the rule or the form refuses it (HTTP 422)."""

    code = "refused"
    status = 422

    def __init__(self, message: str, field_errors: dict[str, str] | None = None, **details: object) -> None:
        super().__init__(message, **details)
        self.field_errors = field_errors or {}


class DeadlinePassed(Refused):
    """An act after the end of its legal period; the message names the last day."""

    code = "deadline_passed"


class NotFound(Rule130Error):
    """Unknown, or outside the user's scope (HTTP 404): we do not reveal which."""

    code = "not_found"
    status = 404


class NotPermitted(Rule130Error):
    """Within scope, but the user's role may not do this (HTTP 403)."""

    code = "forbidden"
    status = 403


class Conflict(Rule130Error):
    """Someone else changed the case first (HTTP 409); reload and try again."""

    code = "conflict"
    status = 409


class SentTwice(Conflict):
    """The same task form sent again after this officer completed it (a double click, the back
    button): HTTP 409; the first submission stands and this one changed nothing."""


class AlreadySubmitted(Conflict):
    """The same new-case form (or API call with the same ``Idempotency-Key``) was sent before and
    started a case then (HTTP 409 on a page, the case itself in the API); ``case_id`` and
    ``case_number`` name it. Nothing was recorded again."""

    code = "already_submitted"

    def __init__(self, message: str, case_id: int, case_number: str) -> None:
        super().__init__(message, case_id=case_id, case_number=case_number)
        self.case_id, self.case_number = case_id, case_number


class InvalidDiagram(Rule130Error):
    """A process diagram or form that cannot be deployed; ``problems`` lists each problem as a line
    of text, ``found`` the same problems as structured objects (webapp.engine.diagrams.problems.Problem: element
    id, line, message, severity) when the parser made them."""

    code = "invalid_diagram"
    status = 422

    def __init__(self, message: str, problems: list[str] | None = None, found: list[Any] | None = None) -> None:
        super().__init__(message)
        self.problems = problems or [message]
        self.found = list(found or [])
        self.verdict: Any = None  # the parser's Verdict, when the refusal is one (webapp.engine.diagrams.parser)


class EngineFailure(Rule130Error):
    """A diagram element failed while running (handler error, refused script)."""

    code = "engine_failure"
    status = 500


class TaskFailed(EngineFailure):
    """A diagram element of a case failed while the case ran (handler error, refused script, timer
    expression, ledger invariant): the unit of work is rolled back and an incident opened
    (webapp.services.jobs.incidents). ``kind`` names the failure; ``snapshot`` holds the data at it."""

    code = "task_failed"

    def __init__(self, message: str, *, case_id: int, element_id: str | None = None, element_name: str | None = None,
                 kind: str = "handler_error", snapshot: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.case_id, self.element_id, self.element_name = case_id, element_id, element_name
        self.kind, self.snapshot = kind, snapshot or {}


class StartFailed(Refused):
    """A new case whose first steps failed (a diagram element that cannot run): nothing was recorded,
    no case exists (HTTP 422); the message names the element and the error, and an administrator
    must deploy a corrected process version."""

    code = "start_failed"


class CaseHeld(Refused):
    """The case is held by an open incident (HTTP 409): nothing can be done in it until an
    administrator retries or skips the failed step; the message says which step and why."""

    code = "case_held"
    status = 409
