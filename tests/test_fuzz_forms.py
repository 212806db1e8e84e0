"""Hypothesis-generated form input (unicode, huge strings, control characters, numbers at the
edges, Devanagari and Arabic-Indic digits, unknown fields) posted to the officers' task form and
the new-case form: never a 500, and a refused post saves nothing (case state, file, ledger, history
apart from the refusal, and the number of cases are compared before and after)."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select

from webapp.services.money import amounts, ledger
from webapp.services.tasks import tasks
from webapp.store.models import Case

from .conftest import PASSWORD
from .driver import TWO_COWS, Driver, ist_midnight

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=300)  # any code point but surrogates
EDGE_NUMBERS = st.one_of(
    st.integers(min_value=-(2**80), max_value=2**80).map(str),
    st.sampled_from(["0", "-0", "29", "30", "365", "366", "2147483648", "9223372036854775808", "1e309", "NaN",
                     "Infinity", "-Infinity", "30.0", " 30 ", "+30", "0x1E", "३०", "٣٠", "３０", "30\x00",
                     "12000.005", "12000,00", "-1.00", "0.00", "99999999999999.99", "1e3", "١٢٠٠٠"]),
    st.decimals(allow_nan=True, allow_infinity=True, places=None).map(str),
)
VALUES = st.one_of(TEXT, EDGE_NUMBERS, st.just("x" * 200_000), st.just("\r\n\t\x0b\x0c\x1b[2J"), st.just(""))
FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                      HealthCheck.too_slow])


def saved_state(sessions, case_id):
    with sessions() as session:
        case = session.get(Case, case_id)
        return (case.state_json, case.file_json, case.lock_version, case.status,
                [(e.from_account, e.to_account, e.amount) for e in ledger.entries(session, case_id)],
                session.scalar(select(func.count()).select_from(Case)))


@pytest.fixture
def publish_form(client, sessions, officers, virtual_clock):
    """A case whose secretary has "Publish notice and open conditional auction" open, signed in."""
    drive = Driver(sessions, officers, virtual_clock)
    drive.start(TWO_COWS)
    drive.fire_past(ist_midnight("2026-01-09"))
    with sessions() as session:
        [view] = [v for v in tasks.case_tasks(session, session.get(Case, drive.case_id))
                  if v.element_id == "ut_publish_notice"]
    assert client.post("/login", data={"username": "sec", "password": PASSWORD}).status_code == 302
    return drive.case_id, f"/cases/{drive.case_id}/tasks/{view.task_id}"


@FUZZ
@given(period=st.one_of(st.integers(min_value=30, max_value=365).map(str), VALUES),
       price=st.one_of(st.just("12000.00"), VALUES), extra=st.dictionaries(TEXT.filter(bool), VALUES, max_size=3),
       lock=st.one_of(st.none(), EDGE_NUMBERS))
def test_the_publish_notice_form_never_fails_and_a_refusal_saves_nothing(publish_form, client, sessions,
                                                                        period, price, extra, lock):
    case_id, url = publish_form
    form = {**extra, "objection_period_days": period, "full_price": price}
    if lock is not None:
        form["lock_version"] = lock
    before = saved_state(sessions, case_id)
    response = client.post(url, data=form)
    assert response.status_code in (302, 403, 404, 409, 413, 422), response.status_code
    body = response.get_data(as_text=True)
    assert "Traceback" not in body
    if response.status_code == 302:  # accepted: only a period of 30..365 and an exact price get here
        assert 30 <= int(period) <= 365 and re.fullmatch(r"[0-9]+(\.[0-9]{1,2})?", amounts.plain(price.strip()))
    else:
        assert saved_state(sessions, case_id) == before


@pytest.fixture
def keeper(client, officers):
    assert client.post("/login", data={"username": "pk", "password": PASSWORD}).status_code == 302
    return client


@FUZZ
@given(seized=st.one_of(st.just("Bhimpura"), VALUES), impounded=st.one_of(st.just("Kanji House"), VALUES),
       village=st.one_of(st.just("Bhimpura"), VALUES), when=st.one_of(st.just("2026-01-05T09:00"), VALUES),
       species=st.one_of(st.sampled_from(["cow", "goat", "camel"]), VALUES),
       description=st.one_of(st.just("brown cow"), VALUES), tag=VALUES)
def test_the_new_case_form_never_fails_and_a_refusal_creates_no_case(keeper, sessions, virtual_clock, seized,
                                                                    impounded, village, when, species, description,
                                                                    tag):
    with sessions() as session:
        count = session.scalar(select(func.count()).select_from(Case))
    response = keeper.post("/cases/new", data={"impounded_at": when, "place_seized": seized,
                                               "place_impounded": impounded, "nearest_village": village,
                                               "species-1": species, "description-1": description, "tag-1": tag})
    assert response.status_code in (302, 413, 422), response.status_code
    with sessions() as session:
        after = session.scalar(select(func.count()).select_from(Case))
    assert after == count + (1 if response.status_code == 302 else 0)
