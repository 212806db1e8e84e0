"""Digits as a Hindi keyboard types them: Devanagari ०१२३४५६७८९ read as ASCII 0123456789.

The one place where typed digits are normalised before they are checked: every date, number and
amount an officer gives, on a page or through the API (a task form's fields by their JSON Schema
type, webapp.services.tasks.rules.clean; a day or an instant, webapp.values.legal_time.parse_day /
parse_instant; an amount, webapp.services.money.amounts.plain), so "२०२६-०१-०५" is 2026-01-05 and
"१२००" is 1200. Text that is not such a value (a name, a tag, a reason) is never changed here.
"""

from __future__ import annotations

from typing import Any

DEVANAGARI_DIGITS = "०१२३४५६७८९"
_TO_ASCII = str.maketrans(DEVANAGARI_DIGITS, "0123456789")


def ascii_digits(value: Any) -> Any:
    """``value`` with each Devanagari digit replaced by the ASCII digit of the same value, when it
    is text; any other value (an int, None, a date) is returned as it is. Nothing else changes:
    "२०२६-०१-०५" -> "2026-01-05", "₹१,२००.५०" -> "₹1,200.50", "abc" -> "abc"."""
    return value.translate(_TO_ASCII) if isinstance(value, str) else value
