"""Paper cases from a CSV file, on the page and in the service (issue 31, item 2), with the attack
tests of issue 34, item 5: formula cells kept as text, encodings and BOM, the size and row limits,
a row with contradicting facts named by row and column, all or nothing."""

from __future__ import annotations

import io
from datetime import datetime

import pytest
from sqlalchemy import func, select

from webapp.errors import Refused
from webapp.services.intake import paper_cases, paper_csv
from webapp.services.reports import registers_csv
from webapp.services.running import uow
from webapp.store.models import Case, CaseEvent, LedgerEntry, PaperReceipt

from .test_web_pages import login, text_of

NOW = "2026-03-10T12:00:00+05:30"
HEADER = "case,do,at,place_seized,place_impounded,nearest_village,species,description,tag,name,amount,days,decision,paper_number,receipt_number,amount_received\n"
FILE = HEADER + (
    "12/2026,impound,2026-02-01 10:00,Bhimpura,Kanji House,Bhimpura,cow,brown cow,RJ-1,,,,,,,\n"
    "12/2026,animal,,,,,goat,black goat,,,,,,,,\n"
    "12/2026,publish_notice,2026-02-05 11:00,,,,,,,,5000.00,30,,N-17,,\n"
    "12/2026,bid,2026-02-06 12:00,,,,,,,=HYPERLINK(\"http://x\"),5200.00,,,,R-4512,5200.00\n"
    "13/2026,impound,2026-02-20 09:30,Kheda,Kanji House,Kheda,buffalo,grey buffalo,,,,,,,,\n"
    "13/2026,publish_notice,2026-02-24 10:00,,,,,,,,8000.00,30,,N-18,,\n"
    "13/2026,file_objection,2026-02-27 10:00,,,,,,,Ramesh,,,,,,\n"
)


@pytest.fixture
def now(virtual_clock):
    virtual_clock.set(datetime.fromisoformat(NOW))
    return virtual_clock


def bring(sessions, user, data: bytes):
    papers = paper_csv.read(data, "Asia/Kolkata")
    return uow.perform(sessions, "bring_in_paper_cases", paper_cases.bring_in_many, user, papers, user=user)


def cases_count(sessions) -> int:
    with sessions() as session:
        return session.scalar(select(func.count()).select_from(Case))


def test_a_csv_file_brings_in_every_case_at_its_stage(sessions, officers, now):
    brought = bring(sessions, officers["secretary"], FILE.encode())
    assert [b.case_number for b in brought] == ["RMP/2026/0001", "RMP/2026/0002"]
    first, second = brought
    assert [(r["number"], str(r["amount"])) for r in first.receipts] == [("R-4512", "5200.00")]
    assert [t["title"] for t in second.open_tasks] == ["Decide unsold cattle", "Decide ownership claim"]
    with sessions() as session:
        case = session.get(Case, first.case_id)
        assert '"species": "goat"' in case.file_json  # the animal row joined its case
        # the formula cell is the bidder's name, kept as the text it is
        bid = session.scalars(select(CaseEvent).where(CaseEvent.case_id == case.id, CaseEvent.name == "Record bid")).one()
        assert '=HYPERLINK(\\"http://x\\")' in bid.detail_json
    # and a spreadsheet never reads it back as a formula: the registers' export makes it text
    assert registers_csv.cell('=HYPERLINK("http://x")', "Asia/Kolkata") == '\'=HYPERLINK("http://x")'


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "utf-16"])
def test_utf8_with_or_without_its_bom_and_utf16_with_its_bom_are_read_alike(sessions, officers, now, encoding):
    text = FILE.replace("Bhimpura", "भीमपुरा")
    brought = bring(sessions, officers["secretary"], text.encode(encoding))
    assert len(brought) == 2
    with sessions() as session:
        assert "भीमपुरा" in session.get(Case, brought[0].case_id).file_json


def refused(sessions, officers, data: bytes) -> Refused:
    with pytest.raises(Refused) as caught:
        bring(sessions, officers["secretary"], data)
    with sessions() as session:  # never half imported
        for model in (Case, LedgerEntry, PaperReceipt):
            assert session.scalar(select(func.count()).select_from(model)) == 0
    return caught.value


def test_another_encoding_is_refused_naming_the_row(sessions, officers, now):
    error = refused(sessions, officers, FILE.replace("Kheda", "Khéda").encode("latin-1"))
    assert "row 6 is not UTF-8" in error.message and list(error.field_errors) == ["file"]


def test_a_file_over_10_mb_or_100000_rows_is_refused_naming_the_limit(sessions, officers, now):
    error = refused(sessions, officers, FILE.encode() + b"#" * (paper_csv.MAX_BYTES - len(FILE) + 1))
    assert "10 MB" in error.message
    many = HEADER + ",,,,,,,,,,,,,,,\n" * 100_000 + "x,impound\n"
    assert len(many.encode()) < paper_csv.MAX_BYTES
    error = refused(sessions, officers, many.encode())
    assert "100,000 rows" in error.message


def test_a_row_with_contradicting_facts_is_refused_naming_its_row_and_column_and_nothing_is_imported(
        sessions, officers, now):
    # the second case's sarpanch "decides" the claim of someone who never objected
    bad = FILE + "13/2026,decide_objection,2026-02-28 10:00,,,,,,,Suresh,,,proved,O-1,,\n"
    error = refused(sessions, officers, bad.encode())
    assert list(error.field_errors) == ["row 9.name"] and "row 9" in error.message
    # a second impound row for the same paper file
    again = FILE + "12/2026,impound,2026-02-02 10:00,Bhimpura,Kanji House,Bhimpura,cow,red cow,,,,,,,,\n"
    error = refused(sessions, officers, again.encode())
    assert list(error.field_errors) == ["row 9.do"]
    # a bid whose receipt disagrees with the bid (the money does not add up)
    money = FILE.replace("R-4512,5200.00", "R-4512,5100.00")
    error = refused(sessions, officers, money.encode())
    assert list(error.field_errors) == ["row 5.amount_received"]
    # an amount written as a formula is not an amount
    formula = FILE.replace(",5000.00,30", ",=2500*2,30")
    error = refused(sessions, officers, formula.encode())
    assert list(error.field_errors) == ["row 4.amount"]


def test_a_fact_before_its_case_or_an_unknown_column_is_refused(sessions, officers, now):
    error = refused(sessions, officers, (HEADER + "14/2026,bid,2026-02-06 12:00,,,,,,,A,1.00,,,,,\n").encode())
    assert list(error.field_errors) == ["row 2.case"]
    error = refused(sessions, officers, FILE.replace("amount_received", "fine").encode())
    assert "unknown column fine" in error.message


def test_the_upload_page_checks_then_brings_every_case_in_on_confirm(client, sessions, officers, now):
    login(client, "sec")
    page = client.get("/paper-cases/upload")
    assert page.status_code == 200 and "case, place_seized" in text_of(page)
    checked = client.post("/paper-cases/upload", data={"step": "check", "file": (io.BytesIO(FILE.encode()), "p.csv")},
                          content_type="multipart/form-data")
    assert checked.status_code == 200, text_of(checked)[:400]
    text = text_of(checked)
    assert "RMP/2026/0001" in text and "R-4512" in text and "Overdue" in text
    assert cases_count(sessions) == 0
    token = checked.get_data(as_text=True).split('name="token" value="')[1].split('"')[0]
    client.post("/logout")
    login(client, "sar")  # the token is bound to the officer who uploaded it
    assert client.post("/paper-cases/upload", data={"step": "confirm", "token": token}).status_code == 422
    login(client, "sec")
    done = client.post("/paper-cases/upload", data={"step": "confirm", "token": token})
    assert done.status_code == 302 and cases_count(sessions) == 2
    assert client.post("/paper-cases/upload", data={"step": "confirm", "token": token}).status_code == 422  # once


def test_the_upload_page_names_the_refused_row_in_hindi(client, sessions, officers, now):
    login(client, "sec")
    client.post("/language", data={"lang": "hi", "next": "/cases"})
    bad = FILE.replace("R-4512,5200.00", "R-4512,5100.00")
    response = client.post("/paper-cases/upload", data={"step": "check", "file": (io.BytesIO(bad.encode()), "p.csv")},
                           content_type="multipart/form-data")
    assert response.status_code == 422
    error = text_of(response)
    assert ("पंक्ति 5, amount_received: कागज़ी रसीद में 5100.00 लिखा है, पर एक बोली में 5200.00 प्राप्त हुए; "
            "राशि मेल नहीं खाती") in error
    assert cases_count(sessions) == 0


def form_data(**facts):
    data = {"impounded_at": "2026-02-01T10:00", "place_seized": "Bhimpura", "place_impounded": "Kanji House",
            "nearest_village": "Bhimpura", "species-1": "cow", "description-1": "brown cow", "tag-1": "RJ-1",
            "animal_rows": "3", "fact_rows": "8"}
    data.update(facts)
    return data


NOTICE_ROW = {"do-1": "publish_notice", "at-1": "2026-02-05T11:00", "amount-1": "5000.00", "days-1": "30",
              "paper_number-1": "N-17"}


def test_the_paper_case_form_checks_then_records_the_case_on_confirm(client, sessions, officers, now):
    login(client, "sec")
    assert client.get("/paper-cases/new").status_code == 200
    bid = {"do-2": "bid", "at-2": "2026-02-06T12:00", "name-2": "Mohan", "amount-2": "5200.00",
           "receipt_number-2": "R-4512", "amount_received-2": "5200.00"}
    checked = client.post("/paper-cases/new", data=form_data(step="check", **NOTICE_ROW, **bid))
    assert checked.status_code == 200, text_of(checked)[:600]
    text = text_of(checked)
    assert "The legal period has already run out: Objection period ends" in text
    assert "Paper receipt R-4512" in text and "N-17" in text
    assert cases_count(sessions) == 0
    done = client.post("/paper-cases/new", data=form_data(step="confirm", **NOTICE_ROW, **bid))
    assert done.status_code == 302 and cases_count(sessions) == 1
    page = client.get(done.headers["Location"])
    assert "brought in from the paper file" in text_of(page)


def test_the_paper_case_form_puts_a_refusal_beside_its_fact_and_field(client, sessions, officers, now):
    login(client, "sar")
    late = {"do-2": "file_objection", "at-2": "2026-03-08T00:00", "name-2": "Ramesh"}
    response = client.post("/paper-cases/new", data=form_data(step="check", **NOTICE_ROW, **late))
    assert response.status_code == 422
    html = response.get_data(as_text=True)
    assert 'id="at-2" name="at-2"' in html and 'aria-describedby="at-2-error"' in html
    assert "fact 2" in text_of(response) and "2026" in text_of(response)
    assert cases_count(sessions) == 0


def test_the_paper_case_pages_are_the_secretarys_and_sarpanchs(client, sessions, officers, now):
    login(client, "pk")
    assert client.get("/paper-cases/new").status_code == 403
    assert client.get("/paper-cases/upload").status_code == 403
