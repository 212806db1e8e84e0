"""The verdict on every BPMN file of a folder — the whole BPMN MIWG test suite, say — as classes with counts.

    .venv/bin/python tools/miwg_verdicts.py PATH/TO/bpmn-miwg-test-suite [--process-id rule130_case] [--list]

Each ``*.bpmn`` under the folder (recursively, in path order) goes through the validation pipeline
(:func:`webapp.engine.diagrams.parser.examine`: what ``rule130 deploy --dry-run``, the modeler and the API run) with
the registered handlers and no forms. The script prints the verdict classes (the verdict's kind by its
XSD validity) with counts, the number of files, the total and the slowest file's time, and the checks of
issue 22's "done when":

- no verdict calls an XSD-valid file "not valid BPMN";
- no message is empty, ends in "?." or carries a library's wording (an exception's name, libxml2's
  ``{namespace}`` notation, SpiffWorkflow's "Did you mean");
- every problem about an element names it (its name; its id when it has no name);
- every file gets its verdict within 5 s.

``--list`` also prints each file's class and first problem. Exit 0 when every check holds, 1 when one
fails (each failure printed), 2 for a folder with no ``.bpmn`` file. The public suite is
https://github.com/bpmn-miwg/bpmn-miwg-test-suite (CC BY 3.0); tests/corpus/miwg holds a sample of it.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lxml import etree

import handlers
from webapp.engine.diagrams import parser, safe_xml, verdicts

LIMIT_SECONDS = 5.0
# A library's wording in a message once the file's own quoted values are taken out: an exception's class
# name, libxml2's {namespace}name notation, SpiffWorkflow's "Did you mean", its bug's method name
LIBRARY = re.compile(r"\b[A-Z][A-Za-z]*(?:Error|Exception)\b|\{https?:|Did you mean|raise_validation_exception|"
                     r"<Element |Traceback")
QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
ORDER = ["deployable", "cannot_run", "not_executable", "process_missing", "no_process", "not_bpmn", "dtd", "not_xml",
         "too_large"]


@dataclass
class Outcome:
    """One file's verdict, how long it took, and what in it breaks a check."""

    path: Path
    verdict: Any
    seconds: float
    faults: list[str] = field(default_factory=list)


def files(folder: Path) -> list[Path]:
    """Every ``*.bpmn`` under ``folder``, in path order."""
    return sorted(p for p in folder.rglob("*.bpmn") if p.is_file())


def faults(data: bytes, verdict: Any, seconds: float) -> list[str]:
    """What in one file's verdict breaks a check of issue 22 (see the module text); empty when none does.

    Args:
        data: the file's bytes (to find the elements the problems name).
        verdict: its :class:`webapp.engine.diagrams.verdicts.Verdict`.
        seconds: how long the verdict took.
    """
    found = []
    if seconds > LIMIT_SECONDS:
        found.append(f"the verdict took {seconds:.1f} s (the limit is {LIMIT_SECONDS:.0f} s)")
    words = [verdict.headline(), verdict.summary()] + [p.message for p in verdict.problems]
    if verdict.xsd_valid and any("not valid BPMN" in w for w in words):
        found.append("an XSD-valid file is called not valid BPMN")
    for problem in verdict.problems:
        message = problem.message or ""
        if not message.strip() or message.rstrip().endswith("?."):
            found.append(f"a message is empty or ends in '?.': {problem}")
        elif LIBRARY.search(QUOTED.sub("''", message)):
            found.append(f"a message carries a library's wording: {problem}")
    named = _names(data) if verdict.well_formed else {}
    for problem in verdict.problems:
        if problem.element_id is None:
            continue
        names = named.get(problem.element_id)
        if names is None:
            found.append(f"a problem names an element the file does not hold: {problem}")
        elif not any((f"'{name[:60]}" in problem.message) if name else (problem.element_id in problem.message)
                     for name in names):
            found.append(f"a problem does not name its element: {problem}")
    return found


def _names(data: bytes) -> dict[str, list[str]]:
    """Element id -> the names (white space collapsed; '' for none) of the elements with that id, and of
    the named elements inside them that have no id of their own (a problem about one of those carries the
    id of the element around it)."""
    try:
        root = etree.fromstring(data, safe_xml.safe_xml_parser())
    except etree.XMLSyntaxError:
        return {}
    found: dict[str, list[str]] = {}
    for element in root.iter():
        if not isinstance(element.tag, str):
            continue
        name = " ".join((element.get("name") or "").split())
        if element.get("id"):
            found.setdefault(element.get("id"), []).append(name)
        elif name:
            around = element.getparent()
            while around is not None and not around.get("id"):
                around = around.getparent()
            if around is not None:
                found.setdefault(around.get("id"), []).append(name)
    return found


def run(folder: Path, process_id: str = parser.PROCESS_ID) -> Iterator[Outcome]:
    """The verdict on each file of ``folder`` (:func:`files`), timed, with its faults."""
    names = handlers.names()
    for path in files(folder):
        data = path.read_bytes()
        started = time.perf_counter()
        verdict = parser.examine(data, {}, process_id, names)
        seconds = time.perf_counter() - started
        yield Outcome(path, verdict, seconds, faults(data, verdict, seconds))


def xsd_column(verdict: Any) -> str:
    """``valid``, ``invalid`` or ``unread`` (not read as BPMN: the XSD was not run)."""
    return "unread" if verdict.xsd_valid is None else "valid" if verdict.xsd_valid else "invalid"


def table(outcomes: list[Outcome]) -> list[str]:
    """The verdict classes by XSD validity with counts, as text lines."""
    counts = Counter((o.verdict.kind, xsd_column(o.verdict)) for o in outcomes)
    columns = ("valid", "invalid", "unread")
    width = max(len(verdicts.KINDS[k]) for k in ORDER) + 2
    lines = [f"{'verdict class':<{width}}{'XSD valid':>10}{'not valid':>10}{'unread':>8}{'files':>7}"]
    for kind in ORDER:
        row = [counts.get((kind, c), 0) for c in columns]
        if sum(row):
            cells = "".join(f"{n or '-':>{w}}" for n, w in zip(row, (10, 10, 8), strict=False))
            lines.append(f"{verdicts.KINDS[kind]:<{width}}{cells}{sum(row):>7}")
    totals = [sum(counts.get((k, c), 0) for k in ORDER) for c in columns]
    lines.append(f"{'all files':<{width}}" + "".join(f"{n:>{w}}" for n, w in zip(totals, (10, 10, 8), strict=False))
                 + f"{sum(totals):>7}")
    return lines


def holdings(outcomes: list[Outcome], process_id: str) -> list[str]:
    """The files that do not hold ``process_id``, by what they hold instead, as text lines."""
    counts: Counter = Counter()
    for outcome in outcomes:
        verdict = outcome.verdict
        if verdict.kind != "process_missing":
            continue
        marked = sum(p.executable is True for p in verdict.processes)
        counts["one process marked executable (checked as the one to run)" if verdict.checked else
               "several processes marked executable" if marked > 1 else
               "no process marked executable (isExecutable false or not set)"] += 1
    if not counts:
        return []
    width = max(len(k) for k in counts) + 4
    return ["", f"files that do not hold {process_id}, by what they hold:"] + [
        f"  {kind:<{width}}{n:>5}" for kind, n in counts.most_common()]


def main(argv: list[str] | None = None) -> int:
    """Run the script (see the module text); returns the exit status."""
    arguments = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    arguments.add_argument("folder", type=Path, help="a folder holding .bpmn files (searched recursively)")
    arguments.add_argument("--process-id", default=parser.PROCESS_ID, help="the process this installation runs")
    arguments.add_argument("--list", action="store_true", help="print each file's class and first problem")
    options = arguments.parse_args(argv)
    started = time.perf_counter()
    outcomes = []
    for outcome in run(options.folder, options.process_id):
        outcomes.append(outcome)
        if options.list:
            first = str(outcome.verdict.problems[0]) if outcome.verdict.problems else ""
            print(f"{outcome.path.relative_to(options.folder)}: {outcome.verdict.kind}, XSD "
                  f"{xsd_column(outcome.verdict)}: {first[:200]}")
    if not outcomes:
        print(f"no .bpmn file under {options.folder}", file=sys.stderr)
        return 2
    elapsed = time.perf_counter() - started
    print("\n".join(table(outcomes) + holdings(outcomes, options.process_id)))
    slowest = max(outcomes, key=lambda o: o.seconds)
    problems = [p for o in outcomes for p in o.verdict.problems]
    print(f"\n{len(outcomes)} files in {elapsed:.1f} s; slowest {slowest.seconds:.3f} s: "
          f"{slowest.path.relative_to(options.folder)}")
    print(f"{len(problems)} problems ({sum(p.severity == 'error' for p in problems)} errors, "
          f"{sum(p.severity != 'error' for p in problems)} warnings)")
    failed = [(o, f) for o in outcomes for f in o.faults]
    checks = Counter(f.split(":")[0] for _, f in failed)
    print("checks: " + "; ".join(f"{name}: {checks.get(name, 0)}" for name in (
        "an XSD-valid file is called not valid BPMN", "a message is empty or ends in '?.'",
        "a message carries a library's wording", "a problem does not name its element",
        "a problem names an element the file does not hold")) + f"; over {LIMIT_SECONDS:.0f} s: "
        f"{sum(1 for o in outcomes if o.seconds > LIMIT_SECONDS)}")
    for outcome, fault in failed:
        print(f"FAILED {outcome.path.relative_to(options.folder)}: {fault}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
