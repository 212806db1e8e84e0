"""Tariffs with effective dates (webapp.services.money.tariffs): a case takes the rates in force on its
local impoundment day; administrators add rates from a later day, within their scope; the page and
the API. The virtual clock starts at 2026-01-05 10:00 IST; rupees are worked by hand."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal

import pytest
from sqlalchemy import select

from webapp.errors import EngineFailure, NotFound, NotPermitted, Refused
from webapp.services.money import tariffs
from webapp.services.people import users
from webapp.services.running import uow
from webapp.store.models import AuditEntry, Case, Panchayat, TariffRate
from webapp.values import casefile

from .conftest import FAST_HASH, PASSWORD
from .driver import Driver

D = Decimal
COW = [{"species": "cow", "description": "brown cow", "tag": "RJ-1"}]


def add(sessions, admin, code=None, **fields):
    values = {"species": "cow", "fine": "550.00", "feeding_per_day": "65.50", "effective_from": "2026-01-06",
              "note": ""} | fields
    return uow.perform(sessions, "add_tariff", tariffs.add, admin, code, **values)


def rates(sessions, code, day):
    with sessions() as s:
        panchayat = s.scalar(select(Panchayat).where(Panchayat.code == code))
        return {k: (v.fine, v.feeding_per_day, v.scope) for k, v in tariffs.in_force(s, panchayat.id, day).items()}


def animals_of(sessions, case_id):
    with sessions() as s:
        cf = casefile.load(s.get(Case, case_id).file_json)
    return [(a.species, a.fine, a.feeding_per_day) for a in cf.animals]


def test_the_migration_seeds_the_example_rates_for_the_installation(sessions, officers):
    seeded = rates(sessions, "RMP", date(2026, 1, 5))
    assert seeded["cow"] == (D("500.00"), D("60.00"), "installation")
    assert seeded["bullock"] == (D("450.00"), D("75.25"), "installation")
    assert seeded["sheep"] == (D("80.00"), D("15.00"), "installation")
    assert list(seeded) == ["cow", "bullock", "buffalo", "camel", "horse", "goat", "sheep"]


def test_a_case_takes_the_tariff_of_its_local_impoundment_day(sessions, officers, virtual_clock):
    add(sessions, officers["administrator"], fine="550.00", feeding_per_day="65.50", effective_from="2026-01-06")
    drive = Driver(sessions, officers, virtual_clock)
    drive.move("2026-01-06T12:00:00+05:30")
    before = drive.start(COW, impounded_at="2026-01-05T23:59:59+05:30").id  # the day before: old rates
    day_of = drive.start(COW, impounded_at="2026-01-05T18:30:00+00:00").id  # 00:00 IST on 01-06: new rates
    assert animals_of(sessions, before) == [("cow", D("500.00"), D("60.00"))]
    assert animals_of(sessions, day_of) == [("cow", D("550.00"), D("65.50"))]
    # released by the owner on 01-07: F + C with each case's own rates
    drive.move("2026-01-07T10:00:00+05:30")
    for case_id in (before, day_of):
        drive.case_id = case_id
        drive.act("pound_keeper", "ut_release", {"owner": "Owner M"})
    drive.case_id = before
    assert drive.entries() == [("owner", "pound_account", D("680.00"), "fine_and_feeding", "reading: release")]
    drive.case_id = day_of  # 550.00 + 65.50 x 2 days (01-06, 01-07)
    assert drive.entries() == [("owner", "pound_account", D("681.00"), "fine_and_feeding", "reading: release")]


def test_a_panchayat_rate_overrides_the_installation_for_that_panchayat_only(sessions, officers, virtual_clock):
    with sessions() as s:
        rmp_admin = users.create_user(s, "admin-rmp", PASSWORD, "administrator", panchayat_code="RMP",
                                      password_method=FAST_HASH)
        s.commit()
    add(sessions, rmp_admin, "", fine="450.00", feeding_per_day="55.00", effective_from="2026-01-06")
    add(sessions, officers["administrator"], fine="600.00", feeding_per_day="70.00", effective_from="2026-01-08")
    assert rates(sessions, "RMP", date(2026, 1, 5))["cow"] == (D("500.00"), D("60.00"), "installation")
    assert rates(sessions, "RMP", date(2026, 1, 6))["cow"] == (D("450.00"), D("55.00"), "panchayat")
    assert rates(sessions, "RMP", date(2026, 1, 9))["cow"] == (D("450.00"), D("55.00"), "panchayat")
    assert rates(sessions, "RMP", date(2026, 1, 9))["goat"] == (D("100.00"), D("20.00"), "installation")
    assert rates(sessions, "KHR", date(2026, 1, 9))["cow"] == (D("600.00"), D("70.00"), "installation")
    with pytest.raises(NotFound, match="no Panchayat KHR is open to you"):
        add(sessions, rmp_admin, "KHR")


def test_a_new_rate_takes_effect_only_from_a_later_day(sessions, officers, virtual_clock):
    admin = officers["administrator"]
    with pytest.raises(Refused, match="choose 2026-01-06 or later") as refused:
        add(sessions, admin, effective_from="2026-01-05")
    assert refused.value.field_errors == {"effective_from": "too early"}
    # a Panchayat in a zone already in 01-06 pushes the installation's first day to 01-07
    with sessions() as s:
        users.create_panchayat(s, "NZL", "Far East", "SAM9", timezone="Pacific/Kiritimati")  # UTC+14
        s.commit()
    virtual_clock.set(datetime.fromisoformat("2026-01-05T23:00:00+05:30"))  # 07:30 on 01-06 in Kiritimati
    with pytest.raises(Refused, match="choose 2026-01-07 or later"):
        add(sessions, admin, effective_from="2026-01-06")
    assert add(sessions, admin, "RMP", effective_from="2026-01-06").panchayat_id is not None


def test_a_rate_more_than_five_years_ahead_is_refused_as_a_mistyped_year(sessions, officers, virtual_clock):
    admin = officers["administrator"]  # today 2026-01-05: the first allowed day is 2026-01-06
    for typed in ("9999-04-01", "2031-01-07"):
        with pytest.raises(Refused, match="at most 5 years ahead; check the year: choose 2031-01-06 or earlier") as refused:
            add(sessions, admin, effective_from=typed)
        assert refused.value.field_errors == {"effective_from": "too far ahead"}
    assert add(sessions, admin, effective_from="2031-01-06").effective_from == date(2031, 1, 6)


@pytest.mark.parametrize("fields, message", [
    ({"species": "yak"}, "unknown species yak"),
    ({"fine": "-1"}, "cannot be negative"),
    ({"feeding_per_day": "12.345"}, "at most two decimals"),
    ({"fine": 550.0}, "give the amount as text"),
    ({"effective_from": "06-01-2026"}, "must be a date such as 2026-04-01"),
    ({"note": "x" * 501}, "longer than 500 characters"),
])
def test_a_bad_rate_is_refused_and_nothing_is_added(sessions, officers, virtual_clock, fields, message):
    with pytest.raises(Refused, match=message):
        add(sessions, officers["administrator"], **fields)
    with sessions() as s:
        assert len(s.scalars(select(TariffRate)).all()) == 7


ZERO_FINE = ("the fine is ₹0.00: a Panchayat may waive it, but a zero is usually a typing slip; write in the note why "
             "it is zero")


@pytest.mark.parametrize("fields, message, field_errors", [
    ({"fine": "0"}, ZERO_FINE,
     {"fine": "₹0.00: say why in the note", "note": "needed: why the rate is zero"}),
    ({"feeding_per_day": "0.00", "note": "   "},
     "the feeding per day is ₹0.00: a Panchayat may waive it, but a zero is usually a typing slip; write in the "
     "note why it is zero",
     {"feeding_per_day": "₹0.00: say why in the note", "note": "needed: why the rate is zero"}),
    ({"fine": "0.00", "feeding_per_day": "0"},
     "the fine and the feeding per day are ₹0.00: a Panchayat may waive them, but a zero is usually a typing slip; "
     "write in the note why they are zero",
     {"fine": "₹0.00: say why in the note", "feeding_per_day": "₹0.00: say why in the note",
      "note": "needed: why the rate is zero"}),
])
def test_a_zero_rate_without_a_note_is_refused_naming_it_and_nothing_is_written(sessions, officers, virtual_clock,
                                                                                fields, message, field_errors):
    with pytest.raises(Refused) as refused:
        add(sessions, officers["administrator"], **fields)
    assert refused.value.message == message
    assert refused.value.field_errors == field_errors
    with sessions() as s:
        assert len(s.scalars(select(TariffRate)).all()) == 7
        assert s.scalars(select(AuditEntry).where(AuditEntry.kind == "tariff.added")).all() == []


def test_a_zero_rate_with_a_note_saying_why_is_added(sessions, officers, virtual_clock):
    row = add(sessions, officers["administrator"], "RMP", fine="0.00", feeding_per_day="0",
              note="fine and feeding waived for the drought of 2026 (resolution 12/2026)")
    assert (row.fine, row.feeding_per_day, row.note) == (D("0.00"), D("0.00"),
                                                         "fine and feeding waived for the drought of 2026 "
                                                         "(resolution 12/2026)")
    assert rates(sessions, "RMP", date(2026, 1, 6))["cow"] == (D("0.00"), D("0.00"), "panchayat")


def test_only_an_administrator_sets_tariffs(sessions, officers, virtual_clock):
    with pytest.raises(NotPermitted, match="only an administrator sets tariffs"):
        add(sessions, officers["secretary"], "RMP")


def test_a_scheduled_rate_is_superseded_by_a_later_one_of_the_same_day(sessions, officers, virtual_clock):
    admin = officers["administrator"]
    first = add(sessions, admin, fine="550.00", effective_from="2026-01-10")
    second = add(sessions, admin, fine="555.00", effective_from="2026-01-10", note="typo in the first")
    assert rates(sessions, "RMP", date(2026, 1, 10))["cow"][0] == D("555.00")
    with sessions() as s:
        standing = {h.rate.id: h.status for h in tariffs.history(s, None)}
        assert standing[first.id] == "superseded" and standing[second.id] == "scheduled"
        seeded_cow = s.scalar(select(TariffRate).where(TariffRate.species == "cow", TariffRate.id < first.id))
        assert standing[seeded_cow.id] == "in_force"
        audited = s.scalars(select(AuditEntry).where(AuditEntry.kind == "tariff.added")).all()
        assert len(audited) == 2
    virtual_clock.set(datetime.fromisoformat("2026-01-12T10:00:00+05:30"))
    with sessions() as s:
        standing = {h.rate.id: h.status for h in tariffs.history(s, None)}
        assert (standing[seeded_cow.id], standing[second.id]) == ("replaced", "in_force")


def test_a_rate_is_never_changed(sessions, officers):
    with sessions() as s:
        row = s.scalar(select(TariffRate))
        row.fine = D("1.00")
        with pytest.raises(EngineFailure, match="tariffs are never edited"):
            s.flush()
        s.rollback()


# -- the page and the API -------------------------------------------------------------------------

def sign_in(client, username):
    assert client.post("/login", data={"username": username, "password": PASSWORD}).status_code == 302


def test_the_tariffs_page_shows_rates_and_adds_one(client, virtual_clock):
    sign_in(client, "admin")
    page = client.get("/admin/tariffs").get_data(as_text=True)
    assert "The whole installation" in page and "₹500.00" in page and 'min="2026-01-06"' in page
    response = client.post("/admin/tariffs", data={"panchayat": "", "species": "cow", "fine": "550",
                                                   "feeding_per_day": "65.50", "effective_from": "2026-01-05"})
    assert response.status_code == 422
    assert "choose Tuesday, 6 January 2026 or later" in response.get_data(as_text=True)
    response = client.post("/admin/tariffs", data={"panchayat": "RMP", "species": "cow", "fine": "550",
                                                   "feeding_per_day": "65.50", "effective_from": "2026-02-01"})
    assert response.status_code == 302
    page = client.get("/admin/tariffs?panchayat=RMP").get_data(as_text=True)
    assert "Gram Panchayat Rampura (RMP)" in page and "₹550.00" in page and "scheduled" in page
    assert client.get("/admin/tariffs?panchayat=NOPE").status_code == 404


def test_the_tariffs_page_asks_for_the_note_of_a_zero_fine_in_the_officers_language(client, virtual_clock):
    sign_in(client, "admin")
    form = {"panchayat": "RMP", "species": "cow", "fine": "0", "feeding_per_day": "65.50",
            "effective_from": "2026-02-01", "note": ""}
    response = client.post("/admin/tariffs", data=form)
    assert response.status_code == 422
    page = response.get_data(as_text=True)
    assert ZERO_FINE in page and 'id="note" name="note" maxlength="500" value="" aria-describedby="note-help" ' \
        'aria-invalid="true"' in page
    client.post("/language", data={"lang": "hi"})
    page = client.post("/admin/tariffs", data=form).get_data(as_text=True)
    assert ("जुर्माना ₹0.00 है: पंचायत इसे माफ़ कर सकती है, पर शून्य प्रायः टाइप करने की भूल होती है; टिप्पणी में लिखें कि "
            "यह शून्य क्यों है") in page
    response = client.post("/admin/tariffs", data=form | {"note": "waived by resolution 12/2026"})
    assert response.status_code == 302


def test_the_tariffs_page_is_for_administrators(client):
    sign_in(client, "pk")
    assert client.get("/admin/tariffs").status_code == 403


def test_the_tariffs_api(client, sessions, virtual_clock):
    with sessions() as s:
        token = users.create_token(s, "admin")
        s.commit()
    headers = {"Authorization": f"Bearer {token}"}
    response = client.post("/api/v1/tariffs", json={"panchayat": "RMP", "species": "goat", "fine": "120.00",
                                                    "feeding_per_day": "25.00", "effective_from": "2026-03-01"},
                           headers=headers)
    assert response.status_code == 201
    assert response.get_json()["fine"] == "120.00"
    body = client.get("/api/v1/tariffs?panchayat=RMP&on=2026-03-01", headers=headers).get_json()
    assert body["in_force"]["goat"] == {"fine": "120.00", "feeding_per_day": "25.00", "effective_from": "2026-03-01",
                                        "scope": "panchayat"}
    assert body["in_force"]["cow"]["fine"] == "500.00"
    assert [h["status"] for h in body["history"]] == ["scheduled"]
    body = client.get("/api/v1/tariffs?panchayat=RMP", headers=headers).get_json()
    assert (body["on"], body["in_force"]["goat"]["fine"]) == ("2026-01-05", "100.00")
    response = client.post("/api/v1/tariffs", json={"species": "goat", "fine": "1", "feeding_per_day": "1",
                                                    "effective_from": "2026-01-05"}, headers=headers)
    assert response.status_code == 422 and response.get_json()["error"]["fields"] == {"effective_from": "too early"}


def test_a_training_panchayats_rates_start_after_the_today_of_its_own_clock(sessions, officers, virtual_clock):
    """The trainees moved TRN1's clock 45 days ahead (real 3 December 2026, training 17 January 2027):
    its "today" is the training one, so a rate from 10 December 2026 — after the real today but
    already past on its clock — is refused (it would change cases already impounded there), and the
    first allowed day is 18 January 2027. A live Panchayat's first day stays the real tomorrow."""
    virtual_clock.set(datetime.fromisoformat("2026-12-03T12:00:00+05:30"))
    with sessions() as s:
        trn = users.create_panchayat(s, "TRN1", "Training", "TRAINING-TRN1", training=True)
        trn.clock_offset_seconds = 45 * 86400
        s.commit()
    with sessions() as s:
        trn = s.scalar(select(Panchayat).where(Panchayat.code == "TRN1"))
        rmp = s.scalar(select(Panchayat).where(Panchayat.code == "RMP"))
        assert tariffs.today(s, trn) == date(2027, 1, 17) and tariffs.today(s, rmp) == date(2026, 12, 3)
        assert tariffs.first_allowed_day(s, trn) == date(2027, 1, 18)
        assert tariffs.first_allowed_day(s, rmp) == date(2026, 12, 4)
    with pytest.raises(Refused) as refused:
        add(sessions, officers["administrator"], "TRN1", species="sheep", effective_from="2026-12-10")
    assert refused.value.message == ("a new rate takes effect from a later day than today, so that no case "
                                     "already impounded changes: choose 2027-01-18 or later")
    with sessions() as s:
        assert s.scalar(select(TariffRate).where(TariffRate.species == "sheep",
                                                 TariffRate.effective_from == date(2026, 12, 10))) is None
    add(sessions, officers["administrator"], "TRN1", species="sheep", effective_from="2027-01-18")
