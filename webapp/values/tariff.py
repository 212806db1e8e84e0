"""The species and RULE130.md's example rates: the fine per head and the feeding per head per day
(rupees, Decimal).

The rates a case takes come from the ``tariff_rate`` table (webapp.services.money.tariffs: the tariff in
force on the local impoundment day, with effective dates and Panchayat overrides); the migration
0011_ledger seeds it with these examples, which are not the law (Rules 117-129 set the real rates).
A case keeps its rates on each animal of its file.
"""

from __future__ import annotations

from decimal import Decimal

DEFAULT_TARIFF: dict[str, dict[str, Decimal]] = {
    "cow": {"fine": Decimal("500.00"), "feeding_per_day": Decimal("60.00")},
    "bullock": {"fine": Decimal("450.00"), "feeding_per_day": Decimal("75.25")},
    "buffalo": {"fine": Decimal("400.00"), "feeding_per_day": Decimal("80.00")},
    "camel": {"fine": Decimal("600.00"), "feeding_per_day": Decimal("100.00")},
    "horse": {"fine": Decimal("700.00"), "feeding_per_day": Decimal("120.00")},
    "goat": {"fine": Decimal("100.00"), "feeding_per_day": Decimal("20.00")},
    "sheep": {"fine": Decimal("80.00"), "feeding_per_day": Decimal("15.00")},
}
SPECIES = tuple(DEFAULT_TARIFF)
