"""The case on one screen (diagram marks, next timer, deadlines, parties, money by account,
documents, audit trail) and the case search, scoped to the user's Panchayat."""

from __future__ import annotations

import json
import re

import lxml.html

from .test_web_pages import BLOCKS, at, complete, login, publish_notice, start_case_on_page, task_link, text_of


def sold_to_bidder_b(client, sessions, virtual_clock) -> int:
    """Scenario s1 to the sale: notice 2026-01-09 (30 days, full price ₹12,000), Bidder A ₹9,000 at
    12:00 and Bidder B ₹12,500 at 15:00 on 2026-01-10 (the full price closes the auction)."""
    case_id = start_case_on_page(client, virtual_clock)
    publish_notice(client, sessions, virtual_clock, case_id)
    virtual_clock.set(at("2026-01-10T12:00:00+05:30"))
    assert complete(client, task_link(client, "Record bid"), bidder="Bidder A", amount="9000.00").status_code == 302
    virtual_clock.set(at("2026-01-10T15:00:00+05:30"))
    assert complete(client, task_link(client, "Record bid"), bidder="Bidder B", amount="12500.00").status_code == 302
    return case_id


def section_text(doc, section_id: str) -> str:
    """The visible text of one section, blocks (dt, dd, td...) separated by a space."""
    section = doc.get_element_by_id(section_id)
    for node in section.iter(*BLOCKS):
        node.tail = " " + (node.tail or "")
    return re.sub(r"\s+", " ", section.text_content()).strip()


def test_the_case_page_shows_deadlines_next_timer_parties_money_and_audit_trail(client, sessions, virtual_clock):
    case_id = sold_to_bidder_b(client, sessions, virtual_clock)
    page = client.get(f"/cases/{case_id}")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    doc = lxml.html.fromstring(html)

    deadlines = section_text(doc, "deadlines")
    assert "Release window (owner), last day Thursday, 8 January 2026" in deadlines
    assert "Objections, last day Sunday, 8 February 2026" in deadlines
    assert "Conditional auction, last day Sunday, 11 January 2026" in deadlines
    # the buyer may not transfer for 30 days after the sale (2026-01-10), or until the final decision if later
    assert "Transfer lock (condition b(i)), until Monday, 9 February 2026" in deadlines

    # the next timer: the objection period ends at 00:00 of the day after its last day (Rule 130(a))
    assert "Next timer: Objection period ends — Monday, 9 February 2026 00:00" in text_of(page)
    # the diagram drawn on the server, the case's marks over it (tests/test_diagram_pictures.py)
    marks = {node.get("data-marks"): node.get("class") for node in doc.xpath("//*[@id='case-picture']//*[@data-marks]")}
    assert marks["n_ice_period_ends"] == "mark waiting"
    assert marks["start_impounded"] == "mark done"
    assert marks["ut_publish_notice"] == "mark done"

    parties = [[re.sub(r"\s+", " ", td.text_content()).strip() for td in row.xpath("td")]
               for row in doc.xpath("//table[contains(@class,'parties')]/tbody/tr")]
    assert parties == [["bidder", "Bidder A", "—"], ["bidder", "Bidder B", "—"], ["buyer", "Bidder B", "full price"]]

    # the money by account: the sale price waits in suspense until the outcome is final
    assert doc.get_element_by_id("bal-suspense").text_content().strip() == "₹12,500.00"
    suspense = doc.get_element_by_id("account-suspense")
    assert re.sub(r"\s+", " ", suspense.xpath("caption")[0].text_content()).strip() == "suspense: balance ₹12,500.00"
    cells = [re.sub(r"\s+", " ", td.text_content()).strip() for td in suspense.xpath("tbody/tr[1]/td")]
    # the entry's number, which a reversal names: its id (on PostgreSQL the check step's rolled-back
    # preview of the bid has used a number of the sequence, so the first entry need not be 1)
    from webapp.services.money import ledger
    with sessions() as session:
        [entry] = ledger.entries(session, case_id)
    assert cells[0] == str(entry.id)
    assert cells[3:7] == ["buyer", "₹12,500.00", "", "₹12,500.00"]
    buyer = doc.get_element_by_id("account-buyer")
    assert "buyer: balance -₹12,500.00" in buyer.text_content()

    documents = section_text(doc, "documents")
    # the documents issued so far, each with its number, instant and clause, in English and Hindi
    assert "Notice of impounded cattle RMP/2026/0001/N1 Friday, 9 January 2026 11:00 Rule 130(a) and (b)" in documents
    assert ("Receipt for auction money (conditional sale) RMP/2026/0001/R1 Saturday, 10 January 2026 15:00 "
            "Rule 130(b)") in documents
    assert documents.count("printable page") == 4 and "हिन्दी:" in documents

    # the audit trail: who, when, with which data, under which clause
    rows = [[re.sub(r"\s+", " ", td.text_content()).strip() for td in row.xpath("td")]
            for row in doc.xpath("//table[contains(@class,'history')]/tbody/tr")]
    bids = [r for r in rows if r[1] == "Record bid"]
    assert len(bids) == 2
    assert bids[1][0] == "Saturday, 10 January 2026 15:00"
    assert bids[1][2] == "Secretary (secretary)"
    assert bids[1][3] == "bidder: Bidder B; amount: ₹12,500.00"  # an amount in rupees, as elsewhere on the page
    assert bids[1][4].startswith("Rule 130(b)")
    timer = next(r for r in rows if r[1].startswith("Timer: Release window ends"))
    assert timer[0] == "Friday, 9 January 2026 00:00" and timer[2] == "timer"
    start = next(r for r in rows if r[1] == "Cattle impounded")
    assert start[2] == "Pound Keeper (pound keeper)" and start[4].startswith("Rule 130")

    # it prints as one document: print rules hide the navigation and forms, not the content
    css = client.get("/static/style.css").get_data(as_text=True)
    assert "@media print" in css and ".noprint" in css


def test_the_case_page_in_hindi(client, sessions, virtual_clock):
    case_id = sold_to_bidder_b(client, sessions, virtual_clock)
    client.post("/language", data={"lang": "hi", "next": "/tasks"})
    page = client.get(f"/cases/{case_id}")
    doc = lxml.html.fromstring(page.get_data(as_text=True))
    assert doc.get("lang") == "hi"
    deadlines = section_text(doc, "deadlines")
    assert "आपत्ति का अंतिम दिन रविवार, 8 फ़रवरी 2026" in deadlines
    assert "अगला टाइमर: आपत्ति अवधि समाप्त — सोमवार, 9 फ़रवरी 2026 00:00" in text_of(page)
    assert doc.get_element_by_id("bal-suspense").text_content().strip() == "₹12,500.00"
    assert "उचंत खाता: शेष ₹12,500.00" in section_text(doc, "money")
    assert "क्रेता" in section_text(doc, "parties")


def test_the_history_shows_amounts_in_rupees_in_english_and_hindi(client, sessions, virtual_clock):
    """Form amounts (bid, full price) and a ledger reversal's amount are shown as ₹ with Indian
    grouping, like the rest of the case page; other values (a bidder, an entry number) stay as recorded."""
    from decimal import Decimal

    from webapp.services.money import ledger
    from webapp.store.models import Case

    case_id = sold_to_bidder_b(client, sessions, virtual_clock)
    with sessions() as session:  # the auction money posted twice (as a faulty earlier version could have)
        book = ledger.CaseLedger(session, session.get(Case, case_id), None)
        book.element_id = "svc_conclude_sale"
        posted = book.post("buyer", "suspense", Decimal("12500.00"), kind="auction_money", clause="Rule 130(b)")
        session.commit()
        twice = posted.id
    reversed_ = client.post(f"/cases/{case_id}/ledger/reversals", data={"entry": str(twice), "reason": "posted twice"})
    assert reversed_.status_code == 302, text_of(reversed_)

    def history() -> dict[str, list[str]]:
        doc = lxml.html.fromstring(client.get(f"/cases/{case_id}").get_data(as_text=True))
        found: dict[str, list[str]] = {}
        for row in doc.xpath("//table[contains(@class,'history')]/tbody/tr"):
            cells = [re.sub(r"\s+", " ", td.text_content()).strip() for td in row.xpath("td")]
            found.setdefault(cells[1], []).append(cells[3])
        return found

    rows = history()
    assert rows["Record bid"] == ["bidder: Bidder A; amount: ₹9,000.00", "bidder: Bidder B; amount: ₹12,500.00"]
    [notice] = rows["Publish notice and open conditional auction"]
    assert "full price: ₹12,000.00" in notice and "objection period days: 30" in notice
    [reversal] = rows["Ledger entry reversed"]
    assert reversal.startswith(f"entry: {twice}; reversal: {twice + 1}; amount: ₹12,500.00; from: buyer; to: suspense")
    client.post("/language", data={"lang": "hi", "next": "/tasks"})
    hindi = "\n".join(cell for cells in history().values() for cell in cells)
    assert "₹9,000.00" in hindi and "₹12,500.00" in hindi and "₹12,000.00" in hindi
    assert "9000.00" not in hindi and "12500.00" not in hindi and "12000" not in hindi


def test_the_history_lists_the_release_timer_before_the_report_it_raised_on_a_running_clock(client, sessions,
                                                                                             virtual_clock):
    """On a clock that runs (as the wall clock does), the notification the timer's firing caused is
    written microseconds after the engine started; the timer's row is written first, at the instant
    it fired, so the history (page and API) reads cause, then effect."""
    from webapp.services.cases import cases
    from webapp.services.jobs import timers
    from webapp.store.models import Case, CaseEvent
    from webapp.values import clock

    case_id = start_case_on_page(client, virtual_clock)
    with clock.installed(clock.OffsetClock(at("2026-01-09T00:00:00.500000+05:30"))):  # real speed from here
        assert timers.fire_due(sessions) == 1
    with sessions() as session:
        rows = [(e.kind, e.name) for e in cases.history(session, session.get(Case, case_id))]
        written = {e.kind: e for e in session.query(CaseEvent).filter(CaseEvent.case_id == case_id)}
        timer, notice = written["timer"], written["notification"]
        assert timer.id < notice.id and timer.at <= notice.at  # written first, not later
        assert json.loads(timer.detail_json)["due"] == "2026-01-08T18:30:00+00:00"
        assert timer.at >= at("2026-01-09T00:00:00.500000+05:30")
    assert rows == [("start", "Cattle impounded"), ("timer", "Release window ends (3 days)"),
                    ("notification", "report_raised")]
    doc = lxml.html.fromstring(client.get(f"/cases/{case_id}").get_data(as_text=True))
    what = [re.sub(r"\s+", " ", row.xpath("td")[1].text_content()).strip()
            for row in doc.xpath("//table[contains(@class,'history')]/tbody/tr")]
    assert what == ["Cattle impounded", "Timer: Release window ends (3 days)", "Notified: report raised"]


def test_case_search_by_tag_party_village_and_number_within_scope(app, client, sessions, virtual_clock):
    case_id = sold_to_bidder_b(client, sessions, virtual_clock)  # signed in as the secretary of Rampura
    found = client.get("/cases", query_string={"q": "RJ-1002"})
    assert found.status_code == 200
    doc = lxml.html.fromstring(found.get_data(as_text=True))
    links = doc.xpath("//table[contains(@class,'results')]//a/@href")
    assert links == [f"/cases/{case_id}"]
    assert "tag: RJ-1002" in text_of(found) and "1 case matches “RJ-1002”." in text_of(found)
    by_party = text_of(client.get("/cases", query_string={"q": "bidder b"}))
    assert "RMP/2026/0001" in by_party and "buyer: Bidder B" in by_party and "bidder: Bidder B" in by_party
    assert "RMP/2026/0001" in text_of(client.get("/cases", query_string={"q": "Bhimpura"}))
    assert "RMP/2026/0001" in text_of(client.get("/cases", query_string={"q": "2026/0001"}))
    # words must all match; a word found only outside the searchable fields (a species) is no match
    assert "No case open to you matches “cow”." in text_of(client.get("/cases", query_string={"q": "cow"}))
    assert "No case open to you" in text_of(client.get("/cases", query_string={"q": "Bidder Z"}))
    assert "No case open to you" in text_of(client.get("/cases", query_string={"q": "%"}))
    assert "at most 100 characters" in text_of(client.get("/cases", query_string={"q": "x" * 101}))
    # another Panchayat's secretary does not find Rampura's case
    login(client, "sec-khr")
    assert "No case open to you matches “RJ-1002”." in text_of(client.get("/cases", query_string={"q": "RJ-1002"}))
    # the appellate authority of the Samiti does
    login(client, "app")
    assert "RMP/2026/0001" in text_of(client.get("/cases", query_string={"q": "RJ-1002"}))


def test_a_refusal_reads_in_hindi_with_the_last_day_as_babel_formats_it(client, sessions, virtual_clock):
    case_id = sold_to_bidder_b(client, sessions, virtual_clock)  # the secretary is signed in
    client.post("/language", data={"lang": "hi", "next": "/tasks"})
    early = client.post(f"/cases/{case_id}/appeals", data={"appellant": "Mohan"})
    assert early.status_code == 422
    assert "पंचायत ने इस प्रकरण में अभी कोई निर्णय नहीं किया है" in text_of(early)
    virtual_clock.set(at("2026-02-09T10:00:00+05:30"))  # the day after the last day for objections
    late = client.post(f"/cases/{case_id}/objections", data={"objector": "Ram Lal"})
    assert late.status_code == 422
    assert ("आपत्ति अवधि रविवार, 8 फ़रवरी 2026 को समाप्त हो गई; इसके बाद कोई आपत्ति स्वीकार नहीं की जाती "
            "(नियम 130(क))") in text_of(late)
    # the history keeps the refusal in English words, as it was recorded
    client.post("/language", data={"lang": "en", "next": "/tasks"})
    history = text_of(client.get(f"/cases/{case_id}"))
    assert "message: the objection period ended on Sunday, 8 February 2026" in history


def test_an_appeal_filed_during_the_notice_period_is_shown_waiting_with_the_periods_last_day(client, sessions,
                                                                                            virtual_clock):
    case_id = sold_to_bidder_b(client, sessions, virtual_clock)
    virtual_clock.set(at("2026-01-15T11:00:00+05:30"))
    assert client.post(f"/cases/{case_id}/objections", data={"objector": "Suresh"}).status_code == 302
    login(client, "sar")
    decided = complete(client, task_link(client, "Decide ownership claim"), decision="not_proved")
    assert decided.status_code == 302, text_of(decided)
    login(client, "sec")
    virtual_clock.set(at("2026-01-20T11:00:00+05:30"))  # the notice period runs to 2026-02-08
    assert client.post(f"/cases/{case_id}/appeals", data={"appellant": "Ramesh"}).status_code == 302
    doc = lxml.html.fromstring(client.get(f"/cases/{case_id}").get_data(as_text=True))
    waiting = re.sub(r"\s+", " ", doc.get_element_by_id("appeal-waiting").text_content()).strip()
    assert waiting == ("The appeal of Ramesh, filed on Tuesday, 20 January 2026, is recorded; the appellate "
                       "authority is given it once the notice period is over (last day Sunday, 8 February 2026).")


def test_the_history_shows_a_decision_as_the_form_words_it_in_english_and_hindi(client, sessions, virtual_clock):
    """A recorded choice of a form's list (decision: not_proved) reads as the form's option does."""
    case_id = start_case_on_page(client, virtual_clock)
    publish_notice(client, sessions, virtual_clock, case_id)
    virtual_clock.set(at("2026-01-12T11:00:00+05:30"))
    assert client.post(f"/cases/{case_id}/objections", data={"objector": "Ram Lal"}).status_code == 302
    virtual_clock.set(at("2026-01-13T11:00:00+05:30"))
    login(client, "sar")
    decided = complete(client, task_link(client, "Decide ownership claim"), decision="not_proved", reason="no proof")
    assert decided.status_code == 302, text_of(decided)

    def decision_cell() -> str:
        doc = lxml.html.fromstring(client.get(f"/cases/{case_id}").get_data(as_text=True))
        [row] = [r for r in doc.xpath("//table[contains(@class,'history')]/tbody/tr")
                 if "decision" in r.text_content() or "निर्णय" in r.text_content()]
        return re.sub(r"\s+", " ", row.xpath("td")[3].text_content()).strip()

    assert decision_cell().startswith("decision: not proved; reason: no proof")
    client.post("/language", data={"lang": "hi", "next": "/tasks"})
    hindi = decision_cell()
    assert "सिद्ध नहीं" in hindi and "not_proved" not in hindi and "not proved" not in hindi
