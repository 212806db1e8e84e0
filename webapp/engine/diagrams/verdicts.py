"""The verdict on a BPMN file for this installation: what is true of it (XML, XSD, the processes
it holds, whether the process this installation runs can run here), its problems, and the process
ready to deploy.

:func:`webapp.engine.diagrams.parser.examine` makes the :class:`Verdict`; a deployable one carries the
:class:`ParsedProcess` the engine starts and resumes instances from. The verdict's words are English,
as the CLI prints them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from webapp.engine.diagrams import elements as el
from webapp.engine.diagrams.problems import Problem, refusal
from webapp.errors import InvalidDiagram


@dataclass
class ParsedProcess:
    """A parsed, checked process: what the engine needs to start and resume instances."""

    process_id: str
    spec: Any
    subprocess_specs: dict[str, Any]
    forms: dict[str, dict[str, Any]]
    bpmn_xml: bytes
    content_hash: str
    warnings: list[Problem] = field(default_factory=list)
    # element id -> task spec, the first in the process and then its subprocesses (filled on first use)
    by_bpmn_id: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    summary: str = field(default="", repr=False, compare=False)  # the verdict's facts (Verdict.summary)


def counted(num: int, noun: str, plural: str | None = None) -> str:
    """``1 problem``, ``2 problems`` (English: the verdict's words are English, as the CLI prints them)."""
    return f"{num} {noun if num == 1 else plural or noun + 's'}"


KINDS = {
    "not_xml": "not well-formed XML",
    "dtd": "declares a DTD or entities (refused unread)",
    "not_bpmn": "not BPMN 2.0 (root element)",
    "too_large": "too large",
    "no_process": "holds no process",
    "process_missing": "does not hold the process this installation runs",
    "not_executable": "the process this installation runs is not executable",
    "cannot_run": "problems stop the process from running here",
    "deployable": "deployable",
}


@dataclass
class Verdict:
    """What is true of a BPMN file for this installation (see the module text).

    ``well_formed`` and ``bpmn``: readable as XML, with bpmn:definitions as its root (and no DTD);
    ``unreadable``: why it was not read (not_xml, dtd, not_bpmn, too_large), None when it was;
    ``xsd_valid``: valid by the BPMN 2.0 XSD (None when it could not be read) with ``xsd_errors`` of
    them; ``processes``: the
    processes it holds; ``process_id``: the process this installation runs; ``checked``: the process
    whose behaviour was checked (``process_id``, or the file's only executable process when it holds no
    ``process_id``; None when nothing would run); ``problems``: errors then warnings; ``parsed``: the
    process ready to deploy (None unless deployable and asked for).
    """

    process_id: str
    problems: list[Problem] = field(default_factory=list)
    well_formed: bool = True
    bpmn: bool = True
    unreadable: str | None = None  # not_xml | dtd | not_bpmn | too_large
    xsd_valid: bool | None = None
    xsd_errors: int = 0
    processes: list[el.ProcessFacts] = field(default_factory=list)
    checked: str | None = None
    parsed: ParsedProcess | None = None

    @property
    def errors(self) -> list[Problem]:
        """The problems that stop a deploy."""
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        """The problems that do not stop a deploy."""
        return [p for p in self.problems if p.severity != "error"]

    @property
    def deployable(self) -> bool:
        """No problem is an error."""
        return not self.errors

    @property
    def target(self) -> el.ProcessFacts | None:
        """The facts of the process this installation runs, None when the file does not hold it."""
        return next((p for p in self.processes if p.id == self.process_id), None)

    @property
    def kind(self) -> str:
        """The verdict's class (a key of :data:`KINDS`): the first thing in the pipeline's order that
        is not so (``unreadable``, no process, the process missing, not executable, problems), else
        ``deployable``. XSD validity is a separate fact (``xsd_valid``)."""
        if self.unreadable:
            return self.unreadable
        if not self.processes:
            return "no_process"
        if self.target is None:
            return "process_missing"
        if not self.target.runs:
            return "not_executable"
        return "deployable" if self.deployable else "cannot_run"

    def headline(self) -> str:
        """One sentence for the refusal: what is wrong first, with the number of problems."""
        if self.unreadable:
            return self.problems[0].message if self.problems else KINDS[self.unreadable]
        errors = len(self.errors)
        if not self.xsd_valid:
            return (f"{counted(errors, 'problem')} {'stops' if errors == 1 else 'stop'} this diagram from running "
                    f"(the file is not valid BPMN 2.0: {counted(self.xsd_errors, 'schema error')})")
        return f"{counted(errors, 'problem')} {'stops' if errors == 1 else 'stop'} this diagram from running"

    def summary(self) -> str:
        """The facts in one line: XML, XSD, the processes, and whether the process this installation
        runs can run here."""
        if self.unreadable:
            return {"not_xml": "not well-formed XML", "dtd": "refused unread: it declares a DTD or entities",
                    "not_bpmn": "well-formed XML, but not BPMN 2.0 (its root element is not bpmn:definitions)",
                    "too_large": "refused unread: too large"}[self.unreadable]
        facts = ["well-formed XML", "valid BPMN 2.0" if self.xsd_valid else "not valid BPMN 2.0 (XSD)"]
        if not self.processes:
            facts.append("no process")
        else:
            facts.append(f"{counted(len(self.processes), 'process', 'processes')}: {el.listing(self.processes)}")
        target = self.target
        if target is None:
            facts.append(f"the process this installation runs, {self.process_id}, is not in the file")
        elif not target.runs:
            facts.append(f"{self.process_id} is not executable")
        elif self.deployable:
            facts.append(f"{self.process_id} can run here")
        else:
            facts.append(f"{counted(len(self.errors), 'problem')} {'stops' if len(self.errors) == 1 else 'stop'} "
                         f"{self.process_id} from running here")
        return "; ".join(facts)

    def as_json(self) -> dict[str, Any]:
        """``{"kind", "summary", "well_formed", "bpmn", "xsd_valid", "process_id", "checked", "processes"}``."""
        return {"kind": self.kind, "summary": self.summary(), "well_formed": self.well_formed, "bpmn": self.bpmn,
                "xsd_valid": self.xsd_valid, "process_id": self.process_id, "checked": self.checked,
                "processes": [p.as_json() for p in self.processes]}

    def refusal(self) -> InvalidDiagram:
        """The verdict as an InvalidDiagram carrying its problems, errors then warnings (and the verdict
        itself as ``verdict``)."""
        error = refusal(self.headline(), self.problems)
        error.verdict = self
        return error
