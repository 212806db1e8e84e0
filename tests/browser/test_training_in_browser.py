"""The training Panchayat in a real browser (issue 21 item 1, "Done when").

``rule130 training TRN1`` makes a training Panchayat in the database of the live Panchayat RMP, and
one server serves both. The trainee pound keeper signs in and starts a case; the training clock is
moved from the browser (the Training clock page, reached by the band's link: "by N days" and "to
the next timer", each through its check step) past the release window, through the conditional
auction, past the objection period and the appeal period, while the trainee officers complete
every task in the browser along scenario s1's path (tests/scenarios/s1-no-objection-full-price.yaml:
the notice, a bid above the full price, no objection, the sarpanch's order that the auction
stand). The case must end as that scenario expects (deadlines, sale, fees, ledger). Every page a
trainee opens carries the TRAINING band; every document's printable page and every PDF carries
"TRAINING — not valid as an order or receipt" at its head and foot.

Beside it the live Panchayat RMP, whose pound keeper started a case on the same server first: its
cases, timer firings, notifications, deliveries, ledger entries and register rows are counted
before and after, and must be exactly what they were; its officer's pages carry no band; the timer
worker's and the reminders' passes on the real clock fire nothing of it early, and its own timer
fires at its real instant.

The real clock is the test's virtual clock (tests/browser/conftest.py): it stays at 5 January 2026
10:05 IST while the training clock runs two months ahead. Screenshots of the Training clock page
and its check step at 360 px and 1280 px go to build/screenshots (or $RULE130_SCREENSHOTS:
scripts/screenshots.sh refreshes the ones the README shows).
"""

from __future__ import annotations

import re
from datetime import datetime

from click.testing import CliRunner
from sqlalchemy import func, or_, select

from webapp.cli import main
from webapp.services.cases import cases
from webapp.services.jobs import reminders, timers
from webapp.services.reports import registers
from webapp.services.tasks import tasks
from webapp.simulation.simulate import _compare, _result, load_scenario
from webapp.store.models import (
    Case,
    CaseEvent,
    Delivery,
    LedgerEntry,
    Notification,
    NotificationPreference,
    Panchayat,
    TimerFiring,
    User,
)

from ..conftest import PASSWORD, SCENARIOS
from ..test_documents import pdf_text, squeezed
from .test_officers_in_browser import DESK, PHONE, shoot

S1 = SCENARIOS / "s1-no-objection-full-price.yaml"
BAND = "TRAINING — Training Panchayat is a training Panchayat: nothing here is a real case, order or receipt."
PAPER_MARKS = {"en": "TRAINING — not valid as an order or receipt",  # each paper in its own language
               "hi": "प्रशिक्षण — आदेश या रसीद के रूप में मान्य नहीं"}


def at(text: str) -> datetime:
    return datetime.fromisoformat(text)


class Visits:
    """Every page a browser is on, checked as it loads: a trainee's carries the TRAINING band (a
    document's printable page, which is the paper itself, the mark at its head and foot); a live
    officer's says TRAINING nowhere. ``paths`` lists the pages checked."""

    def __init__(self, training: bool) -> None:
        self.training = training
        self.paths: list[str] = []

    def look(self, page) -> None:
        page.wait_for_load_state()
        path = "/" + page.url.split("://", 1)[1].split("/", 1)[1]
        self.paths.append(path)
        assert page.locator(".error-box").count() == 0, page.locator(".error-box").first.inner_text()
        band, marks = page.locator("#training-band"), page.locator(".training-mark")
        if not self.training:
            assert band.count() == 0 and marks.count() == 0, f"a live officer's page {path} is marked TRAINING"
            assert "TRAINING" not in page.locator("body").inner_text(), path
            return
        if "/documents/" in path:
            mark = PAPER_MARKS[page.locator("html").get_attribute("lang")]
            assert [m.inner_text() for m in marks.all()] == [mark, mark], f"{path}: not marked at head and foot"
            assert all(m.is_visible() for m in marks.all()), path
            return
        assert band.count() == 1 and band.is_visible(), f"{path} has no TRAINING band"
        assert band.inner_text().startswith(BAND), band.inner_text()
        # a band, not a line of text: its stripes and rules drawn (style.css)
        drawn = band.evaluate("e => { const s = getComputedStyle(e); return [s.backgroundImage, s.borderTopWidth]; }")
        assert drawn[0].startswith("repeating-linear-gradient") and drawn[1] == "3px", f"{path}: the band is not drawn"

    def goto(self, page, url: str) -> None:
        page.goto(url)
        self.look(page)

    def click(self, page, selector: str) -> None:
        page.click(selector)
        self.look(page)


def sign_in(browser, base: str, username: str, viewport: dict, visits: Visits):
    context = browser.new_context(viewport=viewport, locale="en-IN")
    page = context.new_page()
    page.goto(f"{base}/login")
    page.fill("[name=username]", username)
    page.fill("[name=password]", PASSWORD)
    visits.click(page, "form [type=submit]")
    assert "/login" not in page.url, f"{username} could not sign in"
    return page


def new_case(page, visits: Visits, base: str, place: str) -> int:
    """The new-case form: scenario s1's two cows, impounded 2026-01-05 10:00 at ``place``."""
    visits.goto(page, f"{base}/cases/new")
    page.fill("#impounded_at", "2026-01-05T10:00")
    page.fill("#place_seized", place)
    page.fill("#place_impounded", f"Kanji House, {place}")
    page.fill("#nearest_village", place)
    for n, animal in enumerate(load_scenario(S1).case["animals"], start=1):
        page.select_option(f"[name=species-{n}]", animal["species"])
        page.fill(f"[name=description-{n}]", animal["description"])
        page.fill(f"[name=tag-{n}]", animal["tag"])
    visits.click(page, "main form [type=submit]")
    visits.click(page, "#check-confirm")  # the new case's check page
    return int(page.url.rstrip("/").split("/")[-1])


def do_task(page, base: str, sessions, visits: Visits, case_id: int, element: str, **fields: str) -> None:
    """From My tasks, open the ready task ``element`` of the case, fill in ``fields``, send the form
    and confirm on its check page (every act passes a check step)."""
    with sessions() as session:
        task_id = tasks.find_ready(session, session.get(Case, case_id), element)
    assert task_id is not None, f"no ready task {element}"
    visits.goto(page, f"{base}/tasks")
    visits.click(page, f'a[href$="/cases/{case_id}/tasks/{task_id}"]')
    for name, value in fields.items():
        page.fill(f"[name={name}]", value)
    visits.click(page, "main form.card [type=submit]")
    assert page.locator("#check-confirm").count() == 1, "no check page after the form"
    visits.click(page, "#check-confirm")
    assert page.url == f"{base}/cases/{case_id}"


def move_clock(page, base: str, visits: Visits, *, days: str | None = None, shots: str | None = None) -> dict:
    """Open the Training clock page by the band's link, ask for a move by ``days`` (None: to the
    next timer), read the check step, confirm; what the check step and the page after it said."""
    visits.click(page, "#training-band a")
    assert page.url == f"{base}/training/clock"
    if days is None:
        visits.click(page, "#move-next-timer")
    else:
        page.fill("#days", days)
        visits.click(page, "#move-days")
    said = {"now": page.locator("#check-values dd").first.inner_text(), "to": page.locator("#check-to").inner_text(),
            "follows": [li.inner_text() for li in page.locator("#check-follows li").all()]
            or [page.locator("#check-follows").inner_text()]}
    if shots:
        shoot(page, f"{shots}-check")
    visits.click(page, "#check-confirm")
    assert page.url == f"{base}/training/clock"
    said["flash"] = [p.inner_text() for p in page.locator("main .flash").all()]
    said["reads"] = page.locator("#training-now").inner_text()
    if shots:
        shoot(page, f"{shots}-clock")
    return said


def counts(sessions, code: str) -> dict[str, int]:
    """What the Panchayat ``code`` holds: its cases, their timer firings and timer events, the
    notifications on its cases or to its officers and the e-mails and webhooks queued for them,
    its ledger entries, and the rows of its registers over the financial years 2025-26 and 2026-27
    (pound register, receipts, account of charges, statement of accounts)."""
    with sessions() as session:
        panchayat = session.scalar(select(Panchayat).where(Panchayat.code == code))
        its_cases = select(Case.id).where(Case.panchayat_id == panchayat.id)
        its_officers = select(User.id).where(User.panchayat_id == panchayat.id)
        its_notifications = select(Notification.id).where(or_(Notification.case_id.in_(its_cases),
                                                              Notification.user_id.in_(its_officers)))
        period = registers.period(panchayat, "2025-04-01", "2027-03-31")

        def count(query) -> int:
            return session.scalar(select(func.count()).select_from(query.subquery()))

        return {
            "cases": count(its_cases),
            "timer firings": count(select(TimerFiring.id).where(TimerFiring.case_id.in_(its_cases))),
            "timer events": count(select(CaseEvent.id).where(CaseEvent.case_id.in_(its_cases),
                                                             CaseEvent.kind == "timer")),
            "notifications": count(its_notifications),
            "deliveries": count(select(Delivery.id).where(Delivery.notification_id.in_(its_notifications))),
            "ledger entries": count(select(LedgerEntry.id).where(LedgerEntry.panchayat_id == panchayat.id)),
            "pound register rows": len(registers.pound_register(session, panchayat, period)),
            "receipts": len(registers.receipts(session, panchayat, period)),
            "charges rows": len(registers.charges(session, panchayat, period)),
            "statement lines": sum(len(account.lines)
                                   for account in registers.statement(session, panchayat, period).accounts),
        }


def test_trainees_carry_a_case_to_the_final_order_on_their_own_clock_and_the_live_panchayat_sees_nothing(
        browser, live_server, sessions, database_url, virtual_clock):
    base = live_server
    virtual_clock.set(at("2026-01-05T10:05:00+05:30"))  # the real clock, until the very end
    made = CliRunner().invoke(main, ["training", "TRN1", "--password", PASSWORD, "--database", database_url])
    assert made.exit_code == 0, made.output
    assert "training Panchayat TRN1 (Training Panchayat) created" in made.output
    with sessions() as session:  # the trainee secretary and sarpanch ask for e-mail and a webhook too
        for username in ("trn1-secretary", "trn1-sarpanch"):
            user = session.scalar(select(User).where(User.username == username))
            session.add(NotificationPreference(
                user_id=user.id, email_enabled=True, email_address=f"{username}@example.org", webhook_enabled=True,
                webhook_url="https://example.org/hook", updated_at=virtual_clock.now()))
        session.commit()

    # The live Panchayat RMP at work on the same server: its pound keeper starts a case.
    live = Visits(training=False)
    pk = sign_in(browser, base, "pk", PHONE, live)
    live_case = new_case(pk, live, base, "Bhimpura")
    live_before = counts(sessions, "RMP")
    assert live_before == {"cases": 1, "timer firings": 0, "timer events": 0, "notifications": 0, "deliveries": 0,
                           "ledger entries": 0, "pound register rows": 2, "receipts": 0, "charges rows": 1,
                           "statement lines": 0}

    # The trainee pound keeper starts a case, on the training clock (the real one so far).
    trainees = Visits(training=True)
    keeper = sign_in(browser, base, "trn1-keeper", PHONE, trainees)
    case_id = new_case(keeper, trainees, base, "Practice village")
    with sessions() as session:
        assert session.get(Case, case_id).case_number == "TRN-TRN1/2026/0001"

    # By 4 days: the release window (the 3 days after the day of impoundment) ends on the way.
    moved = move_clock(keeper, base, trainees, days="4", shots="training")
    assert (moved["now"], moved["to"]) == ("Monday, 5 January 2026 10:05", "Friday, 9 January 2026 10:05")
    assert moved["follows"] == ["TRN-TRN1/2026/0001: a timer due Friday, 9 January 2026 00:00 fires"]
    assert moved["flash"] == ["The training clock now reads Friday, 9 January 2026 10:05.",
                              "TRN-TRN1/2026/0001: 1 timer fired."]
    assert moved["reads"] == "Friday, 9 January 2026 10:05"

    # The trainee secretary publishes the notice (30 days, full price ₹12,000): the auction opens.
    secretary = sign_in(browser, base, "trn1-secretary", DESK, trainees)
    do_task(secretary, base, sessions, trainees, case_id, "ut_publish_notice",
            objection_period_days="30", full_price="12000.00")

    # By 1 day, to the auction's second day: two bids, the second above the full price (it sells).
    moved = move_clock(secretary, base, trainees, days="1")
    assert moved["to"] == "Saturday, 10 January 2026 10:05"
    assert moved["follows"] == ["No timer falls due: only the clock moves."]
    for bidder, amount in (("Bidder A", "9000.00"), ("Bidder B", "12500.00")):
        do_task(secretary, base, sessions, trainees, case_id, "ut_record_bid", bidder=bidder, amount=amount)

    # To the next timer: past the auction's last day (11 January) to the end of the objection period.
    moved = move_clock(keeper, base, trainees)
    assert moved["to"] == "Monday, 9 February 2026 00:00"  # one second past the period's last day
    assert moved["follows"] == ["TRN-TRN1/2026/0001: a timer due Monday, 9 February 2026 00:00 fires"]
    assert moved["flash"][1:] == ["TRN-TRN1/2026/0001: 1 timer fired."]

    # No objection: the trainee sarpanch orders that the auction stand; the clock goes to the end
    # of the appeal period, and the order is final.
    sarpanch = sign_in(browser, base, "trn1-sarpanch", DESK, trainees)
    do_task(sarpanch, base, sessions, trainees, case_id, "ut_order_stand")
    moved = move_clock(sarpanch, base, trainees)
    assert moved["to"] == "Thursday, 12 March 2026 00:00"
    assert moved["follows"] == ["TRN-TRN1/2026/0001: a timer due Thursday, 12 March 2026 00:00 fires"]
    with sessions() as session:
        result = _result(cases.summary(session, session.get(Case, case_id)))
    assert _compare(load_scenario(S1).expect, result) == []
    assert result["outcome"] == "auction_final"

    # The case page, each document's printable page (English and Hindi) and each PDF say TRAINING.
    trainees.goto(sarpanch, f"{base}/cases/{case_id}")
    assert "Training clock: Thursday, 12 March 2026 00:00" in sarpanch.locator("#training-band").inner_text()
    documents = sarpanch.locator("#documents a[href*='/documents/']:not([type])")
    pdfs = sarpanch.locator("#documents a[type='application/pdf']")
    papers = [(a.get_attribute("href"), a.get_attribute("hreflang")) for a in documents.all()]
    printed = [(a.get_attribute("href"), a.get_attribute("hreflang")) for a in pdfs.all()]
    assert len(papers) == len(printed) == 6  # the notice, the receipt, the order: each in English and Hindi
    for href, _language in papers:
        trainees.goto(sarpanch, f"{base}{href}")
    for href, language in printed:
        response = sarpanch.request.get(f"{base}{href}")
        assert response.headers["content-type"] == "application/pdf"
        text = squeezed(pdf_text(response.body()))  # Hindi compared without whitespace (test_documents)
        assert text.count(squeezed(PAPER_MARKS[language])) == 2, f"{href} is not marked at head and foot"
    for path in ("/tasks", "/cases", "/inbox", "/registers/TRN1/pound", "/registers/TRN1/statement", "/board"):
        trainees.goto(sarpanch, f"{base}{path}")
    kinds = {re.sub(r"/\d+(?=/|$)", "/<n>", re.sub(r"/tasks/[0-9a-f-]{36}", "/tasks/<task>", path)) for path in trainees.paths}
    assert kinds == {  # every kind of page the trainees opened, each time checked
        "/tasks", "/cases", "/cases/new", "/cases/<n>", "/cases/<n>/tasks/<task>", "/cases/<n>/documents/<n>",
        "/training/clock", "/inbox", "/registers/TRN1/pound", "/registers/TRN1/statement", "/board"}

    # What the training Panchayat now holds: its own, e-mail and webhooks none.
    assert counts(sessions, "TRN1") == {
        "cases": 1, "timer firings": 3, "timer events": 3, "notifications": 11, "deliveries": 0,
        "ledger entries": 3, "pound register rows": 2, "receipts": 1, "charges rows": 1, "statement lines": 5}

    # The live Panchayat: not one thing more, and no band on its officer's pages.
    assert counts(sessions, "RMP") == live_before
    for path in ("/tasks", "/cases", f"/cases/{live_case}", "/inbox", "/registers/RMP/pound", "/board"):
        live.goto(pk, f"{base}{path}")
    # The passes of the timer worker and of the reminders on the real clock (5 January 10:05):
    # nothing of either Panchayat is due. At the real instant the live release window ends, the
    # worker fires that one timer of the live case.
    assert timers.fire_due_cases(sessions) == []
    assert reminders.remind_due(sessions) == []
    assert counts(sessions, "RMP") == live_before
    virtual_clock.set(at("2026-01-09T00:00:01+05:30"))
    assert [(fired.case_id, fired.timers) for fired in timers.fire_due_cases(sessions)] == [
        (live_case, ("bt_release_window",))]
    for page in (pk, keeper, secretary, sarpanch):
        page.context.close()
