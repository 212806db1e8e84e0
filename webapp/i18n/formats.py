"""The one place where dates, instants and rupee amounts are formatted for people, in Hindi or
English (Babel's CLDR data).

Formatting follows Babel's CLDR data, never hand-made patterns: a day is the locale's full date
format (weekday first, then day, month, year) when that format puts the day before the month, else
the project pattern ``EEEE, d MMMM y``; an instant is that day with a 24-hour time in the
Panchayat's zone; amounts are ``format_currency(amount, "INR")`` in the Indian locale of the
language (en_IN, hi_IN), which groups digits in lakhs and crores: ₹1,23,456.00. Each function takes
the language (``en``/``hi``; default: the current request's, :func:`webapp.i18n.languages.current_language`).
"""

from __future__ import annotations

import functools
import re
from datetime import date, datetime
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

from babel import Locale
from babel.dates import format_date, format_datetime, get_date_format
from babel.lists import format_list
from babel.numbers import format_currency

from webapp.i18n.languages import DEFAULT_LANGUAGE, current_language, normalise
from webapp.values.legal_time import parse_instant

FORMAT_LOCALES = {"en": "en_IN", "hi": "hi_IN"}  # the Indian variant of each language formats dates and ₹
PROJECT_DAY_PATTERN = "EEEE, d MMMM y"  # used where a locale's full date format is not day first
TIME_PATTERN = "HH:mm"  # 24-hour clock: no am/pm to translate or misread
DEFAULT_TZ = "Asia/Kolkata"
DASH = "—"


def _locale(language: str | None) -> str:
    return FORMAT_LOCALES.get(normalise(language) or current_language(), FORMAT_LOCALES[DEFAULT_LANGUAGE])


@functools.cache  # a function of the locale alone (Babel's CLDR data does not change while running)
def day_pattern(locale: str) -> str:
    """The CLDR pattern for a day in ``locale``: its full date format when that is day first
    (``EEEE, d MMMM y`` in en_IN and hi_IN), else :data:`PROJECT_DAY_PATTERN`."""
    pattern = get_date_format("full", locale=Locale.parse(locale)).pattern
    unquoted = re.sub(r"'[^']*'", "", pattern)
    day, month = unquoted.find("d"), unquoted.find("M")
    if day == -1 or month == -1 or day > month:
        return PROJECT_DAY_PATTERN
    return pattern


def format_day(value: date | datetime | str | None, language: str | None = None) -> str:
    """A calendar date for people: ``Sunday, 8 February 2026`` / ``रविवार, 8 फ़रवरी 2026``.

    ``value``: a date, a datetime (its date is taken as it is: convert instants with
    :func:`format_instant`) or an ISO text ``2026-02-08``; None or "" gives an em dash.
    ``language``: ``en``/``hi``; default the current request's language.
    """
    if value is None or value == "":
        return DASH
    if isinstance(value, str):
        value = date.fromisoformat(value[:10])
    if isinstance(value, datetime):
        value = value.date()
    return _format_day(value, _locale(language))


@functools.lru_cache(maxsize=8192)  # a function of the day and the locale alone; pages show the same days often
def _format_day(day: date, locale: str) -> str:
    return format_date(day, day_pattern(locale), locale=locale)


def format_zone(tz: str | None, language: str | None = None) -> str:
    """A time zone's name for people in ``language`` (default: the request's), from Babel's CLDR data:
    ``Asia/Kolkata`` -> "India Time" / "भारत समय" (never the identifier on a Hindi page)."""
    from babel.dates import get_timezone, get_timezone_name
    return str(get_timezone_name(get_timezone(tz or DEFAULT_TZ), locale=_locale(language)))


def format_instant(value: datetime | str | None, tz: str | None = None, language: str | None = None) -> str:
    """An instant in the time zone ``tz`` (default Asia/Kolkata), day first with the weekday and a
    24-hour time: ``Monday, 5 January 2026 10:00``. ``value``: an aware datetime or ISO text."""
    if value is None or value == "":
        return DASH
    if isinstance(value, str):
        value = parse_instant(value)
    locale = _locale(language)
    local = value.astimezone(ZoneInfo(tz or DEFAULT_TZ))
    return format_datetime(local, f"{day_pattern(locale)} {TIME_PATTERN}", locale=locale)


def format_instant_ms(value: datetime | None, tz: str | None = None, language: str | None = None) -> str:
    """An instant to the millisecond (timer lateness), as :func:`format_instant` with seconds and
    milliseconds: ``Friday, 9 January 2026 00:00:00.042``."""
    if value is None:
        return DASH
    locale = _locale(language)
    local = value.astimezone(ZoneInfo(tz or DEFAULT_TZ))
    return format_datetime(local, f"{day_pattern(locale)} HH:mm:ss.SSS", locale=locale)


def format_rupees(value: Decimal | str | int | None, language: str | None = None) -> str:
    """Rupees with paise and Indian digit grouping through Babel: ``₹1,23,456.00`` (negative
    ``-₹500.00``). ``value`` must be exact (Decimal, int or decimal text); None or "" gives a dash."""
    if value is None or value == "":
        return DASH
    amount = Decimal(str(value)).quantize(Decimal("0.01"))
    # -0.00 equals 0.00 (and hashes alike, so the cache could answer either): shown as 0.00
    return _format_rupees(amount if amount else amount.copy_abs(), _locale(language))


@functools.lru_cache(maxsize=8192)  # a function of the amount (two decimals) and the locale alone
def _format_rupees(amount: Decimal, locale: str) -> str:
    return format_currency(amount, "INR", locale=locale)


def format_listing(items: list[str], language: str | None = None) -> str:
    """Items joined as the language joins a list: ``A, B and C`` / ``A, B और C`` (Babel's format_list)."""
    return format_list([str(item) for item in items], locale=_locale(language)) if items else ""


_ISO_DAY = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")


def days_in_text(text: Any, language: str | None = None) -> str:
    """Rewrite each ISO date (2026-02-08) in a service message as :func:`format_day` shows it."""
    def day(match: re.Match[str]) -> str:
        try:
            return format_day(match.group(0), language)
        except ValueError:
            return match.group(0)
    return _ISO_DAY.sub(day, str(text or ""))
