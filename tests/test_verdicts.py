"""True verdicts (issue 22, item 1): what the validation pipeline says of a BPMN file.

A verdict says whether the file is well-formed XML and valid BPMN 2.0 by the XSD (every error in
words, naming the element by kind, name and id, with the path when the line is shared), which
processes it holds, executable or not, and what stops the process this installation runs
(``rule130_case``) from running here. The product's checks of executable behaviour apply to the
processes that run only; all problems come in one pass; prefixed QName references resolve as the
XSD allows; the CLI, the modeler and the API give the same verdict. Each test starts from the bundled
diagram or a small file and asserts the exact words.
"""

from __future__ import annotations

import json
import re
import shutil

import pytest
from click.testing import CliRunner
from lxml import etree

import handlers
from webapp.cli import main as cli
from webapp.engine.diagrams import engine_errors
from webapp.engine.diagrams.parser import examine
from webapp.engine.diagrams.problems import Problem
from webapp.errors import InvalidDiagram
from webapp.services.diagrams import repository

from .conftest import PASSWORD

TNS = "https://rule130.example/bpmn"  # the bundled diagram's targetNamespace
DEFINITIONS_END = 'targetNamespace="https://rule130.example/bpmn">'
DIAGRAM = '<bpmndi:BPMNDiagram id="rule130_diagram">'
LIBRARY_WORDS = re.compile(r"\b\w*(Error|Exception)\b|\{http|Did you mean|raise_validation_exception|\?\.$")
# A process that never runs, with what the product's checks refuse in one that runs: a splitting gateway
# with no conditions and a P3D timer
VISITORS = """<bpmn:process id="visitors" name="Visitors" isExecutable="false">
    <bpmn:startEvent id="v_start"/>
    <bpmn:exclusiveGateway id="v_gw" name="Fine paid?"/>
    <bpmn:task id="v_a" name="Pay"/>
    <bpmn:task id="v_b" name="Wait"/>
    <bpmn:intermediateCatchEvent id="v_wait" name="Three days">
      <bpmn:timerEventDefinition id="v_td"><bpmn:timeDuration xsi:type="bpmn:tFormalExpression">P3D</bpmn:timeDuration>
      </bpmn:timerEventDefinition>
    </bpmn:intermediateCatchEvent>
    <bpmn:sequenceFlow id="v_f0" sourceRef="v_start" targetRef="v_gw"/>
    <bpmn:sequenceFlow id="v_f1" sourceRef="v_gw" targetRef="v_a"/>
    <bpmn:sequenceFlow id="v_f2" sourceRef="v_gw" targetRef="v_b"/>
  </bpmn:process>
  """
SMALL = """<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" id="d" targetNamespace="urn:t">
  <bpmn:process id="intake" name="Intake" isExecutable="maybe">
    <bpmn:startEvent id="start" name="Cattle brought in" color="red"/>
    <bpmn:task id="start" name="Twin"/>
    <bpmn:task id="1st" name="First look"/>
    <bpmn:sequenceFlow id="f1" name="fine paid?" sourceRef="start" targetRef="1st">
      <bpmn:conditionExpression xsi:type="bpmn2:tFormalExpression">paid</bpmn:conditionExpression>
    </bpmn:sequenceFlow>
    <bpmn:exclusiveGateway id="gw" name="Owner known?" gatewayDirection="Sideways"/>
  </bpmn:process>
</bpmn:definitions>
"""
SMALL_ERRORS = [  # (element id, line, message)
    ("intake", 3, "process 'Intake': the attribute isExecutable 'maybe' is not a valid boolean (true or false)"),
    ("start", 4, "start event 'Cattle brought in' has the attribute color, which the BPMN 2.0 schema does not allow on "
                 "a start event"),
    ("start", 5, "task 'Twin': its id 'start' is also the id of another element; every id in a file must be unique"),
    ("1st", 6, "task 'First look': the attribute id '1st' is not a valid identifier (an XML name: it begins with a "
               "letter or '_' and holds no spaces or colons)"),
    ("f1", 7, "sequence flow 'fine paid?': the attribute targetRef '1st' is not a valid reference to an identifier "
              "(an XML name: it begins with a letter or '_' and holds no spaces or colons)"),
    ("f1", 8, "<bpmn:conditionExpression> of sequence flow 'fine paid?': the attribute xsi:type "
              "'bpmn2:tFormalExpression' uses the prefix bpmn2, which the file does not declare; declare it "
              '(xmlns:bpmn2="…") or write the value with a declared prefix'),
    ("gw", 10, "exclusive gateway 'Owner known?': the attribute gatewayDirection 'Sideways' is not one of the values "
               "the BPMN 2.0 schema allows (Unspecified, Converging, Diverging, Mixed)"),
    (None, None, "this installation runs the process rule130_case; the file holds process 'Intake' (intake, "
                 "isExecutable 'maybe', not true or false), none with the id rule130_case and none marked executable: "
                 'give the process to run the id rule130_case and isExecutable="true"'),
]


@pytest.fixture(scope="module")
def bundled():
    bpmn, forms = repository.read_bundled()
    return bpmn.decode("utf-8"), forms


def _verdict(text: str, forms: dict):
    return examine(text.encode("utf-8"), forms, handler_names=handlers.names())


def _line(text: str, element_id: str) -> int:
    return etree.fromstring(text.encode()).xpath("//*[@id=$id]", id=element_id)[0].sourceline


def _clean(verdict) -> None:
    """No message is empty, ends in '?.', or carries a library's wording."""
    for problem in verdict.problems:
        assert problem.message and not LIBRARY_WORDS.search(problem.message), problem


# -- 1. the XSD: every error in words, each naming its element -----------------------------------------------

def test_every_xsd_error_is_in_plain_words_naming_its_element():
    verdict = examine(SMALL.encode(), {}, handler_names=handlers.names())
    assert (verdict.well_formed, verdict.xsd_valid, verdict.xsd_errors, verdict.kind) == (
        True, False, 7, "process_missing")
    assert [(p.element_id, p.line, p.message) for p in verdict.problems] == SMALL_ERRORS
    assert all(p.path is None for p in verdict.problems)  # each line points to one element
    assert verdict.headline() == ("8 problems stop this diagram from running (the file is not valid BPMN 2.0: "
                                  "7 schema errors)")
    assert verdict.summary() == (
        "well-formed XML; not valid BPMN 2.0 (XSD); 1 process: process 'Intake' (intake, isExecutable 'maybe', "
        "not true or false); the process this installation runs, rule130_case, is not in the file")
    _clean(verdict)


def test_a_file_written_on_one_line_gets_the_path_to_each_element():
    one_line = " ".join(SMALL.split("\n")[1:])
    verdict = examine(one_line.encode(), {}, handler_names=handlers.names())
    assert [(p.element_id, p.line, p.path) for p in verdict.problems] == [
        ("intake", 1, "/definitions/process"), ("start", 1, "/definitions/process/startEvent"),
        ("start", 1, "/definitions/process/task[1]"), ("1st", 1, "/definitions/process/task[2]"),
        ("f1", 1, "/definitions/process/sequenceFlow"), ("f1", 1, "/definitions/process/sequenceFlow/conditionExpression"),
        ("gw", 1, "/definitions/process/exclusiveGateway"), (None, None, None)]
    assert str(verdict.problems[2]) == ("error: start, line 1, at /definitions/process/task[1]: task 'Twin': its id "
                                        "'start' is also the id of another element; every id in a file must be unique")


def test_xsd_errors_and_the_product_checks_come_in_one_pass(bundled):
    text, forms = bundled
    notice = 'period_end(notice["published_at"], notice["objection_period_days"], timezone)'
    gateway = '<bpmn:exclusiveGateway id="gw_objections" name="Objections filed?" default="f_no_objection">'
    bad = text.replace(notice, "&quot;P30D&quot;").replace(
        gateway, gateway.replace(">", ' gatewayDirection="Sideways">'))
    verdict = _verdict(bad, forms)
    assert (verdict.xsd_valid, verdict.kind) == (False, "cannot_run")
    assert [(p.element_id, p.message) for p in verdict.problems] == [
        ("gw_objections", "exclusive gateway 'Objections filed?': the attribute gatewayDirection 'Sideways' is not one "
                          "of the values the BPMN 2.0 schema allows (Unspecified, Converging, Diverging, Mixed)"),
        ("n_ice_period_ends", "intermediate catch event 'Objection period ends': timer expression '\"P30D\"' is not a "
                              "legal period; use period_end(event, days, timezone) (Rule 2: calendar days in the "
                              "Panchayat's time zone)")]
    with pytest.raises(InvalidDiagram) as refused:  # a deploy says the same
        repository.check(bad.encode(), forms)
    assert refused.value.message == ("2 problems stop this diagram from running (the file is not valid BPMN 2.0: "
                                     "1 schema error)")
    assert refused.value.problems == [str(p) for p in verdict.problems]


# -- 2. the processes: which the file holds, and the one this installation runs ---------------------------

def test_the_bundled_diagram_with_its_process_renamed_is_told_what_is_true(bundled):
    text, forms = bundled
    renamed = text.replace('id="rule130_case"', 'id="my_case"').replace('processRef="rule130_case"',
                                                                        'processRef="my_case"')
    verdict = _verdict(renamed, forms)
    assert (verdict.xsd_valid, verdict.kind, verdict.checked) == (True, "process_missing", None)
    [problem] = verdict.errors
    assert problem.message == (
        "this installation runs the process rule130_case; the file holds process 'Rule 130: disposal of cattle not "
        "released within 3 days' (my_case, executable), process 'Rule 130(a), (c): objection period' "
        "(rule130_notice, executable), process 'Rule 130(b): conditional auction' (rule130_auction, executable), "
        "process 'Rule 130(b) proviso: unsold cattle' (rule130_unsold, executable) and process 'Rule 130(b) proviso: "
        "sale and remittance by the receiving officer' (rule130_remittance, executable), none with the id "
        "rule130_case: give the one to run the id rule130_case")
    assert "not valid BPMN" not in verdict.headline() + problem.message


def test_a_file_with_one_executable_process_of_another_id_is_checked_as_the_one_to_run():
    text = SMALL.replace('isExecutable="maybe"', 'isExecutable="true"').replace(' color="red"', "").replace(
        '<bpmn:task id="start" name="Twin"/>', '<bpmn:userTask id="twin" name="Twin"/>').replace(
        'id="1st"', 'id="first"').replace('targetRef="1st"', 'targetRef="first"').replace(
        'bpmn2:tFormalExpression', 'bpmn:tFormalExpression').replace(' gatewayDirection="Sideways"', "")
    verdict = examine(text.encode(), {}, handler_names=handlers.names())
    assert (verdict.xsd_valid, verdict.kind, verdict.checked) == (True, "process_missing", "intake")
    assert [p.message for p in verdict.errors[:3]] == [
        "this installation runs the process rule130_case; the file holds process 'Intake' (intake, executable), "
        "none with the id rule130_case: to run intake here, give it the id rule130_case (what else stops it from "
        "running here is listed too)",
        "user task 'Twin' has no lane; put it in the lane of the role that does it (pound_keeper, secretary, "
        "sarpanch, appellate_authority, receiving_officer)",
        "user task 'Twin' names no form (formJsonSchemaFilename)"]
    # then every name without Hindi (none of them is in the catalogue), each by name and id
    assert [p.element_id for p in verdict.errors[3:]] == ["start", "twin", "first", "f1", "gw"]
    assert verdict.errors[6].message.startswith("sequence flow 'fine paid?' (id f1) has no Hindi name; ")


def test_the_process_this_installation_runs_marked_not_executable(bundled):
    text, forms = bundled
    executable = 'name="Rule 130: disposal of cattle not released within 3 days" isExecutable="true"'
    assert executable in text
    verdict = _verdict(text.replace(executable, executable.replace("true", "false")), forms)
    assert verdict.kind == "not_executable"
    assert [(p.element_id, p.message) for p in verdict.problems] == [
        ("rule130_case", "process 'Rule 130: disposal of cattle not released within 3 days' is marked "
                         'isExecutable="false"; this installation runs it only when it is executable: set '
                         'isExecutable="true"')]


def test_a_pool_that_never_runs_blocks_nothing_with_its_gateways_and_timers(bundled):
    text, forms = bundled
    with_pool = text.replace(DIAGRAM, VISITORS + DIAGRAM)
    verdict = _verdict(with_pool, forms)
    assert (verdict.xsd_valid, verdict.kind, verdict.problems) == (True, "deployable", [])
    assert "process 'Visitors' (visitors, not executable)" in verdict.summary()
    repository.check(with_pool.encode(), forms)  # and it deploys
    # the same gateway and timer in the process that runs are refused
    running = text.replace(DIAGRAM, VISITORS.replace('isExecutable="false"', 'isExecutable="true"') + DIAGRAM)
    running = running.replace('calledElement="rule130_notice"', 'calledElement="visitors"', 1)
    called = {p.element_id for p in _verdict(running, forms).errors}
    assert {"v_gw", "v_wait"} <= called
    # an XSD error in the pool that never runs is an error of the file, and says where it is
    invalid = with_pool.replace('<bpmn:task id="v_a" name="Pay"/>', '<bpmn:task id="v_a" name="Pay" color="red"/>')
    [problem] = _verdict(invalid, forms).problems
    assert (problem.element_id, problem.message) == (
        "v_a", "task 'Pay' has the attribute color, which the BPMN 2.0 schema does not allow on a task (it is in "
               "process 'Visitors', which is not executable)")


# -- 3. references and data stores ------------------------------------------------------------------------

def test_prefixed_qname_references_resolve_as_the_xsd_allows(bundled):
    text, forms = bundled
    prefixed = text.replace(DEFINITIONS_END, DEFINITIONS_END.replace(">", f' xmlns:tns="{TNS}">'), 1).replace(
        'messageRef="msg_appeal_filed"', 'messageRef="tns:msg_appeal_filed"').replace(
        'calledElement="rule130_notice"', 'calledElement="tns:rule130_notice"')
    assert prefixed.count("tns:") == 2
    parsed = repository.check(prefixed.encode(), forms)  # deployable, as written
    assert parsed.warnings == []
    # a prefixed reference to a message the file does not hold names the event, in words
    missing = prefixed.replace('messageRef="tns:msg_appeal_filed"', 'messageRef="tns:msg_nothing"')
    verdict = _verdict(missing, forms)
    assert [(p.element_id, p.message) for p in verdict.errors] == [
        ("ice_appeal_filed", "intermediate catch event 'Appeal filed' refers to the message msg_nothing, which is not "
                             "in this file; define it (bpmn:message) or refer to one that is")]
    _clean(verdict)


def test_a_call_into_another_file_is_said_to_be_one(bundled):
    text, forms = bundled
    imported = '<bpmn:import namespace="urn:other" location="other.bpmn" ' \
               'importType="http://www.omg.org/spec/BPMN/20100524/MODEL"/>'
    other = text.replace(DEFINITIONS_END, DEFINITIONS_END.replace(">", ' xmlns:other="urn:other">') + imported, 1) \
        .replace('calledElement="rule130_notice"', 'calledElement="other:rule130_notice"')
    verdict = _verdict(other, forms)
    assert verdict.xsd_valid is True
    assert [(p.element_id, p.message) for p in verdict.errors] == [
        ("ca_notice", "call activity 'Objection period' calls other:rule130_notice (of namespace urn:other, another "
                      "file), which is not a process in this file; this installation runs one file: put the process "
                      "it calls in it")]


def test_a_data_store_is_named_even_without_a_name_and_only_where_it_would_run(bundled):
    text, forms = bundled
    stores = '<bpmn:dataStore id="ds_ledger"/><bpmn:dataStore id="ds_visitors" name="Visitors book"/>'
    used = text.replace(DIAGRAM, stores + VISITORS.replace(
        '<bpmn:task id="v_b" name="Wait"/>',
        '<bpmn:task id="v_b" name="Wait"/><bpmn:dataStoreReference id="dsr_book" dataStoreRef="ds_visitors"/>')
        + DIAGRAM)
    assert _verdict(used, forms).problems == []  # the visitors' book is used by a pool that never runs
    in_case = used.replace('<bpmn:laneSet id="case_lanes">',
                           '<bpmn:dataStoreReference id="dsr_ledger" dataStoreRef="ds_ledger"/>'
                           '<bpmn:laneSet id="case_lanes">')
    verdict = _verdict(in_case, forms)
    assert [(p.element_id, p.message) for p in verdict.problems] == [
        ("dsr_ledger", "data store reference dsr_ledger uses data store ds_ledger (it has no name), which has no "
                       "implementation in the engine; remove the data store and its references (keep the data in a "
                       "form or a task variable)")]
    assert "data store ''" not in json.dumps([str(p) for p in verdict.problems])


# -- 4. what SpiffWorkflow refuses, in words --------------------------------------------------------------

def test_what_the_engine_cannot_build_is_said_of_its_element_all_at_once(bundled):
    text, forms = bundled
    root = etree.fromstring(text.encode())
    flow = root.xpath("//*[@sourceRef='ut_order_stand']")[0]
    flow.addnext(etree.fromstring(f'<bpmn:sequenceFlow xmlns:bpmn="{flow.nsmap["bpmn"]}" id="f_extra" '
                                  f'sourceRef="ut_order_stand" targetRef="{flow.get("targetRef")}"/>'))
    task = root.xpath("//*[@id='svc_raise_report']")[0]
    task.remove(task.find("{*}extensionElements"))
    bad = etree.tostring(root, encoding="unicode")
    verdict = _verdict(bad, forms)
    assert [(p.element_id, p.message) for p in verdict.errors] == [
        ("svc_raise_report", "service task 'Raise report and open file' names no handler; give it a service operator "
                             "(spiffworkflow:serviceTaskOperator) that names a registered handler"),
        ("ut_order_stand", "user task 'Order that the auction stand' has 2 outgoing sequence flows; the engine splits "
                           "only at gateways: add an exclusive or parallel gateway after it")]
    _clean(verdict)


def test_a_library_failure_with_no_words_of_its_own_is_still_tied_to_its_element():
    root = etree.fromstring(SMALL.encode())
    node = root.xpath("//*[@id='gw']")[0]

    def fails(node):
        raise TypeError("f() got an unexpected keyword argument 'node'")
    try:
        fails(node)
    except TypeError as error:
        problem = engine_errors.problem_of(error, root)
    assert (problem.element_id, problem.message) == (
        "gw", "exclusive gateway 'Owner known?' cannot be read by the engine (SpiffWorkflow 3.2.0 stops at it and "
              "does not say why); check it against the BPMN 2.0 specification, simplify it or remove it")


@pytest.mark.parametrize("document, message", [
    (b'<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL">\n<bpmn:process id="p">\n'
     b'</bpmn:definitions>',
     "the file is not well-formed XML: the element <process> opened on line 2 is closed by </definitions> (line 3, "
     "column 20)"),
    (b'<?xml version="1.0" encoding="UTF-8"?>\n<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/'
     b'MODEL" targetNamespace="t" name="Gau\xe9">\n</bpmn:definitions>',
     "the file is not well-formed XML: the file says its text is UTF-8 but holds bytes that are not UTF-8; save it "
     "as UTF-8 (line 2, column 105)"),
    (b'<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:p="http://a b/c" '
     b'targetNamespace="t"/>',
     'the file is not well-formed XML: the namespace declared as xmlns:p="http://a b/c" is not a valid URI (a '
     "namespace URI holds no spaces) (line 1, column 98)"),
])
def test_a_file_that_is_not_well_formed_is_told_why_in_words(document, message):
    verdict = examine(document, {}, handler_names=handlers.names())
    assert (verdict.kind, verdict.well_formed, [p.message for p in verdict.problems]) == ("not_xml", False, [message])


# -- 5. the same verdict from the CLI, the modeler and the API ---------------------------------------------

def test_the_cli_the_modeler_and_the_api_give_the_same_verdict(bundled, client, tokens, tmp_path):
    text, forms = bundled
    gateway = '<bpmn:exclusiveGateway id="gw_objections" name="Objections filed?" default="f_no_objection">'
    bad = text.replace(gateway, gateway.replace(' default="f_no_objection"', ' gatewayDirection="Sideways"'))
    verdict = _verdict(bad, forms)
    lines = [str(p) for p in verdict.problems]
    assert len(lines) == 2 and verdict.xsd_valid is False
    # the command line
    (tmp_path / "rule130.bpmn").write_text(bad, encoding="utf-8")
    shutil.copytree(repository.BUNDLED_PROCESS / "forms", tmp_path / "forms")
    result = CliRunner().invoke(cli, ["deploy", "--dry-run", str(tmp_path / "rule130.bpmn")])
    assert result.exit_code == 2
    assert result.output.splitlines() == [f"refused: {verdict.headline()}", f"verdict: {verdict.summary()}", *lines]
    # the API
    api = client.post("/api/v1/process-versions", json={"bpmn": bad, "forms": forms, "dry_run": True},
                      headers={"Authorization": f"Bearer {tokens}"})
    assert api.status_code == 422
    # the modeler
    client.post("/login", data={"username": "admin", "password": PASSWORD})
    page = client.post("/admin/processes/rule130_case/validate",
                       json={"bpmn": bad, "forms": {k: json.dumps(v) for k, v in forms.items()}})
    assert page.status_code == 422
    for answer in (api.get_json()["error"], page.get_json()["error"]):
        assert answer["message"] == verdict.headline()
        assert answer["verdict"] == verdict.as_json()
        assert [str(Problem(**p)) for p in answer["problems"]] == lines


@pytest.fixture
def tokens(sessions, officers):
    from webapp.services.people import users
    with sessions() as session:
        token = users.create_token(session, officers["administrator"].username)
        session.commit()
    return token


def test_a_retrieval_expression_written_as_bpmn_js_writes_it_is_read_as_spiffworkflow_reads_it(bundled):
    text, forms = bundled
    correlation = ('<bpmn:correlationProperty id="cp_case" name="case"><bpmn:correlationPropertyRetrievalExpression '
                   'messageRef="msg_appeal_filed"><bpmn:formalExpression>case_number</bpmn:formalExpression>'
                   '</bpmn:correlationPropertyRetrievalExpression></bpmn:correlationProperty>')
    message = '<bpmn:message id="msg_lot_gone" name="lot_gone"/>'
    verdict = _verdict(text.replace(message, message + correlation), forms)
    assert (verdict.xsd_valid, verdict.kind) == (True, "deployable")
    assert [(p.severity, p.element_id, p.message) for p in verdict.problems] == [
        ("warning", "cp_case", "<bpmn:correlationPropertyRetrievalExpression> of correlation property 'case' holds "
                               "a bpmn:formalExpression where BPMN 2.0 has bpmn:messagePath (bpmn-js writes it so); "
                               "it is read as messagePath, as SpiffWorkflow reads it")]


def test_the_versions_api_refuses_a_redeploy_with_the_same_verdict(bundled, client, tokens, sessions):
    from webapp.store.models import ProcessVersion
    text, forms = bundled
    gone = text.replace('id="notice.publish"', 'id="notice.withdrawn"')  # a handler withdrawn since version 1
    with sessions() as session:
        session.get(ProcessVersion, 1).bpmn_xml = gone
        session.commit()
    response = client.post("/api/v1/processes/rule130_case/versions/1/redeploy", json={"note": "again"},
                           headers={"Authorization": f"Bearer {tokens}"})
    assert response.status_code == 422
    error = response.get_json()["error"]
    verdict = _verdict(gone, forms)
    assert (error["code"], error["message"], error["verdict"]) == (
        "invalid_diagram", verdict.headline(), verdict.as_json())
    assert [p["message"] for p in error["problems"]] == [
        "service task 'Publish notice in the nearest village' calls 'notice.withdrawn', which is not a registered "
        "handler"]
