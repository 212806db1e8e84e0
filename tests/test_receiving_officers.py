"""The receiving officer of unsold cattle (Rule 130(b) proviso): chosen from a list of those who may
take the case, never typed (issue 29, item 5); replaced by the secretary while the officer named
has not acted (issue 30, item 2). Cows: fine 500.00, feeding 60.00 a day; impounded 2026-01-05
10:00 IST, notice 2026-01-09, auction unsold at the end of 2026-01-11."""

from __future__ import annotations

from decimal import Decimal

import lxml.html
import pytest

from webapp.errors import NotFound
from webapp.services.people import users

from .driver import ONE_COW, ist_midnight, publish, refused
from .test_web_pages import PASSWORD, login, task_form, task_link, text_of


@pytest.fixture
def unsold(drive, sessions):
    """The case unsold on 2026-01-12, with more receiving officers: Kailash Meena (no Panchayat, may
    take it), one of Kheri (another Panchayat) and an inactive one (neither may)."""
    with sessions() as s:
        users.create_user(s, "kmeena", PASSWORD, "receiving_officer", display_name="Kailash Meena",
                          password_method="pbkdf2:sha256:1000")
        users.create_user(s, "recv-khr", PASSWORD, "receiving_officer", display_name="Kheri Receiver",
                          panchayat_code="KHR", password_method="pbkdf2:sha256:1000")
        users.create_user(s, "recv-old", PASSWORD, "receiving_officer", display_name="Old Receiver",
                          password_method="pbkdf2:sha256:1000")
        users.deactivate(s, "recv-old")
        s.commit()
    drive.start(ONE_COW)
    drive.fire_past(ist_midnight("2026-01-09"))
    publish(drive)
    drive.fire_past(ist_midnight("2026-01-12"))
    drive.move("2026-01-12T10:00:00+05:30")
    return drive


def test_the_receiving_officers_who_may_take_the_case_are_listed(unsold, sessions):
    with sessions() as s:
        case_number = unsold.case().case_number
        listed = [(u.username, u.display_name) for u in users.receiving_officers(s, case_number)]
    assert listed == [("recv", "Gram Panchayat Kishanpura"), ("kmeena", "Kailash Meena")]


def test_the_page_offers_a_list_of_receiving_officers_and_nothing_to_type(unsold, client):
    login(client, "sar")
    link = task_link(client, "Decide unsold cattle")
    doc = lxml.html.fromstring(client.get(link).get_data(as_text=True))
    assert doc.xpath("//input[@name='receiver']") == []
    options = [(o.get("value"), o.text_content()) for o in doc.xpath("//select[@name='receiver']/option")]
    assert options == [("", "— choose —"), ("recv", "Gram Panchayat Kishanpura (recv)"),
                       ("kmeena", "Kailash Meena (kmeena)")]
    assert "Receiving officer" in doc.xpath("//label[@for='f-receiver']")[0].text_content()
    form = {**task_form(client, link), "choice": "cattle_fair", "receiver": "kmeena", "step": "check"}
    checked = client.post(link, data=form)
    assert checked.status_code == 200
    assert "Kailash Meena (kmeena)" in text_of(checked)
    done = client.post(link, data={**form, "step": "confirm"})
    assert done.status_code == 302
    dispatch = unsold.file().dispatch
    assert (dispatch.send_to, dispatch.receiver, dispatch.day.isoformat()) == ("cattle_fair", "Kailash Meena",
                                                                               "2026-01-12")


def test_an_officer_of_another_panchayat_or_inactive_cannot_take_the_case(unsold):
    refused(unsold, unsold.act, "sarpanch", "ut_decide_unsold", {"choice": "cattle_fair", "receiver": "recv-khr"},
            match="recv-khr is a receiving officer of another Panchayat; choose one of the receiving officers who "
                  "may take this case from the list")
    refused(unsold, unsold.act, "sarpanch", "ut_decide_unsold", {"choice": "cattle_fair", "receiver": "recv-old"},
            match="no receiving officer is called recv-old")
    assert unsold.file().dispatch is None


# -- replacing a wrong receiving officer (issue 30, item 2) ---------------------------------------

def _sent_to_recv(unsold):
    unsold.act("sarpanch", "ut_decide_unsold", {"choice": "neighbouring_panchayat", "receiver": "recv"})
    unsold.move("2026-01-13T11:00:00+05:30")
    return unsold


def _user(sessions, username):
    from sqlalchemy import select

    from webapp.store.models import User
    with sessions() as s:
        user = s.scalar(select(User).where(User.username == username))
        s.expunge(user)
        return user


def _replace(drive, receiver="kmeena", reason="Kishanpura's officer is on leave", role="secretary"):
    from webapp.services.cases import receivers
    from webapp.services.running import uow
    user = drive.officers[role]
    return uow.perform(drive.sessions, "replace_receiver", receivers.replace, user, drive.case_id, receiver, reason,
                       case_id=drive.case_id, user=user)


def test_the_secretary_replaces_the_wrong_receiving_officer_who_is_told_as_is_the_right_one(unsold, sessions):
    import json

    from sqlalchemy import select

    from webapp.services.tasks import tasks
    from webapp.store.models import AuditEntry, CaseDocument, CaseEvent, Notification
    drive = _sent_to_recv(unsold)
    recv, kmeena = drive.officers["receiving_officer"], _user(sessions, "kmeena")
    _replace(drive)
    dispatch = drive.file().dispatch
    assert (dispatch.receiver, dispatch.receiver_user_id, dispatch.day.isoformat()) == (
        "Kailash Meena", kmeena.id, "2026-01-12")
    assert drive.case().receiving_officer_id == kmeena.id
    with sessions() as s:
        theirs = [(v.element_id, v.due.isoformat()) for v in tasks.my_tasks(s, kmeena) if v.case_id == drive.case_id]
        mine = [v.element_id for v in tasks.my_tasks(s, recv) if v.case_id == drive.case_id]
        told = sorted((n.user_id, n.template, n.message) for n in s.scalars(
            select(Notification).where(Notification.case_id == drive.case_id,
                                       Notification.template.like("receiver_replaced%"))))
        event = s.scalars(select(CaseEvent).where(CaseEvent.case_id == drive.case_id,
                                                  CaseEvent.kind == "receiver_replaced")).one()
        letters = [(d.number, d.key, d.cancelled_at is not None, d.cancel_reason) for d in s.scalars(
            select(CaseDocument).where(CaseDocument.case_id == drive.case_id, CaseDocument.kind == "dispatch_letter",
                                       CaseDocument.language == "en").order_by(CaseDocument.id))]
        new_letter = s.scalars(select(CaseDocument).where(CaseDocument.case_id == drive.case_id,
                                                          CaseDocument.number == "RMP/2026/0001/L2",
                                                          CaseDocument.language == "en")).one().html
        audited = [e.kind for e in s.scalars(select(AuditEntry).where(AuditEntry.case_id == drive.case_id))]
    assert theirs == [("ut_record_remittance", "2026-01-27")]  # the dispatch day + 15, as before
    assert mine == []
    assert told == sorted([
        (recv.id, "receiver_replaced_old", "RMP/2026/0001: the secretary Secretary named Kailash Meena (kmeena) as the "
         "receiving officer in your place: Kishanpura's officer is on leave. The case is no longer yours; record "
         "nothing in it."),
        (kmeena.id, "receiver_replaced_new", "RMP/2026/0001: cattle were sent to you for sale in place of Gram "
         "Panchayat Kishanpura (recv), named by mistake: Kishanpura's officer is on leave. Record the sale and the "
         "remittance.")])
    detail = json.loads(event.detail_json)
    assert (event.name, event.actor_role, detail["from"], detail["to"], detail["reason"],
            detail["documents_cancelled"]) == ("Receiving officer replaced", "secretary",
                                               "Gram Panchayat Kishanpura (recv)", "Kailash Meena (kmeena)",
                                               "Kishanpura's officer is on leave", ["RMP/2026/0001/L1"])
    assert letters == [
        ("RMP/2026/0001/L1", "dispatch_letter", True,
         "receiving officer replaced by Kailash Meena (kmeena): Kishanpura's officer is on leave"),
        ("RMP/2026/0001/L2", "dispatch_letter#2", False, None)]
    assert "Kailash Meena" in new_letter
    assert "case.receiver_replaced" in audited
    # the new officer acts; the old one no longer sees the case
    drive.move("2026-01-20T10:00:00+05:30")
    with pytest.raises(NotFound):
        drive.act("receiving_officer", "ut_record_remittance", {"proceeds": "8000.00", "expenses": "750.00"})
    drive.act("receiving_officer", "ut_record_remittance", {"proceeds": "8000.00", "expenses": "750.00"}, user=kmeena)
    assert drive.file().dispatch.net == Decimal("7250.00")


def test_replacing_is_refused_once_the_officer_has_acted_and_for_the_wrong_people(unsold, sessions):
    from webapp.errors import NotPermitted
    drive = _sent_to_recv(unsold)
    refused(drive, _replace, drive, role="pound_keeper", error=NotPermitted,
            match="only the secretary may do this; you are signed in as pound keeper")
    refused(drive, _replace, drive, receiver="recv", match="Gram Panchayat Kishanpura is already the receiving officer")
    refused(drive, _replace, drive, receiver="recv-khr",
            match="recv-khr is not one of the receiving officers who may take this case; choose one from the list: "
                  "Gram Panchayat Kishanpura (recv), Kailash Meena (kmeena)")
    refused(drive, _replace, drive, reason=" ", match="give the reason")
    drive.move("2026-01-20T10:00:00+05:30")
    drive.act("receiving_officer", "ut_record_remittance", {"proceeds": "8000.00", "expenses": "750.00"})
    refused(drive, _replace, drive, match="Gram Panchayat Kishanpura recorded the remittance on 2026-01-20: the "
                                         "officer who sold the cattle stays named")
    assert drive.file().dispatch.receiver == "Gram Panchayat Kishanpura"


def test_the_case_page_replaces_the_receiving_officer_through_the_check_step(unsold, client, sessions):
    drive = _sent_to_recv(unsold)
    login(client, "sec")
    page = client.get(f"/cases/{drive.case_id}")
    doc = lxml.html.fromstring(page.get_data(as_text=True))
    options = [(o.get("value"), o.text_content()) for o in doc.xpath("//select[@name='receiver']/option")]
    assert options == [("", "— choose —"), ("kmeena", "Kailash Meena (kmeena)")]  # not the one named
    form = {"receiver": "kmeena", "reason": "named by mistake", "step": "check"}
    checked = client.post(f"/cases/{drive.case_id}/receiving-officer", data=form)
    text = text_of(checked)
    assert checked.status_code == 200 and "Name another receiving officer" in text
    assert "the case goes to the receiving officer Kailash Meena in place of Gram Panchayat Kishanpura" in text
    assert "Letter sending unsold cattle for sale RMP/2026/0001/L2 is issued" in text
    assert drive.file().dispatch.receiver == "Gram Panchayat Kishanpura"  # nothing recorded yet
    done = client.post(f"/cases/{drive.case_id}/receiving-officer", data={**form, "step": "confirm"})
    assert done.status_code == 302
    assert drive.file().dispatch.receiver == "Kailash Meena"
    after = text_of(client.get(f"/cases/{drive.case_id}"))
    assert "Kailash Meena (kmeena) is now the receiving officer of the case." in after
    assert "Receiving officer replaced" in after
    bad = client.post(f"/cases/{drive.case_id}/receiving-officer", data={"receiver": "", "reason": "x", "step": "check"})
    assert bad.status_code == 422 and "choose the receiving officer from the list" in text_of(bad)
    login(client, "sec-khr")  # another Panchayat's secretary
    assert client.post(f"/cases/{drive.case_id}/receiving-officer", data=form).status_code == 404


def test_the_api_replaces_the_receiving_officer_with_a_dry_run_first(unsold, app, sessions, officers):
    from tests.deadline_races import make_tokens
    drive = _sent_to_recv(unsold)
    tokens = make_tokens(sessions, officers)
    api = app.test_client()
    headers = {"Authorization": f"Bearer {tokens['secretary']}"}
    url = f"/api/v1/cases/{drive.case_id}/receiving-officer"
    body = {"receiver": "kmeena", "reason": "named by mistake"}
    before = drive.snapshot()
    dry = api.post(url + "?dry_run=true", json=body, headers=headers)
    assert dry.status_code == 200 and dry.get_json()["dry_run"] is True
    assert "the case goes to the receiving officer Kailash Meena in place of Gram Panchayat Kishanpura, who no " \
           "longer sees it" in [f["text"] for f in dry.get_json()["follows"]]
    assert drive.snapshot() == before
    unknown = api.post(url, json={**body, "to": "x"}, headers=headers)
    assert unknown.status_code == 422 and unknown.get_json()["error"]["fields"] == {"to": "unknown field"}
    done = api.post(url, json=body, headers=headers)
    assert done.status_code == 201, done.get_json()
    assert done.get_json()["file"]["dispatch"]["receiver"] == "Kailash Meena"
    keeper = {"Authorization": f"Bearer {tokens['pound_keeper']}"}
    assert api.post(url, json=body, headers=keeper).status_code == 403
