"""Correcting a clerical mistake (RULE130.md "Correcting a clerical mistake";
webapp.services.cases.corrections): the case is put back exactly as the act found it — engine state,
tasks and their holders, timers, case file — the act's ledger entries are reversed, its documents
cancelled, who was told is told again, and the history and audit trail say so. Acts whose effects
left the Panchayat are refused, naming what to do instead. Cows: fine 500.00, feeding 60.00 a day;
impounded 2026-01-05 10:00 IST."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import lxml.html
import pytest
from sqlalchemy import select

from webapp.errors import NotPermitted, Refused
from webapp.services.cases import corrections
from webapp.services.jobs import timers
from webapp.services.papers import documents
from webapp.services.running import acts, uow
from webapp.services.tasks import tasklist
from webapp.store import audit
from webapp.store.models import Case, CaseAct, CaseDocument, CaseTask, LedgerEntry, Notification

from .driver import ONE_COW, TWO_COWS, at, ist_midnight, order_stand_to_final, publish, sell, send_unsold_to_kishanpura

D = Decimal



def correct(drive, role="secretary", reason="recorded in the wrong case", act_id=None):
    user = drive.officers[role]
    with drive.sessions() as s:
        act_id = act_id or acts.latest(s, drive.case_id).id
    return uow.perform(drive.sessions, "correct_act", corrections.correct, user, drive.case_id, act_id, reason,
                       case_id=drive.case_id, user=user)


def state(drive):
    """What a correction must put back: the case row's columns, the open task rows with their
    holders, the ledger's balances."""
    with drive.sessions() as s:
        case = s.get(Case, drive.case_id)
        columns = {name: getattr(case, name) for name in acts.COLUMNS}
        rows = sorted((r.task_id, r.element_id, r.claimed_by, r.assigned_to)
                      for r in s.scalars(select(CaseTask).where(CaseTask.case_id == drive.case_id,
                                                                CaseTask.state == tasklist.READY)))
    return columns, rows


def test_a_wrong_death_in_a_one_animal_case_is_corrected_and_the_case_goes_on_to_its_end(drive):
    drive.start(ONE_COW)
    drive.move("2026-01-06T09:00:00+05:30")
    before = state(drive)
    drive.animal_event("death", tag="RJ-9")
    assert (drive.case().status, drive.case().outcome) == ("completed", "closed_no_animals")
    drive.move("2026-01-06T12:00:00+05:30")
    correct(drive, role="pound_keeper", reason="the death was of another Panchayat's cow")
    columns, rows = state(drive)
    assert columns == before[0] and rows == before[1]
    assert (drive.case().status, drive.case().outcome) == ("running", "pending")
    assert drive.file().animals[0].died_on is None
    last, notice = drive.history()[-2:]
    assert (last.kind, last.name, last.actor_role) == ("correction", "Act corrected", "pound_keeper")
    assert (notice.kind, notice.name) == ("document", "Notice of correction")
    with drive.sessions() as s:
        issued = {(d.number, d.language, d.kind) for d in s.scalars(select(CaseDocument).where(
            CaseDocument.case_id == drive.case_id))}
        english = s.scalar(select(CaseDocument.html).where(CaseDocument.case_id == drive.case_id,
                                                            CaseDocument.language == "en"))
    assert issued == {("RMP/2026/0001/C1", "en", "correction_notice"), ("RMP/2026/0001/C1", "hi", "correction_notice")}
    assert "The act “Death recorded” recorded in this case on Tuesday, 6 January 2026 09:00" in english
    assert "the death was of another Panchayat&#39;s cow" in english
    # the release window's timer was put back: it fires at midnight after 2026-01-07 and the case goes on
    drive.fire_past(ist_midnight("2026-01-08"))
    publish(drive)
    assert drive.file().notice.last_day == date(2026, 2, 8)
    sell(drive, "Bidder B", "12000.00", "2026-01-09T15:00:00+05:30")
    order_stand_to_final(drive)
    case = drive.case()
    assert (case.status, case.outcome) == ("completed", "auction_final")
    # F = 500; C = 60 x 5 days (01-05..01-09) = 300; the balance 11200 to the fund
    assert drive.entries()[1:] == [("suspense", "pound_account", D("800.00"), "fine_and_feeding", "Rule 130(e)"),
                                   ("suspense", "panchayat_fund", D("11200.00"), "balance", "Rule 130(e)")]


def test_a_mistyped_bid_is_corrected_before_the_auction_closes_with_a_reversing_entry(drive):
    drive.start(TWO_COWS)
    drive.fire_past(ist_midnight("2026-01-08"))
    publish(drive)
    drive.move("2026-01-10T15:00:00+05:30")
    before = state(drive)
    drive.act("secretary", "ut_record_bid", {"bidder": "Bidder B", "amount": "1100.00"})  # meant 11000.00
    assert [b.amount for b in drive.file().auction.bids] == [D("1100.00")]
    drive.move("2026-01-10T15:30:00+05:30")
    correct(drive, reason="1100 typed for 11000")
    assert state(drive) == before
    assert drive.file().auction.bids == []
    with drive.sessions() as s:
        entries = [(e.from_account, e.to_account, e.amount, e.kind, e.reversal_of is not None)
                   for e in s.scalars(select(LedgerEntry).where(LedgerEntry.case_id == drive.case_id)
                                      .order_by(LedgerEntry.id))]
    # a bid below full price holds no money: nothing to reverse
    assert entries == []
    drive.act("secretary", "ut_record_bid", {"bidder": "Bidder B", "amount": "11000.00"})
    assert [b.amount for b in drive.file().auction.bids] == [D("11000.00")]


def test_a_full_price_bid_hands_the_cattle_to_the_buyer_and_is_refused_naming_what_to_do(drive):
    drive.start(TWO_COWS)
    drive.fire_past(ist_midnight("2026-01-08"))
    publish(drive)
    sell(drive, "Bidder B", "12000.00", "2026-01-10T15:00:00+05:30")
    with pytest.raises(Refused) as info:
        correct(drive)
    assert "sold the cattle to Bidder B, who took them on 2026-01-10" in info.value.message
    assert "record what happens next" in info.value.message
    assert drive.file().sale.buyer == "Bidder B"


def test_the_notice_is_corrected_its_documents_cancelled_and_issued_again_under_a_new_number(drive):
    drive.start(TWO_COWS)
    drive.fire_past(ist_midnight("2026-01-08"))
    before = state(drive)
    publish(drive, full_price="1200.00")  # meant 12000.00
    with drive.sessions() as s:
        issued = {(d.number, d.language) for d in s.scalars(select(CaseDocument).where(
            CaseDocument.case_id == drive.case_id))}
    assert issued == {("RMP/2026/0001/N1", "en"), ("RMP/2026/0001/N1", "hi")}
    drive.move("2026-01-09T12:00:00+05:30")
    correct(drive, reason="full price typed as 1200 for 12000")
    assert state(drive) == before
    with drive.sessions() as s:
        rows = list(s.scalars(select(CaseDocument).where(CaseDocument.case_id == drive.case_id,
                                                         CaseDocument.kind == "notice")))
        notice = s.scalar(select(CaseDocument.html).where(CaseDocument.case_id == drive.case_id,
                                                          CaseDocument.kind == "correction_notice",
                                                          CaseDocument.language == "en"))
        assert "Documents cancelled</dt><dd class=\"cancelled\">RMP/2026/0001/N1</dd>" in notice
        assert {(r.number, r.cancel_reason) for r in rows} == {("RMP/2026/0001/N1", "full price typed as 1200 for 12000")}
        assert all(r.cancelled_at is not None and documents.intact(s, s.get(Case, drive.case_id), r) for r in rows)
        page = documents.pdf_page(rows[0])
        assert "CANCELLED" in page and "full price typed as 1200 for 12000" in page
        assert audit.verify(s).ok
    publish(drive, when="2026-01-09T12:30:00+05:30")
    assert drive.file().notice.full_price == D("12000.00")
    with drive.sessions() as s:
        listed = documents.list_for_case(s, s.get(Case, drive.case_id))
    assert [(d.number, d.key, bool(d.versions["en"].cancelled_at)) for d in listed] == [
        ("RMP/2026/0001/N1", "notice", True), ("RMP/2026/0001/C1", "correction:1", False),
        ("RMP/2026/0001/N2", "notice#2", False)]


def test_the_roles_told_of_the_act_and_the_secretary_are_told_of_its_correction(drive):
    drive.start(TWO_COWS)
    drive.fire_past(ist_midnight("2026-01-08"))
    publish(drive)
    drive.move("2026-01-20T10:00:00+05:30")
    drive.object("Objector K")  # tells the sarpanch to decide the claim
    with drive.sessions() as s:
        mark = s.scalar(select(Notification.id).order_by(Notification.id.desc()).limit(1))
    correct(drive, reason="the objection was for case 0002")
    with drive.sessions() as s:
        told = sorted((n.user_id, n.template) for n in s.scalars(select(Notification).where(
            Notification.id > mark)))
        message = s.scalar(select(Notification.message).where(Notification.id > mark,
                                                              Notification.user_id == drive.officers["sarpanch"].id))
    assert told == [(drive.officers["sarpanch"].id, "act_corrected")]  # the secretary corrected it
    assert "the act 'Objection filed' of Tuesday, 20 January 2026 was corrected by Secretary" in message
    assert drive.file().objections == []
    assert ("ut_decide_objection" not in {e for e, _ in drive.ready("sarpanch")})


def test_only_the_latest_act_and_only_by_the_roles_the_reading_names(drive):
    drive.start(TWO_COWS)
    drive.fire_past(ist_midnight("2026-01-08"))
    publish(drive)
    sell(drive, "Bidder B", "5000.00", "2026-01-10T15:00:00+05:30")
    with drive.sessions() as s:
        notice_act, bid_act = [a.id for a in acts.of_case(s, drive.case_id)]
    with pytest.raises(NotPermitted, match="corrected by the secretary; you are signed in as pound keeper"):
        correct(drive, role="pound_keeper")
    with pytest.raises(Refused, match="the case moved on after the act “Publish notice and open conditional auction” \\(next: “Record bid”\\)"):
        correct(drive, act_id=notice_act)
    with pytest.raises(Refused, match="give the reason"):
        correct(drive, reason="  ")
    drive.fire_past(ist_midnight("2026-01-12"))  # the auction's third day (01-11) ends: its timer fires
    with pytest.raises(Refused, match="the case moved on after the act “Record bid” \\(next: “Third auction day ends”\\)"):
        correct(drive, act_id=bid_act)


def test_a_correction_after_the_time_the_reading_allows_is_refused_naming_the_last_day(drive):
    drive.start(TWO_COWS)
    drive.move("2026-01-06T09:00:00+05:30")
    drive.animal_event("death", tag="RJ-2")
    drive.move("2026-01-07T09:00:00+05:30")
    drive.animal_event("escape", tag="RJ-1")  # the last animal: the case closes
    drive.move("2026-01-15T00:00:00+05:30")
    with pytest.raises(Refused, match="could be corrected until 2026-01-14"):
        correct(drive)
    assert drive.case().status == "completed"


def test_a_decision_is_corrected_only_by_its_maker_on_its_day_and_money_paid_out_is_refused(drive):
    drive.start(TWO_COWS)
    drive.move("2026-01-06T09:00:00+05:30")
    drive.act("pound_keeper", "ut_release", {"owner": "Owner M"})
    # the owner paid in (money came in, none went out) but took the cattle away
    with pytest.raises(Refused, match="released the cattle to their owner Owner M on 2026-01-06"):
        correct(drive, role="pound_keeper")


def test_a_correction_dry_run_changes_nothing(drive):
    drive.start(ONE_COW)
    drive.move("2026-01-06T09:00:00+05:30")
    drive.animal_event("death", tag="RJ-9")
    before = state(drive)
    user = drive.officers["secretary"]
    with drive.sessions() as s:
        act_id = acts.latest(s, drive.case_id).id
    follows = uow.preview(drive.sessions, "correct_act", corrections.correct, user, drive.case_id, act_id,
                          "wrong case", case_id=drive.case_id, user=user)
    said = [f.as_json()["text"] for f in follows]
    assert said[:3] == ["the act “Death recorded” is undone: the case is back as it was before it",
                        "the case is open again", "RJ-9 is in the pound again in the records"]
    assert state(drive) == before
    with drive.sessions() as s:
        assert s.get(CaseAct, act_id).corrected_at is None


# -- the pages and the API ----------------------------------------------------------------------------

def test_the_case_page_corrects_a_wrong_death_through_the_check_step(app, drive):
    from .test_web_pages import login
    drive.start(ONE_COW)
    drive.move("2026-01-06T09:00:00+05:30")
    drive.animal_event("death", tag="RJ-9")
    with drive.sessions() as s:
        act_id = acts.latest(s, drive.case_id).id
    client = app.test_client()
    login(client, "pk")
    page = client.get(f"/cases/{drive.case_id}").get_data(as_text=True)
    assert "The latest act: “Death recorded”" in page and "Check the correction" in page
    form = {"act": str(act_id), "reason": "the cow of case 0002", "step": "check"}
    checked = client.post(f"/cases/{drive.case_id}/corrections", data=form)
    text = checked.get_data(as_text=True)
    assert checked.status_code == 200 and "Correct a clerical mistake" in text
    assert "the act “Death recorded” is undone: the case is back as it was before it" in text
    assert "the case is open again" in text and "RJ-9 is in the pound again in the records" in text
    assert drive.case().status == "completed"  # nothing recorded yet
    done = client.post(f"/cases/{drive.case_id}/corrections", data={**form, "step": "confirm"})
    assert done.status_code == 302
    assert (drive.case().status, drive.case().outcome) == ("running", "pending")
    page = client.get(f"/cases/{drive.case_id}").get_data(as_text=True)
    assert "The act “Death recorded” was corrected: the case is back as it was before it." in page
    assert "Act corrected" in page
    assert 'Death recorded <strong class="cancelled">corrected</strong>' in page  # the act's row says so
    assert "Check the correction" not in page  # the corrected act is not offered again; no other act is left


def test_another_panchayats_officer_gets_404_and_a_missing_reason_422_changing_nothing(app, drive):
    from .test_web_pages import login
    drive.start(ONE_COW)
    drive.move("2026-01-06T09:00:00+05:30")
    drive.animal_event("death", tag="RJ-9")
    with drive.sessions() as s:
        act_id = acts.latest(s, drive.case_id).id
    before = state(drive)
    client = app.test_client()
    login(client, "sec-khr")
    assert client.post(f"/cases/{drive.case_id}/corrections", data={"act": act_id, "reason": "x"}).status_code == 404
    client = app.test_client()
    login(client, "sec")
    refused = client.post(f"/cases/{drive.case_id}/corrections", data={"act": act_id, "reason": " ", "step": "check"})
    assert refused.status_code == 422 and "give the reason for the correction" in refused.get_data(as_text=True)
    # on a phone the form is thousands of pixels down: the refusal is said first, at the top, focused,
    # with a link to the form (which keeps what was entered), and the title starts with "Error:"
    page = lxml.html.fromstring(refused.get_data(as_text=True))
    assert page.findtext(".//title").startswith("Error: Case RMP/2026/0001")
    summary = page.get_element_by_id("error-summary")
    assert summary.get("autofocus") is not None and summary.get("role") == "alert"
    assert "give the reason for the correction" in summary.text_content()
    assert [(a.get("href"), a.text_content()) for a in summary.iter("a")] == [
        ("#correct", "Nothing was recorded: go to the form, with what you entered")]
    assert page.get_element_by_id("correct") is not None
    assert state(drive) == before


def test_the_api_lists_acts_and_corrects_one_with_a_dry_run_first(app, drive):
    from .deadline_races import make_tokens
    drive.start(ONE_COW)
    drive.move("2026-01-06T09:00:00+05:30")
    drive.animal_event("death", tag="RJ-9")
    tokens = make_tokens(drive.sessions, drive.officers)
    client = app.test_client()
    head = {"Authorization": f"Bearer {tokens['secretary']}"}
    listed = client.get(f"/api/v1/cases/{drive.case_id}/corrections", headers=head).get_json()
    act_id = listed["acts"][0]["id"]
    assert (listed["acts"][0]["name"], listed["correctable"]) == ("Death recorded", {"act": act_id, "refusal": None})
    dry = client.post(f"/api/v1/cases/{drive.case_id}/corrections?dry_run=true", headers=head,
                      json={"act": act_id, "reason": "wrong case"})
    assert dry.status_code == 200 and dry.get_json()["dry_run"] is True
    assert "the case is open again" in [f["text"] for f in dry.get_json()["follows"]]
    assert drive.case().status == "completed"
    done = client.post(f"/api/v1/cases/{drive.case_id}/corrections", headers=head,
                       json={"act": act_id, "reason": "wrong case"})
    assert done.status_code == 201 and done.get_json()["status"] == "running"
    again = client.post(f"/api/v1/cases/{drive.case_id}/corrections", headers=head,
                        json={"act": act_id, "reason": "wrong case"})
    assert again.status_code == 422 and "already corrected" in again.get_json()["error"]["message"]


# -- cattle back in custody (RULE130.md "Cattle back in custody") ---------------------------------------

def test_a_death_after_an_interim_return_is_recorded_and_its_feeding_stops_that_day(drive):
    from .test_paths import _interim_case
    _interim_case(drive)
    drive.move("2026-02-25T10:00:00+05:30")
    drive.act("secretary", "ut_return_by_objector")
    drive.move("2026-02-25T18:00:00+05:30")
    drive.animal_event("death", tag="RJ-9")  # the only cow, back in the pound: the case closes
    case = drive.case()
    assert (case.status, case.outcome) == ("completed", "closed_no_animals")
    # C = 60 x (01-05..01-10 = 6 days + the return day 02-25 = 1 day) = 420, not covered: F + C = 920
    assert drive.summary()["fees"]["pound_feeding"] == D("420.00")
    assert drive.summary()["fees"]["shortfall"] == D("920.00")


def test_a_corrected_remittance_is_reversed_in_the_ledger_and_counts_for_nothing_in_the_receipts_register(drive):
    from webapp.services.reports import registers
    from webapp.store.models import Panchayat
    send_unsold_to_kishanpura(drive)
    drive.move("2026-01-20T10:00:00+05:30")
    drive.act("receiving_officer", "ut_record_remittance", {"proceeds": "8000.00", "expenses": "7500.00"})
    drive.move("2026-01-20T11:00:00+05:30")
    correct(drive, role="receiving_officer", reason="the expenses were 750.00")
    drive.act("receiving_officer", "ut_record_remittance", {"proceeds": "8000.00", "expenses": "750.00"})
    assert drive.entries() == [
        ("receiving_officer", "suspense", D("500.00"), "remittance", "Rule 130(b) proviso"),
        ("suspense", "receiving_officer", D("500.00"), "reversal", "Rule 130(b) proviso"),
        ("receiving_officer", "suspense", D("7250.00"), "remittance", "Rule 130(b) proviso")]
    with drive.sessions() as s:
        panchayat = s.scalar(select(Panchayat).where(Panchayat.code == "RMP"))
        period = registers.period(panchayat, "2026-01-01", "2026-01-31")
        listed = registers.receipts(s, panchayat, period)
    assert [(r.number, r.amount, r.reversed, r.counted) for r in listed] == [
        ("RMP/2026/0001/R1", D("500.00"), True, D("0.00")), ("RMP/2026/0001/R2", D("7250.00"), False, D("7250.00"))]


def test_a_correction_after_a_timers_instant_meets_the_case_as_the_timer_left_it(drive):
    """Issue 34, item 3: the release window ends at 00:00 IST of 2026-01-09; a correction one second
    later, before the worker has fired the timer, is judged after it, as a bid would be: the case
    moved on, whatever the worker's lag. Refused, it changes nothing, and the worker fires the timer."""
    drive.start(TWO_COWS)
    drive.move("2026-01-08T21:00:00+05:30")
    drive.animal_event("death", tag="RJ-2")
    drive.move(at("2026-01-09T00:00:01+05:30"))  # past the window's end; no worker pass yet
    assert drive.case().next_timer_due == at("2026-01-09T00:00:00+05:30")
    with pytest.raises(Refused) as info:
        correct(drive, role="pound_keeper", reason="the death was of another Panchayat's cow")
    assert info.value.message.startswith("the case moved on after the act “Death recorded” (next: “")
    assert drive.file().animals[1].died_on == date(2026, 1, 8)  # the death stands
    assert drive.case().next_timer_due == at("2026-01-09T00:00:00+05:30")  # the firing went with the refusal
    assert timers.fire_due(drive.sessions) == 1


def test_a_correction_just_before_a_timers_instant_is_judged_before_it(drive):
    drive.start(TWO_COWS)
    drive.move("2026-01-08T21:00:00+05:30")
    drive.animal_event("death", tag="RJ-2")
    drive.move(at("2026-01-08T23:59:59+05:30"))
    correct(drive, role="pound_keeper", reason="the death was of another Panchayat's cow")
    assert drive.file().animals[1].died_on is None


def test_the_receipts_register_marks_the_papers_of_a_corrected_act_cancelled(app, drive):
    """Issue 30, item 4: the acknowledgement of a corrected remittance is CANCELLED in the register
    (page and CSV) as on the document itself; the one issued again is not."""
    from webapp.services.reports import registers
    from webapp.store.models import Panchayat

    from .test_web_pages import login
    send_unsold_to_kishanpura(drive)
    drive.move("2026-01-20T10:00:00+05:30")
    drive.act("receiving_officer", "ut_record_remittance", {"proceeds": "8000.00", "expenses": "7500.00"})
    drive.move("2026-01-20T11:00:00+05:30")
    correct(drive, role="receiving_officer", reason="the expenses were 750.00")
    drive.act("receiving_officer", "ut_record_remittance", {"proceeds": "8000.00", "expenses": "750.00"})
    with drive.sessions() as s:
        panchayat = s.scalar(select(Panchayat).where(Panchayat.code == "RMP"))
        listed = registers.receipts(s, panchayat, registers.period(panchayat, "2026-01-01", "2026-01-31"))
        cancelled = {d.number for d in s.scalars(select(CaseDocument).where(CaseDocument.cancelled_at.is_not(None)))}
    assert cancelled == {"RMP/2026/0001/A1"}
    assert [(r.number, r.papers, r.cancelled_papers) for r in listed] == [
        ("RMP/2026/0001/R1", ["RMP/2026/0001/A1"], ["RMP/2026/0001/A1"]),
        ("RMP/2026/0001/R2", ["RMP/2026/0001/A2"], [])]
    client = app.test_client()
    login(client, "sec")
    page = client.get("/registers/RMP/receipts?from=2026-01-01&to=2026-01-31").get_data(as_text=True)
    assert 'papers: RMP/2026/0001/A1 <strong class="cancelled">CANCELLED</strong></span>' in page
    assert "papers: RMP/2026/0001/A2</span>" in page
    lines = client.get("/registers/RMP/receipts.csv?from=2026-01-01&to=2026-01-31").get_data(as_text=True).splitlines()
    assert lines[1].endswith(",yes,RMP/2026/0001/A1 (CANCELLED)") and lines[2].endswith(",,RMP/2026/0001/A2")
