"""The task table behind "My tasks": order by deadline, claims, reassignment, filters, scope, and
its consistency with the engine after every step of every shared scenario."""

from __future__ import annotations

from datetime import date

import pytest
from sqlalchemy import select

from webapp.engine.execution import runtime
from webapp.errors import Conflict, NotFound, NotPermitted, Refused
from webapp.services.diagrams import repository
from webapp.services.people import users
from webapp.services.running import uow
from webapp.services.tasks import tasklist, tasks
from webapp.simulation.simulate import load_scenario, run_scenario
from webapp.store.models import Case, CaseEvent, CaseTask, ProcessVersion, User

from .conftest import FAST_HASH, PASSWORD, SCENARIOS
from .driver import ONE_COW, at, ist_midnight


@pytest.fixture
def sec2(sessions, officers):
    with sessions() as session:
        user = users.create_user(session, "sec2", PASSWORD, "secretary", display_name="Second Secretary",
                                 panchayat_code="RMP", password_method=FAST_HASH)
        session.commit()
        return user


def start(drive, impounded_at):
    return drive.start(ONE_COW, impounded_at=impounded_at).id


def listing(sessions, user, **filters):
    with sessions() as session:
        return tasks.my_tasks(session, user, **filters)


def rows(sessions, user, **filters):
    return [(r.case_number, r.element_id, r.act_by, r.deadline) for r in listing(sessions, user, **filters)]


def publish_task(drive):
    [row] = [r for r in listing(drive.sessions, drive.officers["secretary"]) if r.element_id == "ut_publish_notice"]
    return row.task_id


def at_publish(drive):
    """One cow impounded 2026-01-05; the release window passed; 2026-01-09 11:00: publish notice is ready."""
    drive.start(ONE_COW)
    drive.fire_past(ist_midnight("2026-01-09"))
    drive.move("2026-01-09T11:00:00+05:30")
    return publish_task(drive)


# -- order, overdue, filters ----------------------------------------------------------------------------

def test_rows_come_most_urgent_deadline_first_and_overdue_ones_are_counted(drive, sessions, officers):
    pk, sec = officers["pound_keeper"], officers["secretary"]
    drive.move("2026-01-05T10:00:00+05:30")
    a = start(drive, "2026-01-05T10:00:00+05:30")  # RMP/2026/0001: release window to 08-01
    b = start(drive, "2026-01-03T09:00:00+05:30")  # 0002: to 06-01
    start(drive, "2026-01-04T09:00:00+05:30")      # 0003: to 07-01
    assert rows(sessions, pk) == [
        ("RMP/2026/0002", "ut_release", date(2026, 1, 6), date(2026, 1, 6)),
        ("RMP/2026/0003", "ut_release", date(2026, 1, 7), date(2026, 1, 7)),
        ("RMP/2026/0001", "ut_release", date(2026, 1, 8), date(2026, 1, 8))]
    assert listing(sessions, pk).overdue == 0
    # 0002's window ends 07-01 00:00: the secretary must publish its notice by 08-01
    drive.fire_past(ist_midnight("2026-01-07"))
    drive.case_id = b
    drive.move("2026-01-07T11:00:00+05:30")
    drive.act("secretary", "ut_publish_notice", {"objection_period_days": 30, "full_price": "12000"})
    drive.fire_past(ist_midnight("2026-01-08"))  # 0003's report: publish by 09-01
    drive.fire_past(ist_midnight("2026-01-09"))  # 0001's report: publish by 10-01
    assert rows(sessions, sec) == [
        ("RMP/2026/0002", "ut_record_bid", date(2026, 1, 9), date(2026, 1, 9)),  # the auction's last day
        ("RMP/2026/0003", "ut_publish_notice", date(2026, 1, 9), None),
        ("RMP/2026/0001", "ut_publish_notice", date(2026, 1, 10), None)]
    first = listing(sessions, sec).rows[0]
    assert first.todo == "Record the bids of the conditional auction (a bid at full price closes it)"
    assert (first.days_left, first.overdue) == (0, False)
    assert rows(sessions, pk) == []  # the release tasks were cancelled by their timers
    # 10-01 noon: the auction of 0002 closed at 00:00 (its task cancelled); 0003's notice is late
    drive.fire_past(ist_midnight("2026-01-10"))
    drive.move("2026-01-10T12:00:00+05:30")
    now = listing(sessions, sec)
    assert [(r.case_number, r.element_id, r.overdue, r.days_left) for r in now] == [
        ("RMP/2026/0003", "ut_publish_notice", True, -1), ("RMP/2026/0001", "ut_publish_notice", False, 0)]
    assert now.overdue == 1
    assert [r.case_number for r in listing(sessions, sec, status="overdue")] == ["RMP/2026/0003"]
    assert [(r.case_number, r.element_id) for r in listing(sessions, sec, status="cancelled")] == [
        ("RMP/2026/0002", "ut_record_bid")]
    done = listing(sessions, sec, status="completed").rows
    assert [(r.case_number, r.element_id) for r in done] == [("RMP/2026/0002", "ut_publish_notice")]
    with sessions() as session:
        assert session.scalar(select(CaseTask.completed_by).where(CaseTask.element_id == "ut_publish_notice",
                                                                  CaseTask.state == "completed")) == sec.id
    assert [r.case_number for r in listing(sessions, sec, case="RMP/2026/0001")] == ["RMP/2026/0001"]
    assert [r.case_number for r in listing(sessions, sec, case=str(a))] == ["RMP/2026/0001"]


def test_role_filter_is_limited_to_the_lanes_a_user_may_list(drive, sessions, officers):
    at_publish(drive)
    sar, sec = officers["sarpanch"], officers["secretary"]
    assert rows(sessions, sar) == []  # the sarpanch's own lane by default
    assert [r[1] for r in rows(sessions, sar, role="secretary")] == ["ut_publish_notice"]
    with pytest.raises(Refused, match="you may list the tasks of secretary; not of sarpanch"):
        listing(sessions, sec, role="sarpanch")
    with pytest.raises(Refused, match="unknown status 'done'"):
        listing(sessions, sec, status="done")
    assert [r[1] for r in rows(sessions, officers["administrator"])] == ["ut_publish_notice"]


def test_scope_keeps_other_panchayats_and_samitis_out(drive, sessions, officers):
    at_publish(drive)
    assert rows(sessions, officers["other_secretary"]) == []
    assert rows(sessions, officers["far_appellate"], status="completed") == []
    assert rows(sessions, officers["receiving_officer"]) == []
    assert listing(sessions, officers["other_secretary"]).overdue == 0
    drive.move("2026-01-11T12:00:00+05:30")  # publish was due 10-01
    assert listing(sessions, officers["secretary"]).overdue == 1
    assert listing(sessions, officers["other_secretary"]).overdue == 0


# -- claim, release, reassign ------------------------------------------------------------------------------

HELD_BY_SEC = ("the task 'Publish notice and open conditional auction' of case RMP/2026/0001 is held by "
               "Secretary (sec) since 09-01-2026 11:00; ask them to release it, or the sarpanch to reassign it. "
               "Nothing was saved.")
PUBLISH = {"objection_period_days": 30, "full_price": "12000"}


def test_a_claimed_task_cannot_be_claimed_or_completed_by_another_officer(drive, sessions, officers, sec2):
    task_id = at_publish(drive)
    sec = officers["secretary"]
    row = uow.perform(sessions, "claim_task", tasklist.claim, sec, drive.case_id, task_id)
    assert row.claimed_by == sec.id
    uow.perform(sessions, "claim_task", tasklist.claim, sec, drive.case_id, task_id)  # again: no change
    with pytest.raises(Conflict) as refused:
        uow.perform(sessions, "claim_task", tasklist.claim, sec2, drive.case_id, task_id)
    assert refused.value.message == HELD_BY_SEC
    before = drive.snapshot()
    with pytest.raises(Conflict) as refused:
        uow.perform(sessions, "complete_task", tasks.complete_task, sec2, drive.case_id, task_id, PUBLISH,
                    case_id=drive.case_id, user=sec2)
    assert refused.value.message == HELD_BY_SEC
    with pytest.raises(Conflict, match="held by Secretary"):  # by element id too (API acts, simulator)
        drive.act("secretary", "ut_publish_notice", PUBLISH, user=sec2)
    assert drive.snapshot()[:5] == before[:5]
    with pytest.raises(Conflict, match="held by Secretary"):
        uow.perform(sessions, "release_task", tasklist.release, sec2, drive.case_id, task_id)
    assert [(r.claimed_by, r.claimed_by_id) for r in listing(sessions, sec2)] == [("Secretary", sec.id)]
    assert [r.task_id for r in listing(sessions, sec, status="mine")] == [task_id]
    assert listing(sessions, sec2, status="unclaimed").rows == []
    uow.perform(sessions, "release_task", tasklist.release, sec, drive.case_id, task_id)
    with pytest.raises(Refused, match="nobody has claimed it"):
        uow.perform(sessions, "release_task", tasklist.release, sec, drive.case_id, task_id)
    uow.perform(sessions, "claim_task", tasklist.claim, sec2, drive.case_id, task_id)
    uow.perform(sessions, "complete_task", tasks.complete_task, sec2, drive.case_id, task_id, PUBLISH)
    with pytest.raises(Conflict, match="is no longer open: it was completed"):
        uow.perform(sessions, "claim_task", tasklist.claim, sec, drive.case_id, task_id)
    with pytest.raises(NotPermitted, match="this task is for the secretary"):
        bid = next(r for r in listing(sessions, sec) if r.element_id == "ut_record_bid")
        uow.perform(sessions, "claim_task", tasklist.claim, officers["sarpanch"], drive.case_id, bid.task_id)


def test_the_sarpanch_reassigns_a_task_to_a_named_officer_of_its_role(drive, sessions, officers, sec2):
    task_id = at_publish(drive)
    sec, sar = officers["secretary"], officers["sarpanch"]
    uow.perform(sessions, "claim_task", tasklist.claim, sec, drive.case_id, task_id)
    with pytest.raises(NotPermitted, match="only the sarpanch may reassign"):
        uow.perform(sessions, "reassign_task", tasklist.reassign, sec, drive.case_id, task_id, "sec2")
    with pytest.raises(Refused) as refused:
        uow.perform(sessions, "reassign_task", tasklist.reassign, sar, drive.case_id, task_id, "pk")
    assert refused.value.message == ("no active secretary named pk in this Panchayat; the task can go to: "
                                     "Secretary (sec), Second Secretary (sec2)")
    with pytest.raises(Refused, match="named Kheri Secretary"):  # KHR's secretary is not of this Panchayat
        uow.perform(sessions, "reassign_task", tasklist.reassign, sar, drive.case_id, task_id, "Kheri Secretary")
    drive.move("2026-01-09T12:30:00+05:30")
    uow.perform(sessions, "reassign_task", tasklist.reassign, sar, drive.case_id, task_id, "Second Secretary")
    [row] = listing(sessions, sec)
    assert (row.claimed_by, row.assigned_to) == ("Second Secretary", "Second Secretary")
    with pytest.raises(Conflict) as refused:
        uow.perform(sessions, "complete_task", tasks.complete_task, sec, drive.case_id, task_id, PUBLISH)
    assert refused.value.message == (
        "the task 'Publish notice and open conditional auction' of case RMP/2026/0001 is held by Second "
        "Secretary (sec2) since 09-01-2026 12:30; ask them to release it, or the sarpanch to reassign it. "
        "Nothing was saved.")
    uow.perform(sessions, "complete_task", tasks.complete_task, sec2, drive.case_id, task_id, PUBLISH)
    with sessions() as session:
        row = session.scalar(select(CaseTask).where(CaseTask.task_id == task_id))
        assert (row.state, row.completed_by, row.assigned_by) == ("completed", sec2.id, sar.id)
        [event] = session.scalars(select(CaseEvent).where(CaseEvent.name == "Task reassigned"))
        assert (event.actor_user_id, event.at) == (sar.id, at("2026-01-09T12:30:00+05:30"))
        assert '"to": "Second Secretary", "from": "Secretary"' in event.detail_json


def test_a_display_name_two_officers_share_is_refused_naming_their_user_names(drive, sessions, officers, sec2):
    task_id = at_publish(drive)
    with sessions() as session:
        made = users.create_user(session, "sec3", PASSWORD, "secretary", display_name=" second   Secretary ",
                                 panchayat_code="RMP", password_method=FAST_HASH)
        session.commit()
        assert made.display_name == "second Secretary"  # blanks around and runs inside are not kept
    sar = officers["sarpanch"]
    with pytest.raises(Refused) as refused:  # "Second Secretary" and "second Secretary" read as one name
        uow.perform(sessions, "reassign_task", tasklist.reassign, sar, drive.case_id, task_id, "Second Secretary")
    assert refused.value.message == ("2 officers are called Second Secretary; give the user name of the one to "
                                     "take the task: sec2, sec3")
    assert refused.value.field_errors == {"officer": "more than one officer has this name"}
    with sessions() as session:
        row = session.scalar(select(CaseTask).where(CaseTask.task_id == task_id))
        assert (row.claimed_by, row.assigned_to) == (None, None)
    uow.perform(sessions, "reassign_task", tasklist.reassign, sar, drive.case_id, task_id, "sec3")
    with sessions() as session:
        row = session.scalar(select(CaseTask).where(CaseTask.task_id == task_id))
        assert row.assigned_to == session.scalar(select(User.id).where(User.username == "sec3"))


def test_appeal_tasks_cannot_be_reassigned_by_the_sarpanch(drive, sessions, officers):
    at_publish(drive)
    drive.act("secretary", "ut_publish_notice", PUBLISH)
    drive.act("secretary", "ut_record_bid", {"bidder": "Buyer B", "amount": "12000"})  # sold at full price
    drive.fire_past(ist_midnight("2026-02-09"))  # the notice period ended with no objection
    drive.move("2026-02-09T11:00:00+05:30")
    drive.act("sarpanch", "ut_order_stand", {})
    drive.appeal("Owner Q")
    [row] = listing(sessions, officers["appellate_authority"])
    assert (row.element_id, row.todo) == ("ut_decide_appeal",
                                          "Decide the appeal of Owner Q: uphold or reverse the Panchayat's decision")
    assert (row.due, row.deadline_label, row.deadline) == (date(2026, 3, 11), "appeal period", date(2026, 3, 11))
    with pytest.raises(NotFound, match="no task nope"):
        uow.perform(sessions, "reassign_task", tasklist.reassign, officers["sarpanch"], drive.case_id, "nope", "app")
    with pytest.raises(Refused, match="belongs to the appellate authority"):
        uow.perform(sessions, "reassign_task", tasklist.reassign, officers["sarpanch"], drive.case_id, row.task_id,
                    "app")


# -- pages and API -------------------------------------------------------------------------------------------

def login(client, username):
    response = client.post("/login", data={"username": username, "password": PASSWORD})
    assert response.status_code == 302


def test_pages_claim_show_the_holder_and_refuse_another_officer(drive, app, sessions, officers, sec2):
    task_id = at_publish(drive)
    case_id = drive.case_id
    client = app.test_client()
    login(client, "sec")
    page = client.get("/tasks").get_data(as_text=True)
    assert "Publish the notice of the impounded cattle and open the three-day conditional auction." in page
    assert "by <strong class=\"nowrap\">Saturday, 10 January 2026</strong>" in page
    done = client.post(f"/cases/{case_id}/tasks/{task_id}/claim", data={"next": "/tasks?status=mine"})
    assert done.status_code == 302 and done.headers["Location"].endswith("/tasks?status=mine")
    assert "<td data-label=\"Held by\">you" in client.get("/tasks?status=mine").get_data(as_text=True)
    other = app.test_client()
    login(other, "sec2")
    assert "Secretary" in other.get("/tasks").get_data(as_text=True)
    refused = other.post(f"/cases/{case_id}/tasks/{task_id}/claim")
    assert refused.status_code == 409
    assert "is held by Secretary (sec) since 09-01-2026 11:00" in refused.get_data(as_text=True)
    form = other.post(f"/cases/{case_id}/tasks/{task_id}", data={"objection_period_days": "30", "full_price": "1"})
    assert form.status_code == 409
    assert "held by Secretary (sec)" in form.get_data(as_text=True)
    assert other.get("/tasks?role=sarpanch").status_code == 422
    sarpanch = app.test_client()
    login(sarpanch, "sar")
    page = sarpanch.get("/tasks?role=secretary").get_data(as_text=True)
    assert 'name="officer"' in page and "Second Secretary" in page
    moved = sarpanch.post(f"/cases/{case_id}/tasks/{task_id}/reassign", data={"officer": "sec2"})
    assert moved.status_code == 302
    assert "Give to" in page
    assert other.get(f"/cases/{case_id}/tasks/{task_id}").status_code == 200
    assert "You hold this task" in other.get(f"/cases/{case_id}/tasks/{task_id}").get_data(as_text=True)


@pytest.mark.parametrize("target", ["/\t/evil.example/", "/\n/evil.example/", "/\r\n/evil.example/",
                                    "/ /evil.example/", "//evil.example/", "/\\evil.example/",
                                    "https://evil.example/", "evil.example", ""])
def test_claim_release_and_reassign_go_back_only_to_a_path_of_this_site(drive, app, target):
    """Browsers drop tabs and line breaks from an address: ``/\\t/evil.example/`` is fetched as
    ``//evil.example/``, another site. Such a ``next`` is replaced by "My tasks"."""
    task_id = at_publish(drive)
    base = f"/cases/{drive.case_id}/tasks/{task_id}"
    client = app.test_client()
    login(client, "sec")
    for action in ("claim", "release"):
        response = client.post(f"{base}/{action}", data={"next": target})
        assert (response.status_code, response.headers["Location"]) == (302, "/tasks"), action
    sarpanch = app.test_client()
    login(sarpanch, "sar")
    response = sarpanch.post(f"{base}/reassign", data={"officer": "sec", "next": target})
    assert (response.status_code, response.headers["Location"]) == (302, "/tasks")
    kept = client.post(f"{base}/release", data={"next": "/tasks?status=mine&role=secretary"})
    assert kept.headers["Location"] == "/tasks?status=mine&role=secretary"  # a path of this site is kept


def test_the_deadline_reads_date_then_tak_in_hindi_on_my_tasks_and_the_task_page(drive, app, sessions, officers):
    """Hindi puts the postposition after the day ("<day> तक"), English the preposition before ("by <day>")."""
    import lxml.html

    task_id = at_publish(drive)
    client = app.test_client()
    login(client, "sec")

    def due_cell(path: str, xpath: str) -> str:
        doc = lxml.html.fromstring(client.get(path).get_data(as_text=True))
        return " ".join(doc.xpath(xpath)[0].text_content().split())

    cell = "//table[contains(@class,'tasks')]//td[@class='when']"
    assert due_cell("/tasks", cell).startswith("by Saturday, 10 January 2026")
    assert due_cell(f"/cases/{drive.case_id}/tasks/{task_id}", "//p[@class='todo']").endswith(
        ", by Saturday, 10 January 2026.")
    client.post("/language", data={"lang": "hi", "next": "/tasks"})
    page = client.get("/tasks").get_data(as_text=True)
    assert '<strong class="nowrap">शनिवार, 10 जनवरी 2026</strong> तक' in page  # the day stays bold, not escaped
    assert due_cell("/tasks", cell).startswith("शनिवार, 10 जनवरी 2026 तक")
    assert "तक शनिवार" not in due_cell("/tasks", cell)
    todo = due_cell(f"/cases/{drive.case_id}/tasks/{task_id}", "//p[@class='todo']")
    assert todo.endswith(", शनिवार, 10 जनवरी 2026 तक।") and "तक शनिवार" not in todo  # a Hindi sentence ends with ।
    assert "<strong>शनिवार, 10 जनवरी 2026</strong> तक।</p>" in client.get(
        f"/cases/{drive.case_id}/tasks/{task_id}").get_data(as_text=True)  # the day bold, not escaped


def test_api_lists_claims_and_reassigns(drive, app, sessions, officers, sec2):
    task_id = at_publish(drive)
    with sessions() as session:
        tokens = {name: users.create_token(session, name) for name in ("sec", "sec2", "sar")}
        session.commit()
    client = app.test_client()

    def call(method, path, who, json=None):
        return client.open(f"/api/v1{path}", method=method, json=json,
                           headers={"Authorization": f"Bearer {tokens[who]}"})

    body = call("GET", "/tasks", "sec").json
    assert (body["total"], body["overdue"], body["today"]) == (1, 0, "2026-01-09")
    [task] = body["tasks"]
    assert (task["act_by"], task["due"], task["claimed_by"], task["form_key"]) == (
        "2026-01-10", "2026-01-10", None, "publish_notice")
    assert task["schema"]["required"] == ["objection_period_days", "full_price"]
    claimed = call("POST", f"/cases/{drive.case_id}/tasks/{task_id}/claim", "sec")
    assert claimed.status_code == 200 and claimed.json["task"]["claimed_by_you"] is True
    conflict = call("POST", f"/cases/{drive.case_id}/tasks/{task_id}/claim", "sec2")
    assert conflict.status_code == 409
    assert conflict.json["error"] == {"code": "conflict", "message": HELD_BY_SEC, "then": (
        "The officer who holds it can release it, or the sarpanch can give it to another officer of its role.")}
    moved = call("POST", f"/cases/{drive.case_id}/tasks/{task_id}/reassign", "sar", {"officer": "sec2"})
    assert moved.status_code == 200 and moved.json["task"]["claimed_by"] == "Second Secretary"
    assert call("GET", "/tasks?status=mine", "sec2").json["total"] == 1
    assert call("GET", "/tasks?status=bogus", "sec2").status_code == 422


# -- the table equals the engine --------------------------------------------------------------------------

def engine_vs_table(sessions) -> list[str]:
    """For every case: the engine's READY user tasks and the table's ready rows, where they differ."""
    problems = []
    with sessions() as session:
        for case in session.scalars(select(Case)):
            loaded = repository.load(session.get(ProcessVersion, case.process_version_id))
            wf = runtime.load_state(case.state_json, loaded.parsed, lambda *a: None)
            engine = tasklist.engine_ready_tasks(wf)
            table = tasklist.table_ready_tasks(session, case.id)
            if engine != table:
                problems.append(f"{case.case_number}: engine {sorted(engine)} table {sorted(table)}")
    return problems


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.yaml")), ids=lambda p: p.stem)
def test_after_every_step_the_table_equals_the_engines_ready_tasks(path, monkeypatch):
    real = uow.perform
    checked: list[str] = []
    problems: list[str] = []

    def perform_then_compare(sessions, action, *args, **kwargs):
        try:
            return real(sessions, action, *args, **kwargs)
        finally:
            problems.extend(f"after {action}: {p}" for p in engine_vs_table(sessions))
            checked.append(action)

    monkeypatch.setattr(uow, "perform", perform_then_compare)
    scenario = load_scenario(path)
    outcome = run_scenario(scenario)
    assert outcome.mismatches == []
    assert problems == []
    assert checked[0] == "start_case" and len(checked) >= 1 + len(scenario.steps)


def test_the_migration_fills_the_table_from_running_cases(drive, sessions, database_url):
    from alembic import command
    from alembic.config import Config

    from webapp.store.db import ROOT

    at_publish(drive)
    with sessions() as session:
        before = tasklist.table_ready_tasks(session, drive.case_id)
    assert [e for _, e, _ in before] == ["ut_publish_notice"]
    config = Config()
    config.set_main_option("script_location", str(ROOT / "webapp" / "migrations"))
    config.set_main_option("sqlalchemy.url", database_url.replace("%", "%%"))
    sessions.kw["bind"].dispose()
    command.downgrade(config, "0009-1")  # to just before the case_task migration
    command.upgrade(config, "head")
    with sessions() as session:
        assert tasklist.table_ready_tasks(session, drive.case_id) == before
        [row] = session.scalars(select(CaseTask))
        assert (row.due_on, row.case_number, row.lane) == (date(2026, 1, 10), "RMP/2026/0001", "secretary")
    assert engine_vs_table(sessions) == []


def test_an_appeal_that_waited_for_a_later_objection_is_due_30_days_after_it_could_be_decided(database_url, sessions):
    """p74: K's appeal is filed on 2026-05-25; Objector L objects on the last day of the objection
    period and is decided on 2026-06-25, when "Decide appeal" opens: due 30 days after that
    decision (2026-07-25), not after the filing (2026-06-24, overdue as soon as it opened)."""
    from dataclasses import replace

    from webapp.simulation.simulate import run_scenarios

    scenario = load_scenario(SCENARIOS / "p74-appeal-waits-for-a-later-objection-to-be-decided.yaml")
    until_l_decided = replace(scenario, steps=[s for s in scenario.steps if s.at < at("2026-06-26T00:00:00+05:30")],
                              expect={})
    run_scenarios([until_l_decided], database_url)
    with sessions() as session:
        row = session.scalars(select(CaseTask).where(CaseTask.element_id == "ut_decide_appeal",
                                                     CaseTask.state == "ready")).one()
        assert (row.ready_since.date(), row.due_on, row.act_by) == (date(2026, 6, 25), date(2026, 7, 25),
                                                                     date(2026, 7, 25))


def test_delivery_after_a_late_return_by_the_buyer_is_due_7_days_after_the_return(database_url, sessions):
    """p76: final on 2028-02-11, the buyer returns the cattle only on 2028-02-22: the delivery to the
    proved owner opens then and is due 7 days later (2028-02-29), not on 2028-02-18 (overdue as
    soon as it opened)."""
    from dataclasses import replace

    from webapp.simulation.simulate import run_scenarios

    scenario = load_scenario(SCENARIOS / "p76-late-return-by-buyer-delivery-due-after-it.yaml")
    until_returned = replace(scenario, steps=[s for s in scenario.steps if s.do != "deliver_to_objector"
                                              and s.at < at("2028-02-22T10:30:00+05:30")], expect={})
    run_scenarios([until_returned], database_url)
    with sessions() as session:
        row = session.scalars(select(CaseTask).where(CaseTask.element_id == "ut_deliver_to_objector",
                                                     CaseTask.state == "ready")).one()
        assert (row.due_on, row.act_by) == (date(2028, 2, 29), date(2028, 2, 29))
