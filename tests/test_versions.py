"""Process versions and moving running cases between them, through the services.

Version 2 of Rule 130 (built here from the bundled diagram) adds two reminder service tasks in the
objection-period subprocess — one after the period ends, one before each ownership decision —
renames the notice task and adds a field to the ownership-decision form. The values checked are the
real ones: version numbers, the element ids the diff lists, each case's verdict in words, the due
instants of the armed timers and the ledger in rupees, before and after a move.
"""

from __future__ import annotations

import io
import json
import zipfile
from datetime import date
from decimal import Decimal

import pytest
from sqlalchemy import select

from webapp.errors import InvalidDiagram, NotPermitted, Refused
from webapp.services.cases import cases, migration
from webapp.services.diagrams import repository, versions
from webapp.services.notify import notifications
from webapp.store.models import Case, CaseEvent, ProcessAudit, ProcessVersion

from .bpmn_names import renamed
from .driver import ONE_COW, TWO_COWS, Driver, ist_midnight, publish, sell

D = Decimal
P = repository.PROCESS_ID
BUNDLED = repository.BUNDLED_PROCESS

REMIND_PERIOD = '''<bpmn:serviceTask id="n_svc_remind_period" name="Remind the sarpanch: period over">
      <bpmn:documentation>Rule 130(e): the objection period is over; the Panchayat orders that the auction stand.</bpmn:documentation>
      <bpmn:extensionElements>
        <spiffworkflow:serviceTaskOperator id="notify.officers" resultVariable="reminded_period">
          <spiffworkflow:parameters>
            <spiffworkflow:parameter id="roles" type="any" value="[&quot;sarpanch&quot;]"/>
            <spiffworkflow:parameter id="template" type="str" value="&quot;{case}: the objection period is over.&quot;"/>
          </spiffworkflow:parameters>
        </spiffworkflow:serviceTaskOperator>
      </bpmn:extensionElements>
      <bpmn:incoming>nf_timer_end</bpmn:incoming>
      <bpmn:outgoing>nf_remind_period_end</bpmn:outgoing>
    </bpmn:serviceTask>
    <bpmn:sequenceFlow id="nf_remind_period_end" sourceRef="n_svc_remind_period" targetRef="n_end_period"/>
    <bpmn:serviceTask id="n_svc_remind_decide" name="Remind the sarpanch: decide the claim">
      <bpmn:documentation>Rule 130(c): the Panchayat decides the ownership claim.</bpmn:documentation>
      <bpmn:extensionElements>
        <spiffworkflow:serviceTaskOperator id="notify.officers" resultVariable="reminded_decide">
          <spiffworkflow:parameters>
            <spiffworkflow:parameter id="roles" type="any" value="[&quot;sarpanch&quot;]"/>
            <spiffworkflow:parameter id="template" type="str" value="&quot;{case}: decide the ownership claim.&quot;"/>
          </spiffworkflow:parameters>
        </spiffworkflow:serviceTaskOperator>
      </bpmn:extensionElements>
      <bpmn:incoming>nf_to_decide</bpmn:incoming>
      <bpmn:outgoing>nf_remind_decide</bpmn:outgoing>
    </bpmn:serviceTask>
    <bpmn:sequenceFlow id="nf_remind_decide" sourceRef="n_svc_remind_decide" targetRef="ut_decide_objection"/>
    <bpmn:endEvent id="n_end_period"'''

EDITS = [
    ('<bpmn:endEvent id="n_end_period"', REMIND_PERIOD),
    ('<bpmn:sequenceFlow id="nf_timer_end" sourceRef="n_ice_period_ends" targetRef="n_end_period"/>',
     '<bpmn:sequenceFlow id="nf_timer_end" sourceRef="n_ice_period_ends" targetRef="n_svc_remind_period"/>'),
    ('<bpmn:incoming>nf_timer_end</bpmn:incoming>\n    </bpmn:endEvent>',
     '<bpmn:incoming>nf_remind_period_end</bpmn:incoming>\n    </bpmn:endEvent>'),
    ('<bpmn:sequenceFlow id="nf_to_decide" sourceRef="n_mg_decide" targetRef="ut_decide_objection"/>',
     '<bpmn:sequenceFlow id="nf_to_decide" sourceRef="n_mg_decide" targetRef="n_svc_remind_decide"/>'),
    ('<bpmn:incoming>nf_to_decide</bpmn:incoming>\n      <bpmn:outgoing>nf_decide_record',
     '<bpmn:incoming>nf_remind_decide</bpmn:incoming>\n      <bpmn:outgoing>nf_decide_record'),
    ('<bpmn:flowNodeRef>n_mg_decide</bpmn:flowNodeRef>',
     '<bpmn:flowNodeRef>n_mg_decide</bpmn:flowNodeRef>\n        <bpmn:flowNodeRef>n_svc_remind_decide</bpmn:flowNodeRef>'
     '\n        <bpmn:flowNodeRef>n_svc_remind_period</bpmn:flowNodeRef>'),
    ('<bpmn:userTask id="ut_publish_notice" name="Publish notice and open conditional auction">',
     '<bpmn:userTask id="ut_publish_notice" name="Publish the notice and open the conditional auction">'),
]

HINDI = [("n_svc_remind_period", "Remind the sarpanch: period over", "सरपंच को याद दिलाएँ: अवधि समाप्त"),
         ("n_svc_remind_decide", "Remind the sarpanch: decide the claim", "सरपंच को याद दिलाएँ: दावे का निर्णय करें"),
         ("ut_publish_notice", "Publish the notice and open the conditional auction",
          "सूचना प्रकाशित करें और सशर्त नीलामी खोलें")]


def version_2() -> tuple[bytes, dict[str, dict], dict[str, bytes]]:
    """Version 2's BPMN, forms and form file bytes (the decision form gains a "remarks" field)."""
    text = (BUNDLED / "rule130.bpmn").read_text(encoding="utf-8")
    for old, new in EDITS:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    for element_id, name, hindi in HINDI:  # every new name has its Hindi (webapp/engine/diagrams/names.py)
        text = renamed(text, element_id, name, hindi)
    forms = repository.read_bundled()[1]
    decide = json.loads(json.dumps(forms["decide_objection.schema.json"]))
    decide["properties"]["remarks"] = {"type": "string", "title": "Remarks", "maxLength": 500}
    forms["decide_objection.schema.json"] = decide
    raw = {name: (BUNDLED / "forms" / name).read_bytes() for name in forms}
    raw["decide_objection.schema.json"] = json.dumps(decide, indent=4, ensure_ascii=False).encode("utf-8")
    return text.encode("utf-8"), forms, raw


def deploy_v2(sessions) -> ProcessVersion:
    bpmn, forms, raw = version_2()
    with sessions() as session:
        version, created = repository.deploy(session, bpmn, forms, "admin", "reminders", form_bytes=raw)
        session.commit()
        assert (version.version, created) == (2, True)
        return version



def case_version(sessions, case_id: int) -> int:
    with sessions() as session:
        return session.get(ProcessVersion, session.get(Case, case_id).process_version_id).version


def timers_of(drive) -> dict[str, str]:
    return drive.file().timers | {}


# -- versions: files, download, audit --------------------------------------------------------------

def test_a_deploy_keeps_its_files_byte_for_byte_and_is_in_the_audit_trail(sessions, virtual_clock):
    v2 = deploy_v2(sessions)
    _bpmn, _forms, raw = version_2()
    with sessions() as session:
        name, data = versions.download(session, P, 1)
        name2, data2 = versions.download(session, P, 2)
        again = versions.download(session, P, 2)[1]
        listed = versions.list_versions(session, P)
        trail = [(a.action, a.actor, a.version_from, a.version_to, a.note) for a in versions.trail(session, P)]
    assert (name, name2) == ("rule130_case-v1.zip", "rule130_case-v2.zip")
    assert data2 == again  # the same zip bytes on every download
    one = zipfile.ZipFile(io.BytesIO(data))
    assert one.read("rule130_case.bpmn") == (BUNDLED / "rule130.bpmn").read_bytes()
    form_names = sorted(n for n in one.namelist() if n.startswith("forms/"))
    assert len(form_names) == 12
    for path in form_names:
        assert one.read(path) == (BUNDLED / path).read_bytes()
    two = zipfile.ZipFile(io.BytesIO(data2))
    assert two.read("rule130_case.bpmn") == version_2()[0]
    assert two.read("forms/decide_objection.schema.json") == raw["decide_objection.schema.json"]
    assert b'    "properties"' in two.read("forms/decide_objection.schema.json")  # its own 4-space indent
    assert [(v.number, v.current, v.note, v.deployed_by) for v in listed] == [
        (2, True, "reminders", "admin"), (1, False, "bundled Rule 130 process", "tests")]
    assert listed[0].content_hash == v2.content_hash and len(listed[0].files) == 13
    assert trail == [("deploy", "admin", None, 2, "reminders"), ("deploy", "tests", None, 1, "bundled Rule 130 process")]


@pytest.mark.parametrize("note, message", [
    ("bad\x01note", "the note contains a control character (U+0001); remove it and deploy again"),
    ("x" * 2001, "the note is longer than 2000 characters"),
])
def test_a_deploy_note_with_a_control_character_or_too_long_is_refused_and_nothing_is_stored(sessions, note, message):
    bpmn, forms, raw = version_2()
    with sessions() as session:
        with pytest.raises(InvalidDiagram) as refused:
            repository.deploy(session, bpmn, forms, "admin", note, form_bytes=raw)
        session.rollback()
        assert str(refused.value.message) == message
        assert [v.version for v in session.scalars(select(ProcessVersion))] == [1]
        version, created = repository.deploy(session, bpmn, forms, "admin", "  reminders\n", form_bytes=raw)
        assert (version.version, version.note, created) == (2, "reminders", True)


def test_the_diff_lists_elements_added_removed_and_changed_by_id(sessions):
    deploy_v2(sessions)
    with sessions() as session:
        diff = versions.compare(session, P, 1, 2)
        back = versions.compare(session, P, 2, 1)
    assert not diff.same_content
    assert [(e.element_id, e.type) for e in diff.added] == [
        ("n_svc_remind_period", "serviceTask"), ("nf_remind_period_end", "sequenceFlow"),
        ("n_svc_remind_decide", "serviceTask"), ("nf_remind_decide", "sequenceFlow")]
    assert diff.removed == []
    changes = {e.element_id: [(c.field, c.before, c.after) for c in e.changes] for e in diff.changed}
    assert changes == {
        "ut_publish_notice": [("name", "Publish notice and open conditional auction",
                               "Publish the notice and open the conditional auction")],
        "nf_timer_end": [("flow", "n_ice_period_ends -> n_end_period", "n_ice_period_ends -> n_svc_remind_period")],
        "nf_to_decide": [("flow", "n_mg_decide -> ut_decide_objection", "n_mg_decide -> n_svc_remind_decide")],
    }
    added = {e.element_id: e for e in diff.added}
    assert added["n_svc_remind_decide"].name == "Remind the sarpanch: decide the claim"
    assert [(f.name, f.fields_added, f.fields_removed, f.fields_changed) for f in diff.forms_changed] == [
        ("decide_objection.schema.json", ["remarks"], [], [])]
    assert (diff.forms_added, diff.forms_removed, diff.layout_changed) == ([], [], False)
    assert [e.element_id for e in back.removed] == [e.element_id for e in diff.added]
    assert "  added    n_svc_remind_period (serviceTask) 'Remind the sarpanch: period over'" in diff.lines()


def test_the_diff_names_a_changed_timer_condition_lane_documentation_and_operator(sessions):
    text = (BUNDLED / "rule130.bpmn").read_text(encoding="utf-8")
    edits = [
        # the same period written otherwise (the rule fixes its length: a diagram cannot change it)
        ('period_end(notice["auction_opened_at"], 2, timezone)', "period_end(notice['auction_opened_at'], 2, timezone)"),
        ('<spiffworkflow:serviceTaskOperator id="notify.officers" resultVariable="notified">\n'
         '          <spiffworkflow:parameters>\n'
         '            <spiffworkflow:parameter id="roles" type="any" value="[&quot;secretary&quot;]"/>',
         '<spiffworkflow:serviceTaskOperator id="notify.officers" resultVariable="notified">\n'
         '          <spiffworkflow:parameters>\n'
         '            <spiffworkflow:parameter id="roles" type="any" value="[&quot;secretary&quot;, &quot;sarpanch&quot;]"/>'),
        ("Rule 130(a): the objection period starts the day after publication.",
         "Rule 130(a): the objection period begins on the day after publication."),
    ]
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    with sessions() as session:
        repository.deploy(session, text.encode(), repository.read_bundled()[1], "admin", "three days")
        session.commit()
        diff = versions.compare(session, P, 1, 2)
    changes = {e.element_id: [c.field for c in e.changes] for e in diff.changed}
    assert changes == {"bt_auction_closes": ["timer"], "svc_notify_report": ["operator"], "n_start": ["documentation"]}
    [timer] = next(e for e in diff.changed if e.element_id == "bt_auction_closes").changes
    assert (timer.before, timer.after) == ('timeDate: period_end(notice["auction_opened_at"], 2, timezone)',
                                           "timeDate: period_end(notice['auction_opened_at'], 2, timezone)")


def test_redeploy_of_an_old_version_is_a_new_version_with_the_same_files(drive, sessions):
    deploy_v2(sessions)
    with sessions() as session:
        v3 = repository.redeploy(session, "admin", P, 1, note="the reminders confused officers")
        session.commit()
        assert (v3.version, v3.note, v3.redeploy_of) == (3, "redeploy of v1: the reminders confused officers", 1)
        v1 = versions.get_version(session, P, 1)
        assert v3.content_hash == v1.content_hash
        assert versions.version_files(session, v3) == versions.version_files(session, v1)
        assert versions.compare(session, P, 1, 3).same_content
        assert next((a.action, a.version_from, a.version_to) for a in versions.trail(session, P)) == ("redeploy", 1, 3)
        assert repository.current(session).version == 3
    case = drive.start(ONE_COW)
    assert case_version(sessions, case.id) == 3


def test_only_an_administrator_manages_versions(sessions, officers):
    with sessions() as session:
        with pytest.raises(NotPermitted, match="only an administrator"):
            repository.redeploy(session, officers["secretary"], P, 1)
        with pytest.raises(NotPermitted):
            migration.plan(session, officers["sarpanch"], P, 1)
        assert repository.current(session).version == 1


# -- cases keep their version; moving them --------------------------------------------------------------

def sold_and_waiting(drive) -> None:
    """Impounded 01-05, notice 01-09 (30 days), unsold, highest bid accepted: money in suspense,
    waiting on the objection period's timer (due 00:00 IST of 02-09)."""
    drive.start(TWO_COWS)
    drive.fire_past(ist_midnight("2026-01-09"))
    publish(drive)
    sell(drive, "Bidder A", "9000", "2026-01-10T12:00:00+05:30")
    drive.fire_past(ist_midnight("2026-01-12"))
    drive.move("2026-01-12T10:00:00+05:30")
    drive.act("sarpanch", "ut_decide_unsold", {"choice": "accept_highest_bid"})


def test_a_running_case_keeps_its_version_and_a_new_case_starts_on_the_new_one(drive, sessions, officers):
    first = drive.start(TWO_COWS)
    deploy_v2(sessions)
    drive.fire_past(ist_midnight("2026-01-09"))
    publish(drive)
    assert case_version(sessions, first.id) == 1
    assert drive.ready("secretary") == [("ut_record_bid", date(2026, 1, 11))]
    with sessions() as session:
        assert [t.task_spec.bpmn_name for t in cases.CaseRun(session, session.get(Case, first.id), None).wf.get_tasks()
                if t.task_spec.bpmn_id == "ut_publish_notice"] == ["Publish notice and open conditional auction"]
    second = Driver(sessions, officers, drive.clock).start(ONE_COW, impounded_at="2026-01-09T10:30:00+05:30")
    assert case_version(sessions, second.id) == 2


def test_dry_run_says_per_case_whether_it_can_move_and_why_not(drive, sessions, officers):
    sold_and_waiting(drive)                                   # A: waiting on the objection period
    a = drive.case_id
    drive.object("Objector O")                                # B: an objection filed, decision open
    b_drive = Driver(sessions, officers, drive.clock)
    b_drive.start(ONE_COW, impounded_at="2026-01-12T09:00:00+05:30")  # C: in the release window
    c = b_drive.case_id
    deploy_v2(sessions)
    with sessions() as session:
        verdicts = {v.case_number: v for v in migration.plan(session, "admin", P, 2)}
        assert [v.as_json()["movable"] for v in verdicts.values()] == [False, True]
    assert set(verdicts) == {"RMP/2026/0001", "RMP/2026/0002"}
    a_verdict = verdicts["RMP/2026/0001"]
    assert a_verdict.reasons == [
        "task 'Objection to decide' (n_mg_decide) changed in version 2 (its conditions, its default flow, "
        "its outgoing flows) and is already completed",
        "task 'Decide ownership claim' (ut_decide_objection) changed in version 2 (its incoming flows) and is ready (open)"]
    assert a_verdict.line().startswith("RMP/2026/0001: version 1 -> 2: cannot move: task 'Objection to decide'")
    assert verdicts["RMP/2026/0002"].movable and verdicts["RMP/2026/0002"].reasons == []
    assert verdicts["RMP/2026/0002"].timers == [("bt_release_window", "2026-01-15T18:30:00+00:00")]  # 00:00 IST of 01-16
    assert (a, c) == (1, 2)


def test_moving_a_case_keeps_its_deadlines_and_money_and_it_runs_to_the_end_on_the_new_version(drive, sessions):
    sold_and_waiting(drive)
    due = ist_midnight("2026-02-09")
    before = drive.case()
    entries = drive.entries()
    assert entries == [("buyer", "suspense", D("9000.00"), "auction_money", "Rule 130(b)")]
    assert (before.next_timer_due, drive.file().timers["n_ice_period_ends"]) == (due, "2026-02-08T18:30:00+00:00")
    balances = drive.summary()["ledger"]
    deploy_v2(sessions)
    with sessions() as session:
        [verdict] = migration.plan(session, "admin", P, 2)
    assert (verdict.movable, verdict.timers) == (True, [("n_ice_period_ends", "2026-02-08T18:30:00+00:00")])

    moved = migration.move_case(drive.sessions, "admin", P, 2, "RMP/2026/0001")
    assert (moved.version_from, moved.version_to) == (1, 2)
    after = drive.case()
    assert case_version(sessions, drive.case_id) == 2
    assert after.next_timer_due == due
    assert drive.file().timers["n_ice_period_ends"] == "2026-02-08T18:30:00+00:00"
    assert after.lock_version == before.lock_version + 1
    assert drive.entries() == entries and drive.summary()["ledger"] == balances
    assert drive.all_ready() == {}
    [event] = [e for e in drive.history() if e.kind == "migration"]
    assert (event.name, json.loads(event.detail_json)["timers"]) == (
        "Moved from version 1 to version 2", {"n_ice_period_ends": "2026-02-08T18:30:00+00:00"})
    with sessions() as session:
        [row] = session.scalars(select(ProcessAudit).where(ProcessAudit.action == "move")).all()
        assert (row.actor, row.version_from, row.version_to, row.case_id, row.note) == (
            "admin", 1, 2, drive.case_id, "RMP/2026/0001")

    # The same deadlines as on version 1, and the reminder that only version 2 has.
    assert drive.fire_past(due) == 1
    assert drive.ready("sarpanch") == [("ut_order_stand", date(2026, 2, 11))]
    with sessions() as session:
        texts = [n.message for n in notifications.inbox(session, drive.officers["sarpanch"])]
    assert "RMP/2026/0001: the objection period is over." in texts
    drive.move("2026-02-09T11:00:00+05:30")
    drive.act("sarpanch", "ut_order_stand")
    assert drive.case().next_timer_due == ist_midnight("2026-03-12")
    drive.fire_past(ist_midnight("2026-03-12"))
    case = drive.case()
    assert (case.status, case.outcome) == ("completed", "auction_final")
    assert drive.entries()[1:] == [
        ("suspense", "pound_account", D("1960.00"), "fine_and_feeding", "Rule 130(e)"),
        ("suspense", "panchayat_fund", D("7040.00"), "balance", "Rule 130(e)")]
    s = drive.summary()
    assert s["deadlines"]["objection_last_day"] == date(2026, 2, 8)
    assert s["deadlines"]["appeal_last_day"] == date(2026, 3, 11)


def test_a_case_that_cannot_move_is_refused_and_left_exactly_as_it_was(drive, sessions):
    sold_and_waiting(drive)
    drive.object("Objector O")
    deploy_v2(sessions)
    before = drive.snapshot()
    with pytest.raises(Refused) as info:
        migration.move_case(drive.sessions, "admin", P, 2, drive.case_id)
    assert info.value.message.startswith("case RMP/2026/0001 cannot move to version 2: task 'Objection to decide'")
    assert drive.snapshot() == before and case_version(sessions, drive.case_id) == 1
    with sessions() as session:
        assert session.scalars(select(ProcessAudit).where(ProcessAudit.action == "move")).all() == []


def test_move_all_moves_each_movable_case_in_its_own_transaction(drive, sessions, officers):
    sold_and_waiting(drive)                                                        # movable
    other = Driver(sessions, officers, drive.clock)
    other.start(ONE_COW, impounded_at="2026-01-12T09:00:00+05:30")
    third = Driver(sessions, officers, drive.clock)
    third.start(ONE_COW, impounded_at="2026-01-12T09:30:00+05:30")
    third.fire_past(ist_midnight("2026-01-16"))
    third.move("2026-01-16T10:00:00+05:30")
    third.act("secretary", "ut_publish_notice", {"objection_period_days": 30, "full_price": "5000"})
    third.object("Claimant C")                                                     # not movable
    # The worker pass fired both release windows: the second case waits for its notice.
    assert other.ready("secretary") == [("ut_publish_notice", date(2026, 1, 17))]
    other_state = other.case().state_json
    deploy_v2(sessions)
    results = migration.move_all(drive.sessions, "admin", P, 2)
    assert [(r.verdict.case_number, r.moved) for r in results] == [
        ("RMP/2026/0001", True), ("RMP/2026/0002", True), ("RMP/2026/0003", False)]
    assert results[2].verdict.reasons[1] == ("task 'Decide ownership claim' (ut_decide_objection) changed in "
                                            "version 2 (its incoming flows) and is ready (open)")
    assert [case_version(sessions, i) for i in (drive.case_id, other.case_id, third.case_id)] == [2, 2, 1]
    assert other.ready("secretary") == [("ut_publish_notice", date(2026, 1, 17))]
    assert other.case().state_json != other_state  # re-serialized against version 2's spec
    with sessions() as session:
        moves = session.scalars(select(ProcessAudit).where(ProcessAudit.action == "move")
                                .order_by(ProcessAudit.id)).all()
        assert [(m.note, m.version_from, m.version_to) for m in moves] == [
            ("RMP/2026/0001", 1, 2), ("RMP/2026/0002", 1, 2)]
        events = session.scalars(select(CaseEvent).where(CaseEvent.kind == "migration")).all()
        assert sorted(e.case_id for e in events) == [drive.case_id, other.case_id]
    # Nobody moves twice; an unknown version is named.
    again = migration.move_all(drive.sessions, "admin", P, 2)
    assert [r.verdict.reasons for r in again if r.verdict.case_number != "RMP/2026/0003"] == [
        ["the case is already on version 2"], ["the case is already on version 2"]]
    with pytest.raises(Exception, match="has no version 9"):
        migration.move_all(drive.sessions, "admin", P, 9)


def test_a_case_whose_waiting_timer_changed_cannot_move_and_keeps_its_deadline(drive, sessions):
    """Version 2 writes the auction's timer otherwise: the product does not judge whether two timer
    expressions agree, so a case in its auction stays; a case still in its release window can move."""
    drive.start(TWO_COWS)
    drive.fire_past(ist_midnight("2026-01-09"))
    publish(drive)  # the auction closes at 00:00 IST of 01-12
    text = (BUNDLED / "rule130.bpmn").read_text(encoding="utf-8").replace(
        'period_end(notice["auction_opened_at"], 2, timezone)', "period_end(notice['auction_opened_at'], 2, timezone)")
    with sessions() as session:
        repository.deploy(session, text.encode(), repository.read_bundled()[1], "admin", "the auction timer rewritten")
        session.commit()
        [verdict] = migration.plan(session, "admin", P, 2)
    assert verdict.reasons == ["task 'Third auction day ends' (bt_auction_closes) changed in version 2 "
                               "(its event (timer or message)) and is waiting"]
    assert ("bt_auction_closes", "2026-01-11T18:30:00+00:00") in verdict.timers
    with pytest.raises(Refused):
        migration.move_case(drive.sessions, "admin", P, 2, drive.case_id)
    assert drive.case().next_timer_due == ist_midnight("2026-01-12")
    assert case_version(sessions, drive.case_id) == 1


def test_a_case_held_by_an_open_incident_is_not_moved(drive, sessions):
    from webapp.store.models import Incident

    drive.start(ONE_COW)
    deploy_v2(sessions)
    with sessions() as session:
        case = session.get(Case, drive.case_id)
        incident = Incident(case_id=case.id, element_id="svc_raise_report", element_name="Raise report and open file",
                            kind="handler_error", message="the report could not be raised", action="fire_timers",
                            raised_at=drive.clock.now())
        session.add(incident)
        session.flush()
        case.held_incident_id = incident.id
        session.commit()
    with sessions() as session:
        [verdict] = migration.plan(session, "admin", P, 2)
    assert verdict.reasons == ["the case is held by an open incident; retry or skip it at /admin/incidents first"]
    assert [r.moved for r in migration.move_all(drive.sessions, "admin", P, 2)] == [False]
    assert case_version(sessions, drive.case_id) == 1
