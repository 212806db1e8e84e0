"""Command-line tools for officers' accounts: ``set-password`` and ``deactivate-user``.

Both end every signed-in session of the user at once (a new session key,
:mod:`webapp.store.session_keys`). Exit codes: 0 done; 2 refused (an unknown user, a password that
breaks the rule, an inactive user), with the reason on standard error.
"""

from __future__ import annotations

from typing import TextIO

import click

from .cli_common import _in_transaction, database_option


@click.command("set-password")
@click.argument("name")
@click.option("--password-file", type=click.File("r"), default=None, help="read the password from this file")
@database_option
def set_password_command(name: str, password_file: TextIO | None, database_url: str | None) -> None:
    """Give the user NAME a new password (asked twice, or read from --password-file). It must pass
    the password rule; every session of NAME ends; NAME's API tokens keep working."""
    from .services import passwords

    password = (password_file.read().strip() if password_file else
                click.prompt("new password", hide_input=True, confirmation_prompt=True))
    _in_transaction(database_url, passwords.set_password, name, password)
    click.echo(f"password of {name} changed; every session of {name} has ended")


@click.command("deactivate-user")
@click.argument("name")
@database_option
def deactivate_user_command(name: str, database_url: str | None) -> None:
    """Deactivate the user NAME: no more sign-ins, every session ends at once, API tokens stop."""
    from .services import users

    _in_transaction(database_url, users.deactivate, name)
    click.echo(f"user {name} deactivated; every session and API token of {name} has ended")


COMMANDS = (set_password_command, deactivate_user_command)
