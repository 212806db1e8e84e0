"""A check over real files (issue 22, item 3): the verdicts on a sample of the BPMN MIWG test suite.

tests/corpus/miwg holds 16 files of the suite with its licence (its README says what each shows). Each
gets its verdict class, and the checks the issue asks of the whole suite hold on every one: no XSD-valid
file called "not valid BPMN", no message empty, ending in "?." or in a library's wording, every problem
about an element naming it, every verdict within 5 s. ``tools/miwg_verdicts.py`` runs the same over the
whole suite; its own output is checked here on the sample.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from webapp.engine.diagrams.parser import PROCESS_ID

SAMPLE = Path(__file__).parent / "corpus" / "miwg"
TOOL = Path(__file__).resolve().parents[1] / "tools" / "miwg_verdicts.py"
# file -> (the verdict's kind, XSD: valid | invalid | unread, the process checked as the one to run)
EXPECTED = {
    "IBM Process Designer 8.0.1/A.3.0-export.bpmn": ("not_xml", "unread", None),
    "GenMyModel 0.47/C.1.1-export.bpmn": ("not_xml", "unread", None),
    "Work in Progress/Imports-BPMN/ModelD_3_1.0/modeld.3.bpmn": ("no_process", "valid", None),
    "ARIS 10.2025.07/A.1.0-export.bpmn": ("process_missing", "valid", None),
    "SAP Signavio Process Manager 19.9.0/C.5.0-export.2.bpmn": ("process_missing", "valid", None),
    "Trisotech BPMN Visio Add in 5.0.1/A.1.0-export.bpmn": ("process_missing", "valid", None),
    "Trisotech BPMN Visio Add in 5.0.1/C.1.1-export.bpmn": ("process_missing", "invalid", None),
    "OMNITRACKER BPMN 12.3/A.1.0-export.bpmn": ("process_missing", "invalid", None),
    "Cardanit (prev. BeePMN) 4.9.1/A.2.1-roundtrip.bpmn": ("process_missing", "invalid", None),
    "ModelFoundry 1.1.1/A.3.0-roundtrip.bpmn": ("process_missing", "invalid", None),
    "Modelio 3.5/A.1.0-export.bpmn": ("process_missing", "invalid", None),
    "bpmn.io (Camunda Modeler) 18.6.1/C.1.1-export.bpmn": ("process_missing", "valid", "Process_1yd42xp"),
    "bpmn.io (Camunda Modeler) 18.6.1/C.2.0-export.bpmn": ("process_missing", "valid", "Process_1h3m6w5"),
    "bpmn.io (Camunda Modeler) 18.6.1/C.5.0-export.bpmn": ("process_missing", "valid", "Process_18ixeuz"),
    "bpmn.io (Camunda Modeler) 18.6.1/C.9.1-export.bpmn": ("process_missing", "valid", "Process_1gusl84"),
    "Trisotech Workflow Modeler 12.6.3/C.1.0-roundtrip.bpmn": ("process_missing", "valid",
                                                               "bpmn-miwg-test-case-c.1.0"),
}


@pytest.fixture(scope="module")
def tool():
    spec = importlib.util.spec_from_file_location("miwg_verdicts", TOOL)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def outcomes(tool):
    return {str(o.path.relative_to(SAMPLE)): o for o in tool.run(SAMPLE)}


def test_the_sample_is_files_of_the_suite_with_its_licence():
    assert sorted(str(p.relative_to(SAMPLE)) for p in SAMPLE.rglob("*.bpmn")) == sorted(EXPECTED)
    assert "Creative Commons Attribution 3.0 Unported License" in (SAMPLE / "LICENSE.txt").read_text()
    readme = (SAMPLE / "README.md").read_text()
    assert "bpmn-miwg/bpmn-miwg-test-suite" in readme and all(f"`{name}`" in readme for name in EXPECTED)


def test_every_sample_file_gets_its_true_verdict_class_and_every_check_holds(tool, outcomes):
    assert {name: (o.verdict.kind, tool.xsd_column(o.verdict), o.verdict.checked)
            for name, o in outcomes.items()} == EXPECTED
    assert {name: o.faults for name, o in outcomes.items() if o.faults} == {}
    assert all(o.seconds < 5 for o in outcomes.values())


def _messages(outcomes, name: str) -> dict[str | None, list[str]]:
    found: dict[str | None, list[str]] = {}
    for problem in outcomes[name].verdict.problems:
        found.setdefault(problem.element_id, []).append(problem.message)
    return found


def test_the_sample_verdicts_say_what_is_true_in_words(outcomes):
    assert _messages(outcomes, "GenMyModel 0.47/C.1.1-export.bpmn") == {None: [
        "the file is not well-formed XML: the file says its text is UTF-8 but holds bytes that are not UTF-8; save "
        "it as UTF-8 (line 26, column 63)"]}
    assert _messages(outcomes, "Work in Progress/Imports-BPMN/ModelD_3_1.0/modeld.3.bpmn") == {None: [
        f"the file holds no process (bpmn:process); this installation runs the process {PROCESS_ID}: add it"]}
    assert _messages(outcomes, "OMNITRACKER BPMN 12.3/A.1.0-export.bpmn")["_3"] == [
        "<ot:schemaObjectDescription> of diagram 'A.1.0-export' is an element of namespace "
        "http://www.omninet.de/ot/bpmn/v1 that no schema known here declares, and the BPMN 2.0 schema checks the "
        "elements at this place strictly; remove it (the diagram interchange schema takes only declared elements in "
        "its extension)"]
    # a file written on one line: each XSD problem carries the path to its element
    one_line = outcomes["Trisotech BPMN Visio Add in 5.0.1/C.1.1-export.bpmn"].verdict
    assert [(p.line, p.path) for p in one_line.problems if p.element_id] == [
        (1, "/definitions/BPMNDiagram/BPMNPlane/BPMNShape[2]"), (1, "/definitions/BPMNDiagram/BPMNPlane/BPMNShape[3]")]
    # what is reported of a pool that is not executable says so
    assert all("which is not executable" in p.message for p in
               outcomes["ModelFoundry 1.1.1/A.3.0-roundtrip.bpmn"].verdict.problems if p.element_id)
    # the one executable process is checked; its pools' neighbours that never run are not
    camunda = _messages(outcomes, "bpmn.io (Camunda Modeler) 18.6.1/C.5.0-export.bpmn")
    assert camunda["DataStoreReference_0u436el"] == [
        "data store reference 'Bank System' names no data store (dataStoreRef), and the engine implements none; "
        "remove it and its associations (keep the data in a form or a task variable)"]
    assert camunda["Activity_10xe0k2"][0] == (
        "call activity 'Check for connected clients' calls no process; set calledElement to the id of a process in "
        "this file")
    # messageRef="semantic:…" (a prefix for the BPMN namespace, no import) resolves to the file's own message
    trisotech = _messages(outcomes, "Trisotech Workflow Modeler 12.6.3/C.1.0-roundtrip.bpmn")
    assert not any("refers to" in m or "cannot be read" in m for ms in trisotech.values() for m in ms)
    assert trisotech["invoiceApproved"] == [
        "sequence flow 'yes': the conditionExpression '${approved}' is written in JUEL (Camunda 7's expression "
        "language); diagram expressions here are Python: write it as one (e.g. amount > 1000)"]


def test_the_script_prints_the_verdict_classes_with_counts(tool, capsys):
    assert tool.main([str(SAMPLE)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[:5] == [
        "verdict class                                          XSD valid not valid  unread  files",
        "does not hold the process this installation runs               8         5       -     13",
        "holds no process                                               1         -       -      1",
        "not well-formed XML                                            -         -       2      2",
        "all files                                                      9         5       2     16"]
    assert "  one process marked executable (checked as the one to run)           5" in printed
    assert any(line.startswith("16 files in ") and "; slowest " in line for line in printed)
    assert printed[-1] == (
        "checks: an XSD-valid file is called not valid BPMN: 0; a message is empty or ends in '?.': 0; a message "
        "carries a library's wording: 0; a problem does not name its element: 0; a problem names an element the "
        "file does not hold: 0; over 5 s: 0")
