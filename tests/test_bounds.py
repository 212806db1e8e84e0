"""A diagram cannot make the server compute without end: every expression it carries is bounded in
time and memory (webapp.engine.scripts.bounds), refused at deploy where it can be seen and stopped at run
time where it cannot (the case held with an incident naming the element; a new case not recorded);
timer periods are bounded to what the rule and the calendar allow."""

from __future__ import annotations

import time
from datetime import datetime

import pytest
from lxml import etree
from sqlalchemy import func, select

from webapp.engine.diagrams.parser import parse_process
from webapp.engine.execution import runtime
from webapp.engine.scripts.sandbox import RestrictedEnvironment, ScriptRefused, compile_expression, compile_script
from webapp.errors import EngineFailure, InvalidDiagram, StartFailed
from webapp.services.cases import cases
from webapp.services.diagrams import repository
from webapp.services.jobs import timers
from webapp.services.running import uow
from webapp.store.models import Case, Incident
from webapp.values import legal_time

BPMN = "http://www.omg.org/spec/BPMN/20100524/MODEL"
SPIFF = "http://spiffworkflow.org/bpmn/schema/1.0/core"
NS = {"bpmn": BPMN, "spiffworkflow": SPIFF}
SANDBOX = "is refused by the sandbox: "
# How the messages name the elements these tests change
FULL_PRICE_FLOW = "sequence flow 'yes'"
RELEASE_TASK = "user task 'Release cattle to owner'"
REPORT_TASK = "service task 'Raise report and open file'"


@pytest.fixture(scope="module")
def bundled():
    bpmn, forms = repository.read_bundled()
    return bpmn.decode("utf-8"), forms


def _problems(text: str, forms: dict) -> list[str]:
    with pytest.raises(InvalidDiagram) as info:
        repository.check(text.encode("utf-8"), forms)
    return info.value.problems


def _line(text: str, element_id: str, child: str) -> int:
    element = etree.fromstring(text.encode()).xpath("//*[@id=$id]", id=element_id)[0]
    return element.find(f".//{child}", NS).sourceline


def _with_extension(text: str, element_id: str, tag: str, source: str) -> str:
    """The diagram with ``<spiffworkflow:{tag}>source</...>`` in the extension elements of ``element_id``."""
    root = etree.fromstring(text.encode())
    element = root.xpath("//*[@id=$id]", id=element_id)[0]
    extensions = element.find("bpmn:extensionElements", NS)
    etree.SubElement(extensions, f"{{{SPIFF}}}{tag}").text = source
    return etree.tostring(root, encoding="unicode")


# -- what the issue found, refused at deploy ------------------------------------------------------------

@pytest.mark.parametrize("condition, refusal", [
    ("sum(range(100000000000)) > 0", "range() of more than 10000 numbers is not allowed in diagram scripts"),
    ("len(str(1)*100000000000) > 0", "sequence repetition with * is not allowed in diagram scripts"),
    ('f"{1:>100000000000}" != ""', "the format spec '>100000000000' has a width or precision above 100"),
    ("(1 << 100000000000) > 0", "the shift operator << is not allowed in diagram scripts"),
    ("any(x for x in bid)", "generator expressions are not allowed in diagram scripts (line 1)"),
    ("[x for x in bid] != []", "comprehensions are not allowed in diagram scripts (line 1)"),
    ("'%100000000000d' % 1 != ''", "string formatting with % is not allowed in diagram scripts; use an f-string"),
    ('bid["bidder"].ljust(100000000000) != ""', "the attribute 'ljust' is not available in diagram scripts"),
])
def test_a_condition_that_could_compute_without_end_is_refused_at_deploy(bundled, condition, refusal):
    text, forms = bundled
    original = '<bpmn:conditionExpression xsi:type="bpmn:tFormalExpression">bid["full_price_reached"]'
    bad = text.replace(original, original.split(">")[0] + ">" + condition.replace("<", "&lt;").replace('"', "&quot;"))
    line = _line(bad, "bf_full", "bpmn:conditionExpression")
    [problem] = [p for p in _problems(bad, forms) if "bf_full" in p]
    assert problem.startswith(f"error: bf_full, line {line}: {FULL_PRICE_FLOW}: the conditionExpression "
                              f"{SANDBOX}{refusal}"), problem


@pytest.mark.parametrize("tag, source, refusal", [
    ("preScript", "while True: pass", "'while' loops are not allowed in diagram scripts (line 1)"),
    ("postScript", "for i in range(10):\n    total = i", "'for' loops are not allowed in diagram scripts (line 1)"),
    ("preScript", "total = sum(range(200000000))", "range() of more than 10000 numbers"),
])
def test_pre_and_post_scripts_are_checked_at_deploy(bundled, tag, source, refusal):
    text, forms = bundled
    bad = _with_extension(text, "ut_release", tag, source)
    line = _line(bad, "ut_release", f"spiffworkflow:{tag}")
    [problem] = [p for p in _problems(bad, forms) if "ut_release" in p]
    assert problem.startswith(f"error: ut_release, line {line}: {RELEASE_TASK}: the {tag} {SANDBOX}{refusal}"), \
        problem


def _multi_instance(text: str, cardinality: str) -> str:
    root = etree.fromstring(text.encode())
    task = root.xpath("//*[@id='svc_raise_report']")[0]
    loop = etree.SubElement(task, f"{{{BPMN}}}multiInstanceLoopCharacteristics")
    etree.SubElement(loop, f"{{{BPMN}}}loopCardinality").text = cardinality
    return etree.tostring(root, encoding="unicode")


@pytest.mark.parametrize("cardinality, refusal", [
    ("sum(range(100000000000))", f"the loopCardinality {SANDBOX}range() of more than 10000 numbers"),
    ("1000000", "loopCardinality 1000000: a multi-instance task runs at most 100 instances"),
])
def test_a_loop_cardinality_is_checked_at_deploy(bundled, cardinality, refusal):
    text, forms = bundled
    bad = _multi_instance(text, cardinality)
    line = _line(bad, "svc_raise_report", "bpmn:loopCardinality")
    assert any(p.startswith(f"error: svc_raise_report, line {line}: {REPORT_TASK}: {refusal}")
               for p in _problems(bad, forms)), \
        _problems(bad, forms)


def test_a_multi_instance_task_with_a_bounded_cardinality_passes(bundled):
    text, forms = bundled
    repository.check(_multi_instance(text, "2").encode(), forms)


# -- what cannot be seen at deploy, stopped while it runs -----------------------------------------------

@pytest.mark.parametrize("expression, data, refusal", [
    ("sum(range(n))", {"n": 200_000_000}, "range() of 200000000 numbers; at most 10000"),
    ("len(s * n)", {"s": "1", "n": 100_000_000_000}, "would make a value of weight 100000000000; the limit is 100000"),
    ("x * x", {"x": 10 ** 1300}, "the product would have more than 4096 bits"),
])
def test_an_expression_that_would_grow_without_end_is_stopped_at_once(expression, data, refusal):
    compile_expression(expression)  # nothing to see in the source
    started = time.monotonic()
    with pytest.raises(ScriptRefused, match=refusal.replace("(", r"\(").replace(")", r"\)")):
        RestrictedEnvironment().evaluate(expression, data)
    assert time.monotonic() - started < 0.5


def test_a_script_cannot_build_a_value_too_large_to_store_or_print():
    # each line doubles what printing or storing ``d`` would write: refused once it passes the limit
    source = "a = [n, n]\n" + "".join(f"{b} = [{a}, {a}]\n" for a, b in zip("abcdefghijklmnopqr", "bcdefghijklmnopqrs", strict=False))
    compile_script(source)
    data = {"n": 1}
    with pytest.raises(ScriptRefused, match="would make a value weighing more than 100000; the limit is 100000"):
        RestrictedEnvironment().execute(source, data)
    assert data == {"n": 1}  # nothing written back


def test_ordinary_expressions_and_scripts_still_run():
    env = RestrictedEnvironment()
    data = {"s": "ab", "n": 3, "items": [1, 2, 3], "d": {"k": "v"}}
    assert env.evaluate('s * n + "!"', data) == "abababab!"[2:]
    assert env.evaluate("sum(range(n)) + len(items)", data) == 6
    assert env.evaluate('f"{n:>4}|{d.get(\'k\')}"', data) == "   3|v"
    assert env.execute("t = [s, n]\nt[0] = 'x'\nu = {'a': t}\nw = s\nw += 'c'", data)
    assert (data["t"], data["u"], data["w"]) == (["x", 3], {"a": ["x", 3]}, "abc")


def _spinning_process() -> bytes:
    """start -> script task -> exclusive gateway whose default flow leads back to the script task."""
    return f'''<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="{BPMN}" xmlns:rule130="urn:rule130:bpmn:names" id="d" targetNamespace="t">
  <bpmn:process id="spin" isExecutable="true">
    <bpmn:startEvent id="s"><bpmn:outgoing>f1</bpmn:outgoing></bpmn:startEvent>
    <bpmn:scriptTask id="st_count" name="Count"><bpmn:extensionElements>
      <rule130:name lang="hi" of="Count">गिनती</rule130:name></bpmn:extensionElements><bpmn:incoming>f1</bpmn:incoming><bpmn:incoming>f_back</bpmn:incoming>
      <bpmn:outgoing>f2</bpmn:outgoing><bpmn:script>n = 1</bpmn:script></bpmn:scriptTask>
    <bpmn:exclusiveGateway id="gw" default="f_back"><bpmn:incoming>f2</bpmn:incoming>
      <bpmn:outgoing>f_back</bpmn:outgoing><bpmn:outgoing>f_end</bpmn:outgoing></bpmn:exclusiveGateway>
    <bpmn:endEvent id="e"><bpmn:incoming>f_end</bpmn:incoming></bpmn:endEvent>
    <bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="st_count"/>
    <bpmn:sequenceFlow id="f2" sourceRef="st_count" targetRef="gw"/>
    <bpmn:sequenceFlow id="f_back" sourceRef="gw" targetRef="st_count"/>
    <bpmn:sequenceFlow id="f_end" sourceRef="gw" targetRef="e">
      <bpmn:conditionExpression>n == 2</bpmn:conditionExpression></bpmn:sequenceFlow>
  </bpmn:process>
</bpmn:definitions>'''.encode()


@pytest.mark.timeout(60)
def test_a_cycle_of_automatic_steps_is_stopped_naming_the_step():
    parsed = parse_process(_spinning_process(), {}, "spin")
    workflow = runtime.new_instance(parsed, {}, lambda *_: {})
    started = time.monotonic()
    with pytest.raises(EngineFailure, match=f"completed {runtime.MAX_STEPS} steps without waiting") as info:
        runtime.run(workflow)
    assert info.value.element_id in ("st_count", "gw")
    assert time.monotonic() - started < 20


def _deploy(sessions, text: str, forms: dict) -> None:
    with sessions() as session:
        repository.deploy(session, text.encode("utf-8"), forms, "tests", note="bounded on purpose")
        session.commit()


def _impound(sessions, officer):
    return uow.perform(sessions, "start_case", cases.start_case, officer,
                       impounded_at=datetime.fromisoformat("2026-01-05T10:00:00+05:30"), place_seized="Bhimpura",
                       place_impounded="Kanji House", nearest_village="Bhimpura",
                       animals=[{"species": "cow", "description": "brown cow"}])


# the Panchayat's appeal period (30 days) times ten million: deployable (no constant to see), and
# sum(range(300000000)) would hold the process for seconds
SLOW = "total = sum(range(appeal_period_days * 10000000))"


def test_a_new_case_whose_first_step_is_stopped_is_not_recorded(sessions, officers, virtual_clock, bundled):
    text, forms = bundled
    _deploy(sessions, _with_extension(text, "ut_release", "preScript", SLOW), forms)
    with pytest.raises(StartFailed) as info:  # before the bounds: the sum ran for seconds, then the case started
        _impound(sessions, officers["pound_keeper"])
    assert info.value.status == 422 and info.value.code == "start_failed"
    assert info.value.message.startswith("the case was not recorded: the process step “Release cattle to owner” "
                                         "failed (")
    assert "range() of 300000000 numbers; at most 10000" in info.value.message
    with sessions() as session:  # nothing half-made
        assert session.scalar(select(func.count()).select_from(Case)) == 0
        assert session.scalar(select(func.count()).select_from(Incident)) == 0


def test_a_step_of_a_running_case_that_is_stopped_holds_the_case_naming_it(sessions, officers, virtual_clock,
                                                                           bundled):
    text, forms = bundled
    _deploy(sessions, _with_extension(text, "svc_raise_report", "preScript", SLOW), forms)
    case = _impound(sessions, officers["pound_keeper"])
    virtual_clock.set(datetime.fromisoformat("2026-01-09T00:00:01+05:30"))  # the release window ends
    assert timers.fire_due(sessions) == 0
    with sessions() as session:
        incident = session.scalars(select(Incident)).one()
        assert (incident.element_id, incident.kind) == ("svc_raise_report", "script_refused")
        assert "range() of 300000000 numbers; at most 10000" in incident.message
        assert session.get(Case, case.id).held_incident_id == incident.id


# -- timer periods ------------------------------------------------------------------------------------

APPEAL_TIMER = 'period_end(appeal_window["decided_at"], appeal_period_days, timezone)'
OBJECTION_TIMER = 'period_end(notice["published_at"], notice["objection_period_days"], timezone)'


@pytest.mark.parametrize("original, element, bad, refusal", [
    (APPEAL_TIMER, "ice_appeal_window_ends", 'period_end(appeal_window["decided_at"], 3650000000000, timezone)',
     "a period of more than 3650 days (ten years) is no period of this rule"),
    (OBJECTION_TIMER, "n_ice_period_ends",
     'period_end(notice["published_at"], notice["objection_period_days"] + 2900000, timezone)',
     'the days must be a whole number from 0 to 3650 or a value of the case (e.g. notice["objection_period_days"]), '
     "not a computation"),
    (APPEAL_TIMER, "ice_appeal_window_ends", 'period_end(appeal_window["decided_at"], 0, timezone)',
     "the appeal window must take its days from the Panchayat's setting (at least 1 day) (appeal_period_days), "
     "never a constant"),
    (APPEAL_TIMER, "ice_appeal_window_ends", 'period_end(appeal_window["decided_at"], sum(range(10)), timezone)',
     'the days must be a whole number from 0 to 3650 or a value of the case (e.g. notice["objection_period_days"]), '
     "not a computation"),
])
def test_timer_periods_are_bounded_at_deploy(bundled, original, element, bad, refusal):
    text, forms = bundled
    assert text.count(original) == 1
    changed = text.replace(original, bad.replace('"', "&quot;"))
    line = _line(changed, element, "bpmn:timeDate")
    event = {"ice_appeal_window_ends": "intermediate catch event 'Appeal period ends'",
             "n_ice_period_ends": "intermediate catch event 'Objection period ends'"}[element]
    expected = f"error: {element}, line {line}: {event}: timer expression {bad!r}: {refusal}"
    assert expected in _problems(changed, forms)


@pytest.mark.parametrize("days, event", [(3_650_000_000_000, "2026-01-05T10:00:00+05:30"),
                                         (2_900_000, "2026-01-05T10:00:00+05:30"),
                                         (3650, "8999-12-30T10:00:00+05:30"), (-1, "2026-01-05T10:00:00+05:30")])
def test_a_period_out_of_bounds_is_a_clear_error_not_a_date_nobody_can_read(days, event):
    with pytest.raises(ValueError, match=r"from 0 to 3650|out of range"):
        legal_time.period_end(event, days, "Asia/Kolkata")
    assert legal_time.period_end("2026-01-05T10:00:00+05:30", 3650, "Asia/Kolkata") == "2036-01-03T18:30:00+00:00"
