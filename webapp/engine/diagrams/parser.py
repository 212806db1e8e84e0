"""Parse and check a process diagram and its forms, and say what is true of the file (no Flask here).

:func:`examine` is the one pipeline; its :class:`Verdict` says, in one pass:

1. whether the file is well-formed XML (lxml with entities, DTDs and network off and a size limit);
2. whether it is valid BPMN 2.0 by the XSD (:mod:`webapp.engine.diagrams.schema`: every error, in words);
3. which processes it holds, executable or not (:mod:`webapp.engine.diagrams.elements`);
4. for the process this installation runs (``rule130_case``), what stops it from running here: the
   structure SpiffWorkflow cannot build (found before it runs, all at once), SpiffWorkflow's own
   refusal in words (:mod:`webapp.engine.diagrams.engine_errors`), and the project's rules: every user task
   sits in a lane that is a role and names a form that exists and is a valid JSON Schema; every
   service task names a registered handler; every expression passes the sandbox; every exclusive or
   inclusive gateway has a default or conditions on all flows; every timer computes its instant with
   ``period_end(event, days, timezone)`` (Rule 2, calendar days) and the objection period is never
   below 30 days (Rule 130(a)), except overdue timers: a non-interrupting boundary event on a user task
   may use ``service_level_end("<that task>", days, timezone)``, the end of the task's service level
   (RULE130.md) plus whole days, which only reminds; no event-based gateway waits on two timers (a
   SpiffWorkflow 3.2.0 bug); every flow node's documentation begins with its clause (a warning); every
   name of a task, event, gateway, flow or lane has its Hindi (:mod:`webapp.engine.diagrams.names`).

Checks of executable behaviour apply only to the process that would run and the processes its call
activities call: a pool that is not executable never blocks a deploy with its gateways or timers.
Every problem about an element names it (kind and name, with its id and line; the path when the line
is shared). SpiffWorkflow builds the spec from a fresh parser every time (SPIFFWORKFLOW.md,
"Parsing": a parser that once raised may return a truncated spec later). :func:`parse_process`
(deploy, ``rule130 deploy``) and :func:`diagnose` (the modeler, the API) are this pipeline; the
checks of step 4 before SpiffWorkflow builds the spec are in :mod:`webapp.engine.diagrams.checks`, the
reading of step 1 in :mod:`webapp.engine.diagrams.safe_xml`, and the verdict's facts and words in
:mod:`webapp.engine.diagrams.verdicts`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

from lxml import etree
from SpiffWorkflow.spiff.parser.process import SpiffBpmnParser

from webapp import i18n
from webapp.engine.diagrams import elements as el
from webapp.engine.diagrams import engine_errors, names, schema
from webapp.engine.diagrams.checks import (
    BPMN_NS,
    FORM_PROPERTY,
    ROLES,
    SPIFF_NS,
    _check_structure,
    _forms_named,
    check_project_rules,
)
from webapp.engine.diagrams.problems import Problem, problems_of
from webapp.engine.diagrams.safe_xml import DTD_REFUSED, NOT_BPMN, NOT_WELL_FORMED, read_xml
from webapp.engine.diagrams.timer_checks import USE_PERIOD_END
from webapp.engine.diagrams.verdicts import ParsedProcess, Verdict
from webapp.errors import InvalidDiagram

__all__ = [
    "FORM_PROPERTY",
    "ROLES",
    "USE_PERIOD_END",
    "check_project_rules",
    "content_hash",
    "diagnose",
    "examine",
    "load_forms",
    "parse_process",
    "verdict",
]

PROCESS_ID = "rule130_case"  # the process this installation runs
MAX_FORM_BYTES = 256 * 1024
NS = {"bpmn": BPMN_NS, "spiffworkflow": SPIFF_NS}


def content_hash(bpmn_xml: bytes, forms: dict[str, dict[str, Any]]) -> str:
    """SHA-256 over the diagram and its forms together (the identity of a process version)."""
    digest = hashlib.sha256(bpmn_xml)
    for name in sorted(forms):
        digest.update(name.encode())
        digest.update(json.dumps(forms[name], sort_keys=True).encode())
    return digest.hexdigest()


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
