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
from typing import Any

from lxml import etree

from webapp.engine.diagrams import elements as el
from webapp.engine.diagrams.problems import Phrasebook, Problem

log = logging.getLogger(__name__)
_NOT_FOUND = re.compile(r"The process '(.*)' was not found")

# SpiffWorkflow's message (a pattern) -> the words ({subject}: the element it failed on)
KNOWN = Phrasebook([
    (r"Multiple outgoing flows are not supported",
     "{subject} has more than one outgoing sequence flow; the engine splits only at gateways: add an exclusive or "
     "parallel gateway after it"),
    (r"A Service Task must have an operator",
     "{subject} names no handler; give it a service operator (spiffworkflow:serviceTaskOperator) that names a "
     "registered handler"),
    (r"No start event found", "{subject} has no start event; a case starts at a start event: add one"),
    (r"Process (?P<id>.*) is not executable", '{subject} is not executable; set isExecutable="true" on it to run it'),
    (r"Non-default exclusive outgoing sequence flow without condition",
     "{subject} leaves a gateway with no condition and is not its default flow; give it a condition or make it the "
     "gateway's default flow"),
    (r"Exactly one start event is required in a SubWorkflow Task; found (?P<n>\d+)",
     "{subject} has {n} start events; a subprocess needs exactly one"),
    (r"A SubWorkflow Must contain an End event", "{subject} has no end event; a subprocess needs one"),
    (r"No \"calledElement\" attribute for Call Activity",
     "{subject} calls no process; set calledElement to the id of a process in this file"),
    (r"The process '(?P<id>.*)' was not found", "{subject}: the process {id} is not in this file"),
    (r"A multiinstance task must specify a cardinality or a (?:loop input data reference|collection)",
     "{subject} is a multi-instance task with neither a loopCardinality nor a loopDataInputRef; give it one of them"),
    (r"A multiinstance task must specify exactly one of cardinality or loop input",
     "{subject} is a multi-instance task with both a loopCardinality and a loopDataInputRef; keep one"),
    (r"The loop (?P<which>input|output) data reference is missing from the IO specification",
     "{subject}: its loop {which} data reference is not in its I/O specification"),
    (r"A loopMaximum or loopCondition must be specified",
     "{subject} is a standard loop with neither a loopMaximum nor a loopCondition; give it a loopMaximum"),
    (r"Cancel Events may only be used with transactions",
     "{subject} has a cancel event, which only a transaction subprocess may have"),
    (r"When looking for a task spec, we found two items.*\((?P<id>[^)]*)\)",
     "{subject} has a sequence flow to {id}, which is not an element of the same process"),
    (r"There is no support implemented for this task type",
     "{subject}: the engine (SpiffWorkflow 3.2.0) cannot run this kind of element; replace it with a task, event or "
     "gateway it runs"),
    # SpiffWorkflow 3.2.0's spiff parser means to say "Expected a Message node" but calls its own method
    # wrongly: a reference to a message, signal, error or escalation that is not in the file
    (r"raise_validation_exception\(\) got an unexpected keyword argument 'node'",
     "{subject} refers to a message, signal, error or escalation that is not in this file; define it or point the "
     "reference at one that is"),
    (r"(?i)Expected an? (?P<what>Message|Signal|Error|Escalation) node",
     "{subject} refers to a {what!l} that is not in this file; define it (bpmn:{what!l}) or point the reference at "
     "one that is"),
    (r"Cannot resolve data(?P<way>Input|Output)Association",
     "{subject} has a data {way!l} association whose data object or data store reference is not in the file"),
    (r"Conditional event definition with missing condition",
     "{subject} is a conditional event with no condition; give it one"),
    (r"(?:Unknown Time Specification|Time Specification Error)",
     "{subject} is a timer with no timeDate, timeDuration or timeCycle the engine can read"),
    (r"Unsupported Catch Event",
     "{subject} waits for no event the engine can wait for; give it a message, signal, timer or conditional event "
     "definition"),
    (r"Data Store with name (?P<name>.*) has no implementation",
     "{subject} has no implementation in the engine; remove it and its references (keep the data in a form or a "
     "task variable)"),
    (r"Data Store (?:name|identifier) is missing", "{subject}: a data store has no id or no name; the engine needs both"),
    (r"(?P<what>Message|Signal|Error|Escalation|Correlation) identifier is missing",
     "a {what!l} of the file has no id; give every {what!l} an id"),
    (r"Correlation is missing correlation property retrieval expressions: (?P<id>.*)",
     "correlation property {id} has no retrieval expression; give it one per message"),
    (r"Message identifier is missing from correlation property: (?P<id>.*)",
     "correlation property {id} has a retrieval expression that names no message"),
    (r"Could not find messageRef from message event definition: (?P<id>.*)",
     "the message start event definition {id} names no message (messageRef)"),
    (r"Sequential ordering for ad hoc subprocesses not supported",
     "{subject} is an ad-hoc subprocess with sequential ordering, which the engine does not run; use parallel "
     "ordering"),
    (r"Ad hoc subprocesses may not contain start or end events",
     "{subject} is an ad-hoc subprocess holding a start or end event; remove them"),
    (r"Duplicate process ID: (?P<id>.*)", "two processes have the id {id}; every id in a file must be unique"),
])


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
    message = KNOWN.say(text, subject=subject)
    if message is None:
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
