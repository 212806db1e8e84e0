"""How long an act's snapshot lives (issue 32, item 2; webapp.services.jobs.snapshots): kept while
the act can be corrected or amended, let go by the housekeeping from 00:00 of the day after its last
day for a corrigendum in the case's zone (Asia/Kolkata here: 18:30 UTC the evening before), and a
closed case that keeps none any more has its engine state packed. Impounded 2026-01-05 10:00 IST;
a cow's fine 500.00, feeding 60.00 a day."""

from __future__ import annotations

import contextvars
import json
import threading
import time
from datetime import date, datetime

import pytest
from sqlalchemy import func, select, update

from webapp.engine.execution import runtime
from webapp.errors import Refused
from webapp.services.cases import cases, corrections, corrigenda, overview
from webapp.services.jobs import snapshots, timers
from webapp.services.running import acts, uow
from webapp.store import audit
from webapp.store.models import AuditEntry, Case, CaseAct, LedgerEntry, Panchayat
from webapp.values import casefile

from .driver import ONE_COW, TWO_COWS, order_stand_to_final, publish, sell


def act_rows(drive) -> list[tuple[int, str, bool, str, int | None]]:
    """(id, name, keeps a snapshot, marks_json, last_event_id) of each act of the case, in order."""
    with drive.sessions() as s:
        return [(a.id, a.name, a.before is not None, a.marks_json, a.last_event_id)
                for a in acts.of_case(s, drive.case_id)]


def audit_entries(drive) -> list[dict]:
    with drive.sessions() as s:
        return [json.loads(e.detail_json) for e in s.scalars(select(AuditEntry).where(
            AuditEntry.kind == snapshots.AUDIT_KIND).order_by(AuditEntry.seq))]


def plan(drive, act_id, values, role="secretary"):
    with drive.sessions() as s:
        return corrigenda.plan(s, drive.officers[role], drive.case_id, act_id, values).as_json()


def test_the_last_day_is_the_later_of_the_correction_and_the_corrigendum_and_the_instant_is_midnight_ist(drive):
    drive.start(ONE_COW)
    publish(drive)  # 2026-01-09 11:00 IST
    with drive.sessions() as s:
        act = acts.latest(s, drive.case_id)
        cf = casefile.load(s.get(Case, drive.case_id).file_json)
        assert cf.timezone == "Asia/Kolkata"
        assert corrections.last_day(act, cf.timezone) == date(2026, 1, 16)  # day + 7
        assert corrigenda.last_day(act, cf) == date(2026, 4, 9)  # day + 90
        assert snapshots.serves_until(act, cf.timezone) == date(2026, 4, 9)
        assert snapshots.let_go_at(act, cf.timezone) == datetime.fromisoformat("2026-04-09T18:30:00+00:00")
        assert snapshots.serves_until(act, "UTC") == date(2026, 4, 9)  # 05:30 UTC: the same day there


def test_kept_through_the_last_day_amended_on_it_let_go_at_midnight_then_refused_and_the_pass_is_idempotent(drive):
    drive.start(ONE_COW)
    publish(drive, full_price="15000.00")  # 2026-01-09 11:00 IST
    sell(drive, bidder="Bidder B", amount="16000.00")  # 2026-01-09 15:00 IST: sold at full price
    rows = act_rows(drive)
    assert [(name, keeps) for _id, name, keeps, _m, _e in rows] == [
        ("Publish notice and open conditional auction", True), ("Record bid", True)]
    bid = rows[1][0]
    with drive.sessions() as s:
        receipt_entries = list(s.scalars(select(LedgerEntry).where(LedgerEntry.case_id == drive.case_id)
                                         .order_by(LedgerEntry.id)))
        papers = acts.papers_of(s, receipt_entries)
    number = drive.case().case_number
    assert f"{number}/R1" in papers[receipt_entries[-1].id]

    drive.move("2026-04-09T23:59:59.999999+05:30")  # the last instant of the last day for a corrigendum
    assert snapshots.let_go_due(drive.sessions).acts == []
    assert [keeps for _i, _n, keeps, _m, _e in act_rows(drive)] == [True, True]
    assert audit_entries(drive) == []
    done = uow.perform(drive.sessions, "corrigendum", corrigenda.issue, drive.officers["secretary"], drive.case_id,
                       bid, {"amount": "15500.00"}, "the bid was 15,500, typed as 16,000",
                       case_id=drive.case_id, user=drive.officers["secretary"])
    assert done["number"] == f"{number}/C1"
    assert drive.file().sale.amount.to_eng_string() == "15500.00"

    drive.move("2026-04-10T00:00:00+05:30")  # 2026-04-09 18:30 UTC
    swept = snapshots.let_go_due(drive.sessions)
    assert swept.acts == [rows[0][0], bid] and swept.packed == []  # the case runs on: nothing packed
    after = act_rows(drive)
    assert [keeps for _i, _n, keeps, _m, _e in after] == [False, False]
    # the act's identity, marks and last history row stay as recorded; the registers' papers too
    assert [(i, n, m, e) for i, n, _k, m, e in after] == [(i, n, m, e) for i, n, _k, m, e in rows]
    with drive.sessions() as s:
        assert acts.papers_of(s, receipt_entries) == papers
        assert audit.verify(s).ok
    assert audit_entries(drive) == [{"acts": [rows[0][0], bid], "cases_packed": [],
                                     "at": "2026-04-09T18:30:00+00:00"}]

    with pytest.raises(Refused) as info:
        plan(drive, bid, {"amount": "15400.00"})
    assert info.value.message == "a corrigendum of this act could be issued until 2026-04-09; the record stands as it is"
    assert info.value.then == corrigenda.STANDS
    # the pass again: nothing to do, no second audit entry
    assert snapshots.let_go_due(drive.sessions).acts == []
    drive.move("2026-04-11T10:00:00+05:30")
    assert snapshots.let_go_due(drive.sessions).acts == []
    assert len(audit_entries(drive)) == 1


def test_a_correction_works_on_its_last_day_and_a_snapshot_gone_early_is_refused_by_name(drive):
    drive.start(ONE_COW)
    publish(drive, full_price="15000.00")
    sell(drive, bidder="Bidder B", amount="15000.00")  # sold; the objection period runs to 2026-02-09
    drive.move("2026-01-20T11:00:00+05:30")
    drive.object("Ramu, the owner")
    with drive.sessions() as s:
        act = acts.latest(s, drive.case_id)
        act_id, name = act.id, act.name
    drive.move("2026-01-27T23:59:00+05:30")  # the objection's last day for a correction (day + 7)
    assert snapshots.let_go_due(drive.sessions).acts == []
    uow.perform(drive.sessions, "correct", corrections.correct, drive.officers["secretary"], drive.case_id,
                act_id, "filed in the wrong case", case_id=drive.case_id, user=drive.officers["secretary"])
    assert drive.file().objections == []
    drive.move("2026-01-28T10:00:00+05:30")
    drive.object("Ramu, the owner")
    with drive.sessions() as s:
        again = acts.latest(s, drive.case_id).id
    # should a clock ever disagree with the windows: the snapshot's absence is named, with the next step
    with drive.sessions() as s:
        s.execute(update(CaseAct).where(CaseAct.id == again).values(before=None))
        s.commit()
    with drive.sessions() as s, pytest.raises(Refused) as info:
        corrections.check(s, drive.officers["secretary"], s.get(Case, drive.case_id), s.get(CaseAct, again))
    assert info.value.message == (f"the case as the act “{name}” found it is no longer kept: it is let go once the "
                                  "act can no longer be corrected or amended")
    assert info.value.then == corrections.STANDS
    with pytest.raises(Refused) as info:
        plan(drive, again, {"objector": "Ramu"})
    assert "is no longer kept" in info.value.message and info.value.then == corrections.STANDS


def test_a_closed_case_keeps_no_snapshot_after_its_last_act_s_day_plus_90_and_its_state_is_packed(drive):
    drive.start(TWO_COWS)
    publish(drive)
    sell(drive, bidder="Bidder B", amount="12500.00", when="2026-01-10T15:00:00+05:30")
    order_stand_to_final(drive)  # the order 2026-02-09 11:00 IST; final from 2026-03-12
    case = drive.case()
    assert (case.status, case.outcome) == ("completed", "auction_final")
    plain = case.state_json
    with drive.sessions() as s:
        marks = overview.diagram_marks(cases.CaseRun(s, s.get(Case, drive.case_id), None).wf)
        kept = s.scalar(select(func.sum(func.length(CaseAct.before))).where(CaseAct.case_id == drive.case_id))
    assert len(act_rows(drive)) == 3 and kept > 5000

    drive.move("2026-05-10T12:00:00+05:30")  # the notice and the bid (2026-01-09, -10) let go; the order kept
    swept = snapshots.let_go_due(drive.sessions)
    assert len(swept.acts) == 2 and swept.packed == []
    assert [keeps for _i, _n, keeps, _m, _e in act_rows(drive)] == [False, False, True]
    assert drive.case().state_json == plain

    drive.move("2026-05-11T00:00:00+05:30")  # 2026-02-09 + 90 = 2026-05-10 was the order's last day
    swept = snapshots.let_go_due(drive.sessions)
    assert len(swept.acts) == 1 and swept.packed == [drive.case_id]
    case = drive.case()
    assert case.state_json.startswith(runtime.PACKED) and len(case.state_json) * 3 < len(plain)
    assert runtime.unpack_state(case.state_json) == plain
    with drive.sessions() as s:
        assert s.scalar(select(func.count()).where(CaseAct.case_id == drive.case_id,
                                                   CaseAct.before.is_not(None))) == 0
        run = cases.CaseRun(s, s.get(Case, drive.case_id), None)
        assert overview.diagram_marks(run.wf) == marks  # the case page's diagram reads it as before
        assert runtime.dump_state(run.wf) == plain
        assert audit.verify(s).ok
    assert snapshots.let_go_due(drive.sessions).acts == []  # idempotent
    assert drive.case().state_json == case.state_json
    assert runtime.pack_state(case.state_json) == case.state_json


def run_worker_while(drive, wait) -> None:
    """The timer worker (2 s behind the clock) in a thread on the test's virtual clock, until ``wait()`` returns."""
    stop = threading.Event()
    worker = threading.Thread(target=contextvars.copy_context().run, args=(timers.run_worker, drive.sessions, stop),
                              kwargs={"max_sleep": 0.05, "settle": 2.0})
    worker.start()
    try:
        wait()
    finally:
        stop.set()
        worker.join(10)


def test_the_timer_worker_lets_go_at_its_first_pass_behind_the_clock_by_its_settle_time(drive):
    drive.start(ONE_COW)
    publish(drive)  # 2026-01-09: let go from 2026-04-10 00:00 IST
    drive.move("2026-04-10T00:00:01+05:30")  # one second past, the worker 2 s behind: not yet
    run_worker_while(drive, lambda: time.sleep(0.5))
    assert [keeps for _i, _n, keeps, _m, _e in act_rows(drive)] == [True]
    drive.move("2026-04-10T00:00:02+05:30")

    def until_let_go() -> None:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and act_rows(drive)[0][2]:
            time.sleep(0.05)

    run_worker_while(drive, until_let_go)
    assert [keeps for _i, _n, keeps, _m, _e in act_rows(drive)] == [False]
    assert len(audit_entries(drive)) == 1


def test_a_backlog_is_worked_off_a_pass_at_a_time(drive):
    drive.start(ONE_COW)
    publish(drive, full_price="15000.00")
    sell(drive, bidder="Bidder B", amount="16000.00")
    first, second = (row[0] for row in act_rows(drive))
    drive.move("2026-04-10T00:00:00+05:30")
    swept = snapshots.let_go_due(drive.sessions, limit=1, batches=1)
    assert (swept.acts, swept.more, swept.wait_seconds) == ([first], True, snapshots.BACKLOG_SECONDS)
    swept = snapshots.let_go_due(drive.sessions, limit=1, batches=1)
    assert (swept.acts, swept.more) == ([second], True)  # a full batch: more may be due
    swept = snapshots.let_go_due(drive.sessions, limit=1, batches=1)
    assert (swept.acts, swept.more, swept.wait_seconds) == ([], False, snapshots.SWEEP_SECONDS)
    assert [entry["acts"] for entry in audit_entries(drive)] == [[first], [second]]


def test_a_training_panchayats_acts_are_let_go_at_its_own_clock(drive):
    drive.start(ONE_COW)
    publish(drive)  # 2026-01-09: let go from 2026-04-10 00:00 IST
    with drive.sessions() as s:
        rmp = s.scalar(select(Panchayat).where(Panchayat.code == "RMP"))
        rmp.training, rmp.clock_offset_seconds = True, 0
        s.commit()
    drive.move("2026-04-01T00:00:00+05:30")
    assert snapshots.let_go_due(drive.sessions).acts == []
    with drive.sessions() as s:
        s.scalar(select(Panchayat).where(Panchayat.code == "RMP")).clock_offset_seconds = 9 * 86400
        s.commit()
    drive.move("2026-03-31T23:59:59.999999+05:30")
    assert snapshots.let_go_due(drive.sessions).acts == []  # its clock reads 2026-04-09 23:59:59.999999 IST
    drive.move("2026-04-01T00:00:00+05:30")
    assert snapshots.let_go_due(drive.sessions).acts == [act_rows(drive)[0][0]]  # its clock: 2026-04-10 00:00 IST
