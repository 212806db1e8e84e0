"""Which language a page is in: the supported languages (Hindi and English), the choice of the
signed-in user, the ``lang`` cookie or the browser, and what the language switch needs.

Outside a request the language is English (:data:`DEFAULT_LANGUAGE`). Flask and Flask-Login are
imported where a request is read, so the module imports without them (the worker, the CLI).
"""

from __future__ import annotations

LANGUAGES: dict[str, str] = {"en": "English", "hi": "हिन्दी"}  # code -> the language's own name
DEFAULT_LANGUAGE = "en"
COOKIE = "lang"  # remembers the choice of a visitor who is not signed in (the public board)
COOKIE_MAX_AGE = 365 * 24 * 3600  # seconds


def normalise(language: str | None) -> str | None:
    """A supported language code (``"hi"``, ``"en"``) for ``language`` (``"hi-IN"``, ``"HI"``...), else None."""
    if not language:
        return None
    code = str(language).strip().lower().replace("_", "-").split("-")[0]
    return code if code in LANGUAGES else None


def current_language() -> str:
    """The language of the current request (``"en"`` or ``"hi"``); the default outside a request."""
    try:
        from flask import has_request_context
        from flask_babel import get_locale
        if has_request_context():
            locale = get_locale()
            if locale is not None:
                return normalise(locale.language) or DEFAULT_LANGUAGE
    except ImportError:  # pragma: no cover - Flask-Babel is a dependency
        pass
    return DEFAULT_LANGUAGE


def select_language() -> str:
    """Flask-Babel's locale selector: the signed-in user's stored choice, else the ``lang`` cookie,
    else the browser's Accept-Language among the supported languages, else English."""
    from flask import request
    from flask_login import current_user
    user = getattr(current_user, "user", None) if current_user and current_user.is_authenticated else None
    chosen = normalise(getattr(user, "language", None)) if user is not None else None
    if chosen:
        return chosen
    chosen = normalise(request.cookies.get(COOKIE))
    if chosen:
        return chosen
    return request.accept_languages.best_match(list(LANGUAGES)) or DEFAULT_LANGUAGE


def full_stop(language: str | None = None) -> str:
    """The sentence's full stop in ``language`` (default: the current request's): the danda "।"
    in Hindi, "." otherwise — for a sentence that ends with text not from the catalogue (e.g. a
    task's to-do line, written in the diagram)."""
    return "।" if (language or current_language()) == "hi" else "."


def return_path() -> str:
    """Where the language switch goes back to: this page for a GET, else the page the form was
    posted from (same site only), else ``/``."""
    from urllib.parse import urlsplit

    from flask import request
    if request.method == "GET":
        return request.full_path.rstrip("?")
    referrer = urlsplit(request.referrer or "")
    if referrer.netloc == request.host and referrer.path.startswith("/"):
        return referrer.path + (f"?{referrer.query}" if referrer.query else "")
    return "/"
