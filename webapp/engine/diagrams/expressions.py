"""Every expression and script a diagram carries, found in its XML and checked by the sandbox.

SpiffWorkflow 3.2.0's spiff parser evaluates, besides sequence-flow conditions, timer expressions
and script tasks' scripts: the ``spiffworkflow:preScript`` and ``postScript`` of any task, the
``loopCardinality`` and ``completionCondition`` of a multi-instance task, the ``loopCondition`` of a
standard loop, the ``condition`` of a conditional event, service-task parameter values
(``spiffworkflow:parameter value=``), message and event payloads (``spiffworkflow:messagePayload``,
``spiffworkflow:payloadExpression``) and correlation expressions (``spiffworkflow:expression``,
``bpmn:messagePath``, which its parser makes of a retrieval ``formalExpression``). Each is compiled
here as the engine will run it (a script or an expression), so the sandbox's refusal names the
element and line at deploy rather than failing a case at run time.

Loops in the diagram itself are bounded too: a multi-instance task runs at most
``sandbox.MAX_INSTANCES`` instances and a standard loop needs a ``loopMaximum`` of at most
:data:`MAX_LOOP`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from lxml import etree

from webapp.engine.diagrams.elements import owner
from webapp.engine.scripts.sandbox import MAX_INSTANCES, ScriptRefused, compile_expression, compile_script

BPMN_NS = "http://www.omg.org/spec/BPMN/20100524/MODEL"
SPIFF_NS = "http://spiffworkflow.org/bpmn/schema/1.0/core"
MAX_LOOP = 100  # iterations of a standard loop (loopMaximum)
NOT_PYTHON = "not valid Python: "  # the sandbox's words for a syntax error

SCRIPTS = {(BPMN_NS, "script"), (SPIFF_NS, "preScript"), (SPIFF_NS, "postScript")}
EXPRESSIONS = {(BPMN_NS, name) for name in ("conditionExpression", "timeDate", "timeDuration", "timeCycle",
                                            "loopCardinality", "completionCondition", "loopCondition",
                                            "condition", "messagePath")} | \
              {(SPIFF_NS, name) for name in ("messagePayload", "payloadExpression", "expression")}

Found = tuple[str, str | None, int | None]  # (message, element id, line)


def _owner_id(node: etree._Element) -> str | None:
    """The id of the BPMN element the expression belongs to (an extension's ``id`` is none: SpiffWorkflow's
    service operator's is its handler's name)."""
    found = owner(node.getparent()) if node.getparent() is not None else None
    return found.get("id") if found is not None else None


def sources(root: etree._Element) -> Iterator[tuple[etree._Element, str, str, bool]]:
    """``(node, what, source, is_script)`` for every expression and script of the diagram."""
    for node in root.iter():
        if not isinstance(node.tag, str):
            continue
        name = etree.QName(node)
        key = (name.namespace, name.localname)
        if key in SCRIPTS or key in EXPRESSIONS:
            yield node, name.localname, (node.text or "").strip(), key in SCRIPTS
        elif key == (BPMN_NS, "formalExpression") and node.getparent() is not None and \
                etree.QName(node.getparent()).localname == "correlationPropertyRetrievalExpression":
            yield node, "messagePath", (node.text or "").strip(), False
        elif key == (SPIFF_NS, "parameter") and node.get("value") is not None:
            yield node, f"parameter {node.get('id')}", node.get("value").strip(), False


def check(root: etree._Element, scope: set[Any] | None = None) -> list[Found]:
    """Compile every expression and script (see the module text) and check the loops' bounds.

    Args:
        scope: the elements to check (those of the processes that run); None: the whole file.
    Returns:
        ``(message, element id, line)`` for each refusal; empty when all pass.
    """
    found: list[Found] = []
    for node, what, source, is_script in sources(root):
        if scope is not None and node not in scope:
            continue
        if not source and is_script:
            continue  # SpiffWorkflow runs nothing for an empty script
        if not source and what not in ("conditionExpression", "timeDate", "timeDuration", "timeCycle"):
            found.append((f"{what} is empty; give an expression or remove it", _owner_id(node), node.sourceline))
            continue
        language = ("JUEL (Camunda 7's expression language)" if source.startswith(("${", "#{")) and source.endswith("}")
                    else "FEEL (Camunda 8's expression language)" if source.startswith("=") else None)
        if language:
            shown = source if len(source) <= 80 else source[:79] + "…"
            found.append((f"the {what} {shown!r} is written in {language}; diagram expressions here are Python: "
                          "write it as one (e.g. amount > 1000)", _owner_id(node), node.sourceline))
            continue
        try:
            compile_script(source) if is_script else compile_expression(source)
        except ScriptRefused as error:
            detail = str(error)
            if detail.startswith(NOT_PYTHON):  # say what was written: it is often another language (XPath, FEEL)
                shown = " ".join(source.split())
                shown = shown if len(shown) <= 80 else shown[:79] + "…"
                kind, example = ("scripts", "total = fee * 2") if is_script else ("expressions", "amount > 1000")
                found.append((f"the {what} {shown!r} is not valid Python ({detail[len(NOT_PYTHON):]}); diagram "
                              f"{kind} here are Python (e.g. {example})", _owner_id(node), node.sourceline))
            else:
                found.append((f"the {what} is refused by the sandbox: {detail}", _owner_id(node), node.sourceline))
            continue
        if what == "loopCardinality" and source.isdigit() and int(source) > MAX_INSTANCES:
            found.append((f"loopCardinality {source}: a multi-instance task runs at most {MAX_INSTANCES} "
                          "instances", _owner_id(node), node.sourceline))
    for loop in root.iter(f"{{{BPMN_NS}}}standardLoopCharacteristics"):
        if scope is not None and loop not in scope:
            continue
        maximum = (loop.get("loopMaximum") or "").strip()
        if not maximum.isdigit() or int(maximum) > MAX_LOOP:
            found.append((f"a standard loop needs loopMaximum, a whole number of iterations from 0 to {MAX_LOOP} "
                          f"(found {maximum or 'none'})", _owner_id(loop), loop.sourceline))
    return found
