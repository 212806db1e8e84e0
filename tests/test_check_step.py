"""Check before it counts: what follows from an act, read off the act itself applied and rolled back
(uow.preview), on the pages (check → confirm, check → change) and in the API (dry_run)."""

from __future__ import annotations

import pytest

from tests.driver import ONE_COW, TWO_COWS, ist_midnight, publish
from webapp.errors import DeadlinePassed
from webapp.i18n import localize
from webapp.services.cases import cases
from webapp.services.running import uow
from webapp.services.tasks import tasks
from webapp.store.models import Case


def said(follows, language="en"):
    return [localize(f.text, language=language) for f in follows]


def preview_act(drive, role, element, data, **match):
    user = drive.officers[role]
    return uow.preview(drive.sessions, element, tasks.act, user, drive.case_id, element, data,
                       case_id=drive.case_id, user=user, **match)


def test_a_full_price_bid_previewed_says_the_sale_the_receipt_and_the_money_and_changes_nothing(drive):
    drive.start(ONE_COW)
    drive.fire_past(ist_midnight("2026-01-09"))
    publish(drive)
    drive.move("2026-01-10T15:00:00+05:30")
    before = drive.snapshot()
    follows = preview_act(drive, "secretary", "ut_record_bid", {"bidder": "Bidder B", "amount": "12000.00"})
    assert said(follows) == [
        "the auction closes: Bidder B buys the cattle for ₹12,000.00 (full price)",
        "the last day the buyer may not transfer the cattle will be Monday, 9 February 2026",
        "Receipt for auction money (conditional sale) RMP/2026/0001/R1 is issued",
        "₹12,000.00 goes from the buyer to the suspense account (auction money)",
    ]
    assert drive.snapshot() == before  # nothing recorded, no refusal either
    # the real act then says the same
    user = drive.officers["secretary"]
    _, told = uow.perform_told(drive.sessions, "ut_record_bid", tasks.act, user, drive.case_id, "ut_record_bid",
                               {"bidder": "Bidder B", "amount": "12000.00"}, case_id=drive.case_id, user=user)
    assert said(told) == said(follows)
    assert told[2].document_id is not None
    assert drive.file().sale.buyer == "Bidder B"


def test_the_death_of_the_last_animal_previewed_says_the_case_will_close(drive):
    drive.start(ONE_COW)
    before = drive.snapshot()
    pk = drive.officers["pound_keeper"]
    follows = uow.preview(drive.sessions, "record_death", cases.record_animal_event, pk, drive.case_id, "death",
                          position=1, case_id=drive.case_id, user=pk)
    texts = said(follows)
    assert texts[:3] == ["RJ-9 is recorded as dead on Monday, 5 January 2026", "no animal is left in the Panchayat's custody",
                         "the case closes: closed no animals"]
    assert drive.snapshot() == before
    assert drive.case().status == "running"


def test_publishing_the_notice_previewed_names_the_last_days(drive):
    drive.start(TWO_COWS)
    drive.fire_past(ist_midnight("2026-01-09"))
    drive.move("2026-01-09T11:00:00+05:30")
    follows = preview_act(drive, "secretary", "ut_publish_notice", {"objection_period_days": 30, "full_price": "12000"})
    texts = said(follows)
    assert "the conditional auction opens on Friday, 9 January 2026 and runs to Sunday, 11 January 2026" in texts
    assert "the last day for objections will be Sunday, 8 February 2026" in texts
    assert "the last day of the auction will be Sunday, 11 January 2026" in texts
    assert "“Record bid” opens for the secretary" in texts
    assert any(t.startswith("Notice of impounded cattle RMP/2026/0001/") for t in texts)
    hindi = said(follows, "hi")
    assert all(h != e for h, e in zip(hindi, texts, strict=False))  # every line has its Hindi


def test_a_refused_preview_is_not_written_into_the_history(drive):
    drive.start(ONE_COW)
    drive.fire_past(ist_midnight("2026-01-09"))
    publish(drive)
    drive.move("2026-01-12T00:00:00+05:30")
    refusals = sum(1 for e in drive.history() if e.kind == "refusal")
    with pytest.raises(DeadlinePassed):
        preview_act(drive, "secretary", "ut_record_bid", {"bidder": "A", "amount": "500"})
    assert sum(1 for e in drive.history() if e.kind == "refusal") == refusals


def test_the_api_dry_run_says_what_follows_and_records_nothing(drive, app, sessions, officers):
    from tests.deadline_races import make_tokens
    tokens = make_tokens(sessions, officers)
    drive.start(ONE_COW)
    drive.fire_past(ist_midnight("2026-01-09"))
    publish(drive)
    drive.move("2026-01-10T15:00:00+05:30")
    before = drive.snapshot()
    client = app.test_client()
    headers = {"Authorization": f"Bearer {tokens['secretary']}"}
    body = {"data": {"bidder": "Bidder B", "amount": "12000.00"}}
    response = client.post(f"/api/v1/cases/{drive.case_id}/acts/ut_record_bid?dry_run=true", json=body, headers=headers)
    assert response.status_code == 200, response.get_json()
    follows = response.get_json()["follows"]
    assert response.get_json()["dry_run"] is True
    assert next(f["text"] for f in follows) == "the auction closes: Bidder B buys the cattle for ₹12,000.00 (full price)"
    assert all(f["document_id"] is None for f in follows)  # nothing was issued
    assert drive.snapshot() == before
    bad = client.post(f"/api/v1/cases/{drive.case_id}/acts/ut_record_bid?dry_run=maybe", json=body, headers=headers)
    assert bad.status_code == 422 and bad.get_json()["error"]["fields"] == {"dry_run": "true or false"}
    objection = client.post(f"/api/v1/cases/{drive.case_id}/objections?dry_run=1", json={"objector": "Ram Lal"},
                            headers=headers)
    assert objection.status_code == 200
    assert "the objection of Ram Lal is recorded on Saturday, 10 January 2026" in [
        f["text"] for f in objection.get_json()["follows"]]
    assert drive.file().objections == []
    real = client.post(f"/api/v1/cases/{drive.case_id}/acts/ut_record_bid", json=body, headers=headers)
    assert real.status_code == 200 and drive.file().sale.buyer == "Bidder B"


def test_a_second_objection_says_that_a_second_claim_opens_for_the_sarpanch(sessions, officers, virtual_clock):
    from webapp.services.cases import cases
    from webapp.services.running import uow

    from .driver import TWO_COWS, Driver, ist_midnight, publish
    drive = Driver(sessions, officers, virtual_clock)
    drive.start(TWO_COWS)
    drive.fire_past(ist_midnight("2026-01-08"))
    publish(drive)
    drive.move("2026-01-12T10:00:00+05:30")
    drive.object("Objector A")
    secretary = officers["secretary"]
    said = uow.preview(sessions, "file_objection", cases.file_objection, secretary, drive.case_id, "Objector B",
                       case_id=drive.case_id, user=secretary)
    assert "“Decide ownership claim” opens for the sarpanch" in [f.as_json()["text"] for f in said]


def test_opening_a_case_on_the_page_shows_its_check_page_keeps_the_values_on_change_and_opens_on_confirm(
        app, sessions, officers, virtual_clock):
    """The pound keeper's new case passes the check step as every other act on the pages: the
    impoundment as it will be recorded (instant in the Panchayat's zone, places, each animal), the
    release window's last day (impoundment 5 January + 3 = 8 January, RULE130.md "Time"); nothing
    is recorded until Confirm; Change brings the form back with every value kept."""
    import lxml.html
    from sqlalchemy import func, select

    from tests.test_web_pages import ANIMALS, IMPOUNDED, at, element_text, login, text_of
    from webapp.store.models import Case

    virtual_clock.set(at("2026-01-05T10:05:00+05:30"))
    client = app.test_client()
    login(client, "pk")
    form = {"impounded_at": IMPOUNDED, "place_seized": "Bhimpura", "place_impounded": "Kanji House, Rampura",
            "nearest_village": "Bhimpura", "rows": "5", "submission": "key-00000001"}
    for n, (species, description, tag) in enumerate(ANIMALS, start=1):
        form.update({f"species-{n}": species, f"description-{n}": description, f"tag-{n}": tag})

    def count() -> int:
        with sessions() as session:
            return session.scalar(select(func.count()).select_from(Case)) or 0

    page = client.post("/cases/new", data={**form, "step": "check"})
    assert page.status_code == 200, text_of(page)
    values = lxml.html.fromstring(page.text).get_element_by_id("check-values")
    assert [(dt.text_content(), dd.text_content()) for dt, dd in zip(values.findall("dt"), values.findall("dd"),
                                                                      strict=True)] == [
        ("Impounded on", "Monday, 5 January 2026 10:00"), ("Place seized", "Bhimpura"),
        ("Place impounded (pound)", "Kanji House, Rampura"),
        ("Village nearest the place of seizure (where the notice is published)", "Bhimpura"),
        ("Animal 1", "cow, brown cow, white patch on forehead, tag RJ-1001"),
        ("Animal 2", "cow, black cow, left horn broken, tag RJ-1002")]
    assert "the owner may release the whole lot until the end of Thursday, 8 January 2026 (the 3-day release " \
           "window); after it the notice is published" in element_text(page, "check-follows")
    assert count() == 0
    change = client.post("/cases/new", data={**form, "step": "change"})
    assert change.status_code == 200 and count() == 0
    assert 'value="Kanji House, Rampura"' in change.text and 'value="RJ-1002"' in change.text
    assert 'value="key-00000001"' in change.text  # the same form key: a double Confirm still opens one case
    done = client.post("/cases/new", data={**form, "step": "confirm"})
    assert done.status_code == 302 and count() == 1
    again = client.post("/cases/new", data={**form, "step": "confirm"})
    assert again.status_code == 302 and count() == 1


def test_a_case_recorded_after_its_release_window_says_the_window_ended_and_the_notice_is_due(drive):
    """Impounded on 5 January, recorded on 12 January: the window ended with 8 January (impoundment
    + 3, RULE130.md "Time"); its timer takes effect in the same act, and the words say so rather
    than that the owner may still release."""
    drive.move("2026-01-12T10:00:00+05:30")
    pk = drive.officers["pound_keeper"]
    follows = uow.preview(drive.sessions, "start_case", cases.start_case, pk, impounded_at="2026-01-05T10:00:00+05:30",
                          place_seized="Bhimpura", place_impounded="Kanji House, Rampura", nearest_village="Bhimpura",
                          animals=ONE_COW, user=pk)
    texts = said(follows)
    assert "the 3-day release window ended with Thursday, 8 January 2026: the notice is due now" in texts
    assert not any(text.startswith("the owner may release") for text in texts)
    with drive.sessions() as session:
        assert session.query(Case).count() == 0  # a preview: nothing recorded
