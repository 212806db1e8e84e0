"""The password rule, and setting a new password.

A password is refused when it is shorter than :data:`MIN_LENGTH` or longer than :data:`MAX_LENGTH`
characters, or when zxcvbn (the Python port of Dropbox's strength estimator, pinned in
pyproject.toml) scores it below :data:`MIN_SCORE` on its 0 to 4 scale. zxcvbn estimates how many
guesses a password takes from what guessers try first: its lists of the most used passwords (taken
from breached password sets), common words and names, keyboard rows (``qwerty``), runs
(``1234``, ``abcd``), repeats, dates and years, and the letter-for-digit swaps of these
(``p@ssw0rd``); the user's own name, user name and this system's name count as known words too.
Score 3 means about 10^8 guesses or more ("safely unguessable" in zxcvbn's terms), far beyond
what the sign-in limits let anyone try (:mod:`webapp.web.access.signin_limits`). The refusal says why,
from the part of the password zxcvbn found easiest to guess.

Every place a password is set checks it here: ``rule130 create-user`` and ``rule130 set-password``
(:func:`webapp.services.people.users.create_user`, :func:`set_password`), and the officer's own
password page (:mod:`webapp.web.access.account`).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session
from werkzeug.security import check_password_hash, generate_password_hash
from zxcvbn import zxcvbn

from webapp.errors import NotFound, Refused
from webapp.i18n import M_, Message
from webapp.store.models import Panchayat, User

MIN_LENGTH = 8
MAX_LENGTH = 200
MIN_SCORE = 3  # zxcvbn's 0..4; 3: about 10^8 guesses or more
ZXCVBN_LENGTH = 72  # zxcvbn reads at most this many characters; a longer password is judged by them
SYSTEM_WORDS = ("rule130", "rule 130", "panchayat", "gram panchayat")
_ZXCVBN_LOCK = threading.Lock()  # zxcvbn keeps the user's words in a module-level dictionary

REASONS = {
    "passwords": M_("it is one of the passwords people use most"),
    "user_inputs": M_("it is made of the user name, the officer's name or the name of this system"),
    "dictionary": M_("it is mostly a common word or name"),
    "spatial": M_("it is a row of neighbouring keys on the keyboard"),
    "repeat": M_("it repeats the same characters"),
    "sequence": M_("it is a run such as abcd or 1234"),
    "date": M_("it is a date or a year"),
    "bruteforce": M_("it is short and simple"),
}


def _reason(result: dict[str, Any]) -> Message:
    """Why zxcvbn finds the password easy: the kind of its longest guessable part."""
    sequence = [match for match in result.get("sequence", []) if match.get("pattern") != "bruteforce"]
    if not sequence:
        return REASONS["bruteforce"]
    match = max(sequence, key=lambda m: len(m.get("token", "")))
    pattern = match.get("pattern")
    if pattern == "dictionary":
        return REASONS.get(match.get("dictionary_name"), REASONS["dictionary"])
    if pattern == "regex":  # zxcvbn's only regex: a recent year
        return REASONS["date"]
    return REASONS.get(pattern, REASONS["bruteforce"])


def check(password: object, known_words: Iterable[str] = ()) -> None:
    """Refuse a password that breaks the rule (module docstring); ``known_words`` are the user's
    user name, display name, Panchayat and the like, which a guesser tries first.

    Raises:
        Refused: not a text, too short, too long, or too easy to guess; the message says which and
            why, the field error names ``password``.
    """
    if not isinstance(password, str) or len(password) < MIN_LENGTH:
        raise Refused(M_("the password must have at least %(num)s characters", num=MIN_LENGTH),
                      {"password": M_("at least %(num)s characters", num=MIN_LENGTH)})
    if len(password) > MAX_LENGTH:
        raise Refused(M_("the password must have at most %(num)s characters", num=MAX_LENGTH),
                      {"password": M_("at most %(num)s characters", num=MAX_LENGTH)})
    words = [*SYSTEM_WORDS, *(word for word in known_words if word)]
    with _ZXCVBN_LOCK:
        result = zxcvbn(password[:ZXCVBN_LENGTH], user_inputs=words)
    if result["score"] < MIN_SCORE:
        raise Refused(M_("this password is too easy to guess: %(reason)s. Use three or four words that do not "
                         "belong together, or a longer sentence.", reason=_reason(result)),
                      {"password": M_("too easy to guess")})


def known_words(session: Session, username: str, display_name: str | None, panchayat_id: int | None) -> list[str]:
    """The words a guesser of this user's password tries first: the user name, the display name
    and its parts, the Panchayat's name and code."""
    words = [username, *(display_name or "").split(), display_name or ""]
    panchayat = session.get(Panchayat, panchayat_id) if panchayat_id is not None else None
    if panchayat is not None:
        words += [panchayat.name, panchayat.code]
    return words


SIMULATED = M_("Nothing more can be done for a user the simulator made; an administrator can make a real user "
               "for the officer.")  # the next step of :func:`simulated_refusal`


def simulated_refusal(username: str) -> Message:
    """Why a user the simulator made gets neither a password nor an API token (a catalogue message)."""
    return M_("the user %(name)s was made by the simulator and cannot sign in: it has no password and gets no "
              "API token", name=username)


def set_password(session: Session, username: str, password: str, *, current: str | None = None,
                 method: str = "scrypt") -> User:
    """Give the user ``username`` a new password (hashed with werkzeug's ``method``); the caller
    commits. Every session of the user ends (a new hash gives a new session key,
    :mod:`webapp.store.session_keys`); API tokens are not touched.

    Args:
        current: when given (the officer's own page), the user's present password, checked first.
    Raises:
        NotFound: no such user.
        Refused: the user was made by the simulator (it never has a password), ``current`` is not
            the present password, or the new one breaks the rule (:func:`check`), or it is the
            present password again.
    """
    user = session.scalar(select(User).where(User.username == username))
    if user is None:
        raise NotFound(M_("no user %(name)s", name=username))
    if user.simulated:
        raise Refused(simulated_refusal(user.username), then=SIMULATED)
    if current is not None and not check_password_hash(user.password_hash, current):
        raise Refused(M_("the present password is not right"), {"current": M_("not right")})
    check(password, known_words(session, user.username, user.display_name, user.panchayat_id))
    if check_password_hash(user.password_hash, password):
        raise Refused(M_("the new password is the present one; choose another"), {"password": M_("the present one")})
    user.password_hash = generate_password_hash(password, method=method)
    user.must_change_password = False  # their own password now, not one an administrator gave
    session.flush()
    return user
