"""The checks of a diagram's timers, made before SpiffWorkflow builds the spec (for
:func:`webapp.engine.diagrams.checks.check_project_rules`): every legal period is ``period_end(event, days,
timezone)`` in a timeDate, counting calendar days in the Panchayat's time zone (Rule 2), its days a
whole number or a value of the case; the objection period is never below 30 days (Rule 130(a)); the
periods the rule fixes (the release window, the conditional auction) are written as it fixes them,
and the periods the case sets (objection, appeal, return) take their days from it; an overdue timer
(``service_level_end``) only reminds, on a non-interrupting boundary event of a user task.

Each check takes the parsed tree (lxml) and returns :class:`~webapp.engine.diagrams.problems.Problem` values
naming the timer's event by kind, name and id.
"""

from __future__ import annotations

import ast
from typing import Any

from lxml import etree

from webapp.engine.diagrams import elements as el
from webapp.engine.diagrams.problems import Problem
from webapp.values import legal_time

BPMN_NS = el.BPMN_NS
MIN_OBJECTION_DAYS = 30
# Timers whose length the rule itself fixes: element id -> (the start it counts from, days after the
# start's day, the clause). The release window: the 3 days after impoundment (Rule 130, heading);
# the conditional auction: 3 days, its opening day and the 2 after it (Rule 130(b)).
FIXED_PERIODS = {
    "bt_release_window": ("impounded_at", 3, "Rule 130 (heading): the 3 days after impoundment"),
    "bt_auction_closes": ('notice["auction_opened_at"]', 2,
                          "Rule 130(b): the conditional auction lasts 3 days, its opening day and the 2 after"),
}
OBJECTION_TIMER = "n_ice_period_ends"
# Periods whose days come from the case, never a constant: element id -> (the days, what they are).
# The objection period from the notice (at least 30 days, Rule 130(a)); the appeal window M and the
# return period from the Panchayat's settings (RULE130.md, "Settings": 1-365 and 1-90 days).
PERIOD_SOURCES = {
    OBJECTION_TIMER: ('notice["objection_period_days"]', "the objection period must take its days from the notice"),
    "ice_appeal_window_ends": ("appeal_period_days", "the appeal window must take its days from the Panchayat's "
                               "setting (at least 1 day)"),
    "bt_return_deadline": ("return_period_days", "the return period must take its days from the Panchayat's "
                           "setting (at least 1 day)"),
}
MAX_PERIOD_DAYS = legal_time.MAX_PERIOD_DAYS
USE_PERIOD_END = "use period_end(event, days, timezone) (Rule 2: calendar days in the Panchayat's time zone)"
SERVICE_LEVEL_END = "service_level_end"  # overdue timers (service levels, not legal periods)
MAX_OVERDUE_DAYS = 60


def _int_constant(node: ast.expr) -> int | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = _int_constant(node.operand)
        return -value if value is not None else None
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    return None


def _is_reference(node: ast.expr) -> bool:
    """A value of the case: a name, or a name subscripted by constant keys (``notice["days"]``)."""
    while isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        node = node.value
    return isinstance(node, ast.Name)


def check_timers(root: etree._Element, scope: set[Any] | None = None) -> list[Problem]:
    """Every timer (of ``scope``, the elements that run; None: of the whole file) is ``period_end(event,
    days, timezone)`` in a timeDate, its days a whole number from 0 to :data:`MAX_PERIOD_DAYS` or a value
    of the case (no computation, whose result no check could bound); Rule 130(a) periods >= 30 days; the
    periods the rule fixes as it fixes them; the periods of :data:`PERIOD_SOURCES` from their source; or
    an overdue timer (:func:`_check_service_level_timer`). Each problem names the timer's event."""
    problems: list[Problem] = []
    for definition in root.iter(f"{{{BPMN_NS}}}timerEventDefinition"):
        if scope is not None and definition not in scope:
            continue
        event = definition.getparent()
        subject = el.describe(event) if event is not None else "a timer"
        for problem in _check_timer(root, definition):
            problem.message = f"{subject}: {problem.message}"
            problem.path = el.where(event)[2] if event is not None else None
            problems.append(problem)
    return problems


def _check_timer(root: etree._Element, definition: etree._Element) -> list[Problem]:
    """The problems of one timer event definition (see :func:`check_timers`)."""
    problems: list[Problem] = []
    event = definition.getparent()
    event_id = event.get("id") if event is not None else None
    line = definition.sourceline
    expressions = [c for c in definition if isinstance(c.tag, str)
                   and etree.QName(c).localname in ("timeDate", "timeDuration", "timeCycle")]
    if not expressions:
        problems.append(Problem(f"timer has no expression; {USE_PERIOD_END} in a timeDate", event_id, line))
        return problems
    node = expressions[0]
    source = (node.text or "").strip()
    line = node.sourceline
    kind = etree.QName(node).localname
    if kind != "timeDate":
        problems.append(Problem(f"timer uses {kind} {source!r}; {USE_PERIOD_END} in a timeDate", event_id, line))
        return problems
    try:
        tree = ast.parse(source, mode="eval").body
    except SyntaxError:
        tree = None
    if isinstance(tree, ast.Call) and isinstance(tree.func, ast.Name) and tree.func.id == SERVICE_LEVEL_END:
        problems += _check_service_level_timer(root, event, event_id, source, tree, line)
        return problems
    if not (isinstance(tree, ast.Call) and isinstance(tree.func, ast.Name) and tree.func.id == "period_end"
            and len(tree.args) == 3 and not tree.keywords):
        problems.append(Problem(f"timer expression {source!r} is not a legal period; {USE_PERIOD_END}",
                                event_id, line))
        return problems
    days_node, zone_node = tree.args[1], tree.args[2]
    if not (isinstance(zone_node, ast.Name) and zone_node.id == "timezone"):
        problems.append(Problem(f"timer expression {source!r} must pass timezone (the Panchayat's time "
                                f"zone) as the third argument; {USE_PERIOD_END}", event_id, line))
    days = _int_constant(days_node)
    mentions_130a = "Rule 130(a)" in own_documentation(event)
    if days is None and not _is_reference(days_node):
        problems.append(Problem(f"timer expression {source!r}: the days must be a whole number from 0 to "
                                f"{MAX_PERIOD_DAYS} or a value of the case "
                                '(e.g. notice["objection_period_days"]), not a computation', event_id, line))
    elif days is not None and days < 0:
        problems.append(Problem(f"timer expression {source!r} has a negative number of days", event_id, line))
    elif days is not None and days > MAX_PERIOD_DAYS:
        problems.append(Problem(f"timer expression {source!r}: a period of more than {MAX_PERIOD_DAYS} days "
                                "(ten years) is no period of this rule", event_id, line))
    elif days is not None and days < MIN_OBJECTION_DAYS and (mentions_130a or event_id == OBJECTION_TIMER):
        problems.append(Problem(f"timer expression {source!r}: the objection period can never be below "
                                f"{MIN_OBJECTION_DAYS} days (Rule 130(a))", event_id, line))
    elif event_id in FIXED_PERIODS and (ast.dump(tree.args[0]), days) != (
            ast.dump(ast.parse(FIXED_PERIODS[event_id][0], mode="eval").body), FIXED_PERIODS[event_id][1]):
        start, fixed, clause = FIXED_PERIODS[event_id]
        problems.append(Problem(f"timer expression {source!r}: this period is fixed by the rule; write "
                                f"period_end({start}, {fixed}, timezone) ({clause})", event_id, line))
    elif event_id in PERIOD_SOURCES and ast.dump(days_node) != ast.dump(
            ast.parse(PERIOD_SOURCES[event_id][0], mode="eval").body):
        wanted, what = PERIOD_SOURCES[event_id]
        problems.append(Problem(f"timer expression {source!r}: {what} ({wanted}), never a constant",
                                event_id, line))
    return problems


def _check_service_level_timer(root: etree._Element, event: etree._Element | None, event_id: str | None, source: str,
                               tree: ast.Call, line: int | None) -> list[Problem]:
    """An overdue timer: ``service_level_end("<attached task id>", <days after>, timezone)``.

    A service level is the project's setting, not a legal period (RULE130.md), so it may only
    remind: the form is allowed on a non-interrupting boundary event of a user task, naming that
    task, with a whole number of days after the due day (0 to 60). It can never close a task,
    end a legal period or stand in for ``period_end`` (whose literal days the other checks see).
    """
    where = (event_id, line)
    usage = (f'{SERVICE_LEVEL_END}("<the task it is attached to>", <days after the due day, 0-60>, timezone)')
    if event is None or etree.QName(event).localname != "boundaryEvent" or event.get("cancelActivity") != "false":
        return [Problem(f"timer expression {source!r}: {SERVICE_LEVEL_END} is only for a non-interrupting boundary "
                        'event (cancelActivity="false") on a user task: a service level reminds and escalates, '
                        f"it never closes a task or ends a legal period; legal periods {USE_PERIOD_END}", *where)]
    host_id = event.get("attachedToRef") or ""
    host = el.by_id(root).get(host_id) if host_id else None
    if host is None or etree.QName(host).localname != "userTask":
        return [Problem(f"timer expression {source!r}: {SERVICE_LEVEL_END} must be on a boundary event of a user "
                        f"task; {host_id or 'nothing'} is not one", *where)]
    if len(tree.args) != 3 or tree.keywords:
        return [Problem(f"timer expression {source!r} is not an overdue timer; use {usage}", *where)]
    task_node, days_node, zone_node = tree.args
    problems = []
    if not (isinstance(task_node, ast.Constant) and task_node.value == host_id):
        problems.append(Problem(f"timer expression {source!r} must name the task it is attached to "
                                f'("{host_id}") as its first argument; use {usage}', *where))
    days = _int_constant(days_node)
    if days is None or not 0 <= days <= MAX_OVERDUE_DAYS:
        problems.append(Problem(f"timer expression {source!r}: the days after the due day must be a whole number "
                                f"from 0 to {MAX_OVERDUE_DAYS}; use {usage}", *where))
    if not (isinstance(zone_node, ast.Name) and zone_node.id == "timezone"):
        problems.append(Problem(f"timer expression {source!r} must pass timezone (the Panchayat's time zone) as the "
                                f"third argument; use {usage}", *where))
    return problems


def own_documentation(element: etree._Element | None) -> str:
    """The text of the element's own documentation elements (not of the elements inside it), joined by spaces."""
    if element is None:
        return ""
    return " ".join(d.text or "" for d in element.findall(f"{{{BPMN_NS}}}documentation"))
