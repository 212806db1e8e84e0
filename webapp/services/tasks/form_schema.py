"""What a form's JSON Schema says of the data an officer submits: the schema's errors and its
conditional fields in words, the fields written in digits, the text areas and the rupee amounts.

Each function takes the form's JSON Schema (a dict, as deployed with the diagram) and, where it
checks, the submitted data; a check returns nothing or raises :class:`Refused` with one message per
field (``field_errors``). The rule checks of each form (who may and how much) are
:mod:`webapp.services.tasks.rules`, which calls these.
"""

from __future__ import annotations

from typing import Any

from referencing.exceptions import Unresolvable

from webapp.engine.forms import conditions
from webapp.engine.forms import schemas as forms
from webapp.errors import Refused
from webapp.i18n import M_, N_, OR, message_list
from webapp.values.digits import ascii_digits


def validate_schema(schema: dict[str, Any], data: dict[str, Any]) -> None:
    """Validate ``data`` against the form's JSON Schema, fetching nothing and matching patterns in
    linear time (:func:`webapp.engine.forms.schemas.validator`).

    Raises:
        Refused: with one message per field (``field_errors``); or, for a form deployed before
            deploy refused it, naming the reference outside the form, the pattern that cannot be
            checked in linear time, or any other failure of the validator itself (a reference loop's
            ``RecursionError``, a format checker's exception): a 422, never a 500, nothing fetched,
            nothing saved.
    """
    try:
        errors = sorted(forms.validator(schema).iter_errors(data), key=lambda e: list(e.path))
    except Unresolvable as unresolvable:
        raise Refused(M_("the form refers to %(ref)s outside itself, which is never fetched; nothing was saved. "
                         "An administrator must deploy a corrected form.",
                         ref=str(getattr(unresolvable, "ref", "") or unresolvable)),
                      then=M_("The task waits until an administrator deploys a corrected form.")) from None
    except forms.PatternRefused as refused:
        raise Refused(M_("the form has a pattern that cannot be checked in linear time (%(detail)s); nothing was "
                         "saved. An administrator must deploy a corrected form.", detail=str(refused)),
                      then=M_("The task waits until an administrator deploys a corrected form.")) from None
    except Exception:  # a RecursionError, a format checker's exception: the form's defect, not the officer's
        failure = forms.validator_failure(schema, data) or "its validator fails"
        raise Refused(M_("the form cannot check what was entered (%(detail)s); nothing was saved. An administrator "
                         "must deploy a corrected form; until then the act can be recorded on paper.",
                         detail=failure),
                      then=M_("The task waits until an administrator deploys a corrected form.")) from None
    if not errors:
        return
    check_conditions(schema, data)  # an if/then the form states is named in words, not jsonschema's
    field_errors: dict[str, Any] = {}
    for error in errors:
        if error.validator == "required":
            missing = error.message.split("'")[1] if "'" in error.message else "?"
            field_errors[missing] = M_("this field is required")
        elif error.validator is None and error.validator_value is None and error.path:
            # a ``false`` subschema (a field an if/then/else of another shape forbids here)
            name = ".".join(str(p) for p in error.path)
            title = schema.get("properties", {}).get(name, {}).get("title")
            field_errors.setdefault(name, M_("%(title)s: %(message)s", title=M_(title) if title else name,
                                             message=M_("this field does not apply to the choices made; leave it "
                                                        "empty")))
        elif error.validator == "additionalProperties":
            known = set(schema.get("properties", {}))
            extra = sorted(str(k) for k in (error.instance or {}) if k not in known)
            field_errors["_form"] = M_("the form has no field %(unknown)s", unknown=", ".join(extra))
        else:
            name = ".".join(str(p) for p in error.path) or "_form"
            title = schema.get("properties", {}).get(name, {}).get("title")
            message = _schema_message(error)
            field_errors.setdefault(name, M_("%(title)s: %(message)s", title=M_(title) if title else name,
                                             message=message) if name != "_form" else message)
    raise Refused(M_("the form has errors: %(summary)s", summary=message_list(list(field_errors.values()), "; ")),
                  field_errors)


def _choice_words(condition: conditions.Condition) -> Any:
    return message_list([M_(value.replace("_", " ")) for value in condition.values], M_(OR))


def check_conditions(schema: dict[str, Any], data: dict[str, Any]) -> None:
    """Refuse ``data`` where a field that applies only for some choice of another field (the
    form's ``if``/``then``/``else``: :mod:`webapp.engine.forms.conditions`) is missing for that choice or
    given for another, naming the field, its control and the choice, e.g. "Security for interim
    delivery (₹): required when Decision is “interim delivery”". Nothing else is checked here.

    Raises:
        Refused: with one message per such field (``field_errors``).
    """
    wrong = conditions.broken(schema, data)
    if not wrong:
        return
    properties = schema.get("properties", {})
    field_errors: dict[str, Any] = {}
    summary = []
    for name, (kind, condition) in wrong.items():
        control = M_(properties.get(condition.control, {}).get("title") or condition.control.replace("_", " "))
        if kind == "missing":
            field_errors[name] = M_("required when %(control)s is “%(choice)s”", control=control,
                                    choice=_choice_words(condition))
        else:
            field_errors[name] = M_("only when %(control)s is “%(choice)s”; leave it empty", control=control,
                                    choice=_choice_words(condition))
        title = properties.get(name, {}).get("title")
        summary.append(M_("%(title)s: %(message)s", title=M_(title) if title else name, message=field_errors[name]))
    raise Refused(M_("the form has errors: %(summary)s", summary=message_list(summary, "; ")), field_errors)


KINDS = {"integer": N_("a whole number"), "number": N_("a number"), "string": N_("text"),
         "boolean": N_("yes or no"), "object": N_("a group of fields"), "array": N_("a list")}


def _schema_message(error: Any) -> Any:
    """A JSON Schema validation error (jsonschema's English) as a catalogue message."""
    if error.validator == "pattern":
        return M_("give an amount in rupees with at most two decimals, e.g. 1200.50")
    if error.validator == "enum":
        return M_("choose one of: %(choices)s", choices=message_list([M_(str(v).replace("_", " "))
                                                                      for v in error.validator_value]))
    if error.validator == "minimum":
        return M_("%(value)s is below the minimum of %(limit)s", value=error.instance, limit=error.validator_value)
    if error.validator == "maximum":
        return M_("%(value)s is above the maximum of %(limit)s", value=error.instance, limit=error.validator_value)
    if error.validator == "type":
        kind = error.validator_value if isinstance(error.validator_value, str) else "string"
        return M_("%(value)s is not %(kind)s", value=repr(error.instance), kind=M_(KINDS.get(kind, kind)))
    if error.validator == "maxLength":
        return M_("too long: at most %(num)s characters", num=error.validator_value)
    if error.validator == "minLength":
        return M_("too short: at least %(num)s characters", num=error.validator_value)
    return M_("this value is not accepted (%(detail)s)", detail=error.message)


DIGIT_FORMATS = ("date", "date-time", "time")  # JSON Schema formats written with digits


def takes_digits(prop: dict[str, Any]) -> bool:
    """Whether the form field ``prop`` (a JSON Schema property) is written in digits: a whole
    number or number, an amount (a field with a ``pattern``: :func:`amount_fields`) or a date,
    date and time or time (``format``)."""
    return (prop.get("type") in ("integer", "number") or "pattern" in prop
            or prop.get("format") in DIGIT_FORMATS)


def typed_digits(schema: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with the Devanagari digits of each field written in digits (:func:`takes_digits`)
    made ASCII (webapp.values.digits), before any check: "३०" days and "१२००" rupees, from a page or the
    API, are read as 30 and 1200. Other fields (names, reasons) are returned unchanged."""
    properties = schema.get("properties") or {}
    return {name: (ascii_digits(value) if isinstance(properties.get(name), dict) and takes_digits(properties[name])
                   else value) for name, value in data.items()}


MULTILINE_LENGTH = 200  # a text field of a form that allows more characters is a text area


def is_multiline(prop: dict[str, Any]) -> bool:
    """True when the form field ``prop`` (a JSON Schema property) is a text area (a reason, remarks:
    free text that may have line breaks): a string without choices whose ``maxLength`` is over
    :data:`MULTILINE_LENGTH`. Any other text field (a name, a user name) is one line."""
    return (prop.get("type") == "string" and "enum" not in prop
            and int(prop.get("maxLength", MULTILINE_LENGTH)) > MULTILINE_LENGTH)


def amount_fields(schema: dict[str, Any]) -> set[str]:
    """The names of the rupee amounts of a form: the top-level fields of the JSON Schema ``schema``
    that carry a ``pattern`` (every amount is a decimal text ``^[0-9]+(\\.[0-9]{1,2})?$`` of rupees;
    no other field of the process library has a pattern). Empty for a schema without properties."""
    return {name for name, prop in schema.get("properties", {}).items() if "pattern" in prop}
