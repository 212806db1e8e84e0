"""SpiffWorkflow's parser failures in an administrator's words.

SpiffWorkflow 3.2.0 stops at the first element it cannot build, with a ``ValidationException`` whose
message is written for its developers ("Multiple outgoing flows are not supported for tasks of
type", "The process 'x' was not found. Did you mean one of the following: ?"), or with a plain
Python exception (a ``TypeError`` from its own code, a ``NotImplementedError`` holding the element's
XML). :func:`problem_of` turns either into a :class:`Problem` about the element it failed on —
taken from the exception, else from the parser objects on the traceback — with words and a remedy;
the library's text never reaches the user as it was. The product's own checks
(:mod:`webapp.engine.diagrams.parser`) find most of these before SpiffWorkflow runs, all at once.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any

from lxml import etree

from webapp.engine.diagrams import elements as el
from webapp.engine.diagrams.problems import Problem

log = logging.getLogger(__name__)
_NOT_FOUND = re.compile(r"The process '(.*)' was not found")

# (pattern of SpiffWorkflow's message, the words: (subject, match) -> message)
Words = Callable[[str, re.Match[str]], str]
KNOWN: list[tuple[re.Pattern[str], Words]] = [
    (re.compile(r"Multiple outgoing flows are not supported"),
     lambda s, m: f"{s} has more than one outgoing sequence flow; the engine splits only at gateways: add an "
                  "exclusive or parallel gateway after it"),
    (re.compile(r"A Service Task must have an operator"),
     lambda s, m: f"{s} names no handler; give it a service operator (spiffworkflow:serviceTaskOperator) that "
                  "names a registered handler"),
    (re.compile(r"No start event found"),
     lambda s, m: f"{s} has no start event; a case starts at a start event: add one"),
    (re.compile(r"Process (?P<id>.*) is not executable"),
     lambda s, m: f"{s} is not executable; set isExecutable=\"true\" on it to run it"),
    (re.compile(r"Non-default exclusive outgoing sequence flow without condition"),
     lambda s, m: f"{s} leaves a gateway with no condition and is not its default flow; give it a condition or "
                  "make it the gateway's default flow"),
    (re.compile(r"Exactly one start event is required in a SubWorkflow Task; found (?P<n>\d+)"),
     lambda s, m: f"{s} has {m.group('n')} start events; a subprocess needs exactly one"),
    (re.compile(r"A SubWorkflow Must contain an End event"),
     lambda s, m: f"{s} has no end event; a subprocess needs one"),
    (re.compile(r"No \"calledElement\" attribute for Call Activity"),
     lambda s, m: f"{s} calls no process; set calledElement to the id of a process in this file"),
    (re.compile(r"The process '(?P<id>.*)' was not found"),
     lambda s, m: f"{s}: the process {m.group('id')} is not in this file"),
    (re.compile(r"A multiinstance task must specify a cardinality or a (?:loop input data reference|collection)"),
     lambda s, m: f"{s} is a multi-instance task with neither a loopCardinality nor a loopDataInputRef; give it "
                  "one of them"),
    (re.compile(r"A multiinstance task must specify exactly one of cardinality or loop input"),
     lambda s, m: f"{s} is a multi-instance task with both a loopCardinality and a loopDataInputRef; keep one"),
    (re.compile(r"The loop (?P<which>input|output) data reference is missing from the IO specification"),
     lambda s, m: f"{s}: its loop {m.group('which')} data reference is not in its I/O specification"),
    (re.compile(r"A loopMaximum or loopCondition must be specified"),
     lambda s, m: f"{s} is a standard loop with neither a loopMaximum nor a loopCondition; give it a loopMaximum"),
    (re.compile(r"Cancel Events may only be used with transactions"),
     lambda s, m: f"{s} has a cancel event, which only a transaction subprocess may have"),
    (re.compile(r"When looking for a task spec, we found two items.*\((?P<id>[^)]*)\)"),
     lambda s, m: f"{s} has a sequence flow to {m.group('id')}, which is not an element of the same process"),
    (re.compile(r"There is no support implemented for this task type"),
     lambda s, m: f"{s}: the engine (SpiffWorkflow 3.2.0) cannot run this kind of element; replace it with a "
                  "task, event or gateway it runs"),
    # SpiffWorkflow 3.2.0's spiff parser means to say "Expected a Message node" but calls its own method
    # wrongly: a reference to a message, signal, error or escalation that is not in the file
    (re.compile(r"raise_validation_exception\(\) got an unexpected keyword argument 'node'"),
     lambda s, m: f"{s} refers to a message, signal, error or escalation that is not in this file; define it or "
                  "point the reference at one that is"),
    (re.compile(r"Expected an? (?P<what>Message|Signal|Error|Escalation) node", re.I),
     lambda s, m: f"{s} refers to a {m.group('what').lower()} that is not in this file; define it (bpmn:"
                  f"{m.group('what').lower()}) or point the reference at one that is"),
    (re.compile(r"Cannot resolve data(?P<way>Input|Output)Association"),
     lambda s, m: f"{s} has a data {m.group('way').lower()} association whose data object or data store reference "
                  "is not in the file"),
    (re.compile(r"Conditional event definition with missing condition"),
     lambda s, m: f"{s} is a conditional event with no condition; give it one"),
    (re.compile(r"(?:Unknown Time Specification|Time Specification Error)"),
     lambda s, m: f"{s} is a timer with no timeDate, timeDuration or timeCycle the engine can read"),
    (re.compile(r"Unsupported Catch Event"),
     lambda s, m: f"{s} waits for no event the engine can wait for; give it a message, signal, timer or "
                  "conditional event definition"),
    (re.compile(r"Data Store with name (?P<name>.*) has no implementation"),
     lambda s, m: f"{s} has no implementation in the engine; remove it and its references (keep the data in a "
                  "form or a task variable)"),
    (re.compile(r"Data Store (?:name|identifier) is missing"),
     lambda s, m: f"{s}: a data store has no id or no name; the engine needs both"),
    (re.compile(r"(?P<what>Message|Signal|Error|Escalation|Correlation) identifier is missing"),
     lambda s, m: f"a {m.group('what').lower()} of the file has no id; give every {m.group('what').lower()} an id"),
    (re.compile(r"Correlation is missing correlation property retrieval expressions: (?P<id>.*)"),
     lambda s, m: f"correlation property {m.group('id')} has no retrieval expression; give it one per message"),
    (re.compile(r"Message identifier is missing from correlation property: (?P<id>.*)"),
     lambda s, m: f"correlation property {m.group('id')} has a retrieval expression that names no message"),
    (re.compile(r"Could not find messageRef from message event definition: (?P<id>.*)"),
     lambda s, m: f"the message start event definition {m.group('id')} names no message (messageRef)"),
    (re.compile(r"Sequential ordering for ad hoc subprocesses not supported"),
     lambda s, m: f"{s} is an ad-hoc subprocess with sequential ordering, which the engine does not run; use "
                  "parallel ordering"),
    (re.compile(r"Ad hoc subprocesses may not contain start or end events"),
     lambda s, m: f"{s} is an ad-hoc subprocess holding a start or end event; remove them"),
    (re.compile(r"Duplicate process ID: (?P<id>.*)"),
     lambda s, m: f"two processes have the id {m.group('id')}; every id in a file must be unique"),
]


def problem_of(error: BaseException, root: Any) -> Problem:
    """SpiffWorkflow's failure ``error`` as a Problem about the element it failed on.

    Args:
        error: what SpiffWorkflow's parser raised (``ValidationException`` or any other exception).
        root: the document it parsed (to find the element and its line).
    Returns:
        The problem, its message in words with a remedy (never the library's text as it was, never an
        exception's class name).
    """
    element = _element_of(error, root)
    subject = el.describe(element, root) if element is not None else "an element of the process"
    text = " ".join(str(error).split())
    for pattern, words in KNOWN:
        match = pattern.search(text)
        if match:
            message = words(subject, match)
            break
    else:
        log.info("SpiffWorkflow failed on %s: %r", subject, error)
        message = (f"{subject} cannot be read by the engine (SpiffWorkflow 3.2.0 stops at it and does not say why); "
                   "check it against the BPMN 2.0 specification, simplify it or remove it")
    element_id, line, where = el.where(element, root) if element is not None else (None, None, None)
    return Problem(message, element_id, line, path=where)


def _element_of(error: BaseException, root: Any) -> Any:
    """The element SpiffWorkflow failed on: the exception's id, else the node of the innermost parser
    object (or ``node`` variable) on the traceback."""
    found = el.by_id(root).get(getattr(error, "id", None) or "")
    if found is not None:
        return found
    missing = _NOT_FOUND.search(str(error))
    if missing:  # SpiffWorkflow names no element: the call activity that calls the missing process
        calls = [c for c in root.iter(f"{{{el.BPMN_NS}}}callActivity") if c.get("calledElement") == missing.group(1)]
        if calls:
            return calls[0]
    innermost = None
    trace = error.__traceback__
    while trace is not None:
        frame_locals = trace.tb_frame.f_locals
        for candidate in (getattr(frame_locals.get("self"), "node", None), frame_locals.get("node")):
            if isinstance(candidate, etree._Element) and candidate.getroottree().getroot() is root:
                innermost = candidate
        trace = trace.tb_next
    return innermost
