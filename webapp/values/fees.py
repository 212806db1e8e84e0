"""How much: the fine, the pound's feeding, the buyer's feeding (RULE130.md, "Money").

All amounts are ``Decimal`` rupees with paise; days are local calendar days counted both ends
where RULE130.md says so. Nothing here touches the database.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from webapp.values.casefile import Animal, CaseFile

ZERO = Decimal("0.00")
PAISE = Decimal("0.01")


def money(value: Decimal) -> Decimal:
    """Round to paise (amounts entered by officers already have at most two decimals)."""
    return value.quantize(PAISE)


def fine(cf: CaseFile) -> Decimal:
    """F: the fine for every animal impounded, by species (an animal that later died still counts;
    a calf born in the pound carries a fine of 0: RULE130.md 0, reading)."""
    return money(sum((a.fine for a in cf.animals), ZERO))


def _first_custody_end(cf: CaseFile, animal: Animal, today: date) -> date:
    """The earliest of: sale, dispatch, interim delivery, release or delivery day, death or escape;
    else today (the animal is still in the pound)."""
    ends = [animal.gone_on(), cf.sale.day if cf.sale else None, cf.dispatch.day if cf.dispatch else None,
            cf.interim.day if cf.interim else None, cf.release.day if cf.release else None, cf.delivered_on]
    known = [d for d in ends if d is not None]
    return min(known) if known else today


def custody_periods(cf: CaseFile, animal: Animal, today: date) -> list[tuple[date, date]]:
    """The days the animal was fed by the pound, as (first day, last day) pairs, both counted.

    The first period runs from the impound day to the custody-end day (Rule 130 reading); for a
    calf born in the pound, from its birth day (RULE130.md 0, reading: feeding from its birth day,
    that day counted as the impound day is). If an
    objector who lost returned the cattle after interim delivery, a second period runs from the
    return day to the new sale or dispatch day, or to the delivery day to the objector whose
    ownership is proved (reading; RULE130.md is silent on its feeding).
    """
    periods = [(cf.impounded_on, _first_custody_end(cf, animal, today))]
    gone = animal.gone_on()
    if cf.interim and cf.interim.returned_on and (gone is None or gone >= cf.interim.returned_on):
        ends = [gone]
        if cf.sale and cf.sale.auction_round > 1:
            ends.append(cf.sale.day)
        if cf.dispatch and cf.dispatch.day >= cf.interim.returned_on:
            ends.append(cf.dispatch.day)
        if cf.delivered_on and cf.delivered_on >= cf.interim.returned_on:  # to the proved owner (d)
            ends.append(cf.delivered_on)
        known = [d for d in ends if d is not None]
        periods.append((cf.interim.returned_on, min(known) if known else today))
    if animal.born_on is not None:  # a calf born in the pound is fed from its birth day (counted)
        periods = [(max(first, animal.born_on), last) for first, last in periods]
    return [(a, b) for a, b in periods if b >= a]


def pound_feeding(cf: CaseFile, today: date) -> Decimal:
    """C: each animal's daily rate times its days in the pound (first and last day counted)."""
    total = ZERO
    for animal in cf.animals:
        for first, last in custody_periods(cf, animal, today):
            total += animal.feeding_per_day * ((last - first).days + 1)
    return money(total)


def buyer_feeding(cf: CaseFile) -> Decimal:
    """Cb: the living animals' daily rates times the days after the sale day up to the buyer's return.

    Zero until the buyer has returned the cattle (condition (b)(ii)).
    """
    if not cf.sale or not cf.sale.returned_on:
        return ZERO
    days = (cf.sale.returned_on - cf.sale.day).days
    living = cf.living_animals(on=cf.sale.day)
    return money(sum((a.feeding_per_day for a in living), ZERO) * days)


def fine_and_feeding(cf: CaseFile, today: date) -> Decimal:
    """F + C."""
    return fine(cf) + pound_feeding(cf, today)
