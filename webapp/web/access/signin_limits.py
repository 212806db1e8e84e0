"""Limits on failed sign-ins that stop password guessing without letting one person lock out others.

Only failed sign-ins count (a success redirects; an empty form is no guess); each limit is Flask-Limiter's, in its notation,
kept where ``RATELIMIT_STORAGE_URI`` says (:mod:`webapp.web.access.hardening`). Beyond a limit the
sign-in form answers 429 with a message, the same for every user name, known or not: the limits
are keyed on the name as typed, never on whether such a user exists.

- ``LOGIN_RATE_LIMIT`` [``RULE130_LOGIN_RATE_LIMIT``, default ``5 per minute;20 per hour``]: failed
  sign-ins per (client address, user name). Someone guessing one officer's password is stopped;
  the same address signing in as anyone else is not.
- ``LOGIN_ADDRESS_RATE_LIMIT`` [``RULE130_LOGIN_ADDRESS_RATE_LIMIT``, default
  ``30 per minute;300 per hour``]: failed sign-ins per client address, whatever the name (one
  address trying many names).
- ``LOGIN_NAME_RATE_LIMIT`` [``RULE130_LOGIN_NAME_RATE_LIMIT``, default ``10 per minute;100 per hour``]:
  failed sign-ins per user name, from all addresses together (guessing from many addresses).
- ``LOGIN_DEVICE_DAYS`` [``RULE130_LOGIN_DEVICE_DAYS``, default 90]: a browser where an officer
  signed in keeps a signed "device cookie" naming them (:func:`remember_device`) for this many days.
  A sign-in as that officer from that browser is held only to ``LOGIN_RATE_LIMIT`` counted per
  browser, not to the address, name or (address, name) counts, which strangers can fill: a secretary
  who signed in on her phone before still signs in while someone else is guessing her password.
  (After the design of "device cookies", OWASP's advice on slowing online guessing.)

The client address is ``request.remote_addr``: the connecting peer, unless ``TRUSTED_PROXIES``
(:mod:`webapp.web.access.hardening`) says how many reverse proxies in front may name the client in
``X-Forwarded-For`` (Werkzeug's ``ProxyFix``).
"""

from __future__ import annotations

import os
import secrets
from typing import Any

from flask import Flask, current_app, g, request
from flask_limiter import Limiter
from itsdangerous import BadSignature, URLSafeTimedSerializer

from webapp.i18n import N_, translate

DEVICE_COOKIE = "rule130_device"
DEVICE_NAMES = 8  # officers one browser remembers (a shared phone); the oldest is forgotten first


def defaults() -> dict[str, Any]:
    """This module's configuration defaults, from the environment (see the module docstring).

    Raises:
        ValueError: ``RULE130_LOGIN_DEVICE_DAYS`` is not a whole number of at least 1.
    """
    days = os.environ.get("RULE130_LOGIN_DEVICE_DAYS", "").strip() or "90"
    if not days.isdigit() or int(days) < 1:
        raise ValueError(f"RULE130_LOGIN_DEVICE_DAYS must be a whole number of at least 1, not {days!r}")
    return {
        "LOGIN_RATE_LIMIT": os.environ.get("RULE130_LOGIN_RATE_LIMIT") or "5 per minute;20 per hour",
        "LOGIN_ADDRESS_RATE_LIMIT": os.environ.get("RULE130_LOGIN_ADDRESS_RATE_LIMIT") or "30 per minute;300 per hour",
        "LOGIN_NAME_RATE_LIMIT": os.environ.get("RULE130_LOGIN_NAME_RATE_LIMIT") or "10 per minute;100 per hour",
        "LOGIN_DEVICE_DAYS": int(days),
    }


def _typed_name() -> str:
    """The user name of the sign-in form as the limits count it (case and outer blanks ignored)."""
    return (request.form.get("username") or "").strip().lower()[:80]


def _serializer() -> URLSafeTimedSerializer:
    key = current_app.secret_key
    if key is None:  # create_app always sets one (webapp.app: SECRET_KEY)
        raise RuntimeError("the application has no SECRET_KEY")
    return URLSafeTimedSerializer(key, salt="rule130.device")


def _device() -> dict[str, Any] | None:
    """The valid device cookie of this request (``{"n": nonce, "u": [names]}``), else None."""
    value = request.cookies.get(DEVICE_COOKIE)
    if not value:
        return None
    try:
        data = _serializer().loads(value, max_age=current_app.config["LOGIN_DEVICE_DAYS"] * 86400)
    except BadSignature:  # also an expired one (SignatureExpired)
        return None
    if not (isinstance(data, dict) and isinstance(data.get("n"), str) and isinstance(data.get("u"), list)):
        return None
    return data


def trusted_device() -> bool:
    """True when this browser holds a device cookie for the user name being signed in."""
    device = _device()
    return device is not None and _typed_name() in device["u"]


def _pair_key() -> str:
    device = _device()
    if device is not None and _typed_name() in device["u"]:
        return f"device:{device['n']}:{_typed_name()}"
    return f"pair:{request.remote_addr}:{_typed_name()}"


def remember_device(response: Any, username: str) -> Any:
    """Set (renew) the device cookie on the response to a successful sign-in as ``username``:
    signed with the application's secret key (itsdangerous), HttpOnly, sent to ``/login`` only,
    kept ``LOGIN_DEVICE_DAYS`` days. Returns ``response``."""
    device = _device() or {"n": secrets.token_urlsafe(16), "u": []}
    name = username.strip().lower()
    names = [*[known for known in device["u"] if known != name][-(DEVICE_NAMES - 1):], name]
    value = _serializer().dumps({"n": device["n"], "u": names})
    response.set_cookie(DEVICE_COOKIE, value, max_age=current_app.config["LOGIN_DEVICE_DAYS"] * 86400,
                        path="/login", secure=bool(current_app.config["SESSION_COOKIE_SECURE"]), httponly=True,
                        samesite="Lax")
    return response


def _failed(response: Any) -> bool:
    """A sign-in that counts: it did not succeed, and it tried a password for a name (an empty form
    guesses nothing, and checks no password)."""
    form = request.form
    return response.status_code != 302 and bool((form.get("username") or "").strip() and form.get("password"))


def install(app: Flask, limiter: Limiter) -> None:
    """Put the three limits on POST /login (the view ``auth.login``), and ``LOGIN_RATE_LIMIT`` per
    signed-in session on the password page's POST (a wrong present password is a guess too)."""
    name_message = lambda: translate(N_(
        "Too many failed sign-ins for this user name. Wait a few minutes and try again."))
    address_message = lambda: translate(N_(
        "Too many sign-in attempts from your address. Wait a minute and try again."))
    view: Any = app.view_functions["auth.login"]
    view = limiter.limit(app.config["LOGIN_RATE_LIMIT"], key_func=_pair_key, methods=["POST"],
                         deduct_when=_failed, error_message=name_message)(view)
    view = limiter.limit(app.config["LOGIN_NAME_RATE_LIMIT"], key_func=lambda: f"name:{_typed_name()}",
                         methods=["POST"], deduct_when=_failed, exempt_when=trusted_device,
                         error_message=name_message)(view)
    view = limiter.limit(app.config["LOGIN_ADDRESS_RATE_LIMIT"], key_func=lambda: f"address:{request.remote_addr}",
                         methods=["POST"], deduct_when=_failed, exempt_when=trusted_device,
                         error_message=address_message)(view)
    app.view_functions["auth.login"] = view
    if "account.change_password" in app.view_functions:  # a wrong present password: a guess, too
        from flask_login import current_user
        limited: Any = limiter.limit(
            app.config["LOGIN_RATE_LIMIT"], key_func=lambda: f"password-change:{current_user.get_id()}",
            methods=["POST"], deduct_when=lambda response: bool(g.get("wrong_present_password")),
            error_message=lambda: translate(N_(
                "Too many wrong passwords. Wait a few minutes and try again.")))(
            app.view_functions["account.change_password"])
        app.view_functions["account.change_password"] = limited
