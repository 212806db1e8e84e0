"""The engine layer: the script sandbox, the diagram parser and checker, stored state, legal time."""

from __future__ import annotations

import json
import time
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path

import pytest
from lxml import etree
from SpiffWorkflow.util.task import TaskState
from sqlalchemy import select

from webapp.engine.diagrams.names import NAME_TAG
from webapp.engine.diagrams.parser import parse_process
from webapp.engine.diagrams.safe_xml import read_xml, safe_xml_parser
from webapp.engine.execution import runtime, state
from webapp.engine.scripts.sandbox import (
    RestrictedEnvironment,
    Rule130ScriptEngine,
    ScriptRefused,
    check_unbounded,
    compile_expression,
    compile_script,
)
from webapp.errors import InvalidDiagram
from webapp.services.diagrams import repository
from webapp.values import clock, legal_time

# -- the sandbox --------------------------------------------------------------------------------------

ESCAPES = [
    "__import__('os')",
    "__import__('os').system('id')",
    "open('/etc/passwd')",
    "open('/etc/passwd').read()",
    "().__class__.__base__.__subclasses__()",
    "x.__class__",
    "getattr(x, '__class__')",
    "type(x)",
    "eval('1')",
    "exec('import os')",
    "globals()",
    "vars(x)",
    "compile('1', 'f', 'eval')",
]
UNBOUNDED = [
    "10**10**10",
    "x ** 2",
    "pow(10, 10000000000)",
    "'a'*10**9",
    "'a' * n",
    "n * [0]",
    "(1,) * n",
    "f'{x}' * n",
]


@pytest.mark.parametrize("source", ESCAPES + UNBOUNDED)
def test_sandbox_refuses_escapes_and_unbounded_expressions(source):
    with pytest.raises(ScriptRefused):
        compile_expression(source)


@pytest.mark.parametrize("source", ["while True: pass", "x = 1\nwhile x: x = x", "y = 10**10**10",
                                    "y = x\ny **= 2"])
def test_sandbox_refuses_unbounded_scripts(source):
    with pytest.raises(ScriptRefused):
        check_unbounded(source)
    with pytest.raises(ScriptRefused):
        compile_script(source)


def test_sandbox_refuses_imports_and_open_in_scripts():
    for source in ("import os", "from os import system", "f = open('/etc/passwd')",
                   "y = getattr(x, '__class__')"):
        with pytest.raises(ScriptRefused):
            compile_script(source)


def test_sandbox_runs_the_expressions_the_diagram_needs():
    env = RestrictedEnvironment()
    data = {"bid": {"full_price_reached": True}, "decide_unsold": {"choice": "accept_highest_bid"},
            "impounded_at": "2026-01-05T10:00:00+05:30", "timezone": "Asia/Kolkata", "n": 3}
    assert env.evaluate('bid["full_price_reached"]', data) is True
    assert env.evaluate('decide_unsold["choice"] == "accept_highest_bid"', data) is True
    assert env.evaluate("period_end(impounded_at, 3, timezone)", data) == "2026-01-08T18:30:00+00:00"
    assert env.evaluate("max([1, n]) + len('ab') * 2", data) == 7
    assert env.execute("y = n + 1\ny += 1", data) and data["y"] == 5


def test_sandbox_failures_at_run_time_do_not_leak_the_builtins():
    env = RestrictedEnvironment()
    with pytest.raises(NameError):
        env.evaluate("undefined_name + 1", {})
    with pytest.raises(ScriptRefused):
        env.evaluate("'{}'.format(1)", {})  # str.format is refused by RestrictedPython at run time


# -- the parser and the checker ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def bundled():
    bpmn, forms = repository.read_bundled()
    return bpmn.decode("utf-8"), forms


def _check(text: str, forms: dict) -> InvalidDiagram:
    with pytest.raises(InvalidDiagram) as info:
        repository.check(text.encode("utf-8"), forms)
    return info.value


def test_bundled_diagram_passes_the_checker(bundled):
    text, forms = bundled
    parsed = repository.check(text.encode("utf-8"), forms)
    assert parsed.process_id == "rule130_case"
    assert not [w for w in parsed.warnings if "documentation" in w.message]


@pytest.mark.parametrize("condition", ["open('/etc/passwd')", "__import__('os').system('id')",
                                       "().__class__.__base__.__subclasses__()", "getattr(bid, '__class__')",
                                       "10**10**10", "'a'*10**9"])
def test_a_condition_the_sandbox_refuses_stops_the_diagram_naming_the_flow(bundled, condition):
    text, forms = bundled
    original = '<bpmn:conditionExpression xsi:type="bpmn:tFormalExpression">bid["full_price_reached"]'
    assert original in text
    bad = text.replace(original, f'<bpmn:conditionExpression xsi:type="bpmn:tFormalExpression">{condition}')
    error = _check(bad, forms)
    assert any("bf_full" in p and "sandbox" in p for p in error.problems), error.problems


def test_a_timer_expression_the_sandbox_refuses_stops_the_diagram(bundled):
    text, forms = bundled
    original = "period_end(impounded_at, 3, timezone)"
    error = _check(text.replace(original, "open('/etc/passwd')"), forms)
    assert any("_release_window" in p and "'open'" in p for p in error.problems), error.problems


def test_a_script_task_with_an_unbounded_script_is_refused_at_check(bundled):
    text, forms = bundled
    bpmn = "http://www.omg.org/spec/BPMN/20100524/MODEL"
    ns = {"bpmn": bpmn}
    root = etree.fromstring(text.encode())
    process = root.find("bpmn:process[@id='rule130_case']", ns)
    process.find("bpmn:sequenceFlow[@id='f_gone_close']", ns).set("targetRef", "st_spin")
    process.find("bpmn:serviceTask[@id='svc_close_no_animals']/bpmn:incoming", ns).text = "f_spin_close"
    lane = process.find("bpmn:laneSet/bpmn:lane[@name='pound_keeper']", ns)
    etree.SubElement(lane, f"{{{bpmn}}}flowNodeRef").text = "st_spin"
    task = etree.SubElement(process, f"{{{bpmn}}}scriptTask", id="st_spin", name="Spin")
    etree.SubElement(task, f"{{{bpmn}}}documentation").text = "reading: a test of the checker"
    hindi = etree.SubElement(etree.SubElement(task, f"{{{bpmn}}}extensionElements"), NAME_TAG, lang="hi", of="Spin")
    hindi.text = "घुमाएँ"  # its name's Hindi (webapp/engine/diagrams/names.py)
    etree.SubElement(task, f"{{{bpmn}}}incoming").text = "f_gone_close"
    etree.SubElement(task, f"{{{bpmn}}}outgoing").text = "f_spin_close"
    etree.SubElement(task, f"{{{bpmn}}}script").text = "while True: pass"
    etree.SubElement(process, f"{{{bpmn}}}sequenceFlow", id="f_spin_close", sourceRef="st_spin",
                     targetRef="svc_close_no_animals")
    changed = etree.tostring(root, encoding="unicode")
    error = _check(changed, forms)
    assert any("st_spin" in p and "while" in p for p in error.problems), error.problems
    # the same diagram with a harmless script passes
    task.find("bpmn:script", ns).text = "spun = 1"
    repository.check(etree.tostring(root), forms)


def test_user_task_naming_a_missing_form_is_refused(bundled):
    text, forms = bundled
    error = _check(text.replace('value="publish_notice.schema.json"', 'value="missing.schema.json"'), forms)
    assert any("ut_publish_notice" in p and "missing.schema.json" in p for p in error.problems)
    forms_without = {k: v for k, v in forms.items() if k != "record_bid.schema.json"}
    error = _check(text, forms_without)
    assert any("ut_record_bid" in p and "record_bid.schema.json" in p for p in error.problems)


def test_service_task_naming_an_unregistered_handler_is_refused(bundled):
    text, forms = bundled
    error = _check(text.replace('id="notice.publish"', 'id="notice.steal_the_cattle"'), forms)
    assert any("svc_publish_notice" in p and "notice.steal_the_cattle" in p for p in error.problems)


def test_malformed_xml_is_refused(bundled):
    text, forms = bundled
    for bad in (text[: len(text) // 2], "<bpmn:definitions", "", "not xml at all"):
        _check(bad, forms)


def test_a_file_that_is_not_bpmn_is_refused():
    for other in ('<?xml version="1.0"?><html><body>hello</body></html>',
                  '<definitions xmlns="http://www.omg.org/spec/DMN/20151101/dmn.xsd" id="d" name="d"/>'):
        with pytest.raises(InvalidDiagram, match="not BPMN"):
            repository.check(other.encode(), {})


XXE = ('<?xml version="1.0"?>\n<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>\n'
       '<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d" '
       'targetNamespace="t"><bpmn:process id="rule130_case" isExecutable="true">'
       '<bpmn:documentation>&e;</bpmn:documentation></bpmn:process></bpmn:definitions>')


def _laughs(levels: int) -> str:
    return ('<?xml version="1.0"?>\n<!DOCTYPE lolz [\n<!ENTITY lol0 "lol">\n'
            + "".join(f'<!ENTITY lol{i} "{("&lol" + str(i - 1) + ";") * 10}">\n' for i in range(1, levels + 1))
            + ']>\n<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d" '
            f'targetNamespace="t"><bpmn:process id="rule130_case" isExecutable="true">'
            f'<bpmn:documentation>&lol{levels};</bpmn:documentation></bpmn:process></bpmn:definitions>')


@pytest.mark.parametrize("payload", [XXE, _laughs(9), _laughs(2)], ids=["xxe", "billion-laughs", "few-laughs"])
def test_entity_payloads_are_refused_without_expansion(payload):
    started = time.perf_counter()
    with pytest.raises(InvalidDiagram) as info:
        repository.check(payload.encode(), {})
    assert time.perf_counter() - started < 2
    text = info.value.message + " ".join(info.value.problems)
    assert "dtd" in text.lower() or "entit" in text.lower()
    assert "root:" not in text and "lollol" not in text
    with pytest.raises(InvalidDiagram):
        read_xml(payload.encode())
    with pytest.raises(InvalidDiagram):
        parse_process(payload.encode(), {})


def test_the_safe_parser_never_expands_entities():
    root = etree.fromstring(XXE.encode(), safe_xml_parser())
    assert "root:" not in etree.tostring(root, encoding="unicode")
    [doc] = root.iter("{http://www.omg.org/spec/BPMN/20100524/MODEL}documentation")
    assert (doc.text or "") == "" and not any("root:" in (c.text or "") for c in doc)


def test_a_too_large_file_is_refused():
    with pytest.raises(InvalidDiagram, match="limit"):
        read_xml(b"<a>" + b" " * (3 * 1024 * 1024) + b"</a>")


# -- stored state ------------------------------------------------------------------------------------

def _no_handlers(task, name, params):  # pragma: no cover - not reached before the first service task
    raise AssertionError(f"unexpected handler {name}")


def test_state_round_trips_with_decimal_and_date_and_without_the_spec(bundled):
    text, forms = bundled
    parsed = repository.check(text.encode(), forms)
    spec = runtime.spec_json(parsed)
    vc = clock.VirtualClock(datetime.fromisoformat("2026-01-05T10:00:00+05:30"))
    with clock.installed(vc):
        wf = runtime.new_instance(parsed, {"impounded_at": "2026-01-05T10:00:00+05:30", "timezone": "Asia/Kolkata",
                                           "appeal_period_days": 30, "return_period_days": 7,
                                           "money": Decimal("12000.50"), "day": date(2026, 1, 8),
                                           "instant": datetime(2026, 1, 5, 4, 30, tzinfo=UTC),
                                           "nested": {"amounts": [Decimal("0.01"), Decimal("99.99")]}},
                                  _no_handlers)
        runtime.run(wf)
        [task] = runtime.ready_user_tasks(wf)
        assert task.task_spec.bpmn_id == "ut_release"
        state = runtime.dump_state(wf)
        stored = json.loads(state)
        assert "spec" not in stored and "subprocess_specs" not in stored
        assert '"rule130_notice"' not in state and "period_end(" not in state  # no spec text in the state
        assert len(state) < len(spec)

        again = runtime.load_state(state, parsed, _no_handlers)
        assert isinstance(again.script_engine, Rule130ScriptEngine)
        [task] = runtime.ready_user_tasks(again)
        assert task.task_spec.bpmn_id == "ut_release"
        assert task.data["money"] == Decimal("12000.50") and isinstance(task.data["money"], Decimal)
        assert task.data["day"] == date(2026, 1, 8) and type(task.data["day"]) is date
        assert task.data["instant"] == datetime(2026, 1, 5, 4, 30, tzinfo=UTC)
        assert task.data["nested"] == {"amounts": [Decimal("0.01"), Decimal("99.99")]}
        timers = runtime.armed_timers(again)
        assert [(t.bpmn_id, t.due) for t in timers] == [
            ("bt_release_window", datetime(2026, 1, 8, 18, 30, tzinfo=UTC))]
        assert runtime.dump_state(again) == state
        assert task.state == TaskState.READY


@pytest.mark.parametrize("name", ["s2-objection-proved-after-sale", "p21-later-objection-rearms-appeal-window"])
def test_dump_state_reusing_task_heads_writes_the_whole_conversions_text(monkeypatch, name):
    # dump_state reuses each task's encoded identity and state between saves of a kept instance; at
    # every save of a whole case (call activities, loops, timers, messages) its text must be the
    # whole conversion's, character for character, and heads must have been reused.
    from webapp.simulation import simulate

    real, reused = runtime.dump_state, []

    def checking(workflow):
        kept = sum(1 for w in (workflow, *workflow.subprocesses.values()) for t in w.tasks.values()
                   if t in state._TASK_HEADS)
        fast = state._dump_state_fast(workflow)
        assert fast == state._dump_state_whole(workflow)
        reused.append(kept)
        return real(workflow)

    monkeypatch.delenv(runtime.CHECK_DUMP_ENV, raising=False)
    monkeypatch.setattr(runtime, "dump_state", checking)
    result = simulate.run_scenario(simulate.load_scenario(Path(__file__).parent / "scenarios" / f"{name}.yaml"))
    assert result.mismatches == []
    assert len(reused) >= 8 and max(reused) > 10  # every save checked; later saves found kept heads


def test_dump_state_writes_data_changed_in_place_after_a_save(bundled):
    # A task's data, its parent's data and its internal data can change in place (SpiffWorkflow
    # shares nested values between tasks); the next dump must write the change, not an earlier text.
    text, forms = bundled
    parsed = repository.check(text.encode(), forms)
    with clock.installed(clock.VirtualClock(datetime.fromisoformat("2026-01-05T10:00:00+05:30"))):
        wf = runtime.new_instance(parsed, {"impounded_at": "2026-01-05T10:00:00+05:30", "timezone": "Asia/Kolkata",
                                           "appeal_period_days": 30, "return_period_days": 7,
                                           "nested": {"amounts": [Decimal("0.01")]}}, _no_handlers)
        runtime.run(wf)
    first = runtime.dump_state(wf)
    done = [t for t in wf.tasks.values() if t.state == TaskState.COMPLETED and t.parent is not None]
    child = next(t for t in done if t.parent in done)
    assert child in state._TASK_HEADS  # its head is kept from the first dump
    assert runtime.dump_state(wf) == first  # nothing changed: the same text

    child.data["late"] = Decimal("7.50")
    child.parent.data["parents"] = "changed"
    child.internal_data["note"] = "changed"
    child.data["nested"]["amounts"].append(Decimal("99.99"))  # in place, in a value tasks share
    second = runtime.dump_state(wf)
    assert second == state._dump_state_whole(wf) != first
    entry = json.loads(second)["tasks"][str(child.id)]
    assert entry["delta"]["updates"]["late"] == {"value": "7.50", "typename": "Decimal"}
    assert "parents" in entry["delta"]["deletions"] and entry["internal_data"] == {"note": "changed"}
    assert '{"value":"99.99","typename":"Decimal"}' in second


def test_the_check_mode_of_dump_state_refuses_a_text_the_whole_conversion_differs_from(bundled, monkeypatch):
    text, forms = bundled
    parsed = repository.check(text.encode(), forms)
    with clock.installed(clock.VirtualClock(datetime.fromisoformat("2026-01-05T10:00:00+05:30"))):
        wf = runtime.new_instance(parsed, {"impounded_at": "2026-01-05T10:00:00+05:30", "timezone": "Asia/Kolkata",
                                           "appeal_period_days": 30, "return_period_days": 7}, _no_handlers)
    whole = state._dump_state_whole(wf)
    monkeypatch.setattr(state, "_dump_state_fast", lambda workflow: whole.replace('"state":', '"state" :', 1))
    monkeypatch.setenv(runtime.CHECK_DUMP_ENV, "1")
    with pytest.raises(AssertionError, match="differs from the whole conversion"):
        runtime.dump_state(wf)
    monkeypatch.delenv(runtime.CHECK_DUMP_ENV)
    assert runtime.dump_state(wf) != whole  # unchecked: the fast text as it is


# -- legal time -------------------------------------------------------------------------------------------

def test_period_end_in_asia_kolkata():
    # impounded 01-05 -> window 01-06..01-08 -> ends 00:00 IST of 01-09 = 18:30 UTC of 01-08
    assert legal_time.period_end("2026-01-05T10:00:00+05:30", 3, "Asia/Kolkata") == "2026-01-08T18:30:00+00:00"
    # 20:00 UTC of 01-05 is 01:30 IST of 01-06: the event day is 01-06
    assert legal_time.period_end("2026-01-05T20:00:00+00:00", 3, "Asia/Kolkata") == "2026-01-09T18:30:00+00:00"
    # a notice of 30 days published 01-09: last day 02-08, ends 00:00 IST of 02-09
    assert legal_time.period_end("2026-01-09T11:00:00+05:30", 30, "Asia/Kolkata") == "2026-02-08T18:30:00+00:00"
    assert legal_time.last_day("2026-01-09T11:00:00+05:30", 30, "Asia/Kolkata") == date(2026, 2, 8)
    end = datetime.fromisoformat("2026-02-08T18:30:00+00:00")
    assert legal_time.day_before_instant(end, "Asia/Kolkata") == date(2026, 2, 8)
    assert legal_time.is_within(datetime.fromisoformat("2026-02-08T23:59:59+05:30"), date(2026, 2, 8), "Asia/Kolkata")
    assert not legal_time.is_within(datetime.fromisoformat("2026-02-09T00:00:00+05:30"), date(2026, 2, 8),
                                    "Asia/Kolkata")


def test_period_end_across_the_start_of_british_summer_time():
    # BST starts at 01:00 UTC on Sunday 2026-03-29 (the last Sunday of March)
    tz = "Europe/London"
    assert legal_time.period_end("2026-03-26T10:00:00+00:00", 3, tz) == "2026-03-29T23:00:00+00:00"  # 00:00 BST 03-30
    assert legal_time.period_end("2026-03-26T10:00:00+00:00", 2, tz) == "2026-03-29T00:00:00+00:00"  # 00:00 GMT 03-29
    assert legal_time.period_end("2026-03-28T23:30:00+00:00", 0, tz) == "2026-03-29T00:00:00+00:00"
    assert legal_time.last_day("2026-03-26T10:00:00+00:00", 3, tz) == date(2026, 3, 29)
    end = datetime.fromisoformat("2026-03-29T23:00:00+00:00")
    assert legal_time.day_before_instant(end, tz) == date(2026, 3, 29)
    assert legal_time.is_within(datetime.fromisoformat("2026-03-29T22:59:59+00:00"), date(2026, 3, 29), tz)
    assert not legal_time.is_within(datetime.fromisoformat("2026-03-29T23:00:00+00:00"), date(2026, 3, 29), tz)
    # and its end in October (25-hour day): 00:00 GMT of 10-26 is 00:00 UTC
    assert legal_time.period_end("2026-10-23T12:00:00+01:00", 2, tz) == "2026-10-26T00:00:00+00:00"


def test_period_rules_refuse_naive_instants_and_fractional_days():
    with pytest.raises(ValueError):
        legal_time.parse_instant("2026-01-05T10:00:00")
    with pytest.raises(ValueError):
        legal_time.last_day("2026-01-05T10:00:00+05:30", 2.5, "Asia/Kolkata")
    with pytest.raises(ValueError):
        legal_time.last_day("2026-01-05T10:00:00+05:30", -1, "Asia/Kolkata")


def test_a_loaded_version_never_carries_an_instance_of_an_ended_session(sessions):
    """The parse cache outlives sessions: a version loaded in a session that rolled back and
    closed (its instances expired and detached) must not break the next session's load (the timer
    worker died on DetachedInstanceError after a conflict's rollback)."""
    from webapp.store.models import ProcessVersion

    first = sessions()
    version = first.scalars(select(ProcessVersion).order_by(ProcessVersion.id)).first()
    version_id = version.id
    loaded = repository.load(version)
    first.rollback()
    first.close()
    with sessions() as second:
        again = second.get(ProcessVersion, version_id)
        reloaded = repository.load(again)
        assert reloaded.version is again
        assert reloaded.parsed is loaded.parsed  # parsed once, from the cache
        assert reloaded.version.content_hash == again.content_hash


def _reference_state(workflow) -> dict:
    """SpiffWorkflow's own serialization of ``workflow`` (spec and all), less the two spec keys."""
    full = json.loads(runtime.SERIALIZER.serialize_json(workflow))
    for key in runtime.SPEC_KEYS:
        del full[key]
    return full


@pytest.mark.parametrize("name", ["s2-objection-proved-after-sale", "p06-interim-not-proved-returned-reauction",
                                  "p21-later-objection-rearms-appeal-window"])
def test_every_stored_state_is_spiffworkflows_serialization_without_the_spec(monkeypatch, name):
    # dump_state converts the instance with its specs set aside (the speed of a save); every state a
    # whole case stores (call activities, loops, timers, messages) must still be exactly what
    # SpiffWorkflow writes, less the specs, and the instance must get its specs back.
    from webapp.simulation import simulate

    real, checked = runtime.dump_state, []

    def checking(workflow):
        spec, subprocess_specs = workflow.spec, dict(workflow.subprocess_specs)
        expected = _reference_state(workflow)
        state = real(workflow)
        assert json.loads(state) == expected
        assert workflow.spec is spec and workflow.subprocess_specs == subprocess_specs
        checked.append(len(state))
        return state

    monkeypatch.setattr(runtime, "dump_state", checking)
    result = simulate.run_scenario(simulate.load_scenario(Path(__file__).parent / "scenarios" / f"{name}.yaml"))
    assert result.mismatches == []
    assert len(checked) >= 8  # the start, every act and every timer pass stored a state


@pytest.mark.parametrize("name", ["s2-objection-proved-after-sale", "p04-two-objectors-one-proved",
                                  "p06-interim-not-proved-returned-reauction", "p21-later-objection-rearms-appeal-window"])
def test_ready_user_tasks_are_spiffworkflows_ready_manual_tasks_in_its_order(monkeypatch, name):
    # ready_user_tasks finds READY user tasks in the task dictionaries, not by walking the tree; at
    # every point of a whole case (call activities, the objection loop, parallel notice and auction)
    # it must give exactly what SpiffWorkflow's get_tasks gives, the same tasks in the same order.
    from SpiffWorkflow.util.task import TaskState

    from webapp.simulation import simulate

    real, seen = runtime.ready_user_tasks, []

    def checking(workflow):
        found = real(workflow)
        assert found == workflow.get_tasks(state=TaskState.READY, manual=True)
        seen.append(len(found))
        return found

    monkeypatch.setattr(runtime, "ready_user_tasks", checking)
    result = simulate.run_scenario(simulate.load_scenario(Path(__file__).parent / "scenarios" / f"{name}.yaml"))
    assert result.mismatches == []
    assert 0 in seen and 1 in seen  # none and one ready were met (p04: two claims to decide at once)
    if name.startswith(("p04", "p06")):
        assert max(seen) == 2  # two tasks ready at once: the order is SpiffWorkflow's
