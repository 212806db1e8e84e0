"""The restricted script environment for diagram expressions and scripts.

SpiffWorkflow's default environment runs gateway conditions, scripts and timer expressions with
``eval``/``exec`` and full builtins (SPIFFWORKFLOW.md, "Scripts and services"). Diagrams come from
administrators' uploads, so every expression here is compiled by RestrictedPython: no imports, no
``open``, no dunder names or attributes, no ``type``/``eval``; only safe builtins, the guards, and
the functions the project offers (:data:`SCRIPT_FUNCTIONS`). A small static check refuses
constructs that can run unbounded (``while``, ``**``, sequence repetition of non-constants).
"""

from __future__ import annotations

import ast
import builtins
import json
import operator
from functools import lru_cache
from types import CodeType
from typing import Any, Callable

from RestrictedPython import compile_restricted_eval, compile_restricted_exec, safe_builtins
from RestrictedPython.Eval import default_guarded_getitem, default_guarded_getiter
from RestrictedPython.Guards import (
    full_write_guard,
    guarded_iter_unpack_sequence,
    guarded_unpack_sequence,
    safer_getattr,
)
from SpiffWorkflow.bpmn.exceptions import WorkflowTaskException
from SpiffWorkflow.bpmn.script_engine import PythonScriptEngine
from SpiffWorkflow.bpmn.script_engine.python_environment import TaskDataEnvironment

from .. import legal_time


class ScriptRefused(Exception):
    """A script or expression that the sandbox will not run; the message says why."""


SCRIPT_FUNCTIONS: dict[str, Callable[..., Any]] = {
    # Legal periods by the calendar-day rule (RULE130.md "Time"): period_end(event, days, tz).
    "period_end": legal_time.period_end,
}

_INPLACE = {
    "+=": operator.iadd, "-=": operator.isub, "*=": operator.imul, "/=": operator.itruediv,
    "//=": operator.ifloordiv, "%=": operator.imod, "|=": operator.ior, "&=": operator.iand,
}


def _inplacevar(op: str, x: Any, y: Any) -> Any:
    if op not in _INPLACE:
        raise ScriptRefused(f"the operator {op} is not allowed")
    return _INPLACE[op](x, y)


def _builtins() -> dict[str, Any]:
    allowed = dict(safe_builtins)
    for name in ("min", "max", "sum", "any", "all", "sorted", "enumerate", "dict", "list"):
        allowed[name] = __builtins__[name] if isinstance(__builtins__, dict) else getattr(__builtins__, name)
    return allowed


BASE_GLOBALS: dict[str, Any] = {
    "__builtins__": _builtins(),
    "_getattr_": safer_getattr,
    "_getitem_": default_guarded_getitem,
    "_getiter_": default_guarded_getiter,
    "_iter_unpack_sequence_": guarded_iter_unpack_sequence,
    "_unpack_sequence_": guarded_unpack_sequence,
    "_write_": full_write_guard,
    "_inplacevar_": _inplacevar,
}


# Python builtins the sandbox does not offer (open, getattr, type, globals, vars, compile, ...), and
# pow (the power operator by another name): refused where the diagram is checked, not only when
# the expression first runs and fails with a NameError.
_OFFERED = set(BASE_GLOBALS["__builtins__"]) | set(SCRIPT_FUNCTIONS)
FORBIDDEN_NAMES = frozenset(n for n in dir(builtins) if n not in _OFFERED) | {"pow"}


def check_names(tree: ast.AST) -> None:
    """Refuse imports, references to Python builtins the sandbox does not offer, and ``pow``.

    Raises:
        ScriptRefused: naming the first such name.
    """
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            raise ScriptRefused("imports are not allowed in diagram scripts")
        if isinstance(node, ast.Name) and node.id in FORBIDDEN_NAMES:
            raise ScriptRefused(f"the name {node.id!r} is not available in diagram scripts")


def check_unbounded(source: str) -> None:
    """Refuse constructs that can run without bound: ``while``, ``**``, repetition by a variable.

    Raises:
        ScriptRefused: naming the construct.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError as error:
        raise ScriptRefused(f"not valid Python: {error.msg} (line {error.lineno})") from None
    check_names(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.While):
            raise ScriptRefused("'while' loops are not allowed in diagram scripts")
        if isinstance(node, (ast.BinOp, ast.AugAssign)) and isinstance(node.op, ast.Pow):
            raise ScriptRefused("the power operator ** is not allowed in diagram scripts")
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            sides = (node.left, node.right)
            if any(isinstance(s, (ast.List, ast.Tuple, ast.JoinedStr)) or
                   (isinstance(s, ast.Constant) and isinstance(s.value, (str, bytes))) for s in sides):
                raise ScriptRefused("sequence repetition with * is not allowed in diagram scripts")


@lru_cache(maxsize=2048)
def compile_expression(source: str) -> CodeType:
    """Compile an expression under RestrictedPython.

    Raises:
        ScriptRefused: the expression uses a forbidden name, attribute or construct.
    """
    check_unbounded(source)
    result = compile_restricted_eval(source, "<diagram>")
    if result.errors or result.code is None:
        raise ScriptRefused("; ".join(result.errors) or "the expression cannot be compiled")
    return result.code


@lru_cache(maxsize=512)
def compile_script(source: str) -> CodeType:
    """Compile a script under RestrictedPython (see :func:`compile_expression`)."""
    check_unbounded(source)
    result = compile_restricted_exec(source, "<diagram>")
    if result.errors or result.code is None:
        raise ScriptRefused("; ".join(result.errors) or "the script cannot be compiled")
    return result.code


class RestrictedEnvironment(TaskDataEnvironment):
    """A SpiffWorkflow script environment that evaluates only RestrictedPython code."""

    def __init__(self, functions: dict[str, Callable[..., Any]] | None = None) -> None:
        super().__init__({**BASE_GLOBALS, **SCRIPT_FUNCTIONS, **(functions or {})})

    def evaluate(self, expression: str, context: dict, external_context: dict | None = None) -> Any:
        code = compile_expression(expression)
        scope = dict(self.globals)
        scope.update(external_context or {})
        scope.update(context)
        return eval(code, scope)  # noqa: S307 - RestrictedPython byte code with guarded globals

    def execute(self, script: str, context: dict, external_context: dict | None = None) -> bool:
        self.check_for_overwrite(context, external_context or {})
        code = compile_script(script)
        scope = dict(self.globals)
        scope.update(external_context or {})
        scope.update(context)
        exec(code, scope)  # noqa: S102 - RestrictedPython byte code with guarded globals
        for key, value in scope.items():
            if key in self.globals or key.startswith("_") or callable(value):
                continue
            context[key] = value
        return True


ServiceCall = Callable[[Any, str, dict[str, Any]], Any]
SERVICE_LEVEL_OPERATION = "service_level.end"  # the handler that reads a task's due day from the case


class Rule130ScriptEngine(PythonScriptEngine):
    """The script engine: restricted expressions, and service tasks that call registered handlers.

    Args:
        call_handler: ``call_handler(task, operation_name, params) -> dict`` (see
            :mod:`webapp.engine.runtime`); its return value goes to the task's result variable.

    SpiffWorkflow 3.2.0 loses handler errors in ``call_service`` (a ``NameError: script``), so
    this engine wraps them in ``WorkflowTaskException`` itself.
    """

    def __init__(self, call_handler: ServiceCall) -> None:
        super().__init__(environment=RestrictedEnvironment())
        self._call_handler = call_handler

    def _service_level_end(self, task: Any) -> Callable[..., str]:
        """``service_level_end(element_id, days_after, timezone)`` for expressions of ``task``:
        the instant a user task's service level ends (00:00 local of the day after its due day),
        plus ``days_after`` calendar days, as an offset-aware ISO string. The due day is the
        project's (RULE130.md, "Service levels"), read from the case by the handler registered as
        :data:`SERVICE_LEVEL_OPERATION`; overdue and escalation timers use it (see the parser)."""

        def service_level_end(element_id: str, days_after: int, timezone: str) -> str:
            result = self._call_handler(task, SERVICE_LEVEL_OPERATION,
                                        {"element_id": element_id, "days_after": days_after, "timezone": timezone})
            return result["instant"]

        return service_level_end

    def evaluate(self, task: Any, expression: str, external_context: dict | None = None) -> Any:
        try:
            external = {"service_level_end": self._service_level_end(task), **(external_context or {})}
            return self.environment.evaluate(expression, task.data, external)
        except ScriptRefused as error:
            raise WorkflowTaskException(f"Refused expression '{expression}': {error}", task=task) from None
        except Exception as error:  # wrap as SpiffWorkflow does, without RestrictedPython's tuple args
            raise WorkflowTaskException(f"Error evaluating expression '{expression}': {error}",
                                        task=task, exception=error) from None

    def execute(self, task: Any, script: str, external_context: dict | None = None) -> bool:
        try:
            return self.environment.execute(script, task.data, external_context)
        except ScriptRefused as error:
            raise WorkflowTaskException(f"Refused script: {error}", task=task) from None
        except Exception as error:
            raise WorkflowTaskException(f"Script error: {error.__class__.__name__}: {error}",
                                        task=task, exception=error) from None

    def call_service(self, task: Any, **kwargs: Any) -> str:
        name = kwargs["operation_name"]
        params = {k: v["value"] for k, v in (kwargs.get("operation_params") or {}).items()}
        try:
            result = self._call_handler(task, name, params)
        except WorkflowTaskException:
            raise
        except Exception as error:
            wrapped = WorkflowTaskException(f"Handler {name} failed: {error}", task=task, exception=error)
            wrapped.__cause__ = error
            raise wrapped from error
        return json.dumps(result if result is not None else {}, default=str)
