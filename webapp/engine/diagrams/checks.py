"""The checks of a process diagram that SpiffWorkflow would not make, found all at once, for
:func:`webapp.engine.diagrams.parser.examine` (no Flask here): the structure SpiffWorkflow 3.2.0 cannot build
(elements it does not run, references to nothing), and the project's rules — user tasks in a lane
that is a role, with a form that exists and is valid; service tasks naming a registered handler;
expressions the sandbox accepts; gateways with a default or conditions on every flow; timers that
count calendar days with ``period_end`` (Rule 2) and an objection period of at least 30 days
(Rule 130(a)); overdue timers by ``service_level_end`` (those of the timers in
:mod:`webapp.engine.diagrams.timer_checks`); no event-based gateway on two timers (a SpiffWorkflow 3.2.0
bug); each flow node's documentation naming its clause (a warning).

Each check takes the parsed tree (lxml) and the set of elements in scope (the process that would
run and those its call activities call) and returns :class:`~webapp.engine.diagrams.problems.Problem` values
naming the element by kind, name and id.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

from lxml import etree

from webapp.engine.diagrams import elements as el
from webapp.engine.diagrams import expressions
from webapp.engine.diagrams.problems import Problem
from webapp.engine.diagrams.timer_checks import MIN_OBJECTION_DAYS, check_timers, own_documentation
from webapp.engine.forms import schemas as form_checks

ROLES = ("pound_keeper", "secretary", "sarpanch", "appellate_authority", "receiving_officer")
FORM_PROPERTY = "formJsonSchemaFilename"
BPMN_NS = el.BPMN_NS
SPIFF_NS = el.SPIFF_NS
CLAUSE_PREFIXES = ("Rule 130", "Rule 2", "reading:")
NOTICE_FORM = "publish_notice.schema.json"
# What SpiffWorkflow 3.2.0's spiff parser builds (bpmn/parser/BpmnParser.py PARSER_CLASSES and the spiff
# parser's overrides); any other flow node in a process that runs stops it.
ENGINE_RUNS = frozenset({
    "task", "userTask", "manualTask", "serviceTask", "scriptTask", "sendTask", "receiveTask", "subProcess",
    "transaction", "adHocSubProcess", "callActivity", "startEvent", "endEvent", "intermediateCatchEvent",
    "intermediateThrowEvent", "boundaryEvent", "exclusiveGateway", "inclusiveGateway", "parallelGateway",
    "eventBasedGateway",
})
SUBPROCESSES = ("subProcess", "transaction", "adHocSubProcess")
GATEWAYS = ("exclusiveGateway", "inclusiveGateway", "parallelGateway", "eventBasedGateway", "complexGateway")
WAITS_FOR = ("messageEventDefinition", "signalEventDefinition", "timerEventDefinition", "conditionalEventDefinition")
REFERENCES = {"messageRef": "message", "signalRef": "signal", "errorRef": "error", "escalationRef": "escalation"}
_REFERRING = etree.XPath("//*[" + " or ".join(f"@{a}" for a in REFERENCES) + "]")


# -- what SpiffWorkflow cannot build, found all at once ----------------------------------------------------

def _in_scope(root: etree._Element, scope: set[Any], *names: str) -> list[Any]:
    tags = [f"{{{BPMN_NS}}}{name}" for name in names]
    return [e for e in root.iter(*tags) if e in scope]


def _problem(element: Any, message: str, severity: str = "error") -> Problem:
    element_id, line, where = el.where(element)
    return Problem(message, element_id, line, severity, where)


def _check_structure(root: etree._Element, called: list[Any], scope: set[Any]) -> list[Problem]:
    """What stops SpiffWorkflow 3.2.0 from building the processes that run (it would stop at the first,
    in its own words): start events, call activities and the processes they call, flows from tasks and
    to elements of other processes, kinds of element it does not run, service operators, references
    to messages, signals, errors and escalations, multi-instance loops, subprocesses' start and end
    events, catch events with nothing to wait for, and data stores."""
    problems: list[Problem] = []
    ids = el.by_id(root)
    for process in called:
        if process.find(f"{{{BPMN_NS}}}startEvent") is None:
            problems.append(_problem(process, f"{el.describe(process)} has no start event; a case starts at a start "
                                              "event: add one"))
    process_ids = {p.get("id") for p in root.findall(f"{{{BPMN_NS}}}process")}
    for call in _in_scope(root, scope, "callActivity"):
        value = (call.get("calledElement") or "").strip()
        if not value:
            problems.append(_problem(call, f"{el.describe(call)} calls no process; set calledElement to the id of a "
                                           "process in this file"))
            continue
        if value in process_ids:
            process = el.top_process(root, value)
            if (process.get("isExecutable") or "").strip() in ("false", "0"):
                problems.append(_problem(call, f"{el.describe(call)} calls {el.describe(process)}, which is marked "
                                               "not executable; set isExecutable=\"true\" on it"))
            continue
        foreign = el.foreign_namespace(call, value)
        elsewhere = f" (of namespace {foreign}, another file)" if foreign else ""
        problems.append(_problem(call, f"{el.describe(call)} calls {value}{elsewhere}, which is not a process in this "
                                       "file; this installation runs one file: put the process it calls in it"))
    for node in _in_scope(root, scope, *el.FLOW_NODES):
        name = el.local(node)
        if name not in ENGINE_RUNS:
            problems.append(_problem(node, f"{el.describe(node)}: the engine (SpiffWorkflow 3.2.0) cannot run a "
                                           f"{el.kind(node)}; replace it with a task, event or gateway it runs"))
            continue
        outgoing = _flows_from(root, node.get("id") or "")
        if len(outgoing) > 1 and name not in GATEWAYS and name != "startEvent":
            problems.append(_problem(node, f"{el.describe(node)} has {len(outgoing)} outgoing sequence flows; the "
                                           "engine splits only at gateways: add an exclusive or parallel gateway "
                                           "after it"))
        if name == "serviceTask" and _operator(node) is None:
            problems.append(_problem(node, f"{el.describe(node)} names no handler; give it a service operator "
                                           "(spiffworkflow:serviceTaskOperator) that names a registered handler"))
        if name == "intermediateCatchEvent" and not any(node.find(f"{{{BPMN_NS}}}{d}") is not None
                                                         for d in WAITS_FOR):
            problems.append(_problem(node, f"{el.describe(node)} waits for no event the engine can wait for; give "
                                           "it a message, signal, timer or conditional event definition"))
        if name in SUBPROCESSES and name != "adHocSubProcess" and node.get("triggeredByEvent") != "true":
            starts = node.findall(f"{{{BPMN_NS}}}startEvent")
            if len(starts) != 1:
                problems.append(_problem(node, f"{el.describe(node)} has {len(starts)} start events; a subprocess "
                                               "needs exactly one"))
            if node.find(f"{{{BPMN_NS}}}endEvent") is None:
                problems.append(_problem(node, f"{el.describe(node)} has no end event; a subprocess needs one"))
        loop = node.find(f"{{{BPMN_NS}}}multiInstanceLoopCharacteristics")
        if loop is not None:
            cardinality = loop.find(f"{{{BPMN_NS}}}loopCardinality") is not None
            collection = loop.find(f"{{{BPMN_NS}}}loopDataInputRef") is not None
            if cardinality == collection:
                problems.append(_problem(node, f"{el.describe(node)} is a multi-instance task with "
                                               f"{'both' if cardinality else 'neither'} a loopCardinality "
                                               f"{'and' if cardinality else 'nor'} a loopDataInputRef; give it "
                                               "exactly one of them"))
    for flow in _in_scope(root, scope, "sequenceFlow"):
        home = _container(flow)
        for end in ("sourceRef", "targetRef"):
            target = ids.get((flow.get(end) or "").strip())
            if target is None or _container(target) is not home:
                problems.append(_problem(flow, f"{el.describe(flow)} {'starts at' if end == 'sourceRef' else 'leads to'}"
                                               f" {flow.get(end) or 'nothing'}, which is not an element of the same "
                                               "process or subprocess"))
    kinds = {name: {e.get("id") for e in root.iter(f"{{{BPMN_NS}}}{name}")} for name in REFERENCES.values()}
    for element in (e for e in _REFERRING(root) if e in scope and el.is_bpmn(e)):
        for attribute, what in REFERENCES.items():
            value = (element.get(attribute) or "").strip()
            if value and value not in kinds[what]:
                # an event definition is named by its event (the shape an administrator sees)
                owner = element.getparent() if el.local(element).endswith("EventDefinition") else element
                problems.append(_problem(owner, f"{el.describe(owner)} refers to the {what} {value}, which is not "
                                                f"in this file; define it (bpmn:{what}) or refer to one that is"))
    stores = {s.get("id"): s for s in root.iter(f"{{{BPMN_NS}}}dataStore")}
    for reference in _in_scope(root, scope, "dataStoreReference"):
        named = (reference.get("dataStoreRef") or "").strip()
        store = stores.get(named)
        if not named:
            problems.append(_problem(reference, f"{el.describe(reference)} names no data store (dataStoreRef), and the "
                                                "engine implements none; remove it and its associations (keep the "
                                                "data in a form or a task variable)"))
            continue
        if store is None:
            problems.append(_problem(reference, f"{el.describe(reference)} uses data store {named}, which is not in "
                                                "this file (and the engine implements no data store); remove it and "
                                                "its associations (keep the data in a form or a task variable)"))
            continue
        what = el.describe(store) if el.name_of(store) else f"data store {named} (it has no name)"
        problems.append(_problem(reference, f"{el.describe(reference)} uses {what}, which has no implementation in "
                                            "the engine; remove the data store and its references (keep the data in "
                                            "a form or a task variable)"))
    return problems


def _container(element: Any) -> Any:
    """The process or subprocess a flow element belongs to."""
    parent = element.getparent()
    while parent is not None and not el.is_bpmn(parent, "process", *SUBPROCESSES):
        parent = parent.getparent()
    return parent


def _operator(task: Any) -> Any:
    found = task.findall(f"{{{BPMN_NS}}}extensionElements/{{{SPIFF_NS}}}serviceTaskOperator")
    return found[-1] if found else None


def _properties(task: Any) -> dict[str, str]:
    """The task's spiffworkflow properties as SpiffWorkflow reads them (the last properties element)."""
    found = task.findall(f"{{{BPMN_NS}}}extensionElements/{{{SPIFF_NS}}}properties")
    if not found:
        return {}
    return {p.get("name"): p.get("value") for p in found[-1].iter(f"{{{SPIFF_NS}}}property") if p.get("name")}


def _form_of(task: Any) -> str | None:
    return _properties(task).get(FORM_PROPERTY) if el.is_bpmn(task, "userTask") else None


def _forms_named(root: etree._Element, scope: set[Any]) -> set[str]:
    return {f for f in (_form_of(t) for t in _in_scope(root, scope, "userTask")) if f}


def _lanes(root: etree._Element) -> dict[str, str | None]:
    """Flow node id -> the name of the lane that lists it, as SpiffWorkflow reads them (the last lane
    listing a node wins: a child lane over its parent)."""
    found: dict[str, str | None] = {}
    for ref in root.iter(f"{{{BPMN_NS}}}flowNodeRef"):
        if ref.text is not None:
            found[ref.text] = ref.getparent().get("name")
    return found


def _lane_of(node: Any, lanes: dict[str, str | None]) -> str | None:
    """A flow node's lane as SpiffWorkflow gives it: the lane of the subprocess around it, else its own."""
    parent = node.getparent()
    while parent is not None and not el.is_bpmn(parent, "process", *SUBPROCESSES):
        parent = parent.getparent()
    if parent is not None and el.is_bpmn(parent, *SUBPROCESSES):
        around = _lane_of(parent, lanes)
        if around is not None:
            return around
    return lanes.get(node.get("id"))


def check_project_rules(root: etree._Element, scope: set[Any], forms: dict[str, dict[str, Any]],
                        handler_names: Iterable[str] | None, unread_forms: Iterable[str] = ()) -> list[Problem]:
    """The project's rules (see the module text) on the elements that would run.

    Args:
        root: the document (its QName references resolved: :func:`elements.resolve_references`).
        scope: the elements of the process that runs and of the processes it calls (:func:`elements.scope`).
        forms: the forms the user tasks name, by file name.
        handler_names: the registered handlers; None skips that check.
        unread_forms: forms sent but unreadable (reported on their own, not as missing).
    Returns:
        Every problem, errors and warnings, in document order per rule.
    """
    problems: list[Problem] = []
    handlers = set(handler_names) if handler_names is not None else None
    unread = set(unread_forms)
    lanes = _lanes(root)
    for node in _in_scope(root, scope, *el.FLOW_NODES):
        subject = el.describe(node)
        name = el.local(node)
        if name == "userTask":
            lane = _lane_of(node, lanes)
            if lane is None:
                problems.append(_problem(node, f"{subject} has no lane; put it in the lane of the role that does it "
                                               f"({', '.join(ROLES)})"))
            elif lane not in ROLES:
                problems.append(_problem(node, f"{subject} is in lane {lane!r}, which is not a role "
                                               f"({', '.join(ROLES)})"))
            form = _form_of(node)
            if not form:
                problems.append(_problem(node, f"{subject} names no form ({FORM_PROPERTY})"))
            elif form not in forms and form not in unread:
                problems.append(_problem(node, f"{subject} names form {form}, which is not in the deployment"))
        if name == "serviceTask" and handlers is not None:
            operator = _operator(node)
            if operator is not None and operator.get("id") not in handlers:
                problems.append(_problem(node, f"{subject} calls {operator.get('id')!r}, which is not a registered "
                                               "handler"))
        documentation = own_documentation(node).strip()
        if not documentation:
            problems.append(_problem(node, f"{subject} has no documentation; begin it with its clause "
                                           "('Rule 130(a)', 'Rule 2 (day)', or 'reading: ...')", "warning"))
        elif not documentation.startswith(CLAUSE_PREFIXES):
            problems.append(_problem(node, f"the documentation of {subject} does not begin with its clause; start it "
                                           "with 'Rule 130', 'Rule 2' or 'reading:'", "warning"))
    for name, schema_ in forms.items():
        problems += [Problem(message) for message in form_checks.problems(name, schema_)]
    if NOTICE_FORM in forms:
        problems += _check_notice_form(forms[NOTICE_FORM])
    problems += check_timers(root, scope)
    problems += _check_gateways(root, scope)
    problems += _check_event_gateways(root, scope)
    for message, element_id, line in expressions.check(root, scope):
        element = el.by_id(root).get(element_id or "")
        subject = el.describe(element) if element is not None else "the diagram"
        where = el.where(element)[2] if element is not None else None
        problems.append(Problem(f"{subject}: {message}", element_id, line, path=where))
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


def _element(root: etree._Element, element_id: str | None) -> etree._Element | None:
    return el.by_id(root).get(element_id) if element_id else None


@functools.lru_cache(maxsize=8)
def _flows_by_source(root: etree._Element) -> dict[str, list[etree._Element]]:
    found: dict[str, list[etree._Element]] = {}
    for flow in root.iter(f"{{{BPMN_NS}}}sequenceFlow"):
        found.setdefault((flow.get("sourceRef") or "").strip(), []).append(flow)
    return found


def _flows_from(root: etree._Element, node_id: str) -> list[etree._Element]:
    return _flows_by_source(root).get(node_id, [])


def _check_gateways(root: etree._Element, scope: set[Any]) -> list[Problem]:
    """An exclusive or inclusive gateway that splits has a condition or is the default on every
    outgoing flow (SpiffWorkflow refuses it otherwise, naming the flow, not the gateway)."""
    problems: list[Problem] = []
    for gateway in _in_scope(root, scope, "exclusiveGateway", "inclusiveGateway"):
        flows = _flows_from(root, gateway.get("id") or "")
        if len(flows) < 2:
            continue
        default = gateway.get("default")
        missing = [f for f in flows
                   if f.get("id") != default and not (f.findtext(f"{{{BPMN_NS}}}conditionExpression") or "").strip()]
        if missing:
            listed = ", ".join(_flow_words(f) for f in missing)
            problems.append(_problem(gateway, f"{el.describe(gateway)} has outgoing flow(s) {listed} with no "
                                              "condition; give each a condition or make one the gateway's default "
                                              "flow"))
    return problems


def _flow_words(flow: etree._Element) -> str:
    """A flow by its id, with its name when it has one: ``f_no ('No')``."""
    name = el.name_of(flow)
    return f"{flow.get('id')} ('{name}')" if name else str(flow.get("id"))


def _check_event_gateways(root: etree._Element, scope: set[Any]) -> list[Problem]:
    """No event-based gateway waits on two timers (SpiffWorkflow 3.2.0 uses the first timer's instant for both)."""
    problems: list[Problem] = []
    for gateway in _in_scope(root, scope, "eventBasedGateway"):
        timers = []
        for flow in _flows_from(root, gateway.get("id") or ""):
            target = _element(root, flow.get("targetRef"))
            if target is not None and target.find(f"{{{BPMN_NS}}}timerEventDefinition") is not None:
                timers.append(target)
        if len(timers) >= 2:
            listed = ", ".join(_flow_words(t) for t in timers)
            problems.append(_problem(gateway, f"{el.describe(gateway)} waits on {len(timers)} timers ({listed}); "
                                              "SpiffWorkflow 3.2.0 would fire them all at the first timer's instant: "
                                              "keep one timer behind the gateway and model the others apart"))
    return problems
