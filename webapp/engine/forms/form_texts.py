"""The texts of a task form in the officer's language, held in the form itself (no Flask here).

A JSON Schema form (``processes/rule130/forms/*.schema.json``, or one an administrator edits in the
modeler) says its English in the standard keywords (``title``, ``description``; a choice of ``enum``
reads as its value in words, ``not_proved`` -> "not proved") and its Hindi beside them, in the
annotation keyword ``translations`` of the same schema node (JSON Schema 2020-12 ignores keywords it
does not know, so validation is unchanged)::

    "amount": {"type": "string", "title": "Amount (₹)",
               "translations": {"hi": {"title": "राशि (₹)", "description": "...",
                                       "enum": {"proved": "सिद्ध"}}}}

That is the one place for a deployed form's Hindi: the draft, the version and its downloaded files
hold it. A form deployed before it was kept there has none, and its texts come from the catalogue
(``webapp/i18n/extract.py`` extracted the bundled forms' texts into messages.po); the modeler's form
editor fills its Hindi fields from the catalogue when it opens such a form, so saving it writes them
into the form.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

KEYWORD = "translations"
LANGUAGES = ("hi",)


def own_text(node: dict[str, Any], key: str, language: str) -> str | None:
    """The form node's own text ``key`` (``title``, ``description``) in ``language``, or None."""
    found = ((node.get(KEYWORD) or {}).get(language) or {}) if isinstance(node.get(KEYWORD), dict) else {}
    value = found.get(key) if isinstance(found, dict) else None
    return value.strip() if isinstance(value, str) and value.strip() else None


def shown(node: dict[str, Any], key: str, language: str, catalogue: Callable[[str], str]) -> str | None:
    """Text ``key`` of a form node for a reader of ``language``: the node's own translation, else its
    English text through ``catalogue`` (the catalogue's gettext of the page); None when it has none."""
    english = node.get(key)
    if not isinstance(english, str) or not english:
        return None
    if language != "en":
        own = own_text(node, key, language)
        if own:
            return own
    return catalogue(english)


def choice(node: dict[str, Any], value: Any, language: str, words: Callable[[str], str]) -> str:
    """The label of choice ``value`` of an ``enum`` field: the node's own translation, else the value
    in words through the catalogue (``words``: ``not_proved`` -> "not proved" in the page's language)."""
    if language != "en":
        found = ((node.get(KEYWORD) or {}).get(language) or {}).get("enum") \
            if isinstance(node.get(KEYWORD), dict) else None
        label = found.get(str(value)) if isinstance(found, dict) else None
        if isinstance(label, str) and label.strip():
            return label.strip()
    return words(str(value))
