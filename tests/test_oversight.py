"""Oversight of a Samiti and a District (webapp.services.reports.oversight, webapp.web.pages.oversight,
``GET /api/v1/oversight``): cases driven through the real services in three Panchayats of two
Districts, then each figure checked by value — running cases by stage, the case past its objection
period (12 days, the sarpanch's act), cattle held, the balances of the accounts, the month's
receipts — and the scope: a Samiti's appellate authority sees only its Samiti, a district officer
their District and its Samitis, the Panchayat's officers nothing (403), and another Samiti or
District answers 404. CSV with formula-like cells made plain text; sorting; Hindi."""

from __future__ import annotations

import csv
import io
from datetime import date
from decimal import Decimal

import pytest

from webapp.errors import NotFound, NotPermitted, Refused
from webapp.services.people import users
from webapp.services.reports import oversight

from .conftest import FAST_HASH, PASSWORD
from .driver import ONE_COW, TWO_COWS, Driver, ist_midnight, publish, sell

D = Decimal
# the default tariff of a cow: fine ₹500, feeding ₹60 a day; a cow released on the day after its
# impoundment owes 500 + 2 x 60 = ₹620 (the owner hands over ₹700 and gets ₹80 back)
F_PLUS_C = D("620.00")


def _driver(drive: Driver, **roles) -> Driver:
    return Driver(drive.sessions, {**drive.officers, **roles}, drive.clock)


@pytest.fixture
def world(drive, sessions, officers):
    """RMP (SAM1, Jaipur): case A sold at full price (₹12,000 into suspense, 9 Jan), case B with an
    objection never decided (objection period's last day 8 Feb), case E released on 17 Feb (F + C
    into the pound account); KHR (SAM1, Jaipur): case C released on 6 Jan; SAM3 in Jaipur holds
    NRS with no case; FAR (SAM2, Ajmer): case F running, one cow. The clock then stands at
    20 Feb 2026, 12:00 IST."""
    with sessions() as session:
        users.create_panchayat(session, "NRS", "Narsinghpura", "SAM3", district="Jaipur")
        made = {name: users.create_user(session, name, PASSWORD, role, password_method=FAST_HASH, **scope)
                for name, role, scope in (
                    ("pk-khr", "pound_keeper", {"panchayat_code": "KHR"}),
                    ("pk-far", "pound_keeper", {"panchayat_code": "FAR"}),
                    ("do-jaipur", "district_officer", {"district": "Jaipur"}),
                    ("do-ajmer", "district_officer", {"district": "Ajmer"}))}
        session.commit()
        ids = {k: v.id for k, v in made.items()}
    with sessions() as session:
        from webapp.store.models import User
        people = {k: session.get(User, v) for k, v in ids.items()}
        session.expunge_all()
    a = drive
    a.start(TWO_COWS)
    b = _driver(drive)
    b.start(ONE_COW)
    c = _driver(drive, pound_keeper=people["pk-khr"])
    c.start(ONE_COW)
    f = _driver(drive, pound_keeper=people["pk-far"])
    f.start(ONE_COW)
    c.move("2026-01-06T11:00:00+05:30")
    c.act("pound_keeper", "ut_release", {"owner": "Ramlal", "amount_received": "700"})
    a.fire_past(ist_midnight("2026-01-09"))
    publish(a)
    sell(a)
    b.move("2026-01-09T11:30:00+05:30")
    b.act("secretary", "ut_publish_notice", {"objection_period_days": 30, "full_price": "9000.00"})
    b.move("2026-01-10T12:00:00+05:30")
    b.object("Objector O")
    a.fire_past(ist_midnight("2026-02-09"))
    e = _driver(drive)
    e.move("2026-02-16T10:00:00+05:30")
    e.start(ONE_COW, impounded_at="2026-02-16T10:00:00+05:30")
    e.move("2026-02-17T10:00:00+05:30")
    e.act("pound_keeper", "ut_release", {"owner": "Mangilal", "amount_received": "700"})
    drive.move("2026-02-20T12:00:00+05:30")
    return {"A": a, "B": b, "C": c, "E": e, "F": f, **people}


def test_a_samitis_figures_are_the_cases_cattle_money_and_receipts_of_its_panchayats(world, sessions, officers):
    with sessions() as session:
        scope = oversight.scope_for(session, officers["appellate_authority"])
        assert scope == oversight.Scope("samiti", "SAM1")
        data = oversight.overview(session, scope)
    assert [r.code for r in data.rows] == ["KHR", "RMP"]
    khr, rmp = data.rows
    assert (rmp.running, khr.running) == (2, 0)
    # A waits for the sarpanch's order that the auction stand; B for the decision on the objection
    # and, its auction unsold, the decision on the unsold cow: two tasks at once
    assert rmp.by_stage == {"ut_order_stand": 1, "ut_decide_objection": 1, "ut_decide_unsold": 1}
    assert khr.by_stage == {}
    assert (rmp.cattle_held, khr.cattle_held) == (1, 0)  # A's two cows are with the buyer; B's one in the pound
    assert rmp.today == date(2026, 2, 20)
    # B's objection period ended with 8 February: on 20 February the sarpanch's decision is 12 days late
    assert [(p.case_number, p.element_id, p.lane, p.label, p.last_day, p.days_past) for p in data.past_deadline] == [
        (world["B"].case().case_number, "ut_decide_objection", "sarpanch", "objection period", date(2026, 2, 8), 12)]
    assert (rmp.past_deadline, rmp.most_days_past, khr.past_deadline) == (1, 12, 0)
    # money: A's ₹12,000 waits in suspense; E's fine and feeding went to the pound account on 17 Feb,
    # C's in January
    assert rmp.balances == {"suspense": D("12000.00"), "pound_account": F_PLUS_C, "panchayat_fund": D("0.00")}
    assert khr.balances == {"suspense": D("0.00"), "pound_account": F_PLUS_C, "panchayat_fund": D("0.00")}
    assert (rmp.receipts_month_count, rmp.receipts_month) == (1, F_PLUS_C)  # February: E's only
    assert (khr.receipts_month_count, khr.receipts_month) == (0, D("0.00"))
    assert data.month == date(2026, 2, 1)
    t = data.totals
    assert (t.running, t.cattle_held, t.past_deadline, t.receipts_month) == (2, 1, 1, F_PLUS_C)
    assert t.balances["pound_account"] == D("1240.00")


def test_a_district_officer_sees_the_district_and_narrows_it_to_a_samiti_of_it(world, sessions):
    officer = world["do-jaipur"]
    with sessions() as session:
        district = oversight.scope_for(session, officer)
        assert district == oversight.Scope("district", "Jaipur")
        assert [r.code for r in oversight.overview(session, district).rows] == ["KHR", "NRS", "RMP"]
        samiti = oversight.scope_for(session, officer, samiti="SAM3")
        assert [r.code for r in oversight.overview(session, samiti).rows] == ["NRS"]
        assert [(c.district, c.samitis) for c in oversight.choices(session, officer)] == [("Jaipur", ["SAM1", "SAM3"])]
        with pytest.raises(NotFound):
            oversight.scope_for(session, officer, samiti="SAM2")  # Ajmer's
        with pytest.raises(NotFound):
            oversight.scope_for(session, officer, district="Ajmer")
        with pytest.raises(NotFound):
            oversight.panchayat_scope(session, officer, "FAR")
        ajmer = oversight.overview(session, oversight.scope_for(session, world["do-ajmer"]))
        assert [(r.code, r.running, r.cattle_held, r.by_stage) for r in ajmer.rows] == [
            ("FAR", 1, 1, {"ut_publish_notice": 1})]


def test_a_samitis_officer_sees_only_their_samiti_and_the_panchayats_officers_none(world, sessions, officers):
    with sessions() as session:
        appellate = officers["appellate_authority"]
        with pytest.raises(NotFound):
            oversight.scope_for(session, appellate, samiti="SAM2")
        with pytest.raises(NotFound):
            oversight.scope_for(session, appellate, district="Jaipur")
        with pytest.raises(NotFound):
            oversight.panchayat_scope(session, appellate, "FAR")
        assert oversight.panchayat_scope(session, appellate, "RMP").code == "RMP"
        for role in ("pound_keeper", "secretary", "sarpanch", "receiving_officer"):
            with pytest.raises(NotPermitted):
                oversight.scope_for(session, officers[role])
        with pytest.raises(Refused):  # the installation's administrator chooses
            oversight.scope_for(session, officers["administrator"])
        assert oversight.scope_for(session, officers["administrator"], district="Ajmer").code == "Ajmer"


def test_a_district_officer_needs_a_district_that_has_panchayats(sessions, officers):
    with sessions() as session:
        with pytest.raises(Refused, match="no Panchayat is in the district 'Nowhere'"):
            users.create_user(session, "do-x", PASSWORD, "district_officer", district="Nowhere",
                              password_method=FAST_HASH)
        with pytest.raises(Refused, match="needs --district"):
            users.create_user(session, "do-y", PASSWORD, "district_officer", password_method=FAST_HASH)
        with pytest.raises(Refused, match="only an administrator or a district officer may have a District"):
            users.create_user(session, "sec-y", PASSWORD, "secretary", panchayat_code="RMP", district="Jaipur",
                              password_method=FAST_HASH)


def test_sorting_by_a_column_and_an_unknown_column_refused(world, sessions):
    with sessions() as session:
        rows = oversight.overview(session, oversight.scope_for(session, world["do-jaipur"])).rows
    assert [r.code for r in oversight.sort_rows(rows, "suspense", descending=True)] == ["RMP", "KHR", "NRS"]
    assert [r.code for r in oversight.sort_rows(rows, "name")] == ["KHR", "NRS", "RMP"]  # Kheri, Narsinghpura, Rampura
    with pytest.raises(Refused, match="cannot sort by 'ledger'"):
        oversight.sort_rows(rows, "ledger")


def sign_in(client, username):
    response = client.post("/login", data={"username": username, "password": PASSWORD})
    assert response.status_code == 302, response.get_data(as_text=True)[:300]


def test_the_page_in_english_and_hindi_and_its_scope(world, client):
    sign_in(client, "do-jaipur")
    page = client.get("/oversight?sort=cattle_held&dir=desc")
    html = page.get_data(as_text=True)
    assert page.status_code == 200
    assert "District Jaipur" in html and 'id="total-running">2<' in html and 'id="total-cattle">1<' in html
    assert "₹12,000.00" in html and "12 days" in html and "Decide ownership claim" in html
    assert html.index('data-code="RMP"') < html.index('data-code="KHR"')  # the cow held in RMP first
    assert 'aria-sort="descending"' in html
    assert client.get("/oversight?samiti=SAM2").status_code == 404
    assert client.get("/oversight/panchayat/FAR").status_code == 404
    assert client.get("/oversight?sort=bogus").status_code == 422
    detail = client.get("/oversight/panchayat/RMP").get_data(as_text=True)
    assert "Objector" not in detail and "sarpanch" in detail and "Sunday, 8 February 2026" in detail
    client.post("/language", data={"lang": "hi", "next": "/oversight"})
    hindi = client.get("/oversight").get_data(as_text=True)
    assert "ज़िला Jaipur" in hindi or "जिला Jaipur" in hindi
    assert "₹12,000.00" in hindi and "12 दिन" in hindi


def test_the_panchayats_own_officers_get_403_and_anonymous_the_sign_in(world, client):
    assert client.get("/oversight").status_code == 302
    sign_in(client, "sec")
    assert client.get("/oversight").status_code == 403
    assert client.get("/oversight.csv").status_code == 403
    assert client.get("/api/v1/oversight").status_code in (401, 403)


def test_csv_rows_are_the_figures_and_a_formula_like_name_is_plain_text(world, client, sessions):
    from sqlalchemy import select

    from webapp.store.models import Panchayat
    with sessions() as session:
        session.scalar(select(Panchayat).where(Panchayat.code == "NRS")).name = "=HYPERLINK(\"x\")"
        session.commit()
    sign_in(client, "do-jaipur")
    response = client.get("/oversight.csv")
    assert response.status_code == 200 and response.mimetype == "text/csv"
    table = list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))
    assert [r["panchayat_code"] for r in table] == ["KHR", "NRS", "RMP"]
    rmp = table[2]
    assert (rmp["running"], rmp["cattle_held"], rmp["suspense"], rmp["pound_account"], rmp["receipts_month"],
            rmp["stage_ut_decide_objection"], rmp["past_deadline"], rmp["most_days_past"], rmp["month"]) == (
        "2", "1", "12000.00", "620.00", "620.00", "1", "1", "12", "2026-02-01")
    assert table[1]["panchayat"] == "'=HYPERLINK(\"x\")"
    past = list(csv.DictReader(io.StringIO(client.get("/oversight/past-deadline.csv").get_data(as_text=True))))
    assert [(r["panchayat_code"], r["task"], r["whose_act"], r["last_day"], r["days_past"]) for r in past] == [
        ("RMP", "Decide ownership claim", "sarpanch", "2026-02-08", "12")]


def test_the_api_answers_the_same_figures_within_the_tokens_scope(world, client, sessions):
    with sessions() as session:
        token = users.create_token(session, "do-ajmer")
        other = users.create_token(session, "sec")
        session.commit()
    answer = client.get("/api/v1/oversight", headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 200, answer.get_data(as_text=True)
    body = answer.get_json()
    assert body["scope"] == {"kind": "district", "code": "Ajmer"}
    assert [(p["code"], p["running"], p["cattle_held"], p["balances"]["suspense"]) for p in body["panchayats"]] == [
        ("FAR", 1, 1, "0.00")]
    assert client.get("/api/v1/oversight?district=Jaipur",
                      headers={"Authorization": f"Bearer {token}"}).status_code == 404
    assert client.get("/api/v1/oversight", headers={"Authorization": f"Bearer {other}"}).status_code == 403


def test_cattle_held_follows_the_case_file_a_death_takes_the_cow_off_the_count(world, sessions):
    b = world["B"]
    assert b.case().cattle_held == 1
    b.animal_event("death", tag="RJ-9")  # its only cow: the case closes without animals
    assert (b.case().status, b.case().cattle_held) == ("completed", 0)
    with sessions() as session:
        rmp = oversight.overview(session, oversight.Scope("samiti", "SAM1")).rows[1]
    assert (rmp.code, rmp.cattle_held, rmp.running, rmp.past_deadline) == ("RMP", 0, 1, 0)


def test_the_balance_rows_the_trigger_keeps_equal_the_ledger_entries_added_up(world, sessions):
    """Every ledger entry (the acts' postings, the January sale, the releases) moved the Panchayat's
    balance row in the same transaction: recomputed here from the raw entries."""
    from sqlalchemy import select

    from webapp.store.models import LedgerEntry, PanchayatBalance
    with sessions() as session:
        kept = {r.panchayat_id: (r.suspense, r.pound_account, r.panchayat_fund)
                for r in session.scalars(select(PanchayatBalance))}
        added: dict[int, dict[str, Decimal]] = {}
        for e in session.scalars(select(LedgerEntry)):
            sums = added.setdefault(e.panchayat_id, dict.fromkeys(oversight.ACCOUNTS, D("0.00")))
            if e.to_account in sums:
                sums[e.to_account] += e.amount
            if e.from_account in sums:
                sums[e.from_account] -= e.amount
    assert len(kept) == 2  # RMP and KHR have entries; FAR (a case just impounded) and NRS none
    assert kept == {pid: tuple(s[a] for a in oversight.ACCOUNTS) for pid, s in added.items()}


def test_a_districts_panchayats_come_a_page_at_a_time_in_the_order_sorted(world, client, monkeypatch):
    from webapp.web.pages import oversight as pages
    monkeypatch.setattr(pages, "ROWS_PER_PAGE", 2)
    sign_in(client, "do-jaipur")
    first = client.get("/oversight?sort=suspense&dir=desc").get_data(as_text=True)
    assert 'data-code="RMP"' in first and 'data-code="KHR"' in first and 'data-code="NRS"' not in first
    assert "Gram Panchayats 1 to 2 of 3" in first and 'rel="next"' in first
    second = client.get("/oversight?sort=suspense&dir=desc&page=2").get_data(as_text=True)
    assert 'data-code="NRS"' in second and 'data-code="RMP"' not in second and "3 to 3 of 3" in second
    assert 'id="total-running">2<' in second  # the totals are the District's, on every page
    assert 'data-code="NRS"' in client.get("/oversight?sort=suspense&dir=desc&page=99").get_data(as_text=True)


def test_a_district_officers_other_pages_answer_and_show_no_case(world, client):
    """The menu's other pages: a district officer holds no task and opens no case (read-only)."""
    sign_in(client, "do-jaipur")
    tasks_page = client.get("/tasks")
    assert tasks_page.status_code == 200 and world["B"].case().case_number not in tasks_page.get_data(as_text=True)
    listing = client.get("/cases")
    assert listing.status_code in (200, 403)
    assert world["B"].case().case_number not in listing.get_data(as_text=True)
    assert client.get(f"/cases/{world['B'].case_id}").status_code == 404
    assert client.get("/registers").status_code == 403
