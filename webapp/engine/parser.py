"""Parse and check a process diagram and its forms, and say what is true of the file (no Flask here).

:func:`examine` is the one pipeline; its :class:`Verdict` says, in one pass:

1. whether the file is well-formed XML (lxml with entities, DTDs and network off and a size limit);
2. whether it is valid BPMN 2.0 by the XSD (:mod:`webapp.engine.schema`: every error, in words);
3. which processes it holds, executable or not (:mod:`webapp.engine.elements`);
4. for the process this installation runs (``rule130_case``), what stops it from running here: the
   structure SpiffWorkflow cannot build (found before it runs, all at once), SpiffWorkflow's own
   refusal in words (:mod:`webapp.engine.engine_errors`), and the project's rules: every user task
   sits in a lane that is a role and names a form that exists and is a valid JSON Schema; every
   service task names a registered handler; every expression passes the sandbox; every exclusive or
   inclusive gateway has a default or conditions on all flows; every timer computes its instant with
   ``period_end(event, days, timezone)`` (Rule 2, calendar days) and the objection period is never
   below 30 days (Rule 130(a)), except overdue timers: a non-interrupting boundary event on a user task
   may use ``service_level_end("<that task>", days, timezone)``, the end of the task's service level
   (RULE130.md) plus whole days, which only reminds; no event-based gateway waits on two timers (a
   SpiffWorkflow 3.2.0 bug); every flow node's documentation begins with its clause (a warning); every
   name of a task, event, gateway, flow or lane has its Hindi (:mod:`webapp.engine.names`).

Checks of executable behaviour apply only to the process that would run and the processes its call
activities call: a pool that is not executable never blocks a deploy with its gateways or timers.
Every problem about an element names it (kind and name, with its id and line; the path when the line
is shared). SpiffWorkflow builds the spec from a fresh parser every time (SPIFFWORKFLOW.md,
"Parsing": a parser that once raised may return a truncated spec later). :func:`parse_process`
(deploy, ``rule130 deploy``) and :func:`diagnose` (the modeler, the API) are this pipeline.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from lxml import etree
from SpiffWorkflow.spiff.parser.process import SpiffBpmnParser

from .. import i18n, legal_time
from ..errors import InvalidDiagram
from . import elements as el
from . import engine_errors, expressions, names, schema
from . import forms as form_checks
from .problems import Problem

__all__ = [
    "ParsedProcess",
    "Problem",
    "Verdict",
    "check_project_rules",
    "content_hash",
    "diagnose",
    "examine",
    "load_forms",
    "parse_process",
    "problems_of",
    "read_xml",
    "refusal",
    "safe_xml_parser",
    "verdict",
]

PROCESS_ID = "rule130_case"  # the process this installation runs
MAX_BPMN_BYTES = 2 * 1024 * 1024
MAX_FORM_BYTES = 256 * 1024
ROLES = ("pound_keeper", "secretary", "sarpanch", "appellate_authority", "receiving_officer")
FORM_PROPERTY = "formJsonSchemaFilename"
BPMN_NS = el.BPMN_NS
SPIFF_NS = el.SPIFF_NS
NS = {"bpmn": BPMN_NS, "spiffworkflow": SPIFF_NS}
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
DTD_REFUSED = "the file declares a DTD or entities; BPMN files must not"
NOT_BPMN = "the file is not BPMN 2.0: its root element is not bpmn:definitions"
NOT_WELL_FORMED = "the file is not well-formed XML"
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
    summary: str = field(default="", repr=False, compare=False)  # the verdict's facts (Verdict.summary)


def counted(num: int, noun: str, plural: str | None = None) -> str:
    """``1 problem``, ``2 problems`` (English: the verdict's words are English, as the CLI prints them)."""
    return f"{num} {noun if num == 1 else plural or noun + 's'}"


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


# -- 1. well-formed XML ------------------------------------------------------------------------------------

def read_xml(bpmn_xml: bytes) -> etree._Element:
    """Parse untrusted BPMN XML safely.

    Raises:
        InvalidDiagram: too large, malformed (lxml's error in words, with its line), carrying a DTD /
            entity declarations, or with a root element other than bpmn:definitions.
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
        raise _not_well_formed(error, prolog) from None
    if root.getroottree().docinfo.internalDTD is not None:
        raise refusal(DTD_REFUSED, [Problem(DTD_REFUSED)], [DTD_REFUSED])
    if etree.QName(root).namespace != BPMN_NS or etree.QName(root).localname != "definitions":
        raise refusal(NOT_BPMN, [Problem(NOT_BPMN, line=root.sourceline)], [NOT_BPMN])
    return root


_FIRST_ELEMENT = re.compile(rb"<[A-Za-z_:]")
_POSITION = re.compile(r", line (\d+), column (\d+)$")
_ENCODING = re.compile(rb"""encoding\s*=\s*["']([A-Za-z0-9._-]+)["']""", re.I)
# libxml2's well-formedness errors, in words: (its message, ours)
_SYNTAX = [
    (re.compile(r"Opening and ending tag mismatch: (\S+) line (\d+) and (\S+)"),
     lambda m, enc: f"the element <{m[1]}> opened on line {m[2]} is closed by </{m[3]}>"),
    (re.compile(r"Premature end of data in tag (\S+) line (\d+)"),
     lambda m, enc: f"the file ends before the element <{m[1]}> opened on line {m[2]} is closed"),
    (re.compile(r"Invalid bytes in character encoding"),
     lambda m, enc: f"the file says its text is {enc} but holds bytes that are not {enc}; save it as {enc}"),
    (re.compile(r"xmlns:?(\S*): '(.*)' is not a valid URI"),
     lambda m, enc: f"the namespace declared as xmlns{':' + m[1] if m[1] else ''}=\"{m[2]}\" is not a valid URI "
                    "(a namespace URI holds no spaces)"),
    (re.compile(r"Namespace prefix (\S+) on (\S+) is not defined"),
     lambda m, enc: f"the prefix {m[1]} of <{m[1]}:{m[2]}> is not declared (xmlns:{m[1]}=\"…\")"),
    (re.compile(r"Namespace prefix (\S+) for (\S+) on (\S+) is not defined"),
     lambda m, enc: f"the prefix {m[1]} of the attribute {m[1]}:{m[2]} on <{m[3]}> is not declared"),
    (re.compile(r"Extra content at the end of the document"),
     lambda m, enc: "there is content after the end of the root element"),
    (re.compile(r"Document is empty"), lambda m, enc: "the file holds no XML element"),
    (re.compile(r"Start tag expected, '<' not found"), lambda m, enc: "the file does not begin with an XML element"),
    (re.compile(r"Attribute (\S+) redefined"), lambda m, enc: f"an element has the attribute {m[1]} twice"),
    (re.compile(r"xmlParseEntityRef: no name|EntityRef: expecting ';'"),
     lambda m, enc: "a '&' starts no character or entity reference; write &amp; for '&'"),
    (re.compile(r"Couldn't find end of Start Tag (\S+)"), lambda m, enc: f"the tag <{m[1]}> is not closed with '>'"),
    (re.compile(r"Unescaped '<' not allowed in attributes values"),
     lambda m, enc: "an attribute value holds '<'; write &lt;"),
]


def _not_well_formed(error: etree.XMLSyntaxError, prolog: bytes = b"") -> InvalidDiagram:
    """lxml's syntax error as a refusal in words, its problem carrying the line."""
    text = " ".join((error.msg or str(error)).split())
    position = _POSITION.search(text)
    text = _POSITION.sub("", text)
    declared = _ENCODING.search(prolog)
    encoding = declared.group(1).decode("ascii").upper() if declared else "UTF-8"
    for pattern, words in _SYNTAX:
        match = pattern.search(text)
        if match:
            text = words(match, encoding)
            break
    line = error.lineno if isinstance(error.lineno, int) and error.lineno > 0 else None
    where = f" (line {position.group(1)}, column {position.group(2)})" if position else ""
    message = f"{NOT_WELL_FORMED}: {text}{where}"
    return refusal(message, [Problem(message, line=line)], [message])


# -- the verdict ------------------------------------------------------------------------------------------

KINDS = {
    "not_xml": "not well-formed XML",
    "dtd": "declares a DTD or entities (refused unread)",
    "not_bpmn": "not BPMN 2.0 (root element)",
    "too_large": "too large",
    "no_process": "holds no process",
    "process_missing": "does not hold the process this installation runs",
    "not_executable": "the process this installation runs is not executable",
    "cannot_run": "problems stop the process from running here",
    "deployable": "deployable",
}


@dataclass
class Verdict:
    """What is true of a BPMN file for this installation (see the module text).

    ``well_formed`` and ``bpmn``: readable as XML, with bpmn:definitions as its root (and no DTD);
    ``unreadable``: why it was not read (not_xml, dtd, not_bpmn, too_large), None when it was;
    ``xsd_valid``: valid by the BPMN 2.0 XSD (None when it could not be read) with ``xsd_errors`` of
    them; ``processes``: the
    processes it holds; ``process_id``: the process this installation runs; ``checked``: the process
    whose behaviour was checked (``process_id``, or the file's only executable process when it holds no
    ``process_id``; None when nothing would run); ``problems``: errors then warnings; ``parsed``: the
    process ready to deploy (None unless deployable and asked for).
    """

    process_id: str
    problems: list[Problem] = field(default_factory=list)
    well_formed: bool = True
    bpmn: bool = True
    unreadable: str | None = None  # not_xml | dtd | not_bpmn | too_large
    xsd_valid: bool | None = None
    xsd_errors: int = 0
    processes: list[el.ProcessFacts] = field(default_factory=list)
    checked: str | None = None
    parsed: ParsedProcess | None = None

    @property
    def errors(self) -> list[Problem]:
        """The problems that stop a deploy."""
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        """The problems that do not stop a deploy."""
        return [p for p in self.problems if p.severity != "error"]

    @property
    def deployable(self) -> bool:
        """No problem is an error."""
        return not self.errors

    @property
    def target(self) -> el.ProcessFacts | None:
        """The facts of the process this installation runs, None when the file does not hold it."""
        return next((p for p in self.processes if p.id == self.process_id), None)

    @property
    def kind(self) -> str:
        """The verdict's class (a key of :data:`KINDS`): the first thing in the pipeline's order that
        is not so (``unreadable``, no process, the process missing, not executable, problems), else
        ``deployable``. XSD validity is a separate fact (``xsd_valid``)."""
        if self.unreadable:
            return self.unreadable
        if not self.processes:
            return "no_process"
        if self.target is None:
            return "process_missing"
        if not self.target.runs:
            return "not_executable"
        return "deployable" if self.deployable else "cannot_run"

    def headline(self) -> str:
        """One sentence for the refusal: what is wrong first, with the number of problems."""
        if self.unreadable:
            return self.problems[0].message if self.problems else KINDS[self.unreadable]
        errors = len(self.errors)
        if not self.xsd_valid:
            return (f"{counted(errors, 'problem')} {'stops' if errors == 1 else 'stop'} this diagram from running "
                    f"(the file is not valid BPMN 2.0: {counted(self.xsd_errors, 'schema error')})")
        return f"{counted(errors, 'problem')} {'stops' if errors == 1 else 'stop'} this diagram from running"

    def summary(self) -> str:
        """The facts in one line: XML, XSD, the processes, and whether the process this installation
        runs can run here."""
        if self.unreadable:
            return {"not_xml": "not well-formed XML", "dtd": "refused unread: it declares a DTD or entities",
                    "not_bpmn": "well-formed XML, but not BPMN 2.0 (its root element is not bpmn:definitions)",
                    "too_large": "refused unread: too large"}[self.unreadable]
        facts = ["well-formed XML", "valid BPMN 2.0" if self.xsd_valid else "not valid BPMN 2.0 (XSD)"]
        if not self.processes:
            facts.append("no process")
        else:
            facts.append(f"{counted(len(self.processes), 'process', 'processes')}: {el.listing(self.processes)}")
        target = self.target
        if target is None:
            facts.append(f"the process this installation runs, {self.process_id}, is not in the file")
        elif not target.runs:
            facts.append(f"{self.process_id} is not executable")
        elif self.deployable:
            facts.append(f"{self.process_id} can run here")
        else:
            facts.append(f"{counted(len(self.errors), 'problem')} {'stops' if len(self.errors) == 1 else 'stop'} "
                         f"{self.process_id} from running here")
        return "; ".join(facts)

    def as_json(self) -> dict[str, Any]:
        """``{"kind", "summary", "well_formed", "bpmn", "xsd_valid", "process_id", "checked", "processes"}``."""
        return {"kind": self.kind, "summary": self.summary(), "well_formed": self.well_formed, "bpmn": self.bpmn,
                "xsd_valid": self.xsd_valid, "process_id": self.process_id, "checked": self.checked,
                "processes": [p.as_json() for p in self.processes]}

    def refusal(self) -> InvalidDiagram:
        """The verdict as an InvalidDiagram carrying its problems, errors then warnings (and the verdict
        itself as ``verdict``)."""
        error = refusal(self.headline(), self.problems)
        error.verdict = self
        return error


def examine(bpmn_xml: bytes, forms: dict[str, dict], process_id: str = PROCESS_ID,
            handler_names: Iterable[str] | None = None, filename: str = "rule130.bpmn",
            unread_forms: Iterable[str] = ()) -> Verdict:
    """Say everything true of a BPMN file for this installation, in one pass (see the module text).

    Args:
        bpmn_xml: the file's bytes (never changed; what is stored is what was sent).
        forms: JSON Schema forms by file name (as user tasks name them).
        process_id: the process this installation runs.
        handler_names: the registered service-task handlers; None skips that check.
        filename: the name SpiffWorkflow records with the spec.
        unread_forms: forms that were sent but could not be read (their own problem says why; a user
            task naming one is not told the form is missing).
    Returns:
        The :class:`Verdict`; ``parsed`` is set when it is deployable. Nothing is raised for a bad file.
    """
    verdict = Verdict(process_id)
    try:
        root = read_xml(bpmn_xml)
    except InvalidDiagram as error:
        verdict.problems = problems_of(error)
        verdict.unreadable = ("dtd" if error.message == DTD_REFUSED else "not_bpmn" if error.message == NOT_BPMN
                              else "not_xml" if error.message.startswith(NOT_WELL_FORMED) else "too_large")
        verdict.well_formed = verdict.unreadable in ("not_bpmn",)
        verdict.bpmn = False
        return verdict
    xsd = schema.problems(root)
    verdict.xsd_errors = sum(p.severity == "error" for p in xsd)
    verdict.xsd_valid = not verdict.xsd_errors
    verdict.processes = el.processes(root)
    el.resolve_references(root)
    problems: list[Problem] = list(xsd)
    lead, verdict.checked = _which_process(root, verdict)
    problems += lead
    named: set[str] = set()
    spec = subprocess_specs = None
    if verdict.checked is not None:
        called, scope = el.scope(root, verdict.checked)
        named = _forms_named(root, scope)
        found = _check_structure(root, called, scope) + check_project_rules(
            root, scope, {k: v for k, v in forms.items() if k in named}, handler_names, unread_forms)
        spec, subprocess_specs, engine = _build(root, verdict.checked, scope, filename)
        found += [p for p in engine if not _said(root, found, p, bool(verdict.xsd_errors))]
        problems += _note_not_executable(root, sorted(found, key=lambda p: (p.line or 0)))
        # the names without Hindi last: what stops the process from running at all comes first
        problems += names.missing_hindi(root, scope, i18n.catalogue_hindi, ROLES)
    if verdict.checked is not None:  # (nothing runs: no form is of use, and none is worth a warning)
        problems += [Problem(f"form {name} is named by no user task and is left out of the version",
                             severity="warning") for name in sorted(set(forms) - named)]
    verdict.problems = [p for p in problems if p.severity == "error"] + [p for p in problems if p.severity != "error"]
    if verdict.deployable and spec is not None and verdict.checked == process_id:
        kept = {name: forms[name] for name in sorted(named) if name in forms}
        verdict.parsed = ParsedProcess(process_id, spec, subprocess_specs, kept, bpmn_xml,
                                       content_hash(bpmn_xml, kept), verdict.warnings, summary=verdict.summary())
    return verdict


def _which_process(root: etree._Element, verdict: Verdict) -> tuple[list[Problem], str | None]:
    """The problems of the processes the file holds, and the process whose behaviour is checked."""
    wanted = verdict.process_id
    if not verdict.processes:
        return [Problem(f"the file holds no process (bpmn:process); this installation runs the process {wanted}: "
                        "add it")], None
    target = verdict.target
    if target is None:
        runnable = [p for p in verdict.processes if p.executable is True]
        message = (f"this installation runs the process {wanted}; the file holds {el.listing(verdict.processes)}, "
                   f"none with the id {wanted}")
        if len(runnable) == 1:
            message += (f": to run {runnable[0].id} here, give it the id {wanted} (what else stops it from running "
                        "here is listed too)")
            return [Problem(message)], runnable[0].id
        if not runnable:
            message += f" and none marked executable: give the process to run the id {wanted} and isExecutable=\"true\""
        else:
            message += f": give the one to run the id {wanted}"
        return [Problem(message)], None
    process = el.top_process(root, wanted)
    if not target.runs:
        element_id, line, where = el.where(process, root)
        written = (process.get("isExecutable") or "").strip()
        return [Problem(f"{el.describe(process)} is marked isExecutable=\"{written}\"; this installation runs it "
                        "only when it is executable: set isExecutable=\"true\"", element_id, line, path=where)], None
    return [], wanted


def _said(root: etree._Element, found: list[Problem], engine: Problem, schema_errors: bool) -> bool:
    """Whether SpiffWorkflow's refusal ``engine`` is already said: an error about its element or an element
    inside it (it stops at the first problem the product's checks found), or — for a refusal tied to no
    element — any XSD error (an invalid file fails in ways the XSD errors explain)."""
    if engine.element_id is None:
        return schema_errors
    failed = el.by_id(root).get(engine.element_id)
    if failed is not None and el.is_bpmn(failed, "sequenceFlow"):
        # a flow SpiffWorkflow refuses (no condition) is said of the gateway it leaves
        source = el.by_id(root).get((failed.get("sourceRef") or "").strip())
        if source is not None and any(p.element_id == source.get("id") and p.severity == "error" for p in found):
            return True
    for problem in found:
        if problem.severity != "error" or problem.element_id is None:
            continue
        element = el.by_id(root).get(problem.element_id)
        while element is not None:
            if element is failed:
                return True
            element = element.getparent()
    return False


def _note_not_executable(root: etree._Element, problems: list[Problem]) -> list[Problem]:
    """Say so on every problem about an element of a process that is marked not executable (a process
    that runs because a call activity calls it)."""
    for problem in problems:
        element = el.by_id(root).get(problem.element_id or "")
        process = el.process_of(element) if element is not None else None
        if process is not None and (process.get("isExecutable") or "").strip() in ("false", "0") \
                and "not executable" not in problem.message:
            problem.message += f" (it is in {el.describe(process)}, which is not executable)"
    return problems


def _build(root: etree._Element, process_id: str, scope: set[Any], filename: str) \
        -> tuple[Any, dict[str, Any] | None, list[Problem]]:
    """SpiffWorkflow's spec of ``process_id`` from the (reference-resolved) tree, on a fresh parser
    (it is not validated again: :mod:`.schema` did). Data stores are taken out of the engine's view
    first (none has an implementation; those the process uses are reported by
    :func:`_check_structure`), and a process called by the one that runs is built as executable
    (:func:`_check_structure` says when it is not marked so).

    Returns:
        (spec, subprocess specs, problems): the specs are None when SpiffWorkflow refused.
    """
    for store in list(root.iter(f"{{{BPMN_NS}}}dataStore")):
        store.getparent().remove(store)
    references = {r.get("id") for r in root.iter(f"{{{BPMN_NS}}}dataStoreReference")}
    for association in list(root.iter(f"{{{BPMN_NS}}}dataInputAssociation", f"{{{BPMN_NS}}}dataOutputAssociation")):
        ends = {(ref.text or "").strip() for ref in association
                if isinstance(ref.tag, str) and el.local(ref) in ("sourceRef", "targetRef")}
        if ends & references:
            association.getparent().remove(association)
    for process in el.scope(root, process_id)[0]:
        if process.get("isExecutable") in ("false", "0"):
            process.set("isExecutable", "true")
    parser = SpiffBpmnParser()
    try:
        parser.add_bpmn_xml(etree.ElementTree(root), filename=filename)
        spec = parser.get_spec(process_id)
        subprocess_specs = parser.get_subprocess_specs(process_id)
    except Exception as error:  # SpiffWorkflow raises ValidationException, and plain exceptions for odd input
        return None, None, [engine_errors.problem_of(error, root)]
    return spec, subprocess_specs, []


def parse_process(bpmn_xml: bytes, forms: dict[str, dict], process_id: str = PROCESS_ID,
                  handler_names: Iterable[str] | None = None, filename: str = "rule130.bpmn") -> ParsedProcess:
    """Parse and check a diagram with its forms (:func:`examine`), for a deploy.

    Args:
        bpmn_xml: the BPMN file's bytes.
        forms: JSON Schema forms by file name (as user tasks name them).
        process_id: the executable process to build.
        handler_names: registered service-task operators; None skips that check.
    Returns:
        ParsedProcess with the SpiffWorkflow spec and subprocess specs (and its warnings).
    Raises:
        InvalidDiagram: with every error found (element, line, path where known) and the verdict
            (``.verdict``); its message says what is wrong first.
    """
    found = examine(bpmn_xml, forms, process_id, handler_names, filename)
    if found.parsed is None:
        raise found.refusal()
    return found.parsed


def diagnose(bpmn_xml: bytes, forms: dict[str, dict], handler_names: Iterable[str] | None,
             process_id: str | None = None, unread_forms: Iterable[str] = ()) -> tuple[bool, list[Problem]]:
    """:func:`examine` as (deployable, problems): errors first, then warnings.

    Args:
        process_id: the process this installation runs (None: ``rule130_case``).
        unread_forms: as :func:`examine`.
    """
    found = examine(bpmn_xml, forms, process_id or PROCESS_ID, handler_names, unread_forms=unread_forms)
    return found.deployable, found.problems


def verdict(bpmn_xml: bytes, forms: dict[str, dict], handler_names: Iterable[str] | None) -> tuple[bool, list[str]]:
    """The verdict on any BPMN file for this installation (the process it runs: ``rule130_case``).

    Returns:
        (deployable, problems): problems are ``str(Problem)`` lines, errors first, then warnings.
    """
    deployable, problems = diagnose(bpmn_xml, forms, handler_names)
    return deployable, [str(p) for p in problems]


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


def check_project_rules(root: etree._Element, scope: set[Any], forms: dict[str, dict],
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
        documentation = _own_documentation(node).strip()
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
    problems += _check_timers(root, scope)
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


def _check_timers(root: etree._Element, scope: set[Any] | None = None) -> list[Problem]:
    """Every timer (of ``scope``, the elements that run; None: of the whole file) is ``period_end(event,
    days, timezone)`` in a timeDate, its days a whole number from 0 to :data:`MAX_PERIOD_DAYS` or a value
    of the case (no computation, whose result no check could bound); Rule 130(a) periods >= 30 days; the
    periods the rule fixes as it fixes them; the periods of :data:`PERIOD_SOURCES` from their source; or
    an overdue timer (:func:`_check_service_level_timer`). Each problem names the timer's event."""
    problems: list[Problem] = []
    for definition in root.iter(f"{{{BPMN_NS}}}timerEventDefinition"):
        if scope is not None and definition not in scope:
            continue
        event = definition.getparent()
        subject = el.describe(event) if event is not None else "a timer"
        for problem in _check_timer(root, definition):
            problem.message = f"{subject}: {problem.message}"
            problem.path = el.where(event)[2] if event is not None else None
            problems.append(problem)
    return problems


def _check_timer(root: etree._Element, definition: etree._Element) -> list[Problem]:
    """The problems of one timer event definition (see :func:`_check_timers`)."""
    problems: list[Problem] = []
    event = definition.getparent()
    event_id = event.get("id") if event is not None else None
    line = definition.sourceline
    expressions = [c for c in definition if isinstance(c.tag, str)
                   and etree.QName(c).localname in ("timeDate", "timeDuration", "timeCycle")]
    if not expressions:
        problems.append(Problem(f"timer has no expression; {USE_PERIOD_END} in a timeDate", event_id, line))
        return problems
    node = expressions[0]
    source = (node.text or "").strip()
    line = node.sourceline
    kind = etree.QName(node).localname
    if kind != "timeDate":
        problems.append(Problem(f"timer uses {kind} {source!r}; {USE_PERIOD_END} in a timeDate", event_id, line))
        return problems
    try:
        tree = ast.parse(source, mode="eval").body
    except SyntaxError:
        tree = None
    if isinstance(tree, ast.Call) and isinstance(tree.func, ast.Name) and tree.func.id == SERVICE_LEVEL_END:
        problems += _check_service_level_timer(root, event, event_id, source, tree, line)
        return problems
    if not (isinstance(tree, ast.Call) and isinstance(tree.func, ast.Name) and tree.func.id == "period_end"
            and len(tree.args) == 3 and not tree.keywords):
        problems.append(Problem(f"timer expression {source!r} is not a legal period; {USE_PERIOD_END}",
                                event_id, line))
        return problems
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


def _own_documentation(element: etree._Element | None) -> str:
    if element is None:
        return ""
    return " ".join(d.text or "" for d in element.findall(f"{{{BPMN_NS}}}documentation"))


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
