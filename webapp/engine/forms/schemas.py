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
- **Nothing loops or breaks at the first submission.** A chain of ``$ref`` that comes back to where
  it started without going into a field (``a`` → ``b`` → ``a``) makes jsonschema recurse until
  Python's limit on every submission; :func:`problems` refuses it at deploy naming the loop's path.
  A form that refers to itself through a field (a tree) is fine: finite data ends it. Then the form
  is run once through its validator on a sample value of each field (:func:`sample`), so that any
  other failure of the validator itself (not of the data) is found at deploy, not by an officer.
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


IN_PLACE = ("allOf", "anyOf", "oneOf")  # lists of subschemas applied to the same instance
IN_PLACE_ONE = ("not", "if", "then", "else")  # one subschema applied to the same instance


def _in_place(subschema: dict[str, Any], path: str) -> Iterator[tuple[str, Any]]:
    """The subschemas that apply to the same instance as ``subschema`` (at ``path``), with their
    pointers: the keywords that do not go into a field or an item (JSON Schema 2020-12, "in-place
    applicators")."""
    for keyword in IN_PLACE:
        children = subschema.get(keyword)
        if isinstance(children, list):
            for index, child in enumerate(children):
                yield f"{path.rstrip('/')}/{keyword}/{index}", child
    for keyword in IN_PLACE_ONE:
        if isinstance(subschema.get(keyword), dict):
            yield f"{path.rstrip('/')}/{keyword}", subschema[keyword]
    dependent = subschema.get("dependentSchemas")
    if isinstance(dependent, dict):
        for key, child in dependent.items():
            yield f"{path.rstrip('/')}/dependentSchemas/{key}", child


def reference_loops(schema: dict[str, Any], resolver: Any) -> list[list[str]]:
    """The loops of ``$ref`` in ``schema`` that never go into a field or an item: each as the list of
    JSON pointers from the first subschema back to itself (``["/$defs/a", "/$defs/b", "/$defs/a"]``).
    ``resolver`` is a ``referencing`` resolver of the form (references that point nowhere are left
    to :func:`problems`' own check). Each loop is given once."""
    where = {id(node): path for path, node in _walk(schema)}

    def successors(path: str, node: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
        for keyword in REF_KEYWORDS:
            ref = node.get(keyword)
            if isinstance(ref, str) and ref.startswith("#"):
                try:
                    target = resolver.lookup(ref).contents
                except Unresolvable:
                    continue
                if isinstance(target, dict) and id(target) in where:
                    yield where[id(target)], target
        for child_path, child in _in_place(node, path):
            if isinstance(child, dict):
                yield child_path, child

    loops: list[list[str]] = []
    seen_loops: set[frozenset[str]] = set()
    done: set[str] = set()

    def visit(path: str, node: dict[str, Any], trail: list[str]) -> None:
        if path in trail:
            loop = [*trail[trail.index(path):], path]
            if frozenset(loop) not in seen_loops:
                seen_loops.add(frozenset(loop))
                loops.append(loop)
            return
        if path in done:
            return
        trail.append(path)
        for next_path, next_node in successors(path, node):
            visit(next_path, next_node, trail)
        trail.pop()
        done.add(path)

    for path, node in _walk(schema):
        visit(path, node, [])
    return loops


SAMPLES = {"string": "x", "integer": 1, "number": 1, "boolean": True, "array": [], "object": {}, "null": None}


def sample(schema: dict[str, Any]) -> dict[str, Any]:
    """A submission with one plain value for each field of the form ``schema``: its ``const``, its
    first ``enum`` choice or its ``default``, else a value of its ``type`` (text "x", the number 1,
    yes, an empty list or group). Whether the form accepts it does not matter: it is run through
    the validator to see that the validator itself works."""
    values: dict[str, Any] = {}
    for name, prop in (schema.get("properties") or {}).items():
        if not isinstance(prop, dict):
            values[name] = "x"
        elif "const" in prop:
            values[name] = prop["const"]
        elif isinstance(prop.get("enum"), list) and prop["enum"]:
            values[name] = prop["enum"][0]
        elif "default" in prop:
            values[name] = prop["default"]
        else:
            kind = prop.get("type")
            first = kind[0] if isinstance(kind, list) and kind else kind
            values[name] = SAMPLES.get(first, "x") if isinstance(first, str) else "x"
    return values


def validator_failure(schema: dict[str, Any], data: Any) -> str | None:
    """Why the validator of ``schema`` itself fails on ``data`` (not: why the data is invalid), in
    words, or None when it runs: a reference loop (Python's ``RecursionError``), a reference that
    cannot be resolved, a pattern RE2 cannot run, or any other exception of jsonschema, its format
    checkers or ``referencing``."""
    try:
        for _error in validator(schema).iter_errors(data):
            pass
    except RecursionError:
        return "its references loop without end"
    except Unresolvable as unresolvable:
        return f"it refers to {getattr(unresolvable, 'ref', '') or unresolvable} outside itself"
    except PatternRefused as refused:
        return f"a pattern cannot be checked in linear time ({refused})"
    except Exception as error:  # any failure of a third-party validator is the form's defect, named
        return f"its validator fails ({type(error).__name__}: {error})"
    return None


def problems(name: str, schema: Any) -> list[str]:
    """Why form ``name`` cannot be deployed: not a JSON Schema, a reference outside it or to
    nothing, a loop of references, ``patternProperties``, a pattern that RE2 cannot run, or a
    validator that fails on a sample submission (:func:`sample`). Empty when it can.

    Every message names the form and, where there is one, the reference, the loop's path or the
    pattern.
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
    for loop in reference_loops(schema, resolver):
        found.append(f"form {name}: its references loop without going into a field: {' -> '.join(loop)}; every "
                     "submission would recurse without end. Make one of them a schema of its own")
    if not found:
        failure = validator_failure(schema, sample(schema))
        if failure is not None:
            found.append(f"form {name} cannot check a submission: {failure}")
    return found
