"""Languages: Hindi and English pages, messages and documents (Flask-Babel with gettext catalogues):
the services' messages (:class:`Message`, made with :func:`M_`), translated where they are shown,
and the installation of it all on the Flask application (:func:`init_app`).

Catalogues live in ``webapp/translations/<language>/LC_MESSAGES/messages.po`` (committed); the compiled
``.mo`` files are not committed: ``scripts/setup.sh`` compiles them with ``pybabel compile`` and
:func:`~webapp.i18n.catalogues.compile_catalogues` compiles any missing or stale one when the application
starts, so a fresh clone works either way.

Which language a page is in is :mod:`webapp.i18n.languages`; dates, instants and rupee amounts are
formatted for people in :mod:`webapp.i18n.formats`; texts stored in English by the handlers (ledger memos,
clause references) are shown in the reader's language by :mod:`webapp.i18n.stored_texts`; the catalogues
on disk and a reader's catalogue outside a request are :mod:`webapp.i18n.catalogues`.
"""

from __future__ import annotations

import logging
import re
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from webapp.i18n.catalogues import N_ as N_
from webapp.i18n.catalogues import TRANSLATIONS_DIR as TRANSLATIONS_DIR
from webapp.i18n.catalogues import DeployedNames as DeployedNames
from webapp.i18n.catalogues import catalogue_hindi as catalogue_hindi
from webapp.i18n.catalogues import compile_catalogues as compile_catalogues
from webapp.i18n.catalogues import deployed_names as deployed_names
from webapp.i18n.catalogues import forget_deployed_names as forget_deployed_names
from webapp.i18n.catalogues import install_deployed_names as install_deployed_names
from webapp.i18n.catalogues import set_names_source as set_names_source
from webapp.i18n.catalogues import translations_for
from webapp.i18n.formats import days_in_text, format_day, format_instant, format_listing, format_rupees, format_zone
from webapp.i18n.languages import DEFAULT_LANGUAGE, LANGUAGES, current_language, full_stop, return_path, select_language
from webapp.i18n.stored_texts import format_clause, retranslate

log = logging.getLogger("rule130.i18n")

# the names of the officers a training Panchayat gets (webapp.services.panchayats.training.OFFICERS):
# made by the product, not written by an officer, so a Hindi page shows them in Hindi (:func:`person`)
TRAINEE_NAMES = frozenset({N_("Trainee Pound Keeper"), N_("Trainee Secretary"), N_("Trainee Sarpanch"),
                           N_("Trainee Appellate Authority"), N_("Trainee Receiving Officer")})


# -- installed on the application ---------------------------------------------------------------

def init_app(app: Any) -> None:
    """Install Flask-Babel on ``app`` (locale from :func:`webapp.i18n.languages.select_language`), compile
    stale catalogues, and register the template filters ``day``, ``when``, ``rupees``, ``zone`` (a time
    zone's name) and ``dayfirst`` and the globals ``languages``, ``current_language``, ``return_path`` and ``full_stop``."""
    from flask_babel import Babel

    try:
        compile_catalogues()
    except OSError as error:
        log.warning("could not compile the translations (%s); run scripts/setup.sh", error)
    app.config.setdefault("BABEL_DEFAULT_LOCALE", DEFAULT_LANGUAGE)
    app.config.setdefault("BABEL_TRANSLATION_DIRECTORIES", str(TRANSLATIONS_DIR))
    Babel(app, locale_selector=select_language)

    def _names_of_deployed_diagrams() -> None:
        from flask_babel import force_locale, get_translations
        with force_locale("hi"):
            install_deployed_names(get_translations(), "hi")

    app.before_request(_names_of_deployed_diagrams)
    app.jinja_env.filters.update(day=format_day, when=format_instant, rupees=format_rupees, dayfirst=localize,
                               listing=format_listing, translate=translate, zone=format_zone, person=person,
                               datum=format_datum, clause=format_clause, memo=retranslate, flashed=flashed)
    app.jinja_env.globals.update(languages=LANGUAGES, current_language=current_language,
                                  return_path=return_path, full_stop=full_stop)


def person(name: str | None) -> str:
    """A person's name as a page shows it: as the officer wrote it, except the names the product gives a
    training Panchayat's officers (:data:`TRAINEE_NAMES`), shown in the page's language ("Trainee
    Secretary" / "प्रशिक्षु सचिव")."""
    text = str(name or "")
    return translate(text) if text in TRAINEE_NAMES else text


def translate(message: str) -> str:
    """``gettext`` of Flask-Babel in the current request's language (for callbacks such as
    Flask-Login's ``localize_callback``); the message itself outside a request."""
    from flask import has_request_context
    from flask_babel import gettext
    return gettext(message) if has_request_context() else message


# -- messages of the services, translated where they are shown ------------------------------------

class Message(str):
    """A service's message: the English text (a ``str``, as stored in the case history and sent by
    the API) that also keeps its catalogue template and parameters, so a page can show it in the
    reader's language (:func:`localize`). Create it with :func:`M_` (the extraction keyword)."""

    template: str
    params: dict[str, Any]

    plural: str | None = None  # the plural template of a count message (:func:`MN_`); its count is ``num``

    def __new__(cls, template: str, **params: Any) -> Message:
        text = template % {k: _english(v) for k, v in params.items()} if params else template
        made = super().__new__(cls, text)
        made.template, made.params = template, params
        return made

    def __reduce__(self) -> tuple[Any, ...]:  # pickles and copies keep the template
        return (_rebuild, (self.template, self.params, self.plural))


def _rebuild(template: str, params: dict[str, Any], plural: str | None = None) -> Message:
    return MN_(template, plural, **params) if plural else Message(template, **params)


def MN_(singular: str, plural: str, **params: Any) -> Message:
    """A translatable message about a count ``num`` (one of ``params``): ``"1 problem stops…"`` /
    ``"2 problems stop…"``; each language picks its plural form (``ngettext`` of its catalogue's
    Plural-Forms) where it is shown. English at once (singular for ``num == 1``)."""
    num = params.get("num")
    made = Message(singular if num == 1 else plural, **params)
    made.template, made.plural = singular, plural
    return made


def _english(value: Any) -> str:
    if isinstance(value, (date, datetime)):
        return value.isoformat()[:10] if not isinstance(value, datetime) else value.isoformat()
    return str(value)


def M_(template: str, **params: Any) -> Message:
    """A translatable service message with ``%(name)s`` parameters (days as ``date``: shown by
    :func:`format_day`; other values as text). English at once; translated by :func:`localize`."""
    return Message(template, **params)


def localize(text: Any, tz: str | None = None, language: str | None = None) -> str:
    """``text`` for the reader: a :class:`Message` translated through the catalogue with its days
    formatted by Babel; any other text with its ISO days rewritten (:func:`days_in_text`)."""
    if isinstance(text, Message):
        from flask import has_request_context
        template = text.template
        if text.plural:  # a count message: the plural form of the reader's language
            num = int(text.params.get("num") or 0)
            if language is not None:
                template = translations_for(language).ngettext(text.template, text.plural, num)
            elif has_request_context():
                from flask_babel import get_translations
                template = get_translations().ngettext(text.template, text.plural, num)
            else:
                template = text.template if num == 1 else text.plural
        elif language is not None:  # a named reader (e-mails, documents, the CLI): that catalogue
            template = translations_for(language).gettext(template)
        elif has_request_context():
            from flask_babel import gettext
            template = gettext(template)
        params = {k: (format_day(v, language) if isinstance(v, date) and not isinstance(v, datetime)
                      else format_instant(v, tz, language) if isinstance(v, datetime)
                      else localize(v, tz, language) if isinstance(v, Message) else v)
                  for k, v in text.params.items()}
        try:
            return template % params if params else template
        except (KeyError, ValueError, TypeError):  # a broken translation must not hide the message
            return days_in_text(str(text), language)
    return days_in_text(text, language)


OR = N_("or")  # the joiner of alternatives: message_list(items, M_(OR))


def message_list(items: list[Any], joiner: Message | str = ", ") -> Message:
    """Several messages (or texts) joined by ``joiner``: a text such as ``", "`` or ``"; "``, or a
    message such as ``M_("or")`` (put between spaces and translated), each translated where shown."""
    params: dict[str, Any] = {f"i{n}": item for n, item in enumerate(items)}
    if isinstance(joiner, Message):
        params["joiner"], glue = joiner, " %(joiner)s "
    else:
        glue = joiner.replace("%", "%%")
    return Message(glue.join(f"%(i{n})s" for n in range(len(items))), **params)


_ISO_INSTANT = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?([+-]\d{2}:\d{2}|Z)$")


def format_datum(value: Any, tz: str | None = None, language: str | None = None) -> str:
    """A recorded value for people: a Decimal as rupees (:func:`format_rupees`), an ISO day as
    :func:`format_day`, an ISO instant with its offset as :func:`format_instant` in ``tz``, any
    other text with its ISO days rewritten."""
    if isinstance(value, Decimal):
        return format_rupees(value, language)
    if isinstance(value, Message):
        return localize(value, tz, language)
    text = str(value if value is not None else "")
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        try:
            return format_day(text, language)
        except ValueError:
            return text
    if _ISO_INSTANT.match(text):
        try:
            return format_instant(datetime.fromisoformat(text.replace("Z", "+00:00")), tz, language)
        except ValueError:
            return text
    return days_in_text(text, language)


TRANSLATED_PARAMS = ("period", "role", "task", "consequence", "element")  # catalogue texts, not names of people


def render_for(language: str | None, template: str, **params: Any) -> str:
    """``template`` (a catalogue message with ``{name}`` fields, str.format style) in ``language``,
    each parameter shown for that reader: an ISO day or a date by :func:`format_day`; the texts of
    :data:`TRANSLATED_PARAMS` (a task, a role, a period) through the catalogue; names as they are. A translation that does
    not fit its parameters falls back to the English text."""
    catalogue = translations_for(language)

    def shown(key: str, value: Any) -> Any:
        if isinstance(value, date) and not isinstance(value, datetime):
            return format_day(value, language)
        if isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
            return format_day(value, language)
        if isinstance(value, str) and value and key in TRANSLATED_PARAMS:
            return str(catalogue.gettext(value.replace("_", " ")))
        return value

    english = template.format(**params)
    try:
        return str(catalogue.gettext(template)).format(**{k: shown(k, v) for k, v in params.items()})
    except (KeyError, IndexError, ValueError):
        log.warning("the %s translation of %r does not fit its parameters", language, template)
        return english


def message_json(message: Any) -> Any:
    """A :class:`Message` as JSON data (template and parameters, nested messages and days kept), to
    store beside its English text (the case history); any other value as text."""
    if isinstance(message, Message):
        found = {"template": message.template, "params": {k: _param_json(v) for k, v in message.params.items()}}
        if message.plural:
            found["plural"] = message.plural
        return found
    return str(message)


def _param_json(value: Any) -> Any:
    if isinstance(value, Message):
        return {"message": message_json(value)}
    if isinstance(value, datetime):
        return {"instant": value.isoformat()}
    if isinstance(value, date):
        return {"day": value.isoformat()}
    return str(value)


def flash_message(message: Any, category: str = "message") -> None:
    """Flash ``message`` for the next page, kept as its template and parameters (:func:`message_json`)
    so that it is translated where it is shown (the ``flashed`` filter), in that page's language: a
    sign-in (the signed-in officer's own language) or a language switch between the flash and the
    page changes the language of the message too. A plain text is flashed as it is."""
    from flask import flash
    flash(message_json(message) if isinstance(message, Message) else message, category)


def flashed(stored: Any) -> str:
    """A flashed message (:func:`flash_message`) in the current page's language."""
    return localize(message_from_json(stored))


def message_from_json(data: Any) -> Any:
    """The :class:`Message` that :func:`message_json` stored (a text stays a text)."""
    if not isinstance(data, dict) or not isinstance(data.get("template"), str):
        return str(data)
    params = {}
    for key, value in (data.get("params") or {}).items():
        if isinstance(value, dict) and "message" in value:
            params[key] = message_from_json(value["message"])
        elif isinstance(value, dict) and "instant" in value:
            params[key] = datetime.fromisoformat(value["instant"])
        elif isinstance(value, dict) and "day" in value:
            params[key] = date.fromisoformat(value["day"])
        else:
            params[key] = value
    try:
        if isinstance(data.get("plural"), str):
            return _rebuild(data["template"], params, data["plural"])
        return Message(data["template"], **params)
    except (KeyError, ValueError, TypeError):
        return str(data["template"])
