"""The project rules of the validation pipeline (repository.check, hence deploy and ``rule130 deploy``).

Each rule test starts from the bundled diagram, changes one thing, and asserts the exact problem
line (element id, line and message) and that a deploy is refused without storing a version.
The corpus test runs the pipeline over the 21 BPMN MIWG reference diagrams (tests/corpus/README.md).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from lxml import etree
from sqlalchemy import func, select

import handlers
from webapp.engine.diagrams.parser import USE_PERIOD_END, examine, verdict
from webapp.engine.diagrams.problems import Problem
from webapp.errors import InvalidDiagram
from webapp.services.diagrams import repository
from webapp.store.models import ProcessVersion

BPMN = "http://www.omg.org/spec/BPMN/20100524/MODEL"
NS = {"bpmn": BPMN}
CORPUS = Path(__file__).parent / "corpus" / "miwg-reference"
RELEASE_TIMER = "period_end(impounded_at, 3, timezone)"
OBJECTION_TIMER = 'period_end(notice["published_at"], notice["objection_period_days"], timezone)'
# How the messages name the elements these tests change (kind and name; the id is the problem's own)
RELEASE_EVENT = "boundary event 'Release window ends (3 days)'"
OBJECTION_EVENT = "intermediate catch event 'Objection period ends'"
AUCTION_EVENT = "boundary event 'Third auction day ends'"


@pytest.fixture(scope="module")
def bundled():
    bpmn, forms = repository.read_bundled()
    return bpmn.decode("utf-8"), forms


def _line(text: str, element_id: str, child: str | None = None) -> int:
    """The line of an element (or of its first descendant ``child``, e.g. ``timeDate``)."""
    element = etree.fromstring(text.encode()).xpath("//*[@id=$id]", id=element_id)[0]
    if child:
        element = element.find(f".//bpmn:{child}", NS)
    return element.sourceline


def _versions(sessions) -> int:
    with sessions() as session:
        return session.scalar(select(func.count()).select_from(ProcessVersion))


def _refused(sessions, text: str, forms: dict, expected: str) -> None:
    """The check names ``expected`` as one of its problem lines, and deploy stores nothing."""
    with pytest.raises(InvalidDiagram) as info:
        repository.check(text.encode("utf-8"), forms)
    assert expected in info.value.problems, info.value.problems
    before = _versions(sessions)
    with sessions() as session:
        with pytest.raises(InvalidDiagram):
            repository.deploy(session, text.encode("utf-8"), forms, "tests")
        session.rollback()
    assert _versions(sessions) == before


def test_the_bundled_diagram_passes_with_no_warnings(bundled):
    text, forms = bundled
    assert repository.check(text.encode("utf-8"), forms).warnings == []
    assert verdict(text.encode("utf-8"), forms, handlers.names()) == (True, [])


# -- 1. timers: period_end(event, days, timezone), Rule 130(a) at least 30 days ----------------------

@pytest.mark.parametrize("expression", ['"P30D"', '"P29D"', "P3D", '"2026-01-08T18:30:00+00:00"',
                                        "impounded_at", "period_end(impounded_at, 3)",
                                        "legal_day_end(impounded_at, 3, timezone)"])
def test_a_timer_that_is_not_period_end_is_refused(sessions, bundled, expression):
    text, forms = bundled
    bad = text.replace(RELEASE_TIMER, expression.replace('"', "&quot;"))
    expected = Problem(f"{RELEASE_EVENT}: timer expression {expression!r} is not a legal period; {USE_PERIOD_END}",
                       "bt_release_window", _line(bad, "bt_release_window", "timeDate"))
    _refused(sessions, bad, forms, str(expected))


def test_a_timer_duration_instead_of_a_date_is_refused(sessions, bundled):
    text, forms = bundled
    bad = text.replace(f'<bpmn:timeDate xsi:type="bpmn:tFormalExpression">{RELEASE_TIMER}</bpmn:timeDate>',
                       '<bpmn:timeDuration xsi:type="bpmn:tFormalExpression">"P3D"</bpmn:timeDuration>')
    expected = Problem(f"{RELEASE_EVENT}: timer uses timeDuration '\"P3D\"'; {USE_PERIOD_END} in a timeDate",
                       "bt_release_window", _line(bad, "bt_release_window", "timeDuration"))
    _refused(sessions, bad, forms, str(expected))


def test_a_timer_must_use_the_panchayat_time_zone(sessions, bundled):
    text, forms = bundled
    expression = "period_end(impounded_at, 3, &quot;Asia/Kolkata&quot;)"
    bad = text.replace(RELEASE_TIMER, expression)
    expected = Problem(f"{RELEASE_EVENT}: timer expression 'period_end(impounded_at, 3, \"Asia/Kolkata\")' must pass "
                       "timezone "
                       f"(the Panchayat's time zone) as the third argument; {USE_PERIOD_END}",
                       "bt_release_window", _line(bad, "bt_release_window", "timeDate"))
    _refused(sessions, bad, forms, str(expected))


def test_an_objection_period_below_30_days_is_refused(sessions, bundled):
    text, forms = bundled
    assert OBJECTION_TIMER in text
    bad = text.replace(OBJECTION_TIMER, 'period_end(notice["published_at"], 29, timezone)')
    expected = Problem(f"{OBJECTION_EVENT}: timer expression 'period_end(notice[\"published_at\"], 29, timezone)': "
                       "the objection "
                       "period can never be below 30 days (Rule 130(a))",
                       "n_ice_period_ends", _line(bad, "n_ice_period_ends", "timeDate"))
    _refused(sessions, bad, forms, str(expected))


@pytest.mark.parametrize("element, good, bad, fixed", [
    ("bt_release_window", "period_end(impounded_at, 3, timezone)", "period_end(impounded_at, 2, timezone)",
     "period_end(impounded_at, 3, timezone) (Rule 130 (heading): the 3 days after impoundment)"),
    ("bt_auction_closes", 'period_end(notice["auction_opened_at"], 2, timezone)',
     'period_end(notice["auction_opened_at"], 0, timezone)',
     'period_end(notice["auction_opened_at"], 2, timezone) (Rule 130(b): the conditional auction lasts 3 days'),
    ("bt_release_window", "period_end(impounded_at, 3, timezone)", "period_end(notice_due, 3, timezone)",
     "period_end(impounded_at, 3, timezone)"),
])
def test_the_periods_the_rule_fixes_cannot_be_changed_by_a_diagram(sessions, bundled, element, good, bad, fixed):
    text, forms = bundled
    assert text.count(good) == 1
    changed = text.replace(good, bad)
    with pytest.raises(InvalidDiagram) as info:
        repository.check(changed.encode("utf-8"), forms)
    [problem] = [p for p in info.value.problems if f"timer expression {bad!r}" in p]
    assert f"timer expression {bad!r}: this period is fixed by the rule; write {fixed}" in problem
    assert element in problem
    _refused(sessions, changed, forms, problem)  # and deploy stores nothing


def test_the_objection_period_takes_its_days_from_the_notice_never_a_constant(sessions, bundled):
    text, forms = bundled
    bad = text.replace(OBJECTION_TIMER, 'period_end(notice["published_at"], 30, timezone)')
    expected = Problem(f"{OBJECTION_EVENT}: timer expression 'period_end(notice[\"published_at\"], 30, timezone)': "
                       "the objection "
                       'period must take its days from the notice (notice["objection_period_days"]), never a '
                       "constant", "n_ice_period_ends", _line(bad, "n_ice_period_ends", "timeDate"))
    _refused(sessions, bad, forms, str(expected))


def test_any_timer_documented_as_rule_130a_keeps_the_30_day_minimum(sessions, bundled):
    text, forms = bundled
    root = etree.fromstring(text.encode())
    event = root.xpath("//*[@id='bt_auction_closes']")[0]
    doc = event.find("bpmn:documentation", NS)
    doc.text = "Rule 130(a) with Rule 2 (day): " + doc.text
    bad = etree.tostring(root, encoding="unicode")
    expected = Problem(f"{AUCTION_EVENT}: timer expression 'period_end(notice[\"auction_opened_at\"], 2, timezone)': "
                       "the objection "
                       "period can never be below 30 days (Rule 130(a))",
                       "bt_auction_closes", _line(bad, "bt_auction_closes", "timeDate"))
    _refused(sessions, bad, forms, str(expected))


@pytest.mark.parametrize("minimum", [29, 0, None])
def test_the_notice_form_keeps_a_30_day_minimum(sessions, bundled, minimum):
    text, forms = bundled
    forms = copy.deepcopy(forms)
    field = forms["publish_notice.schema.json"]["properties"]["objection_period_days"]
    assert field["minimum"] == 30
    if minimum is None:
        del field["minimum"]
    else:
        field["minimum"] = minimum
    expected = Problem(f'form publish_notice.schema.json must keep "minimum": 30 or more on objection_period_days '
                       f"(found {minimum!r}): the objection period can never be below 30 days (Rule 130(a))")
    _refused(sessions, text, forms, str(expected))


# -- 2. exclusive gateways --------------------------------------------------------------------------

def test_an_exclusive_gateway_with_a_flow_neither_conditioned_nor_default_is_refused(sessions, bundled):
    text, forms = bundled
    original = '<bpmn:exclusiveGateway id="gw_objections" name="Objections filed?" default="f_no_objection">'
    assert original in text
    bad = text.replace(original, '<bpmn:exclusiveGateway id="gw_objections" name="Objections filed?">')
    expected = Problem("exclusive gateway 'Objections filed?' has outgoing flow(s) f_no_objection ('no') with no "
                       "condition; give each a "
                       "condition or make one the gateway's default flow", "gw_objections",
                       _line(bad, "gw_objections"))
    _refused(sessions, bad, forms, str(expected))


# -- 3. event-based gateways ------------------------------------------------------------------------

def test_an_event_based_gateway_with_two_timers_is_refused(sessions, bundled):
    text, forms = bundled
    original = '<bpmn:messageEventDefinition id="md_appeal_filed" messageRef="msg_appeal_filed"/>'
    assert original in text
    bad = text.replace(original, '<bpmn:timerEventDefinition id="td_second"><bpmn:timeDate '
                                 'xsi:type="bpmn:tFormalExpression">period_end(impounded_at, 3, timezone)'
                                 "</bpmn:timeDate></bpmn:timerEventDefinition>")
    expected = Problem("event-based gateway 'Appeal or period ends' waits on 2 timers (ice_appeal_window_ends "
                       "('Appeal period ends'), ice_appeal_filed ('Appeal filed')); "
                       "SpiffWorkflow 3.2.0 would fire them all at the first timer's instant: keep one timer "
                       "behind the gateway and model the others apart", "egw_appeal", _line(bad, "egw_appeal"))
    _refused(sessions, bad, forms, str(expected))


# -- 4. user tasks without a lane -------------------------------------------------------------------

def test_a_user_task_with_no_lane_is_refused(sessions, bundled):
    text, forms = bundled
    original = "<bpmn:flowNodeRef>ut_order_stand</bpmn:flowNodeRef>"
    assert text.count(original) == 1
    bad = text.replace(original, "")
    expected = Problem("user task 'Order that the auction stand' has no lane; put it in the lane of the role that "
                       "does it (pound_keeper, "
                       "secretary, sarpanch, appellate_authority, receiving_officer)", "ut_order_stand",
                       _line(bad, "ut_order_stand"))
    _refused(sessions, bad, forms, str(expected))


# -- 5. documentation names its clause (warnings) ---------------------------------------------------

@pytest.mark.parametrize("documentation, message", [
    (None, "event-based gateway 'Appeal or period ends' has no documentation; begin it with its clause "
           "('Rule 130(a)', 'Rule 2 (day)', or 'reading: ...')"),
    ("Wait for an appeal.", "the documentation of event-based gateway 'Appeal or period ends' does not begin with "
                            "its clause; start it with 'Rule 130', 'Rule 2' or 'reading:'"),
])
def test_documentation_that_does_not_name_its_clause_is_a_warning(bundled, documentation, message):
    text, forms = bundled
    root = etree.fromstring(text.encode())
    doc = root.xpath("//*[@id='egw_appeal']/bpmn:documentation", namespaces=NS)[0]
    if documentation is None:
        doc.getparent().remove(doc)
    else:
        doc.text = documentation
    changed = etree.tostring(root, encoding="unicode")
    parsed = repository.check(changed.encode(), forms)
    assert [str(w) for w in parsed.warnings] == [
        str(Problem(message, "egw_appeal", _line(changed, "egw_appeal"), "warning"))]


# -- 6. the corpus of other tools' diagrams ---------------------------------------------------------

def test_the_corpus_is_complete_with_its_attribution():
    assert len(list(CORPUS.glob("*.bpmn"))) == 21
    assert "Creative Commons Attribution 3.0" in (CORPUS.parent / "README.md").read_text()


def names_its_element(problem: Problem, ids: dict) -> bool:
    """A problem about an element names it in its message: by its name when it has one, else its id."""
    element = ids[problem.element_id]
    name = " ".join((element.get("name") or "").split())
    return f"'{name[:60]}" in problem.message if name else problem.element_id in problem.message


def test_every_corpus_diagram_gets_a_true_verdict_naming_its_elements():
    verdicts = {}
    for path in sorted(CORPUS.glob("*.bpmn")):
        data = path.read_bytes()
        found = examine(data, {}, handler_names=handlers.names())  # no exception may escape
        assert not found.deployable and found.problems, path.name
        ids = {e.get("id"): e for e in etree.fromstring(data).iter() if isinstance(e.tag, str) and e.get("id")}
        for problem in found.problems:
            assert problem.severity in ("error", "warning"), problem
            assert problem.message and not problem.message.endswith("?."), problem
            assert problem.element_id is None or names_its_element(problem, ids), f"{path.name}: {problem}"
        verdicts[path.name] = found
    # the reference diagrams are valid BPMN 2.0, and none holds the process this installation runs
    assert {(v.xsd_valid, v.kind) for v in verdicts.values()} == {(True, "process_missing")}
    assert verdicts["A.1.0.bpmn"].problems[0].message == (
        "this installation runs the process rule130_case; the file holds process WFP-6- (not executable), none with "
        'the id rule130_case and none marked executable: give the process to run the id rule130_case and '
        'isExecutable="true"')
    # C.5.0's data store 'Bank System' is in pools not marked executable: nothing would run, nothing of theirs
    # is checked (it was once refused as "data store 'Bank System' has no implementation")
    assert [p.element_id for p in verdicts["C.5.0.bpmn"].problems] == [None]
    # C.9.0 holds one executable process: what stops it from running here is said of it, element by element
    c90: dict = {}
    for problem in verdicts["C.9.0.bpmn"].errors:  # the first problem of each element (names without Hindi come last)
        c90.setdefault(problem.element_id, problem)
    assert c90["ServiceTask_GetCreditScore"] is not verdicts["C.9.0.bpmn"].errors[-1]
    assert verdicts["C.9.0.bpmn"].errors[-1].message.endswith("in its extension elements")
    assert c90["ServiceTask_GetCreditScore"].message == (
        "service task 'Get credit score' names no handler; give it a service operator "
        "(spiffworkflow:serviceTaskOperator) that names a registered handler")
    assert c90["SequenceFlow_Red"].message.startswith(
        "sequence flow 'Red (severe risk)': the conditionExpression '= some risk in riskLevels satisfies risk = "
        "\"red\"' is written in FEEL (Camunda 8's expression language); diagram expressions here are Python")
    assert any(p.element_id == "UserTask_CallCustomer" and "user task 'Call customer' has no lane" in p.message
               for p in verdicts["C.9.1.bpmn"].problems)


def test_a_file_with_no_process_gets_a_verdict():
    empty = (b'<?xml version="1.0"?><bpmn:definitions xmlns:bpmn="' + BPMN.encode() +
             b'" id="d" targetNamespace="t"/>')
    assert verdict(empty, {}, handlers.names()) == (False, [
        "error: the file holds no process (bpmn:process); this installation runs the process rule130_case: add it"])
    assert verdict(b"not xml", {}, handlers.names())[0] is False


def test_verdict_reports_forms_of_the_bundled_diagram_when_they_are_missing(bundled):
    text, _ = bundled
    deployable, problems = verdict(text.encode(), {}, handlers.names())
    assert not deployable
    assert any(p.startswith("error: ut_publish_notice, line ") and "publish_notice.schema.json" in p
               for p in problems), json.dumps(problems, indent=1)
