"""Command-line tools for officers' accounts and API tokens: ``create-user``, ``set-password``,
``deactivate-user``, ``reactivate-user``, ``set-role``, ``transfer-user``, ``create-token``,
``list-tokens`` and ``revoke-token``. Deactivating, reactivating, a new role and a transfer are the
officers pages' own service functions (:mod:`webapp.services.panchayats.officers`), acting for the
whole installation.

A new password and a deactivation end every signed-in session of the user at once (a new session
key, :mod:`webapp.store.session_keys`). Exit codes: 0 done; 2 refused (an unknown user, a password that
breaks the rule, an inactive user), with the reason on standard error.
"""

from __future__ import annotations

import sys
from typing import TextIO

import click

from webapp.cli.common import _in_transaction, _sessions, database_option


@click.command("create-user")
@click.argument("name")
@click.option("--role", required=True, type=click.Choice(["pound_keeper", "secretary", "sarpanch",
                                                          "appellate_authority", "receiving_officer",
                                                          "administrator", "district_officer"]))
@click.option("--panchayat", "panchayat_code", default=None, help="the Panchayat's code")
@click.option("--samiti", "samiti_code", default=None, help="the Panchayat Samiti's code")
@click.option("--district", default=None, help="a district officer's District (as create-panchayat --district)")
@click.option("--display-name", default=None)
@click.option("--password-file", type=click.File("r"), default=None, help="read the password from this file")
@database_option
def create_user(name: str, role: str, panchayat_code: str | None, samiti_code: str | None, district: str | None,
                display_name: str | None, password_file: TextIO | None, database_url: str | None) -> None:
    """Create a user. Neither --panchayat nor --samiti: an installation-wide administrator."""
    from webapp.services.people import users

    if panchayat_code and samiti_code:
        click.echo("refused: give --panchayat or --samiti, not both", err=True)
        sys.exit(2)
    password = (password_file.read().strip() if password_file else
                click.prompt("password", hide_input=True, confirmation_prompt=True))
    _in_transaction(database_url, users.create_user, name, password, role, display_name=display_name,
                    panchayat_code=panchayat_code, samiti_code=samiti_code, district=district)
    click.echo(f"user {name} ({role}) created")


@click.command("create-token")
@click.argument("user")
@click.option("--label", default="", help="what the token is for (shown by list-tokens)")
@database_option
def create_token(user: str, label: str, database_url: str | None) -> None:
    """Make an API bearer token for USER, scoped to USER's role and Panchayat (printed once; stored
    hashed). It stops working when revoked or when USER's role or scope changes."""
    from webapp.services.people import users

    row, token = _in_transaction(database_url, users.issue_token, user, label)
    click.echo(f"token {row.id} for {user} ({row.role}); keep it secret, it is not shown again:", err=True)
    click.echo(token)


@click.command("list-tokens")
@database_option
def list_tokens(database_url: str | None) -> None:
    """List API tokens: id, user, role, Panchayat id, created, revoked, label (never the token)."""
    from webapp.services.people import users

    with _sessions(database_url)() as session:
        for row, owner in users.tokens(session):
            revoked = row.revoked_at.isoformat() if row.revoked_at else "active"
            click.echo(f"{row.id}\t{owner.username}\t{row.role}\t{row.panchayat_id or '-'}\t"
                       f"{row.created_at.isoformat()}\t{revoked}\t{row.label}")


@click.command("revoke-token")
@click.argument("token_id", type=int)
@database_option
def revoke_token(token_id: int, database_url: str | None) -> None:
    """Revoke the API token TOKEN_ID (from list-tokens) at once and for good (exit 2 if unknown)."""
    from webapp.services.people import users

    row = _in_transaction(database_url, users.revoke_token, token_id)
    click.echo(f"token {row.id} revoked")


@click.command("set-password")
@click.argument("name")
@click.option("--password-file", type=click.File("r"), default=None, help="read the password from this file")
@database_option
def set_password_command(name: str, password_file: TextIO | None, database_url: str | None) -> None:
    """Give the user NAME a new password (asked twice, or read from --password-file). It must pass
    the password rule; every session of NAME ends; NAME's API tokens keep working."""
    from webapp.services.people import passwords

    password = (password_file.read().strip() if password_file else
                click.prompt("new password", hide_input=True, confirmation_prompt=True))
    _in_transaction(database_url, passwords.set_password, name, password)
    click.echo(f"password of {name} changed; every session of {name} has ended")


def _said(outcome: object) -> None:
    from webapp.i18n import localize

    for line in getattr(outcome, "follows", []):
        click.echo(localize(line, language="en"))


@click.command("deactivate-user")
@click.argument("name")
@click.option("--successor", default="", help="the user name of an officer of the same role and Panchayat who "
              "takes NAME's open tasks (required when nobody else of the role remains)")
@database_option
def deactivate_user_command(name: str, successor: str, database_url: str | None) -> None:
    """Deactivate the user NAME: no more sign-ins, every session ends at once, API tokens stop;
    NAME's open tasks go to --successor, or back to the other officers of the role."""
    from webapp.services.panchayats import officers

    _said(_in_transaction(database_url, officers.deactivate, None, name, successor=successor))


@click.command("reactivate-user")
@click.argument("name")
@database_option
def reactivate_user_command(name: str, database_url: str | None) -> None:
    """Let the deactivated user NAME sign in again."""
    from webapp.services.panchayats import officers

    _said(_in_transaction(database_url, officers.reactivate, None, name))


@click.command("set-role")
@click.argument("name")
@click.argument("role", type=click.Choice(["pound_keeper", "secretary", "sarpanch", "appellate_authority",
                                           "administrator"]))
@click.option("--successor", default="", help="who takes NAME's open tasks of the old role")
@database_option
def set_role_command(name: str, role: str, successor: str, database_url: str | None) -> None:
    """Give the user NAME another ROLE in the same Panchayat or Samiti; every session and token ends."""
    from webapp.services.panchayats import officers

    _said(_in_transaction(database_url, officers.change_role, None, name, role, successor=successor))


@click.command("transfer-user")
@click.argument("name")
@click.argument("panchayat_code")
@click.option("--successor", default="", help="who takes NAME's open tasks in the old Panchayat")
@database_option
def transfer_user_command(name: str, panchayat_code: str, successor: str, database_url: str | None) -> None:
    """Move the Panchayat officer NAME to the Panchayat PANCHAYAT_CODE; NAME's open tasks in the old
    one go to --successor (told, as NAME is) or back to the other officers of the role."""
    from webapp.services.panchayats import officers

    _said(_in_transaction(database_url, officers.transfer, None, name, panchayat_code, successor=successor))


COMMANDS = (create_user, set_password_command, deactivate_user_command, reactivate_user_command, set_role_command,
            transfer_user_command, create_token, list_tokens, revoke_token)
