"""Every scenario in tests/scenarios runs through the real diagram, engine and services."""

from __future__ import annotations

import pytest

from webapp.simulate import load_scenario, run_scenario

from .conftest import SCENARIOS


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.yaml")), ids=lambda p: p.stem)
def test_scenario_expectations_hold(path):
    outcome = run_scenario(load_scenario(path))
    assert outcome.mismatches == []
    assert outcome.result["outcome"] != "pending"
