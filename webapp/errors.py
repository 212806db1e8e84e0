"""The product's exceptions, mapped once to HTTP status codes and messages (webapp.web.errors).

Every refusal carries a message an officer can act on; a deadline refusal names the last day.
Every refusal also says what can still be done, and by whom: its ``then`` (a catalogue message, a
whole sentence), shown under the message on a page and sent as ``"then"`` by the API. A refusal
whose rule leaves nothing more to do says so in its ``then`` (a lawful dead end). A class may carry
a ``then`` of its own (a conflict: reload and try again); a refusal of form fields defaults to
:data:`FIX_FIELDS`; every other refusal names its own (tests/test_refusal_next_steps.py).
"""

from __future__ import annotations

from typing import Any

from webapp.i18n import M_

# a lost race: the words every refusal of a transaction that lost to another at the same moment says
CONFLICT_MESSAGE = M_("someone else changed this case at the same moment; nothing of yours was saved. "
                      "Reload the case and try again.")

# -- next steps: what can still be done, and by whom (whole sentences) ---------------------------
FIX_FIELDS = M_("You can correct the marked fields and send the form again.")
RELOAD = M_("Reload the case and do it again if it is still needed; the case page shows what is due now.")
ASK_FOR_THE_ROLE = M_("The officer whose role this is can do it; an administrator gives an officer a role.")
LOOK_IN_THE_LIST = M_("Check the number or the link; your task list and the case search show every case "
                      "open to you.")
INCIDENT_FIRST = M_("An administrator retries or skips the failed step under Incidents; then the case goes on.")
FIX_THE_DIAGRAM = M_("The administrator can correct the diagram at the problems listed and deploy it again.")
DEPLOY_CORRECTED = M_("An administrator must deploy a corrected process version; then start the case again.")
FIRST_STANDS = M_("Nothing more is needed: what was sent first was recorded.")
CORRIGENDUM = M_("A corrigendum can amend the names and amounts; a wrong ledger entry is undone by the "
                 "secretary's reversing entry.")
CLOSED_CASE = M_("Nothing more can be done in a closed case: the rule leaves no further act in it. Its papers "
                 "and history stay on the case page.")


class Rule130Error(Exception):
    """Base class. ``code`` is the machine-readable error code of the API."""

    code = "error"
    status = 400
    default_then: str | None = None  # the next step of every refusal of the class, unless one is given

    def __init__(self, message: str, *, then: str | None = None, **details: object) -> None:
        """``message``: what was refused and why (a catalogue message, ``M_``); ``then``: what can still
        be done and by whom, a whole sentence (a catalogue message; default: the class's ``default_then``);
        ``details``: named values for the API (``last_day``...)."""
        super().__init__(message)
        self.message = message
        self.then = then if then is not None else self.default_then
        self.details = details


class Refused(Rule130Error):
    """The input is well formed but the rule or the form refuses it (HTTP 422)."""

    code = "refused"
    status = 422

    def __init__(self, message: str, field_errors: dict[str, str] | None = None, *, then: str | None = None,
                 **details: object) -> None:
        """As :class:`Rule130Error`; ``field_errors`` maps a form field to its problem, and a refusal of
        fields without a ``then`` of its own says :data:`FIX_FIELDS`."""
        super().__init__(message, then=then if then is not None else (FIX_FIELDS if field_errors else None), **details)
        self.field_errors = field_errors or {}


class DeadlinePassed(Refused):
    """An act after the end of its legal period; the message names the last day."""

    code = "deadline_passed"


class NotFound(Rule130Error):
    """Unknown, or outside the user's scope (HTTP 404): we do not reveal which."""

    code = "not_found"
    status = 404
    default_then = LOOK_IN_THE_LIST


class NotPermitted(Rule130Error):
    """Within scope, but the user's role may not do this (HTTP 403)."""

    code = "forbidden"
    status = 403
    default_then = ASK_FOR_THE_ROLE


class Conflict(Rule130Error):
    """Someone else changed the case first (HTTP 409); reload and try again."""

    code = "conflict"
    status = 409
    default_then = RELOAD


class SentTwice(Conflict):
    """The same task form sent again after this officer completed it (a double click, the back
    button): HTTP 409; the first submission stands and this one changed nothing."""

    default_then = FIRST_STANDS


class AlreadySubmitted(Conflict):
    """The same new-case form (or API call with the same ``Idempotency-Key``) was sent before and
    started a case then (HTTP 409 on a page, the case itself in the API); ``case_id`` and
    ``case_number`` name it. Nothing was recorded again."""

    code = "already_submitted"
    default_then = FIRST_STANDS

    def __init__(self, message: str, case_id: int, case_number: str) -> None:
        super().__init__(message, case_id=case_id, case_number=case_number)
        self.case_id, self.case_number = case_id, case_number


class InvalidDiagram(Rule130Error):
    """A process diagram or form that cannot be deployed; ``problems`` lists each problem as a line
    of text, ``found`` the same problems as structured objects (webapp.engine.diagrams.problems.Problem: element
    id, line, message, severity) when the parser made them."""

    code = "invalid_diagram"
    status = 422
    default_then = FIX_THE_DIAGRAM

    def __init__(self, message: str, problems: list[str] | None = None, found: list[Any] | None = None) -> None:
        super().__init__(message)
        self.problems = problems or [message]
        self.found = list(found or [])
        self.verdict: Any = None  # the parser's Verdict, when the refusal is one (webapp.engine.diagrams.parser)


class EngineFailure(Rule130Error):
    """A diagram element failed while running (handler error, refused script)."""

    code = "engine_failure"
    status = 500
    default_then = INCIDENT_FIRST


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
    default_then = DEPLOY_CORRECTED


class CaseHeld(Refused):
    """The case is held by an open incident (HTTP 409): nothing can be done in it until an
    administrator retries or skips the failed step; the message says which step and why."""

    code = "case_held"
    status = 409
    default_then = INCIDENT_FIRST
