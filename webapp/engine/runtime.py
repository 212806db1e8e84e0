"""Running instances on SpiffWorkflow: start, resume, complete user tasks, fire timers, store.

No Flask and no database here: this module turns a parsed process and a stored state into a
``BpmnWorkflow`` and back. The instance state is stored without its spec (the spec is stored once
per process version), ``Decimal`` and ``date`` are registered with the serializer, timers read the
product's clock, and every instance runs on the restricted script engine.
"""

from __future__ import annotations

import json
import os
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Any
from uuid import UUID

from SpiffWorkflow.bpmn.exceptions import WorkflowTaskException
from SpiffWorkflow.bpmn.serializer import BpmnWorkflowSerializer
from SpiffWorkflow.bpmn.specs.event_definitions import timer as spiff_timer
from SpiffWorkflow.bpmn.specs.event_definitions.multiple import MultipleEventDefinition
from SpiffWorkflow.bpmn.specs.event_definitions.timer import TimerEventDefinition
from SpiffWorkflow.bpmn.util.event import BpmnEvent
from SpiffWorkflow.bpmn.workflow import BpmnWorkflow
from SpiffWorkflow.exceptions import WorkflowException
from SpiffWorkflow.spiff.serializer.config import SPIFF_CONFIG
from SpiffWorkflow.spiff.specs.event_definitions import MessageEventDefinition
from SpiffWorkflow.util.deep_merge import DeepMerge
from SpiffWorkflow.util.task import TaskState

from .. import clock
from ..errors import EngineFailure, Rule130Error
from .parser import FORM_PROPERTY, ParsedProcess
from .sandbox import Rule130ScriptEngine, ScriptRefused

# -- SpiffWorkflow's timers read the product's clock ------------------------------------------

class _ClockDatetime(datetime):
    """``datetime`` whose ``now`` asks the product's clock (SPIFFWORKFLOW.md, "Timers")."""

    @classmethod
    def now(cls, tz: Any = None) -> datetime:  # type: ignore[override]
        instant = clock.now()
        return instant.astimezone(tz) if tz is not None else instant


spiff_timer.datetime = _ClockDatetime


# -- serializer ---------------------------------------------------------------------------------

def _make_serializer() -> BpmnWorkflowSerializer:
    registry = BpmnWorkflowSerializer.configure(SPIFF_CONFIG)
    registry.register(Decimal, lambda v: {"value": str(v)}, lambda d: Decimal(d["value"]), "Decimal")
    registry.register(date, lambda v: {"value": v.isoformat()}, lambda d: date.fromisoformat(d["value"]), "date")
    registry.register(datetime, lambda v: {"value": v.isoformat()},
                      lambda d: datetime.fromisoformat(d["value"]), "datetime")
    return BpmnWorkflowSerializer(registry)


class _SpecRef:
    """Stands for a parsed spec in a stored state: restored as the cached spec object itself."""


_SPECS: dict[str, Any] = {}  # "<content hash>:<subprocess name or empty>" -> spec

SERIALIZER = _make_serializer()
SERIALIZER.registry.register(_SpecRef, lambda _ref: {}, lambda d: _SPECS[d["key"]], _SpecRef.__name__)
SPEC_KEYS = ("spec", "subprocess_specs")


def spec_json(parsed: ParsedProcess) -> str:
    """The serialized spec of a process version, stored once per version."""
    workflow = BpmnWorkflow(parsed.spec, parsed.subprocess_specs)
    full = json.loads(SERIALIZER.serialize_json(workflow))
    return json.dumps({key: full[key] for key in SPEC_KEYS})


def _converted(workflow: BpmnWorkflow, *, without_tasks: bool = False) -> dict[str, Any]:
    """SpiffWorkflow's dict of the instance (``BpmnWorkflowSerializer.to_dict`` in the encoder mode of
    ``serialize_json``: nested values are left to the JSON encoder), less the ``spec`` and
    ``subprocess_specs`` keys, with the serializer version; ``without_tasks``: the ``tasks``
    mappings of the workflow and of every subprocess are empty.

    The specs are not converted at all: while the instance is converted its spec and subprocess
    specs stand aside (placeholders), because converting the whole diagram on every save is most of
    the cost of a save; so do the task mappings for ``without_tasks``. All are put back before
    returning, also on error.
    """
    spec, subprocess_specs = workflow.spec, workflow.subprocess_specs
    owners = [workflow, *workflow.subprocesses.values()] if without_tasks else []
    tasks = [owner.tasks for owner in owners]
    registry = SERIALIZER.registry
    workflow.spec, workflow.subprocess_specs = _SpecRef(), {}
    registry._encoder_mode = True
    try:
        for owner in owners:
            owner.tasks = {}
        state: dict[str, Any] = SERIALIZER.to_dict(workflow)
    finally:
        registry._encoder_mode = False
        workflow.spec, workflow.subprocess_specs = spec, subprocess_specs
        for owner, mapping in zip(owners, tasks, strict=False):
            owner.tasks = mapping
    for key in SPEC_KEYS:
        state.pop(key, None)
    state[SERIALIZER.VERSION_KEY] = SERIALIZER.VERSION
    return state


def _dump_state_whole(workflow: BpmnWorkflow) -> str:
    """The instance state as compact JSON text, every task converted afresh: what SpiffWorkflow's
    ``serialize_json`` writes, less the specs (see :func:`_converted`). The reference for
    :func:`dump_state`, which gives the same text."""
    return json.dumps(_converted(workflow), cls=SERIALIZER._encoder_cls, separators=(",", ":"))


CHECK_DUMP_ENV = "RULE130_CHECK_DUMP"  # "1": every dump_state is compared with _dump_state_whole

_ENCODE = SERIALIZER._encoder_cls(separators=(",", ":")).encode  # what json.dumps(cls=, separators=) does
_TASK_HEADS: weakref.WeakKeyDictionary[Any, tuple[tuple[Any, ...], str]] = weakref.WeakKeyDictionary()
_DUMPING = threading.Lock()  # one dump at a time: SpiffWorkflow's registry switches a shared mode flag


def _task_head(key: Any, task: Any, parent: Any) -> str:
    """The start of ``task``'s item in its workflow's ``tasks`` mapping under ``key``:
    ``"<key>":{"id":..`` up to and including ``"triggered":..``, without the closing brace.

    These are the keys SpiffWorkflow's ``TaskConverter.to_dict`` writes from the task's identity and
    state (``parent``: the task's parent task or None). The text is a function of the signature
    only (UUIDs, a str, and an int, a float and a bool of the same type that are equal encode the
    same), so it is kept per task object and made again when any signature value differs.
    """
    stamp, state, triggered = task.last_state_change, task.state, task.triggered
    signature = (key, task.id, task._parent, parent is None, tuple(task._children), task.task_spec.name,
                 stamp, state, triggered, type(stamp), type(state), type(triggered))
    kept = _TASK_HEADS.get(task)
    if kept is not None and kept[0] == signature:
        return kept[1]
    head = _ENCODE({"id": str(task.id), "parent": str(task._parent) if parent is not None else None,
                    "children": [str(child) for child in task._children], "last_state_change": stamp,
                    "state": state, "task_spec": task.task_spec.name, "triggered": triggered})
    text = f"{_ENCODE(str(key))}:{head[:-1]}"
    _TASK_HEADS[task] = (signature, text)
    return text


def _task_text(key: Any, task: Any) -> str:
    """``"<key>":{..}``: ``task``'s item in its workflow's ``tasks`` mapping, as
    ``TaskConverter.to_dict``, the registry and the JSON encoder write it (the registry in encoder
    mode, see :func:`_dump_state_fast`).

    The head (identity and state) may come from :func:`_task_head`; the data part is converted
    afresh on every call. As the library: the root task stores its ``data`` whole, every other task
    a ``delta`` against its parent's data (the keys it updates, the keys it deleted) and empty
    ``data``; the registry adds the ``typename`` last.
    """
    parent = task.parent
    registry = SERIALIZER.registry
    if parent is None:
        data, delta = task.data, {}
    else:
        data = {}
        delta = {"updates": DeepMerge.get_updated_keys(parent.data, task.data),
                 "deletions": DeepMerge.get_deleted_keys(parent.data, task.data)}
        if not task.internal_data and not delta["updates"] and not delta["deletions"]:
            # most tasks: nothing of their own and the parent's data unchanged; the text the
            # encoder writes for these empty values, without encoding them
            return f"{_task_head(key, task, parent)},{_EMPTY_TAILS[registry.typenames[type(task)]]}"
    tail = _ENCODE({"internal_data": registry.convert(task.internal_data), "data": data, "delta": delta,
                    "typename": registry.typenames[type(task)]})
    return f"{_task_head(key, task, parent)},{tail[1:]}"


class _EmptyTails(dict[str, Any]):
    """typename -> the rest of a task's item when its internal data, data and delta are empty."""

    def __missing__(self, typename: str) -> str:
        tail: str = _ENCODE({"internal_data": {}, "data": {}, "delta": {"updates": {}, "deletions": []},
                        "typename": typename})[1:]
        self[typename] = tail
        return tail


_EMPTY_TAILS = _EmptyTails()


def _object_text(items: list[tuple[str, str]]) -> str:
    """A JSON object from ``(key, value text)`` pairs, as the compact encoder writes a dict."""
    return "{" + ",".join(f"{_ENCODE(key)}:{value}" for key, value in items) + "}"


def _workflow_text(workflow: Any, converted: dict[str, Any], subprocesses: str | None = None) -> str:
    """The text of ``converted``, the dict of ``workflow`` converted without tasks, with the
    ``tasks`` mapping written task by task and, for the top workflow, ``subprocesses`` (text) as
    the value of ``subprocesses``; the other values encoded as they are."""
    items = []
    for key, value in converted.items():
        if key == "tasks":
            text = "{" + ",".join(_task_text(k, task) for k, task in workflow.tasks.items()) + "}"
        elif key == "subprocesses" and subprocesses is not None:
            text = subprocesses
        else:
            text = _ENCODE(value)
        items.append((key, text))
    return _object_text(items)


def _dump_state_fast(workflow: BpmnWorkflow) -> str:
    """:func:`_dump_state_whole`'s text, made from the instance converted without tasks and the text
    of every task (:func:`_task_text`), joined key by key in the order of the converted dicts:
    what the compact encoder writes for the whole dict."""
    state = _converted(workflow, without_tasks=True)
    registry = SERIALIZER.registry
    registry._encoder_mode = True  # as to_dict in serialize_json: for the tasks' internal data
    try:
        subprocesses = _object_text([(key, _workflow_text(sub, converted)) for sub, (key, converted)
                                     in zip(workflow.subprocesses.values(), state["subprocesses"].items(), strict=False)])
        return _workflow_text(workflow, state, subprocesses)
    finally:
        registry._encoder_mode = False


def dump_state(workflow: BpmnWorkflow) -> str:
    """The instance state as compact JSON text, without the spec (stored once per version).

    Exactly the text of :func:`_dump_state_whole` (SpiffWorkflow's ``serialize_json`` less the
    specs), made by :func:`_dump_state_fast`, which reuses, per task object, the encoded head of
    its item (id, parent, children, state, last state change, spec name, triggered) while those
    values are equal, and encodes its data part (internal data, data or delta against the parent's
    data) on every call: data can change in place (SpiffWorkflow shares nested values between
    tasks), and no check cheaper than encoding it proves it did not. With the environment variable
    ``RULE130_CHECK_DUMP=1`` (set by the test suite) the whole conversion is made too, and a
    difference raises ``AssertionError``.
    """
    with _DUMPING:  # the registry's encoder mode is one flag for the process (web threads, timer worker)
        text = _dump_state_fast(workflow)
        whole = _dump_state_whole(workflow) if os.environ.get(CHECK_DUMP_ENV) == "1" else text
    if text != whole:
        at = len(os.path.commonprefix([text, whole]))
        raise AssertionError(f"dump_state differs from the whole conversion at character {at}: "
                             f"{text[max(at - 80, 0):at + 80]!r} != {whole[max(at - 80, 0):at + 80]!r}")
    return text


HandlerCall = Callable[[Any, str, dict[str, Any]], Any]


def load_state(state: str, parsed: ParsedProcess, call_handler: HandlerCall) -> BpmnWorkflow:
    """Resume an instance from :func:`dump_state` output on its version's parsed spec.

    The spec objects are shared, not restored from JSON for every load (specs are immutable;
    SpiffWorkflow shares them between instances too).
    """
    data = json.loads(state)
    key = parsed.content_hash
    _SPECS[f"{key}:"] = parsed.spec
    for name, sub in parsed.subprocess_specs.items():
        _SPECS[f"{key}:{name}"] = sub
    data["spec"] = {"typename": _SpecRef.__name__, "key": f"{key}:"}
    data["subprocess_specs"] = {name: {"typename": _SpecRef.__name__, "key": f"{key}:{name}"}
                                for name in parsed.subprocess_specs}
    SERIALIZER.migrate(data)
    workflow = SERIALIZER.from_dict(data)
    workflow.script_engine = Rule130ScriptEngine(call_handler)  # never the default engine
    return workflow


def rebind(workflow: BpmnWorkflow, call_handler: HandlerCall) -> BpmnWorkflow:
    """``workflow`` (an instance kept from an earlier unit of work) with a fresh script engine whose
    service calls go to ``call_handler`` (the new unit of work's handlers)."""
    workflow.script_engine = Rule130ScriptEngine(call_handler)
    return workflow


def new_instance(parsed: ParsedProcess, data: dict[str, Any], call_handler: HandlerCall) -> BpmnWorkflow:
    """A new instance with ``data`` as the start event's data (not yet run)."""
    workflow = BpmnWorkflow(parsed.spec, parsed.subprocess_specs, script_engine=Rule130ScriptEngine(call_handler))
    workflow.get_tasks(state=TaskState.READY)[0].set_data(**data)
    return workflow


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
