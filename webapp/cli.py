"""The ``rule130`` command line (click)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from .errors import InvalidDiagram, Rule130Error


@click.group()
def main() -> None:
    """Rule 130 of the Rajasthan Panchayati Raj Rules, 1996, run as a BPMN workflow."""


@main.command()
@click.argument("scenario", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="print the machine-readable result")
@click.option("--database", "database_url", default=None, help="run in this database instead of a fresh one")
def simulate(scenario: str, as_json: bool, database_url: str | None) -> None:
    """Run a case scenario (tests/scenarios/FORMAT.md). Exit 0 all held, 1 a mismatch, 2 invalid file."""
    from .simulate import ScenarioError, load_scenario, run_scenario

    try:
        parsed = load_scenario(scenario)
    except ScenarioError as error:
        click.echo(f"invalid scenario {scenario}: {error}", err=True)
        sys.exit(2)
    outcome = run_scenario(parsed, database_url)
    if as_json:
        click.echo(json.dumps(outcome.result, indent=2, ensure_ascii=False))
    else:
        click.echo(f"scenario {parsed.name}")
        for event in outcome.timeline:
            click.echo(f"  {event['at']}  {event['kind']:<12} {event['name']}  [{event['actor']}]")
        result = {k: v for k, v in outcome.result.items() if k != "timeline"}
        click.echo(json.dumps(result, indent=2, ensure_ascii=False))
    for line in outcome.mismatches:
        click.echo(f"MISMATCH {line}", err=True)
    if outcome.mismatches:
        sys.exit(1)
    if not as_json:
        click.echo("all expectations held")


if __name__ == "__main__":  # pragma: no cover
    main()
