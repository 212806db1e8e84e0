"""Calendar-day rules for legal periods (Rule 2 of the Rajasthan Panchayati Raj Rules, 1996).

A "day" is a calendar day, midnight to midnight, in the Panchayat's time zone. A period of N days
after an event on day E covers E+1 .. E+N and ends at the end of day E+N; its timer fires at
00:00 local of day E+N+1, and an act at that instant is late (RULE130.md, "Time").
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from webapp.values.digits import ascii_digits

MAX_PERIOD_DAYS = 3650  # ten years: no period of the rule comes near it (the longest setting is 365 days)


def parse_instant(value: str | datetime) -> datetime:
    """Read an offset-aware ISO 8601 instant (its digits also in Devanagari: webapp.values.digits).

    Raises:
        ValueError: the text is not ISO 8601, or has no UTC offset.
    """
    instant = value if isinstance(value, datetime) else datetime.fromisoformat(ascii_digits(str(value)).strip())
    if instant.tzinfo is None or instant.utcoffset() is None:
        raise ValueError(f"an instant needs a UTC offset: {value}")
    if not 1900 <= instant.year <= 9000:
        raise ValueError(f"the year {instant.year} is out of range")
    return instant


def parse_day(value: str | date) -> date:
    """Read a calendar day written ``YYYY-MM-DD`` (its digits also in Devanagari, "२०२६-०१-०५":
    webapp.values.digits), spaces around it ignored; a ``date`` is returned as it is (not a datetime).

    Raises:
        ValueError: anything else (another layout, a datetime, a day that does not exist).
    """
    if isinstance(value, datetime) or not isinstance(value, (date, str)):
        raise ValueError(f"not a day: {value!r}")
    if isinstance(value, date):
        return value
    text = ascii_digits(value).strip()
    if len(text) != 10:
        raise ValueError(f"not a day written YYYY-MM-DD: {value!r}")
    return date.fromisoformat(text)


def local_day(instant: str | datetime, tz: str) -> date:
    """The calendar day, in zone ``tz``, on which ``instant`` falls."""
    return parse_instant(instant).astimezone(ZoneInfo(tz)).date()


def day_start(day: date, tz: str) -> datetime:
    """00:00 local of ``day`` in zone ``tz``, as a UTC instant."""
    return datetime.combine(day, time(0, 0), ZoneInfo(tz)).astimezone(UTC)


def last_day(event: str | datetime, days: int, tz: str) -> date:
    """The last day of a period of ``days`` calendar days after the day of ``event``.

    Raises:
        ValueError: ``days`` is not a whole number from 0 to :data:`MAX_PERIOD_DAYS`, or ``event``
            is not an offset-aware instant of the years 1900-9000 (:func:`parse_instant`).
    """
    if isinstance(days, bool) or not isinstance(days, (int, float)) or int(days) != days \
            or not 0 <= days <= MAX_PERIOD_DAYS:
        raise ValueError(f"a period is a whole number of days from 0 to {MAX_PERIOD_DAYS}, not {days!r}")
    return local_day(event, tz) + timedelta(days=int(days))


def period_end(event: str | datetime, days: int, tz: str) -> str:
    """The instant a period of ``days`` days after ``event`` ends: 00:00 local of E+days+1.

    This is the function the diagram's timer expressions call, e.g.
    ``period_end(impounded_at, 3, timezone)``. It returns an offset-aware ISO 8601 string in UTC,
    the form SpiffWorkflow's ``timeDate`` timers need.

    Args:
        event: the event instant (offset-aware ISO text or datetime).
        days: the period in calendar days (Rule 2).
        tz: the Panchayat's IANA time zone, e.g. ``Asia/Kolkata``.
    Raises:
        ValueError: as :func:`last_day`, or the end falls outside the years 1900-9000 (no instant
            the product stores).
    """
    return parse_instant(day_start(last_day(event, days, tz) + timedelta(days=1), tz)).isoformat()


def is_within(act: datetime, last: date, tz: str) -> bool:
    """True when ``act`` falls on or before the end of day ``last`` in zone ``tz``."""
    return act < day_start(last + timedelta(days=1), tz)


def day_before_instant(instant: str | datetime, tz: str) -> date:
    """The last day of a period whose end (00:00 local of the next day) is ``instant``."""
    return local_day(parse_instant(instant) - timedelta(microseconds=1), tz)
