"""The restricted script environment for diagram expressions and scripts.

SpiffWorkflow's default environment runs gateway conditions, scripts and timer expressions with
``eval``/``exec`` and full builtins (SPIFFWORKFLOW.md, "Scripts and services"). Diagrams come from
administrators' uploads, so every expression here is compiled by RestrictedPython: no imports, no
``open``, no dunder names or attributes, no ``type``/``eval``; only safe builtins, the guards, and
the functions the project offers (:data:`SCRIPT_FUNCTIONS`). Every expression is also bounded in
time and memory (:mod:`.bounds`): no loops, no growing operators or methods, and guards on the
size of every value an operation makes.
"""

from __future__ import annotations

import ast
import builtins
import json
import operator
from collections.abc import Callable
from functools import lru_cache
from types import CodeType
from typing import Any

from RestrictedPython.compile import compile_restricted_eval, compile_restricted_exec
from RestrictedPython.Eval import default_guarded_getitem, default_guarded_getiter
from RestrictedPython.Guards import (
    full_write_guard,
    guarded_iter_unpack_sequence,
    guarded_unpack_sequence,
    safe_builtins,
    safer_getattr,
)
from RestrictedPython.transformer import RestrictingNodeTransformer
from SpiffWorkflow.bpmn.exceptions import WorkflowTaskException
from SpiffWorkflow.bpmn.script_engine import PythonScriptEngine
from SpiffWorkflow.bpmn.script_engine.python_environment import TaskDataEnvironment

from webapp.engine.scripts import bounds
from webapp.engine.scripts.bounds import ScriptRefused
from webapp.values import legal_time

__all__ = ["RestrictedEnvironment", "Rule130ScriptEngine", "ScriptRefused", "compile_expression", "compile_script"]


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
    if op in ("+=", "*=", "%="):  # the growing ones, under the same bounds as + * %
        return bounds.binop(op[0], x, y)
    return _INPLACE[op](x, y)


def _getattr(obj: Any, name: str, default: Any = None) -> Any:
    """RestrictedPython's ``safer_getattr``, for the attributes of :data:`bounds.ALLOWED_ATTRIBUTES` only."""
    if name not in bounds.ALLOWED_ATTRIBUTES:
        raise ScriptRefused(f"the attribute {name!r} is not available in diagram scripts")
    return safer_getattr(obj, name, default)


def _write(obj: Any) -> Any:
    """Item writes to a dict or list go through :class:`bounds.CheckedItems`; others as RestrictedPython."""
    return bounds.CheckedItems(obj) if type(obj) in (dict, list) else full_write_guard(obj)


def _builtins() -> dict[str, Any]:
    allowed = dict(safe_builtins)
    for name in ("min", "max", "sum", "any", "all", "sorted", "enumerate", "dict", "list"):
        allowed[name] = getattr(builtins, name)
    allowed["range"] = bounds.bounded_range
    return allowed


BASE_GLOBALS: dict[str, Any] = {
    "__builtins__": _builtins(),
    "_getattr_": _getattr,
    "_getitem_": default_guarded_getitem,
    "_getiter_": default_guarded_getiter,
    "_iter_unpack_sequence_": guarded_iter_unpack_sequence,
    "_unpack_sequence_": guarded_unpack_sequence,
    "_write_": _write,
    "_inplacevar_": _inplacevar,
    "_binop_": bounds.binop,
    "_sized_": bounds.sized,
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


_MAKES_SEQUENCES = frozenset({"str", "repr", "list", "tuple", "sorted", "dict", "hex", "oct", "chr"})


def check_unbounded(source: str, *, script: bool = True) -> None:
    """Refuse constructs that can run without bound (:func:`bounds.check_source`: loops,
    comprehensions, ``**``, ``<<``, growing methods, wide format specs, over-long sources), names
    the sandbox does not offer (:func:`check_names`), and repetition of a literal sequence.

    Args:
        script: a script (statements, up to ``bounds.MAX_SCRIPT_CHARS``), else an expression.
    Raises:
        ScriptRefused: naming the construct.
    """
    try:
        tree = ast.parse(source, mode="exec" if script else "eval")
    except SyntaxError as error:
        raise ScriptRefused(f"not valid Python: {error.msg} (line {error.lineno})") from None
    check_names(tree)
    bounds.check_source(source, tree, script=script)
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            sides = (node.left, node.right)
            if any(isinstance(s, (ast.List, ast.Tuple, ast.JoinedStr)) or
                   (isinstance(s, ast.Constant) and isinstance(s.value, (str, bytes))) or
                   (isinstance(s, ast.Call) and isinstance(s.func, ast.Name) and s.func.id in _MAKES_SEQUENCES)
                   for s in sides):
                raise ScriptRefused("sequence repetition with * is not allowed in diagram scripts")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range" and \
                node.args and all(isinstance(a, ast.Constant) and type(a.value) is int for a in node.args):
            try:
                numbers = len(range(*(a.value for a in node.args
                                      if isinstance(a, ast.Constant) and isinstance(a.value, int))))
            except (TypeError, ValueError, OverflowError):
                numbers = bounds.MAX_RANGE + 1
            if numbers > bounds.MAX_RANGE:
                raise ScriptRefused(f"range() of more than {bounds.MAX_RANGE} numbers is not allowed in diagram "
                                    "scripts")


class BoundedTransformer(RestrictingNodeTransformer):
    """RestrictedPython's policy, with the size guards of :func:`bounds.guard_tree` put in."""

    def visit_BinOp(self, node: ast.BinOp) -> Any:
        return bounds.guard_tree(self, super().visit_BinOp(node))

    def visit_List(self, node: ast.List) -> Any:
        return bounds.guard_tree(self, super().visit_List(node))

    def visit_Tuple(self, node: ast.Tuple) -> Any:
        return bounds.guard_tree(self, super().visit_Tuple(node))

    def visit_Set(self, node: ast.Set) -> Any:
        return bounds.guard_tree(self, super().visit_Set(node))

    def visit_Dict(self, node: ast.Dict) -> Any:
        return bounds.guard_tree(self, super().visit_Dict(node))


@lru_cache(maxsize=2048)
def compile_expression(source: str) -> CodeType:
    """Compile an expression under RestrictedPython with the bounds of :mod:`.bounds`.

    Raises:
        ScriptRefused: the expression uses a forbidden name, attribute or construct.
    """
    check_unbounded(source, script=False)
    result = compile_restricted_eval(source, "<diagram>", policy=BoundedTransformer)
    if result.errors or result.code is None:
        raise ScriptRefused("; ".join(result.errors) or "the expression cannot be compiled")
    return result.code


@lru_cache(maxsize=512)
def compile_script(source: str) -> CodeType:
    """Compile a script under RestrictedPython (see :func:`compile_expression`)."""
    check_unbounded(source)
    result = compile_restricted_exec(source, "<diagram>", policy=BoundedTransformer)
    if result.errors or result.code is None:
        raise ScriptRefused("; ".join(result.errors) or "the script cannot be compiled")
    return result.code


class RestrictedEnvironment(TaskDataEnvironment):
    """A SpiffWorkflow script environment that evaluates only RestrictedPython code."""

    def __init__(self, functions: dict[str, Callable[..., Any]] | None = None) -> None:
        super().__init__({**BASE_GLOBALS, **SCRIPT_FUNCTIONS, **(functions or {})})

    def evaluate(self, expression: str, context: dict[str, Any], external_context: dict[str, Any] | None = None) -> Any:
        """The value of ``expression`` over ``context``, within the budget of :mod:`.bounds`.

        Raises:
            ScriptRefused: refused when compiled, or a bound passed while it ran.
        """
        code = compile_expression(expression)
        scope = dict(self.globals)
        scope.update(external_context or {})
        scope.update(context)
        token = bounds.BUDGET.set(bounds.Budget())
        try:
            return bounds.sized(eval(code, scope))
        finally:
            bounds.BUDGET.reset(token)

    def execute(self, script: str, context: dict[str, Any], external_context: dict[str, Any] | None = None) -> bool:
        """Run ``script`` over ``context``, within the budget of :mod:`.bounds`; the variables it
        sets (each within ``bounds.MAX_WEIGHT``) go to ``context``.

        Raises:
            ScriptRefused: refused when compiled, or a bound passed while it ran (``context`` unchanged).
        """
        self.check_for_overwrite(context, external_context or {})
        code = compile_script(script)
        scope = dict(self.globals)
        scope.update(external_context or {})
        scope.update(context)
        token = bounds.BUDGET.set(bounds.Budget())
        try:
            exec(code, scope)
            # what the script set anew is weighed (what it changed in place was, by its item writes)
            written = {key: bounds.sized(value) if context.get(key, scope) is not value else value
                       for key, value in scope.items()
                       if key not in self.globals and not key.startswith("_") and not callable(value)}
        finally:
            bounds.BUDGET.reset(token)
        context.update(written)
        return True


MAX_INSTANCES = 100  # instances of one multi-instance task (its loopCardinality)


def _check_cardinality(value: Any) -> None:
    """A loopCardinality's value: a whole number of instances from 0 to :data:`MAX_INSTANCES`.

    Raises:
        ScriptRefused: anything else.
    """
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_INSTANCES:
        raise ScriptRefused(f"loopCardinality gives {value!r}; a multi-instance task runs a whole number "
                            f"of instances from 0 to {MAX_INSTANCES}")


ServiceCall = Callable[[Any, str, dict[str, Any]], Any]
SERVICE_LEVEL_OPERATION = "service_level.end"  # the handler that reads a task's due day from the case


class Rule130ScriptEngine(PythonScriptEngine):
    """The script engine: restricted expressions, and service tasks that call registered handlers.

    Args:
        call_handler: ``call_handler(task, operation_name, params) -> dict`` (see
            :mod:`webapp.engine.execution.runtime`); its return value goes to the task's result variable.

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
            instant: str = result["instant"]
            return instant

        return service_level_end

    def evaluate(self, task: Any, expression: str, external_context: dict[str, Any] | None = None) -> Any:
        try:
            external = {"service_level_end": self._service_level_end(task), **(external_context or {})}
            value = self.environment.evaluate(expression, task.data, external)
            if expression == getattr(task.task_spec, "cardinality", None):
                _check_cardinality(value)
            return value
        except ScriptRefused as error:
            raise WorkflowTaskException(f"Refused expression '{expression}': {error}", task=task,
                                        exception=error) from None
        except Exception as error:  # wrap as SpiffWorkflow does, without RestrictedPython's tuple args
            raise WorkflowTaskException(f"Error evaluating expression '{expression}': {error}",
                                        task=task, exception=error) from None

    def execute(self, task: Any, script: str, external_context: dict[str, Any] | None = None) -> bool:
        try:
            done: bool = self.environment.execute(script, task.data, external_context)
            return done
        except ScriptRefused as error:
            raise WorkflowTaskException(f"Refused script: {error}", task=task, exception=error) from None
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
