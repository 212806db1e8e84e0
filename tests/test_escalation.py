"""Overdue officer tasks: the diagram's non-interrupting boundary timers remind the task's role when
the task passes its service-level due day and, 3 days later, escalate it to the sarpanch
(RULE130.md, "Service levels for officers' tasks"). Each fires once, the task stays open, nothing
in the case's deadlines or money moves, and the notices reach the inbox and a real SMTP server.
"""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import pytest
from sqlalchemy import select

from webapp.engine.diagrams.problems import Problem
from webapp.engine.diagrams.safe_xml import read_xml
from webapp.engine.execution import runtime
from webapp.services.diagrams import repository
from webapp.services.jobs import timers
from webapp.services.notify import deliveries
from webapp.services.running import uow
from webapp.services.tasks import tasklist
from webapp.store.models import Case, CaseTask, Notification, User

from .driver import ONE_COW, ist_midnight, publish
from .test_notify_channels import at, choose, settings_for, smtp  # noqa: F401 - the smtp fixture

OVERDUE = ist_midnight("2026-01-11")  # the file opened on 01-09: publish by 01-10 (1 day); overdue from 01-11
ESCALATED = ist_midnight("2026-01-14")  # 3 days later
US = timedelta(microseconds=1)



def notices(sessions, template: str) -> list[tuple[str, str]]:
    with sessions() as session:
        rows = session.execute(select(Notification, User).join(User, User.id == Notification.user_id)
                               .where(Notification.template == template).order_by(Notification.id)).all()
    return [(u.username, n.message) for n, u in rows]


def row(sessions, case_id: int, element_id: str) -> CaseTask:
    with sessions() as session:
        return session.scalar(select(CaseTask).where(CaseTask.case_id == case_id, CaseTask.element_id == element_id))


def file_opened(drive) -> None:
    drive.start(ONE_COW)  # impounded 01-05 10:00 IST
    assert drive.fire_past(ist_midnight("2026-01-09")) == 1  # release window over: "Publish notice" is ready


def test_an_overdue_task_reminds_its_role_once_then_escalates_to_the_sarpanch_once(drive, sessions, officers):
    file_opened(drive)
    assert drive.ready("secretary") == [("ut_publish_notice", ist_midnight("2026-01-10").date())]
    armed = drive.file().timers
    assert (armed["bt_overdue_publish"], armed["bt_escalate_publish"]) == (
        "2026-01-10T18:30:00+00:00", "2026-01-13T18:30:00+00:00")  # 00:00 IST of 01-11 and 01-14
    assert drive.case().next_timer_due == OVERDUE

    assert drive.fire_past(OVERDUE - US, timedelta(0)) == 0  # 23:59:59.999999 of the due day: not yet
    assert notices(sessions, "task_overdue") == []
    assert drive.fire_past(OVERDUE) == 1
    assert drive.fire_past(OVERDUE, timedelta(hours=1)) == 0  # once
    reminder = ("sec", "RMP/2026/0001: the task 'Publish notice and open conditional auction' is overdue "
                       "(due by Saturday, 10 January 2026).")
    assert notices(sessions, "task_overdue") == [reminder]
    assert notices(sessions, "task_escalated") == []
    with sessions() as session:
        [listed] = tasklist.task_list(session, officers["secretary"], status="overdue").rows
    assert (listed.element_id, listed.days_left, listed.escalated_at) == ("ut_publish_notice", -1, None)
    assert drive.case().next_timer_due == ESCALATED

    assert drive.fire_past(ESCALATED) == 1
    assert drive.fire_past(ESCALATED, timedelta(days=5)) == 0  # once
    assert notices(sessions, "task_escalated") == [
        ("sar", "RMP/2026/0001: the task 'Publish notice and open conditional auction' of the secretary is still "
                "not done (due by Saturday, 10 January 2026); escalated to you.")]
    assert notices(sessions, "task_overdue") == [reminder]
    assert row(sessions, drive.case_id, "ut_publish_notice").escalated_at == ESCALATED + US
    with sessions() as session:
        [escalated] = tasklist.task_list(session, officers["sarpanch"], role="secretary", status="escalated").rows
        assert (escalated.element_id, escalated.escalated_at) == ("ut_publish_notice", ESCALATED + US)
        assert tasklist.task_list(session, officers["secretary"], status="escalated").total == 1
    assert [(f.element_id, f.due_at) for f in drive.firings()] == [
        ("bt_release_window", ist_midnight("2026-01-09")), ("bt_overdue_publish", OVERDUE),
        ("bt_escalate_publish", ESCALATED)]

    # the task stayed with the secretary: a late notice is published and the case goes on as ever
    publish(drive, when="2026-01-19T11:00:00+05:30")
    assert drive.ready("secretary") == [("ut_record_bid", ist_midnight("2026-01-21").date())]
    deadlines = drive.summary()["deadlines"]
    assert (deadlines["objection_last_day"].isoformat(), deadlines["auction_last_day"].isoformat()) == (
        "2026-02-18", "2026-01-21")
    assert "bt_overdue_publish" not in [t.bpmn_id for t in _armed(drive)]
    assert row(sessions, drive.case_id, "ut_publish_notice").state == "completed"
    with sessions() as session:
        assert tasklist.task_list(session, officers["sarpanch"], role="secretary", status="escalated").total == 0
    assert Counter(f.element_id for f in drive.firings()) == {"bt_release_window": 1, "bt_overdue_publish": 1,
                                                              "bt_escalate_publish": 1}


def _armed(drive):
    with drive.sessions() as session:
        case = session.get(Case, drive.case_id)
        return runtime.armed_timers(uow._load(session, case))


def test_a_task_done_on_its_due_day_is_never_reminded(drive, sessions):
    file_opened(drive)
    publish(drive, when="2026-01-10T23:59:00+05:30")  # the last minute of the due day
    assert drive.fire_past(ESCALATED) >= 1  # the auction's close fires; no overdue timer is left
    assert notices(sessions, "task_overdue") == notices(sessions, "task_escalated") == []
    assert not [f for f in drive.firings() if f.element_id.startswith(("bt_overdue", "bt_escalate"))]


def test_an_officer_completing_the_task_as_its_overdue_timer_falls_due_fires_it_once(drive, sessions, officers):
    """The worker loaded the case, the secretary publishes at the same moment: the officer's
    transaction fires the due reminder first and wins; the worker's stale copy is a conflict."""
    from webapp.errors import Conflict

    file_opened(drive)
    drive.move(OVERDUE + timedelta(seconds=5))

    def worker_pass(session, case_id):
        loaded = session.get(Case, case_id)
        publish(drive, when=OVERDUE + timedelta(seconds=5))
        assert session.get(Case, case_id) is loaded
        return timers._fire(session, case_id)

    with pytest.raises(Conflict):
        uow.perform(drive.sessions, "fire_timers", worker_pass, drive.case_id)
    assert timers.fire_due(drive.sessions) == 0
    assert Counter(f.element_id for f in drive.firings()) == {"bt_release_window": 1, "bt_overdue_publish": 1}
    assert [u for u, _ in notices(sessions, "task_overdue")] == ["sec"]
    assert drive.ready("secretary") == [("ut_record_bid", ist_midnight("2026-01-13").date())]


def test_task_ready_near_deadline_and_overdue_notices_reach_the_inbox_and_a_real_smtp_server(
        drive, sessions, officers, smtp):  # noqa: F811 - the fixture
    smtp.start()
    choose(sessions, officers["secretary"], email_enabled=True, email_address="secretary@rampura.example")
    choose(sessions, officers["sarpanch"], email_enabled=True, email_address="sarpanch@rampura.example")
    file_opened(drive)  # the secretary's new task: "the release window has passed; publish the notice"
    publish(drive, when="2026-01-10T09:00:00+05:30")  # the auction's last day (01-12) is near at once
    drive.fire_past(ist_midnight("2026-01-13"))  # no bid: the auction closes unsold, "Decide unsold cattle"
    assert drive.ready("sarpanch") == [("ut_decide_unsold", ist_midnight("2026-01-14").date())]  # closed 01-12, +2
    assert drive.fire_past(ist_midnight("2026-01-15")) == 1  # overdue from 00:00 IST of 01-15
    overdue = "RMP/2026/0001: the task 'Decide unsold cattle' is overdue (due by Wednesday, 14 January 2026)."
    inbox = {kind: notices(sessions, kind) for kind in ("report_raised", "deadline_near", "task_overdue")}
    assert inbox["task_overdue"] == [("sar", overdue)]
    assert ("sec", "RMP/2026/0001: the release window has passed; the file is open. Publish the notice "
                   "(Rule 130(a)).") in inbox["report_raised"]
    assert [u for u, m in inbox["deadline_near"] if "the conditional auction" in m] == ["sec"]

    smtp.stop()  # the SMTP server is down: nothing is lost, the deliveries wait
    assert {o.result for o in deliveries.deliver_due(sessions, settings_for(smtp.port))} == {"retry"}
    assert smtp.mailbox.messages == []
    smtp.start()
    drive.move(ist_midnight("2026-01-15") + timedelta(hours=1))  # after the back-off
    assert {o.result for o in deliveries.deliver_due(sessions, settings_for(smtp.port))} == {"sent"}
    subjects = Counter((tuple(rcpts), m["Subject"]) for _, rcpts, m in smtp.mailbox.messages)
    assert subjects[(("secretary@rampura.example",), "Rule 130 RMP/2026/0001: the release window has passed")] == 1
    assert subjects[(("secretary@rampura.example",), "Rule 130 RMP/2026/0001: a deadline is near")] == 1
    assert subjects[(("sarpanch@rampura.example",), "Rule 130 RMP/2026/0001: a task is overdue")] == 1
    [body] = [m.get_content() for _, _, m in smtp.mailbox.messages if m["Subject"].endswith("a task is overdue")]
    assert overdue.replace("Wednesday, 14 January 2026", "14-01-2026") in body or overdue in body
    assert deliveries.deliver_due(sessions, settings_for(smtp.port)) == []  # each sent once


# -- the expression form of overdue timers is checked at deploy -----------------------------------------------

def _timer_problems(root) -> list[Problem]:
    from webapp.engine.diagrams.timer_checks import check_timers
    return check_timers(root)


@pytest.fixture
def bundled_text():
    return (repository.BUNDLED_PROCESS / "rule130.bpmn").read_text()


GOOD = 'service_level_end("ut_publish_notice", 0, timezone)'


@pytest.mark.parametrize("change, message", [
    (('cancelActivity="false" attachedToRef="ut_publish_notice"', 'attachedToRef="ut_publish_notice"'),
     "is only for a non-interrupting boundary event"),
    ((GOOD, 'service_level_end("ut_record_bid", 0, timezone)'),
     'must name the task it is attached to ("ut_publish_notice")'),
    ((GOOD, 'service_level_end("ut_publish_notice", -1, timezone)'), "a whole number from 0 to 60"),
    ((GOOD, 'service_level_end("ut_publish_notice", 61, timezone)'), "a whole number from 0 to 60"),
    ((GOOD, 'service_level_end("ut_publish_notice", days, timezone)'), "a whole number from 0 to 60"),
    ((GOOD, 'service_level_end("ut_publish_notice", 0, "Asia/Kolkata")'), "must pass timezone"),
    (("period_end(impounded_at, 3, timezone)", 'service_level_end("ut_release", 0, timezone)'),
     "is only for a non-interrupting boundary event"),
])
def test_an_overdue_timer_expression_is_checked(bundled_text, change, message):
    old, new = change
    assert old in bundled_text
    problems = _timer_problems(read_xml(bundled_text.replace(old, new, 1).encode()))
    assert [p for p in problems if message in p.message], problems
    assert _timer_problems(read_xml(bundled_text.encode())) == []
