"""POST /api/v1/paper-cases: a running paper case brought in through the API (issue 31, item 2)."""

from __future__ import annotations

from datetime import datetime

import pytest
from sqlalchemy import func, select

from tests.deadline_races import make_tokens
from webapp.store.models import Case, PaperReceipt

NOW = "2026-03-10T12:00:00+05:30"
BODY = {
    "impounded_at": "2026-02-01T10:00:00+05:30", "place_seized": "Bhimpura", "place_impounded": "Kanji House",
    "nearest_village": "Bhimpura", "animals": [{"species": "cow", "description": "brown cow", "tag": "RJ-1"}],
    "facts": [
        {"do": "publish_notice", "at": "2026-02-05T11:00:00+05:30", "objection_period_days": 30,
         "full_price": "5000.00", "paper_number": "N-17"},
        {"do": "bid", "at": "2026-02-06T12:00:00+05:30", "bidder": "Mohan", "amount": "5200.00",
         "receipt_number": "R-4512", "amount_received": "5200.00"},
        {"do": "file_objection", "at": "2026-02-20T10:00:00+05:30", "objector": "Ramesh"},
    ],
}


@pytest.fixture
def api(client, sessions, officers, virtual_clock):
    virtual_clock.set(datetime.fromisoformat(NOW))
    tokens = make_tokens(sessions, officers)

    def call(role, body, query=""):
        return client.post(f"/api/v1/paper-cases{query}", json=body, headers={"Authorization": f"Bearer {tokens[role]}"})
    return call


def count(sessions, model):
    with sessions() as session:
        return session.scalar(select(func.count()).select_from(model))


def test_a_paper_case_brought_in_through_the_api_answers_the_case_and_what_followed(api, sessions):
    response = api("secretary", BODY)
    assert response.status_code == 201, response.get_json()
    body = response.get_json()
    assert response.headers["Location"] == f"/api/v1/cases/{body['case']['id']}"
    brought = body["brought"]
    assert brought["case_number"] == "RMP/2026/0001" and brought["status"] == "running"
    assert brought["receipts"] == [{"number": "R-4512", "amount": "5200.00", "kind": "auction_money",
                                    "received_at": "2026-02-06T12:00:00+05:30"}]
    assert {(d["kind"], d["number"]) for d in brought["documents"]} >= {("notice", "N-17"), ("sale_receipt", "R-4512")}
    # the objection period ran to 7 March: its end fell due at 00:00 of the 8th, before the bring-in
    assert [(r["element_id"], r["due"]) for r in brought["ran_out"]] == [("n_ice_period_ends", "2026-03-08T00:00:00+05:30")]
    assert [(t["title"], t["lane"], t["overdue"]) for t in brought["open_tasks"]] == [
        ("Decide ownership claim", "sarpanch", True)]
    assert body["case"]["number"] == "RMP/2026/0001"


def test_a_dry_run_answers_what_would_be_recorded_and_records_nothing(api, sessions):
    response = api("secretary", BODY, "?dry_run=true")
    assert response.status_code == 200
    assert response.get_json()["dry_run"] is True
    assert response.get_json()["brought"]["receipts"][0]["number"] == "R-4512"
    assert count(sessions, Case) == 0 and count(sessions, PaperReceipt) == 0


def test_a_refused_fact_answers_422_naming_the_fact_and_field_and_records_nothing(api, sessions):
    body = {**BODY, "facts": [BODY["facts"][0], {**BODY["facts"][1], "amount_received": "5000.00"}]}
    response = api("secretary", body)
    assert response.status_code == 422
    error = response.get_json()["error"]
    assert list(error["fields"]) == ["facts[1].amount_received"] and "5200.00" in error["message"]
    future = {**BODY, "facts": [{**BODY["facts"][0], "at": "2026-03-11T00:00:00+05:30"}]}
    assert list(api("secretary", future).get_json()["error"]["fields"]) == ["facts[0].at"]
    assert count(sessions, Case) == 0


@pytest.mark.parametrize("role", ["pound_keeper", "appellate_authority", "receiving_officer", "administrator"])
def test_only_the_secretary_or_sarpanch_may_bring_a_paper_case_in(api, role, sessions):
    assert api(role, BODY).status_code == 403
    assert count(sessions, Case) == 0


def test_an_unknown_field_is_refused(api):
    response = api("sarpanch", {**BODY, "fine": "1.00"})
    assert response.status_code == 422 and "fine" in response.get_json()["error"]["fields"]
