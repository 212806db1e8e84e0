"""Fields of a task form that apply only for some choice of another field, read from the form's JSON
Schema ``if``/``then``/``else`` (no Flask here: the pages, the API and the validator share it).

A form says it in standard JSON Schema 2020-12, at its top level or as an item of its top-level
``allOf``::

    {"if": {"properties": {"decision": {"const": "interim_delivery"}}, "required": ["decision"]},
     "then": {"required": ["security"], "description": "Only for an interim delivery"},
     "else": {"properties": {"security": false}}}

read as: ``security`` applies only when ``decision`` is ``interim_delivery`` (``const``, or
``enum`` for several choices); ``then.required`` makes it required there; ``else`` forbids it
otherwise (``properties: {field: false}``, or ``not: {required: [field]}``); the ``description``
of ``then`` (with its Hindi under ``translations``, webapp.engine.forms.form_texts) is the hint the page
shows beside the field. A conditional of any other shape is left to the JSON Schema validator.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Condition:
    """Field ``field`` applies only when field ``control`` holds one of ``values``.

    ``required``: the field must then be given; ``forbidden``: it must be absent otherwise;
    ``node``: the ``then`` subschema (its ``description`` is the hint shown with the field);
    ``when_absent``: whether it applies when the control is not given."""

    field: str
    control: str
    values: tuple[str, ...]
    required: bool
    forbidden: bool
    node: dict[str, Any]
    when_absent: bool = False

    def applies(self, data: dict[str, Any]) -> bool:
        """Whether the field applies to the form ``data``: its control's value is one of
        :attr:`values` (with the control absent, as JSON Schema reads the ``if``: :attr:`when_absent`,
        False when the ``if`` requires the control)."""
        return str(data[self.control]) in self.values if self.control in data else self.when_absent


def _branches(schema: dict[str, Any]) -> list[dict[str, Any]]:
    found = [schema] if "if" in schema else []
    all_of = schema.get("allOf")
    if isinstance(all_of, list):
        found += [item for item in all_of if isinstance(item, dict) and "if" in item]
    return found


def _control(if_node: Any) -> tuple[str, tuple[str, ...]] | None:
    """``(field, values)`` of an ``if`` that tests one field for a constant or a set of choices."""
    if not isinstance(if_node, dict) or set(if_node) - {"properties", "required"}:
        return None
    props = if_node.get("properties")
    if not isinstance(props, dict) or len(props) != 1:
        return None
    [(name, test)] = props.items()
    if not isinstance(test, dict):
        return None
    if "const" in test:
        return name, (str(test["const"]),)
    if isinstance(test.get("enum"), list) and test["enum"]:
        return name, tuple(str(v) for v in test["enum"])
    return None


def _forbidden(else_node: Any) -> set[str]:
    """The fields an ``else`` says must be absent."""
    if not isinstance(else_node, dict):
        return set()
    names = {name for name, sub in (else_node.get("properties") or {}).items() if sub is False}
    negated = else_node.get("not")
    if isinstance(negated, dict):
        if isinstance(negated.get("required"), list):
            names |= {str(n) for n in negated["required"]}
        for item in negated.get("anyOf") or []:
            if isinstance(item, dict) and isinstance(item.get("required"), list):
                names |= {str(n) for n in item["required"]}
    return names


def conditions(schema: dict[str, Any] | None) -> dict[str, Condition]:
    """The conditional fields of a form, by field name (see the module's docstring for the shapes
    read); empty for a form without any. A field named by more than one ``if`` keeps the first."""
    found: dict[str, Condition] = {}
    if not isinstance(schema, dict):
        return found
    properties = schema.get("properties") or {}
    for branch in _branches(schema):
        control = _control(branch.get("if"))
        if control is None or control[0] not in properties:
            continue
        then: dict[str, Any] = branch["then"] if isinstance(branch.get("then"), dict) else {}
        required = {str(n) for n in then.get("required") or [] if isinstance(n, str)}
        forbidden = _forbidden(branch.get("else"))
        if_node = branch["if"]
        vacuous = control[0] not in (if_node.get("required") or [])  # an absent control passes such an if
        for name in [n for n in properties if n in required | forbidden]:
            if name != control[0] and name not in found:
                found[name] = Condition(field=name, control=control[0], values=control[1],
                                        required=name in required, forbidden=name in forbidden, node=then,
                                        when_absent=vacuous)
    return found


def broken(schema: dict[str, Any] | None, data: dict[str, Any]) -> dict[str, tuple[str, Condition]]:
    """The conditional fields ``data`` gets wrong, by name: ``("missing", condition)`` for a field
    its control's choice requires and that is not given, ``("not_applicable", condition)`` for one
    given although that choice does not call for it. Empty when every condition holds."""
    wrong: dict[str, tuple[str, Condition]] = {}
    for name, condition in conditions(schema).items():
        applies = condition.applies(data)
        if applies and condition.required and name not in data:
            wrong[name] = ("missing", condition)
        elif not applies and condition.forbidden and name in data:
            wrong[name] = ("not_applicable", condition)
    return wrong
