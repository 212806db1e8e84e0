"""Text that looks filled in but is not, or that spans lines where one line is asked for.

A required field of zero-width characters alone (U+200B, U+200C, U+FEFF: Unicode format characters)
is as empty as one of spaces; a single-line field (a name, a tag, a place) refuses any line break
(CR, LF, VT, FF, NEL, U+2028, U+2029) naming the field's label, in the page's language, and nothing
is saved. Multi-line fields (a decision's reason or remarks) keep their line breaks.
"""

from __future__ import annotations

import pytest

from webapp.errors import Refused
from webapp.services.cases import cases
from webapp.services.running import uow
from webapp.store.models import Case
from webapp.values import casefile, textguard

from .test_api import CASE, api, assert_error, open_file, start, tokens, unchanged  # noqa: F401 (fixtures)
from .test_web_pages import IMPOUNDED, at, login, publish_notice, start_case_on_page, text_of

INVISIBLE = ["\u200b", "\u200b\u200c", " \ufeff\u200d ", "\u2060\u00ad"]
LINE_BREAKS = ["\r\n", "\r", "\n", "\u2028", "\u2029", "\x0b", "\x0c", "\x85"]
NEW_CASE = {"impounded_at": IMPOUNDED, "place_seized": "Bhimpura", "place_impounded": "Kanji House",
            "nearest_village": "Bhimpura", "species-1": "cow", "description-1": "brown cow", "tag-1": "RJ-1"}


def case_count(sessions) -> int:
    with sessions() as session:
        return session.query(Case).count()


def hindi(client) -> None:
    assert client.post("/language", data={"lang": "hi", "next": "/tasks"}).status_code == 302


def test_blank_means_whitespace_and_format_characters_only():
    for text in ["", "   ", "\t\n", None, *INVISIBLE]:
        assert textguard.is_blank(text), repr(text)
    for text in ["a", "\u200bRam", "राम", "क्\u200dष", "0"]:
        assert not textguard.is_blank(text), repr(text)


@pytest.mark.parametrize("name", INVISIBLE)
def test_an_objector_named_by_invisible_characters_alone_is_refused_in_english_and_hindi(
        client, sessions, virtual_clock, name):
    case_id = start_case_on_page(client, virtual_clock)
    publish_notice(client, sessions, virtual_clock, case_id)
    page = client.post(f"/cases/{case_id}/objections", data={"objector": name})
    assert page.status_code == 422
    assert "the objector's name is required" in text_of(page)
    hindi(client)
    page = client.post(f"/cases/{case_id}/objections", data={"objector": name})
    assert page.status_code == 422
    assert "आपत्तिकर्ता का नाम आवश्यक है" in text_of(page)
    with sessions() as session:
        assert casefile.load(session.get(Case, case_id).file_json).objections == []


@pytest.mark.parametrize("change, message, field", [
    ({"place_seized": "\u200b"}, "the place seized is required", "place_seized"),
    ({"nearest_village": "\u200b\u200c"}, "the village nearest the place of seizure is required", "nearest_village"),
    ({"animals": [{"species": "cow", "description": "\ufeff", "tag": "RJ-1"}]},
     "animal 1: the description is required", "animals"),
])
def test_the_case_services_refuse_invisible_required_text(sessions, officers, virtual_clock, change, message, field):
    virtual_clock.set(at("2026-01-05T10:05:00+05:30"))
    with pytest.raises(Refused) as refused:
        uow.perform(sessions, "start_case", cases.start_case, officers["pound_keeper"],
                    **{**CASE, "impounded_at": at(CASE["impounded_at"]), **change})
    assert str(refused.value.message) == message
    assert refused.value.field_errors == {field: "this field is required"}
    assert case_count(sessions) == 0


def test_an_invisible_tag_is_no_tag(sessions, officers, virtual_clock):
    virtual_clock.set(at("2026-01-05T10:05:00+05:30"))
    case = uow.perform(sessions, "start_case", cases.start_case, officers["pound_keeper"],
                       **{**CASE, "impounded_at": at(CASE["impounded_at"]),
                          "animals": [{"species": "cow", "description": "brown cow", "tag": "\u200b"}]})
    assert [a.tag for a in casefile.load(case.file_json).animals] == [None]


@pytest.mark.parametrize("owner", INVISIBLE)
def test_a_task_forms_required_text_of_invisible_characters_is_missing(api, sessions, virtual_clock, owner):  # noqa: F811 - the fixture
    case = start(api)
    before = unchanged(api, case["id"], "pound_keeper")
    error = assert_error(api.complete("pound_keeper", case["id"], "ut_release", {"owner": owner}), 422)
    assert error["message"] == "the form has errors: Owner's name: this field is required"
    assert error["fields"] == {"owner": "this field is required"}
    assert unchanged(api, case["id"], "pound_keeper") == before


@pytest.mark.parametrize("owner, code", [("Ramu\u200b", "U+200B"), ("\ufeffRamu", "U+FEFF"), ("Ra\u00admu", "U+00AD"),
                                         ("Ramu\tLal", "U+0009"), ("Ramu\u200e", "U+200E")])
def test_a_name_with_a_tab_or_an_invisible_character_is_refused_naming_it(api, sessions, virtual_clock, owner, code):  # noqa: F811
    """"Ramu" and "Ramu" with a zero-width space look the same on every receipt and register, yet are
    two names: refused, naming the character; nothing changes."""
    case = start(api)
    before = unchanged(api, case["id"], "pound_keeper")
    error = assert_error(api.complete("pound_keeper", case["id"], "ut_release", {"owner": owner}), 422)
    assert f"contains a tab or an invisible character ({code})" in error["message"]
    assert error["fields"] == {"owner": "contains an invisible character"}
    assert unchanged(api, case["id"], "pound_keeper") == before


def test_a_hindi_name_keeps_its_joiners(api, sessions, virtual_clock):  # noqa: F811
    """The zero-width joiner and non-joiner choose how Devanagari letters join: part of the name."""
    case = start(api)
    name = "लक्\u200dष्मी नारायण"
    done = api.complete("pound_keeper", case["id"], "ut_release", {"owner": name})
    assert done.status_code == 200, done.json
    assert done.json["file"]["release"]["owner"] == name


# -- line breaks in single-line fields -------------------------------------------------------------

@pytest.mark.parametrize("brk", LINE_BREAKS)
def test_a_tag_with_a_line_break_is_refused_on_the_page_in_english_and_hindi(client, sessions, virtual_clock, brk):
    virtual_clock.set(at("2026-01-05T10:05:00+05:30"))
    login(client, "pk")
    page = client.post("/cases/new", data={**NEW_CASE, "tag-1": f"T{brk}1"})
    assert page.status_code == 422
    if brk in "\x0b\x0c":  # these two are control characters too: the page names the field's label
        assert f"Tag of animal 1 contains a control character (U+{ord(brk):04X})" in text_of(page)
    else:
        assert "animal 1: the tag must be on one line; remove the line break and send it again" in text_of(page)
        hindi(client)
        page = client.post("/cases/new", data={**NEW_CASE, "tag-1": f"T{brk}1"})
        assert page.status_code == 422
        assert "पशु 1: टैग एक ही पंक्ति में होना चाहिए; पंक्ति-विराम हटाकर फिर से भेजें" in text_of(page)
    assert case_count(sessions) == 0


@pytest.mark.parametrize("change, message, field", [
    ({"place_seized": "Bhim\r\npura"}, "the place seized must be on one line", "place_seized"),
    ({"place_impounded": "Kanji\u2028House"}, "the place impounded must be on one line", "place_impounded"),
    ({"animals": [{"species": "cow", "description": "brown\ncow", "tag": "RJ-1"}]},
     "animal 1: the description must be on one line", "animals"),
    ({"animals": [{"species": "cow", "description": "brown cow", "tag": "RJ\u20291"}]},
     "animal 1: the tag must be on one line", "animals"),
])
def test_the_case_services_refuse_line_breaks_in_single_line_fields(sessions, officers, virtual_clock, change,
                                                                    message, field):
    virtual_clock.set(at("2026-01-05T10:05:00+05:30"))
    with pytest.raises(Refused) as refused:
        uow.perform(sessions, "start_case", cases.start_case, officers["pound_keeper"],
                    **{**CASE, "impounded_at": at(CASE["impounded_at"]), **change})
    assert str(refused.value.message) == f"{message}; remove the line break and send it again"
    assert refused.value.field_errors == {field: "must be on one line"}
    assert case_count(sessions) == 0


def test_an_objector_name_with_a_line_break_is_refused_and_the_api_names_the_field(api, sessions, virtual_clock):  # noqa: F811 - the fixture
    case = open_file(api, sessions, virtual_clock)
    assert api.complete("secretary", case["id"], "ut_publish_notice",
                        {"objection_period_days": 30, "full_price": "12000.00"}).status_code == 200
    before = unchanged(api, case["id"])
    error = assert_error(api.post(f"/cases/{case['id']}/objections", "secretary", {"objector": "Ram\r\nlal"}), 422)
    assert error["message"] == "the objector's name must be on one line; remove the line break and send it again"
    assert error["fields"] == {"objector": "must be on one line"}
    assert unchanged(api, case["id"]) == before


def test_a_single_line_task_field_refuses_a_line_break_and_a_text_area_keeps_it(api, sessions, virtual_clock):  # noqa: F811 - the fixture
    case = start(api)
    before = unchanged(api, case["id"], "pound_keeper")
    error = assert_error(api.complete("pound_keeper", case["id"], "ut_release", {"owner": "Ram\u2028lal"}), 422)
    assert error["message"] == "Owner's name must be on one line; remove the line break and send it again"
    assert error["fields"] == {"owner": "must be on one line"}
    assert unchanged(api, case["id"], "pound_keeper") == before
    from webapp.services.tasks import form_schema
    assert form_schema.is_multiline({"type": "string", "title": "Remarks", "maxLength": 2000})
    assert not form_schema.is_multiline({"type": "string", "title": "Owner's name", "maxLength": 200})
    assert not form_schema.is_multiline({"type": "string", "enum": ["a", "b"], "maxLength": 2000})


# -- the control-character refusal names the field's label, in the page's language -----------------

def test_a_control_character_on_a_page_is_named_by_the_fields_label_in_english_and_hindi(
        client, sessions, virtual_clock):
    virtual_clock.set(at("2026-01-05T10:05:00+05:30"))
    login(client, "pk")
    page = client.post("/cases/new", data={**NEW_CASE, "place_seized": "Bhim\x00pura"})
    assert page.status_code == 422
    assert "Place seized contains a control character (U+0000); remove it and send it again" in text_of(page)
    assert "place_seized" not in text_of(page)
    page = client.post("/cases/new", data={**NEW_CASE, "description-1": "brown\x1bcow"})
    assert "Description of animal 1 contains a control character (U+001B)" in text_of(page)
    hindi(client)
    page = client.post("/cases/new", data={**NEW_CASE, "place_seized": "Bhim\x00pura"})
    assert page.status_code == 422
    assert "पकड़ने का स्थान में एक नियंत्रण वर्ण (U+0000) है; उसे हटाकर फिर से भेजें" in text_of(page)
    assert case_count(sessions) == 0


def test_a_control_character_in_a_task_form_is_named_by_the_forms_title(client, sessions, virtual_clock):
    from .test_web_pages import complete, pass_release_window, task_link
    case_id = start_case_on_page(client, virtual_clock)
    pass_release_window(sessions, virtual_clock)
    virtual_clock.set(at("2026-01-09T11:00:00+05:30"))
    login(client, "sec")
    link = task_link(client, "Publish notice")
    page = complete(client, link, objection_period_days="30", full_price="12000.00\x00")
    assert page.status_code == 422
    assert "Full price of the lot (₹) contains a control character (U+0000)" in text_of(page)
    assert "full_price" not in text_of(page)
    hindi(client)
    page = complete(client, link, objection_period_days="30", full_price="12000.00\x00")
    assert "पूरे लॉट का पूरा मूल्य (₹) में एक नियंत्रण वर्ण (U+0000) है" in text_of(page)
    with sessions() as session:
        assert casefile.load(session.get(Case, case_id).file_json).notice is None


# -- a form with several mistakes shows them all ------------------------------------------------------

def field_error_texts(page) -> dict[str, str]:
    import lxml.html
    doc = lxml.html.fromstring(page.get_data(as_text=True))
    return {p.get("id", "animals-error").removesuffix("-error"): " ".join(p.text_content().split())
            for p in doc.xpath("//p[@class='field-error']")}


def test_an_empty_new_case_form_shows_every_field_error_at_once_in_english_and_hindi(client, sessions, virtual_clock):
    virtual_clock.set(at("2026-01-05T10:05:00+05:30"))
    login(client, "pk")
    empty = {"impounded_at": "", "place_seized": "", "place_impounded": "", "nearest_village": ""}
    page = client.post("/cases/new", data=empty)
    assert page.status_code == 422
    assert field_error_texts(page) == {"impounded_at": "not a date and time", "place_seized": "this field is required",
                                       "place_impounded": "this field is required",
                                       "nearest_village": "this field is required", "animals": "no animals"}
    assert ("the form has errors: the time of impoundment must be a valid date and time; the place seized is "
            "required; the place impounded is required; the village nearest the place of seizure is required; "
            "record at least one animal") in text_of(page)  # the page's words: no UTC offset
    hindi(client)
    page = client.post("/cases/new", data=empty)
    assert page.status_code == 422
    assert field_error_texts(page) == {"impounded_at": "दिनांक और समय नहीं", "place_seized": "यह जानकारी आवश्यक है",
                                       "place_impounded": "यह जानकारी आवश्यक है",
                                       "nearest_village": "यह जानकारी आवश्यक है", "animals": "कोई पशु नहीं"}
    assert "प्रपत्र में त्रुटियाँ हैं: " in text_of(page) and "पकड़ने का स्थान आवश्यक है" in text_of(page)
    assert "निरुद्ध करने का समय मान्य दिनांक और समय होना चाहिए;" in text_of(page) and "UTC" not in text_of(page)
    assert case_count(sessions) == 0


def test_one_mistake_is_refused_with_its_own_message(sessions, officers, virtual_clock):
    virtual_clock.set(at("2026-01-05T10:05:00+05:30"))
    with pytest.raises(Refused) as refused:
        uow.perform(sessions, "start_case", cases.start_case, officers["pound_keeper"],
                    **{**CASE, "impounded_at": at(CASE["impounded_at"]), "animals": []})
    assert str(refused.value.message) == "record at least one animal"
    assert refused.value.field_errors == {"animals": "no animals"}


@pytest.mark.parametrize("username, display_name, message", [
    ("\u200b", None, "a user name of 1 to 80 characters is required"),
    ("ram\nlal", None, "the user name must be on one line; remove the line break and send it again"),
    ("ramlal", "Ram\u2028Lal", "the display name must be on one line; remove the line break and send it again"),
    ("ramlal", "Ram\x00Lal", "the display name contains a control character (U+0000); remove it and send it again"),
])
def test_a_user_name_or_display_name_that_is_blank_or_spans_lines_is_refused(sessions, officers, username,
                                                                             display_name, message):
    from webapp.services.people import users
    from webapp.store.models import User
    with sessions() as session:
        count = session.query(User).count()
        with pytest.raises(Refused) as refused:
            users.create_user(session, username, "long enough password", "secretary", display_name=display_name,
                              panchayat_code="RMP")
        assert str(refused.value.message) == message
        session.rollback()
        assert session.query(User).count() == count
