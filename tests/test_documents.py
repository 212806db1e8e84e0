"""Documents of a case (issue 5, item 4): issued at the act that produces them, kept exactly as
issued in English and Hindi, printed as pages and as PDF.

Scenario s1 is driven through the service layer as ``webapp.simulation.simulate`` drives it, by the officers
of Panchayat RMP (Rampura, district Jaipur). The PDFs' text is read back with poppler's
``pdftotext -raw`` (the text layer in the order Chromium drew it: :func:`pdf_text`), and every
document kind, in both languages, must read back as its stored text
(:func:`test_the_text_layer_of_every_kind_of_document_is_its_stored_text_in_both_languages`).

Hindi is compared letter for letter with the whitespace left out (:func:`squeezed`): pdftotext
places a space where the gap between two glyphs is wide enough, so a space can go missing between
Devanagari words or appear inside one (क्रे ता), while the letters themselves are exact.
"""

from __future__ import annotations

import hashlib
import html
import io
import json
import re
import shutil
import subprocess
from datetime import date
from decimal import Decimal

import lxml.html
import pytest
from pypdf import PdfReader
from sqlalchemy import select, update

from webapp.errors import EngineFailure
from webapp.services.cases import cases
from webapp.services.papers import documents
from webapp.services.running import uow
from webapp.simulation import scenario_file, simulate
from webapp.store import audit
from webapp.store.models import Case, CaseDocument, CaseEvent, Panchayat
from webapp.values import casefile, clock

from .conftest import PASSWORD, SCENARIOS
from .intruder import drop_guards

ROLES = ("pound_keeper", "secretary", "sarpanch", "appellate_authority")


# -- driving a scenario through the services ------------------------------------------------------

def run_scenario(sessions, officers, virtual_clock, name: str, *, until_step: int | None = None,
                 scenario: scenario_file.Scenario | None = None) -> int:
    """Run scenario ``name`` (tests/scenarios), or ``scenario`` as given, for Panchayat RMP's officers,
    step by step as ``webapp.simulation.simulate`` does (timers due before a step fire first); returns the case id."""
    scenario = scenario or simulate.load_scenario(next(SCENARIOS.glob(f"{name}-*.yaml")))
    people = {role: officers[role] for role in ROLES}
    c = scenario.case
    virtual_clock.set(c["impounded_at"])
    case = uow.perform(sessions, "start_case", cases.start_case, people["pound_keeper"],
                       impounded_at=c["impounded_at"], place_seized=c["place_seized"],
                       place_impounded=c["place_impounded"], nearest_village=c["nearest_village"],
                       animals=c["animals"], tariff=scenario.tariff)
    receivers = {officers["receiving_officer"].display_name: officers["receiving_officer"]}  # RMP is live
    for step in scenario.steps[:until_step]:
        simulate.fire_until(sessions, case.id, virtual_clock, step.at)
        virtual_clock.set(step.at)
        try:
            simulate._perform(sessions, case.id, step, people, receivers, "t")
        except Exception:
            if not step.expect_error:
                raise
    if until_step is None:
        simulate.fire_until(sessions, case.id, virtual_clock, None)
    return case.id


def docs(sessions, case_id: int) -> dict[tuple[str, str], CaseDocument]:
    with sessions() as session:
        rows = session.scalars(select(CaseDocument).where(CaseDocument.case_id == case_id))
        return {(row.key, row.language): row for row in rows}


PDFTOTEXT = shutil.which("pdftotext")


def pdf_pages(body: bytes) -> list[str]:
    """The text of each page of the PDF ``body`` as ``pdftotext -raw`` reads it."""
    assert body.startswith(b"%PDF-")
    assert PDFTOTEXT, "pdftotext is missing: scripts/setup-pdf.sh --test installs poppler-utils"
    done = subprocess.run([PDFTOTEXT, "-raw", "-enc", "UTF-8", "-", "-"], input=body, capture_output=True,
                          check=True, timeout=60)
    return done.stdout.decode("utf-8").split("\f")[:-1]  # each page ends with a form feed


def pdf_text(body: bytes) -> str:
    """The text of every page, whitespace runs as one space."""
    return re.sub(r"\s+", " ", " ".join(pdf_pages(body))).strip()


def squeezed(text: str) -> str:
    """``text`` without any whitespace (how Hindi is compared: module docstring)."""
    return re.sub(r"\s+", "", text)


def login(client, username: str) -> None:
    response = client.post("/login", data={"username": username, "password": PASSWORD})
    assert response.status_code == 302


# -- s1: the notice and the sale receipt -------------------------------------------------------------

S1_ENGLISH = {
    "notice": [
        "Gram Panchayat Rampura, district Jaipur", "Notice of impounded cattle", "No. RMP/2026/0001/N1",
        "Case RMP/2026/0001", "Rule 130(a) and (b), Rajasthan Panchayati Raj Rules, 1996",
        # (i) the number and description of the cattle
        "The following 2 heads of cattle", "Number and description of the cattle: 2",
        "1 cow brown cow, white patch on forehead RJ-1001", "2 cow black cow, left horn broken RJ-1002",
        # (ii) the place seized, (iii) the place impounded; the village of publication (Note)
        "Place seized Bhimpura", "Place impounded Kanji House, Rampura", "Published in the village of Bhimpura",
        "impounded at Kanji House, Rampura on Monday, 5 January 2026",
        # the period (not less than 30 days) and its last day: published 2026-01-09 + 30 = 2026-02-08
        "Published on Friday, 9 January 2026", "Objection period 30 days after the day of publication",
        "Last day for objections Sunday, 8 February 2026",
        "until the end of Sunday, 8 February 2026. No objection will be entertained after that day.",
        # (b): the conditional auction held with the notice, on three days, and the full price
        "on Friday, 9 January 2026, Saturday, 10 January 2026 and Sunday, 11 January 2026, at Kanji House, Rampura",
        "Full price of the lot ₹12,000.00", "(condition (b)(i))", "(condition (b)(ii))",
        "Issued on Friday, 9 January 2026 11:00 · recorded by Secretary",
        "Secretary (Village Development Officer), Gram Panchayat Rampura",
    ],
    "sale_receipt:1": [
        "Receipt for auction money (conditional sale)", "No. RMP/2026/0001/R1", "Case RMP/2026/0001",
        "Received from Bidder B the sum of ₹12,500.00", "deposited in the suspense account",
        "1 cow brown cow, white patch on forehead RJ-1001", "2 cow black cow, left horn broken RJ-1002",
        "Buyer Bidder B", "Auction money received ₹12,500.00", "Day of sale Saturday, 10 January 2026",
        "a bid at or above the full price of ₹12,000.00 closed the auction",
        # condition (b)(i): sale day 2026-01-10 + 30 = 2026-02-09, or the final decision if later
        "No transfer of ownership until Monday, 9 February 2026 or the final decision, if later",
        "(i) The buyer shall not transfer the ownership of the cattle until the end of Monday, 9 February 2026 "
        "(30 days after the day of sale), or, where an objection or an appeal is filed, until the final decision",
        # condition (b)(ii): return on repayment of the auction money and the feeding (2 cows x ₹60.00 a day)
        "(ii) If the Gram Panchayat so orders, the buyer shall return the cattle to the Gram Panchayat and will be "
        "paid back the auction money (₹12,500.00) and the expenses of feeding the cattle",
        "(₹120.00 per day for these cattle)", "Issued on Saturday, 10 January 2026 15:00",
    ],
}
S1_HINDI_LATIN = {  # in the Hindi documents: Latin script, compared exactly
    "notice": ["RMP/2026/0001/N1", "RMP/2026/0001", "RJ-1001", "RJ-1002", "brown cow, white patch on forehead",
               "black cow, left horn broken", "Bhimpura", "Kanji House, Rampura", "₹12,000.00", "130", "2026"],
    "sale_receipt:1": ["RMP/2026/0001/R1", "Bidder B", "₹12,500.00", "₹12,000.00", "₹120.00", "RJ-1001", "RJ-1002"],
}
S1_HINDI = {  # in the Hindi documents: Devanagari, compared letter for letter without whitespace
    "notice": ["ग्राम पंचायत Rampura", "ज़िला Jaipur", "कांजी हाउस में निरुद्ध पशुओं की सूचना", "प्रकरण RMP/2026/0001",
               "नियम 130(क) और (ख), राजस्थान पंचायती राज नियम, 1996", "पशुओं की संख्या और विवरण: 2", "गाय",
               "पकड़ने का स्थान Bhimpura", "निरुद्ध करने का स्थान Kanji House, Rampura", "प्रकाशन का गाँव Bhimpura",
               "प्रकाशन की तिथि शुक्रवार, 9 जनवरी 2026", "आपत्ति का अंतिम दिन रविवार, 8 फ़रवरी 2026",
               "रविवार, 8 फ़रवरी 2026 की समाप्ति तक", "उस दिन के बाद कोई आपत्ति स्वीकार नहीं की जाएगी",
               "सशर्त नीलामी", "शनिवार, 10 जनवरी 2026", "शर्त (ख)(i)", "शर्त (ख)(ii)"],
    "sale_receipt:1": ["नीलामी राशि की रसीद (सशर्त बिक्री)", "क्रमांक RMP/2026/0001/R1", "Bidder B से ₹12,500.00 की राशि प्राप्त हुई",
                       "उचंत खाते में जमा", "क्रेता Bidder B", "बिक्री का दिन शनिवार, 10 जनवरी 2026",
                       "स्वामित्व का हस्तांतरण वर्जित सोमवार, 9 फ़रवरी 2026 तक, या अंतिम निर्णय तक",
                       "बिक्री की शर्तें (नियम 130(ख))",
                       "(i) क्रेता सोमवार, 9 फ़रवरी 2026 की समाप्ति तक (बिक्री के दिन के बाद 30 दिन) पशुओं का स्वामित्व हस्तांतरित नहीं करेगा",
                       "(ii) ग्राम पंचायत के आदेश पर क्रेता पशु ग्राम पंचायत को लौटाएगा",
                       "नीलामी की राशि (₹12,500.00)", "(इन पशुओं के लिए ₹120.00 प्रतिदिन)"],
}


def test_s1_notice_and_sale_receipt_pdfs_state_every_particular_in_english_and_hindi(app, sessions, officers,
                                                                                      virtual_clock):
    case_id = run_scenario(sessions, officers, virtual_clock, "s1")
    with sessions() as session:  # the dates as RULE130.md computes them, for the case itself
        summary = cases.summary(session, session.get(Case, case_id))
    assert summary["deadlines"]["objection_last_day"] == date(2026, 2, 8)
    assert summary["sale"]["transfer_lock_until"] == date(2026, 2, 9)
    found = docs(sessions, case_id)
    assert sorted(found) == [("notice", "en"), ("notice", "hi"), ("sale_receipt:1", "en"), ("sale_receipt:1", "hi"),
                             ("stand_order", "en"), ("stand_order", "hi")]
    client = app.test_client()
    login(client, "sec")
    for key in ("notice", "sale_receipt:1"):
        english = client.get(f"/cases/{case_id}/documents/{found[key, 'en'].id}.pdf")
        assert english.status_code == 200 and english.mimetype == "application/pdf"
        text = pdf_text(english.data)
        missing = [wanted for wanted in S1_ENGLISH[key] if wanted not in text]
        assert not missing, f"{key} (English PDF) lacks {missing}\n{text}"
        hindi = client.get(f"/cases/{case_id}/documents/{found[key, 'hi'].id}.pdf")
        assert hindi.status_code == 200
        text = pdf_text(hindi.data)
        missing = [wanted for wanted in S1_HINDI_LATIN[key] if wanted not in text]
        missing += [wanted for wanted in S1_HINDI[key] if squeezed(wanted) not in squeezed(text)]
        assert not missing, f"{key} (Hindi PDF) lacks {missing}\n{text}"
        assert "Received from" not in text and "Notice of impounded" not in text  # no English left in Hindi
        # the PDF names the text it was made from, on the page and in its metadata
        assert found[key, "hi"].sha256 in squeezed(text)
        metadata = PdfReader(io.BytesIO(hindi.data)).metadata
        assert metadata.title == f"{found[key, 'hi'].title} · {found[key, 'hi'].number}"
        assert metadata.keywords == f"{found[key, 'hi'].number}, sha256:{found[key, 'hi'].sha256}"
        assert found[key, "hi"].sha256 in metadata.subject and found[key, "hi"].number in metadata.subject
        # created at the act's instant (the notice: 11:00 IST on 2026-01-09), whenever it is printed
        assert metadata.creation_date == metadata.modification_date == found[key, "hi"].issued_at


NOTICE_CLAIM = {  # the words of the notice for one animal and for several, by language
    ("en", 1): "Any person claiming to own it may file an objection with the Gram Panchayat, with proof of "
               "ownership, until the end of Monday, 20 April 2026.",
    ("hi", 1): "इस पशु पर स्वामित्व का दावा करने वाला कोई भी व्यक्ति स्वामित्व के प्रमाण सहित सोमवार, 20 अप्रैल 2026 की "
               "समाप्ति तक ग्राम पंचायत में आपत्ति प्रस्तुत कर सकता है।",
    ("en", 2): "Any person claiming to own them may file an objection with the Gram Panchayat, with proof of "
               "ownership, until the end of Sunday, 8 February 2026.",
    ("hi", 2): "इन पशुओं पर स्वामित्व का दावा करने वाला कोई भी व्यक्ति स्वामित्व के प्रमाण सहित रविवार, 8 फ़रवरी 2026 की "
               "समाप्ति तक ग्राम पंचायत में आपत्ति प्रस्तुत कर सकता है।",
}


@pytest.mark.parametrize(("scenario", "heads"), [("s2", 1), ("s1", 2)])
def test_the_notice_says_it_for_one_animal_and_them_for_two_on_paper_and_on_the_board(
        app, sessions, officers, virtual_clock, scenario, heads):
    """s2 impounds one buffalo, s1 two cows: the notice's claim sentence follows the number listed,
    in the stored document and on the public board, in English and in Hindi."""
    case_id = run_scenario(sessions, officers, virtual_clock, scenario, until_step=1)
    found = docs(sessions, case_id)
    wrong = {("en", 1): "claiming to own them", ("hi", 1): "इन पशुओं पर स्वामित्व",
             ("en", 2): "claiming to own it ", ("hi", 2): "इस पशु पर स्वामित्व"}
    for language in ("en", "hi"):
        text = html_text(found["notice", language])
        assert NOTICE_CLAIM[language, heads] in text
        assert wrong[language, heads] not in text
        public = app.test_client()
        public.set_cookie("lang", language)
        page = public.get(f"/board/{case_id}")
        assert page.status_code == 200
        board = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page.get_data(as_text=True))))
        assert NOTICE_CLAIM[language, heads] in board


def test_amounts_of_a_lakh_and_more_are_grouped_the_indian_way_in_both_languages(app, sessions, officers,
                                                                                 virtual_clock):
    case_id = run_scenario(sessions, officers, virtual_clock, "s1", until_step=0)
    secretary = officers["secretary"]
    virtual_clock.set(scenario_file._instant("2026-01-09T11:00:00+05:30", "at"))
    from webapp.services.tasks import tasks
    uow.perform(sessions, "publish_notice", tasks.act, secretary, case_id, "ut_publish_notice",
                {"objection_period_days": 45, "full_price": "150000.00"}, case_id=case_id, user=secretary)
    uow.perform(sessions, "bid", tasks.act, secretary, case_id, "ut_record_bid",
                {"bidder": "Bidder C", "amount": "1234567.50"}, case_id=case_id, user=secretary)
    found = docs(sessions, case_id)
    client = app.test_client()
    login(client, "sec")
    for language in ("en", "hi"):
        notice = pdf_text(client.get(f"/cases/{case_id}/documents/{found['notice', language].id}.pdf").data)
        receipt = pdf_text(client.get(f"/cases/{case_id}/documents/{found['sale_receipt:1', language].id}.pdf").data)
        assert "₹1,50,000.00" in notice and "₹12,34,567.50" in receipt and "₹1,50,000.00" in receipt
    # 45 days after 2026-01-09: the last day for objections is 2026-02-23
    english = pdf_text(client.get(f"/cases/{case_id}/documents/{found['notice', 'en'].id}.pdf").data)
    assert "Last day for objections Monday, 23 February 2026" in english
    assert "Objection period 45 days after the day of publication" in english


# -- issued once, at the act, and never changed --------------------------------------------------------

def test_each_document_is_issued_in_the_transaction_of_its_act_with_its_hash_in_the_audit_trail(
        sessions, officers, virtual_clock):
    case_id = run_scenario(sessions, officers, virtual_clock, "s1")
    found = docs(sessions, case_id)
    notice, receipt = found["notice", "en"], found["sale_receipt:1", "en"]
    # the moment of the act: publishing at 11:00 IST on 2026-01-09, the full-price bid at 15:00 on 2026-01-10
    assert notice.issued_at.isoformat() == "2026-01-09T05:30:00+00:00"
    assert receipt.issued_at.isoformat() == "2026-01-10T09:30:00+00:00"
    assert notice.issued_by == receipt.issued_by == officers["secretary"].id
    assert (notice.number, receipt.number) == ("RMP/2026/0001/N1", "RMP/2026/0001/R1")
    for row in found.values():
        assert row.sha256 == hashlib.sha256(row.html.encode("utf-8")).hexdigest()
    with sessions() as session:
        events = session.scalars(select(CaseEvent).where(CaseEvent.case_id == case_id, CaseEvent.kind == "document")
                                 .order_by(CaseEvent.id)).all()
        stand = found["stand_order", "en"]
        assert [(e.name, e.at) for e in events] == [("Notice of impounded cattle", notice.issued_at),
                                                    ("Receipt for auction money (conditional sale)",
                                                     receipt.issued_at),
                                                    ("Order that the auction stand", stand.issued_at)]
        assert (stand.number, stand.issued_at.isoformat()) == ("RMP/2026/0001/O1", "2026-02-09T05:30:00+00:00")
        assert json.loads(events[1].detail_json) == {"document": "RMP/2026/0001/R1",
                                                     "sha256_en": receipt.sha256,
                                                     "sha256_hi": found["sale_receipt:1", "hi"].sha256}
        assert audit.verify(session).ok  # the history rows, with the hashes, are in the audit chain
        case = session.get(Case, case_id)
        assert documents.intact(session, case, session.get(CaseDocument, receipt.id))
    # the order that the auction stand issued its order; the timers after it, nothing more
    assert len(found) == 6
    assert_states(found["stand_order", "en"], [
        "Order that the auction stand", "No. RMP/2026/0001/O1", "Rule 130(e)",
        "sold at the conditional auction to Bidder B for ₹12,500.00 on Saturday, 10 January 2026",
        "Money of the sale ₹12,500.00", "Fine ₹1,000.00", "Expenses of feeding (to Monday, 9 February 2026) ₹720.00",
        "To the cattle pound account: the fine and the expenses of feeding ₹1,720.00",
        "To the Panchayat fund: the balance ₹10,780.00", "until the end of Wednesday, 11 March 2026"])
    assert_states(found["stand_order", "hi"], ["नीलामी", "₹10,780.00", "₹1,720.00"])


def test_a_refused_act_issues_no_document(sessions, officers, virtual_clock):
    case_id = run_scenario(sessions, officers, virtual_clock, "s1", until_step=0)
    secretary = officers["secretary"]
    virtual_clock.set(scenario_file._instant("2026-01-09T11:00:00+05:30", "at"))
    from webapp.errors import Refused
    from webapp.services.tasks import tasks
    with pytest.raises(Refused, match="30"):
        uow.perform(sessions, "publish_notice", tasks.act, secretary, case_id, "ut_publish_notice",
                    {"objection_period_days": 29, "full_price": "12000.00"}, case_id=case_id, user=secretary)
    assert docs(sessions, case_id) == {}


def test_a_reprint_is_the_same_document_after_the_panchayat_and_the_tariff_change(app, sessions, officers,
                                                                                  virtual_clock):
    case_id = run_scenario(sessions, officers, virtual_clock, "s1")
    found = docs(sessions, case_id)
    receipt = found["sale_receipt:1", "en"]
    client = app.test_client()
    login(client, "sec")
    first_pdf = client.get(f"/cases/{case_id}/documents/{receipt.id}.pdf").data
    first_page = client.get(f"/cases/{case_id}/documents/{receipt.id}").get_data(as_text=True)
    assert receipt.html in first_page and receipt.sha256 in first_page
    assert "no longer matches" not in first_page

    # later: the Panchayat is renamed, and the feeding rate of the lot is changed
    with sessions() as session:
        session.get(Panchayat, session.get(Case, case_id).panchayat_id).name = "Rampura Khurd"
        case = session.get(Case, case_id)
        cf = casefile.load(case.file_json)
        for animal in cf.animals:
            animal.feeding_per_day = Decimal("75.00")
        case.file_json = casefile.dump(cf)
        session.commit()
        case = session.get(Case, case_id)
        fresh = documents.render("en", "sale_receipt", documents.context(
            session, case, cf, documents.Due("sale_receipt:1", "sale_receipt"),
            documents.Issuer("Rampura Khurd", "Jaipur", "Vikas Adhikari"), receipt.issued_at, receipt.number))
    # a new rendering would differ (so the comparison below can fail) ...
    assert "Rampura Khurd" in fresh and "₹150.00 per day" in fresh and documents.sha256(fresh) != receipt.sha256
    # ... but the reprint is the stored document: the same text, hash and PDF bytes
    assert docs(sessions, case_id)["sale_receipt:1", "en"].html == receipt.html
    second_pdf = client.get(f"/cases/{case_id}/documents/{receipt.id}.pdf").data
    assert hashlib.sha256(second_pdf).hexdigest() == hashlib.sha256(first_pdf).hexdigest()
    second_page = client.get(f"/cases/{case_id}/documents/{receipt.id}").get_data(as_text=True)
    assert receipt.html in second_page and "Rampura Khurd" not in second_page
    assert "₹120.00 per day" in pdf_text(second_pdf)


def test_a_stored_document_changed_behind_the_products_back_is_flagged(app, sessions, officers, virtual_clock):
    case_id = run_scenario(sessions, officers, virtual_clock, "s1", until_step=1)
    notice = docs(sessions, case_id)["notice", "en"]
    with sessions() as session:  # the product itself refuses to change a document as issued
        row = session.get(CaseDocument, notice.id)
        row.html = row.html.replace("₹12,000.00", "₹2,000.00")
        with pytest.raises(EngineFailure, match="a document is kept as issued"):
            session.flush()
    drop_guards(sessions)  # as anyone with database access could, the append-only triggers first
    with sessions() as session:  # both the text and its stored hash rewritten in SQL: the audit trail still knows
        html = notice.html.replace("₹12,000.00", "₹2,000.00")
        session.execute(update(CaseDocument).where(CaseDocument.id == notice.id)
                        .values(html=html, sha256=documents.sha256(html)))
        session.commit()
    client = app.test_client()
    login(client, "sec")
    page = client.get(f"/cases/{case_id}/documents/{notice.id}").get_data(as_text=True)
    assert "no longer matches the SHA-256 recorded when it was issued" in page


# -- the case page and scope -----------------------------------------------------------------------------

def test_the_case_page_lists_each_document_with_both_languages_in_the_officers_language(app, sessions, officers,
                                                                                        virtual_clock):
    case_id = run_scenario(sessions, officers, virtual_clock, "s1")
    found = docs(sessions, case_id)
    client = app.test_client()
    login(client, "sar")
    page = client.get(f"/cases/{case_id}").get_data(as_text=True)
    for key in ("notice", "sale_receipt:1"):
        for language in ("en", "hi"):
            row = found[key, language]
            assert f'href="/cases/{case_id}/documents/{row.id}"' in page
            assert f'href="/cases/{case_id}/documents/{row.id}.pdf"' in page
    assert "Receipt for auction money (conditional sale)" in page and "RMP/2026/0001/R1" in page
    client.post("/language", data={"lang": "hi", "next": f"/cases/{case_id}"})
    page = client.get(f"/cases/{case_id}").get_data(as_text=True)
    assert "नीलामी राशि की रसीद (सशर्त बिक्री)" in page and "छापने योग्य पृष्ठ" in page
    assert "Receipt for auction money" not in page
    hindi = client.get(f"/cases/{case_id}/documents/{found['notice', 'hi'].id}")
    assert hindi.status_code == 200 and '<html lang="hi">' in hindi.get_data(as_text=True)
    assert "style=" not in hindi.get_data(as_text=True) and "<script" not in hindi.get_data(as_text=True)


def test_an_officer_of_another_panchayat_gets_404_for_a_document(app, sessions, officers, virtual_clock):
    case_id = run_scenario(sessions, officers, virtual_clock, "s1", until_step=1)
    notice = docs(sessions, case_id)["notice", "hi"]
    other = app.test_client()
    login(other, "sec-khr")  # secretary of Kheri, same Samiti
    for url in (f"/cases/{case_id}/documents/{notice.id}", f"/cases/{case_id}/documents/{notice.id}.pdf"):
        assert other.get(url).status_code == 404
    # a case of Kheri's own does not open RMP's document either
    with sessions() as session:
        from webapp.services.people import users
        keeper = users.create_user(session, "pk-khr", PASSWORD, "pound_keeper", panchayat_code="KHR",
                                   password_method="pbkdf2:sha256:1000")
        kheri_case = cases.start_case(session, keeper, impounded_at=clock.now(), place_seized="Kheri",
                                      place_impounded="Kanji House, Kheri", nearest_village="Kheri",
                                      animals=[{"species": "goat", "description": "white goat"}])
        session.commit()
        kheri_case_id = kheri_case.id
    assert other.get(f"/cases/{kheri_case_id}/documents/{notice.id}").status_code == 404
    assert other.get(f"/cases/{kheri_case_id}/documents/{notice.id}.pdf").status_code == 404
    own = app.test_client()
    login(own, "sec")
    assert own.get(f"/cases/{case_id}/documents/{notice.id}").status_code == 200
    assert own.get(f"/cases/{case_id}/documents/99999999").status_code == 404
    assert app.test_client().get(f"/cases/{case_id}/documents/{notice.id}").status_code == 302  # sign in first


# -- the order on an objection, the delivery orders, the remittance acknowledgement ---------------------

def html_text(row: CaseDocument) -> str:
    """The visible text of a stored document, each element's text apart, whitespace runs as one space."""
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", row.html))).strip()


def assert_states(row: CaseDocument, wanted: list[str]) -> None:
    text = html_text(row)
    missing = [w for w in wanted if w not in text]
    assert not missing, f"{row.number} ({row.language}) lacks {missing}\n{text}"


def test_s2_order_on_the_objection_and_delivery_order_after_a_sale(sessions, officers, virtual_clock):
    case_id = run_scenario(sessions, officers, virtual_clock, "s2")
    found = docs(sessions, case_id)
    assert sorted({key for key, _ in found}) == ["delivery_order", "notice", "objection_order:1", "sale_receipt:1",
                                                 "settlement"]
    order, delivery = found["objection_order:1", "en"], found["delivery_order", "en"]
    # the sarpanch's decision at 11:00 IST on 2026-04-01; the secretary's delivery at 12:00 on 2026-05-03
    assert (order.issued_at.isoformat(), order.issued_by) == ("2026-04-01T05:30:00+00:00", officers["sarpanch"].id)
    assert (delivery.issued_at.isoformat(), delivery.issued_by) == ("2026-05-03T06:30:00+00:00",
                                                                    officers["secretary"].id)
    assert_states(order, [
        "Order on the objection of Ramesh", "No. RMP/2026/0001/O1", "Rule 130(c)",
        "Ramesh filed an objection on Friday, 20 March 2026 claiming the ownership of the cattle listed below, "
        "seized at Kheri fields and impounded at Kanji House, Kheri",
        "1 buffalo black she-buffalo, notched right ear RJ-2001", "Decision ownership proved",
        "Decided on Wednesday, 1 April 2026",
        # D + M: 2026-04-01 + 30 days
        "Appeal until Friday, 1 May 2026", "within 30 days, until the end of Friday, 1 May 2026",
        "to the Vikas Adhikari of Panchayat Samiti SAM1 within 30 days",  # Rampura's Samiti
        "The buyer at the conditional auction shall return the cattle",
        "Sarpanch, Gram Panchayat Rampura"])
    assert_states(found["objection_order:1", "hi"], [
        "Ramesh की आपत्ति पर आदेश", "स्वामित्व सिद्ध हुआ", "अपील की अंतिम तिथि शुक्रवार, 1 मई 2026", "नियम 130(ग)",
        "शुक्रवार, 1 मई 2026 की समाप्ति तक, पंचायत समिति SAM1 के विकास अधिकारी के समक्ष अपील कर सकता है"])
    assert "Vikas Adhikari" not in html_text(found["objection_order:1", "hi"])  # the forum is translated
    # (d): F = ₹400.00; C = ₹80.00 x 7 days (2026-03-02..03-08) = ₹560.00; Cb = ₹80.00 x 56 days
    # (03-09..05-03) = ₹4,480.00 passed on to the buyer; the objector pays ₹5,440.00
    assert_states(delivery, [
        "Delivery order", "No. RMP/2026/0001/D1", "Rule 130(c) and (d)",
        "The ownership of Ramesh of the cattle listed below is final since Saturday, 2 May 2026",
        "delivered to the owner on Sunday, 3 May 2026", "Recovered from the owner",
        "Fine (F) ₹400.00", "Expenses of feeding in the pound (C) ₹560.00",
        "Buyer's feeding expenses, paid on to the buyer (Cb, condition (b)(ii)) ₹4,480.00", "Total ₹5,440.00",
        "Secretary (Village Development Officer), Gram Panchayat Rampura"])
    assert_states(found["delivery_order", "hi"], ["परिदान आदेश", "जुर्माना (F) ₹400.00", "योग ₹5,440.00"])
    assert "refunded" not in html_text(delivery)


def test_the_appeal_forum_names_the_samiti_in_each_language():
    default = documents.Issuer("Rampura", "Jaipur", "Vikas Adhikari, Panchayat Samiti", samiti="SAM1")
    assert documents.appellate_forum(default, "en") == "Vikas Adhikari of Panchayat Samiti SAM1"
    assert documents.appellate_forum(default, "hi") == "पंचायत समिति SAM1 के विकास अधिकारी"
    other = documents.Issuer("Rampura", "Jaipur", "Collector, Jaipur", samiti="SAM1")  # a forum set by hand
    assert documents.appellate_forum(other, "en") == "Collector, Jaipur, Panchayat Samiti SAM1"
    assert documents.appellate_forum(other, "hi") == "Collector, Jaipur, पंचायत समिति SAM1"
    assert documents.appellate_forum(documents.Issuer("Rampura", "", "Vikas Adhikari, Panchayat Samiti"), "hi") == \
        "विकास अधिकारी, पंचायत समिति"  # no Samiti recorded: the forum alone, translated


def test_s5_interim_delivery_order_then_the_delivery_with_the_security_refunded(app, sessions, officers,
                                                                              virtual_clock):
    case_id = run_scenario(sessions, officers, virtual_clock, "s5")
    found = docs(sessions, case_id)
    assert sorted({key for key, _ in found}) == ["delivery_order", "delivery_order:interim", "notice",
                                                 "objection_order:1", "settlement"]
    interim, delivery = found["delivery_order:interim", "en"], found["delivery_order", "en"]
    assert interim.issued_at.isoformat() == "2026-10-06T04:30:00+00:00"
    assert (interim.number, found["objection_order:1", "en"].number, delivery.number) == (
        "RMP/2026/0001/D1", "RMP/2026/0001/O1", "RMP/2026/0001/D2")
    assert_states(interim, [
        "Order of interim delivery on security", "Rule 130(c) Explanation",
        "The objection of Objector K, filed on Monday, 5 October 2026",
        "1 cow red cow, branded K on left flank RJ-5001", "2 cow red calf, white tail tip RJ-5002",
        "Delivered to Objector K", "Delivered on Tuesday, 6 October 2026",
        "Security received ₹30,000.00", "held in the suspense account",
        "The conditional auction of these cattle is withdrawn.",
        "within 7 days of the final decision", "Sarpanch, Gram Panchayat Rampura"])
    # (d) after interim delivery: C = 2 x ₹60.00 x 6 days (10-01..10-06) = ₹720.00; no buyer
    assert_states(delivery, [
        "is final since Friday, 20 November 2026", "Fine (F) ₹1,000.00",
        "Expenses of feeding in the pound (C) ₹720.00", "(Cb, condition (b)(ii)) ₹0.00", "Total ₹1,720.00",
        "The security of ₹30,000.00 deposited for the interim delivery is refunded to the owner."])
    assert_states(found["delivery_order:interim", "hi"], [
        "प्रतिभूति पर अंतरिम परिदान का आदेश", "प्राप्त प्रतिभूति ₹30,000.00", "उचंत खाते में रखी गई",
        "अंतिम निर्णय के 7 दिनों के भीतर"])
    client = app.test_client()
    login(client, "sar")
    text = pdf_text(client.get(f"/cases/{case_id}/documents/{found['delivery_order:interim', 'hi'].id}.pdf").data)
    assert "₹30,000.00" in text and "RMP/2026/0001/D1" in text and "RJ-5002" in text
    assert squeezed("प्रतिभूति पर अंतरिम परिदान का आदेश") in squeezed(text)


def test_p55_delivery_order_when_the_holder_kept_the_cattle_pays_the_owner_from_the_forfeited_security(
        sessions, officers, virtual_clock):
    case_id = run_scenario(sessions, officers, virtual_clock, "p55")
    found = docs(sessions, case_id)
    delivery = found["delivery_order", "en"]
    # F = ₹500.00, C = ₹60.00 x 6 days (10-01..10-06) = ₹360.00; the owner gets ₹5,000.00 - ₹860.00
    assert_states(delivery, [
        "The ownership of Objector K of the cattle listed below is final since Friday, 20 November 2026",
        "The cattle were delivered on security to Objector L, whose claim failed and who did not return them",
        "the security of ₹5,000.00 is forfeited and stands in for the cattle",
        "Deducted from the forfeited security", "Fine (F) ₹500.00", "Expenses of feeding in the pound (C) ₹360.00",
        "Paid to the owner from the suspense account: ₹4,140.00."])
    assert "refunded to the owner" not in html_text(delivery) and "Total" not in html_text(delivery)
    assert_states(found["delivery_order", "hi"], ["ज़ब्त प्रतिभूति में से घटाया गया", "₹5,000.00 की प्रतिभूति ज़ब्त की जाती है",
                                                  "₹4,140.00"])
    # the holder's order says to return the cattle; neither failed claim says "the auction stands" (withdrawn)
    assert_states(found["objection_order:2", "en"], [
        "which were delivered to the objector on security of ₹5,000.00 on Tuesday, 6 October 2026",
        "the objector shall return the cattle within 7 days, or the security is forfeited (Rule 130(c) Explanation)"])
    assert_states(found["objection_order:3", "en"], [
        "The objection is rejected; the ownership of Objector K was proved on Tuesday, 6 October 2026."])
    for key in ("objection_order:2", "objection_order:3"):
        assert "the auction stands" not in html_text(found[key, "en"])
        assert "नीलामी यथावत" not in html_text(found[key, "hi"])
    assert_states(found["objection_order:2", "hi"], ["7 दिन के भीतर पशु लौटाएगा, अन्यथा प्रतिभूति ज़ब्त की जाएगी"])
    assert_states(found["objection_order:3", "hi"], ["Objector K का स्वामित्व"])


def test_an_objection_not_proved_has_its_order_and_the_late_appeal_nothing(sessions, officers, virtual_clock):
    case_id = run_scenario(sessions, officers, virtual_clock, "p05")
    found = docs(sessions, case_id)
    assert sorted({key for key, _ in found}) == ["notice", "objection_order:1", "sale_receipt:1"]
    assert_states(found["objection_order:1", "en"], [
        "Order on the objection of Objector P", "Decision ownership not proved", "Decided on Monday, 6 July 2026",
        "The objection is rejected; once this decision is final, the auction stands",
        "Appeal until Wednesday, 5 August 2026"])
    assert_states(found["objection_order:1", "hi"], ["स्वामित्व सिद्ध नहीं हुआ", "आपत्ति अस्वीकार की जाती है"])


def test_s3_remittance_acknowledgement_is_issued_by_the_receiving_officers_act(app, sessions, officers,
                                                                              virtual_clock):
    case_id = run_scenario(sessions, officers, virtual_clock, "s3")
    found = docs(sessions, case_id)
    assert sorted({key for key, _ in found}) == ["dispatch_letter", "notice", "remittance", "stand_order"]
    assert_states(found["dispatch_letter", "en"], [
        "Letter sending unsold cattle for sale", "No. RMP/2026/0001/L1", "To: Gram Panchayat Kishanpura",
        "By the decision of the Sarpanch of Thursday, 18 June 2026 the cattle are sent to you for sale",
        "Remit the sale price less the expenses of sale to Gram Panchayat Rampura"])
    ack = found["remittance", "en"]
    with sessions() as session:
        from webapp.store.models import User
        receiver = session.get(User, ack.issued_by)
        assert receiver.role == "receiving_officer" and receiver.display_name == "Gram Panchayat Kishanpura"
    assert ack.issued_at.isoformat() == "2026-06-25T04:30:00+00:00"
    assert_states(ack, [
        "Acknowledgement of sale proceeds remitted", "No. RMP/2026/0001/A1", "Rule 130(b) proviso",
        "sent for sale on Thursday, 18 June 2026 to Gram Panchayat Kishanpura (neighbouring panchayat)",
        "1 goat white goat, red collar —", "3 goat black kid goat —",
        "Gross sale price ₹8,200.00", "Expenses of sale ₹700.00", "Net proceeds remitted ₹7,500.00",
        "credited to the suspense account of the Gram Panchayat on Thursday, 25 June 2026"])
    assert_states(found["remittance", "hi"], [
        "प्रेषित विक्रय राशि की पावती", "सकल विक्रय मूल्य ₹8,200.00", "प्रेषित शुद्ध राशि ₹7,500.00",
        "पड़ोसी पंचायत"])
    client = app.test_client()
    login(client, "sec")
    text = pdf_text(client.get(f"/cases/{case_id}/documents/{ack.id}.pdf").data)
    assert "Net proceeds remitted ₹7,500.00" in text and "Gross sale price ₹8,200.00" in text


def test_s6_release_receipt_states_what_the_owner_paid_and_matches_the_receipts_register(app, sessions, officers,
                                                                                         virtual_clock):
    case_id = run_scenario(sessions, officers, virtual_clock, "s6")
    found = docs(sessions, case_id)
    assert sorted(found) == [("release_receipt", "en"), ("release_receipt", "hi")]
    receipt = found["release_receipt", "en"]
    assert receipt.issued_at.isoformat() == "2026-11-04T10:30:00+00:00"
    # F = 600, C = 100 x 3 days (2026-11-02 to 11-04): the ₹900.00 the ledger shows in the pound account
    assert_states(receipt, [
        "Receipt for fine and feeding paid on release", "No. RMP/2026/0001/R1",
        "Received from Owner M, the owner, the sum of ₹900.00",
        "impounded on Monday, 2 November 2026 and released to the owner on Wednesday, 4 November 2026",
        "1 camel young male camel, nose peg RJ-6001", "Fine (F) ₹600.00",
        "Expenses of feeding in the pound (C) ₹300.00", "Total ₹900.00", "cattle pound account"])
    assert_states(found["release_receipt", "hi"], [
        "छुड़ाने पर चुकाए गए जुर्माने और खुराक व्यय की रसीद", "स्वामी Owner M से ₹900.00 की राशि प्राप्त हुई"])
    with sessions() as session:  # the same number as the receipts register gives the owner's payment
        from webapp.services.reports import registers
        from webapp.store.models import Panchayat
        panchayat = session.scalar(select(Panchayat).where(Panchayat.code == "RMP"))
        period = registers.Period(date(2026, 11, 1), date(2026, 11, 30), "Asia/Kolkata")
        [listed] = registers.receipts(session, panchayat, period)
        assert (listed.number, listed.amount) == ("RMP/2026/0001/R1", Decimal("900.00"))
    client = app.test_client()
    login(client, "pk")
    text = pdf_text(client.get(f"/cases/{case_id}/documents/{receipt.id}.pdf").data)
    assert "Total ₹900.00" in text and "Owner M" in text


def test_p23_release_receipt_lists_the_cattle_released_and_names_the_one_that_died(sessions, officers,
                                                                                   virtual_clock):
    """p23: two cows impounded on 5 January 2026; RJ-2302 died on 6 January; the owner released the
    lot at 23:59:59 on 8 January. The receipt hands over only RJ-2301 and says what became of
    RJ-2302; the money stays what the scenario works out by hand (F 1000 + C 360)."""
    case_id = run_scenario(sessions, officers, virtual_clock, "p23")
    found = docs(sessions, case_id)
    english, hindi = found["release_receipt", "en"], found["release_receipt", "hi"]
    assert_states(english, [
        "Received from Owner M, the owner, the sum of ₹1,360.00: the fine for the 2 heads of cattle impounded on "
        "Monday, 5 January 2026, and the expenses of feeding every animal in the pound up to the day it was "
        "released, died or escaped. The cattle listed below were released to the owner on Thursday, 8 January "
        "2026, within the days allowed for release; the others were not released.",
        "Cattle released to the owner: 1 # Species Description Tag / marks 1 cow brown cow RJ-2301",
        "Cattle not released: 1 Species Description Tag / marks What happened "
        "cow old black cow RJ-2302 died on Tuesday, 6 January 2026",
        "Fine (F) ₹1,000.00", "Expenses of feeding in the pound (C) ₹360.00", "Total ₹1,360.00"])
    text = html_text(english)
    assert "old black cow RJ-2302" not in text.split("Cattle not released")[0]  # not among those released
    assert "Number and description of the cattle" not in text
    assert_states(hindi, ["Owner M", "₹1,360.00", "RJ-2301", "RJ-2302", "₹1,000.00", "₹360.00"])
    hindi_text = squeezed(html_text(hindi))
    for wanted in ["स्वामी Owner M से ₹1,360.00 की राशि प्राप्त हुई: सोमवार, 5 जनवरी 2026 को निरुद्ध किए गए 2 पशुओं का "
                   "जुर्माना, और कांजी हाउस में हर पशु का खुराक व्यय उस दिन तक जिस दिन वह छुड़ाया गया, मर गया या भाग गया।",
                   "नीचे लिखे पशु छुड़ाने के लिए दिए गए दिनों के भीतर गुरुवार, 8 जनवरी 2026 को स्वामी को सौंपे गए; शेष पशु नहीं छुड़ाए गए।",
                   "स्वामी को सौंपे गए पशु: 1", "न छुड़ाए गए पशु: 1", "क्या हुआ",
                   "RJ-2302 मंगलवार, 6 जनवरी 2026 को मृत्यु हुई"]:
        assert squeezed(wanted) in hindi_text, wanted
    assert hindi_text.index(squeezed("RJ-2301")) < hindi_text.index(squeezed("न छुड़ाए गए पशु")) \
        < hindi_text.index(squeezed("RJ-2302"))


def test_a_release_after_an_escape_says_the_animal_escaped_and_on_which_day(sessions, officers, virtual_clock):
    """p23 with the old cow escaping (not dying) at 08:00 on 6 January: the same money (an escaped
    animal's fine counts and its feeding stops that day) and "escaped on" in both languages."""
    scenario = simulate.load_scenario(next(SCENARIOS.glob("p23-*.yaml")))
    scenario.steps[0].do = "record_escape"
    case_id = run_scenario(sessions, officers, virtual_clock, "p23", scenario=scenario)
    found = docs(sessions, case_id)
    assert_states(found["release_receipt", "en"], [
        "Cattle released to the owner: 1", "1 cow brown cow RJ-2301",
        "cow old black cow RJ-2302 escaped on Tuesday, 6 January 2026", "Total ₹1,360.00"])
    assert "died on" not in html_text(found["release_receipt", "en"])
    assert squeezed("RJ-2302 मंगलवार, 6 जनवरी 2026 को भाग गया") in squeezed(html_text(found["release_receipt", "hi"]))


def test_a_release_with_the_whole_lot_says_nothing_of_cattle_not_released(sessions, officers, virtual_clock):
    """s6: the one camel impounded is released; no line about cattle not released, in either language."""
    case_id = run_scenario(sessions, officers, virtual_clock, "s6")
    found = docs(sessions, case_id)
    english, hindi = html_text(found["release_receipt", "en"]), squeezed(html_text(found["release_receipt", "hi"]))
    assert "Number and description of the cattle: 1" in english
    for absent in ("not released", "Cattle released to the owner", "died on", "escaped on", "What happened"):
        assert absent not in english
    for absent in ("न छुड़ाए गए पशु", "स्वामी को सौंपे गए पशु:", "क्या हुआ", "मृत्यु हुई", "भाग गया"):
        assert squeezed(absent) not in hindi


def test_p08_receipt_after_accepting_the_highest_bid_names_the_auctions_last_day(sessions, officers, virtual_clock):
    """The auction closed unsold on its third day (8 February); the sarpanch accepted the highest
    bid on 10 February, which is the sale day, not the day the auction closed."""
    case_id = run_scenario(sessions, officers, virtual_clock, "p08")
    receipt = docs(sessions, case_id)[("sale_receipt:1", "en")]
    assert_states(receipt, ["the auction closed on Sunday, 8 February 2026 without reaching the full price of ₹12,000.00"])
    with sessions() as session:
        cf = casefile.load(session.get(Case, case_id).file_json)
    assert cf.auction.closed_on == date(2026, 2, 8) and cf.sale.day == date(2026, 2, 10)


# -- the orders and letters added with the corrections (issue 20 item 1) ------------------------------

def test_s2_ends_with_the_final_settlement_with_the_owner(sessions, officers, virtual_clock):
    case_id = run_scenario(sessions, officers, virtual_clock, "s2")
    found = docs(sessions, case_id)
    settlement = found["settlement", "en"]
    assert (settlement.number, settlement.clause, settlement.issued_by) == (
        "RMP/2026/0001/S1", "Rule 130(d)", officers["sarpanch"].id)
    # F 400 + C 560 + Cb 4480 paid in; the buyer repaid 21000 + 4480; P = 500; C - P = 60 to the fund
    assert_states(settlement, [
        "Final settlement with Ramesh", "the cattle were delivered on Sunday, 3 May 2026", "Fine ₹400.00",
        "Expenses of feeding in the pound ₹560.00", "Buyer's expenses of feeding ₹4,480.00",
        "Paid in by the owner ₹5,440.00",
        "To the buyer: the auction money and the expenses of feeding (condition (b)(ii)) ₹25,480.00",
        "To the pound keeper: feeding charges ₹500.00",
        "To the Panchayat fund: the rest of the expenses of feeding ₹60.00", "The case is closed."])
    assert_states(found["settlement", "hi"], ["Ramesh के साथ अंतिम निपटारा", "स्वामी द्वारा जमा ₹5,440.00",
                                              "नियम 130(घ)"])


def test_s4_the_appellate_authoritys_decision_is_on_paper_and_signed_by_the_forum(sessions, officers,
                                                                                  virtual_clock):
    case_id = run_scenario(sessions, officers, virtual_clock, "s4")
    found = docs(sessions, case_id)
    decision = found["appeal_decision:1", "en"]
    assert (decision.number, decision.clause, decision.issued_by) == (
        "RMP/2026/0001/P1", "Rule 130(e) proviso", officers["appellate_authority"].id)
    assert_states(decision, [
        "Decision on the appeal of Late Claimant", "Late Claimant appealed on Sunday, 20 September 2026",
        "appeal dismissed: the decision stands", "Decided on Saturday, 10 October 2026",
        "This decision on the appeal is final (Rule 130(e) proviso).", "Appellate authority: Vikas Adhikari"])
    assert_states(found["appeal_decision:1", "hi"], ["अपील खारिज: निर्णय यथावत", "अपील प्राधिकारी: पंचायत समिति SAM1 के विकास अधिकारी"])


# -- the text layer of every kind of document, in both languages ---------------------------------------

def text_of(html_text: str) -> str:
    """The text of an HTML fragment or page's body (markup dropped, entities resolved), as it reads."""
    root = lxml.html.document_fromstring(html_text)
    return root.find("body").text_content() if root.find("body") is not None else root.text_content()


def correct_the_notice(sessions, officers, virtual_clock) -> int:
    """Scenario s1 up to the notice, then the notice's publication corrected: the notice cancelled."""
    from webapp.services.cases import corrections
    from webapp.services.running import acts
    case_id = run_scenario(sessions, officers, virtual_clock, "s1", until_step=1)
    virtual_clock.set(scenario_file._instant("2026-01-09T12:00:00+05:30", "at"))
    secretary = officers["secretary"]
    with sessions() as session:
        act_id = acts.latest(session, case_id).id
    uow.perform(sessions, "correct_act", corrections.correct, secretary, case_id, act_id,
                "full price typed as 1200 for 12000", case_id=case_id, user=secretary)
    return case_id


def amend_the_notice(sessions, officers, virtual_clock) -> int:
    """Scenario s1 up to the notice, then a corrigendum of the opening record (an animal's
    description): the notice superseded and reissued, the corrigendum notice issued."""
    from webapp.services.cases import corrigenda
    case_id = run_scenario(sessions, officers, virtual_clock, "s1", until_step=1)
    virtual_clock.set(scenario_file._instant("2026-01-09T12:00:00+05:30", "at"))
    secretary = officers["secretary"]
    uow.perform(sessions, "corrigendum", corrigenda.issue, secretary, case_id, "opening",
                {"animals.1.description": "brown cow, white star on forehead"}, "the description was misread",
                case_id=case_id, user=secretary)
    return case_id


# case -> the document kinds it issues (KINDS), and whether its first document is then cancelled
TEXT_LAYER_CASES = {
    "s1": {"notice", "sale_receipt", "stand_order"},
    "s2": {"notice", "sale_receipt", "objection_order", "delivery_order", "settlement"},
    "s3": {"notice", "remittance", "dispatch_letter", "stand_order"},
    "s4": {"notice", "sale_receipt", "stand_order", "appeal_decision"},
    "s5": {"notice", "objection_order", "interim_delivery_order", "delivery_order", "settlement"},
    "s6": {"release_receipt"},
    "cancelled notice": {"notice", "correction_notice"},
    "amended notice": {"notice", "corrigendum_notice"},
    "p88": {"notice", "sale_receipt", "stand_order"},  # 33 head of cattle: two pages each, the list's header repeated
}


def test_the_text_layer_cases_cover_every_kind_of_document():
    assert set().union(*TEXT_LAYER_CASES.values()) == set(documents.KINDS)


@pytest.mark.parametrize("name", sorted(TEXT_LAYER_CASES))
def test_the_text_layer_of_every_kind_of_document_is_its_stored_text_in_both_languages(
        name, app, sessions, officers, virtual_clock):
    """Each PDF's text (pdftotext) is exactly: the CANCELLED line of a cancelled document, the
    stored text, the line with its number and SHA-256 (whitespace ignored) — apart from what the
    printed page adds: the page number at each page's foot ("2 / 3", documents.css) and, on a page
    that continues a table, the table's header row again (Chromium repeats a ``thead``). The PDF is
    tagged, in the document's language, and a reprint gives the same bytes."""
    if name == "cancelled notice":
        case_id = correct_the_notice(sessions, officers, virtual_clock)
    elif name == "amended notice":
        case_id = amend_the_notice(sessions, officers, virtual_clock)
    else:
        case_id = run_scenario(sessions, officers, virtual_clock, name)
    found = docs(sessions, case_id)
    assert {row.kind for row in found.values()} == TEXT_LAYER_CASES[name]
    assert {language for _, language in found} == {"en", "hi"}
    client = app.test_client()
    login(client, "sec")
    printed, repeats = {}, {}
    for (key, language), row in sorted(found.items()):
        response = client.get(f"/cases/{case_id}/documents/{row.id}.pdf")
        assert response.status_code == 200 and response.mimetype == "application/pdf"
        printed[key, language] = response.data
        page_html = lxml.html.document_fromstring(documents.pdf_page(row))
        [verify] = page_html.find_class("doc-verify")
        assert row.number in verify.text_content() and row.sha256 in verify.text_content()
        banner = ""
        if row.cancelled_at is not None:
            [cancelled] = page_html.find_class("doc-cancelled")
            banner = cancelled.text_content()
            if name == "amended notice":  # superseded by the corrigendum, not cancelled by a correction
                assert row.cancel_reason == (f"superseded by corrigendum {row.number.rsplit('/', 1)[0]}/C1: "
                                             "the description was misread") and row.cancel_reason in banner
                assert ("SUPERSEDED" if language == "en" else "अधिक्रमित") in banner
            else:
                assert row.cancel_reason == "full price typed as 1200 for 12000" and row.cancel_reason in banner
                assert ("CANCELLED" if language == "en" else "निरस्त") in banner
        expected = squeezed(banner) + squeezed(text_of(row.html)) + squeezed(verify.text_content())
        headers = [squeezed(head.text_content()) for head in page_html.iter("thead")]
        pages = pdf_pages(response.data)
        text = ""
        for number, page in enumerate(pages, start=1):
            read = squeezed(page)
            footer = f"{number}/{len(pages)}"  # drawn first: it leads the page's text
            assert read.startswith(footer), f"{row.number} ({language}) page {number}: {page[:80]!r}"
            read = read[len(footer):]
            repeated = next((head for head in headers if number > 1 and read.startswith(head)
                             and not expected.startswith(head, len(text))), None)
            if repeated:
                read = read[len(repeated):]
                repeats[key, language] = repeats.get((key, language), 0) + 1
            assert expected.startswith(read, len(text)), (
                f"{row.number} ({language}) page {number}: the PDF reads\n{read}\nthe document\n{expected[len(text):]}")
            text += read
        assert text == expected, f"{row.number} ({language}): the PDF ends early\n{text}\nthe document\n{expected}"
        if language == "hi":
            assert re.search("[\u0900-\u097f]{20}", text)  # Devanagari in the text layer, not only Latin
        # tagged: a structure tree, marked content, the language of the document
        catalog = PdfReader(io.BytesIO(response.data)).trailer["/Root"]
        assert "/StructTreeRoot" in catalog and catalog["/MarkInfo"]["/Marked"].value is True
        assert catalog["/Lang"] == language
    if name == "p88":  # the multi-page case did continue a table: each document's list of cattle, on page 2
        assert repeats == {(key, language): 1 for key, language in found}
    # a reprint, after the other documents were printed, gives the same bytes
    for (key, language), row in sorted(found.items(), reverse=True):
        again = client.get(f"/cases/{case_id}/documents/{row.id}.pdf").data
        assert again == printed[key, language], f"{row.number} ({language}) printed twice differs"


def test_the_printable_page_of_a_hindi_document_says_its_hash_line_in_hindi_whatever_the_page_language(
        app, sessions, officers, virtual_clock):
    case_id = run_scenario(sessions, officers, virtual_clock, "s1", until_step=1)
    notice = docs(sessions, case_id)["notice", "hi"]
    client = app.test_client()
    login(client, "sec")  # the interface in English
    page = lxml.html.document_fromstring(client.get(f"/cases/{case_id}/documents/{notice.id}").get_data(as_text=True))
    [line] = page.find_class("doc-verify")
    assert line.get("lang") == "hi"
    assert line.text_content().strip() == documents.verify_line(notice, True)
    assert notice.sha256 in line.text_content() and "Document" not in line.text_content()
