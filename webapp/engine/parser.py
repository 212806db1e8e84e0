"""Parse and check a process diagram and its forms (no Flask here).

Untrusted XML is parsed by lxml with entities, DTDs and network off and a size limit, then handed
to SpiffWorkflow's parser with BPMN 2.0 + spiffworkflow XSD validation, on a fresh parser every
time (SPIFFWORKFLOW.md, "Parsing": a parser that once raised may return a truncated spec later).
The project's own rules follow: every user task sits in a lane that is a role and names a form
that exists and is a valid JSON Schema; every service task names a registered handler; every
expression passes the sandbox; every exclusive gateway has a default or conditions on all flows.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Iterable

import jsonschema
from lxml import etree
from SpiffWorkflow.bpmn.parser.ValidationException import ValidationException
from SpiffWorkflow.spiff.parser.process import VALIDATOR, SpiffBpmnParser

from ..errors import InvalidDiagram
from .sandbox import ScriptRefused, compile_expression, compile_script

MAX_BPMN_BYTES = 2 * 1024 * 1024
MAX_FORM_BYTES = 256 * 1024
ROLES = ("pound_keeper", "secretary", "sarpanch", "appellate_authority", "receiving_officer")
FORM_PROPERTY = "formJsonSchemaFilename"
BPMN_NS = "http://www.omg.org/spec/BPMN/20100524/MODEL"
NS = {"bpmn": BPMN_NS, "spiffworkflow": "http://spiffworkflow.org/bpmn/schema/1.0/core"}


@dataclass
class Problem:
    """One reason a diagram cannot be deployed, tied to its element and line."""

    message: str
    element_id: str | None = None
    line: int | None = None
    severity: str = "error"  # error | warning

    def __str__(self) -> str:
        where = []
        if self.element_id:
            where.append(self.element_id)
        if self.line:
            where.append(f"line {self.line}")
        prefix = f"{', '.join(where)}: " if where else ""
        return f"{self.severity}: {prefix}{self.message}"


@dataclass
class ParsedProcess:
    """A parsed, checked process: what the engine needs to start and resume instances."""

    process_id: str
    spec: Any
    subprocess_specs: dict[str, Any]
    forms: dict[str, dict]
    bpmn_xml: bytes
    content_hash: str
    warnings: list[Problem] = field(default_factory=list)


def safe_xml_parser() -> etree.XMLParser:
    """An lxml parser that never expands entities, loads DTDs or touches the network."""
    return etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False,
                           dtd_validation=False, huge_tree=False, remove_comments=False)


def content_hash(bpmn_xml: bytes, forms: dict[str, dict]) -> str:
    """SHA-256 over the diagram and its forms together (the identity of a process version)."""
    digest = hashlib.sha256(bpmn_xml)
    for name in sorted(forms):
        digest.update(name.encode())
        digest.update(json.dumps(forms[name], sort_keys=True).encode())
    return digest.hexdigest()


def read_xml(bpmn_xml: bytes) -> etree._Element:
    """Parse untrusted BPMN XML safely.

    Raises:
        InvalidDiagram: too large, malformed, or carrying a DTD / entity declarations.
    """
    if len(bpmn_xml) > MAX_BPMN_BYTES:
        raise InvalidDiagram(f"the diagram is {len(bpmn_xml)} bytes; the limit is {MAX_BPMN_BYTES}")
    try:
        root = etree.fromstring(bpmn_xml, safe_xml_parser())
    except etree.XMLSyntaxError as error:
        raise InvalidDiagram(f"the file is not well-formed XML: {error}") from None
    doctype = root.getroottree().docinfo.internalDTD
    if doctype is not None or b"<!ENTITY" in bpmn_xml[:4096].upper():
        raise InvalidDiagram("the file declares a DTD or entities; BPMN files must not")
    if etree.QName(root).namespace != BPMN_NS or etree.QName(root).localname != "definitions":
        raise InvalidDiagram("the file is not BPMN 2.0: its root element is not bpmn:definitions")
    return root


def parse_process(bpmn_xml: bytes, forms: dict[str, dict], process_id: str = "rule130_case",
                  handler_names: Iterable[str] | None = None, filename: str = "rule130.bpmn") -> ParsedProcess:
    """Parse and check a diagram with its forms.

    Args:
        bpmn_xml: the BPMN file's bytes.
        forms: JSON Schema forms by file name (as user tasks name them).
        process_id: the executable process to build.
        handler_names: registered service-task operators; None skips that check.
    Returns:
        ParsedProcess with the SpiffWorkflow spec and subprocess specs.
    Raises:
        InvalidDiagram: with every problem found (element id and line where known).
    """
    root = read_xml(bpmn_xml)
    parser = SpiffBpmnParser(validator=VALIDATOR)
    try:
        parser.add_bpmn_xml(etree.ElementTree(root), filename=filename)
        spec = parser.get_spec(process_id)
        subprocess_specs = parser.get_subprocess_specs(process_id)
    except ValidationException as error:
        line = error.line_number or _line_of(root, getattr(error, "id", None))
        raise InvalidDiagram("the diagram is not valid BPMN",
                             [str(Problem(str(error).splitlines()[0], getattr(error, "id", None) or None, line))]) from None
    except etree.XMLSyntaxError as error:
        raise InvalidDiagram(f"the file is not well-formed XML: {error}") from None
    except Exception as error:  # SpiffWorkflow raises plain exceptions for some malformed input
        raise InvalidDiagram(f"the diagram cannot be parsed: {error}") from None

    named = {f for f in (_form_of(t) for t in _all_task_specs(spec, subprocess_specs)) if f}
    problems = check_project_rules(root, spec, subprocess_specs, {k: v for k, v in forms.items() if k in named},
                                   handler_names)
    problems += [Problem(f"form {name} is named by no user task and is left out of the version", severity="warning")
                 for name in sorted(set(forms) - named)]
    errors = [p for p in problems if p.severity == "error"]
    if errors:
        raise InvalidDiagram(f"{len(errors)} problem(s) stop this diagram from running", [str(p) for p in errors])
    forms = {name: forms[name] for name in sorted(named) if name in forms}
    return ParsedProcess(process_id, spec, subprocess_specs, forms, bpmn_xml, content_hash(bpmn_xml, forms),
                         [p for p in problems if p.severity != "error"])


def _form_of(task_spec: Any) -> str | None:
    if task_spec.__class__.__name__ != "UserTask":
        return None
    return (task_spec.extensions.get("properties") or {}).get(FORM_PROPERTY)


def _line_of(root: etree._Element, element_id: str | None) -> int | None:
    if not element_id:
        return None
    found = root.xpath("//*[@id=$id]", id=element_id)
    return found[0].sourceline if found else None


def _all_task_specs(spec: Any, subprocess_specs: dict[str, Any]) -> list[Any]:
    specs = list(spec.task_specs.values())
    for sub in subprocess_specs.values():
        specs.extend(sub.task_specs.values())
    return specs


def check_project_rules(root: etree._Element, spec: Any, subprocess_specs: dict[str, Any], forms: dict[str, dict],
                        handler_names: Iterable[str] | None) -> list[Problem]:
    """The project's rules on a parsed diagram (see the module docstring)."""
    problems: list[Problem] = []
    handlers = set(handler_names) if handler_names is not None else None
    for task_spec in _all_task_specs(spec, subprocess_specs):
        bpmn_id = getattr(task_spec, "bpmn_id", None)
        if bpmn_id is None:
            continue
        line = _line_of(root, bpmn_id)
        kind = task_spec.__class__.__name__
        if kind == "UserTask":
            if task_spec.lane not in ROLES:
                problems.append(Problem(f"user task is in lane {task_spec.lane!r}, which is not a role "
                                        f"({', '.join(ROLES)})", bpmn_id, line))
            form = (task_spec.extensions.get("properties") or {}).get(FORM_PROPERTY)
            if not form:
                problems.append(Problem(f"user task names no form ({FORM_PROPERTY})", bpmn_id, line))
            elif form not in forms:
                problems.append(Problem(f"user task names form {form}, which is not in the deployment", bpmn_id, line))
        if kind == "ServiceTask" and handlers is not None and task_spec.operation_name not in handlers:
            problems.append(Problem(f"service task calls {task_spec.operation_name!r}, which is not a registered "
                                    "handler", bpmn_id, line))
        if not (task_spec.description or "").strip() and not _documentation(root, bpmn_id):
            problems.append(Problem("flow node has no documentation naming its clause", bpmn_id, line, "warning"))
    for name, schema in forms.items():
        try:
            jsonschema.Draft202012Validator.check_schema(schema)
        except jsonschema.SchemaError as error:
            problems.append(Problem(f"form {name} is not a valid JSON Schema: {error.message}"))
    for node in root.iter(f"{{{BPMN_NS}}}conditionExpression", f"{{{BPMN_NS}}}timeDate",
                          f"{{{BPMN_NS}}}timeDuration", f"{{{BPMN_NS}}}timeCycle", f"{{{BPMN_NS}}}script"):
        owner = node.getparent()
        while owner is not None and owner.get("id") is None:
            owner = owner.getparent()
        try:
            source = (node.text or "").strip()
            compile_script(source) if etree.QName(node).localname == "script" else compile_expression(source)
        except ScriptRefused as error:
            problems.append(Problem(f"expression refused by the sandbox: {error}",
                                    owner.get("id") if owner is not None else None, node.sourceline))
    return problems


def _documentation(root: etree._Element, bpmn_id: str) -> str:
    found = root.xpath("//*[@id=$id]/bpmn:documentation/text()", id=bpmn_id, namespaces=NS)
    return " ".join(found)


def load_forms(directory: Any) -> dict[str, dict]:
    """Read every ``*.schema.json`` in ``directory`` (a pathlib.Path).

    Raises:
        InvalidDiagram: a form that is too large or not JSON.
    """
    forms: dict[str, dict] = {}
    for path in sorted(directory.glob("*.json")):
        data = path.read_bytes()
        if len(data) > MAX_FORM_BYTES:
            raise InvalidDiagram(f"form {path.name} is larger than {MAX_FORM_BYTES} bytes")
        try:
            forms[path.name] = json.loads(data)
        except ValueError as error:
            raise InvalidDiagram(f"form {path.name} is not JSON: {error}") from None
    return forms
