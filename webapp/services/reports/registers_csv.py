"""The registers as CSV (RFC 4180, UTF-8): each register's header and rows as the page shows them
(days in the Panchayat's zone, rupees with two decimals), with any cell that a spreadsheet would
read as a formula made plain text.
"""

from __future__ import annotations

import csv
import io
from datetime import date, datetime
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

from webapp.errors import NotFound
from webapp.i18n import M_
from webapp.store.models import Panchayat

# -- CSV --------------------------------------------------------------------------------------------

def cell(value: Any, tz: str) -> str:
    """A CSV cell: amounts as plain Decimal text with two decimals (1720.00: no grouping, no ₹),
    days as YYYY-MM-DD, instants as local ISO 8601 with the offset; text that a spreadsheet would
    read as a formula (=, +, -, @ first) is prefixed with an apostrophe."""
    if value is None:
        return ""
    if isinstance(value, Decimal):
        return f"{value:.2f}"
    if isinstance(value, datetime):
        return value.astimezone(ZoneInfo(tz)).isoformat(timespec="seconds")
    if isinstance(value, (date, int)):
        return value.isoformat() if isinstance(value, date) else str(value)
    text = str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def csv_table(name: str, panchayat: Panchayat, data: Any) -> tuple[list[str], list[list[Any]]]:
    """The header and rows of register ``name`` (one of :data:`REGISTERS`) for CSV. Column names
    are fixed identifiers in English (like the API's keys), so a spreadsheet or an audit script
    reads them the same whatever the page's language; the statement has one row per entry plus an
    opening and a closing row per account."""
    if name == "pound":
        return (["case_number", "impounded_at", "animal", "species", "description", "tag", "place_seized",
                 "place_impounded", "nearest_village", "fine", "feeding_per_day", "disposal", "disposal_day",
                 "disposed_to"],
                [[r.case_number, r.impounded_at, r.position, r.species, r.description, r.tag, r.place_seized,
                  r.place_impounded, r.nearest_village, r.fine, r.feeding_per_day, r.disposal.kind, r.disposal.day,
                  r.disposal.to] for r in data])
    if name == "receipts":
        # papers: the numbers of the documents issued by the receipt's act, separated by "; ", each
        # cancelled since by a correction followed by " (CANCELLED)"
        return (["receipt_number", "received_at", "case_number", "payer", "payer_name", "account", "amount", "kind",
                 "clause", "reversed", "papers"],
                [[r.number, r.at, r.case_number, r.payer, r.payer_name, r.account, r.amount, r.kind, r.clause,
                  "yes" if r.reversed else "",
                  "; ".join(f"{n} (CANCELLED)" if n in r.cancelled_papers else n for n in r.papers)] for r in data])
    if name == "charges":
        return (["case_number", "impounded_on", "animals", "outcome", "fine", "pound_feeding", "buyer_feeding",
                 "sale_amount", "buyer", "remittance_proceeds", "remittance_expenses", "security", "pound_account",
                 "panchayat_fund", "suspense", "paid_to_buyer", "paid_to_pound_keeper", "refunded_to_objector",
                 "shortfall"],
                [[r.case_number, r.impounded_on, r.animals, r.outcome, r.fine, r.pound_feeding, r.buyer_feeding,
                  r.sale_amount, r.buyer, r.remittance_proceeds, r.remittance_expenses, r.security, r.pound_account,
                  r.panchayat_fund, r.suspense, r.paid_to_buyer, r.paid_to_pound_keeper, r.refunded_to_objector,
                  r.shortfall] for r in data])
    if name in ("statement", "suspense"):
        rows: list[list[Any]] = []
        for account in data.accounts:
            rows.append([account.account, "opening", data.period.start, None, None, None, None, None, None, None,
                         account.opening])
            for line in account.lines:
                e = line.entry
                incoming = line.direction == "in"
                rows.append([account.account, "entry", e.at, line.case_number, line.counterparty,
                             line.counterparty_name, e.kind, e.clause, e.amount if incoming else None,
                             None if incoming else e.amount, line.balance])
            rows.append([account.account, "closing", data.period.end, None, None, None, None, None,
                         account.received, account.paid, account.closing])
        return (["account", "line", "at", "case_number", "counterparty", "counterparty_name", "kind", "clause",
                 "in", "out", "balance"], rows)
    raise NotFound(M_("no register %(name)s", name=name))


def write_csv(header: list[str], rows: list[list[Any]], tz: str) -> str:
    """The table as CSV text (Python's csv module, RFC 4180 quoting, CRLF line ends); cells as
    :func:`_cell` writes them."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(header)
    for row in rows:
        writer.writerow([cell(value, tz) for value in row])
    return out.getvalue()
