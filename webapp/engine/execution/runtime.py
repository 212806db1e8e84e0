"""Running instances on SpiffWorkflow: start, resume, complete user tasks, fire timers, store.

No Flask and no database here: this module turns a parsed process and a stored state into a
``BpmnWorkflow`` and back. The instance state is stored without its spec (the spec is stored once
per process version), ``Decimal`` and ``date`` are registered with the serializer, timers read the
product's clock, and every instance runs on the restricted script engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from SpiffWorkflow.bpmn.exceptions import WorkflowTaskException
from SpiffWorkflow.bpmn.specs.event_definitions.multiple import MultipleEventDefinition
from SpiffWorkflow.bpmn.specs.event_definitions.timer import TimerEventDefinition
from SpiffWorkflow.bpmn.util.event import BpmnEvent
from SpiffWorkflow.bpmn.workflow import BpmnWorkflow
from SpiffWorkflow.exceptions import WorkflowException
from SpiffWorkflow.spiff.specs.event_definitions import MessageEventDefinition
from SpiffWorkflow.util.task import TaskState

from webapp.engine.diagrams.parser import FORM_PROPERTY
from webapp.engine.diagrams.verdicts import ParsedProcess
from webapp.engine.execution.state import CHECK_DUMP_ENV as CHECK_DUMP_ENV
from webapp.engine.execution.state import PACKED as PACKED
from webapp.engine.execution.state import SERIALIZER as SERIALIZER
from webapp.engine.execution.state import SPEC_KEYS as SPEC_KEYS
from webapp.engine.execution.state import HandlerCall as HandlerCall
from webapp.engine.execution.state import dump_state as dump_state
from webapp.engine.execution.state import load_state as load_state
from webapp.engine.execution.state import new_instance as new_instance
from webapp.engine.execution.state import pack_state as pack_state
from webapp.engine.execution.state import rebind as rebind
from webapp.engine.execution.state import spec_json as spec_json
from webapp.engine.execution.state import unpack_state as unpack_state
from webapp.engine.scripts.sandbox import ScriptRefused
from webapp.errors import EngineFailure, Rule130Error
from webapp.values import clock

# -- reading an instance --------------------------------------------------------------------------

@dataclass
class ArmedTimer:
    """A timer event waiting to fire: the task, its element id and name, and its due instant (UTC)."""

    task_id: str
    bpmn_id: str
    name: str
    due: datetime
    waited_as: str = ""  # a fired timer: the id of the task that waited (an event-based gateway's own)


def armed_timers(workflow: BpmnWorkflow) -> list[ArmedTimer]:
    """Every waiting timer with a known due instant, earliest first."""
    timers = []
    for task in list(workflow.event_manager.tasks.values()):
        definition = getattr(task.task_spec, "event_definition", None)
        value = task._get_internal_data("event_value")
        if not isinstance(value, str):
            continue
        spec = task.task_spec
        if isinstance(definition, MultipleEventDefinition):
            # An event-based gateway waits for all its events; the timer's instant is on the gateway.
            timer = next((d for d in definition.event_definitions if isinstance(d, TimerEventDefinition)), None)
            if timer is None:
                continue
            spec = next((o for o in spec.outputs if o.bpmn_name == timer.name), spec)
        elif not isinstance(definition, TimerEventDefinition):
            continue
        due = TimerEventDefinition.get_datetime(value)
        timers.append(ArmedTimer(str(task.id), spec.bpmn_id, spec.bpmn_name or "", due))
    return sorted(timers, key=lambda t: t.due)


def next_timer_due(workflow: BpmnWorkflow) -> datetime | None:
    """The due instant of the earliest armed timer (aware, UTC), or None when none is armed."""
    timers = armed_timers(workflow)
    return timers[0].due if timers else None


def boundary_owner(task: Any) -> Any | None:
    """The task a boundary event on ``task``'s path is attached to, or None.

    ``task`` is a task that follows a boundary event (e.g. the service task of an overdue timer's
    path, or the boundary event task itself). In SpiffWorkflow 3.2.0 a task with boundary events
    runs under a ``BoundaryEventSplit`` whose children are the main task and one task per boundary
    event; the main task is the child that is not a boundary event.
    """
    from SpiffWorkflow.bpmn.specs.control import BoundaryEventSplit
    from SpiffWorkflow.bpmn.specs.mixins.events.intermediate_event import BoundaryEvent

    node = task
    while node is not None:
        parent = node.parent
        if parent is not None and isinstance(parent.task_spec, BoundaryEventSplit) \
                and isinstance(node.task_spec, BoundaryEvent):
            return next((c for c in parent.children if not isinstance(c.task_spec, BoundaryEvent)), None)
        node = parent
    return None


def boundary_paths_run(task: Any) -> set[str]:
    """The service operations already run on the paths of ``task``'s non-interrupting boundary
    events (e.g. ``{"notify.task_overdue", "notify.task_escalated"}`` once both timers fired),
    read from the engine state; empty for a task without boundary events."""
    from SpiffWorkflow.bpmn.specs.control import BoundaryEventSplit
    from SpiffWorkflow.bpmn.specs.mixins.events.intermediate_event import BoundaryEvent

    parent = task.parent
    if parent is None or not isinstance(parent.task_spec, BoundaryEventSplit):
        return set()
    found: set[str] = set()
    for event in parent.children:
        if not isinstance(event.task_spec, BoundaryEvent) or event.state != TaskState.COMPLETED:
            continue
        for step in event.children:
            operation = getattr(step.task_spec, "operation_name", None)
            if operation and step.state == TaskState.COMPLETED:
                found.add(operation)
    return found


def ready_user_tasks(workflow: BpmnWorkflow) -> list[Any]:
    """READY manual (user) tasks, in the order SpiffWorkflow lists them.

    SpiffWorkflow's ``get_tasks`` walks the whole task tree; the instance and each subprocess also
    keep their tasks by id, so the READY ones are found by one pass over those. With none or one
    found that is the answer; with more, ``get_tasks`` gives them in its (depth-first) order.
    """
    found = [t for t in workflow.tasks.values() if t.state == TaskState.READY and t.task_spec.manual]
    for subprocess in workflow.subprocesses.values():
        found.extend(t for t in subprocess.tasks.values() if t.state == TaskState.READY and t.task_spec.manual)
    if len(found) <= 1:
        return found
    ready: list[Any] = workflow.get_tasks(state=TaskState.READY, manual=True)
    return ready


def form_name(task: Any) -> str | None:
    """The JSON Schema form file the user task names (spiffworkflow property)."""
    return spec_form_name(task.task_spec)


def form_key(task: Any) -> str | None:
    """The task-data key under which a submitted form is stored: the form name without suffix."""
    name = form_name(task)
    return name.split(".")[0] if name else None


def find_task(workflow: BpmnWorkflow, task_id: str) -> Any | None:
    """The task of ``task_id`` (a UUID as text) in the instance; None for a malformed or unknown id
    (SpiffWorkflow raises its own TaskNotFoundException for the latter)."""
    try:
        return workflow.get_task_from_id(UUID(str(task_id)))
    except Exception:
        return None


def task_spec_by_id(parsed: ParsedProcess, bpmn_id: str) -> Any | None:
    """The task spec of element ``bpmn_id`` in the process or any of its subprocesses (the first
    found, the process before its subprocesses; the index is made once per parsed process)."""
    if not parsed.by_bpmn_id:
        index: dict[str, Any] = {}
        for spec in [parsed.spec, *parsed.subprocess_specs.values()]:
            for task_spec in spec.task_specs.values():
                key = getattr(task_spec, "bpmn_id", None)
                if key is not None:
                    index.setdefault(key, task_spec)
        parsed.by_bpmn_id.update(index)
    return parsed.by_bpmn_id.get(bpmn_id)


def spec_form_name(task_spec: Any) -> str | None:
    """The JSON Schema form file (e.g. ``record_bid.json``) a user task spec names, or None."""
    name: str | None = (task_spec.extensions.get("properties") or {}).get(FORM_PROPERTY)
    return name


def task_form_name(task_spec: Any) -> str:
    """The form file a user task spec names; every deployed user task names one (the parser refuses
    a diagram whose user task has none). Raises EngineFailure naming the task if it does not."""
    name = spec_form_name(task_spec)
    if name is None:
        raise EngineFailure(f"the user task {getattr(task_spec, 'bpmn_name', None) or task_spec.name} names no form")
    return name


def is_waiting_for_message(workflow: BpmnWorkflow, name: str) -> bool:
    """True when a catch event (alone or behind an event-based gateway) waits for message ``name``."""
    for task in list(workflow.event_manager.tasks.values()):
        definition = getattr(task.task_spec, "event_definition", None)
        inner = definition.event_definitions if isinstance(definition, MultipleEventDefinition) else [definition]
        if any(isinstance(d, MessageEventDefinition) and d.name == name for d in inner):
            return True
    return False


# -- running --------------------------------------------------------------------------------------

def _unwrap(error: Exception) -> Exception:
    inner = getattr(error, "exception", None) or error.__cause__
    return inner if isinstance(inner, Rule130Error) else error


def _name_element(failure: Exception, error: WorkflowTaskException) -> None:
    """Attach the failing element (id, name, kind of failure, its task data) to ``failure``."""
    task = getattr(error, "task", None)
    spec = getattr(task, "task_spec", None)
    cause = getattr(error, "exception", None) or error.__cause__
    failure.element_id = getattr(spec, "bpmn_id", None)  # type: ignore[attr-defined]
    failure.element_name = getattr(spec, "bpmn_name", None)  # type: ignore[attr-defined]
    failure.task_data = dict(getattr(task, "data", None) or {})  # type: ignore[attr-defined]
    if isinstance(cause, ScriptRefused) or getattr(error, "error_type", None) == ScriptRefused.__name__:
        kind = "script_refused"
    elif isinstance(getattr(spec, "event_definition", None), (TimerEventDefinition, MultipleEventDefinition)):
        kind = "timer_expression"
    elif str(getattr(failure, "message", "")).startswith("ledger:"):
        kind = "ledger_invariant"
    else:
        kind = "handler_error"
    failure.kind = kind  # type: ignore[attr-defined]


def fired_timer(task: Any) -> ArmedTimer | None:
    """The timer that ``task`` (just completed) stands for, with its due instant and the id of the
    task that waited for it (``waited_as``, as :func:`armed_timers` lists it); else None.

    A timer event task carries its own instant; a timer behind an event-based gateway is the
    gateway's chosen catch event, and its instant is on the gateway (SPIFFWORKFLOW.md, "Timers").
    """
    spec = task.task_spec
    definition = getattr(spec, "event_definition", None)
    value = None
    waited = task
    if isinstance(definition, TimerEventDefinition):
        value = task._get_internal_data("event_value")
    elif task.parent is not None and isinstance(getattr(task.parent.task_spec, "event_definition", None),
                                                MultipleEventDefinition):
        timer = next((d for d in task.parent.task_spec.event_definition.event_definitions
                      if isinstance(d, TimerEventDefinition)), None)
        if timer is None or timer.name != spec.bpmn_name:
            return None
        value = task.parent._get_internal_data("event_value")
        waited = task.parent
    else:
        return None
    due = TimerEventDefinition.get_datetime(value) if isinstance(value, str) else clock.now()
    return ArmedTimer(str(task.id), spec.bpmn_id, spec.bpmn_name or "", due, waited_as=str(waited.id))


MAX_STEPS = 500  # engine tasks one run may complete before it waits (the whole diagram has ~200 elements)


def run(workflow: BpmnWorkflow) -> list[ArmedTimer]:
    """Fire due timers and run engine steps until only user tasks and waits remain.

    A run that completes more than :data:`MAX_STEPS` tasks without reaching a wait (a cycle of
    automatic steps in the diagram) is stopped as the failure of the task it reached.

    Returns:
        the timers that fired during this run, with their due instants, earliest first.
    Raises:
        Rule130Error: raised by a handler (e.g. a ledger invariant), unwrapped.
        EngineFailure: any other failure of a diagram element, or of the engine (naming no element).
    """
    fired: list[ArmedTimer] = []
    steps = [0]

    def completed(task: Any) -> None:
        steps[0] += 1
        if steps[0] > MAX_STEPS:
            raise WorkflowTaskException(f"the process completed {MAX_STEPS} steps without waiting for an officer "
                                        "or a timer: a cycle of automatic steps", task=task)
        timer = fired_timer(task)
        if timer is not None:
            fired.append(timer)

    try:
        for _ in range(100):  # bounded: timers cascade at most a few times per run
            workflow.refresh_timers()
            workflow.do_engine_steps(did_complete_task=completed)
            # A timer that falls due while do_engine_steps arms it is left READY (fired, out of the
            # event manager, not yet run): step again, or it would never run and never be due again.
            if workflow.get_tasks(state=TaskState.READY, manual=False):
                continue
            due = next_timer_due(workflow)
            if due is None or due >= clock.now():
                break
    except WorkflowTaskException as error:
        inner = _unwrap(error)
        if inner is not error:
            _name_element(inner, error)
            raise inner from None
        spec = error.task.task_spec  # type: ignore[attr-defined]  # SpiffWorkflow's exception carries its task
        failure = EngineFailure(f"{spec.bpmn_name or spec.bpmn_id}: {error}")
        _name_element(failure, error)
        raise failure from error
    except (WorkflowException, ScriptRefused) as error:  # evaluated outside a task (e.g. a process's condition)
        failure = EngineFailure(f"the process failed: {error}")
        failure.kind = "script_refused" if isinstance(error, ScriptRefused) else "handler_error"  # type: ignore[attr-defined]
        raise failure from error
    return sorted(fired, key=lambda t: t.due)


def complete_user_task(workflow: BpmnWorkflow, task: Any, data: dict[str, Any]) -> None:
    """Put the submitted form into the task's data under its form key and run the task."""
    if task.state != TaskState.READY:
        raise EngineFailure("the task is no longer open")
    key = form_key(task) or "form"
    task.set_data(**{key: data})
    task.run()


def deliver_message(workflow: BpmnWorkflow, name: str, payload: dict[str, Any]) -> None:
    """Deliver one message (SPIFFWORKFLOW.md: refresh timers and step before and after each)."""
    workflow.refresh_timers()
    workflow.do_engine_steps()
    workflow.send_event(BpmnEvent(MessageEventDefinition(name), payload=payload))
