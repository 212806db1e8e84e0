"""Units of work: one business operation = one transaction; refusals change nothing.

:func:`perform` runs a service function in a fresh session, commits on success, and on any
refusal rolls back everything and records only the refused attempt in the case history.
A lost optimistic-lock race becomes :class:`Conflict` with a message the officer can act on.
"""

from __future__ import annotations

import contextvars
import json
from typing import Any, Callable, TypeVar

from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.orm.exc import StaleDataError

from .. import clock
from ..errors import Conflict, NotFound, Rule130Error, TaskFailed
from ..store.models import Case, CaseEvent, User

T = TypeVar("T")

CONFLICT_MESSAGE = ("someone else changed this case at the same moment; nothing of yours was saved. "
                    "Reload the case and try again.")


def perform(sessions: sessionmaker[Session], action: str, fn: Callable[..., T], *args: Any,
            case_id: int | None = None, user: User | None = None, **kwargs: Any) -> T:
    """Run ``fn(session, *args, **kwargs)`` as one transaction.

    Args:
        action: the name of the act, for the history of a refusal (e.g. ``file_objection``).
        case_id: the case concerned, if any (a refusal is recorded against it).
        user: the acting user, if any.
    Raises:
        Rule130Error: the refusal, after rolling back (Conflict for a lost race).
    """
    with sessions() as session:
        try:
            # a copy of the context: the case number a CaseRun binds for the logs stays in this unit
            result = contextvars.copy_context().run(fn, session, *args, **kwargs)
            session.commit()
            return result
        except StaleDataError:
            session.rollback()
            error: Rule130Error = Conflict(CONFLICT_MESSAGE)
        except TaskFailed as failed:  # rolled back; the incident and the hold are their own transaction
            session.rollback()
            from . import incidents
            held = incidents.open_incident(sessions, failed, action, user)
            raise held from None
        except Rule130Error as refused:
            session.rollback()
            error = refused
    if case_id is not None and not isinstance(error, NotFound):
        record_refusal(sessions, case_id, action, error, user)
    raise error


def record_refusal(sessions: sessionmaker[Session], case_id: int, action: str, error: Rule130Error,
                   user: User | None) -> None:
    """Append the refused attempt to the case history (its only trace)."""
    with sessions() as session:
        if session.get(Case, case_id) is None:
            return
        session.add(CaseEvent(case_id=case_id, at=clock.now(), kind="refusal", name=action, element_id=None,
                              actor_role=user.role if user else None, actor_user_id=user.id if user else None,
                              detail_json=json.dumps({"code": error.code, "message": error.message})))
        session.commit()
