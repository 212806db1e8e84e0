"""Refusals print amounts as the receipt prints them (₹12,500.00, Indian digit grouping), never as
raw decimals (12500.00): the remittance whose expenses exceed the sale price (Rule 130(b) proviso)
and feeding charges above the pound's feeding expenses C (Rule 130(d)), through the services as the
pages and the API call them, in English and, on a Hindi page, in Hindi."""

from __future__ import annotations

import pytest

from webapp.errors import Refused
from webapp.i18n import localize
from webapp.services.running import uow
from webapp.services.tasks import tasks
from webapp.simulation import scenario_file
from webapp.store.models import Case, User

from .test_documents import run_scenario


def refusal(sessions, user: User, case_id: int, element: str, data: dict) -> Refused:
    with pytest.raises(Refused) as refused:
        uow.perform(sessions, "act", tasks.act, user, case_id, element, data, case_id=case_id, user=user)
    return refused.value


def test_expenses_above_the_sale_price_are_refused_in_rupees(sessions, officers, virtual_clock):
    # s3: three goats sent to Gram Panchayat Kishanpura on 2026-06-18; it sold them for ₹12,000.00
    case_id = run_scenario(sessions, officers, virtual_clock, "s3", until_step=2)
    virtual_clock.set(scenario_file._instant("2026-06-25T10:00:00+05:30", "at"))
    refused = refusal(sessions, officers["receiving_officer"], case_id, "ut_record_remittance",
                      {"proceeds": "12000.00", "expenses": "12500.00"})
    assert refused.message == "the expenses of sale (₹12,500.00) cannot exceed the sale price (₹12,000.00)"
    assert localize(refused.message, language="hi") == "बिक्री का व्यय (₹12,500.00) बिक्री मूल्य (₹12,000.00) से अधिक नहीं हो सकता"
    with sessions() as session:  # nothing recorded: the remittance is still to be made
        assert session.get(Case, case_id).status == "running"
        assert tasks.find_ready(session, session.get(Case, case_id), "ut_record_remittance") is not None


def test_feeding_charges_above_c_are_refused_naming_c_in_rupees(sessions, officers, virtual_clock):
    # s2: one buffalo at ₹80.00 a day in the pound from 2026-03-02 to the sale on 2026-03-08: C = ₹560.00
    case_id = run_scenario(sessions, officers, virtual_clock, "s2", until_step=6)
    virtual_clock.set(scenario_file._instant("2026-05-04T11:00:00+05:30", "at"))
    refused = refusal(sessions, officers["sarpanch"], case_id, "ut_pay_feeding_charges", {"amount": "1200.00"})
    assert refused.message == "the feeding charges cannot exceed the pound's feeding expenses C = ₹560.00 (Rule 130(d))"
    assert refused.field_errors == {"amount": "at most ₹560.00"}
    assert localize(refused.field_errors["amount"], language="hi") == "अधिकतम ₹560.00"
