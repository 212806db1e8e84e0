"""The scopes of the passes that run without an officer (the timer worker's firings, the reminders,
the snapshots' housekeeping): the live Panchayats' cases at the installed clock, and each training
Panchayat's at its own clock (:mod:`webapp.services.panchayats.training`)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any, TypeVar

from sqlalchemy import Select, select
from sqlalchemy.orm import Session

from webapp.store.models import Case, Panchayat

AnySelect = TypeVar("AnySelect", bound="Select[*tuple[Any, ...]]")

LIVE = None
"""The scope of a pass over the live Panchayats' cases (every Panchayat but the training ones)."""
_TRAINING_IDS = select(Panchayat.id).where(Panchayat.training.is_(True)).scalar_subquery()  # built once
_TRAINING_CLOCKS = (select(Panchayat.id, Panchayat.clock_offset_seconds)
                    .where(Panchayat.training.is_(True), Panchayat.archived_at.is_(None)).order_by(Panchayat.id))


def in_scope(query: AnySelect, panchayat_id: int | None = LIVE) -> AnySelect:
    """``query`` (over ``case_instance``) narrowed to the cases of the live Panchayats (``LIVE``:
    every Panchayat but the training ones), or of the one Panchayat ``panchayat_id``."""
    if panchayat_id is LIVE:
        return query.where(Case.panchayat_id.not_in(_TRAINING_IDS))
    return query.where(Case.panchayat_id == panchayat_id)


def training_clocks(session: Session) -> list[tuple[int, timedelta]]:
    """Each training Panchayat not put away by a reset, with how far its clock runs ahead."""
    return [(panchayat_id, timedelta(seconds=seconds or 0))
            for panchayat_id, seconds in session.execute(_TRAINING_CLOCKS)]
