"""A diagram's elements in an administrator's words, and the parts of a file that would run.

- :func:`describe` names an element as a message should: its kind and name (``exclusive gateway
  'Invoice approved?'``), its id when it has no name, and for an element with neither (``<bpmn:outgoing>``)
  the element around it that has one. :func:`where` gives the element id, line and — when the line
  does not point to one element, as in a file written on one line — the path to it.
- :func:`processes` lists the processes a file holds (id, name, pool, ``isExecutable``);
  :func:`scope` is the process this installation would run with the processes its call activities
  call: the part of the file whose behaviour the product checks.
- :func:`resolve_references` rewrites prefixed QName references that point into the file itself
  (``messageRef="tns:msg"`` where ``tns`` is the file's ``targetNamespace``) to the plain id, as the
  BPMN 2.0 XSD allows them to be written and as SpiffWorkflow looks them up.

No Flask here; nothing is fetched.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from lxml import etree

BPMN_NS = "http://www.omg.org/spec/BPMN/20100524/MODEL"
BPMNDI_NS = "http://www.omg.org/spec/BPMN/20100524/DI"
DC_NS = "http://www.omg.org/spec/DD/20100524/DC"
DI_NS = "http://www.omg.org/spec/DD/20100524/DI"
SPIFF_NS = "http://spiffworkflow.org/bpmn/schema/1.0/core"
XSI_NS = "http://www.w3.org/2001/XMLSchema-instance"
XSD_NS = "http://www.w3.org/2001/XMLSchema"
PREFIXES = {BPMN_NS: "bpmn", BPMNDI_NS: "bpmndi", DC_NS: "dc", DI_NS: "di", SPIFF_NS: "spiffworkflow",
            XSI_NS: "xsi", XSD_NS: "xsd"}
OMG_NAMESPACES = (BPMN_NS, BPMNDI_NS, DC_NS, DI_NS)

# Kinds whose words are not their split camel-case name.
KIND_WORDS = {
    "subProcess": "subprocess", "adHocSubProcess": "ad-hoc subprocess", "ioSpecification": "I/O specification",
    "BPMNDiagram": "diagram", "BPMNPlane": "diagram plane", "BPMNShape": "diagram shape", "BPMNEdge": "diagram edge",
    "BPMNLabel": "diagram label", "BPMNLabelStyle": "diagram label style", "multiInstanceLoopCharacteristics":
    "multi-instance loop", "standardLoopCharacteristics": "standard loop", "definitions": "definitions element",
    "eventBasedGateway": "event-based gateway",
}
FLOW_NODES = frozenset({
    "task", "userTask", "manualTask", "serviceTask", "scriptTask", "sendTask", "receiveTask", "businessRuleTask",
    "subProcess", "transaction", "adHocSubProcess", "callActivity", "startEvent", "endEvent",
    "intermediateCatchEvent", "intermediateThrowEvent", "boundaryEvent", "exclusiveGateway", "inclusiveGateway",
    "parallelGateway", "eventBasedGateway", "complexGateway", "callChoreography", "choreographyTask",
    "subChoreography", "implicitThrowEvent",
})
ACTIVITIES = frozenset({"task", "userTask", "manualTask", "serviceTask", "scriptTask", "sendTask", "receiveTask",
                        "businessRuleTask", "subProcess", "transaction", "adHocSubProcess", "callActivity"})
MAX_NAME = 80

# References the BPMN 2.0 XSD types as xsd:QName (Semantic.xsd; BPMNDI.xsd's bpmnElement): attributes, and
# elements whose text is one.
QNAME_ATTRIBUTES = frozenset({
    "activityRef", "attachedToRef", "calledChoreographyRef", "calledCollaborationRef", "calledElement",
    "categoryValueRef", "correlationKeyRef", "correlationPropertyRef", "dataStoreRef", "definition",
    "definitionalCollaborationRef", "errorRef", "escalationRef", "evaluatesToTypeRef", "implementationRef",
    "initiatingParticipantRef", "innerConversationNodeRef", "innerMessageFlowRef", "itemRef", "itemSubjectRef",
    "messageRef", "noneBehaviorEventRef", "oneBehaviorEventRef", "operationRef", "outerConversationNodeRef",
    "outerMessageFlowRef", "parameterRef", "partitionElementRef", "processRef", "signalRef", "sourceRef",
    "structureRef", "targetRef", "bpmnElement", "sourceElement", "targetElement", "labelStyle",
})
QNAME_TEXTS = frozenset({
    "categoryValueRef", "choreographyRef", "correlationPropertyRef", "endPointRef", "errorRef", "eventDefinitionRef",
    "inMessageRef", "incoming", "innerParticipantRef", "interfaceRef", "loopDataInputRef", "loopDataOutputRef",
    "messageFlowRef", "operationRef", "outMessageRef", "outerParticipantRef", "outgoing", "participantRef",
    "resourceRef", "source", "supportedInterfaceRef", "supports", "target",
})


def local(element: Any) -> str:
    """The element's local name ('' for a comment or processing instruction)."""
    return etree.QName(element).localname if isinstance(element.tag, str) else ""


def is_bpmn(element: Any, *names: str) -> bool:
    """Whether ``element`` is a BPMN 2.0 model element (of one of ``names``, when given)."""
    if not isinstance(element.tag, str):
        return False
    name = etree.QName(element)
    return name.namespace == BPMN_NS and (not names or name.localname in names)


def qualified(namespace: str | None, name: str, element: Any = None) -> str:
    """``prefix:name`` as a reader knows it: the usual prefix of the OMG and SpiffWorkflow namespaces,
    else the prefix the file declares for ``namespace`` (looked up on ``element``), else the name
    with its namespace in words."""
    if not namespace:
        return name
    prefix = PREFIXES.get(namespace)
    if prefix is None and element is not None:
        prefix = next((p for p, ns in element.nsmap.items() if ns == namespace and p), None)
    return f"{prefix}:{name}" if prefix else f"{name} (namespace {namespace})"


def tag_words(element: Any) -> str:
    """``<bpmn:outgoing>``: the element's tag as written in a BPMN file."""
    name = etree.QName(element)
    return f"<{qualified(name.namespace, name.localname, element)}>"


def kind(element: Any) -> str:
    """The kind of a BPMN or diagram element in words (``exclusive gateway``, ``diagram shape``);
    for any other element its tag (``<ot:schemaObjectDescription>``)."""
    name = etree.QName(element)
    if name.namespace not in OMG_NAMESPACES:
        return f"extension element {tag_words(element)}"
    if name.localname in KIND_WORDS:
        return KIND_WORDS[name.localname]
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name.localname).lower()


def name_of(element: Any) -> str | None:
    """The element's ``name`` with its white space collapsed (cut at 80 characters), or None."""
    name = " ".join((element.get("name") or "").split()) if isinstance(element.tag, str) else ""
    if not name:
        return None
    return name if len(name) <= MAX_NAME else name[:MAX_NAME - 1] + "…"


def _identified(element: Any) -> bool:
    """A BPMN or diagram element with an id (an extension's ``id``, such as SpiffWorkflow's service operator's
    handler name, is no element id)."""
    return isinstance(element.tag, str) and bool(element.get("id")) and \
        etree.QName(element).namespace in OMG_NAMESPACES


def owner(element: Any) -> Any:
    """The element itself when it has an id, else the nearest element around it that has one (None:
    nothing around it has an id)."""
    while element is not None and not _identified(element):
        element = element.getparent()
    return element


def describe(element: Any, root: Any = None) -> str:
    """The element in words: ``user task 'Record the bid'``; ``exclusive gateway Gateway_1`` when it has
    no name; ``<bpmn:outgoing> of task 'Review'`` when it has neither name nor id. A diagram shape or
    edge also says what it draws (``root``: to look that up)."""
    name, element_id = name_of(element), (element.get("id") if _identified(element) else None)
    if name:
        words = f"{kind(element)} '{name}'"
    elif element_id:
        words = f"{kind(element)} {element_id}"
    else:
        around = owner(element.getparent()) if element.getparent() is not None else None
        words = tag_words(element)
        return f"{words} of {describe(around, root)}" if around is not None else words
    drawn = element.get("bpmnElement")
    if drawn and root is not None and etree.QName(element).namespace == BPMNDI_NS:
        target = by_id(root).get(drawn.rpartition(":")[2])
        if target is not None and target is not element:
            words += f" (which draws {describe(target)})"
    return words


def describe_id(root: Any, element_id: str | None) -> str:
    """The element with ``element_id`` in words (:func:`describe`), or the id itself when the file has
    no such element."""
    found = by_id(root).get(element_id or "")
    return describe(found) if found is not None else (element_id or "(none)")


@functools.lru_cache(maxsize=8)
def by_id(root: Any) -> dict[str, Any]:
    """Every BPMN or diagram element of the document that has an id, by id (the first of a duplicated
    id, in document order), built once per parsed tree."""
    found: dict[str, Any] = {}
    for element in root.iter(*_OMG_ANY):
        key = element.get("id")
        if key is not None and key not in found:
            found[key] = element
    return found


_OMG_ANY = tuple(f"{{{namespace}}}*" for namespace in OMG_NAMESPACES)


@functools.lru_cache(maxsize=8)
def _lines(root: Any) -> Counter[int]:
    return Counter(e.sourceline for e in root.iter() if isinstance(e.tag, str))


def path(element: Any) -> str:
    """The element's place in the document by local names, with its position among siblings of the
    same name where there are several: ``/definitions/process[2]/userTask[3]``."""
    steps = []
    while element is not None:
        parent = element.getparent()
        step = local(element)
        if parent is not None:
            same = [c for c in parent if c.tag == element.tag]
            if len(same) > 1:
                step += f"[{same.index(element) + 1}]"
        steps.append(step)
        element = parent
    return "/" + "/".join(reversed(steps))


def where(element: Any, root: Any = None) -> tuple[str | None, int | None, str | None]:
    """``(element_id, line, path)`` for a Problem about ``element``: the id of the element or of the
    nearest element around it that has one, its line, and its path when three or more elements
    start on that line (the line alone does not find it)."""
    if element is None:
        return None, None, None
    root = root if root is not None else element.getroottree().getroot()
    found = owner(element)
    line = element.sourceline
    shared = line is not None and _lines(root)[line] >= 3
    return (found.get("id") if found is not None else None), line, (path(element) if shared else None)


# -- the processes of a file ------------------------------------------------------------------------------

@dataclass(frozen=True)
class ProcessFacts:
    """A process the file holds: its id, name, the name of the pool (participant) that shows it,
    and ``isExecutable`` (True, False, or None when the file does not say)."""

    id: str
    name: str | None
    pool: str | None
    executable: bool | None
    line: int | None
    flag: str = ""  # isExecutable as written (when it is neither true nor false)

    @property
    def runs(self) -> bool:
        """Whether SpiffWorkflow would run it: ``isExecutable`` true or absent (its default)."""
        return self.executable is True or (self.executable is None and not self.flag)

    def words(self) -> str:
        """``process 'Invoice handling' (Process_1, executable)``; ``process Process_2 (pool 'Customer', not
        executable)`` for one with no name."""
        state = {True: "executable", False: "not executable", None: "isExecutable not set"}[self.executable]
        if self.executable is None and self.flag:
            state = f"isExecutable '{self.flag}', not true or false"
        ident = self.id or "with no id"
        if self.name:
            return f"process '{self.name}' ({ident}, {state})"
        pool = f"pool '{self.pool}', " if self.pool else ""
        return f"process {ident} ({pool}{state})"

    def as_json(self) -> dict[str, Any]:
        """``{"id", "name", "pool", "executable"}`` (``executable`` null when the file does not say)."""
        return {"id": self.id, "name": self.name, "pool": self.pool, "executable": self.executable}


def processes(root: Any) -> list[ProcessFacts]:
    """The top-level processes of the file, in document order."""
    pools = {}
    for participant in root.iter(f"{{{BPMN_NS}}}participant"):
        ref = (participant.get("processRef") or "").rpartition(":")[2]
        if ref and ref not in pools and name_of(participant):
            pools[ref] = name_of(participant)
    found = []
    for process in root.findall(f"{{{BPMN_NS}}}process"):
        flag = (process.get("isExecutable") or "").strip()
        executable = True if flag in ("true", "1") else False if flag in ("false", "0") else None
        process_id = process.get("id") or ""
        found.append(ProcessFacts(process_id, name_of(process), pools.get(process_id), executable,
                                  process.sourceline, flag))
    return found


def listing(facts: Iterable[ProcessFacts]) -> str:
    """The processes in words, joined: ``process 'A' (a, executable), process b (…) and process c (…)``."""
    words = [f.words() for f in facts]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def process_of(element: Any) -> Any:
    """The top-level process an element belongs to (None: it is outside every process)."""
    while element is not None:
        parent = element.getparent()
        if is_bpmn(element, "process") and parent is not None and is_bpmn(parent, "definitions"):
            return element
        element = parent
    return None


def top_process(root: Any, process_id: str) -> Any:
    """The top-level process with ``process_id`` (None: the file has none)."""
    return next((p for p in root.findall(f"{{{BPMN_NS}}}process") if p.get("id") == process_id), None)


def scope(root: Any, process_id: str) -> tuple[list[Any], set[Any]]:
    """The process ``process_id`` and every process its call activities call (transitively), and the
    set of their elements: what would run. Empty when the file has no such process."""
    start = top_process(root, process_id)
    if start is None:
        return [], set()
    found, queue = [], [start]
    while queue:
        process = queue.pop(0)
        if process in found:
            continue
        found.append(process)
        for call in process.iter(f"{{{BPMN_NS}}}callActivity"):
            called = top_process(root, (call.get("calledElement") or "").strip())
            if called is not None and called not in found:
                queue.append(called)
    elements: set[Any] = set()
    for process in found:
        elements.update(e for e in process.iter() if isinstance(e.tag, str))
    return found, elements


def resolve_references(root: Any) -> None:
    """Rewrite, in place, every prefixed QName reference that points into this file to the plain id it
    names (``tns:msg`` -> ``msg``).

    The BPMN 2.0 XSD types these references as xsd:QName, so ``messageRef="tns:msg"`` is valid and
    means the ``msg`` of this file when ``tns`` stands for its ``targetNamespace``; SpiffWorkflow 3.2.0
    looks references up as plain ids. Some tools write the prefix of the BPMN namespace itself
    (``semantic:msg``): a namespace no ``bpmn:import`` brings in, so it too is read as this file's when
    the file has an element with that id. References into imported namespaces (another file) and
    undeclared prefixes are left as written: the checks and the XSD report them. Only BPMN and BPMN DI
    elements are touched (extension attributes such as SpiffWorkflow's own are not QNames).
    """
    target = (root.get("targetNamespace") or "").strip()
    imported = {(i.get("namespace") or "").strip() for i in root.iter(f"{{{BPMN_NS}}}import")}
    ids = set(by_id(root))

    def _own(element: Any, value: str) -> str | None:
        prefix, colon, name = value.partition(":")
        if not colon or not name:
            return None
        namespace = element.nsmap.get(prefix)
        if namespace is None:
            return None  # an undeclared prefix: the XSD says so
        if namespace == target or (namespace not in imported and name in ids):
            return name
        return None
    # XPath finds the few candidates (a prefixed value) in C; a file has thousands of elements
    for value in root.xpath("//@*[contains(., ':')]"):
        element, attribute = value.getparent(), value.attrname
        if attribute in QNAME_ATTRIBUTES and etree.QName(element).namespace in (BPMN_NS, BPMNDI_NS):
            plain = _own(element, value.strip())
            if plain is not None:
                element.set(attribute, plain)
    for element in root.iter(*_QNAME_TEXT_TAGS):
        if element.text and ":" in element.text:
            plain = _own(element, element.text.strip())
            if plain is not None:
                element.text = plain


_QNAME_TEXT_TAGS = tuple(f"{{{BPMN_NS}}}{name}" for name in sorted(QNAME_TEXTS))


def foreign_namespace(element: Any, value: str) -> str | None:
    """The namespace a still-prefixed reference points into (after :func:`resolve_references`: another
    file's), or None for a plain id or an undeclared prefix."""
    prefix, colon, _ = value.partition(":")
    return element.nsmap.get(prefix) if colon else None
