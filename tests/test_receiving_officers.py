"""The receiving officer of unsold cattle (Rule 130(b) proviso): chosen from a list of those who may
take the case, never typed (issue 29, item 5); replaced by the secretary while the officer named
has not acted (issue 30, item 2). Cows: fine 500.00, feeding 60.00 a day; impounded 2026-01-05
10:00 IST, notice 2026-01-09, auction unsold at the end of 2026-01-11."""

from __future__ import annotations

import lxml.html
import pytest

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
