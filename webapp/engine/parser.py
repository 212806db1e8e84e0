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
(deploy, ``rule130 deploy``) and :func:`diagnose` (the modeler, the API) are this pipeline; the
checks of step 4 before SpiffWorkflow builds the spec are in :mod:`webapp.engine.checks`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from lxml import etree
from SpiffWorkflow.spiff.parser.process import SpiffBpmnParser

from .. import i18n
from ..errors import InvalidDiagram
from . import elements as el
from . import engine_errors, names, schema
from .checks import (
    BPMN_NS,
    FORM_PROPERTY,
    ROLES,
    SPIFF_NS,
    USE_PERIOD_END,
    _check_structure,
    _forms_named,
    check_project_rules,
)
from .problems import Problem

__all__ = [
    "FORM_PROPERTY",
    "ROLES",
    "USE_PERIOD_END",
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
NS = {"bpmn": BPMN_NS, "spiffworkflow": SPIFF_NS}
DTD_REFUSED = "the file declares a DTD or entities; BPMN files must not"
NOT_BPMN = "the file is not BPMN 2.0: its root element is not bpmn:definitions"
NOT_WELL_FORMED = "the file is not well-formed XML"


@dataclass
class ParsedProcess:
    """A parsed, checked process: what the engine needs to start and resume instances."""

    process_id: str
    spec: Any
    subprocess_specs: dict[str, Any]
    forms: dict[str, dict[str, Any]]
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


def content_hash(bpmn_xml: bytes, forms: dict[str, dict[str, Any]]) -> str:
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
_SYNTAX: list[tuple[re.Pattern[str], Callable[[re.Match[str], str], str]]] = [
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


def examine(bpmn_xml: bytes, forms: dict[str, dict[str, Any]], process_id: str = PROCESS_ID,
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
    if verdict.deployable and spec is not None and subprocess_specs is not None and verdict.checked == process_id:
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


def parse_process(bpmn_xml: bytes, forms: dict[str, dict[str, Any]], process_id: str = PROCESS_ID,
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


def diagnose(bpmn_xml: bytes, forms: dict[str, dict[str, Any]], handler_names: Iterable[str] | None,
             process_id: str | None = None, unread_forms: Iterable[str] = ()) -> tuple[bool, list[Problem]]:
    """:func:`examine` as (deployable, problems): errors first, then warnings.

    Args:
        process_id: the process this installation runs (None: ``rule130_case``).
        unread_forms: as :func:`examine`.
    """
    found = examine(bpmn_xml, forms, process_id or PROCESS_ID, handler_names, unread_forms=unread_forms)
    return found.deployable, found.problems


def verdict(bpmn_xml: bytes, forms: dict[str, dict[str, Any]], handler_names: Iterable[str] | None) -> tuple[bool, list[str]]:
    """The verdict on any BPMN file for this installation (the process it runs: ``rule130_case``).

    Returns:
        (deployable, problems): problems are ``str(Problem)`` lines, errors first, then warnings.
    """
    deployable, problems = diagnose(bpmn_xml, forms, handler_names)
    return deployable, [str(p) for p in problems]


def load_forms(directory: Any) -> dict[str, dict[str, Any]]:
    """Read every ``*.schema.json`` in ``directory`` (a pathlib.Path).

    Raises:
        InvalidDiagram: a form that is too large or not JSON.
    """
    forms: dict[str, dict[str, Any]] = {}
    for path in sorted(directory.glob("*.json")):
        data = path.read_bytes()
        if len(data) > MAX_FORM_BYTES:
            raise InvalidDiagram(f"form {path.name} is larger than {MAX_FORM_BYTES} bytes")
        try:
            forms[path.name] = json.loads(data)
        except ValueError as error:
            raise InvalidDiagram(f"form {path.name} is not JSON: {error}") from None
    return forms
