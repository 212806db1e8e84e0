"""The public notice board (no sign-in) and the presentation helpers every page shares.

Rule 130(a): the notice is published in the village nearest the place of seizure; the product also
lists it here, without any internal data (bids, money, names of objectors), until the objection
period ends. Dates on pages are day first (09-01-2026); instants are shown in the Panchayat's zone.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

from flask import Blueprint, abort, render_template
from sqlalchemy.orm import Session

from .. import clock, legal_time
from ..app import db_session
from ..casefile import CaseFile
from ..services import notices, users
from ..store.models import Case, Panchayat

bp = Blueprint("public", __name__)

DEFAULT_TZ = "Asia/Kolkata"
DASH = "—"


# -- presentation filters (registered for every template) --------------------------------------

@bp.app_template_filter("day")
def fmt_day(value: date | str | None) -> str:
    """A calendar date, day first: 09-01-2026."""
    if value is None or value == "":
        return DASH
    if isinstance(value, str):
        value = date.fromisoformat(value[:10])
    if isinstance(value, datetime):
        value = value.date()
    return value.strftime("%d-%m-%Y")


@bp.app_template_filter("when")
def fmt_when(value: datetime | str | None, tz: str | None = None) -> str:
    """An instant in the zone ``tz`` (default Asia/Kolkata), day first: 09-01-2026 11:00."""
    if value is None or value == "":
        return DASH
    instant = legal_time.parse_instant(value) if isinstance(value, str) else value
    return instant.astimezone(ZoneInfo(tz or DEFAULT_TZ)).strftime("%d-%m-%Y %H:%M")


def _indian_grouping(whole: str) -> str:
    """12345678 -> 1,23,45,678 (lakh and crore grouping)."""
    if len(whole) <= 3:
        return whole
    head, tail = whole[:-3], whole[-3:]
    groups = []
    while len(head) > 2:
        groups.insert(0, head[-2:])
        head = head[:-2]
    if head:
        groups.insert(0, head)
    return ",".join(groups) + "," + tail


@bp.app_template_filter("rupees")
def fmt_rupees(value: Decimal | str | int | None) -> str:
    """Rupees with paise and Indian digit grouping: ₹ 10,780.00 (negative: − ₹ 500.00)."""
    if value is None or value == "":
        return DASH
    amount = Decimal(str(value)).quantize(Decimal("0.01"))
    sign = "− " if amount < 0 else ""
    whole, paise = f"{abs(amount):.2f}".split(".")
    return f"{sign}₹ {_indian_grouping(whole)}.{paise}"


_ISO_DAY = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")


@bp.app_template_filter("dayfirst")
def fmt_dayfirst(text: str | None) -> str:
    """Rewrite the ISO dates (2026-02-08) in a service message day first (08-02-2026)."""
    return _ISO_DAY.sub(lambda m: f"{m.group(3)}-{m.group(2)}-{m.group(1)}", str(text or ""))


@bp.app_template_filter("words")
def fmt_words(value: str | None) -> str:
    """An identifier as words: not_proved -> not proved."""
    return str(value or "").replace("_", " ")


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


# -- pages ----------------------------------------------------------------------------------------

@bp.route("/board")
def board() -> Any:
    """Every notice whose objection period is running, with its particulars and last day."""
    entries = [notice_context(case, cf, panchayat) for case, cf, panchayat in board_cases(db_session())]
    return render_template("public/board.html", entries=entries)


@bp.route("/board/<int:case_id>")
def board_notice(case_id: int) -> Any:
    """One notice on the board (same content as the printable notice); 404 when it is not listed."""
    found = notices.public_notice(db_session(), case_id)
    if found is None:
        abort(404)
    case, cf, panchayat = found
    return render_template("public/notice.html", **notice_context(case, cf, panchayat), public=True)
