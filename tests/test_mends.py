"""Mends of what cases written by hand from the rule found (issue 30, item 4), beyond the scenario
files m01-m04 (tests/scenarios): the scenario file forgets a corrected birth; the order of interim
delivery is named as what it did, and its correction is refused because the cattle were delivered.
Cows: fine 500.00, feeding 60.00 a day; impounded 2026-01-05 10:00 IST."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from webapp.errors import Refused
from webapp.services.cases import corrections
from webapp.services.running import acts, uow
from webapp.simulation.scenario_file import ScenarioError, load_scenario

from .driver import ONE_COW, ist_midnight, publish

SCENARIOS = Path(__file__).parent / "scenarios"


def _with_steps(tmp_path: Path, steps: list[str]) -> Path:
    text = (SCENARIOS / "m04-birth-corrected-recorded-again-same-calf-tag.yaml").read_text(encoding="utf-8")
    head, _ = text.split("steps:\n", 1)
    path = tmp_path / "m.yaml"
    path.write_text(head + "steps:\n" + "".join(f"  - {s}\n" for s in steps), encoding="utf-8")
    return path


BIRTH = ("{at: 2026-01-07T09:00:00+05:30, do: record_birth, tag: RJ-2, calf_tag: RJ-1C}")


def test_a_corrected_birth_frees_its_calf_tag_and_its_position(tmp_path):
    again = "{at: 2026-01-07T09:40:00+05:30, do: record_birth, tag: RJ-1, calf_tag: RJ-1C}"
    scenario = load_scenario(_with_steps(tmp_path, [
        BIRTH, "{at: 2026-01-07T09:30:00+05:30, do: correct, step: 1, reason: wrong mother}", again,
        "{at: 2026-01-08T09:00:00+05:30, do: record_escape, animal: 3}"]))
    assert [(s.do, s.fields.get("calf_tag")) for s in scenario.steps][2] == ("record_birth", "RJ-1C")
    with pytest.raises(ScenarioError, match=re.escape("steps[4] (record_escape): animal must be a position from 1 to 3")):
        load_scenario(_with_steps(tmp_path, [
            BIRTH, "{at: 2026-01-07T09:30:00+05:30, do: correct, step: 1, reason: wrong mother}", again,
            "{at: 2026-01-08T09:00:00+05:30, do: record_escape, animal: 4}"]))


def test_a_correction_expected_to_be_refused_keeps_the_calf(tmp_path):
    refused = "{at: 2026-01-20T09:30:00+05:30, do: correct, step: 1, reason: late, expect_error: could be corrected}"
    with pytest.raises(ScenarioError, match=re.escape("steps[3].calf_tag: the tag 'RJ-1C' is already used")):
        load_scenario(_with_steps(tmp_path, [
            BIRTH, refused, "{at: 2026-01-21T09:40:00+05:30, do: record_birth, tag: RJ-1, calf_tag: RJ-1C}"]))
    scenario = load_scenario(_with_steps(tmp_path, [
        BIRTH, refused, "{at: 2026-01-21T09:00:00+05:30, do: record_escape, animal: 3}"]))
    assert scenario.steps[2].fields == {"animal": 3}


def test_a_refused_birth_adds_no_calf(tmp_path):
    refused = "{at: 2026-01-07T09:00:00+05:30, do: record_birth, tag: RJ-2, calf_tag: RJ-1C, born_on: 2026-01-01, expect_error: x}"
    with pytest.raises(ScenarioError, match=re.escape("animal must be a position from 1 to 2")):
        load_scenario(_with_steps(tmp_path, [refused, "{at: 2026-01-08T09:00:00+05:30, do: record_escape, animal: 3}"]))


def _interim(drive):
    drive.start(ONE_COW)
    drive.fire_past(ist_midnight("2026-01-09"))
    publish(drive)
    drive.move("2026-01-09T15:00:00+05:30")
    drive.object("Objector K")
    drive.move("2026-01-10T10:00:00+05:30")
    drive.act("sarpanch", "ut_decide_objection", {"decision": "interim_delivery", "security": "20000.00",
                                                  "reason": "marks match"}, objector="Objector K")


def test_the_interim_delivery_is_named_as_the_order_it_is_and_refused_for_the_delivery(app, drive):
    from .test_web_pages import login
    _interim(drive)
    with drive.sessions() as s:
        act = acts.latest(s, drive.case_id)
        assert (act.element_id, act.name) == ("ut_decide_objection", "Order of interim delivery on security")
        assert corrections.last_day(act, "Asia/Kolkata").isoformat() == "2026-01-17"  # 7 days: no decision
    drive.move("2026-01-11T10:00:00+05:30")  # the next day
    sar = drive.officers["sarpanch"]
    with pytest.raises(Refused) as refused:
        uow.perform(drive.sessions, "correct_act", corrections.correct, sar, drive.case_id, act.id,
                    "security typed wrong", case_id=drive.case_id, user=sar)
    assert refused.value.message.startswith(
        "the act “Order of interim delivery on security” delivered the cattle to Objector K on 2026-01-10; "
        "cattle that have left the pound are not brought back by a correction")
    assert "decision on the merits" not in refused.value.message
    client = app.test_client()
    login(client, "sar")
    page = client.get(f"/cases/{drive.case_id}").get_data(as_text=True)
    assert "The latest act: “Order of interim delivery on security”" in page
    client.post("/language", data={"lang": "hi", "next": "/tasks"})
    assert "प्रतिभूति पर अंतरिम परिदान का आदेश" in client.get(f"/cases/{drive.case_id}").get_data(as_text=True)


def test_an_objection_decided_on_its_merits_keeps_its_task_name_and_the_day_rule(drive):
    _interim(drive)
    drive.move("2026-01-20T11:00:00+05:30")
    drive.act("sarpanch", "ut_decide_objection", {"decision": "not_proved"}, objector="Objector K")
    with drive.sessions() as s:
        act = acts.latest(s, drive.case_id)
        assert act.name == "Decide ownership claim"
        assert corrections.last_day(act, "Asia/Kolkata").isoformat() == "2026-01-20"
