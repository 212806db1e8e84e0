"""Reading rupee amounts from officers' input: exact decimals, never floats."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from ..errors import Refused

_PLAIN = re.compile(r"-?[0-9]+(\.[0-9]+)?")  # ASCII digits, an optional point with digits after it


def parse_amount(value: object, field: str, label: str | None = None, *, positive: bool = False) -> Decimal:
    """Read ``value`` as rupees with at most two decimals.

    Args:
        value: text such as "12000" or "12000.50" (ASCII digits, no exponent, sign or grouping),
            an int, or a Decimal (floats are refused: they are not exact).
        field: the form field, for the error.
        positive: refuse zero too.
    Returns:
        the amount as a Decimal with two decimals.
    Raises:
        Refused: not a number, negative (or zero when ``positive``), or more than two decimals.
    """
    label = label or field.replace("_", " ")
    if isinstance(value, float) or isinstance(value, bool):
        raise Refused(f"{label}: give the amount as text, e.g. \"1200.50\"", {field: "not an exact amount"})
    text = str(value).strip() if value is not None else ""
    if not _PLAIN.fullmatch(text):
        raise Refused(f"{label}: {text!r} is not an amount in rupees (write e.g. 1200 or 1200.50)",
                      {field: "not a number"})
    try:
        amount = Decimal(text)
    except InvalidOperation:  # pragma: no cover - the pattern admits only plain decimals
        raise Refused(f"{label}: {text!r} is not an amount in rupees", {field: "not a number"}) from None
    if amount < 0:
        raise Refused(f"{label}: an amount cannot be negative ({text})", {field: "negative"})
    if positive and amount == 0:
        raise Refused(f"{label}: the amount must be more than zero", {field: "zero"})
    if amount.as_tuple().exponent < -2:
        raise Refused(f"{label}: rupees take at most two decimals (paise), not {text}", {field: "too many decimals"})
    if amount >= Decimal("1e12"):
        raise Refused(f"{label}: {text} is too large", {field: "too large"})
    return amount.quantize(Decimal("0.01"))
