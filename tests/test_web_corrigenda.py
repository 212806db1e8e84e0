"""The corrigendum on the pages (webapp.web.pages.corrigenda): the case page links each act; the
form shows the facts as recorded beside the amended values; the check step shows the old and new
values side by side and what follows, records nothing, and Confirm issues the corrigendum; a
refusal comes back beside the form (422); the refund owed is recorded as paid through its check."""

from __future__ import annotations

import lxml.html

from .test_web_pages import at, case_file, confirm_check, login, publish_notice, start_case_on_page, text_of


def _form_data(page) -> dict[str, str]:
    doc = lxml.html.fromstring(page.get_data(as_text=True))
    form = doc.xpath("//form[.//button[@id='corrigendum-check']]")[0]
    data = {i.name: i.value or "" for i in form.xpath(".//input") if i.name != "csrf_token"}
    data["reason"] = form.xpath(".//textarea")[0].text or ""
    return data


def test_the_secretary_amends_a_tag_of_the_opening_record_through_the_check_step(client, sessions, virtual_clock):
    case_id = start_case_on_page(client, virtual_clock)
    publish_notice(client, sessions, virtual_clock, case_id)
    virtual_clock.set(at("2026-01-09T12:00:00+05:30"))
    login(client, "sec")
    page = client.get(f"/cases/{case_id}")
    assert page.status_code == 200
    assert f"/cases/{case_id}/corrigenda/opening" in page.get_data(as_text=True)
    form = client.get(f"/cases/{case_id}/corrigenda/opening")
    assert form.status_code == 200
    data = _form_data(form)
    old_tag = case_file(sessions, case_id).animals[1].tag
    assert data["new.animals.2.tag"] == old_tag
    data.update({"new.animals.2.tag": "RJ-2002", "reason": "the tag reads RJ-2002"})
    checked = client.post(f"/cases/{case_id}/corrigenda/opening", data=data)
    assert checked.status_code == 200, text_of(checked)
    words = text_of(checked)
    assert f"{old_tag} RJ-2002" in words  # as recorded and amended to, side by side
    assert "is superseded and reissued under a new number" in words
    assert "A corrigendum notice is issued in English and Hindi." in words
    assert case_file(sessions, case_id).animals[1].tag == old_tag  # nothing recorded yet
    done = confirm_check(client, checked)
    assert done.status_code == 302
    assert case_file(sessions, case_id).animals[1].tag == "RJ-2002"
    after = text_of(client.get(f"/cases/{case_id}"))
    assert "Corrigendum" in after and "superseded by corrigendum" in after
    assert f"amended by corrigendum {case_file(sessions, case_id).case_number}/C1" in after  # the opening record's row
    assert f"animals.2.tag: {old_tag} → RJ-2002" in after  # the old fact beside the new, in the history


def test_a_refused_corrigendum_comes_back_beside_the_form_and_the_pound_keeper_may_not_issue_one(
        client, sessions, virtual_clock):
    case_id = start_case_on_page(client, virtual_clock)
    assert client.get(f"/cases/{case_id}/corrigenda/opening").status_code == 403  # the pound keeper
    login(client, "sec")
    data = _form_data(client.get(f"/cases/{case_id}/corrigenda/opening"))
    data.update({"new.impounded_at": "2026-01-04T10:00:00+05:30", "reason": "the day"})
    refused = client.post(f"/cases/{case_id}/corrigenda/opening", data=data)
    assert refused.status_code == 422
    assert "another course" in text_of(refused)
    assert "2026-01-04T10:00:00+05:30" in refused.get_data(as_text=True)  # the value typed is kept
    assert case_file(sessions, case_id).impounded_at == at("2026-01-05T10:00:00+05:30")
