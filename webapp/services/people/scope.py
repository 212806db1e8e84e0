"""Loading a case within the user's scope: the one way every service finds the case it acts on."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from webapp.errors import NotFound
from webapp.i18n import M_
from webapp.services.people import users
from webapp.store.models import Case, User


def get_case(session: Session, user: User, case_ref: int | str) -> Case:
    """The case by id or case number, if ``user`` may see it.

    Raises:
        NotFound: unknown, or outside the user's scope (never says which).
    """
    case = None
    text = str(case_ref)
    if text.isascii() and text.isdigit() and len(text) <= 18:  # a database id fits in 63 bits
        case = session.get(Case, int(text))
    if case is None and len(text) <= 40:
        case = session.scalar(select(Case).where(Case.case_number == text))
    if case is None or not users.can_see(session, user, case):
        raise NotFound(M_("no case %(case)s is open to you", case=case_ref))
    return case
