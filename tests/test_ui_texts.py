"""Texts of the pages found by a user testing the product: the demo officers' names, the bundled
process's deploy note, and other English left on Hindi pages."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from webapp.services.panchayats import demo
from webapp.store.models import User

from .conftest import FAST_HASH, PASSWORD
from .test_monitoring import fired_three  # noqa: F401 - a fixture
from .test_web_pages import text_of

DEMO_PASSWORD = "demo password 2026"


@pytest.fixture
def demo_client(database_url, sessions):
    """The application on a database holding the quick start's demo data (no test officers)."""
    from webapp import create_app
    application = create_app({"TESTING": True, "DATABASE_URL": database_url, "SECRET_KEY": "test",
                              "WTF_CSRF_ENABLED": False, "PASSWORD_HASH_METHOD": FAST_HASH})
    demo.ensure_demo(sessions, DEMO_PASSWORD)
    yield application.test_client()
    application.extensions["rule130.engine"].dispose()


def test_the_demo_officers_are_named_by_their_names_and_the_history_shows_each_role_once(demo_client, sessions):
    with sessions() as session:
        named = {u.username: u.display_name for u in session.scalars(select(User).order_by(User.id))}
    assert named == {"keeper": "Ramesh", "secretary": "Sunita", "sarpanch": "Mohan Lal",
                     "appellate": "Rajendra Singh", "receiver": "Kailash Meena", "admin": "Pooja Sharma"}
    response = demo_client.post("/login", data={"username": "keeper", "password": DEMO_PASSWORD})
    assert response.status_code == 302
    page = demo_client.get("/cases/1")
    assert page.status_code == 200
    text = text_of(page)
    assert "Ramesh (pound keeper)" in text and "(pound keeper) (pound keeper)" not in text
    assert demo_client.post("/language", data={"lang": "hi", "next": "/cases/1"}).status_code == 302
    text = text_of(demo_client.get("/cases/1"))
    assert "Ramesh (कांजी हाउस प्रभारी)" in text and "pound keeper" not in text


def test_the_bundled_process_deploy_note_is_shown_in_the_pages_language(demo_client):
    assert demo_client.post("/login", data={"username": "admin", "password": DEMO_PASSWORD}).status_code == 302
    page = text_of(demo_client.get("/processes/current"))
    assert "— bundled Rule 130 process" in page
    assert demo_client.post("/language", data={"lang": "hi", "next": "/tasks"}).status_code == 302
    page = text_of(demo_client.get("/processes/current"))
    assert "— साथ में दी गई नियम 130 की प्रक्रिया" in page and "bundled Rule 130 process" not in page


def test_the_hindi_catalogue_calls_a_form_prapatra_everywhere():
    from babel.messages.pofile import read_po

    from .test_i18n import HI_PO
    with HI_PO.open("rb") as f:
        hindi = read_po(f, locale="hi")
    translations = {m.id: m.string for m in hindi if m.id}
    assert [i for i, s in translations.items() if "फ़ॉर्म" in str(s) or "फॉर्म" in str(s)] == []
    assert translations["Form expired"] == "प्रपत्र की अवधि समाप्त"
    assert translations["the form has errors: %(fields)s: this field is required"] == \
        "प्रपत्र में त्रुटियाँ हैं: %(fields)s: यह जानकारी आवश्यक है"
    assert translations["Open the form with %(num)s rows"] == "%(num)s पंक्तियों वाला प्रपत्र खोलें"


def test_a_flash_is_shown_in_the_language_of_the_page_that_shows_it(client, sessions, officers, virtual_clock):
    from .test_web_pages import IMPOUNDED
    assert client.post("/login", data={"username": "admin", "password": PASSWORD}).status_code == 302
    assert client.post("/language", data={"lang": "hi", "next": "/tasks"}).status_code == 302
    page = text_of(client.get("/tasks"))
    assert "Admin के रूप में लॉग इन किया।" in page and "Signed in as" not in page
    assert "Admin के रूप में" not in text_of(client.get("/tasks"))  # shown once
    # back to English: the flash of the next sign-in reads English
    assert client.post("/language", data={"lang": "en", "next": "/tasks"}).status_code == 302
    client.post("/logout")
    assert client.post("/login", data={"username": "admin", "password": PASSWORD}).status_code == 302
    assert "Signed in as Admin." in text_of(client.get("/tasks"))
    # an officer whose own choice is Hindi, signing in from an English browser, reads it in Hindi
    with sessions() as session:
        session.get(User, officers["pound_keeper"].id).language = "hi"
        session.commit()
    client.post("/logout")
    assert client.post("/login", data={"username": "pk", "password": PASSWORD}).status_code == 302
    assert "Pound Keeper के रूप में लॉग इन किया।" in text_of(client.get("/tasks"))
    # a flash with a number in it
    response = client.post("/cases/new", data={"impounded_at": IMPOUNDED, "place_seized": "Bhimpura",
                                               "place_impounded": "Kanji House", "nearest_village": "Bhimpura",
                                               "species-1": "cow", "description-1": "brown cow"})
    assert response.status_code == 302
    assert client.post("/language", data={"lang": "en", "next": "/tasks"}).status_code == 302
    text = text_of(client.get("/tasks"))
    assert "Case RMP/2026/0001 opened." in text
    assert ("the owner may release the whole lot until the end of Thursday, 8 January 2026 (the 3-day release "
            "window); after it the notice is published." in text)


def test_the_timer_lag_page_names_each_timer_in_hindi(client, fired_three):  # noqa: F811 - the fixture
    assert client.post("/login", data={"username": "admin", "password": PASSWORD}).status_code == 302
    assert client.post("/language", data={"lang": "hi", "next": "/admin/timers"}).status_code == 302
    html = client.get("/admin/timers").get_data(as_text=True)
    rows = html.split('<table class="list" id="firings">')[1].split("</table>")[0].split("<tr>")[2:]
    assert len(rows) == 3
    for row in rows:
        assert "छुड़ाने की अवधि समाप्त (3 दिन)" in row and "Release window ends" not in row


def test_hindi_sentences_on_the_case_process_and_task_pages_end_with_the_danda(demo_client):
    """A sentence that ends with a name, a day or a to-do line from the diagram ends with "।" in
    Hindi and "." in English (whole sentences in the catalogue, ``full_stop`` for the to-do line)."""
    import re

    assert demo_client.post("/login", data={"username": "secretary", "password": DEMO_PASSWORD}).status_code == 302
    english = text_of(demo_client.get("/cases/1"))
    assert re.search(r"Active now: Publish notice and open conditional auction\. Waiting for: [^.]+\.", english)
    tasks = demo_client.get("/tasks").get_data(as_text=True)
    assert re.search(r"<br>[^<]+\.</td>", tasks)
    assert demo_client.post("/language", data={"lang": "hi", "next": "/tasks"}).status_code == 302
    hindi = text_of(demo_client.get("/cases/1"))
    active = re.search(r"अभी चालू: ([^।]+)। प्रतीक्षा: ([^।]+)।", hindi)
    assert active is not None and not active.group(1).endswith(".") and not active.group(2).endswith(".")
    tasks = demo_client.get("/tasks").get_data(as_text=True)
    todo = re.findall(r"<br>([^<]+)</td>", tasks)
    assert todo and all(line.endswith("।") and not line.endswith(".।") for line in todo), todo
    assert demo_client.post("/logout").status_code in (302, 303)
    assert demo_client.post("/login", data={"username": "admin", "password": DEMO_PASSWORD}).status_code == 302
    assert "— bundled Rule 130 process." in text_of(demo_client.get("/processes/current"))
    assert demo_client.post("/language", data={"lang": "hi", "next": "/tasks"}).status_code == 302
    process = text_of(demo_client.get("/processes/current"))
    assert "— साथ में दी गई नियम 130 की प्रक्रिया।" in process


def test_a_birth_and_a_reassignment_read_in_hindi_in_the_history(demo_client, sessions):
    """The history names a birth and a reassigned task in the page's language; an empty "from" is a dash."""
    from webapp.services.cases import cases
    from webapp.services.running import uow
    from webapp.services.tasks import tasklist, tasks

    with sessions() as session:
        people = {u.username: u for u in session.scalars(select(User))}
        case = session.get(cases.Case, 1)
        [row] = [r for r in tasks.my_tasks(session, people["secretary"]).rows if r.case_id == case.id]
    uow.perform(sessions, "reassign_task", tasklist.reassign, people["sarpanch"], 1, row.task_id, "secretary")
    first_tag = cases.casefile.load(case.file_json).animals[0].tag
    uow.perform(sessions, "record_birth", cases.record_animal_event, people["keeper"], 1, "birth",
                tag=first_tag, calf_tag="CALF-1")
    assert demo_client.post("/login", data={"username": "sarpanch", "password": DEMO_PASSWORD}).status_code == 302
    english = text_of(demo_client.get("/cases/1"))
    assert "task: Publish notice and open conditional auction; to: Sunita; from: —" in english
    assert "Birth recorded" in english and f"calf: CALF-1; mother: {first_tag}" in english
    assert demo_client.post("/language", data={"lang": "hi", "next": "/cases/1"}).status_code == 302
    hindi = text_of(demo_client.get("/cases/1"))
    assert "कार्य: सूचना प्रकाशित करें और सशर्त नीलामी शुरू करें; तक: Sunita; से: —" in hindi
    assert "जन्म दर्ज" in hindi and f"बछड़ा: CALF-1; माँ: {first_tag}" in hindi
    assert "null" not in hindi and "Birth recorded" not in hindi


def test_a_fresh_demo_shows_the_secretary_and_the_sarpanch_a_task_each_and_none_overdue(demo_client, sessions):
    from datetime import timedelta

    from webapp.store.models import CaseTask
    from webapp.values import clock, legal_time

    today = legal_time.local_day(clock.now(), "Asia/Kolkata")
    with sessions() as session:
        ready = session.scalars(select(CaseTask).where(CaseTask.state == "ready").order_by(CaseTask.id)).all()
        assert [(row.element_id, row.lane) for row in ready] == [("ut_publish_notice", "secretary"),
                                                                  ("ut_decide_unsold", "sarpanch")]
        # the report is raised as the first case is recorded (its release window long over), so its
        # notice is due tomorrow; the auction's last day was yesterday, so the sarpanch's decision
        # is due tomorrow (two days after it)
        assert [row.act_by for row in ready] == [today + timedelta(days=1)] * 2
