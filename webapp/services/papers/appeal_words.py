"""Which decision of the Panchayat an appeal is (or would be) against, in words (Rule 130(e) proviso).

The Panchayat's decision is the sarpanch's order that the auction stand where no objection was
filed, else its orders on the objections (RULE130.md, "Decision and appeal"). An objector appeals
against the order on their own claim; anyone else against the order that proved a claim, else
against the orders that proved none (handlers/decision.py, ``apply_decision``, reads an appeal the
same way). The words name that order and its day where the case tells which one it is, and say
"the orders on the objections" where it does not (several claims, none proved).

Each phrase only ever stands where "against" governs it ("File an appeal against %(decision)s"),
so its Hindi is in the oblique case, before के विरुद्ध ("नीलामी यथावत रखने के आदेश").
"""

from __future__ import annotations

from webapp.i18n import M_, Message
from webapp.values.casefile import Appeal, CaseFile


def objector_appealed(cf: CaseFile, appellant: str | None) -> str | None:
    """The objector whose claim's order an appeal by ``appellant`` against an ownership decision is
    against: the appellant's own claim once decided; for anyone else the claim proved, else the only
    claim decided. None where no single order is meant (several claims decided, none proved; the
    appellant's own claim not yet decided; no claim decided; ``appellant`` None with no claim proved
    and several decided)."""
    if appellant is not None:
        own = cf.objection_of(appellant)
        if own is not None:
            return own.objector if own.decided_on is not None else None
    if cf.owner_proved and cf.winning_objector:
        return cf.winning_objector
    decided = [o for o in cf.objections if o.decided_on is not None]
    return decided[0].objector if len(decided) == 1 else None


def appeal_against(cf: CaseFile, appeal: Appeal | None = None, appellant: str | None = None) -> Message:
    """The decision ``appeal`` is against, or that an appeal filed now (by ``appellant``, if known)
    would be against, as a noun phrase for "… against %(decision)s", with the order's day:
    "the order that the auction stand (2026-02-09)", "the order on the objection of Ramesh
    (2026-04-01)", "the orders on the objections", or, before any decision, "the
    Panchayat's decision". Translated where shown (:func:`webapp.i18n.localize`)."""
    if appeal is not None:
        kind, objector = appeal.against, appeal.objector
    elif cf.decision_on is None:
        return M_("the Panchayat's decision")
    else:
        kind = "order_auction_stand" if cf.order_auction_stand_on else "ownership"
        objector = objector_appealed(cf, appellant)
    if kind == "order_auction_stand":
        if cf.order_auction_stand_on is None:  # not met: the order is what an appeal of this kind is against
            return M_("the order that the auction stand")
        return M_("the order that the auction stand (%(day)s)", day=cf.order_auction_stand_on)
    claim = cf.objection_of(objector) if objector else None
    if claim is not None and claim.decided_on is not None:
        return M_("the order on the objection of %(name)s (%(day)s)", name=claim.objector, day=claim.decided_on)
    return M_("the orders on the objections")
