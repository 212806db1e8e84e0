"""Bounds on what a diagram's expressions and scripts may compute, in time and in memory.

A diagram is an administrator's upload, and its conditions, timer expressions, scripts, service
parameters, loop cardinalities and payloads run in the web process and the timer worker. They are
bounded by construction, in two layers:

- **What the source may contain** (:func:`check_source`, run when a diagram is deployed and when
  any expression is compiled): no loops of any kind (``while``, ``for``, comprehensions, generator
  expressions), no function or class definitions, no ``lambda``, ``try`` or ``with``; no ``**``,
  ``pow`` or ``<<``; no ``%`` formatting of a string; an f-string's format spec is a constant with
  no width or precision above :data:`MAX_FORMAT_WIDTH`; only the attributes of
  :data:`ALLOWED_ATTRIBUTES`; at most :data:`MAX_EXPRESSION_CHARS` / :data:`MAX_SCRIPT_CHARS`
  characters. So every statement and operator runs at most once per evaluation.
- **What the values may grow to** (the guards below, while it runs): ``+``, ``*`` and in-place
  operators, container displays and item writes check, before or as they make a value, that it
  weighs at most :data:`MAX_WEIGHT` (:func:`weight`: characters, bytes of an integer, items) and
  an integer at most :data:`MAX_INT_BITS` bits; ``range`` gives at most :data:`MAX_RANGE` numbers;
  and each evaluation has a budget of :data:`WORK_BUDGET` units (weights checked and made).

Either layer refuses with :class:`ScriptRefused`, whose message names the construct and the limit;
the script engine turns a refusal at run time into the failure of the element (an incident).
"""

from __future__ import annotations

import ast
import contextvars
import re
from typing import Any

MAX_EXPRESSION_CHARS = 2_000
MAX_SCRIPT_CHARS = 20_000
MAX_WEIGHT = 100_000  # of any value an operation makes: characters, bytes of an integer, items
MAX_INT_BITS = 4_096
MAX_RANGE = 10_000  # numbers in one range()
MAX_FORMAT_WIDTH = 100  # width or precision in an f-string's format spec
WORK_BUDGET = 1_000_000  # units per evaluation: each unit of weight checked or made

# Methods and attributes of data values (text, numbers, dates, mappings, lists) that make nothing
# larger than what they are called on. Growing ones (ljust, center, zfill, replace, join,
# format_map, expandtabs, extend, update...) are not offered.
ALLOWED_ATTRIBUTES = frozenset({
    "get", "keys", "values", "items", "count", "index",
    "lower", "upper", "casefold", "title", "capitalize", "strip", "lstrip", "rstrip", "split",
    "startswith", "endswith", "find", "rfind", "isdigit", "isdecimal", "isalpha", "isalnum", "isspace",
    "isoformat", "date", "year", "month", "day", "hour", "minute", "second", "weekday", "isoweekday",
    "days", "seconds", "real", "imag",
})

_REFUSED_NODES: dict[type, str] = {
    ast.While: "'while' loops", ast.For: "'for' loops", ast.AsyncFor: "'for' loops",
    ast.ListComp: "comprehensions", ast.SetComp: "comprehensions", ast.DictComp: "comprehensions",
    ast.GeneratorExp: "generator expressions", ast.Lambda: "'lambda'", ast.FunctionDef: "function definitions",
    ast.AsyncFunctionDef: "function definitions", ast.ClassDef: "class definitions", ast.Try: "'try'",
    ast.With: "'with'", ast.AsyncWith: "'with'", ast.Global: "'global'", ast.Nonlocal: "'nonlocal'",
    ast.Yield: "'yield'", ast.YieldFrom: "'yield'", ast.Await: "'await'",
}
if hasattr(ast, "TryStar"):  # Python 3.11+
    _REFUSED_NODES[ast.TryStar] = "'try'"
_NUMBER = re.compile(r"\d+")


class ScriptRefused(Exception):
    """A script or expression that the sandbox will not run; the message says why."""


def check_source(source: str, tree: ast.AST, *, script: bool) -> None:
    """Refuse what can run without bound in ``tree`` (the parsed ``source``); see the module text.

    Raises:
        ScriptRefused: naming the first construct found, or the length over its limit.
    """
    limit = MAX_SCRIPT_CHARS if script else MAX_EXPRESSION_CHARS
    if len(source) > limit:
        kind = "a script" if script else "an expression"
        raise ScriptRefused(f"{kind} of {len(source)} characters is too long; at most {limit}")
    for node in ast.walk(tree):
        what = _REFUSED_NODES.get(type(node))
        if what is not None:
            raise ScriptRefused(f"{what} are not allowed in diagram scripts (line {getattr(node, 'lineno', 1)}); "
                                "a diagram computes only straight-line steps: repeated work belongs in a "
                                "service task's handler")
        if isinstance(node, (ast.BinOp, ast.AugAssign)):
            if isinstance(node.op, ast.Pow):
                raise ScriptRefused("the power operator ** is not allowed in diagram scripts")
            if isinstance(node.op, ast.LShift):
                raise ScriptRefused("the shift operator << is not allowed in diagram scripts")
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and (
                isinstance(node.left, ast.JoinedStr) or
                (isinstance(node.left, ast.Constant) and isinstance(node.left.value, (str, bytes)))):
            raise ScriptRefused("string formatting with % is not allowed in diagram scripts; use an f-string")
        if isinstance(node, ast.FormattedValue) and node.format_spec is not None:
            _check_format_spec(node.format_spec)
        if isinstance(node, ast.Attribute) and not node.attr.startswith("_") and node.attr not in ALLOWED_ATTRIBUTES:
            raise ScriptRefused(f"the attribute {node.attr!r} is not available in diagram scripts "
                                f"(available: {', '.join(sorted(ALLOWED_ATTRIBUTES))})")


def _check_format_spec(spec: ast.expr) -> None:
    parts = spec.values if isinstance(spec, ast.JoinedStr) else [spec]
    if not all(isinstance(p, ast.Constant) and isinstance(p.value, str) for p in parts):
        raise ScriptRefused("an f-string's format spec must be written out, not computed")
    text = "".join(p.value for p in parts if isinstance(p, ast.Constant) and isinstance(p.value, str))
    if any(int(n) > MAX_FORMAT_WIDTH for n in _NUMBER.findall(text)):
        raise ScriptRefused(f"the format spec {text!r} has a width or precision above {MAX_FORMAT_WIDTH}")


# -- while it runs ------------------------------------------------------------------------------------

class Budget:
    """The work one evaluation may still do (units of :data:`WORK_BUDGET`)."""

    def __init__(self, units: int = WORK_BUDGET) -> None:
        self.left = units

    def charge(self, units: int) -> None:
        self.left -= units
        if self.left < 0:
            raise ScriptRefused(f"the expression does more work than a diagram expression may "
                                f"({WORK_BUDGET} units: values made and checked)")


BUDGET: contextvars.ContextVar[Budget | None] = contextvars.ContextVar("rule130_sandbox_budget", default=None)


def _charge(units: int) -> None:
    budget = BUDGET.get()
    if budget is not None:
        budget.charge(units)


def _int_weight(value: int) -> int:
    return value.bit_length() // 8 + 1


def weight(value: Any, limit: int = MAX_WEIGHT) -> int:
    """The weight of ``value``: characters of text, bytes of an integer, 1 for another scalar, and
    1 plus its items' (and keys') weights for a list, tuple, set or dict, counted as a tree (a
    value shared twice counts twice, as printing or storing it would write it twice).

    The count stops once it passes ``limit`` (so a cycle or a huge value costs at most ``limit``
    steps) and returns a number above it; the steps taken are charged to the evaluation's budget.
    """
    total, steps, stack = 0, 0, [value]
    while stack and total <= limit:
        item = stack.pop()
        steps += 1
        if isinstance(item, (str, bytes)):
            total += len(item)
        elif isinstance(item, bool):
            total += 1
        elif isinstance(item, int):
            total += _int_weight(item)
        elif isinstance(item, dict):
            total += 1
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            total += 1
            stack.extend(item)
        else:
            total += 1
    _charge(steps)
    return total


def _too_heavy(size: int | None) -> ScriptRefused:
    """The refusal of a value of weight ``size`` (None: counted only until it passed the limit)."""
    weighing = f"of weight {size}" if size is not None else f"weighing more than {MAX_WEIGHT}"
    return ScriptRefused(f"the expression would make a value {weighing}; the limit is {MAX_WEIGHT} "
                         "(characters of text, items of a list)")


def sized(value: Any) -> Any:
    """``value`` after checking its weight (:func:`weight`) is at most :data:`MAX_WEIGHT`.

    Raises:
        ScriptRefused: heavier.
    """
    if weight(value) > MAX_WEIGHT:
        raise _too_heavy(None)
    return value


def _check(size: int) -> None:
    if size > MAX_WEIGHT:
        raise _too_heavy(size)
    _charge(size)


_SEQUENCES = (str, bytes, list, tuple)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def binop(op: str, left: Any, right: Any) -> Any:
    """``left <op> right`` for ``+``, ``*`` and ``%``, refused before it is computed when the result
    would weigh more than :data:`MAX_WEIGHT` or an integer would pass :data:`MAX_INT_BITS` bits;
    ``%`` is refused on text (printf-style formatting has no bound on its widths).

    Raises:
        ScriptRefused: naming the limit.
    """
    if op == "+":
        if isinstance(left, (str, bytes)) and isinstance(right, (str, bytes)):
            _check(len(left) + len(right))
        elif isinstance(left, (list, tuple)) and isinstance(right, (list, tuple)):
            _check(weight(left) + weight(right))
        return left + right
    if op == "*":
        if (isinstance(left, _SEQUENCES) and _is_int(right)) or (isinstance(right, _SEQUENCES) and _is_int(left)):
            sequence, times = (left, right) if isinstance(left, _SEQUENCES) else (right, left)
            if times > 0:
                _check(weight(sequence) * times)
        elif _is_int(left) and _is_int(right):
            if left.bit_length() + right.bit_length() > MAX_INT_BITS:
                raise ScriptRefused(f"the product would have more than {MAX_INT_BITS} bits")
        return left * right
    if op == "%":
        if isinstance(left, (str, bytes)):
            raise ScriptRefused("string formatting with % is not allowed in diagram scripts; use an f-string")
        return left % right
    raise ScriptRefused(f"the operator {op} is not allowed")


def bounded_range(*args: int) -> range:
    """``range(*args)`` of at most :data:`MAX_RANGE` numbers.

    Raises:
        ScriptRefused: longer.
    """
    numbers = range(*args)
    if len(numbers) > MAX_RANGE:
        raise ScriptRefused(f"range() of {len(numbers)} numbers; at most {MAX_RANGE}")
    return numbers


class CheckedItems:
    """What ``x[key] = value`` and ``del x[key]`` write through in a script: the dict or list
    itself, after checking the key and the value (:func:`sized`), and that the container stays
    within :data:`MAX_WEIGHT` (so no write can build a value that is huge to print, compare or store)."""

    _guarded_writes = True

    def __init__(self, target: dict[str, Any] | list[Any]) -> None:
        self._target = target

    def __setitem__(self, key: Any, value: Any) -> None:
        sized(key)
        sized(value)
        self._target[key] = value
        sized(self._target)

    def __delitem__(self, key: Any) -> None:
        del self._target[key]


_GUARDED_OPS = {ast.Add: "+", ast.Mult: "*", ast.Mod: "%"}


def guard_tree(transformer: Any, node: Any) -> Any:
    """``node`` (already visited by RestrictedPython's transformer) rewritten so that the guards
    run: a ``+``, ``*`` or ``%`` becomes ``_binop_("<op>", left, right)``; a list, tuple, set or
    dict display with a non-constant item becomes ``_sized_(<display>)``. Other nodes are unchanged."""
    if isinstance(node, ast.BinOp) and type(node.op) in _GUARDED_OPS:
        call = ast.Call(func=ast.Name("_binop_", ast.Load()),
                        args=[ast.Constant(_GUARDED_OPS[type(node.op)]), node.left, node.right], keywords=[])
        return ast.fix_missing_locations(ast.copy_location(call, node))
    if isinstance(node, (ast.List, ast.Tuple)) and not isinstance(node.ctx, ast.Load):
        return node
    if isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict)):
        items = [*node.keys, *node.values] if isinstance(node, ast.Dict) else node.elts
        if all(isinstance(item, ast.Constant) for item in items if item is not None):
            return node
        call = ast.Call(func=ast.Name("_sized_", ast.Load()), args=[node], keywords=[])
        return ast.fix_missing_locations(ast.copy_location(call, node))
    return node
