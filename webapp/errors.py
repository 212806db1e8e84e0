"""The product's exceptions, mapped once to HTTP status codes and messages (webapp.web.errors).

Every refusal carries a message an officer can act on; a deadline refusal names the last day.
"""

from __future__ import annotations


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


class InvalidDiagram(Rule130Error):
    """A process diagram or form that cannot be deployed; ``problems`` lists each problem."""

    code = "invalid_diagram"
    status = 422

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.problems = problems or [message]


class EngineFailure(Rule130Error):
    """A diagram element failed while running (handler error, refused script)."""

    code = "engine_failure"
    status = 500
