"""The officers' pages and the public notice board, through the Flask test client on a real SQLite
database with the real diagram; the virtual clock moves and the timer worker fires due timers.

Dates on pages are day first (Sunday, 8 February 2026); amounts are rupees with Indian grouping (₹10,780.00).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from decimal import Decimal

import lxml.html
import pytest

from webapp import create_app
from webapp.services.cases import cases
from webapp.services.jobs import timers
from webapp.services.money import ledger
from webapp.services.tasks import tasks
from webapp.store.models import Case, CaseEvent
from webapp.values import casefile

from .conftest import PASSWORD

IMPOUNDED = "2026-01-05T10:00"  # datetime-local, read in Asia/Kolkata
ANIMALS = [("cow", "brown cow, white patch on forehead", "RJ-1001"), ("cow", "black cow, left horn broken", "RJ-1002")]
DISPLAY = {"pk": ("Pound Keeper", "pound keeper"), "sec": ("Secretary", "secretary"), "sar": ("Sarpanch", "sarpanch"),
           "app": ("Vikas Adhikari", "appellate authority"), "recv": ("Gram Panchayat Kishanpura", "receiving officer"),
           "admin": ("Admin", "administrator"), "sec-khr": ("Kheri Secretary", "secretary"),
           "app-far": ("Far Vikas Adhikari", "appellate authority")}


BLOCKS = ("p", "div", "li", "dt", "dd", "td", "th", "tr", "h1", "h2", "h3", "caption", "section", "header")


def at(text: str) -> datetime:
    return datetime.fromisoformat(text)


def login(client, username: str) -> None:
    client.post("/logout")
    response = client.post("/login", data={"username": username, "password": PASSWORD})
    assert response.status_code == 302, response.get_data(as_text=True)[:500]


def text_of(response) -> str:
    """The visible text of a page, whitespace collapsed."""
    doc = lxml.html.fromstring(response.get_data(as_text=True))
    for node in doc.xpath("//head|//script|//style"):
        node.drop_tree()
    for node in doc.iter(*BLOCKS):  # a block's text does not run into the next one's
        node.tail = " " + (node.tail or "")
    return re.sub(r"\s+", " ", doc.text_content())


def element_text(response, element_id: str) -> str:
    doc = lxml.html.fromstring(response.get_data(as_text=True))
    return re.sub(r"\s+", " ", doc.get_element_by_id(element_id).text_content()).strip()


def start_case_on_page(client, virtual_clock) -> int:
    """The pound keeper records two cows impounded 2026-01-05 10:00 IST on the new-case form."""
    virtual_clock.set(at("2026-01-05T10:05:00+05:30"))
    login(client, "pk")
    form = {"impounded_at": IMPOUNDED, "place_seized": "Bhimpura", "place_impounded": "Kanji House, Rampura",
            "nearest_village": "Bhimpura"}
    for n, (species, description, tag) in enumerate(ANIMALS, start=1):
        form.update({f"species-{n}": species, f"description-{n}": description, f"tag-{n}": tag})
    response = client.post("/cases/new", data=form)
    assert response.status_code == 302, text_of(response)
    return int(response.headers["Location"].rstrip("/").split("/")[-1])


def pass_release_window(sessions, virtual_clock) -> None:
    """The release window of a 2026-01-05 impoundment ends at 2026-01-09 00:00 IST: the report is raised."""
    virtual_clock.set(at("2026-01-09T00:00:01+05:30"))
    assert timers.fire_due(sessions) == 1


def task_link(client, name: str) -> str:
    """The link that opens the task named ``name`` (in the page's language) on the signed-in officer's My tasks."""
    page = client.get("/tasks")
    assert page.status_code == 200
    doc = lxml.html.fromstring(page.get_data(as_text=True))
    for row in doc.xpath("//table//tbody/tr"):
        if name in row.text_content():
            return row.xpath(".//a[contains(@href, '/tasks/')]/@href")[0]
    raise AssertionError(f"no task {name!r} on My tasks: {text_of(page)}")


def task_form(client, link: str) -> dict[str, str]:
    """The hidden fields of a task's form (lock_version)."""
    page = client.get(link)
    assert page.status_code == 200, text_of(page)
    doc = lxml.html.fromstring(page.get_data(as_text=True))
    hidden = doc.xpath("//form[@class='card']//input[@type='hidden']")
    return {i.name: i.value for i in hidden if i.name != "csrf_token"}


def complete(client, link: str, *, confirm: bool = True, **fields: str):
    """Fill the task's form with ``fields`` and send it, as a browser does: the form's step is the
    check page (200); with ``confirm`` its Confirm button is pressed (the act is recorded)."""
    response = client.post(link, data={**task_form(client, link), **fields})
    if confirm and response.status_code == 200 and 'id="check-confirm"' in response.get_data(as_text=True):
        response = confirm_check(client, response)
    return response


def confirm_check(client, page, button: str = "confirm"):
    """Press Confirm (or ``button``: change) on a check page: its hidden values sent again."""
    doc = lxml.html.fromstring(page.get_data(as_text=True))
    form = doc.xpath("//form[contains(@class, 'check-form')]")[0]
    data = {i.name: i.value for i in form.xpath(".//input[@type='hidden']") if i.name != "csrf_token"}
    return client.post(form.get("action"), data={**data, "step": button})


def publish_notice(client, sessions, virtual_clock, case_id: int) -> None:
    """Secretary publishes the notice on 2026-01-09 (30 days, full price 12000): last day 2026-02-08."""
    pass_release_window(sessions, virtual_clock)
    virtual_clock.set(at("2026-01-09T11:00:00+05:30"))
    login(client, "sec")
    response = complete(client, task_link(client, "Publish notice"), objection_period_days="30", full_price="12000.00")
    assert response.status_code == 302, text_of(response)
    assert response.headers["Location"].endswith(f"/cases/{case_id}")


def case_file(sessions, case_id: int) -> casefile.CaseFile:
    with sessions() as session:
        return casefile.load(session.get(Case, case_id).file_json)


def ready_elements(sessions, case_id: int) -> list[str]:
    with sessions() as session:
        return [t.element_id for t in tasks.case_tasks(session, session.get(Case, case_id))]


# -- signing in and out ------------------------------------------------------------------------------

@pytest.mark.parametrize("username", sorted(DISPLAY))
def test_each_role_signs_in_and_sees_its_name_and_role(client, username):
    response = client.post("/login", data={"username": username, "password": PASSWORD})
    assert response.status_code == 302 and response.headers["Location"].endswith("/tasks")
    page = client.get("/tasks")
    assert page.status_code == 200
    name, role = DISPLAY[username]
    header = text_of(page)
    assert name in header and role in header
    assert "My tasks" in header and "Inbox" in header and "Notice board" in header and "Sign out" in header
    assert ("New case" in header) == (username == "pk")
    assert '<meta charset="utf-8">' in page.get_data(as_text=True)


def test_a_failed_sign_in_says_so_on_a_200_page(client):
    for username, password in (("sec", "wrong password"), ("nobody", PASSWORD), ("", "")):
        page = client.post("/login", data={"username": username, "password": password})
        assert page.status_code == 200
        assert "The user name or the password is not right" in text_of(page)
        assert "Traceback" not in page.get_data(as_text=True)
    assert client.get("/tasks").status_code == 302  # still signed out


def test_unauthenticated_pages_redirect_to_login(client):
    for path in ("/", "/tasks", "/cases", "/cases/new", "/cases/1", "/cases/1/notice", "/inbox",
                 "/cases/1/tasks/abc"):
        response = client.get(path)
        assert response.status_code == 302, path
        assert "/login" in response.headers["Location"]
    response = client.post("/cases/1/objections", data={"objector": "X"})
    assert response.status_code == 302 and "/login" in response.headers["Location"]


def test_sign_in_returns_to_the_page_asked_for_but_never_to_another_site(client):
    response = client.post("/login?next=/cases", data={"username": "sec", "password": PASSWORD})
    assert response.headers["Location"].endswith("/cases")
    client.post("/logout")
    response = client.post("/login?next=https://evil.example/", data={"username": "sec", "password": PASSWORD})
    assert response.headers["Location"].endswith("/tasks")


def test_sign_out_is_a_post_and_ends_the_session(client):
    login(client, "sec")
    assert client.get("/tasks").status_code == 200
    assert client.get("/logout").status_code == 405  # a link cannot sign anyone out
    response = client.post("/logout")
    assert response.status_code == 302 and response.headers["Location"].endswith("/login")
    assert client.get("/tasks").status_code == 302


# -- my tasks, publishing the notice -------------------------------------------------------------------

def test_secretary_sees_publish_notice_once_the_release_window_has_passed(client, sessions, virtual_clock):
    case_id = start_case_on_page(client, virtual_clock)
    login(client, "sec")
    assert "Publish notice" not in text_of(client.get("/tasks"))  # the owner may still release the cattle
    pass_release_window(sessions, virtual_clock)
    page = client.get("/tasks")
    text = text_of(page)
    assert "RMP/2026/0001" in text and "Publish notice and open conditional auction" in text
    assert "Saturday, 10 January 2026" in text  # due: 1 day after the file opened (Friday, 9 January 2026)
    assert f'href="/cases/{case_id}"' in page.get_data(as_text=True)
    assert "Inbox 1" in text  # the report raised notification, counted in the header
    # the pound keeper's release task has gone with the window
    login(client, "pk")
    assert "Release cattle to owner" not in text_of(client.get("/tasks"))


def test_my_tasks_shows_the_legal_deadline_a_task_serves(client, sessions, virtual_clock):
    case_id = start_case_on_page(client, virtual_clock)
    text = text_of(client.get("/tasks"))  # the pound keeper's release task
    assert "Release cattle to owner" in text
    assert "by Thursday, 8 January 2026 in 3 days legal deadline: last day of the release window, Thursday, 8 January 2026" in text
    publish_notice(client, sessions, virtual_clock, case_id)
    text = text_of(client.get("/tasks"))
    assert "Record bid" in text and "legal deadline: last day of the auction, Sunday, 11 January 2026" in text


def test_new_case_form_reads_the_time_in_the_panchayat_zone(client, sessions, virtual_clock):
    virtual_clock.set(at("2026-01-05T10:05:00+05:30"))
    login(client, "pk")
    page = client.get("/cases/new")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert 'type="datetime-local"' in html and 'value="2026-01-05T10:05"' in html
    assert len(re.findall(r'name="species-\d+"', html)) == 5
    assert "camel" in html and "buffalo" in html
    case_id = start_case_on_page(client, virtual_clock)
    cf = case_file(sessions, case_id)
    assert cf.impounded_at == datetime(2026, 1, 5, 4, 30, tzinfo=UTC)
    assert [(a.species, a.description, a.tag) for a in cf.animals] == ANIMALS  # blank rows 3-5 ignored
    text = text_of(client.get(f"/cases/{case_id}"))
    assert "Monday, 5 January 2026 10:00" in text and "RJ-1001" in text and "black cow, left horn broken" in text
    assert "Release window (owner), last day Thursday, 8 January 2026" in text


def test_the_new_case_form_grows_by_ten_rows_up_to_a_hundred(client):
    login(client, "pk")
    assert element_text(client.get("/cases/new"), "more-rows") == "More than 5 animals? Open the form with 15 rows."
    page = client.get("/cases/new?rows=95")
    assert len(re.findall(r'name="species-\d+"', page.text)) == 95
    assert element_text(page, "more-rows") == "More than 95 animals? Open the form with 100 rows."
    page = client.get("/cases/new?rows=5000")
    assert len(re.findall(r'name="species-\d+"', page.text)) == 100
    assert element_text(page, "more-rows") == "At most 100 animals in one case: open another case for the rest."


@pytest.mark.parametrize("change, message", [
    ({"species-1": "", "description-1": "", "tag-1": "", "species-2": "", "description-2": "", "tag-2": ""},
     "record at least one animal"),
    ({"impounded_at": "2026-01-06T10:00"}, "cannot be in the future"),
    ({"impounded_at": "yesterday"}, "time of impoundment must be a valid date and time"),
    ({"place_seized": "  "}, "the place seized is required"),
    ({"species-2": "dragon"}, "animal 2: unknown species dragon"),
    ({"species-2": ""}, "animal 2: choose its species (cow, bullock, buffalo, camel, horse, goat, sheep)"),
    ({"description-2": ""}, "animal 2: the description is required"),
    ({"tag-2": "rj-1"}, "animal 2: the tag rj-1 is given twice"),
])
def test_new_case_refusals_rerender_with_422_and_create_nothing(client, sessions, virtual_clock, change, message):
    virtual_clock.set(at("2026-01-05T10:05:00+05:30"))
    login(client, "pk")
    form = {"impounded_at": IMPOUNDED, "place_seized": "Bhimpura", "place_impounded": "Kanji House",
            "nearest_village": "Bhimpura", "species-1": "cow", "description-1": "brown cow", "tag-1": "RJ-1",
            "species-2": "cow", "description-2": "black cow", "tag-2": "RJ-2"}
    form.update(change)
    page = client.post("/cases/new", data=form)
    assert page.status_code == 422
    assert message in text_of(page)
    assert "UTC offset" not in text_of(page)  # the API's words are not the page's
    assert 'value="Kanji House"' in page.get_data(as_text=True)  # typed values kept
    with sessions() as session:
        assert session.query(Case).count() == 0


def test_only_the_pound_keeper_opens_a_case(client):
    login(client, "sec")
    page = client.get("/cases/new")
    assert page.status_code == 403
    assert "only the pound keeper" in text_of(page)


def test_publishing_the_notice_through_the_page_shows_the_objection_last_day(client, sessions, virtual_clock):
    case_id = start_case_on_page(client, virtual_clock)
    pass_release_window(sessions, virtual_clock)
    virtual_clock.set(at("2026-01-09T11:00:00+05:30"))
    login(client, "sec")
    link = task_link(client, "Publish notice")
    form = client.get(link)
    html = form.get_data(as_text=True)
    assert 'name="lock_version"' in html and 'name="objection_period_days"' in html and 'name="full_price"' in html
    assert "Objection period (days)" in html and "At least 30 days (Rule 130(a))." in html  # title and description
    response = complete(client, link, objection_period_days="30", full_price="12000.00")
    assert response.status_code == 302
    page = client.get(response.headers["Location"])
    text = text_of(page)
    assert "Done: “Publish notice and open conditional auction” in case RMP/2026/0001." in text
    assert "Objections, last day Sunday, 8 February 2026" in text
    assert "Conditional auction, last day Sunday, 11 January 2026" in text
    assert "Notice published Friday, 9 January 2026, objection period 30 days, last day Sunday, 8 February 2026" in text
    assert "Full price ₹12,000.00" in text
    assert "Record bid" in text  # the current step
    cf = case_file(sessions, case_id)
    assert cf.notice.last_day.isoformat() == "2026-02-08" and cf.notice.full_price == Decimal("12000.00")


@pytest.mark.parametrize("fields, field, message", [
    ({"objection_period_days": "29", "full_price": "12000"}, "objection_period_days",
     "the objection period must be at least 30 days (Rule 130(a)); 29 was given"),
    ({"objection_period_days": "30", "full_price": "12.345"}, "full_price", "rupees take at most two decimals"),
    ({"objection_period_days": "30", "full_price": "-500"}, "full_price", "an amount cannot be negative"),
    ({"objection_period_days": "30"}, "full_price", "this field is required"),
    ({"full_price": "12000"}, "objection_period_days", "this field is required"),
])
def test_an_invalid_task_form_is_refused_with_422_and_changes_nothing(client, sessions, virtual_clock, fields, field,
                                                                      message, caplog):
    case_id = start_case_on_page(client, virtual_clock)
    pass_release_window(sessions, virtual_clock)
    login(client, "sec")
    link = task_link(client, "Publish notice")
    with caplog.at_level("INFO", logger="rule130.refusals"):
        page = complete(client, link, **fields)
    assert page.status_code == 422
    html = page.get_data(as_text=True)
    assert message in text_of(page)
    doc = lxml.html.fromstring(html)
    beside = doc.xpath(f"//input[@name='{field}']/following-sibling::p[@class='field-error']")
    assert beside, f"no error beside {field}"
    for name, value in fields.items():  # the typed values are kept
        assert doc.xpath(f"//input[@name='{name}']/@value") == [value]
    assert ready_elements(sessions, case_id) == ["ut_publish_notice"]
    assert case_file(sessions, case_id).notice is None
    with sessions() as session:
        assert ledger.entries(session, case_id) == []
        refusals = session.query(CaseEvent).filter_by(case_id=case_id, kind="refusal").all()
    # refused at the check step: nothing was attempted, so the case's history holds no row of it;
    # the log does (issue 30, item 4)
    assert refusals == []
    assert "Refused: complete task" not in text_of(client.get(f"/cases/{case_id}"))
    logged = [r.getMessage() for r in caplog.records if r.name == "rule130.refusals"]
    assert logged == [f"refused at the check step: complete_task on case {case_id} by sec (refused): "
                      f"{logged[0].split('(refused): ', 1)[1]}"]
    assert message in logged[0]


def test_completing_the_same_task_twice_gives_a_conflict_message(client, sessions, virtual_clock):
    case_id = start_case_on_page(client, virtual_clock)
    pass_release_window(sessions, virtual_clock)
    login(client, "sec")
    link = task_link(client, "Publish notice")
    hidden = task_form(client, link)
    # two Confirm presses of the check page (its hidden values, step=confirm)
    first = client.post(link, data={**hidden, "step": "confirm", "objection_period_days": "30", "full_price": "12000"})
    assert first.status_code == 302
    second = client.post(link, data={**hidden, "step": "confirm", "objection_period_days": "45", "full_price": "9000"})
    assert second.status_code == 409
    assert "is no longer open" in text_of(second)
    assert case_file(sessions, case_id).notice.objection_period_days == 30  # the first one stands


def test_a_stale_form_is_a_conflict_and_saves_nothing(client, sessions, virtual_clock, officers):
    case_id = start_case_on_page(client, virtual_clock)
    publish_notice(client, sessions, virtual_clock, case_id)
    virtual_clock.set(at("2026-01-10T12:00:00+05:30"))
    link = task_link(client, "Record bid")
    hidden = task_form(client, link)
    # meanwhile an objection is filed (the case changes); the open bid form is now stale
    cases_before = case_file(sessions, case_id)
    assert client.post(f"/cases/{case_id}/objections", data={"objector": "Ram Lal"}).status_code == 302
    response = client.post(link, data={**hidden, "bidder": "Bidder A", "amount": "9000"})
    assert response.status_code == 409
    assert "this case changed since you opened the task; nothing was saved" in text_of(response)
    assert case_file(sessions, case_id).auction.bids == cases_before.auction.bids == []


def test_a_task_of_another_role_is_403_with_a_clear_message(client, sessions, virtual_clock):
    case_id = start_case_on_page(client, virtual_clock)
    pass_release_window(sessions, virtual_clock)
    login(client, "sec")
    link = task_link(client, "Publish notice")
    login(client, "sar")
    page = client.get(link)
    assert page.status_code == 403
    assert "this task is for the secretary; you are signed in as sarpanch" in text_of(page)
    response = client.post(link, data={"objection_period_days": "30", "full_price": "12000"})
    assert response.status_code == 403
    assert ready_elements(sessions, case_id) == ["ut_publish_notice"]
    # the sarpanch still sees the case and its current step, without an Open link
    page = client.get(f"/cases/{case_id}")
    assert page.status_code == 200 and "Publish notice" in text_of(page)
    assert link not in page.get_data(as_text=True)


def test_another_panchayats_secretary_gets_404_for_the_case(client, sessions, virtual_clock):
    case_id = start_case_on_page(client, virtual_clock)
    pass_release_window(sessions, virtual_clock)
    login(client, "sec")
    link = task_link(client, "Publish notice")
    login(client, "sec-khr")
    for path in (f"/cases/{case_id}", f"/cases/{case_id}/notice", link):
        page = client.get(path)
        assert page.status_code == 404, path
        assert "Traceback" not in page.get_data(as_text=True)
    assert client.post(f"/cases/{case_id}/objections", data={"objector": "X"}).status_code == 404
    assert client.post(link, data={"objection_period_days": "30", "full_price": "1"}).status_code == 404
    assert "RMP/2026/0001" not in text_of(client.get("/cases"))
    assert "Publish notice" not in text_of(client.get("/tasks"))
    assert ready_elements(sessions, case_id) == ["ut_publish_notice"]
    login(client, "app-far")  # an appellate authority of another Samiti
    assert client.get(f"/cases/{case_id}").status_code == 404
    login(client, "app")  # the Samiti's own appellate authority sees it
    assert client.get(f"/cases/{case_id}").status_code == 200


def test_the_case_list_shows_number_status_outcome_and_notice_last_day(client, sessions, virtual_clock):
    case_id = start_case_on_page(client, virtual_clock)
    publish_notice(client, sessions, virtual_clock, case_id)
    page = client.get("/cases")
    text = text_of(page)
    assert "RMP/2026/0001 running pending Sunday, 8 February 2026" in text
    assert f'href="/cases/{case_id}"' in page.get_data(as_text=True)


# -- objections, appeals, deaths: the case page's own forms ------------------------------------------

def test_an_objection_on_the_last_day_is_recorded_and_a_late_one_names_the_last_day(client, sessions, virtual_clock):
    case_id = start_case_on_page(client, virtual_clock)
    publish_notice(client, sessions, virtual_clock, case_id)
    virtual_clock.set(at("2026-02-09T00:00:00+05:30"))
    page = client.post(f"/cases/{case_id}/objections", data={"objector": "Late Objector"})
    assert page.status_code == 422
    text = text_of(page)
    assert "the objection period ended on Sunday, 8 February 2026; no objection is entertained after it" in text
    assert 'value="Late Objector"' in page.get_data(as_text=True)
    assert case_file(sessions, case_id).objections == []
    virtual_clock.set(at("2026-02-08T23:59:00+05:30"))
    response = client.post(f"/cases/{case_id}/objections", data={"objector": "Ram Lal"})
    assert response.status_code == 302
    text = text_of(client.get(response.headers["Location"]))
    assert "The objection of Ram Lal was recorded." in text
    assert "Objector Ram Lal, filed Sunday, 8 February 2026 — not yet decided" in text
    assert "Refused: file objection" in text  # the late attempt's only trace
    assert [o.objector for o in case_file(sessions, case_id).objections] == ["Ram Lal"]


def test_the_sarpanch_decides_an_objection_with_the_objector_shown(client, sessions, virtual_clock):
    case_id = start_case_on_page(client, virtual_clock)
    publish_notice(client, sessions, virtual_clock, case_id)
    virtual_clock.set(at("2026-01-12T10:00:00+05:30"))
    assert client.post(f"/cases/{case_id}/objections", data={"objector": "Ram Lal"}).status_code == 302
    login(client, "sar")
    link = task_link(client, "Decide ownership claim")
    page = client.get(link)
    text = text_of(page)
    assert "Objector (claimant of ownership): Ram Lal" in text
    html = page.get_data(as_text=True)
    # three choices: radios, none chosen (an irreversible decision is never one careless tap)
    assert '<fieldset class="radios" id="f-decision"' in html
    assert '<input type="radio" id="f-decision-2" name="decision" value="not_proved" required> not proved' in html
    assert "checked" not in html.split('id="f-decision"', 1)[1].split("</fieldset>", 1)[0]
    response = complete(client, link, decision="not_proved")
    assert response.status_code == 302
    assert "Objector Ram Lal, filed Monday, 12 January 2026 — not proved (Monday, 12 January 2026)" in text_of(client.get(f"/cases/{case_id}"))


def test_the_pound_keeper_records_a_death_from_the_case_page(client, sessions, virtual_clock):
    case_id = start_case_on_page(client, virtual_clock)
    virtual_clock.set(at("2026-01-06T08:00:00+05:30"))
    response = client.post(f"/cases/{case_id}/animal-events", data={"kind": "death", "animal": "2"})
    assert response.status_code == 302
    text = text_of(client.get(response.headers["Location"]))
    assert "died Tuesday, 6 January 2026" in text
    page = client.post(f"/cases/{case_id}/animal-events", data={"kind": "escape", "animal": "2"})
    assert page.status_code == 422
    assert "RJ-1002 is already recorded as gone on Tuesday, 6 January 2026" in text_of(page)
    login(client, "sec")
    assert client.post(f"/cases/{case_id}/animal-events", data={"kind": "death", "animal": "1"}).status_code == 403
    assert case_file(sessions, case_id).animals[0].died_on is None


def test_an_appeal_before_any_decision_is_refused_clearly(client, sessions, virtual_clock):
    case_id = start_case_on_page(client, virtual_clock)
    publish_notice(client, sessions, virtual_clock, case_id)
    page = client.post(f"/cases/{case_id}/appeals", data={"appellant": "Mohan"})
    assert page.status_code == 422
    assert "the Panchayat has made no decision in this case yet" in text_of(page)


@pytest.mark.parametrize("url, data, who", [
    ("animal-events", {"kind": "death", "animal": "1"}, "pk"),
    ("births", {"mother": "1"}, "pk"),
    ("objections", {"objector": "Mohan"}, "sec"),
])
def test_a_refusal_on_a_closed_case_is_said_at_the_top_of_the_page(client, sessions, virtual_clock, url, data, who):
    """A closed case shows no forms to act in, so the refusal cannot go beside one: it goes at the top."""
    case_id = start_case_on_page(client, virtual_clock)
    virtual_clock.set(at("2026-01-06T10:00:00+05:30"))
    assert complete(client, task_link(client, "Release cattle to owner"), owner="Owner M", amount_received="1240").status_code == 302
    login(client, who)
    page = client.post(f"/cases/{case_id}/{url}", data=data)
    assert page.status_code == 422
    doc = lxml.html.fromstring(page.get_data(as_text=True))
    assert [" ".join(e.text_content().split()) for e in doc.xpath("//*[@role='alert']")] == [
        "case RMP/2026/0001 is closed (released by owner) What can be done: Nothing more can be done in a closed "
        "case: the rule leaves no further act in it. Its papers and history stay on the case page."]
    assert case_file(sessions, case_id).animals[0].died_on is None  # nothing changed


# -- the notice and the public board ----------------------------------------------------------------

def test_the_printable_notice_shows_the_cattle_places_and_periods(client, sessions, virtual_clock):
    case_id = start_case_on_page(client, virtual_clock)
    login(client, "pk")
    assert "No notice has been published" in text_of(client.get(f"/cases/{case_id}/notice"))
    publish_notice(client, sessions, virtual_clock, case_id)
    page = client.get(f"/cases/{case_id}/notice")
    assert page.status_code == 200
    text = text_of(page)
    for expected in ("RMP/2026/0001", "Gram Panchayat Rampura", "Number and description of the cattle: 2",
                     "brown cow, white patch on forehead", "RJ-1001", "black cow, left horn broken", "RJ-1002",
                     "Place seized Bhimpura", "Place impounded Kanji House, Rampura",
                     "Published in the village of Bhimpura",
                     "Objection period 30 days", "Last day for objections Sunday, 8 February 2026",
                     "on Friday, 9 January 2026, Saturday, 10 January 2026 and Sunday, 11 January 2026", "Full price of the lot ₹12,000.00"):
        assert expected in text, expected
    assert "@media print" in client.get("/static/style.css").get_data(as_text=True)


def test_the_public_board_lists_a_notice_during_the_period_and_not_after(app, client, sessions, virtual_clock):
    case_id = start_case_on_page(client, virtual_clock)
    public = app.test_client()  # nobody signed in
    assert "RMP/2026/0001" not in text_of(public.get("/board"))  # no notice yet
    publish_notice(client, sessions, virtual_clock, case_id)
    virtual_clock.set(at("2026-01-10T12:00:00+05:30"))
    complete(client, task_link(client, "Record bid"), bidder="Bidder A", amount="9000")
    board = public.get("/board")
    assert board.status_code == 200
    text = text_of(board)
    assert "RMP/2026/0001" in text and "Objections until the end of Sunday, 8 February 2026" in text
    assert "brown cow, white patch on forehead" in text and "Seized at Bhimpura" in text
    assert "Sign in" in text and "Sign out" not in text
    notice = public.get(f"/board/{case_id}")
    assert notice.status_code == 200
    text = text_of(notice)
    assert "Place impounded Kanji House, Rampura" in text and "RJ-1002" in text
    assert "Last day for objections Sunday, 8 February 2026" in text
    for internal in ("Bidder A", "9,000", "Ledger", "History", "Sign out", "Back to case"):
        assert internal not in text, internal
    virtual_clock.set(at("2026-02-08T23:59:00+05:30"))  # the last day: still listed
    assert "RMP/2026/0001" in text_of(public.get("/board"))
    virtual_clock.set(at("2026-02-09T00:00:01+05:30"))
    timers.fire_due(sessions)
    text = text_of(public.get("/board"))
    assert "RMP/2026/0001" not in text and "No notice is open for objections now." in text
    assert public.get(f"/board/{case_id}").status_code == 404
    assert public.get("/board/999").status_code == 404


# -- the inbox ------------------------------------------------------------------------------------

def test_the_inbox_highlights_unread_and_marks_them_read(client, sessions, virtual_clock):
    case_id = start_case_on_page(client, virtual_clock)
    pass_release_window(sessions, virtual_clock)
    login(client, "sec")

    def inbox():
        doc = lxml.html.fromstring(client.get("/inbox").get_data(as_text=True))
        badge = doc.xpath("//header//span[@class='badge']")
        report = [li for li in doc.xpath("//ul[@class='inbox']/li")
                  if "RMP/2026/0001: the release window has passed; the file is open." in li.text_content()]
        unread = doc.xpath("//ul[@class='inbox']/li[@class='unread']")
        return (int(badge[0].text_content()) if badge else 0), report, unread

    count, report, unread = inbox()
    assert len(report) == 1 and report[0].get("class") == "unread"
    assert count == len(unread) >= 1  # the header counts the unread ones
    assert "Friday, 9 January 2026 00:00" in report[0].text_content()
    assert report[0].xpath(".//a/@href") == [f"/cases/{case_id}"]
    notification_id = report[0].xpath(".//input[@name='id']/@value")[0]
    assert client.post("/inbox/read", data={"id": notification_id}).status_code == 302
    after, report, unread_after = inbox()
    assert report[0].get("class") == "read" and after == count - 1 == len(unread_after)
    login(client, "pk")  # the pound keeper had no notification
    assert "No notifications." in text_of(client.get("/inbox"))


def test_mark_all_read(client, sessions, virtual_clock):
    start_case_on_page(client, virtual_clock)
    pass_release_window(sessions, virtual_clock)
    login(client, "sec")
    assert client.post("/inbox/read", data={"all": "1"}).status_code == 302
    page = client.get("/inbox")
    assert "All notifications marked as read." in text_of(page)
    doc = lxml.html.fromstring(page.get_data(as_text=True))
    assert doc.xpath("//ul[@class='inbox']/li[@class='read']") and not doc.xpath("//li[@class='unread']")


# -- a whole case through the pages (RULE130 scenario s1) ----------------------------------------

def sell_at_full_price_and_order_that_the_auction_stand(client, sessions, virtual_clock) -> int:
    """RULE130 scenario s1 up to the sarpanch's order (2026-02-09), every act through the pages."""
    case_id = start_case_on_page(client, virtual_clock)
    publish_notice(client, sessions, virtual_clock, case_id)
    virtual_clock.set(at("2026-01-10T12:00:00+05:30"))
    link = task_link(client, "Record bid")
    glance = text_of(client.get(link))
    assert "full price ₹12,000.00" in glance and "0 bids" in glance
    assert complete(client, link, bidder="Bidder A", amount="9000.00").status_code == 302
    virtual_clock.set(at("2026-01-10T15:00:00+05:30"))
    link = task_link(client, "Record bid")
    assert "1 bid, highest ₹9,000.00 by Bidder A" in text_of(client.get(link))
    assert complete(client, link, bidder="Bidder B", amount="12500.00").status_code == 302
    text = text_of(client.get(f"/cases/{case_id}"))
    assert "Buyer Bidder B: ₹12,500.00 on Saturday, 10 January 2026 (full price)" in text
    assert "Record bid" not in text_of(client.get("/tasks"))  # the full price closed the auction

    # the order that the auction stand may only be made after the notice period (last day Sunday, 8 February 2026)
    virtual_clock.set(at("2026-02-09T00:00:01+05:30"))
    timers.fire_due(sessions)
    virtual_clock.set(at("2026-02-09T11:00:00+05:30"))
    login(client, "sar")
    assert complete(client, task_link(client, "Order that the auction stand")).status_code == 302
    text = text_of(client.get(f"/cases/{case_id}"))
    assert "Appeal, last day Wednesday, 11 March 2026" in text and "Order that the auction stand Monday, 9 February 2026" in text
    return case_id


def test_a_whole_case_through_the_pages_ends_auction_final_with_the_s1_balances(client, sessions, virtual_clock):
    case_id = sell_at_full_price_and_order_that_the_auction_stand(client, sessions, virtual_clock)

    # the appeal window passes without an appeal: the outcome is final and the money moves (Rule 130(e))
    virtual_clock.set(at("2026-03-12T00:00:01+05:30"))
    timers.fire_due(sessions)
    login(client, "sec")
    page = client.get(f"/cases/{case_id}")
    text = text_of(page)
    assert "outcome auction final" in text
    assert "Transfer lock (condition b(i)), until Monday, 9 February 2026" in text
    assert element_text(page, "bal-suspense") == "₹0.00"
    assert element_text(page, "bal-pound_account") == "₹1,720.00"
    assert element_text(page, "bal-panchayat_fund") == "₹10,780.00"
    assert "Fine (F) ₹1,000.00" in text and "Pound feeding (C) ₹720.00" in text
    assert "Timer: " in text and "Cattle impounded" in text  # the history, with timers
    with sessions() as session:
        summary = cases.summary(session, session.get(Case, case_id))
        entries = ledger.entries(session, case_id)
    assert summary["outcome"] == "auction_final"
    assert summary["ledger"] == {"suspense": Decimal("0.00"), "pound_account": Decimal("1720.00"),
                                 "panchayat_fund": Decimal("10780.00")}
    doc = lxml.html.fromstring(page.get_data(as_text=True))
    rows = doc.xpath("//table[contains(@class,'ledger')]/tbody/tr")
    assert len(rows) == 2 * len(entries) > 0  # the ledger by account: each entry out of one account, into another
    captions = {t.get("id"): re.sub(r"\s+", " ", t.xpath("caption")[0].text_content()).strip()
                for t in doc.xpath("//table[contains(@class,'account')]")}
    assert captions["account-pound_account"] == "pound account: balance ₹1,720.00"
    assert captions["account-panchayat_fund"] == "panchayat fund: balance ₹10,780.00"
    assert captions["account-suspense"] == "suspense: balance ₹0.00"
    # a closed case offers no actions
    assert "File an objection" not in text and "Current step" in text and "The case is closed" in text


# -- CSRF, error pages -------------------------------------------------------------------------------

def test_a_post_without_the_csrf_token_is_refused_with_400_and_changes_nothing(database_url, sessions, officers,
                                                                                 virtual_clock):
    app = create_app({"TESTING": True, "DATABASE_URL": database_url, "SECRET_KEY": "test", "WTF_CSRF_ENABLED": True})
    try:
        client = app.test_client()
        page = client.post("/login", data={"username": "pk", "password": PASSWORD})
        assert page.status_code == 400
        assert "This form has expired" in text_of(page)
        login_page = client.get("/login").get_data(as_text=True)
        token = re.search(r'name="csrf_token" value="([^"]+)"', login_page).group(1)
        assert client.post("/login", data={"username": "pk", "password": PASSWORD,
                                           "csrf_token": token}).status_code == 302
        virtual_clock.set(at("2026-01-05T10:05:00+05:30"))
        form = {"impounded_at": IMPOUNDED, "place_seized": "Bhimpura", "place_impounded": "Kanji House",
                "nearest_village": "Bhimpura", "species-1": "cow", "description-1": "brown cow"}
        page = client.post("/cases/new", data=form)
        assert page.status_code == 400
        assert "reload" in text_of(page).lower()
        with sessions() as session:
            assert session.query(Case).count() == 0
        new_case_page = client.get("/cases/new").get_data(as_text=True)
        token = re.search(r'name="csrf_token" value="([^"]+)"', new_case_page).group(1)
        assert client.post("/cases/new", data={**form, "csrf_token": token}).status_code == 302
        with sessions() as session:
            assert session.query(Case).count() == 1
    finally:
        app.extensions["rule130.engine"].dispose()


def test_every_post_form_carries_a_csrf_token(client, sessions, virtual_clock):
    case_id = start_case_on_page(client, virtual_clock)
    pass_release_window(sessions, virtual_clock)
    pages = []
    for username, paths in (("pk", ["/cases/new", f"/cases/{case_id}", "/tasks"]),
                            ("sec", [f"/cases/{case_id}", "/inbox", task_link_for(client, "sec", "Publish notice")])):
        login(client, username)
        pages += [client.get(path).get_data(as_text=True) for path in paths]
    client.post("/logout")
    pages.append(client.get("/login").get_data(as_text=True))
    for html in pages:
        doc = lxml.html.fromstring(html)
        for form in doc.xpath("//form[@method='post']"):
            assert form.xpath(".//input[@name='csrf_token']"), lxml.html.tostring(form)[:200]


def task_link_for(client, username: str, name: str) -> str:
    login(client, username)
    return task_link(client, name)


def test_error_pages_never_show_a_stack_trace(database_url, sessions, officers, caplog):
    from webapp.errors import DeadlinePassed

    app = create_app({"TESTING": True, "PROPAGATE_EXCEPTIONS": False, "DATABASE_URL": database_url,
                      "SECRET_KEY": "test", "WTF_CSRF_ENABLED": False})

    @app.route("/boom")
    def boom():
        raise RuntimeError("secret internals")

    @app.route("/api/v1/_refused")
    def api_refused():
        raise DeadlinePassed("the objection period ended on 2026-02-08", last_day="2026-02-08")

    @app.route("/_refused")
    def page_refused():
        raise DeadlinePassed("the objection period ended on 2026-02-08", last_day="2026-02-08")

    try:
        client = app.test_client()
        page = client.get("/boom")
        assert page.status_code == 500
        body = page.get_data(as_text=True)
        assert "Sorry, something went wrong" in body
        assert "secret internals" not in body and "Traceback" not in body
        assert any("secret internals" in record.getMessage() or (record.exc_info and "secret internals" in
                                                                  str(record.exc_info[1]))
                   for record in caplog.records)
        page = client.get("/_refused")
        assert page.status_code == 422 and "the objection period ended on Sunday, 8 February 2026" in text_of(page)
        api = client.get("/api/v1/_refused")
        assert api.status_code == 422
        assert api.get_json()["error"]["code"] == "deadline_passed"
        assert api.get_json()["error"]["message"] == "the objection period ended on 2026-02-08"
        assert api.get_json()["error"]["last_day"] == "2026-02-08"
        missing = client.get("/no/such/page")
        assert missing.status_code == 404 and "There is no such page" in text_of(missing)
        assert client.get("/api/v1/no-such-thing").get_json()["error"]["code"] == "not_found"
        wrong = client.post("/board")
        assert wrong.status_code == 405 and "Not allowed" in text_of(wrong)
        assert "GET" in wrong.headers["Allow"]
    finally:
        app.extensions["rule130.engine"].dispose()


def test_an_appeal_filed_on_the_case_page_is_decided_by_the_appellate_authority(client, sessions, virtual_clock):
    case_id = sell_at_full_price_and_order_that_the_auction_stand(client, sessions, virtual_clock)
    virtual_clock.set(at("2026-03-12T00:00:00+05:30"))  # the day after the last day: too late
    login(client, "sec")
    page = client.post(f"/cases/{case_id}/appeals", data={"appellant": "Mohan Lal"})
    assert page.status_code == 422 and "the appeal period ended on Wednesday, 11 March 2026" in text_of(page)
    virtual_clock.set(at("2026-03-11T23:59:00+05:30"))
    response = client.post(f"/cases/{case_id}/appeals", data={"appellant": "Mohan Lal"})
    assert response.status_code == 302
    text = text_of(client.get(f"/cases/{case_id}"))
    assert ("Appellant Mohan Lal, filed Wednesday, 11 March 2026, against the order that the auction stand "
            "(Monday, 9 February 2026) — pending") in text
    assert ("Transfer lock (condition b(i)), until 30 days after the sale (Saturday, 10 January 2026) or the final decision, "
            "if later (not yet known)") in text
    virtual_clock.set(at("2026-03-20T10:00:00+05:30"))
    timers.fire_due(sessions)  # the appeal keeps the case open: no settlement yet
    login(client, "app")
    link = task_link(client, "Decide appeal")
    page = client.get(link)
    assert ("Appeal pending by Mohan Lal, filed Wednesday, 11 March 2026, against the order that the auction stand "
            "(Monday, 9 February 2026)") in text_of(page)
    assert complete(client, link, decision="upheld", remarks="the order stands").status_code == 302
    page = client.get(f"/cases/{case_id}")
    text = text_of(page)
    assert "outcome auction final" in text and ("Mohan Lal, filed Wednesday, 11 March 2026, against the order that the auction stand "
                                                "(Monday, 9 February 2026) — upheld (Friday, 20 March 2026)") in text
    assert element_text(page, "bal-pound_account") == "₹1,720.00"
    assert element_text(page, "bal-panchayat_fund") == "₹10,780.00"


@pytest.mark.both_databases
def test_a_mangled_lock_version_is_refused_not_skipped(client, sessions, virtual_clock):
    """lock_version=abc once skipped the concurrent-edit check and published the notice."""
    case_id = start_case_on_page(client, virtual_clock)
    pass_release_window(sessions, virtual_clock)
    virtual_clock.set(at("2026-01-09T11:00:00+05:30"))
    login(client, "sec")
    link = task_link(client, "Publish notice")
    response = client.post(link, data={**task_form(client, link), "lock_version": "abc",
                                       "objection_period_days": "30", "full_price": "12000.00"})
    assert response.status_code == 422
    assert "The form is out of date (its version is not a number)" in text_of(response)
    assert case_file(sessions, case_id).notice is None


def test_a_task_form_sent_twice_says_the_first_completed_it_and_changes_nothing_more(client, sessions, virtual_clock):
    """A double click on "Publish notice": the second send finds the task completed by the first; it
    says the officer completed it and this one was not recorded (not that someone else changed the case)."""
    case_id = start_case_on_page(client, virtual_clock)
    pass_release_window(sessions, virtual_clock)
    virtual_clock.set(at("2026-01-09T11:00:00+05:30"))
    login(client, "sec")
    link = task_link(client, "Publish notice")
    form = {**task_form(client, link), "step": "confirm", "objection_period_days": "30", "full_price": "12000.00"}
    assert client.post(link, data=form).status_code == 302  # Confirm on the check page, pressed twice
    published = case_file(sessions, case_id).notice
    again = client.post(link, data=form)
    assert again.status_code == 409
    assert ("of case RMP/2026/0001 is no longer open: you completed it yourself; what you sent this time was not "
            "recorded. If it differs from your first entry (another bid, another amount), enter it again on the "
            "case's open task") in text_of(again)
    assert "Already done" in text_of(again) and "Changed by someone else" not in text_of(again)  # the heading
    assert case_file(sessions, case_id).notice == published


def test_the_same_new_case_form_sent_twice_records_one_case(client, sessions, virtual_clock):
    """The form carries its own key (made when it was shown): a second send (a double click, the back
    button) records nothing and leads to the case the first send recorded."""
    from sqlalchemy import func, select

    from webapp.store.models import Case

    virtual_clock.set(at("2026-01-05T10:05:00+05:30"))
    login(client, "pk")
    doc = lxml.html.fromstring(client.get("/cases/new").get_data(as_text=True))
    [key] = doc.xpath("//input[@name='submission']/@value")
    assert len(key) == 32 and key != lxml.html.fromstring(client.get("/cases/new").get_data(as_text=True)).xpath(
        "//input[@name='submission']/@value")[0]
    form = {"impounded_at": IMPOUNDED, "place_seized": "Bhimpura", "place_impounded": "Kanji House, Rampura",
            "nearest_village": "Bhimpura", "submission": key, "species-1": "cow", "description-1": "dup cow",
            "tag-1": "DUP1"}
    first = client.post("/cases/new", data={**form, "place_seized": ""})  # refused: nothing kept, the key stays
    assert first.status_code == 422 and f'name="submission" value="{key}"' in first.get_data(as_text=True)
    first = client.post("/cases/new", data=form)
    assert first.status_code == 302
    again = client.post("/cases/new", data=form, follow_redirects=True)
    assert again.request.path == first.headers["Location"]
    assert "this form was already sent: it recorded case RMP/2026/0001, which is not recorded again" in text_of(again)
    with sessions() as session:
        assert session.scalar(select(func.count(Case.id))) == 1
    changed = client.post("/cases/new", data={**form, "tag-1": "DUP2"})  # back, a change, the same form again
    assert changed.status_code == 422
    assert "this form already recorded case RMP/2026/0001, with other details; nothing was recorded" in text_of(changed)
    [fresh] = lxml.html.fromstring(changed.get_data(as_text=True)).xpath("//input[@name='submission']/@value")
    assert fresh != key  # sent again as it stands, it records another case
    assert client.post("/cases/new", data={**form, "tag-1": "DUP2", "submission": fresh}).status_code == 302
    with sessions() as session:
        assert session.scalar(select(func.count(Case.id))) == 2
    bad = client.post("/cases/new", data={**form, "submission": "x'; --"})
    assert bad.status_code == 422 and "the submission key must be 8 to 80 letters" in text_of(bad)


def test_a_refused_form_starts_with_an_error_summary_linking_each_field_and_takes_devanagari_digits(
        client, sessions, virtual_clock):
    case_id = start_case_on_page(client, virtual_clock)
    pass_release_window(sessions, virtual_clock)
    login(client, "sec")
    link = task_link(client, "Publish notice")
    page = complete(client, link, objection_period_days="", full_price="12.345")
    assert page.status_code == 422
    doc = lxml.html.fromstring(page.get_data(as_text=True))
    assert doc.findtext(".//title").startswith("Error: ")
    summary = doc.get_element_by_id("error-summary")
    assert (summary.get("tabindex"), summary.get("autofocus"), summary.get("role")) == ("-1", "", "alert")
    links = [(a.get("href"), a.text_content()) for a in summary.xpath(".//a")]
    assert [href for href, _ in links] == ["#f-objection_period_days", "#f-full_price"]
    assert all(doc.xpath(f"//*[@id='{href[1:]}']") for href, _ in links)  # each link reaches its field
    assert "Objection period (days): this field is required" in links[0][1]
    assert links[1][1] == "Full price of the lot (₹): too many decimals"
    # the number field is text with a numeric keyboard: a browser keeps the digits typed in Devanagari
    page = complete(client, link, objection_period_days="२९", full_price="12000")
    days = lxml.html.fromstring(page.get_data(as_text=True)).get_element_by_id("f-objection_period_days")
    assert (days.get("type"), days.get("inputmode"), days.get("value")) == ("text", "numeric", "29")
    assert "the objection period must be at least 30 days (Rule 130(a)); 29 was given" in text_of(page)
    assert case_file(sessions, case_id).notice is None
    response = complete(client, link, objection_period_days="३०", full_price="१२०००")
    assert response.status_code == 302
    cf = case_file(sessions, case_id)
    assert (cf.notice.objection_period_days, cf.notice.full_price) == (30, Decimal("12000.00"))
