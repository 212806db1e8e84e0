"""The public notice board of clause (a): notices whose objection period is still running."""

from __future__ import annotations

from datetime import date

from sqlalchemy import select
from sqlalchemy.orm import Session

from webapp.store.models import Case, Panchayat
from webapp.values import casefile, clock, legal_time
from webapp.values.casefile import CaseFile


def is_on_board(case: Case, panchayat: Panchayat, training_id: int | None = None) -> bool:
    """True while the notice belongs on the board: published, the case running, and its last day
    for objections today or later in the Panchayat's zone (Rule 130(a) Note; RULE130.md 1). A
    training Panchayat's notice is never on the public board; it shows only to that training
    Panchayat's officers (``training_id``: their Panchayat's id), marked as training."""
    if panchayat.training and panchayat.id != training_id:
        return False
    today = legal_time.local_day(clock.now(), panchayat.timezone)
    return (case.status == "running" and case.notice_last_day is not None
            and date.fromisoformat(case.notice_last_day) >= today)


def public_notice(session: Session, case_id: int,
                  training_id: int | None = None) -> tuple[Case, CaseFile, Panchayat] | None:
    """One notice while it is on the board, else None (unknown ids included); ``training_id``: see
    :func:`is_on_board`."""
    if not 0 < case_id < 2**63:
        return None
    case = session.get(Case, case_id)
    panchayat = session.get(Panchayat, case.panchayat_id) if case is not None else None
    if case is None or panchayat is None or not is_on_board(case, panchayat, training_id):
        return None
    return case, casefile.load(case.file_json), panchayat


def public_notices(session: Session, training_id: int | None = None) -> list[tuple[Case, CaseFile, Panchayat]]:
    """Every notice on the board, earliest last day first, with its case file and Panchayat;
    ``training_id``: see :func:`is_on_board`."""
    rows = session.execute(select(Case, Panchayat).join(Panchayat, Panchayat.id == Case.panchayat_id)
                           .where(Case.status == "running", Case.notice_last_day.is_not(None))
                           .order_by(Case.notice_last_day, Case.id)).all()
    return [(case, casefile.load(case.file_json), panchayat) for case, panchayat in rows
            if is_on_board(case, panchayat, training_id)]
