"""A calf born in the pound (RULE130.md 0, reading): it joins the lot with no fine, is fed from its
birth day at its mother's rate, and goes with the lot. Two cows (fine 500.00, feeding 60.00 a day)
impounded on 2026-01-05; rupees worked by hand."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from webapp.errors import NotPermitted, Refused
from webapp.values import fees

from .conftest import PASSWORD
from .driver import TWO_COWS, ist_midnight, order_stand_to_final, publish, refused, sell

D = Decimal



def birth(drive, **fields):
    return drive.animal_event("birth", **fields)


def test_a_calf_joins_the_lot_without_a_fine_and_is_fed_from_its_birth_day(drive):
    drive.start(TWO_COWS)
    drive.move("2026-01-07T06:00:00+05:30")
    birth(drive, tag="RJ-1", calf_tag="RJ-1C", calf_description="brown calf")
    calf = drive.file().animals[2]
    assert (calf.position, calf.species, calf.description, calf.tag) == (3, "cow", "brown calf", "RJ-1C")
    assert (calf.fine, calf.feeding_per_day, calf.born_on, calf.mother) == (D("0.00"), D("60.00"), date(2026, 1, 7), 1)
    assert [e.name for e in drive.history() if e.kind == "task"][-1] == "Birth recorded"
    drive.move("2026-01-08T10:00:00+05:30")
    drive.act("pound_keeper", "ut_release", {"owner": "Owner M"})
    # F = 2 x 500 (the calf: none); C = 2 x 60 x 4 days (01-05..01-08) + 60 x 2 days (01-07, 01-08) = 600
    assert drive.entries() == [("owner", "pound_account", D("1600.00"), "fine_and_feeding", "reading: release")]
    assert drive.summary()["fees"]["pound_feeding"] == D("600.00")


def test_a_birth_recorded_late_counts_from_the_day_given_and_the_calf_is_sold_with_the_lot(drive):
    drive.start(TWO_COWS)
    drive.move("2026-01-08T09:00:00+05:30")
    birth(drive, position=2, born_on="2026-01-06")
    assert drive.file().animals[2].description == "calf of RJ-2"
    drive.fire_past(ist_midnight("2026-01-09"))
    publish(drive)
    sell(drive, "Bidder B", "12500.00", "2026-01-10T15:00:00+05:30")
    refused(drive, birth, drive, tag="RJ-1", match="RJ-1 is no longer in the pound")
    order_stand_to_final(drive)
    # C = 2 x 60 x 6 days (01-05..01-10) + the calf 60 x 5 days (01-06..01-10) = 1020; F + C = 2020
    assert drive.entries()[1:] == [
        ("suspense", "pound_account", D("2020.00"), "fine_and_feeding", "Rule 130(e)"),
        ("suspense", "panchayat_fund", D("10480.00"), "balance", "Rule 130(e)")]


def test_the_calf_of_a_case_with_a_buyer_counts_in_the_buyers_feeding(drive):
    drive.start(TWO_COWS)
    drive.move("2026-01-07T09:00:00+05:30")
    birth(drive, tag="RJ-1")
    f = drive.file()
    from webapp.values.casefile import Sale
    f.sale = Sale(buyer="B", amount=D("12500.00"), day=date(2026, 1, 10), kind="full_price",
                  returned_on=date(2026, 3, 5))
    # Cb: the living animals' rates (3 x 60) x the days after the sale up to the return (54)
    assert fees.buyer_feeding(f) == D("9720.00")


def test_a_calf_that_dies_stops_being_fed_and_a_lot_of_only_a_calf_is_not_gone(drive):
    drive.start(TWO_COWS)
    drive.move("2026-01-06T09:00:00+05:30")
    birth(drive, tag="RJ-1", calf_tag="C-1")
    drive.move("2026-01-07T09:00:00+05:30")
    drive.animal_event("death", tag="C-1")
    drive.animal_event("death", tag="RJ-1")
    drive.animal_event("escape", tag="RJ-2")
    case = drive.case()
    assert (case.status, case.outcome) == ("completed", "closed_no_animals")
    # F = 1000; C = 2 x 60 x 3 days (01-05..01-07) + the calf 60 x 2 days (01-06, 01-07) = 480
    assert drive.summary()["fees"]["shortfall"] == D("1480.00")


def test_a_second_calf_keeps_its_own_tag_and_the_lot_stays_while_a_calf_lives(drive):
    drive.start(TWO_COWS)
    drive.move("2026-01-06T09:00:00+05:30")
    birth(drive, tag="RJ-1", calf_tag="C-1")
    drive.animal_event("death", tag="RJ-1")
    drive.animal_event("death", tag="RJ-2")
    assert drive.case().status == "running"  # the calf is still in the pound
    refused(drive, birth, drive, tag="RJ-1", match="RJ-1 is already recorded as gone on 2026-01-06")


def test_a_calf_born_in_the_pound_is_not_a_mother(drive):
    drive.start(TWO_COWS)
    drive.move("2026-01-06T09:00:00+05:30")
    birth(drive, tag="RJ-1", calf_tag="C-1")
    drive.move("2026-01-07T09:00:00+05:30")
    refused(drive, birth, drive, tag="C-1", calf_tag="C-2",
            match="C-1 is a calf born in the pound on 2026-01-06; choose the calf's mother")
    assert [a.tag for a in drive.file().animals] == ["RJ-1", "RJ-2", "C-1"]


@pytest.mark.parametrize("fields, message", [
    ({"tag": "RJ-1", "born_on": "2026-01-08"}, "the day of birth 2026-01-08 is after today"),
    ({"tag": "RJ-1", "born_on": "2026-01-04"}, "in the pound since 2026-01-05; a calf born on 2026-01-04"),
    ({"tag": "RJ-1", "born_on": "7 Jan"}, "must be a date such as 2026-01-07"),
    ({"tag": "RJ-1", "calf_tag": "RJ-2"}, "the tag RJ-2 is already on an animal of this case"),
    ({"tag": "RJ-1", "calf_tag": "rj-2"}, "the tag rj-2 is already on an animal of this case"),
    ({"tag": "RJ-9"}, "no animal RJ-9"),
])
def test_a_bad_birth_is_refused_and_nothing_changes(drive, fields, message):
    drive.start(TWO_COWS)
    drive.move("2026-01-07T09:00:00+05:30")
    refused(drive, birth, drive, match=message, **fields)


def test_a_bullock_is_not_a_mother_and_only_the_pound_keeper_records_a_birth(drive, officers, sessions):
    from webapp.services.cases import cases
    from webapp.services.running import uow
    drive.start([{"species": "bullock", "description": "grey bullock", "tag": "B-1"}])
    drive.move("2026-01-06T09:00:00+05:30")
    refused(drive, birth, drive, tag="B-1", match="B-1 is a bullock")
    sec = officers["secretary"]
    with pytest.raises(NotPermitted):
        uow.perform(sessions, "record_birth", cases.record_animal_event, sec, drive.case_id, "birth", tag="B-1",
                    case_id=drive.case_id, user=sec)
    with pytest.raises(Refused, match="use death, escape or birth"):
        drive.animal_event("calving", tag="B-1")


def test_the_case_page_and_the_api_record_a_birth(client, drive, sessions):
    from webapp.services.people import users
    drive.start(TWO_COWS)
    drive.move("2026-01-07T09:00:00+05:30")
    assert client.post("/login", data={"username": "pk", "password": PASSWORD}).status_code == 302
    page = client.get(f"/cases/{drive.case_id}").get_data(as_text=True)
    assert f'action="/cases/{drive.case_id}/births"' in page
    response = client.post(f"/cases/{drive.case_id}/births", data={"mother": "1", "born_on": "2026-01-09"})
    assert response.status_code == 422
    assert "is after today" in response.get_data(as_text=True)
    response = client.post(f"/cases/{drive.case_id}/births", data={"mother": "1", "born_on": "2026-01-06",
                                                                    "calf_description": "white calf"})
    assert response.status_code == 302
    page = client.get(f"/cases/{drive.case_id}").get_data(as_text=True)
    assert "white calf" in page and "born in the pound on Tuesday, 6 January 2026 to animal 1" in page
    with sessions() as s:
        token = users.create_token(s, "pk")
        s.commit()
    response = client.post(f"/api/v1/cases/{drive.case_id}/animal-events",
                           json={"kind": "birth", "tag": "RJ-2", "calf_tag": "C-2"},
                           headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 201
    calf = response.get_json()["file"]["animals"][3]
    assert (calf["tag"], calf["fine"], calf["feeding_per_day"], calf["born_on"], calf["mother"]) == (
        "C-2", "0.00", "60.00", "2026-01-07", 2)


def test_no_birth_or_death_after_the_cattle_were_delivered_to_the_owner(drive):
    """Found by the property test: a calf recorded after the delivery of clause (d) (the claim
    proved while the cattle were unsold in the pound) changed C after F + C had been paid."""
    drive.start(TWO_COWS)
    drive.fire_past(ist_midnight("2026-01-09"))
    publish(drive)
    drive.fire_past(ist_midnight("2026-01-12"))  # the auction closes unsold
    drive.move("2026-01-13T10:00:00+05:30")
    drive.object("Owner P")
    drive.act("sarpanch", "ut_decide_objection", {"decision": "proved"}, objector="Owner P")
    drive.fire_past(ist_midnight("2026-02-13"))  # appeal window (01-13 + 30) ended: final
    drive.move("2026-02-13T11:00:00+05:30")
    drive.act("secretary", "ut_deliver_to_objector")
    # F = 1000; C = 2 x 60 x (01-05..02-13 = 40 days) = 4800, paid by the owner
    assert drive.entries() == [("objector", "pound_account", D("5800.00"), "fine_and_feeding", "Rule 130(d)")]
    refused(drive, birth, drive, tag="RJ-1", born_on="2026-02-01", match="RJ-1 is no longer in the pound")
    refused(drive, drive.animal_event, "death", tag="RJ-2", match="RJ-2 is no longer in the pound")


def test_a_calfs_default_description_reads_in_the_readers_language(drive, sessions, client):
    """Stored in English ("calf of RJ-2", like the ledger memos), shown in Hindi as Hindi."""
    from sqlalchemy import select

    from webapp.store.models import CaseDocument

    from .test_web_pages import login, text_of

    drive.start(TWO_COWS)
    drive.move("2026-01-07T06:00:00+05:30")
    birth(drive, position=2)
    assert drive.file().animals[2].description == "calf of RJ-2"
    drive.fire_past(ist_midnight("2026-01-09"))
    publish(drive)
    with sessions() as session:
        notices = {row.language: row.html for row in session.scalars(
            select(CaseDocument).where(CaseDocument.case_id == drive.case_id, CaseDocument.key == "notice"))}
    assert "<td>calf of RJ-2</td>" in notices["en"]
    assert "<td>RJ-2 का बछड़ा</td>" in notices["hi"] and "calf of" not in notices["hi"]
    login(client, "sec")
    client.post("/language", data={"lang": "hi", "next": "/"})
    page = text_of(client.get(f"/cases/{drive.case_id}"))
    assert "RJ-2 का बछड़ा" in page and "calf of" not in page


def test_once_every_animal_died_after_the_notice_the_case_closes_and_nothing_is_bid_or_sold(drive):
    """RULE130.md clause 0: no animal left in the pound after the notice closes the case (closed_no_animals):
    the auction, the objection period and the decision on unsold cattle end with it."""
    drive.start(TWO_COWS)
    drive.fire_past(ist_midnight("2026-01-09"))
    publish(drive)
    sell(drive, "Bidder A", "9000", "2026-01-10T09:00:00+05:30")
    drive.animal_event("death", tag="RJ-1")
    assert drive.case().status == "running"  # one cow still lives: the auction goes on
    drive.animal_event("death", tag="RJ-2")
    case, cf = drive.case(), drive.file()
    assert (case.status, case.outcome) == ("completed", "closed_no_animals")
    # F = 2 x 500; C = 2 x 60 x (01-05..01-10 = 6 days); no money came in
    assert cf.shortfall == Decimal("1720.00") and drive.all_ready() == {}
    refused(drive, drive.act, "secretary", "ut_record_bid", {"bidder": "Bidder B", "amount": "12000"},
            match="is closed")
    drive.fire_past(ist_midnight("2026-01-12"))  # the third auction day passes: nothing fires any more
    assert drive.case().next_timer_due is None and drive.all_ready() == {}
    assert drive.entries() == [] and drive.file().sale is None and drive.file().dispatch is None


def test_a_receiving_officer_named_by_a_shared_display_name_is_asked_for_by_user_name(drive, sessions, officers):
    from webapp.services.people import users

    from .conftest import FAST_HASH

    with sessions() as session:
        users.create_user(session, "recv2", PASSWORD, "receiving_officer", display_name="Gram Panchayat  kishanpura",
                          password_method=FAST_HASH)
        session.commit()
    drive.start(TWO_COWS)
    drive.fire_past(ist_midnight("2026-01-09"))
    publish(drive)
    drive.fire_past(ist_midnight("2026-01-12"))  # no bid: the auction closes unsold
    refused(drive, drive.act, "sarpanch", "ut_decide_unsold",
            {"choice": "cattle_fair", "receiver": "Gram Panchayat Kishanpura"},
            match="2 officers are called Gram Panchayat Kishanpura; give the user name of the one meant: recv, recv2")
    drive.act("sarpanch", "ut_decide_unsold", {"choice": "cattle_fair", "receiver": "recv2"})
    assert drive.file().dispatch.receiver_user_id != officers["receiving_officer"].id
    assert drive.case().receiving_officer_id == drive.file().dispatch.receiver_user_id
