"""The check step of an act on the pages: the values as they will be recorded, what follows from them
(:mod:`webapp.services.running.follows`), the legal deadline it meets, then **Confirm** or **Change**.

A page's act form sends ``step=check`` (a hidden field). The check page's form sends the same values
again (hidden) with ``step=confirm`` — the act is then recorded — or ``step=change`` — the form comes
back with every value kept. A form posted without ``step`` (a script, not a page) is recorded at
once, as the API records its one call. Works without JavaScript.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from flask import render_template, request

from webapp.i18n import M_, Message, flash_message
from webapp.services.cases import corrections
from webapp.services.running import uow
from webapp.services.running.follows import Follow

CHECK, CONFIRM, CHANGE = "check", "confirm", "change"


def step() -> str:
    """The posted step: ``check``, ``confirm``, ``change``, or ``""`` (no check step asked)."""
    value = request.form.get("step", "")
    return value if value in (CHECK, CONFIRM, CHANGE) else ""


def preview(sessions: Any, action: str, fn: Any, *args: Any, case_id: int, user: Any,
            **kwargs: Any) -> tuple[list[Follow], list[Message]]:
    """The check step's preview of an act (:func:`webapp.services.running.uow.preview`, its refusal
    logged) and what no correction could undo once it is confirmed, judged in the same rolled-back
    transaction by the rule corrections apply
    (:func:`webapp.services.cases.corrections.cannot_be_undone`): (what follows, warnings)."""
    warnings: list[Message] = []

    def judged(session: Any, *a: Any, **kw: Any) -> Any:
        result = fn(session, *a, **kw)
        session.flush()
        warnings.extend(corrections.cannot_be_undone(session, case_id))
        return result

    follows = uow.preview(sessions, action, judged, *args, case_id=case_id, user=user, log_refusal=True, **kwargs)
    return follows, warnings


def render(*, title: Message | str, printed: list[tuple[str, str]], follows: list[Follow], hidden: dict[str, Any],
           back: str, case_number: str, deadline: tuple[str, date | None] | None = None,
           warnings: list[Message] | None = None) -> Any:
    """The check page.

    Args:
        title: the act's name. printed: (label, value as it will be recorded) pairs.
        follows: what follows (:func:`webapp.services.running.uow.preview`). hidden: the form's values,
            posted again with Confirm or Change (to the page's own URL). back: the case page's URL.
        deadline: (the deadline's name, its last day) the act meets, if one.
        warnings: what the officer should know before Confirm (:func:`preview`; a bid that looks
            mistyped: :func:`webapp.services.tasks.rules.bid_warnings`), shown above the buttons.
    """
    values = {k: ("" if v is None else str(v)) for k, v in hidden.items() if k not in ("step", "csrf_token")}
    return render_template("officer/check.html", title=title, printed=printed, follows=follows, hidden=values,
                           action=request.path, back=back, case_number=case_number, deadline=deadline,
                           warnings=warnings or [])


def tell(done: Message, told: list[Follow], case_id: int) -> None:
    """Flash what was done and each thing that followed (a document issued with its link), in the past
    tense (:meth:`webapp.services.running.follows.Follow.done`)."""
    flash_message(done, "success")
    for follow in told:
        category = f"follow-doc:{case_id}:{follow.document_id}" if follow.document_id else "follow"
        flash_message(M_("%(what)s.", what=follow.done().text), category)  # what it did: the past
