"""Every scenario in tests/scenarios runs through the real diagram, engine and services; every file in
tests/scenarios/invalid is refused as a whole (exit 2) with a message naming the field."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from webapp.cli import main
from webapp.simulation.simulate import load_scenario, run_scenario

from .conftest import SCENARIOS


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.yaml")), ids=lambda p: p.stem)
def test_scenario_expectations_hold(path):
    scenario = load_scenario(path)
    assert "outcome" in scenario.expect, "every scenario states the outcome it must reach"
    outcome = run_scenario(scenario)
    assert outcome.mismatches == []
    assert outcome.result["outcome"] == scenario.expect["outcome"]


INVALID = {  # file -> the part of the message that names the field and the fault
    "x01-record-death-unknown-tag": "steps[2] (record_death): no animal has the tag 'RJ-X9'",
    "x02-step-time-without-offset": "steps[2].at: '2026-01-10T11:00:00' is not a date and time with a UTC offset",
    "x03-missing-impounded-at": "case: missing key: impounded_at",
    "x04-unquoted-decimal-amount": "steps[2].amount: write amounts as quoted strings",
    "x05-unknown-species": "case.animals[2]: species 'elephant' has no tariff",
    "x06-unknown-action": "steps[2].do: unknown action 'auction_close'",
    "x07-duplicate-tag": "case.animals: tags must be unique",
    "x08-escape-animal-position-out-of-range": "steps[2] (record_escape): animal must be a position from 1 to 2",
    "x09-unknown-expect-key": "expect.fees: unknown key(s): penalty",
    "x10-impounded-at-without-offset": "case.impounded_at: '2026-01-05T10:00:00' is not a date and time with a UTC offset",
    "x11-species-missing-from-tariff": "case.animals[2]: species 'goat' has no tariff",
    "x12-unquoted-decimal-tariff": "tariff.cow.feeding_per_day: write amounts as quoted strings",
    "x13-bid-missing-bidder": "steps[2] (bid): missing field(s): bidder",
    "x14-unknown-species-with-tariff": "tariff: unknown species 'elephant'",
    "x15-steps-out-of-order": "steps[2]: steps must be in time order",
    "x16-unknown-setting": "settings: unknown key(s): appeal_days",
    "x17-unknown-timezone": "timezone: unknown time zone 'Mars/Olympus'",
    "x18-unknown-top-key": "unknown key(s): panchayat",
    "x19-negative-appeal-period": "settings.appeal_period_days: expected a whole number of days from 1 to 365, not -5",
    "x20-calf-tag-already-used": "steps[1].calf_tag: the tag 'RJ-1' is already used",
}


def test_every_invalid_file_has_its_expected_message():
    assert sorted(p.stem for p in (SCENARIOS / "invalid").glob("*.yaml")) == sorted(INVALID)


@pytest.mark.parametrize("name", sorted(INVALID))
def test_an_invalid_file_is_refused_naming_the_field(name):
    result = CliRunner().invoke(main, ["simulate", str(SCENARIOS / "invalid" / f"{name}.yaml")])
    assert result.exit_code == 2, result.output
    assert f"invalid scenario {SCENARIOS / 'invalid' / name}.yaml: {INVALID[name]}" in result.output, result.output


def test_one_invalid_file_in_a_batch_runs_nothing():
    result = CliRunner().invoke(main, ["simulate", str(SCENARIOS / "s1-no-objection-full-price.yaml"),
                                       str(SCENARIOS / "invalid" / "x06-unknown-action.yaml")])
    assert result.exit_code == 2
    assert "steps[2].do: unknown action 'auction_close'" in result.output
    assert "all expectations held" not in result.output


def test_json_for_several_files_names_each_result_by_file_and_scenario():
    files = [SCENARIOS / "s1-no-objection-full-price.yaml", SCENARIOS / "s2-objection-proved-after-sale.yaml"]
    result = CliRunner().invoke(main, ["simulate", *map(str, files), "--json"])
    assert result.exit_code == 0, result.output
    results = json.loads(result.output)
    assert [(r["file"], r["outcome"]) for r in results] == [(str(files[0]), "auction_final"),
                                                             (str(files[1]), "returned_to_objector")]
    assert [r["scenario"] for r in results] == [load_scenario(f).name for f in files]


def test_a_file_that_is_not_text_is_invalid_in_one_line(tmp_path):
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(bytes(range(128, 256)) * 2)
    result = CliRunner().invoke(main, ["simulate", str(binary)])
    assert result.exit_code == 2
    assert result.output == f"invalid scenario {binary}: cannot read {binary}: it is not UTF-8 text (a scenario is a YAML file)\n"


@pytest.mark.parametrize("url, said", [
    ("bogus://x", "--database: 'bogus://x' is not a database URL rule130 can open (sqlite:///FILE or postgresql://...)"),
    ("sqlite:////nonexistent-folder/x.db", "--database: cannot open 'sqlite:////nonexistent-folder/x.db': OperationalError"),
])
def test_a_database_that_cannot_be_opened_is_refused_before_anything_runs(url, said):
    result = CliRunner().invoke(main, ["simulate", str(SCENARIOS / "s1-no-objection-full-price.yaml"), "--database", url])
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"not run: {said}") and len(result.output.splitlines()) == 1, result.output


def test_a_timer_due_at_a_steps_instant_comes_first_in_the_timeline():
    """p45: the appeal window ends at 00:00 IST of 2026-10-16 and three acts follow at that instant;
    the timeline lists the timer and what it caused, then the acts, in the order they happened."""
    result = run_scenario(load_scenario(SCENARIOS / "p45-return-and-deliver-at-final-instant.yaml"))
    assert result.mismatches == []
    that_instant = [(e["kind"], e["name"]) for e in result.timeline if e["at"] == "2026-10-16T00:00:00+05:30"]
    assert that_instant == [
        ("timer", "Appeal period ends"), ("notification", "outcome_final"), ("notification", "period_ended"),
        ("task", "Take cattle back from buyer"), ("task", "Deliver cattle to objector"),
        ("notification", "feeding_charges_due"), ("task", "Pay feeding charges"), ("notification", "case_closed")]


def _refusals(name):
    result = run_scenario(load_scenario(SCENARIOS / f"{name}.yaml"))
    assert result.mismatches == []
    return [(e["at"], e["name"], e["message"]) for e in result.timeline if e["kind"] == "refusal"]


def test_a_task_that_is_not_open_yet_is_refused_naming_what_comes_first_and_its_last_day():
    """RULE130.md: a refusal names what was wrong and, for a period, the last day."""
    assert _refusals("p51-acts-before-their-time-refused") == [
        ("2026-11-13T23:00:00+05:30", "publish_notice",
         "the task 'Publish notice and open conditional auction' is not open in case TRN-SIM1/2026/0001 now: "
         "the notice is published after the release window, whose last day is 2026-11-13"),
        ("2026-11-14T08:00:00+05:30", "bid", "no conditional auction is open for this case"),
        ("2026-11-14T08:30:00+05:30", "file_objection",
         "no notice has been published yet; objections are received during the notice period"),
        ("2026-12-14T23:59:59+05:30", "order_auction_stand",
         "the task 'Order that the auction stand' is not open in case TRN-SIM1/2026/0001 now: "
         "the order is made after the objection period, whose last day is 2026-12-14")]
    returns = [r for r in _refusals("p48-notice60-proved-early-final-at-notice-end") if r[1] == "return_by_buyer"]
    assert returns == [("2026-04-25T10:00:00+05:30", "return_by_buyer",
                        "the task 'Take cattle back from buyer' is not open in case TRN-SIM1/2026/0001 now: the decision "
                        "becomes final after the objection period, whose last day is 2026-05-19")]
    orders = [r for r in _refusals("p32-year-boundary-two-objectors-not-proved-45days") if r[1] == "order_auction_stand"]
    assert orders == [("2027-02-16T10:00:00+05:30", "order_auction_stand",
                       "the task 'Order that the auction stand' is not open in case TRN-SIM1/2026/0001 now: an objection "
                       "was filed; the Panchayat decides the ownership claim instead (Rule 130(c))")]
