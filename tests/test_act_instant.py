"""One instant per act (RULE130.md, "One instant per act"; issue: the bid answered "done" and
then lost at the deadline).

An act's legal instant is the moment its request arrived: every deadline check, every row it
writes and every timer the engine fires while applying it use that instant. Raced against the
timer worker at the last millisecond of each window, the answer always agrees with the case.
"""

from __future__ import annotations

import os
import random
from datetime import timedelta

import pytest

from tests import deadline_races
from webapp.services.jobs import timers
from webapp.store.models import Case, CaseEvent, LedgerEntry
from webapp.values import casefile, clock

RACES = int(os.environ.get("RULE130_RACES", "4"))  # per window kind; tests/bench/races.py runs hundreds


@pytest.fixture
def tokens(sessions, officers):
    return deadline_races.make_tokens(sessions, officers)


def test_a_full_price_bid_in_the_last_millisecond_is_sold_even_while_the_request_runs_past_midnight(
        app, sessions, officers, tokens):
    """The reported defect: the deadline check read the clock once, then an engine run later in the
    same request (past midnight by then) fired the auction's close timer: 200, yet unsold. With the
    arrival instant fixed, the request's engine never fires a timer due after it."""
    stager = deadline_races.Stager(sessions, officers)
    case_id, end = stager.stage("auction")
    assert end.isoformat() == "2026-01-11T18:30:00+00:00"  # 00:00 IST of 01-12: the third day (01-11) ends
    client = app.test_client()
    # the request arrives 0.2 ms before midnight; real time runs on while the server applies it
    with clock.installed(deadline_races.ArrivingClock(end - timedelta(microseconds=200))):
        response = client.post(f"/api/v1/cases/{case_id}/acts/ut_record_bid",
                               json={"data": {"bidder": "Bidder Last", "amount": "12000.00"}},
                               headers={"Authorization": f"Bearer {tokens['secretary']}"})
    assert response.status_code == 200, response.get_json()
    with sessions() as session:
        case = session.get(Case, case_id)
        cf = casefile.load(case.file_json)
        entries = session.query(LedgerEntry).filter_by(case_id=case_id).all()
        bid_row = session.query(CaseEvent).filter_by(case_id=case_id, kind="task", element_id="ut_record_bid").one()
        closed = session.query(CaseEvent).filter_by(case_id=case_id, kind="timer",
                                                    element_id="bt_auction_closes").all()
        issued = [e for e in session.query(CaseEvent).filter_by(case_id=case_id, kind="document")
                  if e.at >= end - timedelta(days=1)]
    arrived = end - timedelta(microseconds=200)
    assert cf.sale is not None and (cf.sale.buyer, str(cf.sale.amount)) == ("Bidder Last", "12000.00")
    assert str(cf.sale.day) == "2026-01-11"  # the day the bid arrived, not the next one
    assert cf.auctions[0].status == "sold"
    assert closed == []  # the close timer was cancelled by the sale, never fired
    assert [(e.from_account, e.to_account, str(e.amount), e.kind) for e in entries] == [
        ("buyer", "suspense", "12000.00", "auction_money")]
    # the act, its ledger entry and its receipt carry the one instant the request arrived at
    assert bid_row.at == arrived
    assert [e.at for e in entries] == [arrived]
    assert [e.at for e in issued] == [arrived]
    assert [e.name for e in issued] == ["Receipt for auction money (conditional sale)"]


def test_an_act_arriving_at_the_instant_the_window_ends_is_refused_naming_the_last_day(
        app, sessions, officers, tokens):
    case_id, end = deadline_races.Stager(sessions, officers).stage("auction")
    with clock.installed(clock.VirtualClock(end)):
        response = app.test_client().post(f"/api/v1/cases/{case_id}/acts/ut_record_bid",
                                          json={"data": {"bidder": "Bidder Late", "amount": "12000.00"}},
                                          headers={"Authorization": f"Bearer {tokens['secretary']}"})
    assert response.status_code == 422
    assert response.get_json()["error"]["last_day"] == "2026-01-11"


def test_the_worker_stays_behind_the_clock_by_its_settle_time(sessions, officers):
    case_id, end = deadline_races.Stager(sessions, officers).stage("release")
    with clock.installed(clock.VirtualClock(end + timedelta(seconds=2))):
        assert timers.fire_due(sessions, settle_seconds=3.0) == 0  # an act may still be in flight
    with clock.installed(clock.VirtualClock(end + timedelta(seconds=3, microseconds=1))):
        assert timers.fire_due(sessions, settle_seconds=3.0) == 1
    with sessions() as session:
        row = session.query(CaseEvent).filter_by(case_id=case_id, kind="timer", element_id="bt_release_window").one()
    assert row.at == end + timedelta(microseconds=1)  # stamped at the worker's instant, 3 s behind the clock


@pytest.mark.parametrize("kind", deadline_races.WINDOWS)
def test_acts_in_the_last_millisecond_raced_against_the_timer_agree_with_the_case(app, sessions, officers,
                                                                                  tokens, kind):
    """The raw race (the worker fires the moment the timer is due): whoever wins, the answer agrees
    with what the case holds."""
    rng = random.Random(f"{kind}-raw")
    results = [deadline_races.race(app, sessions, officers, tokens, kind, settle=0.0, rng=rng) for _ in range(RACES)]
    problems = [(r.status, r.problems) for r in results if r.problems]
    assert problems == []


@pytest.mark.parametrize("kind", deadline_races.WINDOWS)
def test_with_the_workers_settle_time_the_act_in_the_last_millisecond_always_counts(app, sessions, officers,
                                                                                   tokens, kind):
    rng = random.Random(f"{kind}-settled")
    results = [deadline_races.race(app, sessions, officers, tokens, kind, settle=timers.SETTLE_SECONDS, rng=rng)
               for _ in range(max(1, RACES // 2))]
    assert [(r.status, r.act_in_case, r.problems) for r in results] == \
        [(200 if kind in ("release", "auction", "return") else 201, True, [])] * len(results)
