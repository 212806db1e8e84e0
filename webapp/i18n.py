"""Languages: Hindi and English pages, messages and documents (Flask-Babel with gettext catalogues),
and the one place where dates and rupee amounts are formatted for people.

Catalogues live in ``webapp/translations/<language>/LC_MESSAGES/messages.po`` (committed); the compiled
``.mo`` files are not committed: ``scripts/setup.sh`` compiles them with ``pybabel compile`` and
:func:`compile_catalogues` compiles any missing or stale one when the application starts, so a fresh
clone works either way.

Formatting follows Babel's CLDR data, never hand-made patterns: a day is the locale's full date
format (weekday first, then day, month, year) when that format puts the day before the month, else
the project pattern ``EEEE, d MMMM y``; amounts are ``format_currency(amount, "INR")`` in the Indian
locale of the language (en_IN, hi_IN), which groups digits in lakhs and crores: ₹1,23,456.00.
"""

from __future__ import annotations

import functools
import logging
import re
from datetime import date, datetime
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

from babel import Locale
from babel.dates import format_date, format_datetime, get_date_format
from babel.lists import format_list
from babel.numbers import format_currency
from babel.support import NullTranslations

from .catalogues import TRANSLATIONS_DIR as TRANSLATIONS_DIR
from .catalogues import DeployedNames as DeployedNames
from .catalogues import catalogue_hindi as catalogue_hindi
from .catalogues import compile_catalogues as compile_catalogues
from .catalogues import deployed_names as deployed_names
from .catalogues import forget_deployed_names as forget_deployed_names
from .catalogues import install_deployed_names as install_deployed_names
from .catalogues import set_names_source as set_names_source
from .legal_time import parse_instant

log = logging.getLogger("rule130.i18n")

LANGUAGES: dict[str, str] = {"en": "English", "hi": "हिन्दी"}  # code -> the language's own name
DEFAULT_LANGUAGE = "en"
FORMAT_LOCALES = {"en": "en_IN", "hi": "hi_IN"}  # the Indian variant of each language formats dates and ₹
COOKIE = "lang"  # remembers the choice of a visitor who is not signed in (the public board)
COOKIE_MAX_AGE = 365 * 24 * 3600  # seconds
PROJECT_DAY_PATTERN = "EEEE, d MMMM y"  # used where a locale's full date format is not day first
TIME_PATTERN = "HH:mm"  # 24-hour clock: no am/pm to translate or misread
DEFAULT_TZ = "Asia/Kolkata"
DASH = "—"


# -- which language ----------------------------------------------------------------------------

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


# -- formatting (Babel) ------------------------------------------------------------------------

def _locale(language: str | None) -> str:
    return FORMAT_LOCALES.get(normalise(language) or current_language(), FORMAT_LOCALES[DEFAULT_LANGUAGE])


@functools.cache  # a function of the locale alone (Babel's CLDR data does not change while running)
def day_pattern(locale: str) -> str:
    """The CLDR pattern for a day in ``locale``: its full date format when that is day first
    (``EEEE, d MMMM y`` in en_IN and hi_IN), else :data:`PROJECT_DAY_PATTERN`."""
    pattern = get_date_format("full", locale=Locale.parse(locale)).pattern
    unquoted = re.sub(r"'[^']*'", "", pattern)
    day, month = unquoted.find("d"), unquoted.find("M")
    if day == -1 or month == -1 or day > month:
        return PROJECT_DAY_PATTERN
    return pattern


def format_day(value: date | datetime | str | None, language: str | None = None) -> str:
    """A calendar date for people: ``Sunday, 8 February 2026`` / ``रविवार, 8 फ़रवरी 2026``.

    ``value``: a date, a datetime (its date is taken as it is: convert instants with
    :func:`format_instant`) or an ISO text ``2026-02-08``; None or "" gives an em dash.
    ``language``: ``en``/``hi``; default the current request's language.
    """
    if value is None or value == "":
        return DASH
    if isinstance(value, str):
        value = date.fromisoformat(value[:10])
    if isinstance(value, datetime):
        value = value.date()
    return _format_day(value, _locale(language))


@functools.lru_cache(maxsize=8192)  # a function of the day and the locale alone; pages show the same days often
def _format_day(day: date, locale: str) -> str:
    return format_date(day, day_pattern(locale), locale=locale)


def format_instant(value: datetime | str | None, tz: str | None = None, language: str | None = None) -> str:
    """An instant in the time zone ``tz`` (default Asia/Kolkata), day first with the weekday and a
    24-hour time: ``Monday, 5 January 2026 10:00``. ``value``: an aware datetime or ISO text."""
    if value is None or value == "":
        return DASH
    if isinstance(value, str):
        value = parse_instant(value)
    locale = _locale(language)
    local = value.astimezone(ZoneInfo(tz or DEFAULT_TZ))
    return format_datetime(local, f"{day_pattern(locale)} {TIME_PATTERN}", locale=locale)


def format_instant_ms(value: datetime | None, tz: str | None = None, language: str | None = None) -> str:
    """An instant to the millisecond (timer lateness), as :func:`format_instant` with seconds and
    milliseconds: ``Friday, 9 January 2026 00:00:00.042``."""
    if value is None:
        return DASH
    locale = _locale(language)
    local = value.astimezone(ZoneInfo(tz or DEFAULT_TZ))
    return format_datetime(local, f"{day_pattern(locale)} HH:mm:ss.SSS", locale=locale)


def format_rupees(value: Decimal | str | int | None, language: str | None = None) -> str:
    """Rupees with paise and Indian digit grouping through Babel: ``₹1,23,456.00`` (negative
    ``-₹500.00``). ``value`` must be exact (Decimal, int or decimal text); None or "" gives a dash."""
    if value is None or value == "":
        return DASH
    amount = Decimal(str(value)).quantize(Decimal("0.01"))
    # -0.00 equals 0.00 (and hashes alike, so the cache could answer either): shown as 0.00
    return _format_rupees(amount if amount else amount.copy_abs(), _locale(language))


@functools.lru_cache(maxsize=8192)  # a function of the amount (two decimals) and the locale alone
def _format_rupees(amount: Decimal, locale: str) -> str:
    return format_currency(amount, "INR", locale=locale)


def format_listing(items: list[str], language: str | None = None) -> str:
    """Items joined as the language joins a list: ``A, B and C`` / ``A, B और C`` (Babel's format_list)."""
    return format_list([str(item) for item in items], locale=_locale(language)) if items else ""


_ISO_DAY = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")


def days_in_text(text: Any, language: str | None = None) -> str:
    """Rewrite each ISO date (2026-02-08) in a service message as :func:`format_day` shows it."""
    def day(match: re.Match[str]) -> str:
        try:
            return format_day(match.group(0), language)
        except ValueError:
            return match.group(0)
    return _ISO_DAY.sub(day, str(text or ""))


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


# -- catalogues --------------------------------------------------------------------------------


def init_app(app: Any) -> None:
    """Install Flask-Babel on ``app`` (locale from :func:`select_language`), compile stale
    catalogues, and register the template filters ``day``, ``when``, ``rupees`` and ``dayfirst``
    and the globals ``languages``, ``current_language``, ``return_path`` and ``full_stop``."""
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
                               listing=format_listing, translate=translate,
                               datum=format_datum, clause=format_clause, memo=retranslate, flashed=flashed)
    app.jinja_env.globals.update(languages=LANGUAGES, current_language=current_language,
                                  return_path=return_path, full_stop=full_stop)


def full_stop(language: str | None = None) -> str:
    """The sentence's full stop in ``language`` (default: the current request's): the danda "।"
    in Hindi, "." otherwise — for a sentence that ends with text not from the catalogue (e.g. a
    task's to-do line, written in the diagram)."""
    return "।" if (language or current_language()) == "hi" else "."


def translate(message: str) -> str:
    """``gettext`` of Flask-Babel in the current request's language (for callbacks such as
    Flask-Login's ``localize_callback``); the message itself outside a request."""
    from flask import has_request_context
    from flask_babel import gettext
    return gettext(message) if has_request_context() else message


def N_(message: str) -> str:
    """Mark ``message`` for the catalogue without translating it now (it is translated where it is
    shown, e.g. by :func:`translate`)."""
    return message


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


# -- texts for one person outside a request (notifications, e-mails, documents) ------------------

_catalogues: dict[str, Any] = {}


def translations_for(language: str | None) -> Any:
    """The gettext catalogue of ``language`` (a babel ``Translations``; English: the identity),
    compiling a missing or stale .mo first. For the timer worker and the CLI, which have no request."""
    from babel.support import Translations

    code = normalise(language) or DEFAULT_LANGUAGE
    if code == DEFAULT_LANGUAGE:
        return NullTranslations()
    if code not in _catalogues:
        try:
            compile_catalogues()
        except OSError as error:
            log.warning("could not compile the translations (%s)", error)
        loaded = Translations.load(str(TRANSLATIONS_DIR), [code])
        loaded.add_fallback(DeployedNames(code))
        _catalogues[code] = loaded
    return _catalogues[code]


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


# -- texts stored in English by the handlers, shown in the reader's language ---------------------

# Texts stored in English with names in them: ledger memos written by the handlers (handlers/*.py),
# history rows and version notes of the services, the default description of a calf born in the
# pound (services/cases.py); each shown through its catalogue entry.
MEMOS = (N_("auction money from %(name)s"), N_("remitted by %(name)s"), N_("security from %(name)s"),
         N_("fine and feeding paid by %(name)s; received %(received)s, change returned %(change)s"),
         N_("fine and feeding paid by %(name)s"), N_("auction money repaid to %(name)s"),
         N_("remittance less fine and feeding"), N_("buyer's feeding to %(name)s"),
         N_("Moved from version %(from)s to version %(to)s"), N_("redeploy of v%(number)s: %(note)s"),
         N_("redeploy of v%(number)s"), N_("reversal of entry %(num)s (%(kind)s)"),
         N_("RULE130.md example defaults (not the law)"), N_("migration %(name)s"),
         N_("bundled Rule 130 process"), N_("calf of %(name)s"), N_("security refunded to %(name)s"),
         N_("forfeited security of %(name)s less fine and feeding, to %(owner)s"))
# The words of the clause references (``Rule 130(b) proviso (reading)``): translated word by word.
CLAUSE_WORDS = (N_("Rule"), N_("proviso"), N_("Note"), N_("Explanation"), N_("heading"), N_("opening words"),
                N_("reading"), N_("with"), N_("and its"), N_("and"), N_("day"), N_("(a)"), N_("(b)"), N_("(c)"),
                N_("(d)"), N_("(e)"))
# Whole clause texts that are sentences, not references.
CLAUSE_TEXTS = (N_("reading: no animals left in the pound"), N_("reading: officers are told of work and outcomes"),
                N_("reading: release within the 3-day window"), N_("reading: release"), N_("test only"))


@functools.lru_cache(maxsize=1024)  # the templates are the catalogue's constants: made once each
def _pattern(template: str) -> re.Pattern[str]:
    parts = re.split(r"%\((\w+)\)s", template)
    regex = "".join(re.escape(part) if n % 2 == 0 else f"(?P<{part}>.+?)" for n, part in enumerate(parts))
    return re.compile(f"^{regex}$")


def retranslate(value: Any, templates: tuple[str, ...] = MEMOS, language: str | None = None) -> str:
    """An English text the handlers stored (a ledger memo) in the reader's language: the catalogue
    entry among ``templates`` it was made from, with its values (names) kept; else the text as it is."""
    text = str(value or "")
    catalogue = _catalogue(language)
    if isinstance(templates, str):  # a filter's argument: "words" also looks the text up as words
        templates = MEMOS
    for template in templates:
        match = _pattern(template).match(text)
        if match:
            try:
                return str(catalogue.gettext(template)) % match.groupdict()
            except (KeyError, ValueError, TypeError):
                return text
    return text


def format_clause(text: Any, language: str | None = None) -> str:
    """A clause reference (``Rule 130(a) with Rule 2 (day)``) in the reader's language, word by
    word through the catalogue (:data:`CLAUSE_WORDS`); a reading sentence through its own entry."""
    text = str(text or "")
    catalogue = _catalogue(language)
    whole = str(catalogue.gettext(text)) if text else text
    if whole != text or not text:
        return whole
    words = sorted(CLAUSE_WORDS, key=len, reverse=True)
    pattern = re.compile("|".join(r"(?<![A-Za-z])" + re.escape(w) + r"(?![A-Za-z])" for w in words))
    return pattern.sub(lambda m: catalogue.gettext(m.group(0)), text)


def _catalogue(language: str | None) -> Any:
    """The catalogue of ``language``, or of the current request's language."""
    return translations_for(language or current_language())


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
