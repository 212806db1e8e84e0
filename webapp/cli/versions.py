"""Command-line tools for process versions: ``versions``, ``diff``, ``redeploy``, ``migrate``.

Exit codes: 0 done (or, for a dry run, every case listed can move); 2 refused (an unknown version
or case, a case that cannot move: each reason on its own line).
"""

from __future__ import annotations

import sys

import click

from webapp.cli.common import _sessions, database_option
from webapp.errors import InvalidDiagram, Rule130Error

process_option = click.option("--process", "process_id", default="rule130_case", show_default=True,
                              help="the process id")


def _refuse(error: Rule130Error) -> None:
    click.echo(f"refused: {error.message}", err=True)
    found = getattr(error, "verdict", None) if isinstance(error, InvalidDiagram) else None
    if found is not None:  # a diagram's verdict: its facts in one line, as rule130 deploy prints them
        click.echo(f"verdict: {found.summary()}", err=True)
    for problem in getattr(error, "problems", []) if isinstance(error, InvalidDiagram) else []:
        if problem != error.message:
            click.echo(problem, err=True)
    verdict = error.details.get("verdict")
    for reason in getattr(verdict, "reasons", []):
        click.echo(f"  {reason}", err=True)
    sys.exit(2)


@click.command("versions")
@click.argument("process_id", default="rule130_case")
@click.option("--audit", is_flag=True, help="also print the process audit trail (deploys, redeploys, moves)")
@database_option
def versions_command(process_id: str, audit: bool, database_url: str | None) -> None:
    """List the deployed versions of PROCESS (default rule130_case), newest first."""
    from webapp.services.diagrams import versions

    with _sessions(database_url)() as session:
        try:
            listed = versions.list_versions(session, process_id)
        except Rule130Error as error:
            _refuse(error)
        for v in listed:
            flags = " (current)" if v.current else ""
            click.echo(f"v{v.number}{flags}  {v.deployed_at:%Y-%m-%d %H:%M} UTC  by {v.deployed_by}  "
                       f"{v.content_hash[:12]}  {v.running_cases} running case(s)  {len(v.files)} file(s)"
                       f"{'  — ' + v.note if v.note else ''}")
        if audit:
            click.echo("audit trail (newest first):")
            for row in versions.trail(session, process_id):
                span = " -> ".join(f"v{n}" for n in (row.version_from, row.version_to) if n is not None)
                click.echo(f"  {row.at:%Y-%m-%d %H:%M:%S} UTC  {row.action:<8} {span:<10} by {row.actor}"
                           f"{'  ' + row.note if row.note else ''}")


@click.command("diff")
@click.argument("a", type=int)
@click.argument("b", type=int)
@process_option
@database_option
def diff_command(a: int, b: int, process_id: str, database_url: str | None) -> None:
    """What changed from version A to version B: elements added, removed, changed; forms."""
    from webapp.services.diagrams import versions

    with _sessions(database_url)() as session:
        try:
            result = versions.compare(session, process_id, a, b)
        except Rule130Error as error:
            _refuse(error)
    for line in result.lines():
        click.echo(line)


@click.command("redeploy")
@click.argument("number", type=int)
@click.option("--note", default="", help="added after 'redeploy of vN'")
@click.option("--by", "actor", default="cli", show_default=True, help="who redeploys")
@process_option
@database_option
def redeploy_command(number: int, note: str, actor: str, process_id: str, database_url: str | None) -> None:
    """Deploy version NUMBER again as a new version."""
    from webapp.services.diagrams import repository

    with _sessions(database_url)() as session:
        try:
            version = repository.redeploy(session, actor, process_id, number, note)
            session.commit()
        except Rule130Error as error:
            _refuse(error)
        click.echo(f"deployed {process_id} version {version.version} ({version.note})")


@click.command("migrate")
@click.option("--to", "to", type=int, required=True, help="the version to move running cases to")
@click.option("--case", "case_ref", default=None, help="move only this case (its number)")
@click.option("--dry-run", is_flag=True, help="only say, per running case, whether it can move and why not")
@click.option("--by", "actor", default="cli", show_default=True, help="who moves the cases")
@process_option
@database_option
def migrate_command(to: int, case_ref: str | None, dry_run: bool, actor: str, process_id: str,
                    database_url: str | None) -> None:
    """Move running cases to version --to (all movable ones, or --case). Exit 0 when every case
    concerned moved (or, with --dry-run, can move; cases already on it do not count), 2 when any
    was refused."""
    from webapp.services.cases import migration

    sessions = _sessions(database_url)
    try:
        if dry_run:
            with sessions() as session:
                verdicts = migration.plan(session, actor, process_id, to, case_ref)
            for verdict in verdicts:
                click.echo(verdict.line())
            movable = sum(v.movable for v in verdicts)
            click.echo(f"{movable} of {len(verdicts)} case(s) can move to version {to}")
            if any(not v.movable and v.version_from != to for v in verdicts):
                sys.exit(2)
            return
        if case_ref is not None:
            verdict = migration.move_case(sessions, actor, process_id, to, case_ref)
            click.echo(f"moved {verdict.case_number} from version {verdict.version_from} to {verdict.version_to}")
            return
        results = migration.move_all(sessions, actor, process_id, to)
    except Rule130Error as error:
        _refuse(error)
    for result in results:
        v = result.verdict
        click.echo(f"moved {v.case_number} from version {v.version_from} to {v.version_to}" if result.moved
                   else f"not moved: {v.line()}")
    moved = sum(r.moved for r in results)
    click.echo(f"{moved} of {len(results)} running case(s) moved to version {to}")
    if any(not r.moved and r.verdict.version_from != to for r in results):  # already there: not a refusal
        sys.exit(2)


COMMANDS = (versions_command, diff_command, redeploy_command, migrate_command)
