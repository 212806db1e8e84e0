"""Authorization as a matrix: every route Flask serves × every role (and anonymous) × a case of the
user's own Panchayat and of another one, each with its exact expected HTTP status.

The table is data: ``EXPECTED`` maps ``"METHOD rule"`` (the rule as in ``app.url_map``) to
``{role: (status on own, status on other)}``. A route without an entry fails the test with a
message naming what to add; a URL parameter the test cannot fill names ``PARAMS``. Requests are
made so that the allowed roles get past every permission check and are then refused by the rule or
the form (422) or served (200/201/302), while nothing else in the case changes: the statuses
are the permission decision.

"own" is a running case of Panchayat RMP (Samiti SAM1), dispatched to the receiving officer;
"other" is a case of Panchayat FAR in another Samiti (SAM2). The users are RMP's pound keeper,
secretary and sarpanch, SAM1's appellate authority, the receiving officer, and RMP's
administrator; for routes without a case, own and other are the same request.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import select

from webapp.services.cases import cases
from webapp.services.papers import documents
from webapp.services.people import users
from webapp.services.tasks import tasks
from webapp.store.models import Case, CaseDocument, Delivery, Notification, ProcessVersion, User
from webapp.values import clock
from webapp.web.pages import diagrams

from .conftest import FAST_HASH, PASSWORD

ROLES = ("pound_keeper", "secretary", "sarpanch", "appellate_authority", "receiving_officer", "administrator",
         "anonymous")
USERNAMES = {"pound_keeper": "pk", "secretary": "sec", "sarpanch": "sar", "appellate_authority": "app",
             "receiving_officer": "recv", "administrator": "admin-rmp"}
OFFICERS = ROLES[:-1]


def every(status: int, anonymous: int | None = None, **overrides: tuple[int, int] | int) -> dict[str, tuple[int, int]]:
    """A row: ``status`` for own and other for every officer, ``anonymous`` for no sign-in, and
    per-role ``overrides`` (an int: the same for own and other; a pair: (own, other))."""
    row = {role: (status, status) for role in OFFICERS}
    row["anonymous"] = (anonymous, anonymous) if anonymous is not None else (status, status)
    for role, value in overrides.items():
        row[role] = value if isinstance(value, tuple) else (value, value)
    return row


SCOPED = (200, 404)  # sees its own Panchayat's case; another Panchayat's case is "not found"
API_REFUSED = (422, 404)  # allowed, then refused by the rule or the form (nothing changes); other: not found

EXPECTED: dict[str, dict[str, tuple[int, int]]] = {
    # public and operations
    "GET /board": every(200),
    "GET /board/<int:case_id>": every(404),  # no notice published yet: a case not on the board is not found
    "GET /health": every(200),
    "GET /static/<path:filename>": every(200),
    "GET /vendor/bpmn-js/<version>/<path:filename>": every(200),
    "GET /login": every(302, anonymous=200),
    "POST /login": every(200),  # an empty form: "the user name or the password is not right"
    "POST /logout": every(302),
    "GET /account/password": every(200, anonymous=302),
    "POST /account/password": every(422, anonymous=302),  # an empty form: "the present password is not right"
    "POST /language": every(302),  # no language chosen: back to the board with a message, nothing stored
    # officers' pages: a signed-in user, anonymous goes to the sign-in page
    "GET /": every(302),
    "GET /tasks": every(200, anonymous=302),
    "GET /cases": every(200, anonymous=302),
    "GET /inbox": every(200, anonymous=302),
    "POST /inbox/read": every(302),  # nothing chosen: back to the inbox with a message
    "GET /cases/new": every(403, anonymous=302, pound_keeper=200),
    "POST /cases/new": every(403, anonymous=302, pound_keeper=422),
    "GET /cases/<int:case_id>": every(302, pound_keeper=SCOPED, secretary=SCOPED, sarpanch=SCOPED,
                                      appellate_authority=SCOPED, receiving_officer=SCOPED,
                                      administrator=SCOPED),
    "GET /cases/<int:case_id>/diagram": every(302, pound_keeper=SCOPED, secretary=SCOPED, sarpanch=SCOPED,
                                              appellate_authority=SCOPED, receiving_officer=SCOPED,
                                              administrator=SCOPED),
    "GET /cases/<int:case_id>/notice": every(302, pound_keeper=SCOPED, secretary=SCOPED, sarpanch=SCOPED,
                                             appellate_authority=SCOPED, receiving_officer=SCOPED,
                                             administrator=SCOPED),
    # a document issued in the case (the world gives each case one): its printable page and its PDF;
    # another Panchayat's document is not found
    "GET /cases/<int:case_id>/documents/<int:document_id>": every(302, pound_keeper=SCOPED, secretary=SCOPED,
                                                                  sarpanch=SCOPED, appellate_authority=SCOPED,
                                                                  receiving_officer=SCOPED, administrator=SCOPED),
    "GET /cases/<int:case_id>/documents/<int:document_id>.pdf": every(302, pound_keeper=SCOPED, secretary=SCOPED,
                                                                      sarpanch=SCOPED, appellate_authority=SCOPED,
                                                                      receiving_officer=SCOPED,
                                                                      administrator=SCOPED),
    # the ready task is "Release cattle to owner" (pound keeper's lane)
    "GET /cases/<int:case_id>/tasks/<task_id>": every(302, pound_keeper=SCOPED, secretary=(403, 404),
                                                      sarpanch=(403, 404), appellate_authority=(403, 404),
                                                      receiving_officer=(403, 404), administrator=(403, 404)),
    "POST /cases/<int:case_id>/tasks/<task_id>": every(302, pound_keeper=(422, 404), secretary=(403, 404),
                                                       sarpanch=(403, 404), appellate_authority=(403, 404),
                                                       receiving_officer=(403, 404), administrator=(403, 404)),
    # claims on the ready "Release cattle to owner" (in the order the test runs: the API's claim,
    # reassign, release, then the pages'): the pound keeper claims it (any other role's claim is
    # 403), the sarpanch's reassignment without an officer is refused (the page says so on the
    # list: 302), the pound keeper releases it, after which nobody holds it (422)
    "POST /cases/<int:case_id>/tasks/<task_id>/claim": every(302, pound_keeper=(302, 404), secretary=(403, 404),
                                                             sarpanch=(403, 404), appellate_authority=(403, 404),
                                                             receiving_officer=(403, 404),
                                                             administrator=(403, 404)),
    "POST /cases/<int:case_id>/tasks/<task_id>/reassign": every(302, pound_keeper=(403, 404),
                                                                secretary=(403, 404), sarpanch=(302, 404),
                                                                appellate_authority=(403, 404),
                                                                receiving_officer=(403, 404),
                                                                administrator=(403, 404)),
    "POST /cases/<int:case_id>/tasks/<task_id>/release": every(302, pound_keeper=(302, 404), secretary=(422, 404),
                                                               sarpanch=(422, 404), appellate_authority=(422, 404),
                                                               receiving_officer=(422, 404),
                                                               administrator=(422, 404)),
    "POST /cases/<int:case_id>/objections": every(302, pound_keeper=(403, 404), secretary=(422, 404),
                                                  sarpanch=(403, 404), appellate_authority=(403, 404),
                                                  receiving_officer=(403, 404), administrator=(403, 404)),
    "POST /cases/<int:case_id>/appeals": every(302, pound_keeper=(403, 404), secretary=(422, 404),
                                               sarpanch=(403, 404), appellate_authority=(403, 404),
                                               receiving_officer=(403, 404), administrator=(403, 404)),
    "POST /cases/<int:case_id>/animal-events": every(302, pound_keeper=(422, 404), secretary=(403, 404),
                                                     sarpanch=(403, 404), appellate_authority=(403, 404),
                                                     receiving_officer=(403, 404), administrator=(403, 404)),
    # registers and statements: the Panchayat's own officers and administrators; another Panchayat's
    # books are "not found"; the appellate authority and the receiving officer keep none (403 for any code)
    "GET /registers": every(302, appellate_authority=403, receiving_officer=403),  # one Panchayat: to its page
    "GET /registers/<code>": every(302, pound_keeper=SCOPED, secretary=SCOPED, sarpanch=SCOPED, administrator=SCOPED,
                                   appellate_authority=403, receiving_officer=403),
    "GET /registers/<code>/<register>": every(302, pound_keeper=SCOPED, secretary=SCOPED, sarpanch=SCOPED,
                                              administrator=SCOPED, appellate_authority=403, receiving_officer=403),
    "GET /registers/<code>/<register>.csv": every(302, pound_keeper=SCOPED, secretary=SCOPED, sarpanch=SCOPED,
                                                  administrator=SCOPED, appellate_authority=403,
                                                  receiving_officer=403),
    # oversight of a Samiti or District: the appellate authority (its Samiti; another Samiti's
    # Panchayat "not found"); the Panchayat's officers, its administrator and the receiving officer 403
    "GET /oversight": every(403, anonymous=302, appellate_authority=200),
    "GET /oversight/panchayat/<code>": every(403, anonymous=302, appellate_authority=(200, 404)),
    "GET /oversight.csv": every(403, anonymous=302, appellate_authority=200),
    "GET /oversight/past-deadline.csv": every(403, anonymous=302, appellate_authority=200),
    "POST /cases/<int:case_id>/births": every(302, pound_keeper=(422, 404), secretary=(403, 404),
                                              sarpanch=(403, 404), appellate_authority=(403, 404),
                                              receiving_officer=(403, 404), administrator=(403, 404)),
    # ledger corrections: the secretary (an empty form: "choose the entry"), others 403
    "POST /cases/<int:case_id>/ledger/reversals": every(302, pound_keeper=(403, 404), secretary=(422, 404),
                                                        sarpanch=(403, 404), appellate_authority=(403, 404),
                                                        receiving_officer=(403, 404), administrator=(403, 404)),
    # naming another receiving officer: the secretary only (an empty form: "give the reason", 422)
    "POST /cases/<int:case_id>/receiving-officer": every(302, pound_keeper=(403, 404), secretary=(422, 404),
                                                         sarpanch=(403, 404), appellate_authority=(403, 404),
                                                         receiving_officer=(403, 404), administrator=(403, 404)),
    # a correction names its act: with none named, every officer who sees the case is told to choose
    # one (422); who may correct which act is decided by the act (tests/test_corrections.py)
    "POST /cases/<int:case_id>/corrections": every(302, pound_keeper=API_REFUSED, secretary=API_REFUSED,
                                                   sarpanch=API_REFUSED, appellate_authority=API_REFUSED,
                                                   receiving_officer=API_REFUSED, administrator=API_REFUSED),
    # the corrigendum: the secretary issues one of the opening record (the pound keeper's act); every
    # other role is forbidden; the secretary's is refused by the rule (422). No money is owed (404).
    "GET /cases/<int:case_id>/corrigenda/<act_ref>": every(302, pound_keeper=(403, 404), secretary=SCOPED,
                                                           sarpanch=(403, 404), appellate_authority=(403, 404),
                                                           receiving_officer=(403, 404), administrator=(403, 404)),
    "POST /cases/<int:case_id>/corrigenda/<act_ref>": every(302, pound_keeper=(403, 404), secretary=(422, 404),
                                                            sarpanch=(403, 404), appellate_authority=(403, 404),
                                                            receiving_officer=(403, 404), administrator=(403, 404)),
    "POST /cases/<int:case_id>/owed/<int:index>": every(302, pound_keeper=(403, 404), secretary=(404, 404),
                                                        sarpanch=(403, 404), appellate_authority=(403, 404),
                                                        receiving_officer=(403, 404), administrator=(403, 404)),
    # the training clock: only an officer of a training Panchayat has one; these are RMP's and
    # FAR's live officers, so it is not found for every one of them (tests/test_training.py)
    "GET /training/clock": every(404, anonymous=302),
    "POST /training/clock": every(404, anonymous=302),
    # diagrams
    "GET /processes/current": every(200, anonymous=302),
    "GET /processes/<int:version_id>/bpmn": every(200, anonymous=302),
    "GET /processes/<int:version_id>/picture-<language>.svg": every(200, anonymous=302),
    # administrators' pages
    "GET /admin/tokens": every(403, anonymous=302, administrator=200),
    "POST /admin/tokens/<int:token_id>/revoke": every(403, anonymous=302, administrator=(302, 404)),
    # tariffs: administrators, within their scope (RMP's administrator: RMP's rates; an empty form is refused)
    "GET /admin/tariffs": every(403, anonymous=302, administrator=200),
    "POST /admin/tariffs": every(403, anonymous=302, administrator=422),
    "GET /api/v1/tariffs": every(403, anonymous=401, administrator=200),
    "POST /api/v1/tariffs": every(403, anonymous=401, administrator=422),
    # officers: administrators, within their scope (RMP's administrator: RMP's secretary is theirs, FAR's
    # pound keeper is not found); an empty form or body is refused, the act asked is reactivate (sec is active)
    "GET /admin/officers": every(403, anonymous=302, administrator=200),
    "GET /admin/officers/<username>": every(403, anonymous=302, administrator=(200, 404)),
    "POST /admin/officers/<username>/<act_path>": every(403, anonymous=302, administrator=(422, 404)),
    "GET /admin/officers/export.csv": every(403, anonymous=302, administrator=200),
    "GET /admin/officers/import": every(403, anonymous=302, administrator=200),
    "POST /admin/officers/import": every(403, anonymous=302, administrator=422),
    "POST /admin/officers/new": every(403, anonymous=302, administrator=422),
    "GET /api/v1/officers": every(403, anonymous=401, administrator=200),
    "POST /api/v1/officers": every(403, anonymous=401, administrator=422),
    "POST /api/v1/officers/<username>/<act_path>": every(403, anonymous=401, administrator=(422, 404)),
    "POST /api/v1/officers/import": every(403, anonymous=401, administrator=422),
    # notifications (preferences: one's own channels; the delivery log: administrators)
    "GET /preferences": every(200, anonymous=302),
    "POST /preferences": every(302, anonymous=302),  # nothing chosen: saved as "inbox only"
    "GET /admin/deliveries": every(403, anonymous=302, administrator=200),
    # send a failed delivery again: RMP's administrator for a delivery to RMP's secretary (back to
    # the log); a delivery to FAR's pound keeper is outside their scope: not found
    "POST /admin/deliveries/<int:delivery_id>/retry": every(403, anonymous=302, administrator=(302, 404)),
    # monitoring: administrators, /metrics also with its own bearer token (none here)
    "GET /admin/timers": every(403, anonymous=302, administrator=200),
    "GET /metrics": every(401, administrator=403),  # RMP's administrator: the figures are installation-wide
    # incidents: administrators only (others 403 before anything is looked up); the id names no
    # incident here, so an administrator gets 404 — the incidents' own tests cover their scope
    "GET /admin/incidents": every(403, anonymous=302, administrator=200),
    "GET /admin/incidents/<int:incident_id>": every(403, anonymous=302, administrator=404),
    "POST /admin/incidents/<int:incident_id>/retry": every(403, anonymous=302, administrator=404),
    # an empty reason is refused before the incident is looked up: back to the page with the message
    "POST /admin/incidents/<int:incident_id>/skip": every(403, anonymous=302, administrator=302),
    # the modeler: installation-wide administrators only (RMP's administrator here is scoped: 403);
    # its JSON endpoints answer 401 without a sign-in
    "GET /admin/processes": every(403, anonymous=302),
    "GET /admin/processes/<process_id>": every(403, anonymous=302),
    "GET /admin/processes/<process_id>/source": every(403, anonymous=401),
    "POST /admin/processes/<process_id>/validate": every(403, anonymous=401),
    "POST /admin/processes/<process_id>/draft": every(403, anonymous=401),
    "POST /admin/processes/<process_id>/draft/discard": every(403, anonymous=401),
    "POST /admin/processes/<process_id>/deploy": every(403, anonymous=401),
    "POST /admin/processes/<process_id>/forms/preview": every(403, anonymous=401),
    "POST /api/v1/process-versions": every(403, anonymous=401),
    # the JSON API: bearer tokens, anonymous 401
    "GET /api/v1/openapi.json": every(200),
    "GET /api/v1/me": every(200, anonymous=401),
    "GET /api/v1/tasks": every(200, anonymous=401),
    "GET /api/v1/oversight": every(403, anonymous=401, appellate_authority=200),
    "GET /api/v1/cases": every(200, anonymous=401),
    "POST /api/v1/cases": every(403, anonymous=401, pound_keeper=422),
    # the pages that bring a running paper case in (one, or several from a CSV file): the secretary
    # and the sarpanch of a Panchayat; an empty form is refused
    "GET /paper-cases/new": every(403, anonymous=302, secretary=200, sarpanch=200),
    "POST /paper-cases/new": every(403, anonymous=302, secretary=422, sarpanch=422),
    "GET /paper-cases/upload": every(403, anonymous=302, secretary=200, sarpanch=200),
    "POST /paper-cases/upload": every(403, anonymous=302, secretary=422, sarpanch=422),
    # a running paper case brought in: the secretary or sarpanch of a Panchayat (an empty body is refused)
    "POST /api/v1/paper-cases": every(403, anonymous=401, secretary=422, sarpanch=422),
    "GET /api/v1/cases/<path:case_ref>": every(401, pound_keeper=SCOPED, secretary=SCOPED, sarpanch=SCOPED,
                                               appellate_authority=SCOPED, receiving_officer=SCOPED,
                                               administrator=SCOPED),
    "GET /api/v1/cases/<path:case_ref>/tasks/<task_id>": every(401, pound_keeper=SCOPED, secretary=(403, 404),
                                                               sarpanch=(403, 404),
                                                               appellate_authority=(403, 404),
                                                               receiving_officer=(403, 404),
                                                               administrator=(403, 404)),
    "POST /api/v1/cases/<path:case_ref>/tasks/<task_id>": every(401, pound_keeper=API_REFUSED,
                                                                secretary=(403, 404), sarpanch=(403, 404),
                                                                appellate_authority=(403, 404),
                                                                receiving_officer=(403, 404),
                                                                administrator=(403, 404)),
    "POST /api/v1/cases/<path:case_ref>/tasks/<task_id>/claim": every(401, pound_keeper=(200, 404),
                                                                      secretary=(403, 404), sarpanch=(403, 404),
                                                                      appellate_authority=(403, 404),
                                                                      receiving_officer=(403, 404),
                                                                      administrator=(403, 404)),
    "POST /api/v1/cases/<path:case_ref>/tasks/<task_id>/reassign": every(401, pound_keeper=(403, 404),
                                                                         secretary=(403, 404), sarpanch=API_REFUSED,
                                                                         appellate_authority=(403, 404),
                                                                         receiving_officer=(403, 404),
                                                                         administrator=(403, 404)),
    "POST /api/v1/cases/<path:case_ref>/tasks/<task_id>/release": every(401, pound_keeper=(200, 404),
                                                                        secretary=API_REFUSED, sarpanch=API_REFUSED,
                                                                        appellate_authority=API_REFUSED,
                                                                        receiving_officer=API_REFUSED,
                                                                        administrator=API_REFUSED),
    "POST /api/v1/cases/<path:case_ref>/acts/<element_id>": every(401, pound_keeper=API_REFUSED,
                                                                  secretary=(403, 404), sarpanch=(403, 404),
                                                                  appellate_authority=(403, 404),
                                                                  receiving_officer=(403, 404),
                                                                  administrator=(403, 404)),
    "POST /api/v1/cases/<path:case_ref>/objections": every(401, pound_keeper=(403, 404), secretary=API_REFUSED,
                                                           sarpanch=(403, 404), appellate_authority=(403, 404),
                                                           receiving_officer=(403, 404),
                                                           administrator=(403, 404)),
    "POST /api/v1/cases/<path:case_ref>/appeals": every(401, pound_keeper=(403, 404), secretary=API_REFUSED,
                                                        sarpanch=(403, 404), appellate_authority=(403, 404),
                                                        receiving_officer=(403, 404), administrator=(403, 404)),
    "POST /api/v1/cases/<path:case_ref>/animal-events": every(401, pound_keeper=API_REFUSED,
                                                              secretary=(403, 404), sarpanch=(403, 404),
                                                              appellate_authority=(403, 404),
                                                              receiving_officer=(403, 404),
                                                              administrator=(403, 404)),
    "GET /api/v1/cases/<path:case_ref>/corrections": every(401, pound_keeper=SCOPED, secretary=SCOPED,
                                                           sarpanch=SCOPED, appellate_authority=SCOPED,
                                                           receiving_officer=SCOPED, administrator=SCOPED),
    "POST /api/v1/cases/<path:case_ref>/corrections": every(401, pound_keeper=API_REFUSED, secretary=API_REFUSED,
                                                            sarpanch=API_REFUSED, appellate_authority=API_REFUSED,
                                                            receiving_officer=API_REFUSED,
                                                            administrator=API_REFUSED),
    "GET /api/v1/cases/<path:case_ref>/corrigenda/<act_ref>": every(401, pound_keeper=(403, 404), secretary=SCOPED,
                                                                   sarpanch=(403, 404), appellate_authority=(403, 404),
                                                                   receiving_officer=(403, 404),
                                                                   administrator=(403, 404)),
    "POST /api/v1/cases/<path:case_ref>/corrigenda": every(401, pound_keeper=(403, 404), secretary=API_REFUSED,
                                                           sarpanch=(403, 404), appellate_authority=(403, 404),
                                                           receiving_officer=(403, 404), administrator=(403, 404)),
    "POST /api/v1/cases/<path:case_ref>/owed/<index>/settle": every(401, pound_keeper=(403, 404),
                                                                        secretary=(404, 404), sarpanch=(403, 404),
                                                                        appellate_authority=(403, 404),
                                                                        receiving_officer=(403, 404),
                                                                        administrator=(403, 404)),
    "POST /api/v1/cases/<path:case_ref>/receiving-officer": every(401, pound_keeper=(403, 404),
                                                                  secretary=API_REFUSED, sarpanch=(403, 404),
                                                                  appellate_authority=(403, 404),
                                                                  receiving_officer=(403, 404),
                                                                  administrator=(403, 404)),
    "POST /api/v1/cases/<path:case_ref>/ledger/reversals": every(401, pound_keeper=(403, 404),
                                                                 secretary=API_REFUSED, sarpanch=(403, 404),
                                                                 appellate_authority=(403, 404),
                                                                 receiving_officer=(403, 404),
                                                                 administrator=(403, 404)),
    # process versions: installation-wide administrators only (RMP's administrator is refused too)
    "GET /admin/processes/<process_id>/versions": every(403, anonymous=302),
    "GET /admin/processes/<process_id>/versions/<int:number>/download": every(403, anonymous=302),
    "GET /admin/processes/<process_id>/versions/diff": every(403, anonymous=302),
    "POST /admin/processes/<process_id>/versions/<int:number>/redeploy": every(403, anonymous=302),
    "GET /admin/processes/<process_id>/versions/<int:number>/migrate": every(403, anonymous=302),
    "POST /admin/processes/<process_id>/versions/<int:number>/migrate": every(403, anonymous=302),
    "GET /api/v1/processes": every(403, anonymous=401),
    "GET /api/v1/processes/<process_id>/versions": every(403, anonymous=401),
    "GET /api/v1/processes/<process_id>/versions/<int:number>/download": every(403, anonymous=401),
    "GET /api/v1/processes/<process_id>/versions/diff": every(403, anonymous=401),
    "POST /api/v1/processes/<process_id>/versions/<int:number>/redeploy": every(403, anonymous=401),
    "GET /api/v1/processes/<process_id>/versions/<int:number>/migration": every(403, anonymous=401),
    "POST /api/v1/processes/<process_id>/versions/<int:number>/migration": every(403, anonymous=401),
    "GET /api/v1/processes/<process_id>/audit": every(403, anonymous=401),
}

# Request bodies where an empty one would not do (key as in EXPECTED); the default is an empty form
# for pages and {} for the API. Each must be refused after the permission checks, or change nothing.
BODIES: dict[str, Any] = {
    "POST /api/v1/cases/<path:case_ref>/animal-events": {"kind": "death", "tag": "NO-SUCH-TAG"},
    "POST /cases/<int:case_id>/animal-events": {"kind": "death", "animal": "99"},
    "POST /cases/<int:case_id>/births": {"mother": "99"},
    # a corrigendum of the opening record that the rule refuses (another instant: another course)
    "POST /cases/<int:case_id>/corrigenda/<act_ref>": {"new.impounded_at": "2020-01-01T10:00:00+05:30",
                                                       "reason": "matrix"},
    "POST /api/v1/cases/<path:case_ref>/corrigenda": {"act": "opening", "reason": "matrix",
                                                      "values": {"impounded_at": "2020-01-01T10:00:00+05:30"}},
}


class World:
    """The two cases, their ready tasks, and per-request values for URL parameters."""

    def __init__(self, sessions, own: Case, other: Case, own_task: str, other_task: str, version_id: int):
        self.sessions, self.own, self.other = sessions, own, other
        self.own_task, self.other_task, self.version_id = own_task, other_task, version_id

    def case(self, side: str) -> Case:
        return self.own if side == "own" else self.other

    def fresh_token_id(self, side: str) -> int:
        """A token of a user of that side's Panchayat, made for this request (revoking it changes nothing else)."""
        with self.sessions() as session:
            row, _ = users.issue_token(session, "sec" if side == "own" else "pk-far")
            session.commit()
            return row.id


    def failed_delivery_id(self, side: str) -> int:
        """A failed e-mail delivery to a user of that side's Panchayat (RMP's secretary or FAR's
        pound keeper), made for this request."""
        now = clock.now()
        with self.sessions() as session:
            user = session.scalar(select(User).where(User.username == ("sec" if side == "own" else "pk-far")))
            note = Notification(user_id=user.id, case_id=self.case(side).id, template="task_ready", message="test",
                                created_at=now)
            row = Delivery(notification=note, channel="email", target="x@example.org", status="failed",
                           attempts=5, next_attempt_at=now, last_error="refused", created_at=now)
            session.add_all([note, row])
            session.commit()
            return row.id


# URL parameter name -> (world, "own" | "other") -> value
PARAMS: dict[str, Callable[[World, str], Any]] = {
    "case_id": lambda w, side: w.case(side).id,
    "case_ref": lambda w, side: str(w.case(side).id),
    "task_id": lambda w, side: w.own_task if side == "own" else w.other_task,
    "element_id": lambda w, side: "ut_release",
    "version_id": lambda w, side: w.version_id,
    "token_id": lambda w, side: w.fresh_token_id(side),
    "delivery_id": lambda w, side: w.failed_delivery_id(side),
    "filename": lambda w, side: None,  # per rule, below
    "incident_id": lambda w, side: 999_999_999,  # no such incident (see EXPECTED)
    "process_id": lambda w, side: "rule130_case",
    "number": lambda w, side: 1,
    "code": lambda w, side: "RMP" if side == "own" else "FAR",  # a Panchayat's registers
    "register": lambda w, side: "statement",
    "document_id": lambda w, side: w.documents[side],
    "version": lambda w, side: diagrams.bpmn_js_version(),  # the installed bpmn-js
    "act_ref": lambda w, side: "opening",  # the opening record (webapp.services.cases.corrigenda)
    "index": lambda w, side: 1,  # money owed under a corrigendum: the world's cases owe none
    "username": lambda w, side: "sec" if side == "own" else "pk-far",
    "act_path": lambda w, side: "reactivate",
    "language": lambda w, side: "en",  # a version's picture (diagrams.process_svg)
}
FILENAMES = {"/static/<path:filename>": "style.css",
             "/vendor/bpmn-js/<version>/<path:filename>": "bpmn-navigated-viewer.production.min.js"}

ANIMALS = [{"species": "cow", "description": "brown cow", "tag": "RJ-1"}]


@pytest.fixture
def world(sessions, officers, virtual_clock):
    with sessions() as session:
        users.create_user(session, "admin-rmp", PASSWORD, "administrator", panchayat_code="RMP",
                          password_method=FAST_HASH)
        far_keeper = users.create_user(session, "pk-far", PASSWORD, "pound_keeper", panchayat_code="FAR",
                                       password_method=FAST_HASH)
        keeper = session.scalar(select(User).where(User.username == "pk"))
        place = {"impounded_at": clock.now(), "place_seized": "Bhimpura", "place_impounded": "Kanji House",
                 "nearest_village": "Bhimpura", "animals": ANIMALS}
        own = cases.start_case(session, keeper, **place)
        other = cases.start_case(session, far_keeper, **place)
        session.flush()
        # the receiving officer's scope is the cases dispatched to them: give them the own case
        own.receiving_officer_id = session.scalar(select(User.id).where(User.username == "recv"))
        session.commit()
        own_task = tasks.case_tasks(session, own)[0]
        other_task = tasks.case_tasks(session, other)[0]
        assert own_task.element_id == other_task.element_id == "ut_release"
        version_id = session.scalar(select(ProcessVersion.id).order_by(ProcessVersion.id.desc()))
        world = World(sessions, own, other, own_task.task_id, other_task.task_id, version_id)
        world.documents = {side: _document(session, case) for side, case in (("own", own), ("other", other))}
        session.commit()
        return world


def _document(session, case: Case) -> int:
    """A stored document of ``case`` (as webapp.services.papers.documents keeps one), for the document routes."""
    html = f"<article class=\"document\"><h1>Notice of impounded cattle</h1><p>{case.case_number}</p></article>\n"
    row = CaseDocument(case_id=case.id, key="notice", kind="notice", number=f"{case.case_number}/N1", language="en",
                       title="Notice of impounded cattle", clause="Rule 130(a) and (b)", issued_at=clock.now(),
                       issued_by=None, html=html, sha256=documents.sha256(html))
    session.add(row)
    session.flush()  # written in bulk (webapp.store.append): the row keeps no id; read it back
    return session.scalar(select(CaseDocument.id).where(CaseDocument.case_id == case.id,
                                                        CaseDocument.number == row.number))


@pytest.fixture
def matrix_app(database_url, world):
    from webapp import create_app
    app = create_app({"TESTING": True, "DATABASE_URL": database_url, "SECRET_KEY": "test",
                      "WTF_CSRF_ENABLED": False, "LOGIN_RATE_LIMIT": "10000 per minute"})
    yield app
    app.extensions["rule130.engine"].dispose()


def _operations(app) -> list[tuple[str, str]]:
    return sorted({(method, rule.rule) for rule in app.url_map.iter_rules()
                   for method in (rule.methods or ()) if method not in ("HEAD", "OPTIONS")},
                  key=lambda op: (op[1], op[0]))


def test_every_route_has_an_expected_row_for_every_role(matrix_app):
    missing = [f"{method} {rule}" for method, rule in _operations(matrix_app) if f"{method} {rule}" not in EXPECTED]
    assert not missing, (
        "routes without an authorization expectation: add each to EXPECTED in "
        "tests/test_authorization_matrix.py as '\"METHOD rule\": every(status, anonymous=..., role=(own, other))' "
        f"(and a URL parameter the test cannot fill to PARAMS): {missing}")
    stale = sorted(set(EXPECTED) - {f"{m} {r}" for m, r in _operations(matrix_app)})
    assert not stale, f"EXPECTED names routes the app no longer serves; remove them: {stale}"
    for key, row in EXPECTED.items():
        assert set(row) == set(ROLES), f"{key}: the row must name every role {ROLES}"


def _url(rule, world: World, side: str) -> str:
    values = {}
    for name in rule.arguments:
        if name not in PARAMS:
            pytest.fail(f"{rule.rule}: no value for the URL parameter {name!r}; add it to PARAMS in "
                        "tests/test_authorization_matrix.py")
        values[name] = FILENAMES[rule.rule] if name == "filename" else PARAMS[name](world, side)
    built = rule.build(values, append_unknown=False)
    assert built is not None, (rule.rule, values)
    return built[1]


def _sign_in(app, username: str | None):
    client = app.test_client()
    if username is not None:
        response = client.post("/login", data={"username": username, "password": PASSWORD})
        assert response.status_code == 302, response.get_data(as_text=True)[:300]
    return client


def test_authorization_matrix(matrix_app, world, sessions):
    tokens = {}
    with sessions() as session:
        for role, username in USERNAMES.items():
            tokens[role] = users.create_token(session, username)
        session.commit()
    clients = {role: _sign_in(matrix_app, USERNAMES.get(role)) for role in ROLES}
    rules = {(method, rule.rule): rule for rule in matrix_app.url_map.iter_rules()
             for method in (rule.methods or ())}
    mismatches, checked = [], 0
    for method, rule_text in _operations(matrix_app):
        key = f"{method} {rule_text}"
        rule = rules[(method, rule_text)]
        api = rule_text.startswith("/api/")
        for role in ROLES:
            for index, side in enumerate(("own", "other")):
                url = _url(rule, world, side)
                kwargs: dict[str, Any] = {}
                body = BODIES.get(key, {})
                if method == "POST":
                    kwargs["json" if api else "data"] = body
                client = clients[role]
                if api and role != "anonymous":
                    kwargs["headers"] = {"Authorization": f"Bearer {tokens[role]}"}
                if key == "POST /logout":
                    client = _sign_in(matrix_app, USERNAMES.get(role))  # do not sign out the shared client
                response = client.open(url, method=method, **kwargs)
                if key == "POST /logout":  # signing out ends every session of the officer: sign in again
                    clients[role] = _sign_in(matrix_app, USERNAMES.get(role))
                checked += 1
                expected = EXPECTED[key][role][index]
                if response.status_code != expected:
                    mismatches.append(f"{key} as {role} ({side} Panchayat, {url}): "
                                      f"{response.status_code}, expected {expected}")
    with sessions() as session:  # nothing in either case changed (refusals only add history)
        for case in (world.own, world.other):
            now = session.get(Case, case.id)
            assert (now.lock_version, now.state_json) == (case.lock_version, case.state_json)
    print(f"authorization matrix: {len(_operations(matrix_app))} route × method pairs, {len(ROLES)} roles, "
          f"own/other Panchayat: {checked} requests")
    assert not mismatches, "\n".join(mismatches)
