"""A user task's form as the officers' pages show it, from its JSON Schema: the fields with their
labels, help and choices in the page's language (radios for up to five choices), and what a sent
form holds (whole numbers also in Devanagari digits). The modeler's preview renders the same fields.
"""

from __future__ import annotations

import re
from typing import Any

from flask import request

from webapp.engine.forms import conditions, form_texts
from webapp.i18n import N_, translate
from webapp.i18n.languages import current_language
from webapp.services.tasks import form_schema
from webapp.values.digits import ascii_digits
from webapp.web.access.hardening import LARGEST_ID
from webapp.web.pages.public import fmt_words

_INTEGER = re.compile(r"^\s*-?[0-9]+\s*$")


# -- forms from JSON Schema -----------------------------------------------------------------------

ONLY_WHEN = N_("Only when %(control)s is “%(choice)s”")  # a conditional field's hint when its form gives none
RADIO_LIMIT = 5  # choices shown as radios (all visible at once); more go in a select


def form_fields(schema: dict[str, Any] | None, values: dict[str, Any], errors: dict[str, str]) -> list[dict[str, Any]]:
    """The inputs of a task's JSON Schema form, in schema order.

    string -> text input (textarea when longer than 200 characters), integer/number -> a text
    input for digits (ASCII or Devanagari: a number input would drop the latter), enum -> radios
    (up to :data:`RADIO_LIMIT` choices, none chosen unless the officer chose it) or a select;
    ``title`` is the label and ``description`` the help text, both shown in the page's language:
    the form's own translation (webapp.engine.forms.form_texts), else through the catalogue.
    """
    if not schema:
        return []
    required = set(schema.get("required", []))
    language = current_language()  # a form's own Hindi first (webapp.engine.forms.form_texts), else the catalogue
    conditional = conditions.conditions(schema)
    fields = []
    for name, prop in (schema.get("properties") or {}).items():
        kind = "text"
        if "enum" in prop:
            kind = "radio" if len(prop["enum"]) <= RADIO_LIMIT else "select"
        elif prop.get("type") in ("integer", "number"):
            kind = "number"
        elif form_schema.is_multiline(prop):
            kind = "textarea"
        value = values.get(name, prop.get("default", ""))
        if kind == "number":
            value = ascii_digits(value)
        fields.append({
            "name": name, "kind": kind,
            "label": form_texts.shown(prop, "title", language, translate) or fmt_words(name),
            "help": form_texts.shown(prop, "description", language, translate), "required": name in required,
            "options": [(str(option), form_texts.choice(prop, option, language, fmt_words))
                        for option in prop.get("enum", [])],
            "value": "" if value is None else str(value), "error": errors.get(name),
            "minimum": prop.get("minimum"), "maximum": prop.get("maximum"),
            "maxlength": prop.get("maxLength"), "amount": "pattern" in prop,
            "step": 1 if prop.get("type") == "integer" else "any",
            "depends": _depends(conditional.get(name), schema, language, values),
        })
    return fields


def _depends(condition: conditions.Condition | None, schema: dict[str, Any], language: str,
             values: dict[str, Any]) -> dict[str, Any] | None:
    """For a field that applies only for some choice of another (the form's ``if``/``then``:
    :mod:`webapp.engine.forms.conditions`): the controlling field, the values it applies for, whether
    it applies to ``values`` (the form as sent or shown) and the hint shown with it (``then``'s
    ``description`` in the page's language, else "Only when <control> is <choice>"); None for any
    other field. The page's script (static/conditional.js) hides it unless the choice is made."""
    if condition is None:
        return None
    control = (schema.get("properties") or {}).get(condition.control) or {}
    hint = form_texts.shown(condition.node, "description", language, translate)
    if not hint:
        choices = [form_texts.choice(control, value, language, fmt_words) for value in condition.values]
        hint = translate(ONLY_WHEN) % {
            "control": form_texts.shown(control, "title", language, translate) or fmt_words(condition.control),
            "choice": f" {translate('or')} ".join(choices)}
    return {"control": condition.control, "values": list(condition.values), "hint": hint,
            "applies": condition.applies(values), "required": condition.required}


def submitted_form(schema: dict[str, Any] | None) -> dict[str, Any]:
    """The posted values of the schema's fields (whole numbers as int for integer fields; anything
    else stays text, for the service to check and to name if wrong)."""
    props = (schema or {}).get("properties") or {}
    data: dict[str, Any] = {}
    for name, prop in props.items():
        if name not in request.form:
            continue
        value = request.form.get(name, "")
        if prop.get("type") == "integer" and _INTEGER.match(ascii_digits(value)):
            data[name] = int(ascii_digits(value))  # ३० is 30, as a Hindi keyboard types it
        else:
            data[name] = value.strip() if isinstance(value, str) else value
    return data


def whole_number(raw: str) -> int | None:
    """A posted id or count of ASCII digits that fits an INTEGER column (at most
    :data:`.hardening.LARGEST_ID`), else None.

    ``str.isdigit`` alone admits "²" (``int`` then raises) and ids the database cannot hold
    (SQLite raises OverflowError past 64 bits, PostgreSQL past an INTEGER's 2^31 - 1): either
    would be a 500 instead of a plain refusal.
    """
    return int(raw) if raw.isascii() and raw.isdigit() and len(raw) <= 10 and int(raw) <= LARGEST_ID else None


def lock_version() -> int | None:
    return whole_number(request.form.get("lock_version", ""))
