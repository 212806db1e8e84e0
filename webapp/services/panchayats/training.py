"""The training Panchayat: a safe place to practise, on a clock of its own (issue 21, item 1).

A training Panchayat (``panchayat.training``) cannot be mistaken for a real one: its case numbers
start with :data:`CASE_PREFIX` (``TRN-TRN1/2026/0001``), it is the one Panchayat of a Samiti of its
own (:data:`SAMITI_PREFIX`, so no Samiti list or appeal of a live Panchayat holds it), every page,
document and PDF of it says TRAINING, and its notifications stay in the inbox (no e-mail, no
webhook: :func:`webapp.services.notify.notifications.notify`). Its registers are its own.

Its clock is its own: the real clock read ``panchayat.clock_offset_seconds`` ahead
(:func:`clock_for`). A trainer or an officer in it moves it forward from the browser, "to the next
timer" or "by N days", after a check step that lists the timers that will fall due
(:func:`plan_move`); the move is recorded in the audit trail and the timers then due fire at once
(:func:`move_clock`), as the timer worker fires them at the training clock afterwards
(:func:`webapp.services.jobs.timers.fire_due_cases`) and the reminders pass sends its "deadline near"
notices (:func:`webapp.services.jobs.reminders.remind_due`). It never moves backwards. A live Panchayat's clock,
timers and data are untouched by all of this. A reset (:func:`reset`) puts the training
Panchayat's cases away (kept, out of every list, firing nothing) and gives its officers a fresh
training Panchayat of the same code, on the real clock.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session, sessionmaker

from webapp.errors import NotPermitted, Refused
from webapp.i18n import M_
from webapp.services.jobs import reminders, timers
from webapp.services.people import users
from webapp.services.running import uow
from webapp.store import audit
from webapp.store.models import Case, CaseNumberSequence, Panchayat, TimerFiring, User
from webapp.values import clock

CASE_PREFIX = "TRN-"
"""The start of every case number of a training Panchayat (:func:`webapp.services.cases.case_start`)."""
SAMITI_PREFIX = users.TRAINING_SAMITI_PREFIX
"""The start of a training Panchayat's own Samiti code (``TRAINING-TRN1``), its appellate
authority's and its receiving officer's."""
MAX_MOVE_DAYS = 400
"""The most a training clock moves in one step, in calendar days (a typo of 3000 is refused)."""

# (user name suffix, role, display name) of the officers `rule130 training` makes
OFFICERS = (
    ("keeper", "pound_keeper", "Trainee Pound Keeper"),
    ("secretary", "secretary", "Trainee Secretary"),
    ("sarpanch", "sarpanch", "Trainee Sarpanch"),
    ("appellate", "appellate_authority", "Trainee Appellate Authority"),
    ("receiver", "receiving_officer", "Trainee Receiving Officer"),
)


def case_number_prefix(panchayat: Panchayat) -> str:
    """What a case number of ``panchayat`` starts with before its code: :data:`CASE_PREFIX` for a
    training Panchayat, nothing for a live one."""
    return CASE_PREFIX if panchayat.training else ""


def create(session: Session, code: str, name: str, password: str | None = None, *,
           timezone: str = "Asia/Kolkata", password_method: str | None = None
           ) -> tuple[Panchayat, list[tuple[User, str]]]:
    """Make a training Panchayat ``code`` with one officer per role (user names ``<code>-keeper``,
    ``-secretary``, ``-sarpanch``, ``-appellate``, ``-receiver``, in lower case), in the caller's
    transaction. The appellate authority and the receiving officer are of its Samiti (they work on
    its clock and under its band, :func:`of_user`); no live case can name the receiving officer,
    and no training case a live one (:func:`webapp.services.people.users.by_display_name`).

    Args:
        code: the Panchayat's code (1 to 16 letters or digits, :func:`users.create_panchayat`).
        name: its name. password: the officers' password (it must pass the password rule); None:
            a random one each, returned. password_method: werkzeug's hashing method (None: the
            installation's, :data:`webapp.services.people.users.PASSWORD_METHOD`).
    Returns:
        the Panchayat and each officer with the password to give them.
    Raises:
        Refused: a code in use, a bad code, name, time zone or password, a user name taken.
    """
    panchayat = users.create_panchayat(session, code, name, SAMITI_PREFIX + str(code), timezone=timezone,
                                       training=True)
    made = []
    for suffix, role, display in OFFICERS:
        secret = password or secrets.token_urlsafe(12)
        user = users.create_user(session, f"{code.lower()}-{suffix}", secret, role, display_name=display,
                                 panchayat_code=code if role in users.PANCHAYAT_ROLES else None,
                                 samiti_code=None if role in users.PANCHAYAT_ROLES else panchayat.samiti_code,
                                 password_method=password_method or users.PASSWORD_METHOD)
        made.append((user, secret))
    return panchayat, made


def of_user(session: Session, user: User | None) -> Panchayat | None:
    """The training Panchayat ``user`` works in (their Panchayat, or the one of their training
    Samiti for its appellate authority and receiving officer), None for an officer of a live
    Panchayat or nobody."""
    if user is None:
        return None
    if user.panchayat_id is not None:
        panchayat = session.get(Panchayat, user.panchayat_id)
    elif user.samiti_code and user.samiti_code.startswith(SAMITI_PREFIX):
        panchayat = session.scalar(select(Panchayat).where(Panchayat.samiti_code == user.samiti_code,
                                                           Panchayat.archived_at.is_(None)).limit(1))
    else:
        return None
    return panchayat if panchayat is not None and panchayat.training and panchayat.archived_at is None else None


def is_training(session: Session, panchayat_id: int | None) -> bool:
    """True when the Panchayat ``panchayat_id`` is a training one."""
    if panchayat_id is None:
        return False
    panchayat = session.get(Panchayat, panchayat_id)
    return panchayat is not None and panchayat.training


def offset(panchayat: Panchayat) -> timedelta:
    """How far ``panchayat``'s clock runs ahead of the real clock (zero for a live Panchayat)."""
    return panchayat.clock_ahead


def clock_for(panchayat: Panchayat, base: clock.Clock | None = None) -> clock.Clock:
    """The clock of ``panchayat``: ``base`` (the installed clock) read :func:`offset` ahead."""
    return clock.ShiftedClock(base or clock.current(), offset(panchayat))


def next_timer(session: Session, panchayat: Panchayat) -> datetime | None:
    """The instant (UTC, on the Panchayat's clock) of the earliest timer of its running cases."""
    due = session.scalar(select(func.min(Case.next_timer_due)).where(
        Case.panchayat_id == panchayat.id, Case.status == "running", Case.held_incident_id.is_(None)))
    return due


@dataclass(frozen=True)
class DueCase:
    """A case whose next timer falls due by the move's target instant."""

    case_id: int
    case_number: str
    due: datetime  # UTC


@dataclass(frozen=True)
class MovePlan:
    """What moving a training clock will do (the check step, :func:`plan_move`)."""

    panchayat_code: str
    timezone: str
    now: datetime  # the training clock now (UTC)
    to: datetime  # where it will read (UTC)
    falling_due: tuple[DueCase, ...]  # each case's next timer due by ``to`` (its firing may make more)

    @property
    def days(self) -> float:
        return (self.to - self.now).total_seconds() / 86400


def _check_mover(session: Session, user: User) -> Panchayat:
    panchayat = of_user(session, user)
    if panchayat is None:
        raise NotPermitted(M_("only the officers of a training Panchayat move its clock; a live Panchayat's "
                              "clock is the real one"))
    return panchayat


def plan_move(session: Session, user: User, *, days: object = None, to_next_timer: bool = False) -> MovePlan:
    """What moving the training clock of ``user``'s Panchayat would do, changing nothing.

    Args:
        days: move by this many calendar days (a whole number, 1 to :data:`MAX_MOVE_DAYS`; text with
            ASCII or Devanagari digits is read), or
        to_next_timer: move to one second past the earliest timer of its running cases
            (SpiffWorkflow fires a timer once the clock is strictly past its instant).
    Raises:
        NotPermitted: ``user`` is not an officer of a training Panchayat.
        Refused: neither or both asked, a number of days that is not a whole number in range, or no
            timer waiting (for "to the next timer").
    """
    panchayat = _check_mover(session, user)
    now = clock.now()
    if to_next_timer == (days not in (None, "")):
        raise Refused(M_("say how far to move the clock: to the next timer, or by a number of days"),
                      {"days": M_("a number of days, or choose the next timer")})
    if to_next_timer:
        due = next_timer(session, panchayat)
        if due is None:
            raise Refused(M_("no timer is waiting in this training Panchayat: start a case, or move by days"),
                          then=M_("Start a training case, or move the clock by a number of days."))
        to = max(due + timedelta(seconds=1), now)
    else:
        count = _whole_days(days)
        to = now + timedelta(days=count)
    falling = tuple(DueCase(case_id, number, due) for case_id, number, due in session.execute(  # due: not null here
        select(Case.id, Case.case_number, Case.next_timer_due).where(
            Case.panchayat_id == panchayat.id, Case.status == "running", Case.held_incident_id.is_(None),
            Case.next_timer_due.is_not(None), Case.next_timer_due < to).order_by(Case.next_timer_due, Case.id))
        if due is not None)
    return MovePlan(panchayat.code, panchayat.timezone, now, to, falling)


_DEVANAGARI = str.maketrans("०१२३४५६७८९", "0123456789")


def _whole_days(value: object) -> int:
    text = str(value).strip().translate(_DEVANAGARI) if isinstance(value, (str, int)) else ""
    if not (text.isascii() and text.isdigit() and 1 <= int(text) <= MAX_MOVE_DAYS):
        raise Refused(M_("the clock moves by a whole number of days from 1 to %(most)s, not %(value)s",
                         most=MAX_MOVE_DAYS, value=repr(value)[:40]),
                      {"days": M_("1 to %(most)s days", most=MAX_MOVE_DAYS)})
    return int(text)


@dataclass(frozen=True)
class Moved:
    """A move done: from and to (UTC, training clock) and the timers that fired, by case number."""

    panchayat_code: str
    moved_from: datetime
    moved_to: datetime
    fired: tuple[tuple[str, tuple[str, ...]], ...]


def move_clock(sessions: sessionmaker[Session], user: User, to: datetime) -> Moved:
    """Move the training clock of ``user``'s Panchayat forward to ``to`` (the instant its check step
    showed, :func:`plan_move`), record it in the audit trail (``training.clock_moved``), then fire
    every timer due by then at the new clock, case by case (a firing that makes another timer due
    before ``to`` fires that one too), and send the "deadline near" notices then due.

    Args:
        to: the new reading (offset-aware).
    Raises:
        NotPermitted: not an officer of a training Panchayat.
        Refused: ``to`` is not after the clock's reading now (someone moved it further meanwhile,
            or the page is old): a training clock never moves backwards; or it is more than
            :data:`MAX_MOVE_DAYS` ahead.
    """
    moved_from = clock.now()

    def move(session: Session) -> tuple[int, str, str]:
        panchayat = _check_mover(session, user)
        # the row is read again under its lock: two moves at once are applied one after the other
        session.execute(update(Panchayat).where(Panchayat.id == panchayat.id)
                        .values(clock_offset_seconds=Panchayat.clock_offset_seconds))
        session.refresh(panchayat)
        if to <= moved_from:
            raise Refused(M_("the training clock already reads %(now)s; it moves only forward",
                             now=moved_from.isoformat(timespec="minutes")),
                          then=M_("Choose a later time: the training clock never moves back; the administrator can "
                                  "reset the training Panchayat for a fresh start."))
        if to - moved_from > timedelta(days=MAX_MOVE_DAYS, seconds=1):
            raise Refused(M_("the clock moves by at most %(most)s days at a time", most=MAX_MOVE_DAYS),
                          then=M_("Move the clock again for the rest of the days."))
        step = int((to - moved_from).total_seconds())
        panchayat.clock_offset_seconds = (panchayat.clock_offset_seconds or 0) + max(step, 1)
        audit.record(session, "training.clock_moved", actor=user.username,
                     detail={"panchayat": panchayat.code, "from": moved_from.isoformat(),
                             "to": to.isoformat(), "offset_seconds": panchayat.clock_offset_seconds})
        return panchayat.id, panchayat.code, panchayat.timezone

    with sessions() as session:
        last_firing = session.scalar(select(func.max(TimerFiring.id))) or 0
    panchayat_id, code, _tz = uow.perform(sessions, "move_training_clock", move, user=user)
    fired: list[tuple[str, tuple[str, ...]]] = []
    with clock.installed(clock.FixedClock(to)):
        for _ in range(50):  # each pass fires what is due; a firing may make another timer due
            done = timers.fire_due_cases(sessions, panchayat_id=panchayat_id)
            fired.extend((case.case_number, case.timers) for case in done if case.timers)
            if not any(case.timers for case in done):
                break
        # the "deadline near" notices that fell due on the way (webapp.services.jobs.reminders)
        with sessions() as session:
            alerted = list(session.scalars(select(Case.id).where(
                Case.panchayat_id == panchayat_id, Case.status == "running", Case.next_alert_at.is_not(None),
                Case.next_alert_at <= to)))
        for case_id in alerted:
            reminders.remind_case(sessions, case_id)
    if fired:
        _no_worker_lag(sessions, panchayat_id, last_firing)
    return Moved(code, moved_from, to, tuple(fired))


def _no_worker_lag(sessions: sessionmaker[Session], panchayat_id: int, after_id: int) -> None:
    """The firings a move made (of the Panchayat's cases, ids above ``after_id``) had no timer
    worker lag: the move fired each as the clock passed its instant. Their lag (migration 0016,
    :data:`webapp.services.jobs.monitoring.LAG`) is set to 0 s, so the administrators' timer lag page and
    the ``rule130_timer_lag_seconds`` histogram, which watch the live timer worker, do not read a
    jump of the training clock as days of delay; their lateness on the training clock is kept."""
    with sessions() as session:
        session.execute(update(TimerFiring).where(
            TimerFiring.id > after_id,
            TimerFiring.case_id.in_(select(Case.id).where(Case.panchayat_id == panchayat_id)))
            .values(lag_seconds=0.0))
        session.commit()


def reset(session: Session, code: str, actor: str | None = None) -> Panchayat:
    """Put away the training Panchayat ``code`` and give its officers a fresh one of the same code,
    name and settings, on the real clock, in the caller's transaction.

    The old Panchayat keeps its cases, documents and ledger (nothing recorded is deleted: the audit
    trail stays whole) under the code ``<code>~<id>``, archived: out of every list; its cases'
    next timer and reminder instants are cleared, so no worker pass, health check or metric finds
    them waiting. Case numbers go on from where they were.

    Raises:
        Refused: no Panchayat ``code``, or a live one (a live Panchayat is never reset).
    """
    old = session.scalar(select(Panchayat).where(Panchayat.code == code))
    if old is None or not old.training:
        raise Refused(M_("no training Panchayat has the code %(code)s; a live Panchayat is never reset",
                         code=str(code)[:40]),
                      then=M_("A live Panchayat's cases are kept as they are; choose the code of a training "
                              "Panchayat."))
    now = clock.now()
    old.code = f"{code[:10]}~{old.id}"
    old.samiti_code = f"{old.samiti_code[:24]}~{old.id}"
    old.archived_at = now
    # its cases wait on nothing more: no timer or reminder instant for a worker pass, the health
    # check or the metrics to find once the real clock passes it (their state is kept as it was)
    session.execute(update(Case).where(Case.panchayat_id == old.id)
                    .values(next_timer_due=None, next_alert_at=None), execution_options={"synchronize_session": False})
    session.flush()
    fresh = Panchayat(code=code, name=old.name, samiti_code=SAMITI_PREFIX + code, district=old.district,
                      timezone=old.timezone, appeal_period_days=old.appeal_period_days,
                      return_period_days=old.return_period_days, appellate_forum=old.appellate_forum,
                      training=True, clock_offset_seconds=0)
    session.add(fresh)
    session.flush()
    for sequence in session.scalars(select(CaseNumberSequence).where(CaseNumberSequence.panchayat_id == old.id)):
        session.add(CaseNumberSequence(panchayat_id=fresh.id, year=sequence.year, last=sequence.last))
    for user in session.scalars(select(User).where(User.panchayat_id == old.id)):
        user.panchayat_id = fresh.id  # the appellate authority keeps its Samiti code: the fresh one's
    audit.record(session, "training.reset", actor=actor,
                 detail={"panchayat": code, "archived_as": old.code, "at": now.isoformat()})
    session.flush()
    return fresh
