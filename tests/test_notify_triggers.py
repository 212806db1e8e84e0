"""Notification triggers: the exact notices of scenario s1, a near deadline sent once (and by
e-mail to a real SMTP server with its date), the configurable number of days, a task ready for a
role but not for the officer who made it ready."""

from __future__ import annotations

from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import select

from webapp.services.cases import cases
from webapp.services.jobs import reminders, timers
from webapp.services.notify import deliveries
from webapp.services.running import alerts, uow
from webapp.services.tasks import tasks
from webapp.simulation import simulate
from webapp.store.models import Case, DeadlineReminder, Notification, User

from .conftest import SCENARIOS
from .test_notify_channels import at, choose, settings_for, smtp  # noqa: F401 - the smtp fixture

IST = ZoneInfo("Asia/Kolkata")


def notices(sessions) -> list[tuple[str, str, str, str]]:
    with sessions() as session:
        rows = session.execute(select(Notification, User).join(User, User.id == Notification.user_id)
                               .order_by(Notification.id)).all()
    return [(n.created_at.astimezone(IST).isoformat(timespec="seconds"), u.role, n.template, n.message)
            for n, u in rows]


def test_scenario_s1_creates_exactly_these_notifications(database_url, sessions):
    result = simulate.run_scenario(simulate.load_scenario(SCENARIOS / "s1-no-objection-full-price.yaml"),
                                   database_url)
    assert result.mismatches == []
    c = "TRN-SIM1/2026/0001"
    auction = (f"{c}: the last day of the conditional auction is Sunday, 11 January 2026 (days left, counting today: 3); "
               "no bid is taken after it (Rule 130(b)).")
    objection = (f"{c}: the last day of the objection period is Sunday, 8 February 2026 (days left, counting today: 3); "
                 "no objection is entertained after it (Rule 130(a)).")
    appeal = (f"{c}: the last day of the appeal period is Wednesday, 11 March 2026 (days left, counting today: 3); "
              "after it the Panchayat's decision is final (Rule 130(e) proviso).")
    assert notices(sessions) == [
        # the release window ends: the file opens (the diagram's message; no separate "task ready")
        ("2026-01-09T00:00:00+05:30", "secretary", "report_raised",
         f"{c}: the release window has passed; the file is open. Publish the notice (Rule 130(a))."),
        # the notice is published at 11:00 and the auction's last day is 3 days away: reminded at once;
        # the secretary's next "Record bid" is not announced to the secretary who made it ready
        ("2026-01-09T11:00:00+05:30", "secretary", "deadline_near", auction),
        ("2026-02-06T00:00:00+05:30", "secretary", "deadline_near", objection),
        ("2026-02-06T00:00:00+05:30", "sarpanch", "deadline_near", objection),
        ("2026-02-09T00:00:00+05:30", "secretary", "period_ended",
         f"{c}: the objection period is over; its last day was Sunday, 8 February 2026."),
        ("2026-02-09T00:00:00+05:30", "sarpanch", "period_ended",
         f"{c}: the objection period is over; its last day was Sunday, 8 February 2026."),
        ("2026-02-09T00:00:00+05:30", "sarpanch", "task_ready",
         f"{c}: the task 'Order that the auction stand' is ready for you."),
        ("2026-03-09T00:00:00+05:30", "secretary", "deadline_near", appeal),
        ("2026-03-09T00:00:00+05:30", "sarpanch", "deadline_near", appeal),
        ("2026-03-12T00:00:00+05:30", "secretary", "outcome_final",
         f"{c}: the Panchayat's decision is final (Rule 130(e) proviso)."),
        ("2026-03-12T00:00:00+05:30", "sarpanch", "outcome_final",
         f"{c}: the Panchayat's decision is final (Rule 130(e) proviso)."),
        ("2026-03-12T00:00:00+05:30", "secretary", "case_closed", f"{c}: the case is closed."),
        ("2026-03-12T00:00:00+05:30", "sarpanch", "case_closed", f"{c}: the case is closed."),
        ("2026-03-12T00:00:00+05:30", "secretary", "period_ended",
         f"{c}: the appeal period is over; its last day was Wednesday, 11 March 2026."),
        ("2026-03-12T00:00:00+05:30", "sarpanch", "period_ended",
         f"{c}: the appeal period is over; its last day was Wednesday, 11 March 2026."),
    ]
    with sessions() as session:
        reminded = session.execute(select(DeadlineReminder.element_id, DeadlineReminder.due_at)
                                   .order_by(DeadlineReminder.id)).all()
    assert [(e, d.astimezone(IST).isoformat()) for e, d in reminded] == [
        ("bt_auction_closes", "2026-01-12T00:00:00+05:30"),
        ("n_ice_period_ends", "2026-02-09T00:00:00+05:30"),
        ("ice_appeal_window_ends", "2026-03-12T00:00:00+05:30"),
    ]


def publish(sessions, officers, virtual_clock) -> Case:
    """A case impounded 05-01, its file opened 09-01 00:00, the notice published 09-01 11:00 (30 days)."""
    case = uow.perform(sessions, "start_case", cases.start_case, officers["pound_keeper"],
                       impounded_at=at("2026-01-05T10:00:00"), place_seized="Bhimpura",
                       place_impounded="Kanji House, Rampura", nearest_village="Bhimpura",
                       animals=[{"species": "cow", "description": "brown cow", "tag": "RJ-1001"}])
    virtual_clock.set(at("2026-01-09T00:00:01"))
    timers.fire_due(sessions)
    virtual_clock.set(at("2026-01-09T11:00:00"))
    uow.perform(sessions, "act", tasks.act, officers["secretary"], case.id, "ut_publish_notice",
                {"objection_period_days": "30", "full_price": "12000.00"})
    return case


def test_a_near_deadline_is_sent_once_by_the_worker_and_by_email(sessions, officers, virtual_clock, smtp):  # noqa: F811
    smtp.start()
    choose(sessions, officers["sarpanch"], email_enabled=True, email_address="sarpanch@rampura.example")
    case = publish(sessions, officers, virtual_clock)
    with sessions() as session:
        stored = session.get(Case, case.id)
    # the auction's reminder went out at once (inside its window); the next is the objection period's:
    # 00:00 IST of 06-02, 3 days before the last day 08-02; the legal timers are not moved
    assert stored.next_timer_due == at("2026-01-12T00:00:00")  # the auction's close
    assert stored.next_alert_at == at("2026-02-06T00:00:00")
    virtual_clock.set(at("2026-01-12T00:00:01"))
    timers.fire_due(sessions)
    with sessions() as session:
        stored = session.get(Case, case.id)
        # next: the overdue reminder of "Decide unsold cattle" (the auction closed unsold on 01-11; due 01-13)
        assert (stored.next_timer_due, stored.next_alert_at) == (at("2026-01-14T00:00:00"), at("2026-02-06T00:00:00"))
    virtual_clock.set(at("2026-02-05T23:59:59"))
    assert reminders.remind_due(sessions) == []
    assert [n for n in notices(sessions) if n[2] == "deadline_near" and "objection" in n[3]] == []
    virtual_clock.set(at("2026-02-06T00:00:01"))
    assert reminders.remind_due(sessions) == [case.id]
    assert reminders.remind_due(sessions) == []  # once
    virtual_clock.set(at("2026-02-07T10:00:00"))
    timers.fire_due(sessions)
    uow.perform(sessions, "file_objection", cases.file_objection, officers["secretary"], case.id, "Ramesh")
    near = [n for n in notices(sessions) if n[2] == "deadline_near" and "objection period" in n[3]]
    assert [(n[0], n[1]) for n in near] == [("2026-02-06T00:00:01+05:30", "secretary"),
                                            ("2026-02-06T00:00:01+05:30", "sarpanch")]
    with sessions() as session:
        stored = session.get(Case, case.id)
        assert (stored.next_timer_due, stored.next_alert_at) == (at("2026-02-09T00:00:00"), None)
    sent = deliveries.deliver_due(sessions, settings_for(smtp.port))
    assert {o.result for o in sent} == {"sent"}
    bodies = {m["Subject"]: m.get_content() for _, rcpts, m in smtp.mailbox.messages}
    subject = f"Rule 130 {case.case_number}: a deadline is near"
    assert subject in bodies
    assert all(rcpts == ["sarpanch@rampura.example"] for _, rcpts, _ in smtp.mailbox.messages)
    assert (f"{case.case_number}: the last day of the objection period is Sunday, 8 February 2026 (days left, counting today: 3)"
            in bodies[subject])


def test_the_reminder_days_come_from_configuration(sessions, officers, virtual_clock, monkeypatch):
    monkeypatch.setenv("RULE130_NOTIFY_DEADLINE_DAYS", "10")
    case = publish(sessions, officers, virtual_clock)
    virtual_clock.set(at("2026-01-12T00:00:01"))
    timers.fire_due(sessions)
    with sessions() as session:
        assert session.get(Case, case.id).next_alert_at == at("2026-01-30T00:00:00")  # 10 days: 30-01..08-02
    monkeypatch.setenv("RULE130_NOTIFY_DEADLINE_DAYS", "0")
    virtual_clock.set(at("2026-02-07T00:00:00"))
    reminders.remind_due(sessions)
    timers.fire_due(sessions)
    assert [n for n in notices(sessions) if "objection period" in n[3]] == []
    monkeypatch.setenv("RULE130_NOTIFY_DEADLINE_DAYS", "three")
    with pytest.raises(ValueError, match="RULE130_NOTIFY_DEADLINE_DAYS must be a whole number"):
        alerts.deadline_days()


def test_a_task_ready_reaches_the_role_but_not_the_officer_who_acted(sessions, officers, virtual_clock):
    case = publish(sessions, officers, virtual_clock)
    virtual_clock.set(at("2026-01-10T12:00:00"))
    uow.perform(sessions, "act", tasks.act, officers["secretary"], case.id, "ut_record_bid",
                {"bidder": "Bidder A", "amount": "9000.00"})
    uow.perform(sessions, "act", tasks.act, officers["secretary"], case.id, "ut_record_bid",
                {"bidder": "Bidder B", "amount": "12500.00"})
    assert [n for n in notices(sessions) if n[2] == "task_ready"] == []  # the secretary made it ready
    # the objection period ends by the timer: the sarpanch's task is announced
    virtual_clock.set(at("2026-02-09T00:00:01"))
    timers.fire_due(sessions)
    assert [n[1:3] for n in notices(sessions) if n[2] == "task_ready"] == [("sarpanch", "task_ready")]
