"""How long an act's snapshot lives: as long as it can serve, and not a day longer (issue 32, item 2).

Every officer act keeps the case row as it found it (``case_act.before``,
:mod:`webapp.services.running.acts`): engine state, case file, status, the list columns — some
5 KiB compressed per act, a quarter of what a closed case stores. Two things read it, each within
a window counted in local calendar days of the case's zone (its case file's ``timezone``):

- a correction (:mod:`webapp.services.cases.corrections`), of the case's latest act only, until the
  act's day + :data:`~webapp.services.cases.corrections.CORRECTION_DAYS` (a decision on the merits:
  its own day);
- a corrigendum (:mod:`webapp.services.cases.corrigenda`), which replays the act on its snapshot,
  until the act's day + :data:`~webapp.services.cases.corrigenda.AMEND_DAYS` (90).

So from the first instant of the local day after :func:`serves_until` (:func:`let_go_at`), both
refuse the act by their window whatever the snapshot holds, and the housekeeping of the timer worker
(:func:`let_go_due`, at most every :data:`SWEEP_SECONDS`) sets ``before`` to NULL. What else an act
row holds stays as recorded (the append-only guard, :mod:`webapp.store.append_only`, fixes it): its
name, instant, actor, version, ``marks_json`` and ``last_event_id``, which the history, the
registers' papers (:func:`webapp.services.running.acts.papers_of`), the audit trail and the refusals
of a late correction or corrigendum read. A correction or corrigendum asked for an act whose
snapshot is gone is refused by its window first; should a clock ever disagree, it is refused by
the snapshot's absence, naming it (:func:`webapp.services.cases.corrections.kept`).

A closed case whose last snapshot is let go can no longer change its engine state (no correction
is possible): its ``state_json`` is packed (:func:`webapp.engine.execution.runtime.pack_state`,
about a fifth of the JSON), read back transparently by every load. Each batch is one transaction and
one audit entry (``housekeeping.snapshots_let_go``, the act ids and the cases packed); a pass is
idempotent (only rows still holding a snapshot, or a plain state, are touched), and a training
Panchayat's acts are judged on its own clock, as its timers are (:mod:`webapp.services.jobs.timers`).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.orm import Session, defer, sessionmaker

from webapp.engine.execution import runtime
from webapp.services.cases import corrections, corrigenda
from webapp.services.jobs import scopes
from webapp.store import audit
from webapp.store.models import Case, CaseAct
from webapp.values import clock, legal_time

log = logging.getLogger("rule130.snapshots")

BATCH = 500
"""Acts looked at per transaction."""
BATCHES = 20
"""Batches per pass at most: a backlog (a database from before 0027_snapshot_lifetime) is worked
off a pass at a time, between the worker's timer firings, never holding them up."""
SWEEP_SECONDS = 600.0
"""How often the timer worker runs the housekeeping (a snapshot is kept at most this much longer);
after a pass that left a backlog, again after :data:`BACKLOG_SECONDS`."""
BACKLOG_SECONDS = 1.0
AUDIT_KIND = "housekeeping.snapshots_let_go"


def serves_until(act: CaseAct, tz: str) -> date:
    """The last local day (in ``tz``, the case's zone) on which ``act``'s snapshot can serve: the
    later of its last day for a correction (:func:`webapp.services.cases.corrections.last_day`) and
    for a corrigendum (act's day + :data:`webapp.services.cases.corrigenda.AMEND_DAYS`, as
    :func:`webapp.services.cases.corrigenda.last_day`)."""
    amend = legal_time.local_day(act.at, tz) + timedelta(days=corrigenda.AMEND_DAYS)
    return max(corrections.last_day(act, tz), amend)


def let_go_at(act: CaseAct, tz: str) -> datetime:
    """The instant (UTC) from which ``act``'s snapshot is let go: the start of the local day after
    :func:`serves_until`, e.g. an act of 10 January 2026 in Asia/Kolkata: 11 April 2026 00:00 IST
    (10 April 18:30 UTC)."""
    return legal_time.day_start(serves_until(act, tz) + timedelta(days=1), tz)


@dataclass
class Swept:
    """What one housekeeping pass did: the acts whose snapshot it let go, the closed cases it packed."""

    acts: list[int] = field(default_factory=list)
    packed: list[int] = field(default_factory=list)
    more: bool = False  # stopped at BATCHES batches: more may be due

    @property
    def wait_seconds(self) -> float:
        """How long the worker waits before the next pass: :data:`BACKLOG_SECONDS` after a pass that
        stopped with more due, else :data:`SWEEP_SECONDS`."""
        return BACKLOG_SECONDS if self.more else SWEEP_SECONDS


def _zones(session: Session, case_ids: set[int]) -> dict[int, tuple[str, str, int]]:
    """Each case's (zone, status, lock version), the zone from its case file (what the windows read)."""
    rows = session.execute(select(Case.id, Case.file_json, Case.status, Case.lock_version)
                           .where(Case.id.in_(sorted(case_ids))))
    return {case_id: (json.loads(text)["timezone"], status, version) for case_id, text, status, version in rows}


def _pack_closed(session: Session, cases: dict[int, tuple[str, str, int]]) -> list[int]:
    """Pack the engine state of the closed cases among ``cases`` that keep no snapshot any more
    (unchanged since read: the lock version is compared, not moved, as the state is the same)."""
    closed = [case_id for case_id, (_zone, status, _version) in cases.items() if status == "completed"]
    if not closed:
        return []
    keeping = set(session.scalars(select(CaseAct.case_id).where(CaseAct.case_id.in_(closed),
                                                                CaseAct.before.is_not(None)).distinct()))
    packed = []
    for case_id in sorted(set(closed) - keeping):
        state = session.scalar(select(Case.state_json).where(Case.id == case_id))
        if state is None or state.startswith(runtime.PACKED) or state in ("", "{}"):
            continue
        done = session.execute(update(Case).where(Case.id == case_id, Case.lock_version == cases[case_id][2])
                               .values(state_json=runtime.pack_state(state)).execution_options(
                                   synchronize_session=False))
        if done.rowcount:  # type: ignore[attr-defined]
            packed.append(case_id)
    return packed


def sweep(session: Session, panchayat_id: int | None = scopes.LIVE, limit: int = BATCH) -> Swept:
    """One batch, in the caller's transaction, at the installed clock: let go the snapshots of up to
    ``limit`` acts of the scope (:func:`webapp.services.jobs.scopes.in_scope`) whose
    :func:`let_go_at` has come, oldest first, pack the closed cases that keep none any more, and
    audit it (one entry, when anything was done). Returns what it did."""
    now = clock.now()
    # an act of the last AMEND_DAYS days still serves in every zone: the index is read up to there only
    candidates = list(session.scalars(select(CaseAct).where(
        CaseAct.before.is_not(None), CaseAct.at < now - timedelta(days=corrigenda.AMEND_DAYS),
        CaseAct.case_id.in_(scopes.in_scope(select(Case.id), panchayat_id)))
        .order_by(CaseAct.at, CaseAct.id).limit(limit).options(defer(CaseAct.before))))  # the blobs stay unread
    if not candidates:
        return Swept()
    cases = _zones(session, {act.case_id for act in candidates})
    due = [act for act in candidates if let_go_at(act, cases[act.case_id][0]) <= now]
    result = Swept(acts=[act.id for act in due])
    if due:
        session.execute(update(CaseAct).where(CaseAct.id.in_(result.acts), CaseAct.before.is_not(None))
                        .values(before=None).execution_options(synchronize_session=False))
        result.packed = _pack_closed(session, {act.case_id: cases[act.case_id] for act in due})
        audit.record(session, AUDIT_KIND, detail={"acts": result.acts, "cases_packed": result.packed,
                                                  "at": now.isoformat()})
        session.flush()
    return result


def let_go_due(sessions: sessionmaker[Session], limit: int = BATCH, batches: int = BATCHES) -> Swept:
    """One housekeeping pass: :func:`sweep` batch by batch, each in its own transaction, until a batch
    lets less than ``limit`` go (or ``batches`` batches, then ``more`` is set): the live Panchayats'
    acts at the installed clock, then each training Panchayat's at its own clock
    (:func:`webapp.services.jobs.scopes.training_clocks`). Idempotent. Returns everything it did."""
    total = Swept()
    with sessions() as session:
        passes = [(scopes.LIVE, timedelta(0)), *scopes.training_clocks(session)]
    left = batches
    for panchayat_id, offset in passes:
        with clock.installed(clock.ShiftedClock(clock.current(), offset)):
            while True:
                if left == 0:
                    total.more = True
                    break
                left -= 1
                with sessions() as session:
                    done = sweep(session, panchayat_id, limit)
                    session.commit()
                total.acts.extend(done.acts)
                total.packed.extend(done.packed)
                if len(done.acts) < limit:
                    break
    if total.acts:
        log.info("let go the snapshots of %s acts, packed %s closed cases", len(total.acts), len(total.packed))
    return total
