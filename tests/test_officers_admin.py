"""Officers administered by an administrator within their scope (issue 31, item 1), and the attacks
on it (issue 34, item 5): create, deactivate, reactivate, reset a password, change a role, transfer
naming a successor; every act checked before it is confirmed and written in the audit trail."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from webapp.errors import NotFound, NotPermitted, Refused
from webapp.services.panchayats import officers as admin_officers
from webapp.services.people import users
from webapp.services.running import uow
from webapp.services.tasks import tasklist, tasks
from webapp.store.models import AuditEntry, Case, CaseEvent, CaseTask, Notification, User

from .conftest import FAST_HASH, PASSWORD
from .driver import ONE_COW, ist_midnight


@pytest.fixture
def admins(sessions, officers):
    """A Panchayat administrator of RMP (two of them), a Samiti administrator of SAM1 and a District
    administrator of Jaipur (RMP and KHR), besides the installation's ``admin``."""
    with sessions() as session:
        def make(name, **scope):
            return users.create_user(session, name, PASSWORD, "administrator", display_name=name,
                                     password_method=FAST_HASH, **scope)
        made = {"rmp": make("adm-rmp", panchayat_code="RMP"), "rmp2": make("adm-rmp2", panchayat_code="RMP"),
                "sam1": make("adm-sam1", samiti_code="SAM1"), "jaipur": make("adm-jaipur", district="Jaipur"),
                "installation": officers["administrator"]}
        session.commit()
    return made


def run(sessions, fn, *args, **kwargs):
    return admin_officers.perform(sessions, fn, *args, password_method=FAST_HASH, **kwargs) if fn in (
        admin_officers.create, admin_officers.reset_password) else admin_officers.perform(sessions, fn, *args, **kwargs)


def user(sessions, name):
    with sessions() as session:
        return session.scalar(select(User).where(User.username == name))


def trail(sessions, kind):
    with sessions() as session:
        return [(e.actor, json.loads(e.detail_json)) for e in session.scalars(
            select(AuditEntry).where(AuditEntry.kind == kind).order_by(AuditEntry.seq))]


# -- create -----------------------------------------------------------------------------------------

def test_a_samiti_administrator_creates_an_officer_with_a_first_password_to_change(sessions, admins):
    outcome = run(sessions, admin_officers.create, admins["sam1"], "sec-khr2", "secretary",
                  display_name="Naya Sachiv", panchayat_code="KHR")
    assert outcome.first_password and len(outcome.first_password) == 19
    made = user(sessions, "sec-khr2")
    assert (made.role, made.display_name, made.must_change_password, made.active) == (
        "secretary", "Naya Sachiv", True, True)
    with sessions() as session:
        assert users.sign_in(session, "sec-khr2", outcome.first_password, method=FAST_HASH) is not None
    assert trail(sessions, "officer.created") == [
        ("adm-sam1", {"officer": "sec-khr2", "role": "secretary", "panchayat": "KHR"})]


def test_the_check_step_shows_what_follows_and_creates_nothing(sessions, admins):
    outcome = admin_officers.check(sessions, admin_officers.create, admins["sam1"], "sec-new", "secretary",
                                   display_name="New", panchayat_code="KHR")
    assert outcome.first_password is None
    assert str(outcome.follows[0]) == "New (sec-new) becomes a secretary of Gram Panchayat KHR."
    assert user(sessions, "sec-new") is None
    assert trail(sessions, "officer.created") == []


@pytest.mark.parametrize("name", ["SEC", " sec ", "Sec\t", "PK"])
def test_a_user_name_differing_only_in_case_or_blanks_is_refused(sessions, admins, name):
    with pytest.raises(Refused) as refused:
        run(sessions, admin_officers.create, admins["rmp"], name, "secretary", panchayat_code="RMP")
    assert "is taken by" in refused.value.message
    assert refused.value.field_errors == {"username": "taken"}


def test_a_panchayat_administrator_cannot_create_an_officer_in_another_panchayat(sessions, admins):
    with pytest.raises(NotPermitted, match=r"the Panchayat KHR is outside your scope \(Gram Panchayat Rampura\)"):
        run(sessions, admin_officers.create, admins["rmp"], "spy", "secretary", panchayat_code="KHR")
    with pytest.raises(NotPermitted, match="outside your scope"):
        run(sessions, admin_officers.create, admins["sam1"], "spy", "secretary", panchayat_code="FAR")
    with pytest.raises(NotPermitted, match="outside your scope"):
        run(sessions, admin_officers.create, admins["jaipur"], "spy", "secretary", panchayat_code="FAR")
    assert user(sessions, "spy") is None


def test_an_administrator_makes_no_administrator_as_wide_as_themselves(sessions, admins):
    with pytest.raises(NotPermitted, match="made only by an administrator of a wider scope"):
        run(sessions, admin_officers.create, admins["rmp"], "adm3", "administrator", panchayat_code="RMP")
    with pytest.raises(NotPermitted, match="made only by an administrator of a wider scope"):
        run(sessions, admin_officers.create, admins["sam1"], "adm3", "administrator", samiti_code="SAM1")
    with pytest.raises(NotPermitted, match="whole installation"):
        run(sessions, admin_officers.create, admins["sam1"], "adm3", "receiving_officer")
    run(sessions, admin_officers.create, admins["sam1"], "adm3", "administrator", panchayat_code="KHR")
    assert user(sessions, "adm3").panchayat_id is not None


def test_a_district_administrator_manages_the_district_and_sees_its_cases_only(sessions, admins, drive):
    case = drive.start(ONE_COW)
    with sessions() as session:
        jaipur = session.get(User, admins["jaipur"].id)
        names = {u.username for u in admin_officers.officers(session, jaipur)}
        assert {"sec", "sec-khr", "app", "adm-rmp", "adm-sam1"} <= names
        assert "app-far" not in names and "admin" not in names
        assert users.can_see(session, jaipur, session.get(Case, case.id))
        assert [p.code for p in admin_officers.managed_panchayats(session, jaipur)] == ["KHR", "RMP"]
    with pytest.raises(NotFound):
        run(sessions, admin_officers.deactivate, admins["jaipur"], "app-far")


# -- deactivate, reactivate, reset, role -------------------------------------------------------------

def test_an_administrator_outside_the_scope_is_refused_every_act(sessions, admins):
    for fn, args in ((admin_officers.deactivate, ()), (admin_officers.reactivate, ()),
                     (admin_officers.reset_password, ()), (admin_officers.change_role, ("sarpanch",)),
                     (admin_officers.transfer, ("RMP",))):
        with pytest.raises(NotFound, match=r"no officer sec-khr is within your scope \(Gram Panchayat Rampura\)"):
            run(sessions, fn, admins["rmp"], "sec-khr", *args)
    assert user(sessions, "sec-khr").active


def test_nobody_raises_their_own_role(sessions, admins):
    with pytest.raises(NotPermitted, match="you cannot change your own role"):
        run(sessions, admin_officers.change_role, admins["rmp"], "adm-rmp", "sarpanch")
    with pytest.raises(NotPermitted, match="made only by an administrator of a wider scope"):
        run(sessions, admin_officers.change_role, admins["rmp"], "sec", "administrator")
    with pytest.raises(NotPermitted, match="as wide as yours"):  # a peer raising the other: the same
        run(sessions, admin_officers.change_role, admins["rmp2"], "adm-rmp", "sarpanch")
    assert user(sessions, "sec").role == "secretary"
    run(sessions, admin_officers.change_role, admins["sam1"], "sec", "administrator")
    raised = user(sessions, "sec")
    assert (raised.role, raised.samiti_code) == ("administrator", "SAM1")
    assert trail(sessions, "officer.role_changed") == [
        ("adm-sam1", {"officer": "sec", "old": "secretary", "new": "administrator"})]


def test_a_deactivated_administrator_is_reactivated_only_from_a_wider_scope(sessions, admins):
    run(sessions, admin_officers.deactivate, admins["sam1"], "adm-rmp")
    assert not user(sessions, "adm-rmp").active
    with pytest.raises(NotPermitted, match="only an administrator of a wider scope"):
        run(sessions, admin_officers.reactivate, admins["rmp2"], "adm-rmp")
    with pytest.raises(NotPermitted, match="your account is inactive"):  # the deactivated one acting
        run(sessions, admin_officers.reactivate, user(sessions, "adm-rmp"), "adm-rmp")
    assert not user(sessions, "adm-rmp").active
    run(sessions, admin_officers.reactivate, admins["sam1"], "adm-rmp")
    assert user(sessions, "adm-rmp").active
    with pytest.raises(Refused, match="already active"):
        run(sessions, admin_officers.reactivate, admins["sam1"], "adm-rmp")


def test_the_last_administrator_cannot_deactivate_themselves(sessions, admins):
    with pytest.raises(Refused, match="you are the last active administrator of the whole installation"):
        run(sessions, admin_officers.deactivate, admins["installation"], "admin")
    assert user(sessions, "admin").active
    run(sessions, admin_officers.deactivate, admins["rmp"], "adm-rmp")  # wider ones remain
    assert not user(sessions, "adm-rmp").active


def test_a_password_reset_gives_a_first_password_and_ends_the_sessions(sessions, admins):
    before = user(sessions, "sec")
    outcome = run(sessions, admin_officers.reset_password, admins["rmp"], "sec")
    after = user(sessions, "sec")
    assert after.must_change_password and after.session_key != before.session_key
    with sessions() as session:
        assert users.sign_in(session, "sec", PASSWORD, method=FAST_HASH) is None
        assert users.sign_in(session, "sec", outcome.first_password, method=FAST_HASH) is not None
    with pytest.raises(NotPermitted, match="your password page"):
        run(sessions, admin_officers.reset_password, admins["rmp"], "adm-rmp")
    with pytest.raises(NotPermitted, match="as wide as yours"):
        run(sessions, admin_officers.reset_password, admins["rmp"], "adm-rmp2")


# -- tasks are never stranded -------------------------------------------------------------------------

@pytest.fixture
def sec2(sessions, officers):
    with sessions() as session:
        made = users.create_user(session, "sec2", PASSWORD, "secretary", display_name="Second Secretary",
                                 panchayat_code="RMP", password_method=FAST_HASH)
        session.commit()
        return made


def at_publish(drive):
    drive.start(ONE_COW)
    drive.fire_past(ist_midnight("2026-01-09"))
    drive.move("2026-01-09T11:00:00+05:30")
    with drive.sessions() as session:
        [row] = [r for r in tasks.my_tasks(session, drive.officers["secretary"]) if r.element_id == "ut_publish_notice"]
    return row.task_id


def task_row(sessions, case_id, task_id):
    with sessions() as session:
        return session.scalar(select(CaseTask).where(CaseTask.case_id == case_id, CaseTask.task_id == task_id))


def test_deactivating_the_last_officer_of_a_role_with_open_tasks_needs_a_successor(sessions, admins, drive, sec2):
    task_id = at_publish(drive)
    run(sessions, admin_officers.deactivate, admins["rmp"], "sec2")  # another secretary remains: fine
    with pytest.raises(Refused) as refused:
        run(sessions, admin_officers.deactivate, admins["rmp"], "sec")
    assert refused.value.message.startswith("sec is the last active secretary there and 1 tasks of the secretary "
                                            f"are open ({drive.case().case_number})")
    assert refused.value.field_errors == {"successor": "required: the tasks would have nobody"}
    assert user(sessions, "sec").active
    run(sessions, admin_officers.reactivate, admins["rmp"], "sec2")
    uow.perform(sessions, "claim_task", tasklist.claim, drive.officers["secretary"], drive.case_id, task_id)
    with pytest.raises(Refused, match="the successor must be another active secretary"):
        run(sessions, admin_officers.deactivate, admins["rmp"], "sec", successor="sec-khr")
    outcome = run(sessions, admin_officers.deactivate, admins["rmp"], "sec", successor="SEC2")
    assert outcome.handed_over == [(drive.case().case_number, "Publish notice and open conditional auction")]
    row = task_row(sessions, drive.case_id, task_id)
    assert (row.claimed_by, row.assigned_to, row.state) == (sec2.id, sec2.id, "ready")
    assert trail(sessions, "officer.deactivated")[-1] == ("adm-rmp", {"officer": "sec", "successor": "sec2",
                                                                      "tasks": 1})


def test_a_transfer_hands_the_open_tasks_to_the_successor_and_tells_both(sessions, admins, drive, sec2):
    task_id = at_publish(drive)
    sec = drive.officers["secretary"]
    uow.perform(sessions, "claim_task", tasklist.claim, sec, drive.case_id, task_id)
    checked = admin_officers.check(sessions, admin_officers.transfer, admins["sam1"], "sec", "KHR", successor="sec2")
    assert [str(line) for line in checked.follows] == [
        "sec moves from Gram Panchayat Rampura to Gram Panchayat Kheri and is told; every session and API token "
        "of theirs ends.",
        f"Their 1 open tasks go to Second Secretary (sec2) (cases {drive.case().case_number}), who is told; each "
        "case's history says so."]
    assert task_row(sessions, drive.case_id, task_id).claimed_by == sec.id  # the check changed nothing
    run(sessions, admin_officers.transfer, admins["sam1"], "sec", "KHR", successor="sec2")
    row = task_row(sessions, drive.case_id, task_id)
    assert (row.claimed_by, row.assigned_to, row.assigned_by) == (sec2.id, sec2.id, admins["sam1"].id)
    with sessions() as session:
        moved = session.get(User, sec.id)
        assert session.get(type(drive.case()), drive.case_id).panchayat_id != moved.panchayat_id
        [event] = session.scalars(select(CaseEvent).where(CaseEvent.case_id == drive.case_id,
                                                          CaseEvent.name == "Task handed over"))
        assert json.loads(event.detail_json) == {"task": "Publish notice and open conditional auction",
                                                 "from": "Secretary", "to": "Second Secretary", "reason": "transfer"}
        assert event.actor_user_id == admins["sam1"].id
        told = {(n.user_id, n.template) for n in session.scalars(select(Notification).where(
            Notification.case_id.is_(None)))}
        assert told == {(sec.id, "officer_transferred"), (sec2.id, "tasks_received_transfer")}
    # the successor can act: the task is theirs
    drive.act("secretary", "ut_publish_notice", {"objection_period_days": 30, "full_price": "12000"}, user=sec2)
    assert task_row(sessions, drive.case_id, task_id).state == "completed"


def test_a_transfer_without_a_successor_gives_the_tasks_back_to_the_lane(sessions, admins, drive, sec2):
    task_id = at_publish(drive)
    uow.perform(sessions, "claim_task", tasklist.claim, drive.officers["secretary"], drive.case_id, task_id)
    outcome = run(sessions, admin_officers.transfer, admins["sam1"], "sec", "KHR")
    assert outcome.handed_over and task_row(sessions, drive.case_id, task_id).claimed_by is None
    with pytest.raises(Refused, match="name a successor"):  # sec2 is now the last secretary of RMP
        run(sessions, admin_officers.transfer, admins["sam1"], "sec2", "KHR")


def test_a_transfer_outside_the_scope_is_refused_and_changes_nothing(sessions, admins, drive, sec2):
    at_publish(drive)
    with pytest.raises(NotPermitted, match="the Panchayat KHR is outside your scope"):
        run(sessions, admin_officers.transfer, admins["rmp"], "sec", "KHR", successor="sec2")
    with pytest.raises(NotPermitted, match="the Panchayat FAR is outside your scope"):
        run(sessions, admin_officers.transfer, admins["sam1"], "sec", "FAR", successor="sec2")
    with pytest.raises(Refused, match="already in Gram Panchayat Rampura"):
        run(sessions, admin_officers.transfer, admins["sam1"], "sec", "RMP")
    with pytest.raises(Refused, match="only a Panchayat's pound keeper, secretary or sarpanch"):
        run(sessions, admin_officers.transfer, admins["installation"], "app", "KHR")
    assert user(sessions, "sec").panchayat_id == drive.case().panchayat_id


def test_a_transfer_ends_the_officers_api_tokens(sessions, admins, sec2):
    with sessions() as session:
        token = users.create_token(session, "sec2")
        session.commit()
        assert users.user_for_token(session, token) is not None
    run(sessions, admin_officers.transfer, admins["sam1"], "sec2", "KHR")
    with sessions() as session:
        assert users.user_for_token(session, token) is None


def test_the_command_line_transfers_and_deactivates_through_the_same_service(database_url, sessions, officers, sec2):
    from click.testing import CliRunner

    from webapp.cli import main

    moved = CliRunner().invoke(main, ["transfer-user", "sec2", "KHR", "--database", database_url])
    assert moved.exit_code == 0, moved.output
    assert "sec2 moves from Gram Panchayat Rampura to Gram Panchayat Kheri" in moved.output
    refused = CliRunner().invoke(main, ["set-role", "sec2", "sarpanch", "--successor", "nobody",
                                        "--database", database_url])
    assert refused.exit_code == 2 and "the successor must be another active secretary" in refused.output
    done = CliRunner().invoke(main, ["deactivate-user", "sec2", "--database", database_url])
    assert done.exit_code == 0 and not user(sessions, "sec2").active
    assert trail(sessions, "officer.transferred") == [(None, {"officer": "sec2", "old": "RMP", "new": "KHR"})]
