"""What follows from an act, in words: read off what the act actually did to its case.

An act is applied for real — by :func:`webapp.services.running.uow.preview` in a transaction that is then
rolled back (the check step: "what follows" before it counts), or by
:func:`webapp.services.running.uow.perform_told` in the one that commits (the page then says what
happened) — and :func:`describe` compares the case after it with the :class:`Snapshot` taken
before: timers that fell due first, the sale or the auction's close, animals recorded, the
deadlines set, the case's close, the documents issued, the money posted, the tasks that open and
close, the roles told. Nothing here decides anything: the diagram and the services did, and this
only reports it, so the words cannot drift from what the act does.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from webapp.i18n import M_, N_, Message, localize, message_list
from webapp.i18n.formats import format_rupees
from webapp.services.papers.appeal_words import appeal_against
from webapp.store.models import Case, CaseDocument, CaseEvent, CaseTask, LedgerEntry
from webapp.values import casefile, clock, legal_time
from webapp.values.deadlines import deadlines

DEADLINE_NAMES = {
    "objection_last_day": N_("the last day for objections"),
    "auction_last_day": N_("the last day of the auction"),
    "appeal_last_day": N_("the last day for an appeal"),
    "transfer_lock_until": N_("the last day the buyer may not transfer the cattle"),
}
# a ledger entry's accounts in words, each with its own postposition, so that each language puts it in
# its oblique case ("उचंत खाते में", "स्वामी को"; docs/glossary.md)
FROM_ACCOUNT = {
    "suspense": N_("from the suspense account"), "pound_account": N_("from the pound account"),
    "panchayat_fund": N_("from the Panchayat fund"), "owner": N_("from the owner"), "buyer": N_("from the buyer"),
    "objector": N_("from the objector"), "receiving_officer": N_("from the receiving officer"),
    "pound_keeper": N_("from the pound keeper"),
}
TO_ACCOUNT = {
    "suspense": N_("to the suspense account"), "pound_account": N_("to the pound account"),
    "panchayat_fund": N_("to the Panchayat fund"), "owner": N_("to the owner"), "buyer": N_("to the buyer"),
    "objector": N_("to the objector"), "receiving_officer": N_("to the receiving officer"),
    "pound_keeper": N_("to the pound keeper"),
}


@dataclass
class Snapshot:
    """A case before an act: its file, status, the last history row and ledger entry, its ready
    tasks (task id -> (title, lane))."""

    case_id: int | None
    file_json: str = "{}"
    status: str = ""
    last_event: int = 0
    last_entry: int = 0
    ready: dict[str, tuple[str, str]] = field(default_factory=dict)


# what an act did, once it is confirmed, said in the past (:meth:`Follow.done`); the check step says
# what will follow in the present
PAST = {
    "%(amount)s goes %(source)s %(target)s (%(kind)s)":
        N_("%(amount)s went %(source)s %(target)s (%(kind)s)"),
    "%(animal)s is recorded as dead on %(day)s":
        N_("%(animal)s was recorded as dead on %(day)s"),
    "%(animal)s is recorded as escaped on %(day)s":
        N_("%(animal)s was recorded as escaped on %(day)s"),
    "%(deadline)s will be %(day)s":
        N_("%(deadline)s is now %(day)s"),
    "%(document)s %(number)s is issued":
        N_("%(document)s %(number)s was issued"),
    "a calf, %(animal)s, joins the lot from %(day)s":
        N_("a calf, %(animal)s, joined the lot from %(day)s"),
    "a notification goes to the %(roles)s":
        N_("a notification went to the %(roles)s"),
    "document %(number)s is cancelled: it is kept, marked CANCELLED":
        N_("document %(number)s was cancelled: it is kept, marked CANCELLED"),
    "first, “%(timer)s” takes effect: its time has come":
        N_("first, “%(timer)s” took effect: its time had come"),
    "no animal is left in the Panchayat's custody":
        N_("no animal was left in the Panchayat's custody"),
    "the act “%(act)s” is undone: the case is back as it was before it":
        N_("the act “%(act)s” was undone: the case is back as it was before it"),
    "the appeal of %(name)s against %(decision)s is recorded on %(day)s":
        N_("the appeal of %(name)s against %(decision)s was recorded on %(day)s"),
    "the appeal of %(name)s is struck out":
        N_("the appeal of %(name)s was struck out"),
    "the auction closes: %(buyer)s buys the cattle for %(amount)s (%(kind)s)":
        N_("the auction closed: %(buyer)s bought the cattle for %(amount)s (%(kind)s)"),
    "the bid of %(bidder)s for %(amount)s is struck out":
        N_("the bid of %(bidder)s for %(amount)s was struck out"),
    "the case closes: %(outcome)s":
        N_("the case closed: %(outcome)s"),
    "the case is open again":
        N_("the case was opened again"),
    "the conditional auction opens on %(first)s and runs to %(last)s":
        N_("the conditional auction was opened: from %(first)s to %(last)s"),
    "the notice is withdrawn: no notice period runs":
        N_("the notice was withdrawn: no notice period runs"),
    "the objection of %(name)s is recorded on %(day)s":
        N_("the objection of %(name)s was recorded on %(day)s"),
    "the objection of %(name)s is struck out":
        N_("the objection of %(name)s was struck out"),
    "“%(task)s” opens for the %(role)s":
        N_("“%(task)s” opened for the %(role)s"),
}


@dataclass
class Follow:
    """One thing that follows from an act: its words, and the document it issued (id, number) if any."""

    text: Message
    document_id: int | None = None

    def done(self) -> Follow:
        """The same follow said in the past, for the page after Confirm (:data:`PAST`; a follow that
        states how things stand is the same before and after)."""
        past = PAST.get(self.text.template)
        return Follow(M_(past, **self.text.params), self.document_id) if past else self

    def as_json(self) -> dict[str, Any]:
        """``{"text": English words, "document_id": id or null}`` for the API."""
        return {"text": localize(self.text, language="en"), "document_id": self.document_id}


def snapshot(session: Session, case_id: int | None) -> Snapshot:
    """The case ``case_id`` as it stands (an unknown or absent case: an empty snapshot)."""
    case = session.get(Case, case_id) if case_id is not None else None
    if case is None:
        return Snapshot(None)
    return Snapshot(case.id, case.file_json, case.status,
                    session.scalar(select(func.max(CaseEvent.id)).where(CaseEvent.case_id == case.id)) or 0,
                    session.scalar(select(func.max(LedgerEntry.id)).where(LedgerEntry.case_id == case.id)) or 0,
                    _ready(session, case.id))


def _ready(session: Session, case_id: int) -> dict[str, tuple[str, str]]:
    rows = session.execute(select(CaseTask.task_id, CaseTask.title, CaseTask.lane)
                           .where(CaseTask.case_id == case_id, CaseTask.state == "ready"))
    return {task_id: (title, lane) for task_id, title, lane in rows}


def _words(identifier: str | None) -> Message:
    return M_(str(identifier or "").replace("_", " "))


def describe(session: Session, before: Snapshot, case_id: int | None = None) -> list[Follow]:
    """What the act did to the case since ``before`` (the session flushed), in the order an officer
    reads it. ``case_id``: the case when ``before`` had none (a new case)."""
    cid = before.case_id or case_id
    case = session.get(Case, cid) if cid is not None else None
    if case is None:
        return []
    session.refresh(case)
    old = casefile.load(before.file_json) if before.case_id else None
    new = casefile.load(case.file_json)
    events = list(session.scalars(select(CaseEvent).where(CaseEvent.case_id == case.id, CaseEvent.id > before.last_event)
                                  .order_by(CaseEvent.id)))
    follows: list[Follow] = []
    for event in events:
        if event.kind == "timer":
            follows.append(Follow(M_("first, “%(timer)s” takes effect: its time has come", timer=M_(event.name))))
        elif event.kind == "correction":  # webapp.services.cases.corrections
            detail = json.loads(event.detail_json or "{}")
            follows.append(Follow(M_("the act “%(act)s” is undone: the case is back as it was before it",
                                     act=M_(detail.get("act_name", "")))))
            for number in detail.get("documents_cancelled", []):
                follows.append(Follow(M_("document %(number)s is cancelled: it is kept, marked CANCELLED", number=number),
                                      _document_id(session, case.id, number)))
    if before.status and before.status != "running" and case.status == "running":
        follows.append(Follow(M_("the case is open again")))
    follows.extend(_file_changes(old, new))
    if old is not None:
        for key, day in deadlines(new).items():
            if key in DEADLINE_NAMES and day is not None and deadlines(old).get(key) != day:
                follows.append(Follow(M_("%(deadline)s will be %(day)s", deadline=M_(DEADLINE_NAMES[key]), day=day)))
    elif case.status == "running":  # a new case: the window the owner has to release the whole lot
        last = deadlines(new)["release_last_day"]
        if last is not None and last < legal_time.local_day(clock.now(), new.timezone):  # recorded late
            follows.append(Follow(M_("the 3-day release window ended with %(day)s: the notice is due now", day=last)))
        else:
            follows.append(Follow(M_("the owner may release the whole lot until the end of %(day)s (the 3-day "
                                     "release window); after it the notice is published", day=last)))
    if (before.status == "running" and case.status != "running") or (old is None and case.status != "running"):
        follows.append(Follow(M_("the case closes: %(outcome)s", outcome=_words(new.outcome))))
    for event in events:
        if event.kind == "document":
            number = json.loads(event.detail_json or "{}").get("document")
            follows.append(Follow(M_("%(document)s %(number)s is issued", document=M_(event.name), number=number or ""),
                                  _document_id(session, case.id, number)))
    for entry in session.scalars(select(LedgerEntry).where(LedgerEntry.case_id == case.id, LedgerEntry.id > before.last_entry)
                                 .order_by(LedgerEntry.id)):
        source, target = FROM_ACCOUNT.get(entry.from_account), TO_ACCOUNT.get(entry.to_account)
        follows.append(Follow(M_("%(amount)s goes %(source)s %(target)s (%(kind)s)", amount=format_rupees(entry.amount),
                                 source=M_(source) if source else _words(entry.from_account),
                                 target=M_(target) if target else _words(entry.to_account), kind=_words(entry.kind))))
    after = _ready(session, case.id) if case.status == "running" else {}
    # the same task made again (the next bid) opens nothing new; one more of it (a second claim to
    # decide) does
    was_ready = Counter(before.ready.values())
    now_ready = Counter(after.values())
    told_of: set[tuple[str, str]] = set()
    for task_id, (title, lane) in after.items():
        if task_id not in before.ready and now_ready[title, lane] > was_ready[title, lane] \
                and (title, lane) not in told_of:
            told_of.add((title, lane))
            follows.append(Follow(M_("“%(task)s” opens for the %(role)s", task=M_(title), role=_words(lane))))
    roles: list[str] = []
    for event in events:
        if event.kind == "notification":
            roles.extend(r for r in (event.actor_role or "").split(",") if r and r not in roles)
    if roles:
        follows.append(Follow(M_("a notification goes to the %(roles)s", roles=message_list([_words(r) for r in roles]))))
    return follows


def _file_changes(old: casefile.CaseFile | None, new: casefile.CaseFile) -> list[Follow]:
    found: list[Follow] = []
    if old is None:
        return found
    before = {a.position: a for a in old.animals}
    for animal in new.animals:
        was = before.get(animal.position)
        name = animal.tag or f"#{animal.position}"
        if was is None:
            found.append(Follow(M_("a calf, %(animal)s, joins the lot from %(day)s", animal=name, day=animal.born_on)))
        elif animal.died_on and not was.died_on:
            found.append(Follow(M_("%(animal)s is recorded as dead on %(day)s", animal=name, day=animal.died_on)))
        elif animal.escaped_on and not was.escaped_on:
            found.append(Follow(M_("%(animal)s is recorded as escaped on %(day)s", animal=name, day=animal.escaped_on)))
        elif was.gone_on() and not animal.gone_on():
            found.append(Follow(M_("%(animal)s is in the pound again in the records", animal=name)))
    for animal in old.animals[len(new.animals):]:
        found.append(Follow(M_("%(animal)s is no longer recorded as born in the pound", animal=animal.tag or f"#{animal.position}")))
    if old.living_animals() and not new.living_animals():
        found.append(Follow(M_("no animal is left in the Panchayat's custody")))
    if new.sale is not None and old.sale is None:
        found.append(Follow(M_("the auction closes: %(buyer)s buys the cattle for %(amount)s (%(kind)s)",
                               buyer=new.sale.buyer, amount=format_rupees(new.sale.amount), kind=_words(new.sale.kind))))
    elif new.auction is not None and old.auction is not None and new.auction.status != old.auction.status:
        found.append(Follow(M_("the auction is now %(status)s", status=_words(new.auction.status))))
    elif new.auction is not None and old.auction is None:
        found.append(Follow(M_("the conditional auction opens on %(first)s and runs to %(last)s",
                               first=new.auction.opened_on, last=new.auction.last_day)))
    if old.auction is not None and new.auction is not None and old.auction.round == new.auction.round:
        for bid in old.auction.bids[len(new.auction.bids):]:
            found.append(Follow(M_("the bid of %(bidder)s for %(amount)s is struck out", bidder=bid.bidder,
                                   amount=format_rupees(bid.amount))))
    if old.dispatch is not None and new.dispatch is not None and \
            old.dispatch.receiver_user_id != new.dispatch.receiver_user_id:
        found.append(Follow(M_("the case goes to the receiving officer %(new)s in place of %(old)s, who no longer "
                               "sees it", new=new.dispatch.receiver, old=old.dispatch.receiver)))
    if old.notice is not None and new.notice is None:
        found.append(Follow(M_("the notice is withdrawn: no notice period runs")))
    for objection in old.objections[len(new.objections):]:
        found.append(Follow(M_("the objection of %(name)s is struck out", name=objection.objector)))
    for appeal in old.appeals[len(new.appeals):]:
        found.append(Follow(M_("the appeal of %(name)s is struck out", name=appeal.appellant)))
    new_objections = [o for o in new.objections if o.objector not in {p.objector for p in old.objections}]
    for objection in new_objections:
        found.append(Follow(M_("the objection of %(name)s is recorded on %(day)s", name=objection.objector,
                               day=objection.filed_on)))
    for appeal in new.appeals[len(old.appeals):]:
        found.append(Follow(M_("the appeal of %(name)s against %(decision)s is recorded on %(day)s",
                               name=appeal.appellant, decision=appeal_against(new, appeal), day=appeal.filed_on)))
    return found


def _document_id(session: Session, case_id: int, number: str | None) -> int | None:
    if not number:
        return None
    return session.scalar(select(func.min(CaseDocument.id)).where(CaseDocument.case_id == case_id,
                                                                  CaseDocument.number == number))
