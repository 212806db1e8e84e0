"""The translation catalogues on disk (compiled from their .po files when missing or stale) and the
Hindi names of the deployed diagrams (held in each diagram: :mod:`webapp.engine.diagrams.names`), which a
catalogue falls back on for a name it lacks; the catalogue of a language for a reader outside a
request (:func:`translations_for`), and the mark :func:`N_` of a text for the catalogue. No request
needed: the timer worker and the CLI use it.
"""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path
from typing import Any

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import NullTranslations

from webapp.i18n.languages import DEFAULT_LANGUAGE, normalise

log = logging.getLogger("rule130.i18n")
TRANSLATIONS_DIR = Path(__file__).resolve().parents[1] / "translations"


def N_(message: str) -> str:
    """Mark ``message`` for the catalogue without translating it now (it is translated where it is
    shown, e.g. by :func:`webapp.i18n.translate`)."""
    return message


def compile_catalogues(directory: Path = TRANSLATIONS_DIR) -> list[Path]:
    """Compile every ``messages.po`` under ``directory`` whose ``messages.mo`` is missing or older.

    Returns the .mo files written. Fuzzy entries are left out (as ``pybabel compile`` does). The
    file is written to a temporary name and renamed, so a concurrent start never reads half a file.
    Raises OSError when the folder is not writable (run ``scripts/setup.sh`` there instead).
    """
    written = []
    for po_path in sorted(directory.glob("*/LC_MESSAGES/*.po")):
        mo_path = po_path.with_suffix(".mo")
        if mo_path.exists() and mo_path.stat().st_mtime >= po_path.stat().st_mtime:
            continue
        with po_path.open("rb") as po_file:
            catalog = read_po(po_file, locale=po_path.parent.parent.name)
        handle, tmp = tempfile.mkstemp(dir=po_path.parent, suffix=".mo.tmp")
        try:
            with os.fdopen(handle, "wb") as out:
                write_mo(out, catalog, use_fuzzy=False)
            os.replace(tmp, mo_path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        written.append(mo_path)
    return written


# -- the names of deployed diagrams (their Hindi is held in the diagram: webapp.engine.diagrams.names) --------

NAMES_REFRESH = 2.0  # seconds between two looks at the deployed versions (other processes may deploy)
NAMES_EXTENSION = "rule130.names_source"  # an application's own source (its database), in app.extensions
_names_source: Any = None
_names_cache: dict[int, tuple[float, dict[str, str]]] = {}  # id(source) -> (monotonic time, names)


def set_names_source(source: Any, app: Any = None) -> None:
    """Install ``source()`` -> {English name: Hindi}: the Hindi names the deployed diagrams carry
    (webapp.services.diagrams.repository.deployed_names). The catalogue falls back on them for a text it
    lacks, so a name an administrator gave its Hindi in the modeler reads in Hindi on every page, in
    notifications and documents. With ``app``, for that application's requests (its database);
    without, for the process (the timer worker, the CLI). None removes it."""
    global _names_source
    if app is not None:
        app.extensions[NAMES_EXTENSION] = source
    else:
        _names_source = source
    _names_cache.clear()


def _current_source() -> Any:
    from flask import current_app, has_app_context
    if has_app_context():
        found = current_app.extensions.get(NAMES_EXTENSION)
        if found is not None:
            return found
    return _names_source


def deployed_names() -> dict[str, str]:
    """{English name: Hindi} of the deployed diagrams, looked up at most every :data:`NAMES_REFRESH`
    seconds; empty without a source or when it fails (the English name is shown then)."""
    import time
    source = _current_source()
    if source is None:
        return {}
    now = time.monotonic()
    at, names = _names_cache.get(id(source), (None, {}))
    if at is None or now - at >= NAMES_REFRESH:
        try:
            names = dict(source())
        except Exception as error:  # a page must not fail for want of a name's Hindi
            log.warning("the deployed diagrams' Hindi names could not be read: %s", error)
        _names_cache[id(source)] = (now, names)
    return names


def forget_deployed_names() -> None:
    """Read the deployed names again at the next look (after a deploy in this process)."""
    _names_cache.clear()


class DeployedNames(NullTranslations):
    """The catalogue's fallback for ``language``: a text the catalogue lacks is looked up among the
    deployed diagrams' Hindi names (:func:`deployed_names`); anything else stays as it is."""

    def __init__(self, language: str) -> None:
        super().__init__()
        self.language = language

    def gettext(self, message: str) -> str:
        if self.language != "hi":
            return message
        return deployed_names().get(message, message)

    ugettext = gettext


_raw_catalogues: dict[str, Any] = {}


def catalogue_hindi(text: str) -> str | None:
    """The Hindi of ``text`` in the catalogue itself (messages.po; not the deployed names), or None."""
    from babel.support import Translations
    if "hi" not in _raw_catalogues:
        try:
            compile_catalogues()
        except OSError as error:
            log.warning("could not compile the translations (%s)", error)
        _raw_catalogues["hi"] = Translations.load(str(TRANSLATIONS_DIR), ["hi"])
    if not text:
        return None
    found = _raw_catalogues["hi"].gettext(text)
    return found if found and found != text else None


def install_deployed_names(translations: Any, language: str) -> None:
    """Give a request's catalogue (Flask-Babel's, cached per language) the deployed names as its
    fallback, once."""
    if language == "hi" and not getattr(translations, "_rule130_names", False):
        translations.add_fallback(DeployedNames(language))
        translations._rule130_names = True


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
