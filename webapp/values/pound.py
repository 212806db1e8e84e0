"""How many head of cattle a case holds in the pound now: the figure the oversight pages add up
(``case_instance.cattle_held``, kept in step with the case file on every save).

Out of the Panchayat's custody, as :mod:`webapp.services.cases.animal_events` reads it (RULE130.md,
"Cattle back in custody"): with a buyer until the buyer returns them, with a receiving officer,
released to the owner, delivered to the objector, or with an objector on interim delivery until
returned; an animal that died or escaped is gone. A calf born in the pound counts as a head.
"""

from __future__ import annotations

from webapp.values.casefile import CaseFile


def cattle_in_pound(cf: CaseFile) -> int:
    """The head of cattle of the case in the pound now (0 or more; 0 once the case is decided
    and the cattle have left, and for a case ended without animals)."""
    if ((cf.sale is not None and cf.sale.returned_on is None) or cf.dispatch is not None or cf.release is not None
            or cf.delivered_on is not None or (cf.interim is not None and not cf.interim.returned_on)):
        return 0
    return sum(1 for animal in cf.animals if animal.gone_on() is None)
