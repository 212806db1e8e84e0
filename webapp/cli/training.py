"""``rule130 training``: make, or reset, a training Panchayat (:mod:`webapp.services.panchayats.training`).

Exit codes: 0 done (or already there); 2 refused (a code in use by a live Panchayat, a bad code or
name, a password that breaks the rule), with the reason on standard error.
"""

from __future__ import annotations

import sys

import click
from sqlalchemy import select

from webapp.cli.common import _in_transaction, _sessions, database_option


@click.command("training")
@click.argument("code", default="TRN1")
@click.option("--name", default="Training Panchayat", show_default=True, help="the training Panchayat's name")
@click.option("--password", default=None,
              help="the trainees' password (it must pass the password rule); default: a random one each, printed")
@click.option("--timezone", "tz", default="Asia/Kolkata", show_default=True)
@click.option("--fill", "fill_from", type=click.Path(exists=True, dir_okay=False), default=None,
              help="open a case from this scenario file (tests/scenarios/*.yaml), its instants moved to the training clock")
@click.option("--through-step", type=int, default=None,
              help="with --fill: run the impoundment and this many of the scenario's steps (0: only the impoundment)")
@click.option("--reset", is_flag=True,
              help="put its cases away (kept, out of every list, firing nothing) and start it afresh on the real clock")
@database_option
def training_command(code: str, name: str, password: str | None, tz: str, fill_from: str | None,
                     through_step: int | None, reset: bool, database_url: str | None) -> None:
    """Make the training Panchayat CODE (default TRN1) with one trainee officer per role: its case
    numbers start with TRN-, every page and document of it says TRAINING, it sends no e-mail or
    webhook, and its clock is its own (moved from the browser: Training clock). Run again: nothing
    changes. With --fill: also open a case at a stage of a scenario. With --reset: start it afresh."""
    from webapp.services.panchayats import training
    from webapp.store.models import Panchayat

    with _sessions(database_url)() as session:
        existing = session.scalar(select(Panchayat).where(Panchayat.code == code))
    if existing is not None and not existing.training:
        click.echo(f"refused: Panchayat {code} is a live Panchayat; a training Panchayat needs a code of its own",
                   err=True)
        sys.exit(2)
    if reset:
        if existing is None:
            click.echo(f"refused: no training Panchayat has the code {code}", err=True)
            sys.exit(2)
        fresh = _in_transaction(database_url, training.reset, code, "cli")
        click.echo(f"training Panchayat {fresh.code} started afresh; its earlier cases are put away")
        return
    if existing is not None:
        click.echo(f"training Panchayat {code} already present")
    else:
        _panchayat, made = _in_transaction(database_url, training.create, code, name, password, timezone=tz)
        click.echo(f"training Panchayat {code} ({name}) created; its officers sign in as:")
        for user, secret in made:
            click.echo(f"  {user.username:<22} {user.role:<20} " + ("(the password given)" if password else secret))
    if fill_from is not None:
        _fill(database_url, code, fill_from, through_step)


def _fill(database_url: str | None, code: str, path: str, through_step: int | None) -> None:
    from webapp.cli.common import _url
    from webapp.simulation.scenario_file import ScenarioError
    from webapp.simulation.training_fill import fill

    try:
        filled = fill(_url(database_url), code, path, through_step)
    except ScenarioError as error:
        click.echo(f"refused: {error}", err=True)
        sys.exit(2)
    click.echo(f"case {filled.case_number} opened from {path}, its instants moved by {filled.shifted_days} days")
    for lane, title in filled.open_tasks:
        click.echo(f"  open task: {title} ({lane.replace('_', ' ')})")
    if not filled.open_tasks:
        click.echo("  no task is open: the next step is a timer's (move the training clock)")


COMMANDS = (training_command,)
