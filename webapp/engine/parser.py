"""Parse and check a process diagram and its forms (no Flask here).

Untrusted XML is parsed by lxml with entities, DTDs and network off and a size limit, then handed
to SpiffWorkflow's parser with BPMN 2.0 + spiffworkflow XSD validation, on a fresh parser every
time (SPIFFWORKFLOW.md, "Parsing": a parser that once raised may return a truncated spec later).
The project's own rules follow: every user task sits in a lane that is a role and names a form
that exists and is a valid JSON Schema; every service task names a registered handler; every
expression passes the sandbox; every exclusive gateway has a default or conditions on all flows;
every timer computes its instant with ``period_end(event, days, timezone)`` (Rule 2, calendar days)
and the objection period is never below 30 days (Rule 130(a)), except overdue timers: a
non-interrupting boundary event on a user task may use ``service_level_end("<that task>", days,
timezone)``, the end of the task's service level (RULE130.md) plus whole days, which only
reminds; no event-based gateway waits on two timers (a SpiffWorkflow 3.2.0 bug); every flow
node's documentation begins with its clause.
:func:`verdict` runs the same pipeline over any BPMN file (the corpus of other tools' diagrams).
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any, Iterable

from lxml import etree
from SpiffWorkflow.bpmn.parser.ValidationException import ValidationException
from SpiffWorkflow.spiff.parser.process import VALIDATOR, SpiffBpmnParser

from .. import legal_time
from ..errors import InvalidDiagram
from . import expressions
from . import forms as form_checks

MAX_BPMN_BYTES = 2 * 1024 * 1024
MAX_FORM_BYTES = 256 * 1024
ROLES = ("pound_keeper", "secretary", "sarpanch", "appellate_authority", "receiving_officer")
FORM_PROPERTY = "formJsonSchemaFilename"
BPMN_NS = "http://www.omg.org/spec/BPMN/20100524/MODEL"
NS = {"bpmn": BPMN_NS, "spiffworkflow": "http://spiffworkflow.org/bpmn/schema/1.0/core"}
CLAUSE_PREFIXES = ("Rule 130", "Rule 2", "reading:")
MIN_OBJECTION_DAYS = 30
# Timers whose length the rule itself fixes: element id -> (the start it counts from, days after the
# start's day, the clause). The release window: the 3 days after impoundment (Rule 130, heading);
# the conditional auction: 3 days, its opening day and the 2 after it (Rule 130(b)).
FIXED_PERIODS = {
    "bt_release_window": ("impounded_at", 3, "Rule 130 (heading): the 3 days after impoundment"),
    "bt_auction_closes": ('notice["auction_opened_at"]', 2,
                          "Rule 130(b): the conditional auction lasts 3 days, its opening day and the 2 after"),
}
OBJECTION_TIMER = "n_ice_period_ends"
# Periods whose days come from the case, never a constant: element id -> (the days, what they are).
# The objection period from the notice (at least 30 days, Rule 130(a)); the appeal window M and the
# return period from the Panchayat's settings (RULE130.md, "Settings": 1-365 and 1-90 days).
PERIOD_SOURCES = {
    OBJECTION_TIMER: ('notice["objection_period_days"]', "the objection period must take its days from the notice"),
    "ice_appeal_window_ends": ("appeal_period_days", "the appeal window must take its days from the Panchayat's "
                               "setting (at least 1 day)"),
    "bt_return_deadline": ("return_period_days", "the return period must take its days from the Panchayat's "
                           "setting (at least 1 day)"),
}
MAX_PERIOD_DAYS = legal_time.MAX_PERIOD_DAYS
NOTICE_FORM = "publish_notice.schema.json"
USE_PERIOD_END = "use period_end(event, days, timezone) (Rule 2: calendar days in the Panchayat's time zone)"
SERVICE_LEVEL_END = "service_level_end"  # overdue timers (service levels, not legal periods)
MAX_OVERDUE_DAYS = 60


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
    # element id -> task spec, the first in the process and then its subprocesses (filled on first use)
    by_bpmn_id: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


def refusal(message: str, problems: list[Problem], lines: list[str] | None = None) -> InvalidDiagram:
    """An InvalidDiagram carrying ``problems`` as Problem objects and as text lines (``lines``, by
    default ``str(problem)`` each)."""
    return InvalidDiagram(message, lines if lines is not None else [str(p) for p in problems], problems)


def problems_of(error: InvalidDiagram) -> list[Problem]:
    """The structured problems of a refusal (a plain message becomes one problem with no element)."""
    return list(error.found) or [Problem(p) for p in error.problems]


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
    # A DTD is refused before lxml sees it: libxml2 would otherwise stop a "billion laughs" file with
    # its own amplification error, a message that does not say what to remove.
    first_element = _FIRST_ELEMENT.search(bpmn_xml)
    prolog = bpmn_xml[:first_element.start() if first_element else len(bpmn_xml)].upper()
    if b"<!DOCTYPE" in prolog or b"<!ENTITY" in prolog:
        start = prolog.find(b"<!DOCTYPE") if b"<!DOCTYPE" in prolog else prolog.find(b"<!ENTITY")
        raise refusal(DTD_REFUSED, [Problem(DTD_REFUSED, line=bpmn_xml[:start].count(b"\n") + 1)], [DTD_REFUSED])
    try:
        root = etree.fromstring(bpmn_xml, safe_xml_parser())
    except etree.XMLSyntaxError as error:
        raise _not_well_formed(error) from None
    if root.getroottree().docinfo.internalDTD is not None:
        raise refusal(DTD_REFUSED, [Problem(DTD_REFUSED)], [DTD_REFUSED])
    if etree.QName(root).namespace != BPMN_NS or etree.QName(root).localname != "definitions":
        message = "the file is not BPMN 2.0: its root element is not bpmn:definitions"
        raise refusal(message, [Problem(message, line=root.sourceline)], [message])
    return root


def _not_well_formed(error: etree.XMLSyntaxError) -> InvalidDiagram:
    """lxml's syntax error as a refusal whose problem carries the line (the message keeps lxml's text)."""
    message = f"the file is not well-formed XML: {error}"
    line = error.lineno if isinstance(error.lineno, int) and error.lineno > 0 else None
    return refusal(message, [Problem(f"the file is not well-formed XML: {error.msg}", line=line)], [message])


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
    # Checks on the XML alone that SpiffWorkflow would stop at one by one, naming no element or
    # with a message an administrator cannot act on: report them all, before SpiffWorkflow's parser.
    structural = _check_data_stores(root, parser) + _check_exclusive_gateways(root)
    if structural:
        raise refusal(f"{len(structural)} problem(s) stop this diagram from running", structural)
    try:
        parser.add_bpmn_xml(etree.ElementTree(root), filename=filename)
        spec = parser.get_spec(process_id)
        subprocess_specs = parser.get_subprocess_specs(process_id)
    except ValidationException as error:
        line = error.line_number or _line_of(root, getattr(error, "id", None))
        message = _ELEMENT_REPR.sub(lambda m: m.group(1), " ".join(str(error).split()))
        raise refusal("the diagram is not valid BPMN",
                      [Problem(message, getattr(error, "id", None) or None, line)]) from None
    except etree.XMLSyntaxError as error:
        raise _not_well_formed(error) from None
    except Exception as error:  # SpiffWorkflow raises plain exceptions for some malformed input
        raise InvalidDiagram(f"the diagram cannot be parsed: {error}") from None

    named = {f for f in (_form_of(t) for t in _all_task_specs(spec, subprocess_specs)) if f}
    problems = check_project_rules(root, spec, subprocess_specs, {k: v for k, v in forms.items() if k in named},
                                   handler_names)
    problems += [Problem(f"form {name} is named by no user task and is left out of the version", severity="warning")
                 for name in sorted(set(forms) - named)]
    errors = [p for p in problems if p.severity == "error"]
    if errors:
        raise refusal(f"{len(errors)} problem(s) stop this diagram from running", errors)
    forms = {name: forms[name] for name in sorted(named) if name in forms}
    return ParsedProcess(process_id, spec, subprocess_specs, forms, bpmn_xml, content_hash(bpmn_xml, forms),
                         [p for p in problems if p.severity != "error"])


_FIRST_ELEMENT = re.compile(rb"<[A-Za-z_:]")
DTD_REFUSED = "the file declares a DTD or entities; BPMN files must not"
_ELEMENT_REPR = re.compile(r"<Element \{[^}]*\}(\w+) at 0x[0-9a-fA-F]+>")


def _check_data_stores(root: etree._Element, parser: SpiffBpmnParser) -> list[Problem]:
    """Data stores SpiffWorkflow cannot implement (it would stop at the first, naming no element)."""
    known = set(getattr(parser, "DATA_STORE_CLASSES", {}) or {})
    return [Problem(f"data store {' '.join((store.get('name') or '').split())!r} has no implementation in the "
                    "engine; remove it and its references (keep the data in a form or a task variable)",
                    store.get("id"), store.sourceline)
            for store in root.iter(f"{{{BPMN_NS}}}dataStore") if store.get("name") not in known]


def verdict(bpmn_xml: bytes, forms: dict[str, dict], handler_names: Iterable[str] | None) -> tuple[bool, list[str]]:
    """Run the validation pipeline over any BPMN file and say whether it could be deployed.

    The process is picked here: the first process with ``isExecutable="true"``, else the first process.

    Returns:
        (deployable, problems): problems are ``str(Problem)`` lines, errors first, then warnings.
    """
    deployable, problems = diagnose(bpmn_xml, forms, handler_names)
    return deployable, [str(p) for p in problems]


def diagnose(bpmn_xml: bytes, forms: dict[str, dict], handler_names: Iterable[str] | None,
             process_id: str | None = None) -> tuple[bool, list[Problem]]:
    """:func:`verdict` with the problems as Problem objects (element id, line, message, severity).

    Args:
        process_id: the process to build; None picks it as :func:`verdict` does.
    Returns:
        (deployable, problems): errors first, then warnings; deployable when no problem is an error.
    """
    try:
        root = read_xml(bpmn_xml)
    except InvalidDiagram as error:
        return False, problems_of(error)
    processes = root.findall(f"{{{BPMN_NS}}}process")
    if not processes:
        return False, [Problem("the file has no process")]
    lead: list[Problem] = []
    if process_id is None:
        executable = [p for p in processes if p.get("isExecutable") == "true"]
        chosen = (executable or processes)[0]
        process_id = chosen.get("id") or ""
        if not executable:
            lead.append(Problem('no executable process: mark the process to run with isExecutable="true"',
                                process_id, chosen.sourceline))
    try:
        parsed = parse_process(bpmn_xml, forms, process_id, handler_names=handler_names)
    except InvalidDiagram as error:
        problems = [p for p in problems_of(error)
                    if not (lead and p.message.rstrip(". ").endswith("is not executable"))]
        return False, lead + problems
    return not lead, lead + list(parsed.warnings)


def _form_of(task_spec: Any) -> str | None:
    if task_spec.__class__.__name__ != "UserTask":
        return None
    return (task_spec.extensions.get("properties") or {}).get(FORM_PROPERTY)


@functools.lru_cache(maxsize=4)
def _by_id(root: etree._Element) -> dict[str, etree._Element]:
    """Every element of the diagram that has an id, by id (the first of a duplicated id, as
    ``//*[@id=...]`` finds it), built once per parsed tree: the checks look elements up by id
    hundreds of times per diagram, and an XPath search each time made a deploy quadratic."""
    found: dict[str, etree._Element] = {}
    for element in root.iter():
        key = element.get("id") if isinstance(element.tag, str) else None
        if key is not None and key not in found:
            found[key] = element
    return found


def _element(root: etree._Element, element_id: str | None) -> etree._Element | None:
    return _by_id(root).get(element_id) if element_id else None


def _line_of(root: etree._Element, element_id: str | None) -> int | None:
    found = _element(root, element_id)
    return found.sourceline if found is not None else None


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
            if task_spec.lane is None:
                problems.append(Problem(f"user task has no lane; put it in the lane of the role that does it "
                                        f"({', '.join(ROLES)})", bpmn_id, line))
            elif task_spec.lane not in ROLES:
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
        documentation = _documentation(root, bpmn_id).strip()
        if not documentation:
            problems.append(Problem("flow node has no documentation; begin it with its clause "
                                    "('Rule 130(a)', 'Rule 2 (day)', or 'reading: ...')", bpmn_id, line, "warning"))
        elif not documentation.startswith(CLAUSE_PREFIXES):
            problems.append(Problem("documentation does not begin with its clause; start it with 'Rule 130', "
                                    "'Rule 2' or 'reading:'", bpmn_id, line, "warning"))
    for name, schema in forms.items():
        problems += [Problem(message) for message in form_checks.problems(name, schema)]
    if NOTICE_FORM in forms:
        problems += _check_notice_form(forms[NOTICE_FORM])
    problems += _check_timers(root)
    problems += _check_event_gateways(root)
    problems += [Problem(message, element_id, line) for message, element_id, line in expressions.check(root)]
    return problems


def _check_notice_form(schema: Any) -> list[Problem]:
    """The notice form keeps the 30-day minimum on the objection period (Rule 130(a))."""
    field_schema = ((schema or {}).get("properties") or {}).get("objection_period_days") \
        if isinstance(schema, dict) else None
    minimum = field_schema.get("minimum") if isinstance(field_schema, dict) else None
    if isinstance(minimum, bool) or not isinstance(minimum, (int, float)) or minimum < MIN_OBJECTION_DAYS:
        return [Problem(f'form {NOTICE_FORM} must keep "minimum": {MIN_OBJECTION_DAYS} or more on '
                        f"objection_period_days (found {minimum!r}): the objection period can never be below "
                        f"{MIN_OBJECTION_DAYS} days (Rule 130(a))")]
    return []


def _int_constant(node: ast.expr) -> int | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = _int_constant(node.operand)
        return -value if value is not None else None
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    return None


def _is_reference(node: ast.expr) -> bool:
    """A value of the case: a name, or a name subscripted by constant keys (``notice["days"]``)."""
    while isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        node = node.value
    return isinstance(node, ast.Name)


def _check_timers(root: etree._Element) -> list[Problem]:
    """Every timer is ``period_end(event, days, timezone)`` in a timeDate, its days a whole number
    from 0 to :data:`MAX_PERIOD_DAYS` or a value of the case (no computation, whose result no check
    could bound); Rule 130(a) periods >= 30 days; the periods the rule fixes as it fixes them; the
    periods of :data:`PERIOD_SOURCES` from their source; or an overdue timer
    (:func:`_check_service_level_timer`)."""
    problems: list[Problem] = []
    for definition in root.iter(f"{{{BPMN_NS}}}timerEventDefinition"):
        event = definition.getparent()
        event_id = event.get("id") if event is not None else None
        line = definition.sourceline
        expressions = [c for c in definition if isinstance(c.tag, str)
                       and etree.QName(c).localname in ("timeDate", "timeDuration", "timeCycle")]
        if not expressions:
            problems.append(Problem(f"timer has no expression; {USE_PERIOD_END} in a timeDate", event_id, line))
            continue
        node = expressions[0]
        source = (node.text or "").strip()
        line = node.sourceline
        kind = etree.QName(node).localname
        if kind != "timeDate":
            problems.append(Problem(f"timer uses {kind} {source!r}; {USE_PERIOD_END} in a timeDate", event_id, line))
            continue
        try:
            tree = ast.parse(source, mode="eval").body
        except SyntaxError:
            tree = None
        if isinstance(tree, ast.Call) and isinstance(tree.func, ast.Name) and tree.func.id == SERVICE_LEVEL_END:
            problems += _check_service_level_timer(root, event, event_id, source, tree, line)
            continue
        if not (isinstance(tree, ast.Call) and isinstance(tree.func, ast.Name) and tree.func.id == "period_end"
                and len(tree.args) == 3 and not tree.keywords):
            problems.append(Problem(f"timer expression {source!r} is not a legal period; {USE_PERIOD_END}",
                                    event_id, line))
            continue
        days_node, zone_node = tree.args[1], tree.args[2]
        if not (isinstance(zone_node, ast.Name) and zone_node.id == "timezone"):
            problems.append(Problem(f"timer expression {source!r} must pass timezone (the Panchayat's time "
                                    f"zone) as the third argument; {USE_PERIOD_END}", event_id, line))
        days = _int_constant(days_node)
        mentions_130a = "Rule 130(a)" in _own_documentation(event)
        if days is None and not _is_reference(days_node):
            problems.append(Problem(f"timer expression {source!r}: the days must be a whole number from 0 to "
                                    f"{MAX_PERIOD_DAYS} or a value of the case "
                                    '(e.g. notice["objection_period_days"]), not a computation', event_id, line))
        elif days is not None and days < 0:
            problems.append(Problem(f"timer expression {source!r} has a negative number of days", event_id, line))
        elif days is not None and days > MAX_PERIOD_DAYS:
            problems.append(Problem(f"timer expression {source!r}: a period of more than {MAX_PERIOD_DAYS} days "
                                    "(ten years) is no period of this rule", event_id, line))
        elif days is not None and days < MIN_OBJECTION_DAYS and (mentions_130a or event_id == OBJECTION_TIMER):
            problems.append(Problem(f"timer expression {source!r}: the objection period can never be below "
                                    f"{MIN_OBJECTION_DAYS} days (Rule 130(a))", event_id, line))
        elif event_id in FIXED_PERIODS and (ast.dump(tree.args[0]), days) != (
                ast.dump(ast.parse(FIXED_PERIODS[event_id][0], mode="eval").body), FIXED_PERIODS[event_id][1]):
            start, fixed, clause = FIXED_PERIODS[event_id]
            problems.append(Problem(f"timer expression {source!r}: this period is fixed by the rule; write "
                                    f"period_end({start}, {fixed}, timezone) ({clause})", event_id, line))
        elif event_id in PERIOD_SOURCES and ast.dump(days_node) != ast.dump(
                ast.parse(PERIOD_SOURCES[event_id][0], mode="eval").body):
            wanted, what = PERIOD_SOURCES[event_id]
            problems.append(Problem(f"timer expression {source!r}: {what} ({wanted}), never a constant",
                                    event_id, line))
    return problems


def _check_service_level_timer(root: etree._Element, event: etree._Element | None, event_id: str | None, source: str,
                               tree: ast.Call, line: int | None) -> list[Problem]:
    """An overdue timer: ``service_level_end("<attached task id>", <days after>, timezone)``.

    A service level is the project's setting, not a legal period (RULE130.md), so it may only
    remind: the form is allowed on a non-interrupting boundary event of a user task, naming that
    task, with a whole number of days after the due day (0 to 60). It can never close a task,
    end a legal period or stand in for ``period_end`` (whose literal days the other checks see).
    """
    where = (event_id, line)
    usage = (f'{SERVICE_LEVEL_END}("<the task it is attached to>", <days after the due day, 0-60>, timezone)')
    if event is None or etree.QName(event).localname != "boundaryEvent" or event.get("cancelActivity") != "false":
        return [Problem(f"timer expression {source!r}: {SERVICE_LEVEL_END} is only for a non-interrupting boundary "
                        'event (cancelActivity="false") on a user task: a service level reminds and escalates, '
                        f"it never closes a task or ends a legal period; legal periods {USE_PERIOD_END}", *where)]
    host_id = event.get("attachedToRef") or ""
    host = _element(root, host_id)
    if host is None or etree.QName(host).localname != "userTask":
        return [Problem(f"timer expression {source!r}: {SERVICE_LEVEL_END} must be on a boundary event of a user "
                        f"task; {host_id or 'nothing'} is not one", *where)]
    if len(tree.args) != 3 or tree.keywords:
        return [Problem(f"timer expression {source!r} is not an overdue timer; use {usage}", *where)]
    task_node, days_node, zone_node = tree.args
    problems = []
    if not (isinstance(task_node, ast.Constant) and task_node.value == host_id):
        problems.append(Problem(f"timer expression {source!r} must name the task it is attached to "
                                f'("{host_id}") as its first argument; use {usage}', *where))
    days = _int_constant(days_node)
    if days is None or not 0 <= days <= MAX_OVERDUE_DAYS:
        problems.append(Problem(f"timer expression {source!r}: the days after the due day must be a whole number "
                                f"from 0 to {MAX_OVERDUE_DAYS}; use {usage}", *where))
    if not (isinstance(zone_node, ast.Name) and zone_node.id == "timezone"):
        problems.append(Problem(f"timer expression {source!r} must pass timezone (the Panchayat's time zone) as the "
                                f"third argument; use {usage}", *where))
    return problems


def _flows_from(root: etree._Element, node_id: str) -> list[etree._Element]:
    return root.xpath("//bpmn:sequenceFlow[@sourceRef=$id]", id=node_id, namespaces=NS)


def _check_exclusive_gateways(root: etree._Element) -> list[Problem]:
    """An exclusive gateway that splits has a condition or is the default on every outgoing flow."""
    problems: list[Problem] = []
    for gateway in root.iter(f"{{{BPMN_NS}}}exclusiveGateway"):
        flows = _flows_from(root, gateway.get("id") or "")
        if len(flows) < 2:
            continue
        default = gateway.get("default")
        missing = [f.get("id") for f in flows
                   if f.get("id") != default and not (f.findtext(f"{{{BPMN_NS}}}conditionExpression") or "").strip()]
        if missing:
            problems.append(Problem(f"exclusive gateway has outgoing flow(s) {', '.join(missing)} with no condition; "
                                    "give each a condition or make one the gateway's default flow",
                                    gateway.get("id"), gateway.sourceline))
    return problems


def _check_event_gateways(root: etree._Element) -> list[Problem]:
    """No event-based gateway waits on two timers (SpiffWorkflow 3.2.0 uses the first timer's instant for both)."""
    problems: list[Problem] = []
    for gateway in root.iter(f"{{{BPMN_NS}}}eventBasedGateway"):
        timers = []
        for flow in _flows_from(root, gateway.get("id") or ""):
            target = _element(root, flow.get("targetRef"))
            if target is not None and target.find(f"{{{BPMN_NS}}}timerEventDefinition") is not None:
                timers.append(target.get("id"))
        if len(timers) >= 2:
            problems.append(Problem(f"event-based gateway waits on {len(timers)} timers ({', '.join(timers)}); "
                                    "SpiffWorkflow 3.2.0 would fire them all at the first timer's instant: keep "
                                    "one timer behind the gateway and model the others apart",
                                    gateway.get("id"), gateway.sourceline))
    return problems


def _own_documentation(element: etree._Element | None) -> str:
    if element is None:
        return ""
    return " ".join(d.text or "" for d in element.findall(f"{{{BPMN_NS}}}documentation"))


def _documentation(root: etree._Element, bpmn_id: str) -> str:
    element = _element(root, bpmn_id)
    if element is None:
        return ""
    return " ".join(d.text for d in element.findall(f"{{{BPMN_NS}}}documentation") if d.text)


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
