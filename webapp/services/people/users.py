"""Users, roles, scope, passwords and API tokens (RULE130.md, "Roles, lanes and scope")."""

from __future__ import annotations

import hashlib
import re
import secrets

from sqlalchemy import ColumnElement, and_, func, or_, select, true
from sqlalchemy.orm import Session
from werkzeug.security import check_password_hash, generate_password_hash

from webapp.errors import NotFound, NotPermitted, Refused
from webapp.i18n import M_
from webapp.i18n.languages import LANGUAGES
from webapp.services.people import passwords
from webapp.store import session_keys
from webapp.store.models import ApiToken, Case, Panchayat, User
from webapp.values import clock, textguard
from webapp.values.casefile import name_key

_DUMMY_HASH = generate_password_hash("not a real password")
ROLES = ("pound_keeper", "secretary", "sarpanch", "appellate_authority", "receiving_officer", "administrator",
         "district_officer")
# a district officer oversees the Panchayats of one District (webapp.services.reports.oversight): they
# read, and act on no case
PANCHAYAT_ROLES = ("pound_keeper", "secretary", "sarpanch")
TRAINING_SAMITI_PREFIX = "TRAINING-"
"""The start of the Samiti code of a training Panchayat made by ``rule130 training`` and of its
trainees outside the Panchayat (the appellate authority, the receiving officer):
:mod:`webapp.services.panchayats.training`."""


PERIOD_LIMITS = {"appeal_period_days": (1, 365), "return_period_days": (1, 90)}  # calendar days


def check_settings(timezone: object, **periods: object) -> None:
    """Refuse a Panchayat setting no case could run with: a time zone that is not an IANA zone
    name (every legal day is a local day of that zone, Rule 2) or a period in calendar days outside
    :data:`PERIOD_LIMITS` (the appeal period M of Rule 130(e) proviso; the return period of an
    interim delivery).

    Raises:
        Refused: naming the setting and the value.
    """
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        if not isinstance(timezone, str) or not timezone:
            raise ValueError(timezone)
        ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError, TypeError):
        raise Refused(M_("unknown time zone %(value)s; give an IANA zone name such as Asia/Kolkata",
                         value=repr(timezone)), {"timezone": M_("unknown time zone")}) from None
    for setting, value in periods.items():
        low, high = PERIOD_LIMITS[setting]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise Refused(M_("%(setting)s must be a whole number of days from %(low)s to %(high)s, not %(value)s",
                             setting=setting, low=low, high=high, value=repr(value)),
                          {setting: M_("%(low)s to %(high)s days", low=low, high=high)})


def create_panchayat(session: Session, code: str, name: str, samiti_code: str, district: str = "",
                     timezone: str = "Asia/Kolkata", appeal_period_days: int = 30, *,
                     training: bool = False) -> Panchayat:
    """Add a Panchayat (code unique, e.g. ``RMP``).

    Args:
        code: 1 to 16 ASCII letters or digits (it is the first part of every case number,
            ``RMP/2026/0001``, and of the registers' addresses, so no ``/`` or spaces).
        name: the Panchayat's name (1 to 200 characters, Hindi welcome).
        samiti_code: the Panchayat Samiti's code, 1 to 32 ASCII letters, digits or hyphens.
        training: a training Panchayat, the only kind the simulator writes into
            (``rule130 simulate --database``, tests/scenarios/FORMAT.md); it is set here once and
            never changed, so a live Panchayat cannot become one.
    Raises:
        Refused: a malformed code, an empty or too long name, an unknown time zone or an appeal
            period outside 1 to 365 days (:func:`check_settings`), a code already in use, or a
            Samiti that would hold live and training Panchayats together (its appellate authority
            and administrators would see both: a training Panchayat needs a Samiti of its own).
    """
    if not (isinstance(code, str) and code.isascii() and code.isalnum() and 1 <= len(code) <= 16):
        raise Refused(M_("the Panchayat code must be 1 to 16 letters or digits (A-Z, 0-9), not %(value)s",
                         value=repr(code)), {"code": M_("1 to 16 letters or digits")})
    if not (isinstance(samiti_code, str) and samiti_code.isascii() and 1 <= len(samiti_code) <= 32
            and samiti_code.replace("-", "").isalnum()):
        raise Refused(M_("the Samiti code must be 1 to 32 letters, digits or hyphens, not %(value)s",
                         value=repr(samiti_code)), {"samiti_code": M_("1 to 32 letters, digits or hyphens")})
    name = (name or "").strip() if isinstance(name, str) else name
    if not isinstance(name, str) or textguard.is_blank(name) or len(name) > 200:
        raise Refused(M_("the Panchayat's name must be 1 to 200 characters"), {"name": M_("1 to 200 characters")})
    textguard.check(name, "name", M_("the Panchayat's name"))
    textguard.check(district or "", "district", M_("the district"))
    textguard.check_one_line(name, "name", M_("the Panchayat's name"))
    textguard.check_one_line(district or "", "district", M_("the district"))
    check_settings(timezone, appeal_period_days=appeal_period_days)
    if session.scalar(select(Panchayat).where(Panchayat.code == code)) is not None:
        raise Refused(M_("a Panchayat with code %(code)s already exists", code=code),
                      then=M_("Choose another code, or use the Panchayat that exists."))
    other_kind = session.scalar(select(Panchayat.code).where(Panchayat.samiti_code == samiti_code,
                                                              Panchayat.training.is_(not training))
                                .order_by(Panchayat.code).limit(1))
    if other_kind is not None:
        message = (M_("the Samiti %(samiti)s holds the live Panchayat %(other)s: a training Panchayat needs a "
                      "Samiti of its own (say, --samiti TRAINING-%(code)s), so that no live officer sees its cases",
                      samiti=samiti_code, other=other_kind, code=code) if training else
                   M_("the Samiti %(samiti)s holds the training Panchayat %(other)s: a live Panchayat cannot share "
                      "a Samiti with a training one", samiti=samiti_code, other=other_kind))
        raise Refused(message, {"samiti_code": M_("a Samiti of its own")})
    panchayat = Panchayat(code=code, name=name, samiti_code=samiti_code, district=district, timezone=timezone,
                          appeal_period_days=appeal_period_days, return_period_days=7, training=bool(training))
    session.add(panchayat)
    session.flush()
    return panchayat


def panchayat(session: Session, panchayat_id: int) -> Panchayat | None:
    """The Panchayat record (name, code, Samiti, district, time zone, settings), or None."""
    return session.get(Panchayat, panchayat_id)


DISTRICT_SCOPE = "@district"
"""The ``samiti_code`` of an administrator of a District (whose ``district`` names it). No Samiti
has this code (a Samiti code is letters, digits and hyphens: :func:`create_panchayat`), so every
check that reads only the Panchayat and the Samiti finds no Panchayat of theirs and shows them
nothing: only the checks of this module that read ``district`` (:func:`can_see`,
:func:`can_manage_user`, :func:`managed_users`) give them their District."""


def is_district_admin(user: User) -> bool:
    """An administrator of a District (:data:`DISTRICT_SCOPE`)."""
    return user.role == "administrator" and user.samiti_code == DISTRICT_SCOPE and bool(user.district)


def check_district(session: Session, role: str, district: str, panchayat: Panchayat | None,
                   samiti_code: str | None) -> None:
    """Refuse a District scope that is not an administrator's or a district officer's alone, or names no
    Panchayat's district.

    Raises:
        Refused: naming the field ``district``.
    """
    if role not in ("administrator", "district_officer") or panchayat is not None or samiti_code:
        raise Refused(M_("only an administrator or a district officer may have a District, and then neither a "
                         "Panchayat nor a Samiti"), {"district": M_("an administrator's or a district officer's only")})
    if not isinstance(district, str) or textguard.is_blank(district) or session.scalar(
            select(Panchayat.id).where(Panchayat.district == district).limit(1)) is None:
        raise Refused(M_("no Panchayat is in the district %(district)s", district=repr(district)),
                      {"district": M_("unknown district")})


USERNAME = re.compile(r"[A-Za-z0-9._-]{1,80}")  # ASCII only: no look-alike letters (Cyrillic "ѕ" for "s")


def create_user(session: Session, username: str, password: str, role: str, *, display_name: str | None = None,
                panchayat_code: str | None = None, samiti_code: str | None = None, district: str | None = None,
                password_method: str = "scrypt", must_change_password: bool = False) -> User:
    """Create a user with a hashed password.

    Scope: pound keeper, secretary and sarpanch need a Panchayat; an appellate authority a
    Samiti; a receiving officer may have a Panchayat (their own) or none (a trainee one, the
    training Samiti: :mod:`webapp.services.panchayats.training`); an administrator with neither is
    installation-wide; an administrator with ``district`` (the ``panchayat.district`` of at least
    one Panchayat) manages that District (:data:`DISTRICT_SCOPE`); a district officer needs ``district`` and
    nothing else (they oversee it, webapp.services.reports.oversight).
    ``password_method`` is werkzeug's hash method (tests use a cheap one). ``must_change_password``:
    a first password given by an administrator, to be changed at the first sign-in.
    Raises:
        Refused: unknown role, missing or unknown scope, duplicate name, a password that breaks
            the rule (:func:`webapp.services.people.passwords.check`: too short, too long, too easy to guess).
    """
    user = _new_user(session, username, password, role, display_name, panchayat_code, samiti_code,
                     password_method, district)
    user.must_change_password = bool(must_change_password)
    return user


UNUSABLE_PASSWORD = "!simulator"
"""The password hash of a user the simulator made: no werkzeug hash starts with ``!``, so no
password matches it (:func:`can_sign_in`); migration 0020 gives it to the users the simulator made
before, whose one password was written in the code."""


def create_simulator_user(session: Session, username: str, role: str, *, display_name: str | None = None,
                          panchayat_code: str | None = None, samiti_code: str | None = None) -> User:
    """Create a user for the simulator (``rule130 simulate``): marked ``simulated``, with no usable
    password (:data:`UNUSABLE_PASSWORD`). It cannot sign in (:func:`sign_in`), gets no API token
    (:func:`issue_token`, :func:`user_for_token`), is never offered as a task's holder
    (webapp.services.tasks.tasklist) nor found as a receiving officer of a live Panchayat's case
    (:func:`by_display_name`), and hears only of training Panchayats' cases
    (webapp.services.notify.notifications). The scope rules are those of :func:`create_user`.

    Raises:
        Refused: as :func:`create_user`, but for the password.
    """
    return _new_user(session, username, None, role, display_name, panchayat_code, samiti_code, None)


def can_sign_in(user: User) -> bool:
    """False for a user the simulator made or one whose hash is unusable (no password matches it)."""
    return not user.simulated and not user.password_hash.startswith("!")


def _new_user(session: Session, username: str, password: str | None, role: str, display_name: str | None,
              panchayat_code: str | None, samiti_code: str | None, password_method: str | None,
              district: str | None = None) -> User:
    """:func:`create_user` (``password`` given) or :func:`create_simulator_user` (None)."""
    if role not in ROLES:
        raise Refused(M_("unknown role %(role)s; roles are %(roles)s", role=repr(role), roles=", ".join(ROLES)),
                      then=M_("Choose one of the roles listed."))
    if not isinstance(username, str) or textguard.is_blank(username) or len(username) > 80:
        raise Refused(M_("a user name of 1 to 80 characters is required"),
                      then=M_("Give a user name of 1 to 80 characters."))
    for field, text, label in (("username", username, M_("the user name")),
                               ("display_name", display_name or "", M_("the display name"))):
        textguard.check(text, field, label)
        textguard.check_one_line(text, field, label)
    # a display name is shown and matched as people write it: no blanks around, one space inside
    display_name = " ".join(display_name.split()) if isinstance(display_name, str) else display_name
    if not USERNAME.fullmatch(username):
        raise Refused(M_("a user name is made of the letters a-z and A-Z, digits, '.', '-' and '_' (no spaces), "
                         "not %(name)s", name=repr(username)), {"username": M_("letters, digits, . - _")})
    taken = session.scalar(select(User).where(func.lower(User.username) == username.lower()))
    if taken is not None:  # "Secretary" beside "secretary" would be told apart by nobody
        raise Refused(M_("the user %(name)s already exists", name=taken.username),
                      then=M_("Choose another user name, or change the user that exists."))
    panchayat = None
    if panchayat_code:
        panchayat = session.scalar(select(Panchayat).where(Panchayat.code == panchayat_code))
        if panchayat is None:
            raise Refused(M_("no Panchayat has the code %(code)s", code=panchayat_code),
                          then=M_("Check the code: the list of Panchayats shows every code."))
    if password is not None:
        passwords.check(password, passwords.known_words(session, username, display_name,
                                                        panchayat.id if panchayat else None))
    if role in PANCHAYAT_ROLES and panchayat is None:
        raise Refused(M_("a %(role)s needs --panchayat CODE", role=M_(role.replace("_", " "))),
                      then=M_("Give the code of the officer's Panchayat with --panchayat."))
    if role == "appellate_authority" and not samiti_code:
        raise Refused(M_("an appellate authority needs --samiti CODE"),
                      then=M_("Give the code of the appellate authority's Samiti with --samiti."))
    if role == "district_officer" and not district:
        raise Refused(M_("a district officer needs --district NAME and no other scope; only a district officer has "
                         "a District"), {"district": M_("a District for a district officer only")})
    if district is not None:
        check_district(session, role, district, panchayat, samiti_code)
        if role == "administrator":
            samiti_code = DISTRICT_SCOPE
    elif samiti_code and session.scalar(select(Panchayat.id).where(Panchayat.samiti_code == samiti_code)
                                        .limit(1)) is None:
        raise Refused(M_("no Panchayat is in Samiti %(code)s; add its Panchayats first (create-panchayat --samiti)",
                         code=samiti_code), {"samiti_code": M_("unknown Samiti")})
    hashed = (UNUSABLE_PASSWORD if password is None
              else generate_password_hash(password, method=password_method or PASSWORD_METHOD))
    user = User(username=username, display_name=display_name or username, password_hash=hashed, role=role,
                panchayat_id=panchayat.id if panchayat else None,
                samiti_code=samiti_code or (panchayat.samiti_code if panchayat and role == "administrator" else None),
                active=True, created_at=clock.now(), simulated=password is None, district=district)
    session.add(user)
    session.flush()
    return user


def authenticate(session: Session, username: str, password: str) -> User | None:
    """The active user with this name and password, else None (the same work either way, so the
    response time does not tell which user names exist); None too for a user the simulator made
    (:func:`can_sign_in`). Neither counts failures nor rehashes: :func:`sign_in` does, for the
    sign-in page."""
    user = session.scalar(select(User).where(User.username == username, User.active.is_(True)))
    if user is None or not can_sign_in(user):
        check_password_hash(_DUMMY_HASH, password)
        return None
    return user if check_password_hash(user.password_hash, password) else None


PASSWORD_METHOD = "scrypt"  # werkzeug's scrypt: n=2**15, r=8, p=1


def needs_rehash(password_hash: str, method: str = PASSWORD_METHOD) -> bool:
    """True when a stored hash is not werkzeug's ``method`` with today's parameters (e.g. an older
    pbkdf2 hash, or scrypt with a lower cost): it is replaced at the next successful sign-in."""
    current = generate_password_hash("x", method=method).split("$", 1)[0]
    return password_hash.split("$", 1)[0] != current


def sign_in(session: Session, username: str, password: str, *, method: str = PASSWORD_METHOD) -> User | None:
    """Check a sign-in; the caller commits (a first session key and a rehash are written).

    Returns the active user with this name and password, else None, for a wrong password, an
    unknown or inactive name and a user the simulator made (:func:`can_sign_in`) alike, after the
    same work (a hash is checked either way, so neither the answer nor its time tells which names
    exist, nor which were made by the simulator). Failed sign-ins are limited by the sign-in
    page (:mod:`webapp.web.access.signin_limits`), never by locking the user's row: a stranger's guesses
    cannot lock the officer out. On success the user gets a session key if they have none yet
    (:mod:`webapp.store.session_keys`), and a stored hash weaker than ``method`` (werkzeug's hash
    method, scrypt by default) is replaced by a new hash of the same password, keeping the user's
    other sessions.
    """
    user = session.scalar(select(User).where(User.username == username, User.active.is_(True)))
    if user is None or not can_sign_in(user):
        check_password_hash(_DUMMY_HASH, password)
        return None
    if not check_password_hash(user.password_hash, password):
        return None
    if user.session_key is None:  # the first sign-in: the key this user's sessions carry
        user.session_key = session_keys.new_key()
    if needs_rehash(user.password_hash, method):
        key = user.session_key
        user.password_hash = generate_password_hash(password, method=method)
        session.flush()  # a new hash gives a new session key (store.session_keys) ...
        user.session_key = key  # ... but the same password keeps the user's other sessions
    session.flush()
    return user


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def issue_token(session: Session, username: str, label: str = "") -> tuple[ApiToken, str]:
    """A new bearer token for ``username``, scoped to the user's role, Panchayat and Samiti now.

    Returns ``(row, token)``: the token text is shown once; only its SHA-256 is stored. The token
    stops working when it is revoked, when the user is deactivated, or when the user's role or
    scope changes (a permission change does not carry over to tokens made before it).
    Raises:
        NotFound: no such user.
        Refused: the user is inactive or was made by the simulator (:func:`create_simulator_user`),
            or the label is longer than 200 characters.
    """
    user = session.scalar(select(User).where(User.username == username))
    if user is None:
        raise NotFound(M_("no user %(name)s", name=username))
    if user.simulated:
        raise Refused(passwords.simulated_refusal(user.username), then=passwords.SIMULATED)
    if not user.active:
        raise Refused(M_("the user %(name)s is inactive; a token would not work", name=username),
                      then=M_("Nothing more can be done for an inactive user; an administrator can make a new user "
                              "for the officer."))
    if len(label) > 200:
        raise Refused(M_("a token label has at most 200 characters"), then=M_("Give a shorter label."))
    token = secrets.token_urlsafe(32)
    row = ApiToken(user_id=user.id, token_hash=_digest(token), created_at=clock.now(), role=user.role,
                   panchayat_id=user.panchayat_id, samiti_code=user.samiti_code, district=user.district, label=label)
    session.add(row)
    session.flush()
    return row, token


def create_token(session: Session, username: str, label: str = "") -> str:
    """:func:`issue_token`, returning only the token text (shown once)."""
    return issue_token(session, username, label)[1]


def user_for_token(session: Session, token: str) -> User | None:
    """The active user a bearer token belongs to (looked up by its SHA-256), else None.

    None also for a revoked token, for a user whose role, Panchayat or Samiti is no longer the
    one the token was made for, and for a user the simulator made (whatever made the token).
    """
    row = session.scalar(select(ApiToken).where(ApiToken.token_hash == _digest(token)))
    if row is None or row.revoked_at is not None:
        return None
    user = session.get(User, row.user_id)
    if user is None or not user.active or user.simulated:
        return None
    if ((row.role, row.panchayat_id, row.samiti_code, row.district)
            != (user.role, user.panchayat_id, user.samiti_code, user.district)):
        return None
    return user


def can_manage_user(session: Session, admin: User, user: User) -> bool:
    """An administrator manages the users of their scope: all (installation-wide), their District's
    Panchayats and the Samiti-level users of the Samitis there, their Samiti's Panchayats and
    Samiti-level users, or their own Panchayat's users."""
    if admin.role != "administrator":
        return False
    if admin.panchayat_id is not None:
        return user.panchayat_id == admin.panchayat_id
    if admin.samiti_code is None:
        return True
    if is_district_admin(admin):
        if user.panchayat_id is not None:
            panchayat = session.get(Panchayat, user.panchayat_id)
            return panchayat is not None and panchayat.district == admin.district
        if user.samiti_code == DISTRICT_SCOPE:
            return user.district == admin.district
        return user.samiti_code is not None and session.scalar(
            select(Panchayat.id).where(Panchayat.samiti_code == user.samiti_code,
                                       Panchayat.district == admin.district).limit(1)) is not None
    if admin.samiti_code == DISTRICT_SCOPE:  # a District scope without its district: nobody
        return False
    if user.panchayat_id is not None:
        panchayat = session.get(Panchayat, user.panchayat_id)
        return panchayat is not None and panchayat.samiti_code == admin.samiti_code
    return user.samiti_code == admin.samiti_code


def managed_users(admin: User) -> ColumnElement[bool]:
    """The SQL condition on ``User`` that :func:`can_manage_user` decides one user at a time:
    every user for an installation-wide administrator, the users of the Samiti's Panchayats and
    the Samiti-level users for a Samiti administrator, the Panchayat's users for a Panchayat one,
    and nobody for any other role (RULE130.md, "Roles, lanes and scope")."""
    if admin.role != "administrator":
        return User.id.is_(None)
    if admin.panchayat_id is not None:
        return User.panchayat_id == admin.panchayat_id
    if admin.samiti_code is None:
        return true()
    if is_district_admin(admin):
        district_panchayats = select(Panchayat.id).where(Panchayat.district == admin.district).scalar_subquery()
        district_samitis = select(Panchayat.samiti_code).where(Panchayat.district == admin.district).scalar_subquery()
        return or_(User.panchayat_id.in_(district_panchayats),
                   and_(User.panchayat_id.is_(None), User.samiti_code.in_(district_samitis)),
                   and_(User.samiti_code == DISTRICT_SCOPE, User.district == admin.district))
    samiti_panchayats = select(Panchayat.id).where(Panchayat.samiti_code == admin.samiti_code).scalar_subquery()
    return or_(User.panchayat_id.in_(samiti_panchayats),
               and_(User.panchayat_id.is_(None), User.samiti_code == admin.samiti_code))


def tokens(session: Session, admin: User | None = None) -> list[tuple[ApiToken, User]]:
    """API tokens with their users, newest first: every token, or those of the users ``admin``
    manages (:func:`can_manage_user`)."""
    rows = session.execute(select(ApiToken, User).join(User, User.id == ApiToken.user_id)
                           .order_by(ApiToken.id.desc())).all()
    return [(t, u) for t, u in rows if admin is None or can_manage_user(session, admin, u)]


def revoke_token(session: Session, token_id: int, admin: User | None = None) -> ApiToken:
    """Revoke a token by its id (from ``rule130 list-tokens`` or the tokens page); at once and for good.

    ``admin`` (None: the command line) must manage the token's user.
    Raises:
        NotFound: no such token, or not within ``admin``'s scope.
        Refused: already revoked (the time is named).
    """
    row = session.get(ApiToken, token_id) if 0 < token_id < 2**63 else None
    user = session.get(User, row.user_id) if row is not None else None
    if row is None or user is None or (admin is not None and not can_manage_user(session, admin, user)):
        raise NotFound(M_("no API token %(id)s", id=token_id))
    if row.revoked_at is not None:
        raise Refused(M_("API token %(id)s was already revoked at %(when)s", id=token_id, when=row.revoked_at),
                      then=M_("Nothing more is needed: the token no longer works; a new one can be made."))
    row.revoked_at = clock.now()
    session.flush()
    return row


def deactivate(session: Session, username: str) -> User:
    """Deactivate the user ``username`` (``rule130 deactivate-user``): they can no longer sign in,
    every session of theirs ends at once (a new session key, :mod:`webapp.store.session_keys`) and
    their API tokens stop working (:func:`user_for_token`). Their name stays on the cases and in
    the audit trail.

    Raises:
        NotFound: no such user.
        Refused: already inactive.
    """
    user = session.scalar(select(User).where(User.username == username))
    if user is None:
        raise NotFound(M_("no user %(name)s", name=username))
    if not user.active:
        raise Refused(M_("the user %(name)s is already inactive", name=username),
                      then=M_("Nothing more is needed: the user can no longer sign in."))
    user.active = False
    session.flush()
    return user


def can_see(session: Session, user: User, case: Case) -> bool:
    """Scope: own Panchayat; a Samiti's appellate authority or administrator its Panchayats; a
    receiving officer only cases dispatched to them; an installation administrator everything."""
    if user.role == "receiving_officer":
        return case.receiving_officer_id == user.id
    if user.role in ("appellate_authority", "administrator") and user.panchayat_id is None:
        if user.samiti_code is None:
            return user.role == "administrator"
        panchayat = session.get(Panchayat, case.panchayat_id)
        if is_district_admin(user):
            return panchayat is not None and panchayat.district == user.district
        return panchayat is not None and panchayat.samiti_code == user.samiti_code
    return user.panchayat_id == case.panchayat_id


def check_lane(user: User, lane: str | None) -> None:
    """Refuse a task whose lane is not the user's role (HTTP 403)."""
    if lane != user.role:
        raise NotPermitted(M_("this task is for the %(lane)s; you are signed in as %(role)s",
                              lane=M_(str(lane).replace("_", " ")), role=M_(user.role.replace("_", " "))))


def by_display_name(session: Session, name: str, role: str, *, include_simulated: bool = False) -> User | None:
    """The active user of ``role`` whose user name is ``name``, else whose display name is ``name``
    (compared as :func:`webapp.values.casefile.name_key` does); None when nobody is.

    Args:
        include_simulated: the user is looked for a case of a training Panchayat
            (:func:`is_training_case`): only users of the training world are found — those the
            simulator made and the trainees of a training Samiti (:data:`TRAINING_SAMITI_PREFIX`),
            never a live officer. Otherwise (a live Panchayat's case) neither is ever found.
    Raises:
        Refused: two or more such officers share the display name (the message lists their user
            names: the form takes a user name too).
    """

    query = select(User).where(User.role == role, User.active.is_(True))
    trainee = func.coalesce(User.samiti_code, "").startswith(TRAINING_SAMITI_PREFIX)
    if include_simulated:
        query = query.where(or_(User.simulated.is_(True), trainee))
    else:
        query = query.where(User.simulated.is_(False), ~trainee)
    people = list(session.scalars(query.order_by(User.username)))
    wanted = name.strip().lower()  # a user name as typed on a phone: any case, stray spaces
    by_username = next((user for user in people if user.username.lower() == wanted), None)
    if by_username is not None:
        return by_username
    named = [user for user in people if name and name_key(user.display_name) == name_key(name)]
    if len(named) > 1:
        raise Refused(M_("%(count)s officers are called %(name)s; give the user name of the one meant: %(choices)s",
                         count=len(named), name=name, choices=", ".join(user.username for user in named)),
                      {"receiver": M_("more than one officer has this name")})
    return named[0] if named else None


def is_training_case(session: Session, case_number: str) -> bool:
    """True when the case numbered ``case_number`` belongs to a training Panchayat (False for a
    live Panchayat's case and for an unknown number). Reads without flushing the session, so a
    check made while a case is being changed sees the stored Panchayat."""
    with session.no_autoflush:
        return bool(session.scalar(select(Panchayat.training).join(Case, Case.panchayat_id == Panchayat.id)
                                   .where(Case.case_number == case_number)))


def receiving_officers(session: Session, case_number: str) -> list[User]:
    """The receiving officers who may take the case numbered ``case_number`` (Rule 130(b) proviso:
    the unsold cattle are sent to a receiving officer), in the order of their display names: active
    users of the role receiving officer of the case's world (a training Panchayat's case: those the
    simulator made and the trainees, :func:`by_display_name`; a live case: the live ones), who are
    not bound to another Panchayat (an officer made with no Panchayat serves any; one made for a
    Panchayat serves its cases only). The page offers them as a list: nobody types a name."""
    with session.no_autoflush:
        panchayat_id = session.scalar(select(Case.panchayat_id).where(Case.case_number == case_number))
    training = is_training_case(session, case_number)
    query = select(User).where(User.role == "receiving_officer", User.active.is_(True),
                               or_(User.panchayat_id.is_(None), User.panchayat_id == panchayat_id))
    trainee = func.coalesce(User.samiti_code, "").startswith(TRAINING_SAMITI_PREFIX)
    query = query.where(or_(User.simulated.is_(True), trainee) if training else and_(User.simulated.is_(False), ~trainee))
    with session.no_autoflush:
        return list(session.scalars(query.order_by(User.display_name, User.username)))


def set_language(session: Session, user_id: int, language: str) -> None:
    """Remember the user's language for pages, e-mails and documents (``en`` or ``hi``).

    Raises:
        Refused: for any other language code.
        NotFound: for an unknown user id.
    """
    if language not in LANGUAGES:
        raise Refused(M_("unknown language %(code)s; choose en or hi", code=repr(language)),
                      then=M_("Choose en (English) or hi (Hindi)."))
    user = session.get(User, user_id)
    if user is None:
        raise NotFound(M_("no user %(name)s", name=user_id))
    user.language = language
