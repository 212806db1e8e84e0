"""Forms (JSON Schema 2020-12) that are self-contained and are checked in linear time.

A form is an administrator's upload, and every task submission is validated against it, so:

- **Nothing is fetched.** jsonschema's default registry retrieves a remote ``$ref`` over the
  network (with a deprecation warning) on every validation. Here the validator is given an empty
  ``referencing.Registry`` that has no ``retrieve``: a reference that is not inside the form is
  unresolvable, never requested. At deploy, :func:`problems` refuses a ``$ref``,
  ``$dynamicRef`` or ``$recursiveRef`` that does not start with ``#`` (a part of the form itself),
  and a local one that points nowhere.
- **Patterns run in linear time.** Python's ``re`` backtracks: ``^(a+)+$`` over 25 letters and a
  mismatch takes seconds, doubling per letter. :data:`FormValidator` checks ``pattern`` with RE2
  (the ``google-re2`` package: an automaton, linear in the text's length, with bounded memory),
  and at deploy a pattern that RE2 cannot run (a backreference, a lookaround: constructs with no
  linear-time algorithm) is refused naming it. ``patternProperties`` is refused at deploy (forms
  name their fields; jsonschema would match those keys with ``re`` when it looks for additional
  properties).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Any

import jsonschema
import re2
from jsonschema import ValidationError, validators
from referencing import Registry
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012

REF_KEYWORDS = ("$ref", "$dynamicRef", "$recursiveRef")
DATA_KEYWORDS = ("enum", "const", "default", "examples")  # their values are data, not schemas
RE2_MAX_MEM = 8 << 20  # bytes for one compiled pattern
FORM_URI = "urn:rule130:form"

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False
_OPTIONS.max_mem = RE2_MAX_MEM


class PatternRefused(ValueError):
    """A pattern that RE2 cannot run in linear time; the message says why (RE2's words)."""


@lru_cache(maxsize=512)
def compile_pattern(pattern: str) -> Any:
    """``pattern`` compiled by RE2 (search semantics, as JSON Schema's ``pattern``).

    Raises:
        PatternRefused: a construct RE2 does not run (backreference, lookaround) or a pattern over
            its memory bound, with RE2's message.
    """
    try:
        return re2.compile(pattern, _OPTIONS)
    except re2.error as error:
        detail = error.args[0].decode("utf-8", "replace") if error.args and isinstance(error.args[0], bytes) \
            else str(error)
        raise PatternRefused(detail) from None


def _pattern(validator: Any, pattern: str, instance: Any, schema: dict[str, Any]) -> Iterator[ValidationError]:
    """The ``pattern`` keyword, matched by RE2 (:func:`compile_pattern`)."""
    if validator.is_type(instance, "string") and not compile_pattern(pattern).search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


FormValidator = validators.extend(jsonschema.Draft202012Validator, validators={"pattern": _pattern})


def validator(schema: dict[str, Any]) -> Any:
    """A validator of ``schema`` that never fetches (an empty registry with no ``retrieve``) and
    matches patterns with RE2. Iterating its errors raises ``referencing.exceptions.Unresolvable``
    for a reference outside the form and :class:`PatternRefused` for a pattern RE2 cannot run."""
    return FormValidator(schema, registry=Registry())


def _walk(node: Any, path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every subschema (dict) of a form with its JSON pointer, skipping data keywords."""
    if isinstance(node, dict):
        yield path or "/", node
        for key, value in node.items():
            if key not in DATA_KEYWORDS:
                yield from _walk(value, f"{path}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _walk(value, f"{path}/{index}")


def problems(name: str, schema: Any) -> list[str]:
    """Why form ``name`` cannot be deployed: not a JSON Schema, a reference outside it or to
    nothing, ``patternProperties``, or a pattern that RE2 cannot run. Empty when it can.

    Every message names the form and, where there is one, the reference or the pattern.
    """
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as error:
        return [f"form {name} is not a valid JSON Schema: {error.message}"]
    if not isinstance(schema, dict):
        return []
    found: list[str] = []
    resource = DRAFT202012.create_resource(schema)
    root_uri = resource.id() or FORM_URI
    resolver = Registry().with_resource(root_uri, resource).crawl().resolver(base_uri=root_uri)
    nested_ids = set()
    for path, subschema in _walk(schema):
        if path != "/" and isinstance(subschema.get("$id"), str):
            nested_ids.add(path)
        for keyword in REF_KEYWORDS:
            ref = subschema.get(keyword)
            if not isinstance(ref, str):
                continue
            if not ref.startswith("#"):
                found.append(f"form {name}: {keyword} {ref!r} points outside the form; a form must be "
                             'self-contained (put the definition under "$defs" and refer to it as '
                             '"#/$defs/<name>"): nothing outside it is ever fetched')
            elif not any(path.startswith(p) for p in nested_ids):
                try:
                    resolver.lookup(ref)
                except Unresolvable:
                    found.append(f"form {name}: {keyword} {ref!r} points to no part of the form")
        if "patternProperties" in subschema and isinstance(subschema["patternProperties"], dict):
            found.append(f"form {name}: patternProperties is not supported; name each field under properties")
        pattern = subschema.get("pattern")
        if isinstance(pattern, str):
            try:
                compile_pattern(pattern)
            except PatternRefused as error:
                found.append(f"form {name}: pattern {pattern!r} cannot be checked in linear time ({error}); "
                             "write it without backreferences or lookaround")
    return found
