"""Fields shown only where they apply, Devanagari digits wherever digits are, and one rule for the
amount received on a release (issue 20, item 3).

- The security of "Decide ownership claim" applies only for an interim delivery: the form says it
  in JSON Schema (``allOf`` / ``if`` / ``then`` / ``else``); the page wraps the field with the
  condition in data attributes and a hint, and the server refuses it missing for an interim
  delivery or given with another decision, naming the field in English and in Hindi.
- Dates, numbers and amounts typed with Devanagari digits (२०२६-०१-०५) are read as ASCII digits.
- The release: the page requires the amount received; the API takes its absence as exactly the
  amount due.

Real SQLite, the real diagram, the virtual clock (tests/conftest.py).
"""

from __future__ import annotations

import json
import re
from datetime import date
from decimal import Decimal
from pathlib import Path

import lxml.html

from webapp.engine.forms import conditions
from webapp.services.tasks import form_schema

from .test_api import Api, assert_error, open_file, publish, tokens, unchanged  # noqa: F401 (fixtures)
from .test_web_pages import (
    at,
    case_file,
    complete,
    login,
    publish_notice,
    start_case_on_page,
    task_link,
    text_of,
)

FORMS = Path(__file__).resolve().parents[1] / "processes" / "rule130" / "forms"
DECIDE = json.loads((FORMS / "decide_objection.schema.json").read_text(encoding="utf-8"))


def api_for(client, tokens) -> Api:  # noqa: F811
    return Api(client, tokens)


def objection_on_page(client, sessions, virtual_clock) -> tuple[int, str]:
    """A case with the notice published and Ram Lal's objection filed; the sarpanch signed in, with
    the link of the task "Decide ownership claim"."""
    case_id = start_case_on_page(client, virtual_clock)
    publish_notice(client, sessions, virtual_clock, case_id)
    virtual_clock.set(at("2026-01-12T10:00:00+05:30"))
    assert client.post(f"/cases/{case_id}/objections", data={"objector": "Ram Lal"}).status_code == 302
    login(client, "sar")
    return case_id, task_link(client, "Decide ownership claim")


# -- 1. the security only for an interim delivery -----------------------------------------------------

def test_the_decide_objection_form_says_in_json_schema_that_the_security_is_for_an_interim_delivery():
    [condition] = conditions.conditions(DECIDE).values()
    assert (condition.field, condition.control, condition.values) == ("security", "decision", ("interim_delivery",))
    assert condition.required and condition.forbidden
    assert condition.node["description"] == "Only for an interim delivery"
    assert conditions.broken(DECIDE, {"decision": "interim_delivery"}) == {"security": ("missing", condition)}
    assert conditions.broken(DECIDE, {"decision": "proved", "security": "10"}) == {
        "security": ("not_applicable", condition)}
    assert conditions.broken(DECIDE, {"decision": "proved"}) == {}
    assert conditions.broken(DECIDE, {"decision": "interim_delivery", "security": "10"}) == {}
    # the JSON Schema validator agrees (the same if/then/else, read by jsonschema)
    from webapp.engine.forms import schemas as forms
    assert not list(forms.validator(DECIDE).iter_errors({"decision": "interim_delivery", "security": "10"}))
    assert list(forms.validator(DECIDE).iter_errors({"decision": "interim_delivery"}))
    assert list(forms.validator(DECIDE).iter_errors({"decision": "proved", "security": "10"}))


def test_the_page_wraps_the_security_with_its_condition_a_hint_and_the_script(client, sessions, virtual_clock):
    _case_id, link = objection_on_page(client, sessions, virtual_clock)
    html = client.get(link).get_data(as_text=True)
    doc = lxml.html.fromstring(html)
    wrapper = doc.get_element_by_id("f-security-field")
    assert wrapper.get("data-depends-on") == "decision"
    assert json.loads(wrapper.get("data-depends-values")) == ["interim_delivery"]
    assert "conditional" in wrapper.get("class").split()
    assert wrapper.xpath(".//input[@name='security']")  # the input is inside the wrapper
    assert doc.get_element_by_id("f-security-when").text_content() == "Only for an interim delivery"
    assert "f-security-when" in wrapper.xpath(".//input[@name='security']")[0].get("aria-describedby").split()
    [script] = doc.xpath("//script[contains(@src, '/static/conditional')]")
    # the plain name, or its content-hashed name once `rule130 digest-static` has run (webapp/web/assets.py)
    assert re.fullmatch(r".*/static/conditional(-[0-9a-f]+)?\.js", script.get("src"))
    assert not doc.xpath("//script[not(@src)]") and "onchange" not in html  # the CSP allows no inline script
    # the decision itself is not conditional, and the reason neither
    assert doc.get_element_by_id("f-decision").xpath("ancestor::div[@data-depends-on]") == []
    static = client.get(script.get("src"))
    assert static.status_code == 200 and b"data-depends-on" in static.data


def test_the_hint_is_in_hindi_on_the_hindi_page(client, sessions, virtual_clock):
    _case_id, link = objection_on_page(client, sessions, virtual_clock)
    assert client.post("/language", data={"lang": "hi", "next": "/tasks"}).status_code == 302
    doc = lxml.html.fromstring(client.get(link).get_data(as_text=True))
    assert doc.get_element_by_id("f-security-when").text_content() == "केवल अंतरिम सुपुर्दगी के लिए"


def test_an_interim_delivery_without_security_is_refused_naming_the_field(client, sessions, virtual_clock):
    case_id, link = objection_on_page(client, sessions, virtual_clock)
    page = complete(client, link, decision="interim_delivery", security="")
    assert page.status_code == 422
    text = text_of(page)
    assert ("the form has errors: Security for interim delivery (₹): required when Decision is "
            "“interim delivery”") in text
    doc = lxml.html.fromstring(page.get_data(as_text=True))
    assert doc.get_element_by_id("f-security-error").text_content() == "required when Decision is “interim delivery”"
    assert case_file(sessions, case_id).objections[0].decision is None and case_file(sessions, case_id).interim is None


def test_the_refusal_is_in_hindi_on_the_hindi_page(client, sessions, virtual_clock):
    case_id, link = objection_on_page(client, sessions, virtual_clock)
    assert client.post("/language", data={"lang": "hi", "next": "/tasks"}).status_code == 302
    page = complete(client, link, decision="proved", security="500")
    assert page.status_code == 422
    doc = lxml.html.fromstring(page.get_data(as_text=True))
    assert doc.get_element_by_id("f-security-error").text_content() == (
        "केवल तब जब निर्णय “अंतरिम सुपुर्दगी” हो; इसे खाली छोड़ें")
    assert case_file(sessions, case_id).objections[0].decision is None


def test_a_decision_without_the_security_on_the_page_records_no_security(client, sessions, virtual_clock):
    """What the page's script sends when the security is hidden: no security field at all (a
    disabled input is not sent); and without the script, an empty security is no value."""
    case_id, link = objection_on_page(client, sessions, virtual_clock)
    response = complete(client, link, decision="not_proved", security="")
    assert response.status_code == 302, text_of(response)
    claim = case_file(sessions, case_id).objections[0]
    assert claim.decision == "not_proved" and case_file(sessions, case_id).interim is None


def test_the_check_page_of_a_decision_leaves_out_the_security_it_does_not_take(client, sessions, virtual_clock):
    _case_id, link = objection_on_page(client, sessions, virtual_clock)
    page = complete(client, link, confirm=False, decision="not_proved")
    assert page.status_code == 200
    text = text_of(page)
    assert "not proved" in text and "Security for interim delivery" not in text


def test_an_interim_delivery_with_security_is_recorded(client, sessions, virtual_clock):
    case_id, link = objection_on_page(client, sessions, virtual_clock)
    response = complete(client, link, decision="interim_delivery", security="१५००")
    assert response.status_code == 302, text_of(response)
    interim = case_file(sessions, case_id).interim
    assert interim is not None and interim.objector == "Ram Lal" and interim.security == Decimal("1500.00")


def test_the_api_refuses_a_security_with_another_decision_naming_the_field(client, tokens, sessions,  # noqa: F811
                                                                            virtual_clock):
    api = api_for(client, tokens)
    case = open_file(api, sessions, virtual_clock)
    publish(api, case["id"])
    virtual_clock.set(at("2026-01-20T11:00:00+05:30"))
    assert api.post(f"/cases/{case['id']}/objections", "secretary", {"objector": "Ramesh"}).status_code == 201
    before = unchanged(api, case["id"], "sarpanch")
    url = f"/cases/{case['id']}/acts/ut_decide_objection"
    error = assert_error(api.post(url, "sarpanch", {"data": {"decision": "proved", "security": "100"}}), 422)
    assert error["message"] == ("the form has errors: Security for interim delivery (₹): only when Decision is "
                                "“interim delivery”; leave it empty")
    assert error["fields"] == {"security": "only when Decision is “interim delivery”; leave it empty"}
    error = assert_error(api.post(url, "sarpanch", {"data": {"decision": "interim_delivery"}}), 422)
    assert error["fields"] == {"security": "required when Decision is “interim delivery”"}
    assert unchanged(api, case["id"], "sarpanch") == before


def test_the_validator_names_a_conditional_field_not_jsonschema_text():
    """validate_schema, the last check of every form, words if/then failures as the form check does."""
    import pytest

    from webapp.errors import Refused
    with pytest.raises(Refused) as refused:
        form_schema.validate_schema(DECIDE, {"decision": "proved", "security": "100"})
    assert refused.value.field_errors == {"security": "only when Decision is “interim delivery”; leave it empty"}
    assert "schema" not in str(refused.value.message) and "False" not in str(refused.value.message)


def test_the_modeler_preview_renders_the_conditional_field(client):
    login(client, "admin")
    response = client.post("/admin/processes/rule130_case/forms/preview",
                           json={"schema": DECIDE, "language": "hi", "task": "Decide ownership claim"})
    assert response.status_code == 200, response.get_data(as_text=True)[:500]
    doc = lxml.html.fromstring(response.json["html"])
    wrapper = doc.get_element_by_id("f-security-field")
    assert wrapper.get("data-depends-on") == "decision"
    assert doc.get_element_by_id("f-security-when").text_content() == "केवल अंतरिम सुपुर्दगी के लिए"


# -- 2. Devanagari digits wherever digits are ---------------------------------------------------------

def test_a_birth_recorded_on_the_case_page_with_a_devanagari_date(client, sessions, virtual_clock):
    case_id = start_case_on_page(client, virtual_clock)  # two cows impounded 2026-01-05; the pound keeper signed in
    virtual_clock.set(at("2026-01-07T09:00:00+05:30"))
    response = client.post(f"/cases/{case_id}/births", data={"mother": "1", "born_on": "२०२६-०१-०६",
                                                              "calf_description": "white calf"})
    assert response.status_code == 302, text_of(response)
    calf = case_file(sessions, case_id).animals[-1]
    assert (calf.description, calf.born_on, calf.mother) == ("white calf", date(2026, 1, 6), 1)
    page = text_of(client.get(f"/cases/{case_id}"))
    assert "born in the pound on Tuesday, 6 January 2026 to animal 1" in page


def test_a_devanagari_date_still_meets_the_same_checks(client, sessions, virtual_clock):
    case_id = start_case_on_page(client, virtual_clock)
    virtual_clock.set(at("2026-01-07T09:00:00+05:30"))
    response = client.post(f"/cases/{case_id}/births", data={"mother": "1", "born_on": "२०२६-०१-०९"})
    assert response.status_code == 422
    assert "the day of birth Friday, 9 January 2026 is after today" in text_of(response)
    response = client.post(f"/cases/{case_id}/births", data={"mother": "1", "born_on": "२०२६-१३-०१"})
    assert response.status_code == 422
    assert "the day of birth must be a date such as 2026-01-07" in text_of(response)
    assert len(case_file(sessions, case_id).animals) == 2  # nothing recorded


def test_amounts_days_and_dates_in_devanagari_digits_through_the_api(client, tokens, sessions,  # noqa: F811
                                                                      virtual_clock):
    api = api_for(client, tokens)
    virtual_clock.set(at("2026-01-05T10:05:00+05:30"))
    started = api.post("/cases", "pound_keeper", {
        "impounded_at": "२०२६-०१-०५T१०:००:००+०५:३०", "place_seized": "Bhimpura",
        "place_impounded": "Kanji House, Rampura", "nearest_village": "Bhimpura",
        "animals": [{"species": "cow", "description": "brown cow", "tag": "RJ-1001"}]})
    assert started.status_code == 201, started.json
    case_id = started.json["id"]
    assert started.json["file"]["impounded_at"] == "2026-01-05T10:00:00+05:30"
    virtual_clock.set(at("2026-01-07T09:00:00+05:30"))
    born = api.post(f"/cases/{case_id}/animal-events", "pound_keeper",
                    {"kind": "birth", "position": 1, "born_on": "२०२६-०१-०६"})
    assert born.status_code == 201, born.json
    assert born.json["file"]["animals"][1]["born_on"] == "2026-01-06"
    virtual_clock.set(at("2026-01-09T11:00:00+05:30"))
    from webapp.services.jobs import timers
    assert timers.fire_due(sessions) >= 1
    published = api.complete("secretary", case_id, "ut_publish_notice",
                             {"objection_period_days": "३०", "full_price": "१२,०००.५०"})
    assert published.status_code == 200, published.json
    notice = published.json["file"]["notice"]
    assert (notice["objection_period_days"], notice["full_price"], notice["last_day"]) == (30, "12000.50", "2026-02-08")
    with sessions() as session:
        from webapp.store.models import Case
        stored = casefile_of(session.get(Case, case_id))
    assert stored.notice.full_price == Decimal("12000.50")


def casefile_of(case):
    from webapp.values import casefile
    return casefile.load(case.file_json)


def test_the_digits_helper_changes_only_digits():
    from webapp.values.digits import ascii_digits
    assert ascii_digits("२०२६-०१-०५") == "2026-01-05"
    assert ascii_digits("₹१,२००.५०") == "₹1,200.50"
    assert ascii_digits("मोहन") == "मोहन" and ascii_digits(30) == 30 and ascii_digits(None) is None
    # a task form's names and reasons keep their digits; its numbers, amounts and dates lose theirs
    assert form_schema.typed_digits(DECIDE, {"decision": "proved", "security": "१५", "reason": "धारा १३०"}) == {
        "decision": "proved", "security": "15", "reason": "धारा १३०"}


# -- 3. the amount received on a release: one rule ---------------------------------------------------

def test_the_release_page_requires_the_amount_received(client, sessions, virtual_clock):
    case_id = start_case_on_page(client, virtual_clock)  # two cows impounded 2026-01-05
    virtual_clock.set(at("2026-01-06T10:00:00+05:30"))
    link = task_link(client, "Release cattle to owner")
    doc = lxml.html.fromstring(client.get(link).get_data(as_text=True))
    [label] = doc.xpath("//label[@for='f-amount_received']")
    assert " ".join(label.text_content().split()) == "Amount received from the owner (₹) *(required)"
    assert len(doc.xpath("//input[@id='f-amount_received'][@required]")) == 1
    page = complete(client, link, owner="Owner M", amount_received="")
    assert page.status_code == 422
    assert ("the form has errors: Amount received from the owner (₹): this field is required"
            in text_of(page))
    doc = lxml.html.fromstring(page.get_data(as_text=True))
    assert doc.get_element_by_id("f-amount_received-error").text_content() == "this field is required"
    assert case_file(sessions, case_id).release is None


def test_the_api_takes_an_omitted_amount_received_as_exactly_the_amount_due(client, tokens, sessions,  # noqa: F811
                                                                              virtual_clock):
    api = api_for(client, tokens)
    virtual_clock.set(at("2026-01-05T10:05:00+05:30"))
    from .test_api import start
    case = start(api)  # two cows: F = 2 x 500.00; C = 2 x 60.00 a day
    virtual_clock.set(at("2026-01-07T10:00:00+05:30"))
    blank = api.complete("pound_keeper", case["id"], "ut_release", {"owner": "Ramlal", "amount_received": ""})
    assert assert_error(blank, 422)["fields"] == {"amount_received": "this field is required"}
    assert api.case(case["id"], "pound_keeper")["status"] == "running"
    released = api.complete("pound_keeper", case["id"], "ut_release", {"owner": "Ramlal"})
    assert released.status_code == 200, released.json
    assert released.json["file"]["release"] == {"owner": "Ramlal", "day": "2026-01-07", "received": "1360.00",
                                                "change": "0.00"}
    assert released.json["summary"]["ledger"]["pound_account"] == "1360.00"


def test_the_simulator_leaves_out_an_amount_received_a_step_does_not_give():
    """A scenario's release without amount_received (p49) is the API's rule: exactly the amount due,
    no change; the ledger takes F + C."""
    from webapp.simulation.simulate import load_scenario, run_scenario

    from .conftest import SCENARIOS
    outcome = run_scenario(load_scenario(SCENARIOS / "p49-kiritimati-release-same-day-year-boundary.yaml"))
    assert outcome.mismatches == []
    assert outcome.result["ledger"]["pound_account"] == "645.75"
    assert outcome.result["outcome"] == "released_by_owner"
    assert [row["name"] for row in outcome.timeline if row["kind"] == "task"] == ["Release cattle to owner"]
