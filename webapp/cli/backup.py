"""Command-line tools for the data's safety: ``backup`` (the whole database into a file),
``restore`` (a backup into an empty database, its audit trail verified) and ``audit verify`` (the
hash chain of the audit trail, and the records it recorded).

Exit codes: 0 done and intact; 2 refused or broken, with the reason on standard error.
"""

from __future__ import annotations

import sys

import click

from webapp.cli.common import _sessions, _url, database_option
from webapp.errors import Rule130Error


@click.command("backup")
@click.argument("file", type=click.Path(dir_okay=False))
@database_option
def backup_command(file: str, database_url: str | None) -> None:
    """Copy the whole database into FILE (SQLite: online backup while running; PostgreSQL: pg_dump
    custom format). FILE must not exist. Exit 2 when refused."""
    from webapp.store import backup

    try:
        path = backup.backup(_url(database_url), file)
    except Rule130Error as error:
        click.echo(f"refused: {error.message}", err=True)
        sys.exit(2)
    click.echo(f"backup written to {path} ({path.stat().st_size} bytes)")


@click.command("restore")
@click.argument("file", type=click.Path(dir_okay=False))
@database_option
def restore_command(file: str, database_url: str | None) -> None:
    """Restore the backup FILE into an EMPTY database (a new SQLite file or a new PostgreSQL
    database), upgrade its schema and verify its audit trail. Exit 2 when refused or broken."""
    from webapp.store import audit as trail
    from webapp.store import backup

    url = _url(database_url)
    try:
        backup.restore(url, file)
    except Rule130Error as error:
        click.echo(f"refused: {error.message}", err=True)
        sys.exit(2)
    with _sessions(url)() as session:
        verdict = trail.verify(session)
    if not verdict.ok:
        click.echo(f"restored, but the audit trail is BROKEN: {verdict.reason}", err=True)
        sys.exit(2)
    click.echo(f"restored {file}; audit trail intact: {verdict.checked} entries; head {verdict.head}")


@click.group()
def audit() -> None:
    """The tamper-evident audit trail (hash-chained entries of every state change)."""


def _recorded_head(_ctx: click.Context, _param: click.Parameter, value: str | None) -> tuple[int, str] | None:
    if value is None:
        return None
    seq, _, digest = value.partition(":")
    if not (seq.isascii() and seq.isdigit() and 0 < int(seq) < 2**63 and len(digest) == 64
            and all(c in "0123456789abcdef" for c in digest)):
        raise click.BadParameter(f"expected ENTRY:HASH as an earlier verify printed it (e.g. 1234:9f86d0…, "
                                 f"64 hex digits), not {value!r}")
    return int(seq), digest


@audit.command("verify")
@database_option
@click.option("--head", "recorded_head", default=None, callback=_recorded_head, metavar="ENTRY:HASH",
              help="a head printed by an earlier verify and kept elsewhere: the trail must still hold it "
                   "(detects the newest entries removed)")
def audit_verify(database_url: str | None, recorded_head: tuple[int, str] | None) -> None:
    """Recompute the audit trail's hash chain, then check the ledger entries, case history and
    stored documents against the entries that recorded them. Exit 0 when intact (prints the count
    and the head as ENTRY:HASH: keep it elsewhere and pass it as --head later to detect a
    truncation), 2 naming the first altered or missing entry, a recorded head no longer in the
    trail, or the first row (table, id, field) that differs from its entry or that no entry holds."""
    from webapp.store import audit as trail

    with _sessions(database_url)() as session:
        verdict = trail.verify(session, recorded_head)
    if verdict.ok and verdict.records is not None:
        click.echo(f"audit trail intact: {verdict.checked} entries; head {verdict.head}; "
                   f"record it as {verdict.checked}:{verdict.head}"
                   + (f"; it still holds the recorded head, entry {recorded_head[0]}" if recorded_head else "")
                   + f"; {verdict.records.checked} ledger entries, history rows and documents match it")
        return
    if verdict.records is not None:  # the chain holds, a row does not say what it recorded
        click.echo(f"audit trail intact ({verdict.checked} entries), but the records differ from it: "
                   f"{verdict.reason}" + (f" ({verdict.records.problems} rows in all)"
                                          if verdict.records.problems > 1 else ""), err=True)
        sys.exit(2)
    if verdict.broken_id is None:  # the chain is sound, but shorter than, or other than, what was recorded
        click.echo(f"audit trail BROKEN: {verdict.reason}", err=True)
        sys.exit(2)
    click.echo(f"audit trail BROKEN at entry {verdict.broken_seq} (row id {verdict.broken_id}): {verdict.reason}; "
               f"{verdict.checked} entries before it are intact", err=True)
    sys.exit(2)


COMMANDS = (backup_command, restore_command, audit)
