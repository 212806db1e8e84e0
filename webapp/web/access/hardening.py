"""Web hardening: security headers with a Content-Security-Policy (flask-talisman), secure
session cookies, the client address behind trusted proxies (ProxyFix), and the sign-in limits
(Flask-Limiter, :mod:`webapp.web.access.signin_limits`).

Configuration (``create_app`` config keys; the environment variable in brackets sets the default):

- ``SESSION_COOKIE_SECURE`` [``RULE130_SECURE_COOKIES``, default on]: the session cookie is sent
  over HTTPS only. Set ``RULE130_SECURE_COOKIES=0`` for a plain-HTTP run on your own machine
  (``scripts/run.sh`` does), never on a server reached over a network.
- ``LOGIN_RATE_LIMIT``, ``LOGIN_ADDRESS_RATE_LIMIT``, ``LOGIN_NAME_RATE_LIMIT``,
  ``LOGIN_DEVICE_DAYS``: the limits on failed sign-ins (:mod:`webapp.web.access.signin_limits`).
- ``TRUSTED_PROXIES`` [``RULE130_TRUSTED_PROXIES``, default 0]: how many reverse proxies in front of
  the application set ``X-Forwarded-For`` and ``X-Forwarded-Proto``. With 1 or more, Werkzeug's
  ``ProxyFix`` takes the client's address (which the sign-in limits count) and the scheme from
  those headers, trusting that many entries from the right; with 0 the headers are ignored (a
  client could write anything in them) and the address is the connecting peer's. Behind one
  nginx or Caddy, set 1; never more than the proxies really in front.
- ``RATELIMIT_STORAGE_URI`` [``RULE130_RATELIMIT_STORAGE_URI``, default ``memory://``]: where the
  counts live; with several server processes use Redis, e.g. ``redis://127.0.0.1:6379/0`` (needs
  the ``redis`` package).

The policy allows scripts, styles, images, fonts and fetches from this site only: no inline
script or style attribute (the pages keep theirs in ``static/``), no plugin, no framing. bpmn-js
draws with the DOM and CSSOM, which the policy allows; its CSS comes from ``/vendor/bpmn-js``.
"""

from __future__ import annotations

import functools
import json
import os
from urllib.parse import urlsplit

from flask import Flask, request
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from flask_talisman import Talisman
from werkzeug.middleware.proxy_fix import ProxyFix
from werkzeug.routing import IntegerConverter, Map, PathConverter, UnicodeConverter

from webapp.errors import Refused
from webapp.i18n import M_, N_, Message
from webapp.services.diagrams.repository import ROOT
from webapp.values import textguard
from webapp.web.access import signin_limits

CONTENT_SECURITY_POLICY = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self'",
    "img-src": "'self' data:",
    "font-src": "'self' data:",
    "connect-src": "'self'",
    "object-src": "'none'",
    "base-uri": "'self'",
    "form-action": "'self'",
    "frame-ancestors": "'none'",
}


def _flag(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    return value.strip().lower() not in ("0", "false", "no", "off")


def _count(name: str) -> int:
    value = os.environ.get(name, "").strip() or "0"
    if not value.isdigit():
        raise ValueError(f"{name} must be a whole number (0 or more), not {value!r}")
    return int(value)


def defaults() -> dict[str, object]:
    """The configuration defaults of this module (from the environment; see the module docstring).

    Raises:
        ValueError: ``RULE130_TRUSTED_PROXIES`` is not a whole number.
    """
    return {
        "SESSION_COOKIE_SECURE": _flag("RULE130_SECURE_COOKIES", True),
        "SESSION_COOKIE_HTTPONLY": True,
        "SESSION_COOKIE_SAMESITE": "Lax",
        **signin_limits.defaults(),
        "TRUSTED_PROXIES": _count("RULE130_TRUSTED_PROXIES"),
        "RATELIMIT_STORAGE_URI": os.environ.get("RULE130_RATELIMIT_STORAGE_URI") or "memory://",
        "RATELIMIT_HEADERS_ENABLED": True,
        # werkzeug's hash method for passwords; a weaker stored hash is replaced at sign-in
        "PASSWORD_HASH_METHOD": "scrypt",
    }


# The labels of the pages' own form fields, as the pages show them (the same catalogue texts), so
# that a refusal names the field the officer sees, never its internal name. A task form's fields
# are named by their titles in the process library's forms (:func:`_form_titles`).
FIELD_LABELS = {
    "impounded_at": N_("Impounded on (date and time)"), "place_seized": N_("Place seized"),
    "place_impounded": N_("Place impounded (pound)"),
    "nearest_village": N_("Village nearest the place of seizure (where the notice is published)"),
    "objector": N_("Objector's name"), "appellant": N_("Appellant's name"), "born_on": N_("Day of birth"),
    "calf_description": N_("Calf's description"), "calf_tag": N_("Calf's tag (optional)"), "reason": N_("Reason"),
    "note": N_("Note"), "fine": N_("Fine per head (₹)"), "feeding_per_day": N_("Feeding per head per day (₹)"),
    "effective_from": N_("In force from"), "email_address": N_("E-mail address"),
    "webhook_url": N_("Webhook URL (http or https)"), "username": N_("User name"), "q": N_("Find a case"),
    "from": N_("From"), "to": N_("To"),
}
NUMBERED_LABELS = {"species": N_("Species of animal %(num)s"), "description": N_("Description of animal %(num)s"),
                   "tag": N_("Tag of animal %(num)s")}  # the new-case form's rows: species-1, tag-2...


@functools.cache
def _form_titles() -> dict[str, str]:
    """Field name -> title of every form of the bundled process library (processes/**/*.schema.json)."""
    titles: dict[str, str] = {}
    for path in sorted((ROOT / "processes").glob("**/*.schema.json")):
        try:
            schema = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        for name, prop in (schema.get("properties") or {}).items():
            if isinstance(prop, dict) and isinstance(prop.get("title"), str):
                titles.setdefault(name, prop["title"])
    return titles


def field_label(name: str) -> Message:
    """How a page names the posted field ``name``: its label (``Place seized``, ``Tag of animal 2``,
    a task form's title such as ``Full price (₹)``), translated where it is shown; a field no page
    labels is named in words (``full_price`` -> ``full price``, through the catalogue)."""
    if name in FIELD_LABELS:
        return M_(FIELD_LABELS[name])
    stem, _, number = name.rpartition("-")
    if stem in NUMBERED_LABELS and number.isdigit():
        return M_(NUMBERED_LABELS[stem], num=int(number))
    title = _form_titles().get(name)
    return M_(title) if title else M_(name.replace("_", " ").replace("-", " "))


JSON_DEPTH = 32  # levels of arrays and objects a request's JSON may nest (the API's bodies use 3)


def _depth(value: object) -> int:
    """How deeply ``value`` (parsed JSON) nests arrays and objects, counted without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        deepest = max(deepest, level)
        if deepest > JSON_DEPTH:
            break
        stack.extend((child, level + 1) for child in children)
    return deepest


def _json_body(force: bool) -> object:
    """The request's JSON body (None when there is none or it is not JSON); parsed once, views
    read the same parse.

    Raises:
        Refused: it nests arrays and objects more than :data:`JSON_DEPTH` levels deep (the parser
            would run out of stack before saying so).
    """
    try:
        body = request.get_json(force=force, silent=True)
    except RecursionError:
        body = None
        deep = True
    else:
        deep = body is not None and _depth(body) > JSON_DEPTH
    if deep:
        raise Refused(M_("the request's JSON nests arrays or objects more than %(levels)s levels deep",
                                   levels=JSON_DEPTH), then=M_("Send the data with fewer levels of nesting."))
    return body


def refuse_control_characters() -> None:
    """Before any view: refuse a request whose query string, form fields or JSON body hold a
    control character (NUL and the like; tab and line breaks are text), naming the field: a page's
    field by its label (:func:`field_label`), an API field by its name (:mod:`webapp.values.textguard`);
    nothing is read further, so nothing changes. A JSON body nested too deeply is refused too.

    Raises:
        Refused: answered as 422 (a page with the message, or the API's JSON error).
    """
    api = request.path.startswith("/api/")
    for name, value in request.args.items(multi=True):
        textguard.check(value, name, None if api else field_label(name))
    if request.method not in ("POST", "PUT", "PATCH", "DELETE"):
        return
    if api and not request.mimetype.startswith("multipart/"):
        # JSON in any content type (curl -d sends form encoding): never read it as a form
        body = _json_body(force=True)  # cached: the view reads the same parse
        if body is not None:
            textguard.check(body, "")
        return
    for name, value in request.form.items(multi=True):
        textguard.check(value, name, None if api else field_label(name))
    if request.is_json:
        body = _json_body(force=False)
        if body is not None:
            textguard.check(body, "")


# -- where a form goes back to ----------------------------------------------------------------------

def local_target(target: str | None) -> str | None:
    """``target`` (a form's ``next``) when it is a path of this site to go back to, such as
    ``/tasks?status=ready``; None for anything else, which the caller replaces by its own page.

    Refused: no leading slash; ``//host`` or a scheme (another site); a backslash, which browsers
    read as a slash; and any whitespace or control character, which browsers drop before reading
    the address (the WHATWG URL standard removes tabs and line breaks: ``/\\t/evil.example/`` is
    fetched as ``//evil.example/``). A page's own ``next`` is URL-encoded and holds none of them.
    """
    if not target or not target.startswith("/") or "\\" in target:
        return None
    if any(ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F for ch in target):
        return None
    parts = urlsplit(target)
    if target.startswith("//") or parts.scheme or parts.netloc:
        return None
    return target


# -- URL paths ------------------------------------------------------------------------------------

LARGEST_ID = 2**31 - 1
"""The largest number a path's ``<int:...>`` part may hold: every id column is an INTEGER, which on
PostgreSQL holds at most 2^31 - 1 (a larger number in a query is an error there, not "no row")."""
PATH_TEXT = r"[^/\x00-\x1f\x7f]"
"""One character of a path's text part: not a slash, not a control character (U+0000-U+001F, U+007F;
PostgreSQL cannot compare a text with a NUL, and no name, number or id of the product holds one)."""


def digits_at_most(largest: int) -> str:
    """A regular expression of the decimal numbers from 0 to ``largest`` (leading zeros allowed
    within ``largest``'s number of digits): ``digits_at_most(42)`` is ``\\d{1,1}|[0-3]\\d{1}|4[0-1]|42``."""
    text = str(largest)
    choices = [rf"\d{{1,{len(text) - 1}}}"] if len(text) > 1 else []
    for position, digit in enumerate(text):
        if digit != "0":
            rest = len(text) - position - 1
            lower = "0" if digit == "1" else f"[0-{int(digit) - 1}]"
            choices.append(text[:position] + lower + (rf"\d{{{rest}}}" if rest else ""))
    choices.append(text)
    return "|".join(choices)


class IdConverter(IntegerConverter):
    """``<int:...>``: werkzeug's integer converter, at most :data:`LARGEST_ID`. The limit is in the
    converter's pattern, so a larger number matches no route (404), whatever the method (a limit
    checked after matching would answer 405 to a POST where a GET route has the same path)."""

    regex = f"(?:{digits_at_most(LARGEST_ID)})"

    def __init__(self, map: Map, fixed_digits: int = 0, min: int | None = None, max: int | None = LARGEST_ID,
                 signed: bool = False) -> None:
        super().__init__(map, fixed_digits, min, max, signed)


class TextConverter(UnicodeConverter):
    """``<name>`` (werkzeug's default converter): one part of the path without a control character
    (a path with one matches no route: 404)."""

    def __init__(self, map: Map, minlength: int = 1, maxlength: int | None = None, length: int | None = None) -> None:
        super().__init__(map, minlength, maxlength, length)
        self.regex = PATH_TEXT + self.regex[len("[^/]"):]


class TextPathConverter(PathConverter):
    """``<path:...>``: werkzeug's path converter (slashes allowed) without control characters."""

    regex = PATH_TEXT + r"[^\x00-\x1f\x7f]*?"


def install_converters(app: Flask) -> None:
    """Make every route's path parts refuse what no row can hold, before any view or database
    query runs: ``<int:...>`` above :data:`LARGEST_ID`, and a control character (a NUL: ``%00``)
    in ``<name>`` and ``<path:...>`` parts. Such a path matches no route and is answered 404 like
    any unknown address, never 500. Must run before the blueprints are registered (a rule takes
    its converters when it is added)."""
    app.url_map.converters.update(int=IdConverter, default=TextConverter, string=TextConverter,
                                  path=TextPathConverter)


def init_app(app: Flask) -> None:
    """Install the client address of ``TRUSTED_PROXIES`` (ProxyFix), the headers, the
    control-character guard and the sign-in limits on ``app`` (after its blueprints).

    Raises:
        ValueError: ``TRUSTED_PROXIES`` is not a whole number of 0 or more.
    """
    app.before_request(refuse_control_characters)
    secure = bool(app.config["SESSION_COOKIE_SECURE"])
    Talisman(app, force_https=False, session_cookie_secure=secure, session_cookie_http_only=True,
             session_cookie_samesite=app.config["SESSION_COOKIE_SAMESITE"],
             content_security_policy=CONTENT_SECURITY_POLICY, frame_options="DENY",
             referrer_policy="same-origin", strict_transport_security=True)
    app.config["SESSION_COOKIE_SECURE"] = secure  # Talisman turns it on in its before_request
    proxies = app.config["TRUSTED_PROXIES"]
    if isinstance(proxies, bool) or not isinstance(proxies, int) or proxies < 0:
        raise ValueError(f"TRUSTED_PROXIES must be a whole number (0 or more), not {proxies!r}")
    if proxies:
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=proxies, x_proto=proxies)  # type: ignore[method-assign]
    limiter = Limiter(get_remote_address, app=app, storage_uri=app.config["RATELIMIT_STORAGE_URI"])
    app.extensions["rule130.limiter"] = limiter
    signin_limits.install(app, limiter)
