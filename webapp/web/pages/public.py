"""The public notice board (no sign-in) and the presentation helpers every page shares.

Rule 130(a): the notice is published in the village nearest the place of seizure; the product also
lists it here, without any internal data (bids, money, names of objectors), until the objection
period ends. Dates on pages are day first with the weekday (webapp.i18n); instants in the Panchayat's zone.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from flask import Blueprint, abort, render_template
from flask_babel import gettext
from sqlalchemy.orm import Session

from webapp.services.panchayats import training
from webapp.services.papers import notices
from webapp.services.people import users
from webapp.store.models import Case, Panchayat
from webapp.values import clock, legal_time
from webapp.values.casefile import CaseFile
from webapp.web.access.auth import signed_in_user
from webapp.web.context import db_session

bp = Blueprint("public", __name__)

DEFAULT_TZ = "Asia/Kolkata"
DASH = "—"


# -- presentation filters (registered for every template; day, when, rupees, dayfirst: webapp.i18n) --

@bp.app_template_filter("words")
def fmt_words(value: str | None) -> str:
    """An identifier as words in the page's language: not_proved -> not proved / सिद्ध नहीं
    (the catalogue entries of webapp.values.vocabulary; an unknown identifier stays English words)."""
    from webapp.values import vocabulary  # noqa: F401  (its N_ marks are the catalogue entries looked up here)
    words = str(value or "").replace("_", " ")
    return gettext(words) if words else words


# -- reading a case's notice (shared by the officer's printable notice) --------------------------

def panchayat_of(session: Session, panchayat_id: int) -> Panchayat | None:
    """The Panchayat (name, district, time zone) a page shows."""
    return users.panchayat(session, panchayat_id)


def local_today(tz: str | None) -> date:
    return legal_time.local_day(clock.now(), tz or DEFAULT_TZ)


def notice_context(case: Case, cf: CaseFile, panchayat: Panchayat | None) -> dict[str, Any]:
    """The particulars of the notice of clause (a) and the conditional auction of clause (b).

    Only public facts: the cattle covered (those living when the notice was published), the places,
    the village of publication, the objection period and its last day, the auction days and the full
    price. ``notice`` is None when no notice has been published yet.
    """
    notice = cf.notice
    auction = cf.auctions[0] if cf.auctions else None
    animals = cf.living_animals(on=notice.published_on) if notice else cf.living_animals()
    auction_days: list[date] = []
    if auction is not None:
        day = auction.opened_on
        while day <= auction.last_day:
            auction_days.append(day)
            day += timedelta(days=1)
    return {"case": case, "cf": cf, "panchayat": panchayat, "notice": notice, "animals": animals,
            "auction": auction, "auction_days": auction_days, "tz": cf.timezone}


on_board = notices.is_on_board
board_cases = notices.public_notices


def _training_id(session: Session) -> int | None:
    """The id of the training Panchayat of the signed-in officer, if any: its notices show on the
    board to its officers only (:func:`webapp.services.papers.notices.is_on_board`)."""
    panchayat = training.of_user(session, signed_in_user())
    return panchayat.id if panchayat is not None else None


# -- pages ----------------------------------------------------------------------------------------

@bp.route("/board")
def board() -> Any:
    """Every notice whose objection period is running, with its particulars and last day."""
    session = db_session()
    entries = [notice_context(case, cf, panchayat)
               for case, cf, panchayat in board_cases(session, _training_id(session))]
    return render_template("public/board.html", entries=entries)


@bp.route("/board/<int:case_id>")
def board_notice(case_id: int) -> Any:
    """One notice on the board (same content as the printable notice); 404 when it is not listed."""
    session = db_session()
    found = notices.public_notice(session, case_id, _training_id(session))
    if found is None:
        abort(404)
    case, cf, panchayat = found
    return render_template("public/notice.html", **notice_context(case, cf, panchayat), public=True)
