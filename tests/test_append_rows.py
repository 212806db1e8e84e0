"""Rows that are only added (case history, timer firings, notifications, audit entries) are written
with one INSERT per table and flush, chained into the audit trail in the same transaction; the
answers a unit of work asks twice (recipients, channel choices, reminders sent) are read once per
transaction and never outlive it.

Real database (SQLite, or PostgreSQL with RULE130_TEST_POSTGRES), real services.
"""

from __future__ import annotations

import json
import re
from datetime import datetime

import pytest
from sqlalchemy import event, func, select

from webapp.services.notify import channels, notifications, preferences
from webapp.store import audit
from webapp.store.models import AuditEntry, Case, CaseEvent, Delivery, Notification, User
from webapp.values import clock

from .driver import TWO_COWS, sell

pytestmark = pytest.mark.usefixtures("virtual_clock")



class Statements:
    """The INSERT and SELECT statements run on an engine while in use: (verb, table, executemany,
    rows): an executemany's parameter sets, or the rows of VALUES of one INSERT."""

    def __init__(self, engine) -> None:
        self.engine, self.seen = engine, []

    def _record(self, _conn, _cursor, statement, parameters, _context, many) -> None:
        found = re.match(r"\s*(INSERT INTO|SELECT\s.*?\sFROM)\s+\"?(\w+)", statement, re.S)
        if found:
            verb = "INSERT" if found.group(1) == "INSERT INTO" else "SELECT"
            rows = len(parameters) if many else (statement.count("), (") + 1 if verb == "INSERT" else 1)
            self.seen.append((verb, found.group(2), many, rows))

    def __enter__(self):
        event.listen(self.engine, "before_cursor_execute", self._record)
        return self

    def __exit__(self, *_exc) -> None:
        event.remove(self.engine, "before_cursor_execute", self._record)

    def of(self, verb: str, table: str) -> list[tuple]:
        return [row for row in self.seen if row[:2] == (verb, table)]


def test_history_and_notices_added_together_go_in_one_insert_each_and_are_chained(drive, sessions, officers):
    case_id = drive.start(TWO_COWS).id
    with sessions() as session:
        before = session.scalar(select(func.count(AuditEntry.id)))
    with Statements(sessions.kw["bind"]) as seen, sessions() as session:
        now = clock.now()
        for n in range(3):
            session.add(CaseEvent(case_id=case_id, at=now, kind="act", name=f"step {n}", element_id=None,
                                  actor_role="secretary", actor_user_id=officers["secretary"].id,
                                  detail_json=json.dumps({"n": n})))
        for role in ("secretary", "sarpanch"):
            session.add(Notification(user_id=officers[role].id, case_id=case_id, template="case_closed",
                                     message="closed", created_at=now))
        session.commit()
    # one statement each: an executemany of its rows
    assert [row[3] for row in seen.of("INSERT", "case_event")] == [3]
    assert [row[3] for row in seen.of("INSERT", "notification")] == [2]
    assert [row[3] for row in seen.of("INSERT", "audit_entry")] == [3]
    with sessions() as session:
        added = list(session.scalars(select(AuditEntry).order_by(AuditEntry.seq).offset(before)))
        names = [row.name for row in session.scalars(
            select(CaseEvent).where(CaseEvent.case_id == case_id, CaseEvent.kind == "act").order_by(CaseEvent.id))]
        verdict = audit.verify(session)
    assert names == ["step 0", "step 1", "step 2"]
    assert [(e.kind, e.actor, json.loads(e.detail_json)["name"]) for e in added] == [
        ("case.act", "sec", "step 0"), ("case.act", "sec", "step 1"), ("case.act", "sec", "step 2")]
    assert [e.seq for e in added] == list(range(before + 1, before + 4))
    assert verdict.ok and verdict.checked == before + 3


def test_a_notification_with_a_delivery_is_written_with_its_id(drive, sessions, officers):
    case_id = drive.start(TWO_COWS).id
    with sessions() as session:
        now = clock.now()
        notice = Notification(user_id=officers["secretary"].id, case_id=case_id, template="case_closed",
                              message="closed", created_at=now)
        session.add(notice)
        session.add(Delivery(notification=notice, channel="email", target="sec@rampura.example", status="pending",
                             attempts=0, next_attempt_at=now, last_error="", created_at=now))
        session.commit()
        notice_id = notice.id
    with sessions() as session:
        delivery = session.scalar(select(Delivery).where(Delivery.target == "sec@rampura.example"))
        assert notice_id is not None and delivery.notification_id == notice_id
        assert session.get(Notification, notice_id).message == "closed"


def test_a_rolled_back_unit_leaves_none_of_its_rows(drive, sessions, officers):
    case_id = drive.start(TWO_COWS).id
    with sessions() as session:
        counts = (session.scalar(select(func.count(CaseEvent.id))), session.scalar(select(func.count(AuditEntry.id))))
    with sessions() as session:
        session.add(CaseEvent(case_id=case_id, at=clock.now(), kind="act", name="kept?", element_id=None,
                              actor_role=None, actor_user_id=None, detail_json="{}"))
        session.flush()  # written, then undone
        session.rollback()
    with sessions() as session:
        assert (session.scalar(select(func.count(CaseEvent.id))),
                session.scalar(select(func.count(AuditEntry.id)))) == counts
        assert audit.verify(session).ok


def test_recipients_are_read_once_per_transaction_and_again_in_the_next(drive, sessions, officers):
    case_id = drive.start(TWO_COWS).id
    with Statements(sessions.kw["bind"]) as seen, sessions() as session:
        case = session.get(Case, case_id)
        first = notifications.notify(session, case, ["secretary", "sarpanch"], "case_closed")
        second = notifications.notify(session, case, ["secretary", "sarpanch"], "case_closed")
        session.commit()
    assert [n.user_id for n in first] == [n.user_id for n in second] == [officers["secretary"].id,
                                                                         officers["sarpanch"].id]
    assert len(seen.of("SELECT", "app_user")) == 1  # with their channel choices (an outer join)
    assert seen.of("SELECT", "notification_preference") == []
    # other roles in the same transaction are chosen from the same officers: no further query
    with Statements(sessions.kw["bind"]) as seen, sessions() as session:
        case = session.get(Case, case_id)
        reached = {tuple(roles): [n.user_id for n in notifications.notify(session, case, roles, "case_closed")]
                   for roles in (["secretary"], ["pound_keeper", "sarpanch"], ["appellate_authority"],
                                 ["administrator"], ["receiving_officer"], ["secretary", "sarpanch"])}
        session.commit()
    assert len(seen.of("SELECT", "app_user")) == 1
    assert reached == {("secretary",): [officers["secretary"].id],
                       ("pound_keeper", "sarpanch"): [officers["pound_keeper"].id, officers["sarpanch"].id],
                       ("appellate_authority",): [officers["appellate_authority"].id],  # SAM1's, not SAM2's
                       ("administrator",): [officers["administrator"].id],  # installation-wide
                       ("receiving_officer",): [],  # the case names none yet
                       ("secretary", "sarpanch"): [officers["secretary"].id, officers["sarpanch"].id]}
    with sessions() as session:  # the sarpanch leaves office: the next transaction asks again
        session.get(User, officers["sarpanch"].id).active = False
        session.commit()
    with sessions() as session:
        third = notifications.notify(session, session.get(Case, case_id), ["secretary", "sarpanch"], "case_closed")
        session.commit()
    assert [n.user_id for n in third] == [officers["secretary"].id]


def test_channels_chosen_in_a_transaction_apply_to_its_later_notices(drive, sessions, officers):
    case_id = drive.start(TWO_COWS).id
    secretary = officers["secretary"]
    with sessions() as session:
        case = session.get(Case, case_id)
        notifications.notify(session, case, ["secretary"], "case_closed")  # asks for the choices: none yet
        preferences.save(session, secretary, preferences.Choices(email_enabled=True,
                                                                 email_address="sec@rampura.example"),
                         channels.ChannelSettings())
        notifications.notify(session, case, ["secretary"], "case_closed")
        session.commit()
    with sessions() as session:
        targets = list(session.scalars(select(Delivery.target)))
    assert targets == ["sec@rampura.example"]


def test_a_deadline_reminder_is_sent_once_however_often_the_case_is_saved(drive, sessions, officers):
    drive.start(TWO_COWS)
    drive.fire_past(datetime.fromisoformat("2026-01-09T00:00:00+05:30"))
    drive.move("2026-01-09T11:00:00+05:30")
    drive.act("secretary", "ut_publish_notice", {"objection_period_days": 30, "full_price": "12000.00"})
    # the conditional auction's last day is 2026-01-11: it is less than three days away, so the
    # reminder is due at once; the saves after it do not send it again
    for instant in ("2026-01-09T12:00:00+05:30", "2026-01-10T10:00:00+05:30", "2026-01-11T09:00:00+05:30"):
        drive.move(instant)
        drive.act("secretary", "ut_record_bid", {"bidder": f"Bidder {instant[8:10]}", "amount": "9000.00"})
    with sessions() as session:
        near = list(session.scalars(select(Notification).where(Notification.template == "deadline_near",
                                                               Notification.user_id == officers["secretary"].id)))
    assert [json.loads(n.params_json)["last_day"] for n in near] == ["2026-01-11"]
    assert "the conditional auction" in near[0].message


def test_a_reminder_falling_due_before_an_act_is_sent_once_in_that_act(drive, sessions, officers):
    """The act's first engine pass sends it; the act's write (a flush) and its second pass do not
    send it again (the deadline_reminder row is unique per timer and due instant)."""
    drive.start(TWO_COWS)
    drive.fire_past(datetime.fromisoformat("2026-01-09T00:00:00+05:30"))
    drive.move("2026-01-09T11:00:00+05:30")
    drive.act("secretary", "ut_publish_notice", {"objection_period_days": 30, "full_price": "12000.00"})
    sell(drive, "Bidder A", "9000.00", "2026-01-10T12:00:00+05:30")
    drive.fire_past(datetime.fromisoformat("2026-01-12T00:00:00+05:30"))  # the auction closes unsold
    # no worker pass since: the objection period's reminder (last day 2026-02-08) fell due on 02-06
    drive.move("2026-02-06T10:00:00+05:30")
    drive.act("sarpanch", "ut_decide_unsold", {"choice": "accept_highest_bid"})
    with sessions() as session:
        near = [json.loads(n.params_json)["last_day"] for n in session.scalars(
            select(Notification).where(Notification.template == "deadline_near",
                                       Notification.user_id == officers["sarpanch"].id).order_by(Notification.id))]
    assert near == ["2026-02-08"]
