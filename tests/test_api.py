"""The JSON API under /api/v1: the same service calls and checks as the pages, over bearer tokens.

Real SQLite, the real diagram, the virtual clock; timers fire through the timer service.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from urllib.parse import quote

import pytest

from tests.deadline_races import make_tokens
from webapp.services.jobs import timers
from webapp.services.people import users
from webapp.store.models import User

from .conftest import PASSWORD

IMPOUNDED = "2026-01-05T10:00:00+05:30"
CASE = {
    "impounded_at": IMPOUNDED,
    "place_seized": "Bhimpura",
    "place_impounded": "Kanji House, Rampura",
    "nearest_village": "Bhimpura",
    "animals": [
        {"species": "cow", "description": "brown cow, white patch on forehead", "tag": "RJ-1001"},
        {"species": "cow", "description": "black cow, left horn broken", "tag": "RJ-1002"},
    ],
}


def at(text: str) -> datetime:
    return datetime.fromisoformat(text)


@pytest.fixture
def tokens(sessions, officers):
    """One API token per officer, keyed by the role names of the ``officers`` fixture."""
    return make_tokens(sessions, officers)


class Api:
    """The test client with a bearer token per role."""

    def __init__(self, client, tokens):
        self.client, self.tokens = client, tokens

    def call(self, method, path, role=None, json=None, **kwargs):
        headers = kwargs.pop("headers", {})
        if role is not None:
            headers["Authorization"] = f"Bearer {self.tokens[role]}"
        return self.client.open(f"/api/v1{path}", method=method, json=json, headers=headers, **kwargs)

    def get(self, path, role, **kwargs):
        return self.call("GET", path, role, **kwargs)

    def post(self, path, role, json=None, **kwargs):
        return self.call("POST", path, role, json=json, **kwargs)

    def tasks(self, role):
        response = self.get("/tasks", role)
        assert response.status_code == 200, response.json
        return response.json["tasks"]

    def task(self, role, element_id, case_id=None):
        found = [t for t in self.tasks(role) if t["element_id"] == element_id
                 and (case_id is None or t["case_id"] == case_id)]
        assert len(found) == 1, (element_id, self.tasks(role))
        return found[0]

    def complete(self, role, case_id, element_id, data, **extra):
        task = self.task(role, element_id, case_id)
        return self.post(f"/cases/{case_id}/tasks/{task['task_id']}", role, {"data": data, **extra})

    def case(self, case_ref, role="secretary"):
        response = self.get(f"/cases/{case_ref}", role)
        assert response.status_code == 200, response.json
        return response.json


@pytest.fixture
def api(client, tokens, virtual_clock):
    return Api(client, tokens)


def start(api) -> dict:
    response = api.post("/cases", "pound_keeper", CASE)
    assert response.status_code == 201, response.json
    return response.json


def open_file(api, sessions, virtual_clock, when="2026-01-09T11:00:00+05:30") -> dict:
    """Start a case and let the 3-day release window pass: the report opens the file."""
    case = start(api)
    virtual_clock.set(at(when))
    assert timers.fire_due(sessions) >= 1
    return case


def publish(api, case_id, period=30, full_price="12000.00"):
    response = api.complete("secretary", case_id, "ut_publish_notice",
                            {"objection_period_days": period, "full_price": full_price})
    assert response.status_code == 200, response.json
    return response.json


def unchanged(api, case_id, role="secretary"):
    """What a refused call must not change: the file, the summary, the version, the open tasks."""
    case = api.case(case_id, role)
    return (case["file"], case["summary"], case["lock_version"], case["status"],
            sorted(t["task_id"] for t in case["tasks"]))


def assert_error(response, status, code=None):
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.is_json
    error = response.json["error"]
    assert set(error) >= {"code", "message"} and error["message"]
    if code:
        assert error["code"] == code
    return error


# -- authentication ------------------------------------------------------------------------------

def test_every_endpoint_needs_a_bearer_token(api):
    for method, path in [("GET", "/me"), ("GET", "/tasks"), ("GET", "/cases"), ("POST", "/cases"),
                         ("GET", "/cases/1"), ("POST", "/cases/1/tasks/x"), ("POST", "/cases/1/objections"),
                         ("POST", "/cases/1/appeals"), ("POST", "/cases/1/animal-events")]:
        response = api.call(method, path, json={})
        error = assert_error(response, 401, "unauthorized")
        assert "Bearer" in error["message"]
        assert response.headers["WWW-Authenticate"].startswith("Bearer")


def test_an_unknown_token_or_an_inactive_user_is_refused(api, sessions):
    assert_error(api.get("/me", None, headers={"Authorization": "Bearer not-a-token"}), 401, "unauthorized")
    assert_error(api.get("/me", None, headers={"Authorization": f"Basic {api.tokens['secretary']}"}), 401)
    assert api.get("/me", "secretary").status_code == 200
    with sessions() as session:
        session.query(User).filter_by(username="sec").update({"active": False})
        session.commit()
    assert_error(api.get("/me", "secretary"), 401, "unauthorized")


def test_me_shows_name_role_and_scope(api):
    me = api.get("/me", "secretary").json
    assert me == {"username": "sec", "display_name": "Secretary", "role": "secretary",
                  "scope": {"kind": "panchayat", "panchayat": {"code": "RMP", "name": "Rampura"}, "samiti": "SAM1"}}
    appellate = api.get("/me", "appellate_authority").json
    assert appellate["role"] == "appellate_authority"
    assert appellate["scope"] == {"kind": "samiti", "panchayat": None, "samiti": "SAM1"}
    assert api.get("/me", "receiving_officer").json["scope"]["kind"] == "dispatched"
    assert api.get("/me", "administrator").json["scope"]["kind"] == "installation"


# -- starting a case -----------------------------------------------------------------------------------

def test_pound_keeper_starts_a_case(api):
    case = start(api)
    assert case["number"] == "RMP/2026/0001"
    assert case["status"] == "running" and case["outcome"] == "pending"
    assert case["summary"]["deadlines"]["release_last_day"] == "2026-01-08"
    assert case["summary"]["fees"]["fine"] == "1000.00"
    assert case["summary"]["ledger"] == {"suspense": "0.00", "pound_account": "0.00", "panchayat_fund": "0.00"}
    assert case["file"]["impounded_at"] == "2026-01-05T10:00:00+05:30"
    assert case["file"]["impounded_on"] == "2026-01-05"
    assert [a["tag"] for a in case["file"]["animals"]] == ["RJ-1001", "RJ-1002"]
    assert case["file"]["animals"][0]["fine"] == "500.00"
    assert case["file"]["place_seized"] == "Bhimpura"
    assert [t["element_id"] for t in case["tasks"]] == ["ut_release"]
    assert case["history"][0]["kind"] == "start" and case["history"][0]["actor"] == "pk"


def test_a_case_is_found_by_id_and_by_url_encoded_number(api):
    case = start(api)
    by_number = api.case(quote(case["number"], safe=""))
    assert by_number["id"] == case["id"]
    assert api.case(case["id"])["number"] == "RMP/2026/0001"
    listed = api.get("/cases", "sarpanch").json["cases"]
    assert listed == [{"id": case["id"], "number": "RMP/2026/0001", "status": "running", "outcome": "pending"}]
    assert api.get("/cases?status=completed", "sarpanch").json["cases"] == []
    assert_error(api.get("/cases?status=lost", "sarpanch"), 422)


def test_starting_a_case_is_for_the_pound_keeper_with_valid_fields(api):
    assert_error(api.post("/cases", "secretary", CASE), 403, "forbidden")
    error = assert_error(api.post("/cases", "pound_keeper", {**CASE, "place_seized": ""}), 422, "refused")
    assert error["fields"] == {"place_seized": "this field is required"}
    error = assert_error(api.post("/cases", "pound_keeper", {**CASE, "impounded_at": "2026-01-05T10:00:00"}), 422)
    assert "impounded_at" in error["fields"]
    error = assert_error(api.post("/cases", "pound_keeper", {**CASE, "impounded_at": "2026-01-06T10:00:00+05:30"}),
                         422)
    assert "future" in error["message"]
    assert assert_error(api.post("/cases", "pound_keeper", {**CASE, "animals": []}), 422)["fields"] == \
        {"animals": "no animals"}
    assert "animals" in assert_error(api.post("/cases", "pound_keeper", {**CASE, "animals": ["cow"]}), 422)["fields"]
    assert "animals" in assert_error(api.post("/cases", "pound_keeper", {**CASE, "animals": [{"species": "dragon",
                                                                                              "description": "x"}]}),
                                     422)["fields"]
    assert assert_error(api.post("/cases", "pound_keeper", {**CASE, "place_seized": {"village": "Bhimpura"}}),
                        422)["fields"] == {"place_seized": "not text"}
    tagged = [{"species": "cow", "description": "brown cow", "tag": ["RJ-1"]}]
    assert assert_error(api.post("/cases", "pound_keeper", {**CASE, "animals": tagged}), 422)["fields"] == \
        {"animals": "animals[1].tag: not text"}
    assert api.get("/cases", "pound_keeper").json["cases"] == []


def test_control_characters_and_unknown_fields_are_refused_naming_them(api, sessions, virtual_clock):
    error = assert_error(api.post("/cases", "pound_keeper", {**CASE, "place_seized": "Bhim\u0000pura"}), 422)
    assert error["message"] == "place_seized contains a control character (U+0000); remove it and send it again"
    assert error["fields"] == {"place_seized": "contains a control character"}
    nested = {**CASE, "animals": [{"species": "cow", "description": "brown\u0007cow"}]}
    assert "animals[0].description contains a control character (U+0007)" in assert_error(
        api.post("/cases", "pound_keeper", nested), 422)["message"]
    error = assert_error(api.post("/cases", "pound_keeper", {**CASE, "fine": "0.00"}), 422)
    assert error["message"].startswith("unknown field fine") and error["fields"] == {"fine": "unknown field"}
    priced = {**CASE, "animals": [{"species": "cow", "description": "brown cow", "fine": "1.00"}]}
    assert "animal 1: unknown field fine" in assert_error(api.post("/cases", "pound_keeper", priced), 422)["message"]
    assert api.get("/cases", "secretary").json["cases"] == []
    case = open_file(api, sessions, virtual_clock)
    before = unchanged(api, case["id"])
    response = api.complete("secretary", case["id"], "ut_publish_notice",
                            {"objection_period_days": 30, "full_price": "12000.00\u0000"})
    assert "contains a control character (U+0000)" in assert_error(response, 422)["message"]
    assert unchanged(api, case["id"]) == before
    # a lone surrogate, legal in JSON text but not in any text encoding (it used to fail the audit hash: 500)
    response = api.call("POST", f"/cases/{case['id']}/objections", "secretary", data='{"objector": "K\\ud800"}',
                        content_type="application/json")
    error = assert_error(response, 422)
    assert error["message"] == "objector contains a character that is not valid text (U+D800); remove it and send it again"
    assert error["fields"] == {"objector": "contains a character that is not valid text"}
    assert unchanged(api, case["id"]) == before


@pytest.mark.parametrize("levels", [33, 3000])
def test_a_json_body_nested_too_deeply_is_refused_before_anything_reads_it(api, client, levels):
    """Thousands of nested brackets made the parser run out of stack: a 500 with a traceback per
    request, even without a token. Now a refusal naming the limit, signed in or not."""
    deep = "[" * levels + "]" * levels
    message = "the request's JSON nests arrays or objects more than 32 levels deep"
    for role in (None, "pound_keeper"):
        response = api.call("POST", "/cases", role, data=deep, content_type="application/json")
        assert assert_error(response, 422)["message"] == message
    response = client.post("/board", data=deep, content_type="application/json")
    assert response.status_code == 422 and "Traceback" not in response.get_data(as_text=True)
    assert api.get("/cases", "secretary").json["cases"] == []
    # 32 levels are a body like any other (here: not a case, so refused for what it says)
    shallow = api.call("POST", "/cases", "pound_keeper", data="[" * 32 + "]" * 32, content_type="application/json")
    assert shallow.status_code == 400 and shallow.json["error"]["message"] != message


def test_a_retried_start_with_the_same_idempotency_key_answers_the_first_case(api, virtual_clock):
    first = api.post("/cases", "pound_keeper", CASE, headers={"Idempotency-Key": "pk-2026-01-05-0001"})
    assert first.status_code == 201, first.json
    again = api.post("/cases", "pound_keeper", CASE, headers={"Idempotency-Key": "pk-2026-01-05-0001"})
    assert again.status_code == 200 and again.json["id"] == first.json["id"]
    changed = {**CASE, "place_seized": "Canal bank"}
    reused = assert_error(api.post("/cases", "pound_keeper", changed, headers={"Idempotency-Key": "pk-2026-01-05-0001"}), 422)
    assert reused["message"] == ("the Idempotency-Key pk-2026-01-05-0001 already recorded case RMP/2026/0001 with "
                                 "another body; nothing was recorded. Send another case with a new key")
    assert reused["fields"] == {"Idempotency-Key": "used for another case"}
    other = api.post("/cases", "pound_keeper", CASE, headers={"Idempotency-Key": "pk-2026-01-05-0002"})
    assert other.status_code == 201 and other.json["id"] != first.json["id"]
    assert len(api.get("/cases", "pound_keeper").json["cases"]) == 2
    bad = assert_error(api.post("/cases", "pound_keeper", CASE, headers={"Idempotency-Key": "short"}), 422)
    assert bad["message"] == "the Idempotency-Key header must be 8 to 80 letters, digits, '-' or '_'"
    assert bad["fields"] == {"Idempotency-Key": "not a key"}
    assert len(api.get("/cases", "pound_keeper").json["cases"]) == 2


def test_a_body_that_is_not_a_json_object_is_a_bad_request(api):
    for body in ("not json", "[1, 2]", '"text"', ""):
        response = api.call("POST", "/cases", "pound_keeper", data=body, content_type="application/json")
        assert_error(response, 400, "bad_request")
    assert api.get("/cases", "pound_keeper").json["cases"] == []


def test_json_in_any_content_type_is_accepted(api):
    import json
    response = api.call("POST", "/cases", "pound_keeper", data=json.dumps(CASE),
                        content_type="application/x-www-form-urlencoded")
    assert response.status_code == 201


# -- tasks and the timer -------------------------------------------------------------------------------

def test_the_release_timer_gives_the_secretary_the_notice_task(api, sessions, virtual_clock):
    case = start(api)
    assert [t["element_id"] for t in api.tasks("pound_keeper")] == ["ut_release"]
    assert api.tasks("secretary") == []
    virtual_clock.set(at("2026-01-09T00:00:01+05:30"))
    assert timers.fire_due(sessions) == 1
    [task] = api.tasks("secretary")
    assert task["case_id"] == case["id"] and task["case_number"] == "RMP/2026/0001"
    assert task["element_id"] == "ut_publish_notice" and task["lane"] == "secretary"
    assert task["name"] == "Publish notice and open conditional auction"
    assert task["due"] == "2026-01-10"
    assert task["form_key"] == "publish_notice"
    assert task["schema"]["required"] == ["objection_period_days", "full_price"]
    assert uuid.UUID(task["task_id"])
    assert api.tasks("sarpanch") == [] and api.tasks("pound_keeper") == []
    one = api.get(f"/cases/{case['id']}/tasks/{task['task_id']}", "secretary")
    assert one.status_code == 200 and one.json["element_id"] == "ut_publish_notice"
    # the list's shape: every key of the listed task, the same values but the task's own context
    assert set(task) <= set(one.json)
    assert {k: v for k, v in one.json.items() if k in task and k != "context"} == \
        {k: v for k, v in task.items() if k != "context"}
    assert_error(api.get(f"/cases/{case['id']}/tasks/{task['task_id']}", "sarpanch"), 403, "forbidden")
    history = api.case(case["id"])["history"]
    assert history[0]["kind"] == "start"
    [timer] = [e for e in history if e["kind"] == "timer"]
    assert timer["at"] == "2026-01-09T00:00:01+05:30" and timer["actor"] is None
    assert timer["detail"]["due"].startswith("2026-01-08T18:30:00")  # 00:00 IST of day E+4, in UTC


def test_tasks_are_most_urgent_first(api, sessions, virtual_clock):
    first = start(api)
    virtual_clock.set(at("2026-01-06T09:00:00+05:30"))
    second = api.post("/cases", "pound_keeper", {**CASE, "impounded_at": "2026-01-06T08:30:00+05:30"}).json
    assert second["number"] == "RMP/2026/0002"
    assert [(t["case_number"], t["due"]) for t in api.tasks("pound_keeper")] == \
        [("RMP/2026/0001", "2026-01-08"), ("RMP/2026/0002", "2026-01-09")]
    assert first["id"] != second["id"]
    assert [c["number"] for c in api.get("/cases", "pound_keeper").json["cases"]] == \
        ["RMP/2026/0002", "RMP/2026/0001"]


def test_notice_then_a_full_price_bid_closes_the_auction(api, sessions, virtual_clock):
    case = open_file(api, sessions, virtual_clock)
    published = publish(api, case["id"])
    assert published["file"]["notice"]["objection_period_days"] == 30
    assert published["file"]["notice"]["full_price"] == "12000.00"
    assert published["summary"]["deadlines"]["objection_last_day"] == "2026-02-08"
    assert published["summary"]["deadlines"]["auction_last_day"] == "2026-01-11"
    virtual_clock.set(at("2026-01-10T12:00:00+05:30"))
    low = api.complete("secretary", case["id"], "ut_record_bid", {"bidder": "Bidder A", "amount": "9000.00"})
    assert low.status_code == 200
    assert low.json["summary"]["sale"] is None
    virtual_clock.set(at("2026-01-10T15:00:00+05:30"))
    sold = api.complete("secretary", case["id"], "ut_record_bid", {"bidder": "Bidder B", "amount": "12500.00"})
    assert sold.status_code == 200, sold.json
    sale = sold.json["summary"]["sale"]
    assert sale["buyer"] == "Bidder B" and sale["amount"] == "12500.00" and sale["day"] == "2026-01-10"
    assert sale["transfer_lock_until"] == "2026-02-09"
    assert sold.json["summary"]["ledger"]["suspense"] == "12500.00"
    assert [b["amount"] for b in sold.json["file"]["auctions"][0]["bids"]] == ["9000.00", "12500.00"]
    assert sold.json["file"]["auctions"][0]["bids"][1]["at"] == "2026-01-10T15:00:00+05:30"
    assert "ut_record_bid" not in [t["element_id"] for t in api.tasks("secretary")]
    # a bid after the full-price sale: the auction's last day was the day it closed, not its third day
    after = api.post(f"/cases/{case['id']}/acts/ut_record_bid", "secretary",
                     {"data": {"bidder": "Bidder C", "amount": "13000.00"}})
    error = assert_error(after, 422, "deadline_passed")
    assert error["message"] == "the auction closed on 2026-01-10; no bid can be taken"
    assert error["last_day"] == "2026-01-10"
    # after the notice period the sarpanch orders that the auction stand
    virtual_clock.set(at("2026-02-09T11:00:00+05:30"))
    timers.fire_due(sessions)
    stand = api.complete("sarpanch", case["id"], "ut_order_stand", {})
    assert stand.status_code == 200, stand.json
    assert stand.json["summary"]["deadlines"]["appeal_last_day"] == "2026-03-11"


def test_a_late_bid_is_refused_naming_the_auctions_last_day(api, sessions, virtual_clock):
    case = open_file(api, sessions, virtual_clock)
    publish(api, case["id"])
    task = api.task("secretary", "ut_record_bid", case["id"])
    virtual_clock.set(at("2026-01-12T00:00:00+05:30"))  # the timer has not fired yet
    before = unchanged(api, case["id"])
    late = api.post(f"/cases/{case['id']}/tasks/{task['task_id']}", "secretary",
                    {"data": {"bidder": "Late", "amount": "13000"}})
    error = assert_error(late, 422, "deadline_passed")
    assert "2026-01-11" in error["message"] and error["last_day"] == "2026-01-11"
    assert unchanged(api, case["id"]) == before
    timers.fire_due(sessions)  # now the task is closed: by element id the rule still names the day
    error = assert_error(api.post(f"/cases/{case['id']}/acts/ut_record_bid", "secretary",
                                  {"data": {"bidder": "Late", "amount": "13000"}}), 422, "deadline_passed")
    assert error["last_day"] == "2026-01-11"


def test_an_act_by_element_id(api, sessions, virtual_clock):
    case = open_file(api, sessions, virtual_clock)
    before = unchanged(api, case["id"])
    version = api.case(case["id"])["lock_version"]
    publish = {"data": {"objection_period_days": 45, "full_price": 12000}}
    stale = api.post(f"/cases/{case['id']}/acts/ut_publish_notice", "secretary",
                     {**publish, "lock_version": version - 1})
    assert "this case changed since you opened the task" in assert_error(stale, 409, "conflict")["message"]
    wrong = assert_error(api.post(f"/cases/{case['id']}/acts/ut_publish_notice", "secretary",
                                  {**publish, "lock_version": "x"}), 422)
    assert wrong["fields"] == {"lock_version": "not a whole number"}
    extra = assert_error(api.post(f"/cases/{case['id']}/acts/ut_publish_notice", "secretary",
                                  {**publish, "full_price": 1}), 422)
    assert extra["fields"] == {"full_price": "unknown field"}
    assert unchanged(api, case["id"]) == before
    response = api.post(f"/cases/{quote('RMP/2026/0001', safe='')}/acts/ut_publish_notice", "secretary",
                        {**publish, "lock_version": version})
    assert response.status_code == 200, response.json
    assert response.json["file"]["notice"]["last_day"] == "2026-02-23"
    assert_error(api.post(f"/cases/{case['id']}/acts/ut_nothing", "secretary", {"data": {}}), 404, "not_found")
    assert_error(api.post(f"/cases/{case['id']}/acts/ut_order_stand", "secretary", {"data": {}}), 403)


# -- refused input changes nothing ----------------------------------------------------------------------

@pytest.mark.parametrize("amount, field_error", [
    ("12.345", "too many decimals"),
    ("-5", "negative"),
    (12.5, "not an exact amount"),
    ("abc", "not a number"),
    ("0", "zero"),
])
def test_a_bad_bid_amount_is_refused_and_changes_nothing(api, sessions, virtual_clock, amount, field_error):
    case = open_file(api, sessions, virtual_clock)
    publish(api, case["id"])
    before = unchanged(api, case["id"])
    response = api.complete("secretary", case["id"], "ut_record_bid", {"bidder": "Bidder A", "amount": amount})
    error = assert_error(response, 422, "refused")
    assert error["fields"] == {"amount": field_error}
    assert unchanged(api, case["id"]) == before
    history = api.case(case["id"])["history"]
    assert history[-1]["kind"] == "refusal" and history[-1]["actor"] == "sec"
    assert history[-1]["detail"]["code"] == "refused"


def test_an_integer_amount_is_exact_and_accepted(api, sessions, virtual_clock):
    case = open_file(api, sessions, virtual_clock)
    publish(api, case["id"], full_price=12000)
    response = api.complete("secretary", case["id"], "ut_record_bid", {"bidder": "Bidder A", "amount": 12000})
    assert response.status_code == 200
    assert response.json["summary"]["sale"]["amount"] == "12000.00"


def test_an_objection_period_under_30_days_is_refused(api, sessions, virtual_clock):
    case = open_file(api, sessions, virtual_clock)
    before = unchanged(api, case["id"])
    response = api.complete("secretary", case["id"], "ut_publish_notice",
                            {"objection_period_days": 29, "full_price": "12000.00"})
    error = assert_error(response, 422, "refused")
    assert "at least 30 days" in error["message"]
    assert error["fields"] == {"objection_period_days": "at least 30 days"}
    assert unchanged(api, case["id"]) == before
    assert api.case(case["id"])["file"]["notice"] is None


def test_missing_form_fields_are_named(api, sessions, virtual_clock):
    case = open_file(api, sessions, virtual_clock)
    before = unchanged(api, case["id"])
    error = assert_error(api.complete("secretary", case["id"], "ut_publish_notice",
                                      {"objection_period_days": 30}), 422, "refused")
    assert "full_price" in error["fields"]
    error = assert_error(api.complete("secretary", case["id"], "ut_publish_notice", None), 422)
    assert "objection_period_days" in error["fields"]
    error = assert_error(api.complete("secretary", case["id"], "ut_publish_notice", "30 days"), 422)
    assert error["fields"] == {"data": "not an object"}
    task = api.task("secretary", "ut_publish_notice")
    error = assert_error(api.post(f"/cases/{case['id']}/tasks/{task['task_id']}", "secretary",
                                  {"data": {}, "lock_version": "2"}), 422)
    assert error["fields"] == {"lock_version": "not a whole number"}
    assert unchanged(api, case["id"]) == before


def test_objections_within_the_period_and_a_late_one(api, sessions, virtual_clock):
    case = open_file(api, sessions, virtual_clock)
    assert_error(api.post(f"/cases/{case['id']}/objections", "secretary", {"objector": "Early"}), 422, "refused")
    publish(api, case["id"])
    virtual_clock.set(at("2026-02-08T23:59:00+05:30"))
    filed = api.post(f"/cases/{case['id']}/objections", "secretary", {"objector": "Ramesh"})
    assert filed.status_code == 201, filed.json
    [objection] = filed.json["file"]["objections"]
    assert objection["objector"] == "Ramesh" and objection["filed_on"] == "2026-02-08"
    assert objection["filed_at"] == "2026-02-08T23:59:00+05:30"
    notified = filed.json["history"][-1]
    assert notified["kind"] == "notification" and notified["name"] == "objection_filed"
    assert notified["notified_roles"] == ["sarpanch"] and notified["actor_role"] is None
    [decide] = [t for t in api.tasks("sarpanch") if t["element_id"] == "ut_decide_objection"]
    assert decide["context"]["objection"]["objector"] == "Ramesh"
    assert decide["due"] == "2026-02-08"
    virtual_clock.set(at("2026-02-09T00:00:00+05:30"))
    before = unchanged(api, case["id"])
    late = api.post(f"/cases/{case['id']}/objections", "secretary", {"objector": "Suresh"})
    error = assert_error(late, 422, "deadline_passed")
    assert "2026-02-08" in error["message"] and error["last_day"] == "2026-02-08"
    assert unchanged(api, case["id"]) == before
    assert_error(api.post(f"/cases/{case['id']}/objections", "sarpanch", {"objector": "Suresh"}), 403)
    assert_error(api.post(f"/cases/{case['id']}/objections", "secretary", {}), 422)


def test_a_field_that_does_not_apply_is_refused_naming_it_not_dropped(api, sessions, virtual_clock):
    """A misspelt or misplaced field used to be dropped without a word: an objection "dated" 1
    November was recorded today, an escape likewise, a receiving officer named while accepting the
    highest bid sold the lot. Each is refused now, naming the field, and nothing changes."""
    case = open_file(api, sessions, virtual_clock)
    publish(api, case["id"], full_price="12000.00")
    virtual_clock.set(at("2026-01-10T12:00:00+05:30"))
    assert api.post(f"/cases/{case['id']}/acts/ut_record_bid", "secretary",
                    {"data": {"bidder": "A", "amount": "9000"}}).status_code == 200
    before = unchanged(api, case["id"])
    for path, role, body, message in [
        ("objections", "secretary", {"objector": "Z", "day": "2026-01-09"},
         "unknown field day; an objection takes objector"),
        ("appeals", "secretary", {"appellant": "Z", "filed_on": "2026-01-09"},
         "unknown field filed_on; an appeal takes appellant"),
        ("animal-events", "pound_keeper", {"kind": "escape", "tag": "RJ-1001", "on": "2026-01-09"},
         "unknown field on; a death or an escape takes kind, tag and position"),
        ("animal-events", "pound_keeper", {"kind": "death", "position": 1, "born_on": "2026-01-09"},
         "unknown field born_on; a death or an escape takes kind, tag and position"),
        ("ledger/reversals", "secretary", {"entry": 1, "reason": "typo", "amount": "1.00"},
         "unknown field amount; a reversal takes entry and reason"),
    ]:
        error = assert_error(api.post(f"/cases/{case['id']}/{path}", role, body), 422)
        assert error["message"] == message and set(error["fields"].values()) == {"unknown field"}
    assert unchanged(api, case["id"]) == before
    virtual_clock.set(at("2026-01-12T10:00:00+05:30"))  # the auction closed unsold at 00:00
    timers.fire_due(sessions)
    before = unchanged(api, case["id"])
    meant = api.post(f"/cases/{case['id']}/acts/ut_decide_unsold", "sarpanch",
                     {"data": {"choice": "accept_highest_bid", "receiver": "Gram Panchayat Kishanpura"}})
    assert assert_error(meant, 422)["fields"] == {"receiver": "only when the cattle are sent for sale"}
    assert unchanged(api, case["id"]) == before
    accepted = api.post(f"/cases/{case['id']}/acts/ut_decide_unsold", "sarpanch", {"data": {"choice": "accept_highest_bid"}})
    assert accepted.status_code == 200 and accepted.json["file"]["sale"]["buyer"] == "A"


def test_a_security_given_with_another_decision_on_a_claim_is_refused(api, sessions, virtual_clock):
    case = open_file(api, sessions, virtual_clock)
    publish(api, case["id"])
    virtual_clock.set(at("2026-01-20T11:00:00+05:30"))
    assert api.post(f"/cases/{case['id']}/objections", "secretary", {"objector": "Ramesh"}).status_code == 201
    before = unchanged(api, case["id"], "sarpanch")
    url = f"/cases/{case['id']}/acts/ut_decide_objection"
    error = assert_error(api.post(url, "sarpanch", {"data": {"decision": "not_proved", "security": "100"}}), 422)
    assert error["fields"] == {"security": "only when Decision is “interim delivery”; leave it empty"}
    assert unchanged(api, case["id"], "sarpanch") == before
    assert api.post(url, "sarpanch", {"data": {"decision": "not_proved"}}).status_code == 200


def test_deciding_a_claim_while_two_are_open_must_name_the_objector(api, sessions, virtual_clock):
    case = open_file(api, sessions, virtual_clock)
    publish(api, case["id"])
    virtual_clock.set(at("2026-01-20T11:00:00+05:30"))
    for objector in ("मोहन लाल", "MOHAN"):
        assert api.post(f"/cases/{case['id']}/objections", "secretary", {"objector": objector}).status_code == 201
    before = unchanged(api, case["id"], "sarpanch")
    url = f"/cases/{case['id']}/acts/ut_decide_objection"
    error = assert_error(api.post(url, "sarpanch", {"data": {"decision": "proved"}}), 422, "refused")
    assert "2 tasks 'Decide ownership claim' are open" in error["message"]
    assert "मोहन लाल" in error["message"] and "MOHAN" in error["message"]
    assert unchanged(api, case["id"], "sarpanch") == before  # nobody's claim decided, no order issued
    decided = api.post(url, "sarpanch", {"data": {"decision": "not_proved"}, "objector": "MOHAN"})
    assert decided.status_code == 200, decided.json
    claims = {o["objector"]: o for o in decided.json["file"]["objections"]}
    assert claims["MOHAN"]["decision"] == "not_proved" and claims["मोहन लाल"]["decision"] is None
    [left] = [t for t in api.tasks("sarpanch") if t["element_id"] == "ut_decide_objection"]
    assert left["context"]["objection"]["objector"] == "मोहन लाल"
    # the refused act is in the case history under the task's name, in the reader's language
    client = api.client
    assert client.post("/login", data={"username": "sar", "password": PASSWORD}).status_code == 302
    assert client.post("/language", data={"lang": "hi", "next": "/tasks"}).status_code == 302
    page = client.get(f"/cases/{case['id']}").get_data(as_text=True)
    assert "स्वामित्व के दावे का निर्णय करें" in page and "ut decide objection" not in page


def test_appeal_after_the_order_that_the_auction_stand(api, sessions, virtual_clock):
    case = open_file(api, sessions, virtual_clock)
    publish(api, case["id"])
    assert api.complete("secretary", case["id"], "ut_record_bid",
                        {"bidder": "Bidder B", "amount": "12000"}).status_code == 200
    before = unchanged(api, case["id"])
    error = assert_error(api.post(f"/cases/{case['id']}/appeals", "secretary", {"appellant": "Mohan"}), 422)
    assert "no decision" in error["message"]
    assert unchanged(api, case["id"]) == before
    virtual_clock.set(at("2026-02-09T11:00:00+05:30"))
    timers.fire_due(sessions)
    assert api.complete("sarpanch", case["id"], "ut_order_stand", {"remarks": "no objection"}).status_code == 200
    virtual_clock.set(at("2026-02-20T11:00:00+05:30"))
    filed = api.post(f"/cases/{case['id']}/appeals", "secretary", {"appellant": "Mohan"})
    assert filed.status_code == 201, filed.json
    assert filed.json["file"]["appeals"][0]["appellant"] == "Mohan"
    assert filed.json["file"]["appeals"][0]["filed_on"] == "2026-02-20"
    decide = api.task("appellate_authority", "ut_decide_appeal", case["id"])
    assert decide["deadline_last_day"] == "2026-03-11"
    assert_error(api.post(f"/cases/{case['id']}/tasks/{decide['task_id']}", "far_appellate",
                          {"data": {"decision": "upheld"}}), 404, "not_found")
    done = api.post(f"/cases/{case['id']}/tasks/{decide['task_id']}", "appellate_authority",
                    {"data": {"decision": "upheld"}})
    assert done.status_code == 200, done.json
    assert done.json["file"]["appeals"][0]["decision"] == "upheld"


def test_animal_events(api, sessions, virtual_clock):
    case = start(api)
    virtual_clock.set(at("2026-01-06T08:00:00+05:30"))
    died = api.post(f"/cases/{case['id']}/animal-events", "pound_keeper", {"kind": "death", "tag": "RJ-1002"})
    assert died.status_code == 201, died.json
    assert died.json["file"]["animals"][1]["died_on"] == "2026-01-06"
    before = unchanged(api, case["id"])
    assert_error(api.post(f"/cases/{case['id']}/animal-events", "pound_keeper", {"kind": "death", "tag": "RJ-1002"}),
                 422)
    assert_error(api.post(f"/cases/{case['id']}/animal-events", "pound_keeper", {"kind": "theft", "position": 1}),
                 422)
    assert_error(api.post(f"/cases/{case['id']}/animal-events", "pound_keeper", {"kind": "escape"}), 422)
    assert_error(api.post(f"/cases/{case['id']}/animal-events", "pound_keeper",
                          {"kind": "escape", "position": "1"}), 422)
    assert_error(api.post(f"/cases/{case['id']}/animal-events", "secretary", {"kind": "escape", "position": 1}), 403)
    assert unchanged(api, case["id"]) == before
    escaped = api.post(f"/cases/{case['id']}/animal-events", "pound_keeper", {"kind": "escape", "position": 1})
    assert escaped.status_code == 201
    assert escaped.json["status"] == "completed" and escaped.json["outcome"] == "closed_no_animals"


# -- conflicts ---------------------------------------------------------------------------------------------

def test_completing_a_task_twice_is_a_conflict(api, sessions, virtual_clock):
    case = open_file(api, sessions, virtual_clock)
    task = api.task("secretary", "ut_publish_notice")
    form = {"data": {"objection_period_days": 30, "full_price": "12000.00"}}
    assert api.post(f"/cases/{case['id']}/tasks/{task['task_id']}", "secretary", form).status_code == 200
    before = unchanged(api, case["id"])
    again = api.post(f"/cases/{case['id']}/tasks/{task['task_id']}", "secretary", form)
    assert_error(again, 409, "conflict")
    assert unchanged(api, case["id"]) == before


@pytest.mark.both_databases
def test_a_stale_lock_version_is_a_conflict(api, sessions, virtual_clock):
    case = open_file(api, sessions, virtual_clock)
    task = api.task("secretary", "ut_publish_notice")
    seen = task["lock_version"]
    assert seen == api.case(case["id"])["lock_version"]
    virtual_clock.set(at("2026-01-09T12:00:00+05:30"))
    assert api.post(f"/cases/{case['id']}/animal-events", "pound_keeper",
                    {"kind": "death", "tag": "RJ-1001"}).status_code == 201
    before = unchanged(api, case["id"])
    stale = api.post(f"/cases/{case['id']}/tasks/{task['task_id']}", "secretary",
                     {"data": {"objection_period_days": 30, "full_price": "6000.00"}, "lock_version": seen})
    assert "changed" in assert_error(stale, 409, "conflict")["message"]
    assert unchanged(api, case["id"]) == before
    fresh = api.post(f"/cases/{case['id']}/tasks/{task['task_id']}", "secretary",
                     {"data": {"objection_period_days": 30, "full_price": "6000.00"},
                      "lock_version": before[2]})
    assert fresh.status_code == 200, fresh.json


# -- not found and scope -------------------------------------------------------------------------------

def test_unknown_cases_and_tasks_are_not_found(api, sessions, virtual_clock):
    case = open_file(api, sessions, virtual_clock)
    assert_error(api.get("/cases/999", "secretary"), 404, "not_found")
    assert_error(api.get(f"/cases/{quote('RMP/2026/9999', safe='')}", "secretary"), 404, "not_found")
    assert_error(api.post("/cases/999/tasks/x", "secretary", {"data": {}}), 404, "not_found")
    assert_error(api.post("/cases/999/objections", "secretary", {"objector": "A"}), 404, "not_found")
    for ref in ("99999999999999999999999", "9" * 5000, quote("²"), quote("RMP/2026/0001/..", safe="")):
        assert_error(api.get(f"/cases/{ref}", "secretary"), 404, "not_found")
    before = unchanged(api, case["id"])
    for task_id in (str(uuid.uuid4()), "garbage", "0", "%00"):
        assert_error(api.post(f"/cases/{case['id']}/tasks/{task_id}", "secretary", {"data": {}}), 404, "not_found")
        assert_error(api.get(f"/cases/{case['id']}/tasks/{task_id}", "secretary"), 404, "not_found")
    assert unchanged(api, case["id"]) == before


def test_another_panchayats_secretary_sees_nothing(api, sessions, virtual_clock):
    case = open_file(api, sessions, virtual_clock)
    task = api.task("secretary", "ut_publish_notice")
    before = unchanged(api, case["id"])
    assert_error(api.get(f"/cases/{case['id']}", "other_secretary"), 404, "not_found")
    assert_error(api.get(f"/cases/{quote(case['number'], safe='')}", "other_secretary"), 404)
    form = {"data": {"objection_period_days": 30, "full_price": "12000.00"}}
    assert_error(api.post(f"/cases/{case['id']}/tasks/{task['task_id']}", "other_secretary", form), 404)
    assert_error(api.post(f"/cases/{case['id']}/objections", "other_secretary", {"objector": "A"}), 404)
    assert api.get("/cases", "other_secretary").json["cases"] == []
    assert api.tasks("other_secretary") == []
    assert unchanged(api, case["id"]) == before


def test_a_sarpanch_may_not_complete_the_secretarys_task(api, sessions, virtual_clock):
    case = open_file(api, sessions, virtual_clock)
    task = api.task("secretary", "ut_publish_notice")
    before = unchanged(api, case["id"])
    response = api.post(f"/cases/{case['id']}/tasks/{task['task_id']}", "sarpanch",
                        {"data": {"objection_period_days": 30, "full_price": "12000.00"}})
    assert "secretary" in assert_error(response, 403, "forbidden")["message"]
    assert unchanged(api, case["id"]) == before
    assert api.case(case["id"], "sarpanch")["id"] == case["id"]  # within scope, only not permitted


def test_a_receiving_officer_sees_only_cases_dispatched_to_them(api, sessions, virtual_clock):
    case = open_file(api, sessions, virtual_clock)
    other = start(api)  # a second case, never dispatched
    assert_error(api.get(f"/cases/{case['id']}", "receiving_officer"), 404, "not_found")
    assert api.get("/cases", "receiving_officer").json["cases"] == []
    publish(api, case["id"])
    virtual_clock.set(at("2026-01-12T10:00:00+05:30"))  # the auction closed unsold at 00:00
    timers.fire_due(sessions)
    decide = api.task("sarpanch", "ut_decide_unsold", case["id"])
    before = unchanged(api, case["id"])
    unknown = api.post(f"/cases/{case['id']}/tasks/{decide['task_id']}", "sarpanch",
                       {"data": {"choice": "neighbouring_panchayat", "receiver": "Nobody"}})
    assert assert_error(unknown, 422)["fields"] == {"receiver": "unknown receiving officer"}
    assert unchanged(api, case["id"]) == before
    sent = api.post(f"/cases/{case['id']}/tasks/{decide['task_id']}", "sarpanch",
                    {"data": {"choice": "neighbouring_panchayat", "receiver": "Gram Panchayat Kishanpura"}})
    assert sent.status_code == 200, sent.json
    assert sent.json["file"]["dispatch"]["receiver"] == "Gram Panchayat Kishanpura"
    assert sent.json["file"]["dispatch"]["day"] == "2026-01-12"
    listed = api.get("/cases", "receiving_officer").json["cases"]
    assert [c["id"] for c in listed] == [case["id"]]
    assert_error(api.get(f"/cases/{other['id']}", "receiving_officer"), 404, "not_found")
    remit = api.task("receiving_officer", "ut_record_remittance", case["id"])
    assert remit["due"] == "2026-01-27"
    too_much = api.post(f"/cases/{case['id']}/tasks/{remit['task_id']}", "receiving_officer",
                        {"data": {"proceeds": "8000.00", "expenses": "9000.00"}})
    assert assert_error(too_much, 422)["fields"] == {"expenses": "more than the sale price"}
    done = api.post(f"/cases/{case['id']}/tasks/{remit['task_id']}", "receiving_officer",
                    {"data": {"proceeds": "8200.00", "expenses": "700.00"}})
    assert done.status_code == 200, done.json
    assert done.json["summary"]["ledger"]["suspense"] == "7500.00"


def test_appellate_authority_scope_is_its_samiti(api, sessions, virtual_clock):
    case = start(api)
    assert api.case(case["id"], "appellate_authority")["number"] == "RMP/2026/0001"
    assert_error(api.get(f"/cases/{case['id']}", "far_appellate"), 404, "not_found")
    assert api.get("/cases", "far_appellate").json["cases"] == []
    assert [c["id"] for c in api.get("/cases", "appellate_authority").json["cases"]] == [case["id"]]
    task = api.task("pound_keeper", "ut_release")
    assert_error(api.post(f"/cases/{case['id']}/tasks/{task['task_id']}", "appellate_authority",
                          {"data": {"owner": "Ramlal"}}), 403, "forbidden")
    assert_error(api.post(f"/cases/{case['id']}/tasks/{task['task_id']}", "far_appellate",
                          {"data": {"owner": "Ramlal"}}), 404, "not_found")


def test_release_by_owner_within_the_window(api, sessions, virtual_clock):
    case = start(api)
    virtual_clock.set(at("2026-01-07T10:00:00+05:30"))
    short = api.complete("pound_keeper", case["id"], "ut_release", {"owner": "Ramlal", "amount_received": "1000"})
    assert short.status_code == 422
    assert short.json["error"]["fields"] == {"amount_received": "₹1,360.00 is due; ₹1,000.00 was entered"}
    assert api.case(case["id"], "pound_keeper")["status"] == "running"
    released = api.complete("pound_keeper", case["id"], "ut_release", {"owner": "Ramlal", "amount_received": "१५००"})
    assert released.status_code == 200, released.json
    assert released.json["status"] == "completed"
    # F + C = 1,360.00 due; 1,500 handed over (typed in Devanagari digits), 140 given back
    assert released.json["file"]["release"] == {"owner": "Ramlal", "day": "2026-01-07", "received": "1500.00",
                                                "change": "140.00"}
    assert released.json["summary"]["ledger"]["pound_account"] == "1360.00"
    assert released.json["closed_at"] == "2026-01-07T10:00:00+05:30"


# -- the API's own HTTP errors ----------------------------------------------------------------------------

def test_unknown_api_urls_and_methods_answer_in_json(api, client):
    assert_error(api.get("/nothing", "secretary"), 404, "not_found")
    assert_error(client.get("/api/v2/cases"), 404, "not_found")
    response = api.call("DELETE", "/cases", "secretary")
    assert_error(response, 405, "method_not_allowed")
    assert set(response.headers["Allow"].replace(" ", "").split(",")) >= {"GET", "POST"}
    assert_error(api.call("PUT", "/me", None), 405)
    page = client.get("/no-such-page")
    assert page.status_code == 404 and not page.is_json


def test_a_get_of_a_cases_post_only_address_is_405_not_a_missing_case(api):
    case = start(api)
    number = quote(case["number"], safe="")
    for suffix in ("objections", "appeals", "animal-events", "ledger/reversals", "acts/ut_record_bid",
                   "tasks/abc/claim"):
        for ref in (case["id"], number):
            response = api.get(f"/cases/{ref}/{suffix}", "secretary")
            error = assert_error(response, 405, "method_not_allowed")
            assert response.headers["Allow"] == "POST" and "use POST" in error["message"]
    assert_error(api.get("/cases/RMP%2F2026%2F0999/objections", "secretary"), 404)  # no such case: still 404


def test_a_body_over_the_size_limit_is_refused_in_json(api):
    response = api.call("POST", "/cases", "pound_keeper", data='{"place_seized": "' + "x" * (3 * 1024 * 1024) + '"}',
                        content_type="application/json")
    assert_error(response, 413, "too_large")


def test_the_api_needs_no_csrf_token(database_url, sessions, officers, virtual_clock):
    from webapp import create_app
    app = create_app({"TESTING": True, "DATABASE_URL": database_url, "SECRET_KEY": "test",
                      "WTF_CSRF_ENABLED": True})
    try:
        with sessions() as session:
            token = users.create_token(session, "pk")
            session.commit()
        response = app.test_client().post("/api/v1/cases", json=CASE, headers={"Authorization": f"Bearer {token}"})
        assert response.status_code == 201, response.get_data(as_text=True)
    finally:
        app.extensions["rule130.engine"].dispose()
