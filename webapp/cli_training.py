"""``rule130 training``: make, or reset, a training Panchayat (:mod:`webapp.services.training`).

Exit codes: 0 done (or already there); 2 refused (a code in use by a live Panchayat, a bad code or
name, a password that breaks the rule), with the reason on standard error.
"""

from __future__ import annotations

import sys

import click
from sqlalchemy import select

from .cli_common import _in_transaction, _sessions, database_option


@click.command("training")
@click.argument("code", default="TRN1")
@click.option("--name", default="Training Panchayat", show_default=True, help="the training Panchayat's name")
@click.option("--password", default=None,
              help="the trainees' password (it must pass the password rule); default: a random one each, printed")
@click.option("--timezone", "tz", default="Asia/Kolkata", show_default=True)
@click.option("--reset", is_flag=True,
              help="put its cases away (kept, out of every list, firing nothing) and start it afresh on the real clock")
@database_option
def training_command(code: str, name: str, password: str | None, tz: str, reset: bool,
                     database_url: str | None) -> None:
    """Make the training Panchayat CODE (default TRN1) with one trainee officer per role: its case
    numbers start with TRN-, every page and document of it says TRAINING, it sends no e-mail or
    webhook, and its clock is its own (moved from the browser: Training clock). Run again: nothing
    changes. With --reset: start it afresh."""
    from .services import training
    from .store.models import Panchayat

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
        return
    _panchayat, made = _in_transaction(database_url, training.create, code, name, password, timezone=tz)
    click.echo(f"training Panchayat {code} ({name}) created; its officers sign in as:")
    for user, secret in made:
        click.echo(f"  {user.username:<22} {user.role:<20} " + ("(the password given)" if password else secret))


COMMANDS = (training_command,)
