"""Texts the handlers and services store in English, shown in the reader's language: ledger memos,
history rows and version notes with names in them (:data:`MEMOS`, :func:`retranslate`), and clause
references such as ``Rule 130(b) proviso (reading)``, translated word by word (:func:`format_clause`).

Each text is matched against its catalogue entry and shown through it with its values (names) kept;
a text that matches none is shown as it is.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from webapp.i18n.catalogues import N_, translations_for
from webapp.i18n.languages import current_language

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
