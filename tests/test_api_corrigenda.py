"""The corrigendum in the API (webapp.web.api.corrigenda): the facts an act recorded, a dry run that
records nothing, the corrigendum issued, a refusal naming the field, the refund recorded as paid."""

from __future__ import annotations

import pytest

from .test_api import Api, assert_error, at, make_tokens, open_file, publish


@pytest.fixture
def api(client, sessions, officers, virtual_clock):
    return Api(client, make_tokens(sessions, officers))


def test_a_mistyped_full_price_bid_is_amended_through_the_api_with_a_dry_run_first(api, sessions, virtual_clock):
    case = open_file(api, sessions, virtual_clock)
    publish(api, case["id"], full_price="15000.00")
    virtual_clock.set(at("2026-01-09T15:00:00+05:30"))
    bid = api.complete("secretary", case["id"], "ut_record_bid", {"bidder": "Bidder B", "amount": "16000.00"})
    assert bid.status_code == 200, bid.json
    acts = api.get(f"/cases/{case['id']}/corrections", "secretary").json["acts"]
    act_id = acts[0]["id"]
    facts = api.get(f"/cases/{case['id']}/corrigenda/{act_id}", "secretary").json
    assert facts == {"act": str(act_id), "facts": {"bidder": "Bidder B", "amount": "16000.00"},
                     "last_day": "2026-04-09"}
    body = {"act": act_id, "values": {"amount": "15500.00"}, "reason": "typed 16,000 for 15,500"}
    dry = api.post(f"/cases/{case['id']}/corrigenda?dry_run=true", "secretary", body)
    assert dry.status_code == 200, dry.json
    assert dry.json["corrigendum"]["owed"] == [{"party": "buyer", "account": "suspense", "amount": "500.00",
                                                "direction": "refund"}]
    assert api.case(case["id"])["file"]["sale"]["amount"] == "16000.00"  # nothing recorded
    assert_error(api.post(f"/cases/{case['id']}/corrigenda", "pound_keeper", body), 403, "forbidden")
    wrong = api.post(f"/cases/{case['id']}/corrigenda", "secretary", {**body, "values": {"price": "1"}})
    assert assert_error(wrong, 422)["fields"] == {"price": "unknown field"}
    done = api.post(f"/cases/{case['id']}/corrigenda", "secretary", body)
    assert done.status_code == 201, done.json
    assert done.json["corrigendum"]["number"] == "RMP/2026/0001/C1"
    assert done.json["corrigendum"]["documents_reissued"] == [{"old": "RMP/2026/0001/R1", "new": "RMP/2026/0001/R2"}]
    assert done.json["case"]["file"]["sale"]["amount"] == "15500.00"
    paid = api.post(f"/cases/{case['id']}/owed/1/settle", "secretary")
    assert paid.status_code == 201, paid.json
    assert paid.json["summary"]["paid"]["buyer"] == "500.00"
    assert paid.json["summary"]["ledger"]["suspense"] == "15500.00"
    again = api.post(f"/cases/{case['id']}/owed/1/settle", "secretary")
    assert "settled" in assert_error(again, 422)["message"]
