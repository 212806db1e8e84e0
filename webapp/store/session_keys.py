"""Ending every signed-in session of a user at once: a new ``app_user.session_key``.

Each browser session of an officer carries the user's ``session_key`` (put there at sign-in,
compared on every request: :mod:`webapp.web.access.sessions`). A ``before_flush`` hook on every
session gives a user a new random key whenever the flush changes what the sessions were opened
for: the password hash, the role, the Panchayat, the Samiti, or the ``active`` flag (a
deactivated user's sessions end; so does a reactivated user's old one). Every session that holds
the old key is refused from the next request on, in every server process, because the key lives in
the database. Code that changes these columns needs no call of its own (the command line, the
pages, a future admin page alike); signing out calls :func:`end_sessions` itself.
"""

from __future__ import annotations

import secrets
from typing import Any

from sqlalchemy import event, inspect
from sqlalchemy.orm import Session

from webapp.store.models import User

# the columns whose change ends the user's sessions (the audit trail records the same changes)
ENDING_FIELDS = ("password_hash", "role", "panchayat_id", "samiti_code", "district", "active")


def new_key() -> str:
    """A new random session key: 32 bytes from :mod:`secrets`, URL-safe text of 43 characters."""
    return secrets.token_urlsafe(32)


def end_sessions(user: User) -> None:
    """Give ``user`` a new session key (written at the caller's flush): every session signed in
    before it is refused from its next request on."""
    user.session_key = new_key()


def _changed(user: User, names: tuple[str, ...]) -> bool:
    state = inspect(user)
    for name in names:
        history = state.attrs[name].history
        if not history.has_changes():
            continue
        before = history.deleted[0] if history.deleted else None
        after = history.added[0] if history.added else None
        if before != after:
            return True
    return False


@event.listens_for(Session, "before_flush")
def _new_key_on_change(session: Session, _context: Any, _instances: Any) -> None:
    """A changed user whose password, role, scope or active flag changed gets a new key (unless the
    same flush already gives one)."""
    for obj in session.dirty:
        if isinstance(obj, User) and _changed(obj, ENDING_FIELDS) and not _changed(obj, ("session_key",)):
            end_sessions(obj)
