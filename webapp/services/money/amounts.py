"""Reading rupee amounts from officers' input: exact decimals, never floats."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from webapp.errors import Refused
from webapp.i18n import M_
from webapp.values.digits import ascii_digits

LARGEST = Decimal("999999999999.99")  # rupees: twelve digits before the point fit every stored amount
_PLAIN = re.compile(r"-?[0-9]+(\.[0-9]+)?")  # ASCII digits, an optional point with digits after it
# Commas that group digits as the pages show amounts (Indian: 1,23,45,678) or in thousands (12,345,678)
_GROUPED = re.compile(r"-?(?:[0-9]{1,2}(?:,[0-9]{2})*,[0-9]{3}|[0-9]{1,3}(?:,[0-9]{3})+)(?:\.[0-9]+)?")


def plain(text: str) -> str:
    """``text`` as plain ASCII decimal text, when it is an amount written as the pages show amounts:
    Devanagari digits become ASCII, a leading rupee sign (₹) goes, and commas that group the digits
    in the Indian way (1,00,000) or in thousands (100,000) go. Any other text is returned with only
    its digits changed (and is then refused by :func:`parse_amount`): a comma elsewhere (12,00) is
    not a grouping, and may be a decimal comma."""
    text = ascii_digits(text)
    if text.startswith("₹"):
        text = text[1:].lstrip()
    return text.replace(",", "") if "," in text and _GROUPED.fullmatch(text) else text


def parse_amount(value: object, field: str, label: str | None = None, *, positive: bool = False) -> Decimal:
    """Read ``value`` as rupees with at most two decimals.

    Args:
        value: text such as "12000", "12000.50", "1,00,000", "₹12,000.50" or "१२०००" (see
            :func:`plain`; no exponent, no sign), an int, or a Decimal (floats are refused: they are
            not exact).
        field: the form field, for the error.
        positive: refuse zero too.
    Returns:
        the amount as a Decimal with two decimals.
    Raises:
        Refused: not a number, negative (or zero when ``positive``), more than two decimals, or
            above :data:`LARGEST`.
    """
    label = label or M_(field.replace("_", " "))
    if isinstance(value, (float, bool)):
        raise Refused(M_("%(label)s: give the amount as text, e.g. \"1200.50\"", label=label),
                      {field: M_("not an exact amount")})
    typed = str(value).strip() if value is not None else ""
    text = plain(typed)
    if not _PLAIN.fullmatch(text):
        raise Refused(M_("%(label)s: %(text)s is not an amount in rupees (write e.g. 1200 or 1200.50)",
                         label=label, text=repr(typed)), {field: M_("not a number")})
    try:
        amount = Decimal(text)
    except InvalidOperation:  # pragma: no cover - the pattern admits only plain decimals
        raise Refused(M_("%(label)s: %(text)s is not an amount in rupees", label=label, text=repr(text)),
                      {field: M_("not a number")}) from None
    if amount < 0:
        raise Refused(M_("%(label)s: an amount cannot be negative (%(text)s)", label=label, text=typed),
                      {field: M_("negative")})
    if positive and amount == 0:
        raise Refused(M_("%(label)s: the amount must be more than zero", label=label), {field: M_("zero")})
    exponent = amount.as_tuple().exponent  # an int for a finite amount (NaN and infinity were refused above)
    if isinstance(exponent, int) and exponent < -2:
        raise Refused(M_("%(label)s: rupees take at most two decimals (paise), not %(text)s", label=label, text=typed),
                      {field: M_("too many decimals")})
    if amount > LARGEST:
        raise Refused(M_("%(label)s: %(text)s is too large; the largest amount is %(largest)s", label=label, text=typed,
                         largest=LARGEST), {field: M_("too large")})
    return amount.quantize(Decimal("0.01"))
