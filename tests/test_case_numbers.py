"""Cases started at the same moment (RULE130.md: one case per impoundment, numbered per Panchayat):
each gets its own case number, and the same new-case form sent twice at once records one case."""

from __future__ import annotations

import contextvars
import threading

from sqlalchemy import select

from webapp.errors import AlreadySubmitted
from webapp.services import cases, uow
from webapp.store.models import Case

GOAT = [{"species": "goat", "description": "black goat"}]
IMPOUNDED = "2026-01-05T09:00:00+05:30"


def start_at_once(sessions, keeper, keys: list[str | None]) -> list[object]:
    """Start one case per key in threads released together; each result is the case or the error."""
    results: list[object] = [None] * len(keys)
    gate = threading.Barrier(len(keys))

    def start(n: int) -> None:
        gate.wait()
        try:
            results[n] = uow.perform(sessions, "start_case", cases.start_case, keeper, impounded_at=IMPOUNDED,
                                     place_seized="Bhimpura", place_impounded="Kanji House",
                                     nearest_village="Bhimpura", animals=GOAT, submission_key=keys[n])
        except Exception as error:  # noqa: BLE001 - the test looks at what each thread got
            results[n] = error

    threads = [threading.Thread(target=contextvars.copy_context().run, args=(start, n)) for n in range(len(keys))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return results


def test_cases_started_at_the_same_moment_get_numbers_one_to_four(sessions, officers, virtual_clock):
    results = start_at_once(sessions, officers["pound_keeper"], [None, None, "form-key-0003", "form-key-0004"])
    assert all(isinstance(r, Case) for r in results), results
    with sessions() as session:
        numbers = sorted(session.scalars(select(Case.case_number)))
    assert numbers == ["RMP/2026/0001", "RMP/2026/0002", "RMP/2026/0003", "RMP/2026/0004"]


def test_one_form_sent_three_times_at_once_records_one_case(sessions, officers, virtual_clock):
    results = start_at_once(sessions, officers["pound_keeper"], ["same-form-key"] * 3)
    started = [r for r in results if isinstance(r, Case)]
    repeats = [r for r in results if isinstance(r, AlreadySubmitted)]
    assert (len(started), len(repeats)) == (1, 2), results
    with sessions() as session:
        assert list(session.scalars(select(Case.case_number))) == ["RMP/2026/0001"]
