"""A Babel extractor for the JSON Schema forms of the process library (``babel.cfg``).

Every ``title`` and ``description`` (of the form, of each property and of each ``then`` of an
if/then: a conditional field's hint) and every ``enum`` value, as
the page shows it (``not_proved`` -> ``not proved``), becomes a catalogue message, so the task form
of a deployed version is shown in the officer's language through the same catalogue as the pages.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import IO, Any


def enum_words(value: Any) -> str:
    """An enum value as the form's select shows it: ``not_proved`` -> ``not proved``."""
    return str(value).replace("_", " ")


def schema_texts(schema: dict[str, Any]) -> Iterator[str]:
    """The user-visible texts of a JSON Schema form, in document order (repeats included)."""
    for key in ("title", "description"):
        if isinstance(schema.get(key), str):
            yield schema[key]
    for prop in (schema.get("properties") or {}).values():
        if not isinstance(prop, dict):
            continue
        for key in ("title", "description"):
            if isinstance(prop.get(key), str):
                yield prop[key]
        for option in prop.get("enum") or []:
            yield enum_words(option)
    # the hint of a field that applies only for some choice (the ``then`` of an if/then:
    # webapp.engine.forms.conditions), at the top level or in the top-level allOf
    branches = [schema] + [item for item in schema.get("allOf") or [] if isinstance(item, dict)]
    for branch in branches:
        then = branch.get("then") if "if" in branch else None
        if isinstance(then, dict) and isinstance(then.get("description"), str):
            yield then["description"]


def extract_json_schema(fileobj: IO[bytes], keywords: Any, comment_tags: Any,
                        options: dict[str, Any]) -> Iterator[tuple[int, str, str, list[str]]]:
    """Babel's extractor interface: yields ``(line, funcname, message, comments)`` per text."""
    schema = json.loads(fileobj.read().decode("utf-8"))
    for text in schema_texts(schema):
        yield 1, "gettext", text, ["JSON Schema form"]


# Elements whose names officers read (task lists, the case history, the case page's "active now" and
# "waiting for", the diagram's legend); flows, lanes (roles: webapp.values.vocabulary) and messages are not
# shown as text.
SHOWN_ELEMENTS = ("userTask", "serviceTask", "scriptTask", "task", "callActivity", "startEvent", "endEvent",
                  "boundaryEvent", "intermediateCatchEvent", "intermediateThrowEvent", "subProcess", "transaction",
                  "parallelGateway", "eventBasedGateway", "exclusiveGateway", "inclusiveGateway")
# Labels drawn on the diagram only (webapp.services.cases.overview.labelled_for): the pools' titles and
# the names of sequence flows (a gateway's "yes" / "no").
DRAWN_ELEMENTS = ("participant", "sequenceFlow")
BPMN_NS = "http://www.omg.org/spec/BPMN/20100524/MODEL"


def bpmn_names(data: bytes) -> Iterator[tuple[int, str]]:
    """``(line, name)`` of each shown or drawn element of a BPMN file (XML read without entities or
    network)."""
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
    root = etree.fromstring(data, parser)
    for kind in SHOWN_ELEMENTS + DRAWN_ELEMENTS:
        for element in root.iter(f"{{{BPMN_NS}}}{kind}"):
            name = (element.get("name") or "").strip()
            if name:
                yield element.sourceline or 1, name


def extract_bpmn(fileobj: IO[bytes], keywords: Any, comment_tags: Any,
                 options: dict[str, Any]) -> Iterator[tuple[int, str, str, list[str]]]:
    """Babel's extractor interface for BPMN diagrams: the names of tasks and events."""
    for line, name in bpmn_names(fileobj.read()):
        yield line, "gettext", name, ["BPMN element name"]
