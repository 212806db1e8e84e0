"""Administering officers: create, deactivate, reactivate, reset a password, change a role, and
transfer to another Panchayat naming a successor (issue 31, item 1). The pages
(:mod:`webapp.web.admin.officers`), the API and the command line (:mod:`webapp.cli.users`) call these
functions, and nothing else changes an officer's account.

Who may act (RULE130.md, "Roles, lanes and scope"): an administrator within their own scope — an
installation's (everyone), a District's (its Panchayats and Samitis:
:data:`webapp.services.people.users.DISTRICT_SCOPE`), a Samiti's (its Panchayats and its
Samiti-level officers) or a Panchayat's (its officers); ``admin=None`` is the command line, which
acts for the installation. Another administrator's account is managed only from a wider scope than
theirs (a Samiti's administrator manages a Panchayat's administrators, never another Samiti
administrator, nor themselves), so nobody raises their own role or brings back a deactivated peer;
an administrator may deactivate themselves only while another active administrator of their scope
or a wider one remains.

Tasks are never stranded: an officer who leaves a lane (deactivated, transferred, given another
role) hands each open task they hold (claimed or assigned by the sarpanch) to the named successor —
an active officer of the same role in the same Panchayat (or Samiti) — or, with no successor, back
to the lane, where the other officers of the role can take it. When nobody else of the role would
remain to act on the lane's open tasks, a successor is required. Each handed-over task's case
history says so (``Task handed over``), and both officers are told.

Every act is written in the audit trail (``officer.<act>``, naming the administrator), besides the
entries the trail writes itself for a changed account (:mod:`webapp.store.audit`).

Every function takes the session of the caller's unit of work, returns an :class:`Outcome` (plain
texts, usable after the transaction) and raises a :class:`webapp.errors.Rule130Error` that changes
nothing when refused: :func:`check` runs the same function and rolls it back (the check step).
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, or_, select, update
from sqlalchemy.orm import Session, sessionmaker

from webapp.errors import NotFound, NotPermitted, Refused
from webapp.i18n import M_, Message
from webapp.services.notify import notifications
from webapp.services.people import users
from webapp.store import audit, db
from webapp.store.db import rows_matched
from webapp.store.models import CaseEvent, CaseTask, Panchayat, User
from webapp.values import clock, textguard

READY = "ready"
ACTS = ("create", "deactivate", "reactivate", "reset_password", "change_role", "transfer")
ROLE_CHANGES = ("pound_keeper", "secretary", "sarpanch", "appellate_authority", "administrator")
"""The roles an account may be given by :func:`change_role` (a receiving officer is an account of
its own: a new one is made for the post)."""
FIRST_PASSWORD_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"  # no 0/o, 1/l/i: read aloud, typed on a phone


@dataclass
class Outcome:
    """What an act did (or, in the check step, would do): the officer's user name, the lines that say
    what follows, the tasks handed over as ``(case number, task title)``, and the first password of
    a new officer or a reset (shown once; None otherwise, and always None in the check step)."""

    act: str
    officer: str
    follows: list[Message] = field(default_factory=list)
    handed_over: list[tuple[str, str]] = field(default_factory=list)
    first_password: str | None = None


# -- scope ---------------------------------------------------------------------------------------

def _rank(user: User | None) -> int:
    """How wide a scope is: 4 the command line, 3 an installation's, 2 a District's, 1 a Samiti's,
    0 a Panchayat's."""
    if user is None:
        return 4
    if user.panchayat_id is not None:
        return 0
    if user.samiti_code is None:
        return 3
    return 2 if users.is_district_admin(user) else 1


def scope_name(session: Session, admin: User | None) -> Message:
    """The administrator's scope in words: the installation, District X, Samiti X, Gram Panchayat X."""
    if admin is None or (admin.panchayat_id is None and admin.samiti_code is None):
        return M_("the whole installation")
    if admin.panchayat_id is not None:
        panchayat = session.get(Panchayat, admin.panchayat_id)
        return M_("Gram Panchayat %(name)s", name=panchayat.name if panchayat else admin.panchayat_id)
    if users.is_district_admin(admin):
        return M_("District %(name)s", name=admin.district)
    return M_("Samiti %(name)s", name=admin.samiti_code)


def _require_admin(admin: User | None) -> None:
    if admin is not None and admin.role != "administrator":
        raise NotPermitted(M_("only an administrator manages officers; you are signed in as %(role)s",
                              role=M_(admin.role.replace("_", " "))))
    if admin is not None and not admin.active:
        raise NotPermitted(M_("your account is inactive: an inactive administrator manages nobody"))


def managed_panchayats(session: Session, admin: User | None) -> list[Panchayat]:
    """The Panchayats (not put away) whose officers ``admin`` manages, by code."""
    query = select(Panchayat).where(Panchayat.archived_at.is_(None)).order_by(Panchayat.code)
    if admin is None or (admin.panchayat_id is None and admin.samiti_code is None):
        return list(session.scalars(query))
    if admin.role != "administrator":
        return []
    if admin.panchayat_id is not None:
        return list(session.scalars(query.where(Panchayat.id == admin.panchayat_id)))
    if users.is_district_admin(admin):
        return list(session.scalars(query.where(Panchayat.district == admin.district)))
    return list(session.scalars(query.where(Panchayat.samiti_code == admin.samiti_code)))


def _panchayat_in_scope(session: Session, admin: User | None, code: object, field_name: str = "panchayat") -> Panchayat:
    text = code.strip() if isinstance(code, str) else ""
    panchayat = session.scalar(select(Panchayat).where(Panchayat.code == text)) if text else None
    if panchayat is None or panchayat.archived_at is not None:
        raise Refused(M_("no Panchayat has the code %(code)s", code=repr(text)), {field_name: M_("unknown Panchayat")})
    if panchayat not in managed_panchayats(session, admin):
        raise NotPermitted(M_("the Panchayat %(code)s is outside your scope (%(scope)s); an administrator of its "
                              "Samiti or District may act there", code=panchayat.code,
                              scope=scope_name(session, admin)), field=field_name)
    return panchayat


def _may_manage(session: Session, admin: User | None, officer: User) -> bool:
    return admin is None or users.can_manage_user(session, admin, officer)


def officers(session: Session, admin: User | None, *, search: str = "", panchayat_code: str = "",
             include_inactive: bool = True) -> list[User]:
    """The officers ``admin`` manages (never the users the simulator made), by Panchayat then user
    name; ``search`` matches the user name or display name (any case), ``panchayat_code`` one Panchayat."""
    _require_admin(admin)
    query = select(User).where(User.simulated.is_(False))
    if admin is not None:
        query = query.where(users.managed_users(admin))
    if not include_inactive:
        query = query.where(User.active.is_(True))
    if search.strip():
        like = f"%{search.strip().lower()[:80]}%"
        query = query.where(or_(func.lower(User.username).like(like), func.lower(User.display_name).like(like)))
    if panchayat_code.strip():
        query = query.where(User.panchayat_id == select(Panchayat.id).where(
            Panchayat.code == panchayat_code.strip()).scalar_subquery())
    return list(session.scalars(query.order_by(User.panchayat_id, User.username)))


def get_officer(session: Session, admin: User | None, username: object, field_name: str = "username") -> User:
    """The officer ``username`` (any case, blanks around ignored) if ``admin`` manages them.

    Raises:
        NotFound: unknown, made by the simulator, or outside the scope (never says which).
    """
    _require_admin(admin)
    text = username.strip() if isinstance(username, str) else ""
    user = session.scalar(select(User).where(func.lower(User.username) == text.lower())) if text else None
    if user is None or user.simulated or not _may_manage(session, admin, user):
        raise NotFound(M_("no officer %(name)s is within your scope (%(scope)s)", name=text or "—",
                          scope=scope_name(session, admin)), field=field_name)
    return user


def _check_account_of_admin(session: Session, admin: User | None, officer: User, act: Message) -> None:
    """Another administrator's account is managed only from a wider scope (module docstring)."""
    if admin is None or officer.role != "administrator":
        return
    if officer.id == admin.id:
        raise NotPermitted(M_("not on your own account (%(act)s): an administrator of a wider scope acts on it",
                              act=act))
    if _rank(officer) >= _rank(admin):
        raise NotPermitted(M_("%(name)s is an administrator of %(scope)s, as wide as yours: only an administrator of "
                              "a wider scope (or the command line) acts on their account (%(act)s)",
                              name=officer.username, scope=scope_name(session, officer), act=act))


def _audit(session: Session, admin: User | None, act: str, officer: User, **detail: Any) -> None:
    audit.record(session, f"officer.{act}", actor=admin.username if admin is not None else None,
                 detail={"officer": officer.username, **{k: v for k, v in detail.items() if v is not None}})


def first_password() -> str:
    """A first password for a new officer or a reset: four groups of four letters and digits from
    :data:`FIRST_PASSWORD_ALPHABET` (about 99 bits, from :mod:`secrets`), such as ``k7mq-2xpa-...``."""
    return "-".join("".join(secrets.choice(FIRST_PASSWORD_ALPHABET) for _ in range(4)) for _ in range(4))


# -- create ----------------------------------------------------------------------------------------

def check_new(session: Session, admin: User | None, username: object, role: object, *, display_name: object = "",
              panchayat_code: object = "", samiti_code: object = "", district: object = "") -> dict[str, str]:
    """Check a new officer without writing anything: the cleaned values (``username``,
    ``display_name``, ``role``, ``panchayat_code``, ``samiti_code``, ``district``; empty texts for
    none).

    Raises:
        Refused: a malformed or taken user name (any case, blanks around ignored), an unknown role,
            a missing or unknown scope; each names its field.
        NotPermitted: a Panchayat, Samiti or District outside ``admin``'s scope, or an administrator
            of a scope as wide as ``admin``'s own.
    """
    _require_admin(admin)
    values = {"username": username, "display_name": display_name, "role": role, "panchayat_code": panchayat_code,
              "samiti_code": samiti_code, "district": district}
    for key, value in values.items():
        if value is None:
            values[key] = ""
        elif not isinstance(value, str):
            raise Refused(M_("%(field)s must be text", field=key), {key: M_("not text")})
    clean = {key: str(value).strip() for key, value in values.items()}
    name = clean["username"]
    if not name or len(name) > 80 or not users.USERNAME.fullmatch(name):
        raise Refused(M_("a user name is 1 to 80 of the letters a-z and A-Z, digits, '.', '-' and '_' (no spaces), "
                         "not %(name)s", name=repr(name)), {"username": M_("letters, digits, . - _")})
    taken = session.scalar(select(User).where(func.lower(User.username) == name.lower()))
    if taken is not None:  # "Sec" beside "sec", " sec" beside "sec": told apart by nobody
        raise Refused(M_("the user name %(name)s is taken by %(taken)s (user names differing only in case or "
                         "blanks are the same)", name=name, taken=taken.username), {"username": M_("taken")})
    for key, label in (("display_name", M_("the display name")), ("district", M_("the district"))):
        textguard.check(clean[key], key, label)
        textguard.check_one_line(clean[key], key, label)
    if len(clean["display_name"]) > 200:
        raise Refused(M_("a display name has at most 200 characters"), {"display_name": M_("at most 200 characters")})
    if clean["role"] not in users.ROLES:
        raise Refused(M_("unknown role %(role)s; roles are %(roles)s", role=repr(clean["role"]),
                         roles=", ".join(users.ROLES)), {"role": M_("unknown role")})
    role = clean["role"]
    given = [key for key in ("panchayat_code", "samiti_code", "district") if clean[key]]
    if len(given) > 1:
        raise Refused(M_("give one of a Panchayat, a Samiti or a District, not more"), {given[1]: M_("one only")})
    if role in users.PANCHAYAT_ROLES and not clean["panchayat_code"]:
        raise Refused(M_("a %(role)s needs a Panchayat", role=M_(role.replace("_", " "))),
                      {"panchayat_code": M_("required")})
    if role == "appellate_authority" and not clean["samiti_code"]:
        raise Refused(M_("an appellate authority needs a Samiti"), {"samiti_code": M_("required")})
    if clean["district"] and role != "administrator":
        raise Refused(M_("only an administrator may have a District"), {"district": M_("an administrator's only")})
    new_rank = 3
    if clean["panchayat_code"]:
        _panchayat_in_scope(session, admin, clean["panchayat_code"], "panchayat_code")
        new_rank = 0
    elif clean["samiti_code"]:
        in_samiti = [p for p in managed_panchayats(session, admin) if p.samiti_code == clean["samiti_code"]]
        known = session.scalar(select(Panchayat.id).where(Panchayat.samiti_code == clean["samiti_code"]).limit(1))
        if known is None:
            raise Refused(M_("no Panchayat is in Samiti %(code)s", code=repr(clean["samiti_code"])),
                          {"samiti_code": M_("unknown Samiti")})
        everything = session.scalar(select(func.count()).select_from(Panchayat)
                                    .where(Panchayat.samiti_code == clean["samiti_code"]))
        if len(in_samiti) != everything or (admin is not None and _rank(admin) < 1):
            raise NotPermitted(M_("the Samiti %(code)s is outside your scope (%(scope)s)", code=clean["samiti_code"],
                                  scope=scope_name(session, admin)), field="samiti_code")
        new_rank = 1
    elif clean["district"]:
        in_district = [p for p in managed_panchayats(session, admin) if p.district == clean["district"]]
        if not in_district:
            known = session.scalar(select(Panchayat.id).where(Panchayat.district == clean["district"]).limit(1))
            if known is None:
                raise Refused(M_("no Panchayat is in the district %(district)s", district=repr(clean["district"])),
                              {"district": M_("unknown district")})
        if admin is not None and _rank(admin) < 3:
            raise NotPermitted(M_("the District %(name)s is outside your scope (%(scope)s)", name=clean["district"],
                                  scope=scope_name(session, admin)), field="district")
        new_rank = 2
    elif role != "administrator" and role != "receiving_officer":
        raise Refused(M_("a %(role)s needs a Panchayat", role=M_(role.replace("_", " "))),
                      {"panchayat_code": M_("required")})
    if admin is not None and role == "administrator" and new_rank >= _rank(admin):
        raise NotPermitted(M_("an administrator of a scope as wide as yours (%(scope)s) is made only by an "
                              "administrator of a wider scope", scope=scope_name(session, admin)), field="role")
    if admin is not None and role != "administrator" and new_rank > _rank(admin):
        raise NotPermitted(M_("an officer of the whole installation is made only by an installation "
                              "administrator"), field="role")
    return clean


def create(session: Session, admin: User | None, username: object, role: object, *, display_name: object = "",
           panchayat_code: object = "", samiti_code: object = "", district: object = "",
           password_method: str = users.PASSWORD_METHOD) -> Outcome:
    """Create an officer with a first password (:func:`first_password`) they must change at their
    first sign-in. Checks as :func:`check_new`; the caller commits.

    Returns the outcome with ``first_password`` (to be given to the officer once; only its hash is kept).
    """
    clean = check_new(session, admin, username, role, display_name=display_name, panchayat_code=panchayat_code,
                      samiti_code=samiti_code, district=district)
    password = first_password()
    user = users.create_user(session, clean["username"], password, clean["role"],
                             display_name=clean["display_name"] or None,
                             panchayat_code=clean["panchayat_code"] or None, samiti_code=clean["samiti_code"] or None,
                             district=clean["district"] or None, password_method=password_method,
                             must_change_password=True)
    _audit(session, admin, "created", user, role=user.role, panchayat=clean["panchayat_code"] or None,
           samiti=clean["samiti_code"] or None, district=clean["district"] or None)
    session.flush()
    where = (M_("Gram Panchayat %(name)s", name=clean["panchayat_code"]) if clean["panchayat_code"] else
             M_("Samiti %(name)s", name=clean["samiti_code"]) if clean["samiti_code"] else
             M_("District %(name)s", name=clean["district"]) if clean["district"] else M_("the whole installation"))
    return Outcome("create", user.username, [
        M_("%(name)s (%(username)s) becomes a %(role)s of %(where)s.", name=user.display_name,
           username=user.username, role=M_(user.role.replace("_", " ")), where=where),
        M_("A first password is shown once, to give to the officer; they must choose their own at the first "
           "sign-in.")], first_password=password)


# -- handing over tasks ----------------------------------------------------------------------------

def _peers(session: Session, officer: User, exclude: set[int]) -> list[User]:
    """The other active officers who could act on the officer's lane in the officer's present scope."""
    query = select(User).where(User.role == officer.role, User.active.is_(True), User.simulated.is_(False),
                               User.id.not_in(exclude))
    if officer.panchayat_id is not None:
        query = query.where(User.panchayat_id == officer.panchayat_id)
    elif officer.samiti_code is not None:
        query = query.where(User.panchayat_id.is_(None), User.samiti_code == officer.samiti_code)
    else:
        return []
    return list(session.scalars(query.order_by(User.username)))


def _lane_tasks(session: Session, officer: User) -> Any:
    """The open tasks of the officer's lane in their present scope (a SQL condition on CaseTask)."""
    lane = (CaseTask.state == READY) & (CaseTask.lane == officer.role)
    if officer.role == "receiving_officer":
        return lane & (CaseTask.receiver_id == officer.id)
    if officer.panchayat_id is not None:
        return lane & (CaseTask.panchayat_id == officer.panchayat_id)
    if officer.samiti_code is not None and officer.role == "appellate_authority":
        return lane & CaseTask.panchayat_id.in_(
            select(Panchayat.id).where(Panchayat.samiti_code == officer.samiti_code).scalar_subquery())
    return CaseTask.id.is_(None)


def _successor(session: Session, admin: User | None, officer: User, successor: object) -> User | None:
    text = successor.strip() if isinstance(successor, str) else ""
    if not text:
        return None
    candidates = _peers(session, officer, {officer.id})
    found = next((u for u in candidates if u.username.lower() == text.lower() and _may_manage(session, admin, u)), None)
    if found is None:
        choices = ", ".join(f"{u.display_name} ({u.username})" for u in candidates) or M_("nobody")
        raise Refused(M_("the successor must be another active %(role)s of the same Panchayat; %(name)s is not. "
                         "Who may take over: %(choices)s", role=M_(officer.role.replace("_", " ")), name=text,
                         choices=choices), {"successor": M_("not an active %(role)s there",
                                                            role=M_(officer.role.replace("_", " ")))})
    return found


def _hand_over(session: Session, admin: User | None, officer: User, successor: object, reason: str) -> tuple[
        User | None, list[tuple[str, str]]]:
    """Hand the officer's open tasks to ``successor`` (a user name) or back to the lane, before the
    officer leaves it (``reason``: transfer, deactivation, role). Returns the successor and the
    tasks handed over ``(case number, title)``.

    Raises:
        Refused: a successor who is not an active officer of the same role and scope; none named
            when nobody else of the role would remain for the lane's open tasks; a receiving
            officer with cases sent to them still open.
    """
    chosen = _successor(session, admin, officer, successor)
    lane = list(session.scalars(select(CaseTask).where(_lane_tasks(session, officer)).order_by(CaseTask.id)))
    held = list(session.scalars(select(CaseTask).where(
        CaseTask.state == READY, or_(CaseTask.claimed_by == officer.id, CaseTask.assigned_to == officer.id))
        .order_by(CaseTask.id)))
    if officer.role == "receiving_officer" and lane:
        raise Refused(M_("%(name)s is the receiving officer of %(count)s open tasks of cases sent to them (%(cases)s); "
                         "they must finish them first", name=officer.username, count=len(lane),
                         cases=", ".join(sorted({t.case_number for t in lane}))), {"username": M_("tasks open")})
    if chosen is None and lane and not _peers(session, officer, {officer.id}):
        raise Refused(M_("%(name)s is the last active %(role)s there and %(count)s tasks of the %(role)s are open "
                         "(%(cases)s): name a successor who takes them over", name=officer.username,
                         role=M_(officer.role.replace("_", " ")), count=len(lane),
                         cases=", ".join(sorted({t.case_number for t in lane}))),
                      {"successor": M_("required: the tasks would have nobody")})
    now = clock.now()
    moved: list[tuple[str, str]] = []
    for task in held:
        db.lock_case(session, task.case_id)  # the order every writer of a case follows
        values: dict[str, Any] = ({"claimed_by": chosen.id, "claimed_at": now, "assigned_to": chosen.id,
                                   "assigned_by": admin.id if admin is not None else None, "assigned_at": now}
                                  if chosen is not None else
                                  {"claimed_by": None, "claimed_at": None, "assigned_to": None})
        if not rows_matched(session, update(CaseTask).where(CaseTask.id == task.id, CaseTask.state == READY)
                            .values(**values).execution_options(synchronize_session=False)):
            continue  # completed meanwhile: nothing to hand over
        session.refresh(task)
        session.add(CaseEvent(case_id=task.case_id, at=now, kind="act",
                              name="Task handed over" if chosen is not None else "Task released",
                              element_id=task.element_id, actor_role="administrator" if admin is not None else None,
                              actor_user_id=admin.id if admin is not None else None,
                              detail_json=json.dumps({"task": task.title, "from": officer.display_name,
                                                      "to": chosen.display_name if chosen is not None else None,
                                                      "reason": reason}, ensure_ascii=False)))
        moved.append((task.case_number, task.title))
    if chosen is not None and moved:
        panchayat = session.get(Panchayat, officer.panchayat_id) if officer.panchayat_id else None
        notifications.tell(session, chosen, f"tasks_received_{reason}", training=bool(panchayat and panchayat.training),
                           officer=officer.display_name, panchayat=panchayat.name if panchayat else "—",
                           count=str(len(moved)), cases=", ".join(sorted({c for c, _ in moved})))
    return chosen, moved


def _handed_lines(chosen: User | None, moved: list[tuple[str, str]]) -> list[Message]:
    if not moved:
        return [M_("No open task is held by the officer.")]
    cases = ", ".join(sorted({c for c, _ in moved}))
    if chosen is None:
        return [M_("Their %(count)s open tasks go back to the other officers of the role (cases %(cases)s); "
                   "each case's history says so.", count=len(moved), cases=cases)]
    return [M_("Their %(count)s open tasks go to %(name)s (cases %(cases)s), who is told; each case's history "
               "says so.", count=len(moved), name=f"{chosen.display_name} ({chosen.username})", cases=cases)]


# -- the acts on an account -------------------------------------------------------------------------

def deactivate(session: Session, admin: User | None, username: object, *, successor: object = "") -> Outcome:
    """Deactivate an officer: they can no longer sign in, their sessions and API tokens end
    (:func:`webapp.services.people.users.deactivate`), and their open tasks go to ``successor``
    or back to the lane (module docstring).

    Raises:
        NotFound: outside the scope. NotPermitted: another administrator of a scope as wide as
            yours. Refused: already inactive; the last active administrator of the scope
            deactivating themselves; a successor needed or not fit (:func:`_hand_over`).
    """
    officer = get_officer(session, admin, username)
    if admin is not None and officer.id == admin.id:
        others = [u for u in session.scalars(select(User).where(User.role == "administrator", User.active.is_(True),
                                                                 User.simulated.is_(False), User.id != admin.id))
                  if users.can_manage_user(session, u, admin) or
                  (u.panchayat_id, u.samiti_code, u.district) == (admin.panchayat_id, admin.samiti_code, admin.district)]
        if not others:
            raise Refused(M_("you are the last active administrator of %(scope)s: make another administrator first, "
                             "or your officers would have nobody to manage them", scope=scope_name(session, admin)),
                          {"username": M_("the last administrator")})
    else:
        _check_account_of_admin(session, admin, officer, M_("deactivation"))
    if not officer.active:
        raise Refused(M_("the user %(name)s is already inactive", name=officer.username),
                      then=M_("Nothing is to be done: the user is inactive; reactivate them if they return."))
    chosen, moved = _hand_over(session, admin, officer, successor, "deactivation")
    users.deactivate(session, officer.username)
    _audit(session, admin, "deactivated", officer, successor=chosen.username if chosen else None,
           tasks=len(moved) or None)
    session.flush()
    return Outcome("deactivate", officer.username, [
        M_("%(name)s can no longer sign in; every session and API token of theirs ends at once.",
           name=officer.username), *_handed_lines(chosen, moved)], handed_over=moved)


def reactivate(session: Session, admin: User | None, username: object) -> Outcome:
    """Let a deactivated officer sign in again (with their former password, sessions started
    afresh; their API tokens stay revoked in effect: a new one is made if needed).

    Raises:
        NotFound: outside the scope. NotPermitted: an administrator's account of a scope as wide
            as yours (yours included). Refused: already active; their Panchayat was put away.
    """
    officer = get_officer(session, admin, username)
    _check_account_of_admin(session, admin, officer, M_("reactivation"))
    if officer.active:
        raise Refused(M_("the user %(name)s is already active", name=officer.username),
                      then=M_("Nothing is to be done: the user can sign in already."))
    officer.active = True
    _audit(session, admin, "reactivated", officer)
    session.flush()
    return Outcome("reactivate", officer.username, [M_("%(name)s may sign in again.", name=officer.username)])


def reset_password(session: Session, admin: User | None, username: object,
                   *, password_method: str = users.PASSWORD_METHOD) -> Outcome:
    """Give an officer a new first password (:func:`first_password`), to be changed at their next
    sign-in; every session of theirs ends.

    Raises:
        NotFound: outside the scope. NotPermitted: your own (use your password page) or another
            administrator's account of a scope as wide as yours. Refused: an inactive officer.
    """
    officer = get_officer(session, admin, username)
    if admin is not None and officer.id == admin.id:
        raise NotPermitted(M_("change your own password on your password page, not here"))
    _check_account_of_admin(session, admin, officer, M_("password reset"))
    if not officer.active:
        raise Refused(M_("the user %(name)s is inactive; reactivate them first", name=officer.username),
                      then=M_("An administrator of their scope can reactivate them first."))
    from werkzeug.security import generate_password_hash

    password = first_password()
    officer.password_hash = generate_password_hash(password, method=password_method)
    officer.must_change_password = True
    _audit(session, admin, "password_reset", officer)
    session.flush()
    return Outcome("reset_password", officer.username, [
        M_("%(name)s gets a first password, shown once; every session of theirs ends, and they must choose their "
           "own password at the next sign-in.", name=officer.username)], first_password=password)


def change_role(session: Session, admin: User | None, username: object, role: object, *,
                successor: object = "") -> Outcome:
    """Give an officer another role in the same scope (a Panchayat's officer: pound keeper,
    secretary, sarpanch or administrator of it; a Samiti's: appellate authority or administrator of
    it). Their open tasks of the old role go to ``successor`` or back to the lane; their sessions
    and API tokens end.

    Raises:
        NotFound: outside the scope. NotPermitted: your own role (nobody raises their own), an
            administrator's account of a scope as wide as yours, or making one.
        Refused: an unknown role, the same role, a role that does not fit the officer's scope, a
            successor needed or not fit.
    """
    officer = get_officer(session, admin, username)
    if admin is not None and officer.id == admin.id:
        raise NotPermitted(M_("you cannot change your own role; an administrator of a wider scope must"),
                           field="role")
    _check_account_of_admin(session, admin, officer, M_("role change"))
    new = role.strip() if isinstance(role, str) else ""
    if new not in ROLE_CHANGES or officer.role not in ROLE_CHANGES:
        raise Refused(M_("the role can be changed to one of %(roles)s, and not for a receiving officer (make a new "
                         "account for the post)", roles=", ".join(M_(r.replace("_", " ")) for r in ROLE_CHANGES)),
                      {"role": M_("not a role to change to")})
    if new == officer.role:
        raise Refused(M_("%(name)s is already a %(role)s", name=officer.username, role=M_(new.replace("_", " "))),
                      {"role": M_("the present role")})
    if new in users.PANCHAYAT_ROLES and officer.panchayat_id is None:
        raise Refused(M_("a %(role)s needs a Panchayat; %(name)s has none", role=M_(new.replace("_", " ")),
                         name=officer.username), {"role": M_("needs a Panchayat")})
    if new == "appellate_authority" and (officer.panchayat_id is not None or not officer.samiti_code
                                         or officer.samiti_code == users.DISTRICT_SCOPE):
        raise Refused(M_("an appellate authority belongs to a Samiti, not to a Panchayat"),
                      {"role": M_("needs a Samiti")})
    if new == "administrator" and admin is not None and _rank(admin) <= _rank(officer):
        raise NotPermitted(M_("an administrator of a scope as wide as yours (%(scope)s) is made only by an "
                              "administrator of a wider scope", scope=scope_name(session, admin)), field="role")
    old = officer.role
    chosen, moved = _hand_over(session, admin, officer, successor, "role")
    officer.role = new
    if officer.panchayat_id is not None:  # a Panchayat's administrator carries its Samiti, as create_user gives
        panchayat = session.get(Panchayat, officer.panchayat_id)
        officer.samiti_code = panchayat.samiti_code if new == "administrator" and panchayat else None
    _audit(session, admin, "role_changed", officer, old=old, new=new,
           successor=chosen.username if chosen else None, tasks=len(moved) or None)
    session.flush()
    return Outcome("change_role", officer.username, [
        M_("%(name)s becomes a %(role)s (was a %(old)s); every session and API token of theirs ends.",
           name=officer.username, role=M_(new.replace("_", " ")), old=M_(old.replace("_", " "))),
        *_handed_lines(chosen, moved)], handed_over=moved)


def transfer(session: Session, admin: User | None, username: object, panchayat_code: object, *,
             successor: object = "") -> Outcome:
    """Move a Panchayat's officer (pound keeper, secretary, sarpanch) to another Panchayat of the
    administrator's scope. Their open tasks in the old Panchayat go to ``successor`` — an active
    officer of the same role there — or back to the lane; both are told; their sessions and API
    tokens end.

    Raises:
        NotFound: outside the scope. NotPermitted: the new Panchayat outside the scope.
        Refused: not a Panchayat's officer; the same Panchayat; a live officer to a training
            Panchayat or back; inactive; a successor needed or not fit.
    """
    officer = get_officer(session, admin, username)
    if officer.role not in users.PANCHAYAT_ROLES or officer.panchayat_id is None:
        raise Refused(M_("only a Panchayat's pound keeper, secretary or sarpanch is transferred; %(name)s is a %(role)s",
                         name=officer.username, role=M_(officer.role.replace("_", " "))),
                      {"username": M_("not a Panchayat's officer")})
    if not officer.active:
        raise Refused(M_("the user %(name)s is inactive; reactivate them first", name=officer.username),
                      then=M_("An administrator of their scope can reactivate them first."))
    target = _panchayat_in_scope(session, admin, panchayat_code, "panchayat_code")
    old = session.get(Panchayat, officer.panchayat_id)
    assert old is not None
    if target.id == old.id:
        raise Refused(M_("%(name)s is already in Gram Panchayat %(panchayat)s", name=officer.username,
                         panchayat=old.name), {"panchayat_code": M_("the present Panchayat")})
    if target.training != old.training:
        raise Refused(M_("a live Panchayat's officer is never moved to a training Panchayat, nor back"),
                      {"panchayat_code": M_("another kind of Panchayat")})
    chosen, moved = _hand_over(session, admin, officer, successor, "transfer")
    officer.panchayat_id = target.id
    notifications.tell(session, officer, "officer_transferred", training=old.training, old=old.name, new=target.name,
                       admin=admin.display_name if admin is not None else "the command line",
                       count=str(len(moved)),
                       successor=f"{chosen.display_name} ({chosen.username})" if chosen else "—")
    _audit(session, admin, "transferred", officer, old=old.code, new=target.code,
           successor=chosen.username if chosen else None, tasks=len(moved) or None)
    session.flush()
    return Outcome("transfer", officer.username, [
        M_("%(name)s moves from Gram Panchayat %(old)s to Gram Panchayat %(new)s and is told; every session and "
           "API token of theirs ends.", name=officer.username, old=old.name, new=target.name),
        *_handed_lines(chosen, moved)], handed_over=moved)


ACT_FUNCTIONS: dict[str, Callable[..., Outcome]] = {
    "create": create, "deactivate": deactivate, "reactivate": reactivate, "reset_password": reset_password,
    "change_role": change_role, "transfer": transfer}


def check(sessions: sessionmaker[Session], fn: Callable[..., Outcome], *args: Any, **kwargs: Any) -> Outcome:
    """The check step: ``fn(session, *args, **kwargs)`` run for real at one instant and rolled
    back, so its outcome (without the first password) is what Confirm will do, and its refusal
    the one Confirm would meet.

    Raises:
        Rule130Error: the refusal, nothing written.
    """
    with clock.fixed(), sessions() as session:
        try:
            outcome = fn(session, *args, **kwargs)
        finally:
            session.rollback()
    outcome.first_password = None
    return outcome


def perform(sessions: sessionmaker[Session], fn: Callable[..., Outcome], *args: Any, **kwargs: Any) -> Outcome:
    """Confirm: ``fn(session, *args, **kwargs)`` as one transaction at one instant, committed;
    rolled back on any refusal.

    Raises:
        Rule130Error: the refusal, nothing written.
    """
    with clock.fixed(), sessions() as session:
        try:
            outcome = fn(session, *args, **kwargs)
            session.commit()
        except Exception:
            session.rollback()
            raise
    return outcome


def open_cases(session: Session, officer: User) -> int:
    """How many cases have an open task the officer holds (for the officer's page)."""
    return session.scalar(select(func.count(func.distinct(CaseTask.case_id))).where(
        CaseTask.state == READY, or_(CaseTask.claimed_by == officer.id, CaseTask.assigned_to == officer.id))) or 0

