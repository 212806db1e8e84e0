"""The stored state of an instance, and the clock its timers read (the product's: SPIFFWORKFLOW.md,
"Timers"): SpiffWorkflow's serializer with ``Decimal``, ``date`` and
``datetime`` registered, the spec kept out of each state (stored once per process version and
restored as the cached spec object), and a fast dump that re-encodes only the tasks that changed
(checked against the whole dump when ``RULE130_CHECK_DUMP=1``). No Flask and no database here.
"""

from __future__ import annotations

import base64
import json
import os
import threading
import weakref
import zlib
from collections.abc import Callable
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from SpiffWorkflow.bpmn.serializer import BpmnWorkflowSerializer
from SpiffWorkflow.bpmn.specs.event_definitions import timer as spiff_timer
from SpiffWorkflow.bpmn.workflow import BpmnWorkflow
from SpiffWorkflow.spiff.serializer.config import SPIFF_CONFIG
from SpiffWorkflow.util.deep_merge import DeepMerge
from SpiffWorkflow.util.task import TaskState

from webapp.engine.diagrams.verdicts import ParsedProcess
from webapp.engine.scripts.sandbox import Rule130ScriptEngine
from webapp.values import clock

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

PACKED = "zlib64:"
"""The prefix of a state stored packed (:func:`pack_state`); a JSON text never starts so."""


def pack_state(state: str) -> str:
    """``state`` (:func:`dump_state` text) packed for keeping at rest: :data:`PACKED` followed by
    the base64 of its zlib compression (level 9), about a fifth of the JSON text's size for a
    closed Rule 130 case. :func:`load_state` reads both forms; a packed text is returned as it is.
    The housekeeping packs a closed case's state once it can no longer change
    (webapp.services.jobs.snapshots); every save writes plain JSON again."""
    if state.startswith(PACKED):
        return state
    return PACKED + base64.b64encode(zlib.compress(state.encode("utf-8"), 9)).decode("ascii")


def unpack_state(state: str) -> str:
    """The JSON text of a stored state, plain (:func:`dump_state`) or packed (:func:`pack_state`).
    Raises zlib.error or binascii.Error for a packed text that is damaged."""
    if not state.startswith(PACKED):
        return state
    return zlib.decompress(base64.b64decode(state[len(PACKED):], validate=True)).decode("utf-8")


def load_state(state: str, parsed: ParsedProcess, call_handler: HandlerCall) -> BpmnWorkflow:
    """Resume an instance from :func:`dump_state` output (or the same packed: :func:`pack_state`)
    on its version's parsed spec.

    The spec objects are shared, not restored from JSON for every load (specs are immutable;
    SpiffWorkflow shares them between instances too).
    """
    data = json.loads(unpack_state(state))
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
