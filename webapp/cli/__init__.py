"""The ``rule130`` command line (click): init-db, serve, worker, deliver, simulate, deploy,
create-panchayat, demo-data; versions, diff, redeploy, migrate (webapp.cli.versions); create-user,
set-password, deactivate-user, create-token, list-tokens, revoke-token (webapp.cli.users); training
(webapp.cli.training); backup, restore, audit verify (webapp.cli.backup)."""

from __future__ import annotations

import json
import logging
import signal
import sys
import threading
from datetime import datetime
from pathlib import Path
from typing import Any

import click

from webapp.cli.common import _in_transaction, _sessions, _url, database_option
from webapp.errors import InvalidDiagram, Rule130Error


@click.group()
def main() -> None:
    """Rule 130 of the Rajasthan Panchayati Raj Rules, 1996, run as a BPMN workflow."""
    from webapp import logs
    logs.configure()


@main.command("init-db")
@database_option
def init_db(database_url: str | None) -> None:
    """Create or upgrade the schema (Alembic) and deploy the bundled Rule 130 process."""
    from webapp.services.diagrams import repository
    from webapp.store import db

    url = _url(database_url)
    db.upgrade(url)
    with _sessions(url)() as session:
        version, created = repository.deploy_bundled(session, "init-db")
        session.commit()
    click.echo(f"database ready; process {version.process_id} version {version.version}"
               f"{' deployed' if created else ' already deployed'}")


def _check_settle() -> None:
    """Stop with a message naming ``RULE130_TIMER_SETTLE_SECONDS`` when it is not a valid number."""
    from webapp.services.jobs import timers
    try:
        timers.settle_seconds()
    except ValueError as error:
        click.echo(str(error), err=True)
        sys.exit(2)


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=5000, show_default=True, type=int)
@click.option("--no-worker", is_flag=True, help="do not run the timer worker in this process")
@database_option
def serve(host: str, port: int, no_worker: bool, database_url: str | None) -> None:
    """Serve the web application (waitress) with the timer worker in-process."""
    import socket

    from waitress import serve as waitress_serve

    from webapp.app import SecretKeyMissing, create_app, stop_timer_worker
    from webapp.services.papers import pdf

    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as error:
            click.echo(f"cannot serve on {host}:{port}: {error.strerror}; choose another with --port "
                       "(scripts/run.sh: PORT=5001 scripts/run.sh)", err=True)
            sys.exit(2)

    _check_settle()
    config: dict[str, Any] = {"RUN_TIMER_WORKER": not no_worker}
    if database_url:
        config["DATABASE_URL"] = database_url
    try:
        app = create_app(config)
    except SecretKeyMissing as missing:
        click.echo(f"cannot serve: {missing}", err=True)
        sys.exit(2)
    try:  # the PDF documents' browser starts now, in the background: the first PDF does not wait for it
        pdf.shared().start()
    except ValueError as invalid:
        click.echo(f"cannot serve: {invalid}", err=True)
        sys.exit(2)
    click.echo(f"rule130 serving on http://{host}:{port}/ "
               f"({'without' if no_worker else 'with'} the timer worker)")

    def terminate(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt  # SIGTERM (systemd, kill) ends the server as Ctrl-C does

    # SIGINT too: a process started in the background by a non-interactive shell inherits SIGINT
    # ignored, and Python then leaves it so; Ctrl-C or kill -INT must still stop the server.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, terminate)
    try:
        waitress_serve(app, host=host, port=port, threads=8)
    except KeyboardInterrupt:
        pass
    finally:
        stop_timer_worker(app)  # frees the timer lease for the next start
    click.echo("rule130 stopped")


@main.command()
@click.option("--max-sleep", default=None, type=click.FloatRange(min=0.01),
              help="longest wait (seconds) between passes when no timer is due sooner and no wake-up "
                   "comes [default: 60 on PostgreSQL (NOTIFY wakes workers), 0.5 on SQLite]")
@click.option("--no-deliver", is_flag=True, help="do not send e-mail/webhook notifications from this worker")
@database_option
def worker(max_sleep: float | None, no_deliver: bool, database_url: str | None) -> None:
    """Run the timer worker alone: on SQLite one at a time (a second says so and exits); on
    PostgreSQL start as many as you like, they share the due cases through row locks.
    It also sends queued notifications (see ``rule130 deliver``) unless ``--no-deliver``."""
    from webapp.services.jobs import timers

    _check_settle()
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    sessions = _sessions(database_url)
    from webapp import i18n
    from webapp.services.diagrams import repository
    # notifications in Hindi name the tasks by the Hindi their deployed diagrams carry
    i18n.set_names_source(lambda: repository.deployed_names(sessions))
    if not no_deliver:
        from webapp.services.jobs import delivery_worker
        from webapp.services.notify import channels
        delivery_worker.start_thread(sessions, channels.ChannelSettings.load(), stop)
    try:
        timers.run_worker(sessions, stop, max_sleep=max_sleep)
    except timers.LeaseHeld as held:
        click.echo(f"not started: {held}", err=True)
        sys.exit(1)


@main.command()
@click.option("--once", is_flag=True, help="one pass over the due deliveries, then exit")
@database_option
def deliver(once: bool, database_url: str | None) -> None:
    """Send queued e-mail and webhook notifications (the outbox), retrying failures with back-off.

    Settings: RULE130_SMTP_* and RULE130_WEBHOOK_SECRET (docs/operations.md). ``rule130 worker``
    runs this loop too; several may run at once (each delivery is claimed by one of them)."""
    from webapp.services.jobs import delivery_worker
    from webapp.services.notify import channels, deliveries

    try:
        settings = channels.ChannelSettings.load()
    except ValueError as error:
        click.echo(f"not started: {error}", err=True)
        sys.exit(2)
    sessions = _sessions(database_url)
    if once:
        for outcome in deliveries.deliver_due(sessions, settings):
            click.echo(f"delivery {outcome.delivery_id} ({outcome.channel}): {outcome.result}"
                       + (f" - {outcome.error}" if outcome.error else ""))
        return
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    delivery_worker.run_loop(sessions, settings, stop)


@main.command()
@click.argument("scenarios", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="print the machine-readable result (for several files a list, each named by file and scenario)")
@click.option("--database", "database_url", default=None,
              help="run every scenario into this existing database, in one training Panchayat, instead of a "
                   "fresh one each (a live Panchayat is refused)")
@click.option("--panchayat", "panchayat_code", default=None,
              help="the training Panchayat the cases are opened in (default SIM1; created as a training "
                   "Panchayat when missing)")
def simulate(scenarios: tuple[str, ...], as_json: bool, database_url: str | None, panchayat_code: str | None) -> None:
    """Run case scenarios (tests/scenarios/FORMAT.md), each as its own case. Exit 0 all held,
    1 a mismatch, 2 an invalid file or a refused database or Panchayat (every file and the
    database are checked before anything runs)."""
    from webapp.simulation.simulate import ScenarioError, load_scenario, run_scenarios

    logging.getLogger("rule130").setLevel(logging.WARNING)  # the timeline says what fired
    parsed = []
    for scenario in scenarios:
        try:
            parsed.append(load_scenario(scenario))
        except ScenarioError as error:
            click.echo(f"invalid scenario {scenario}: {error}", err=True)
            sys.exit(2)
    try:
        outcomes = run_scenarios(parsed, database_url, panchayat_code)
    except ScenarioError as error:
        click.echo(f"not run: {error}", err=True)
        sys.exit(2)
    if as_json:
        if len(outcomes) == 1:
            click.echo(json.dumps(outcomes[0].result, indent=2, ensure_ascii=False))
        else:  # one result per file, each named by its file and the scenario's name
            click.echo(json.dumps([{"file": path, "scenario": scenario.name, **outcome.result}
                                   for path, scenario, outcome in zip(scenarios, parsed, outcomes, strict=False)],
                                  indent=2, ensure_ascii=False))
    failed = False
    for run, outcome in zip(parsed, outcomes, strict=False):
        if not as_json:
            click.echo(f"scenario {run.name}: case {outcome.case_number}")
            for event in outcome.timeline:
                note = f" — {event['message']}" if event.get("message") else ""
                click.echo(f"  {event['at']}  {event['kind']:<12} {event['name']}  [{event['actor']}]{note}")
            result = {k: v for k, v in outcome.result.items() if k != "timeline"}
            click.echo(json.dumps(result, indent=2, ensure_ascii=False))
        for line in outcome.mismatches:
            click.echo(f"MISMATCH {run.name}: {line}" if len(parsed) > 1 else f"MISMATCH {line}", err=True)
        failed = failed or bool(outcome.mismatches)
        if not as_json and not outcome.mismatches:
            click.echo("all expectations held")
    if failed:
        sys.exit(1)


@main.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--dry-run", is_flag=True, help="validate only")
@click.option("--note", default="", help="a note stored with the version")
@click.option("--by", "deployed_by", default="cli", help="who deploys")
@database_option
def deploy(files: tuple[str, ...], dry_run: bool, note: str, deployed_by: str, database_url: str | None) -> None:
    """Validate and deploy a process version: one .bpmn and its *.schema.json forms (or a folder
    holding them; forms default to the forms/ folder beside the .bpmn). Exit 0 done, 2 refused."""
    from webapp.engine.diagrams.parser import load_forms
    from webapp.services.diagrams import repository

    bpmn_files: list[Path] = []
    forms: dict[str, dict[str, Any]] = {}
    raw: dict[str, bytes] = {}  # the form files' bytes, kept as deployed
    try:
        for name in files:
            path = Path(name)
            if path.is_dir():
                bpmn_files += sorted(path.glob("*.bpmn"))
                if (path / "forms").is_dir():
                    forms.update(load_forms(path / "forms"))
                    raw.update({p.name: p.read_bytes() for p in (path / "forms").glob("*.json")})
            elif path.suffix == ".bpmn":
                bpmn_files.append(path)
            elif path.suffix == ".json":
                forms[path.name] = json.loads(path.read_text(encoding="utf-8"))
                raw[path.name] = path.read_bytes()
            else:
                raise InvalidDiagram(f"{name}: not a .bpmn file, a .json form or a folder")
        if len(bpmn_files) != 1:
            raise InvalidDiagram(f"give exactly one .bpmn file (found {len(bpmn_files)})")
        if not forms and (bpmn_files[0].parent / "forms").is_dir():
            forms = load_forms(bpmn_files[0].parent / "forms")
            raw = {p.name: p.read_bytes() for p in (bpmn_files[0].parent / "forms").glob("*.json")}
        bpmn = bpmn_files[0].read_bytes()
        if dry_run:
            parsed = repository.check(bpmn, forms)
            click.echo(f"verdict: {parsed.summary}")
            for warning in parsed.warnings:
                click.echo(str(warning))
            click.echo(f"valid: {bpmn_files[0]} with {len(forms)} form(s), content hash {parsed.content_hash[:12]}")
            return
        with _sessions(database_url)() as session:
            version, created = repository.deploy(session, bpmn, forms, deployed_by, note, form_bytes=raw)
            session.commit()
        click.echo(f"{'deployed' if created else 'already deployed as'} {version.process_id} version "
                   f"{version.version} ({version.content_hash[:12]})")
    except InvalidDiagram as error:
        click.echo(f"refused: {error.message}", err=True)
        found = getattr(error, "verdict", None)  # the pipeline's verdict: the file's facts in one line
        if found is not None:
            click.echo(f"verdict: {found.summary()}", err=True)
        for problem in error.problems:
            if problem != error.message:
                click.echo(problem, err=True)
        sys.exit(2)
    except (ValueError, OSError) as error:
        click.echo(f"refused: {error}", err=True)
        sys.exit(2)


@main.command("create-panchayat")
@click.argument("code")
@click.option("--name", required=True)
@click.option("--samiti", required=True, help="the Panchayat Samiti's code")
@click.option("--district", default="")
@click.option("--timezone", "tz", default="Asia/Kolkata", show_default=True)
@click.option("--appeal-period-days", default=30, show_default=True, type=int)
@click.option("--training", is_flag=True,
              help="a training Panchayat: the only kind `rule130 simulate --database` writes into (set once, for good)")
@click.option("--established-on", type=click.DateTime(formats=["%Y-%m-%d"]), default=None,
              help="the day the Panchayat was constituted (YYYY-MM-DD): no paper case brought in may record a "
                   "fact dated before it")
@database_option
def create_panchayat(code: str, name: str, samiti: str, district: str, tz: str, appeal_period_days: int,
                     training: bool, established_on: datetime | None, database_url: str | None) -> None:
    """Add a Gram Panchayat (its code prefixes its case numbers); with --training, a training one."""
    from webapp.services.people import users

    def create(session: Any) -> None:
        panchayat = users.create_panchayat(session, code, name, samiti, district, tz, appeal_period_days,
                                           training=training)
        panchayat.established_on = established_on.date() if established_on is not None else None

    _in_transaction(database_url, create)
    click.echo(f"training Panchayat {code} created (the simulator may write into it)" if training
               else f"Panchayat {code} created")


@main.command("demo-data")
@click.option("--password", default="kanji-house-demo", show_default=True,
              help="the demo officers' password (it must pass the password rule)")
@database_option
def demo_data(password: str, database_url: str | None) -> None:
    """Create the demo Panchayat RMP, its officers and a case impounded four days ago (idempotent)."""
    from webapp.services.jobs import timers
    from webapp.services.panchayats.demo import ensure_demo

    sessions = _sessions(database_url)
    try:
        created = ensure_demo(sessions, password)
    except Rule130Error as error:
        click.echo(f"refused: {error.message}", err=True)
        sys.exit(2)
    for line in created:
        click.echo(line)
    fired = timers.fire_due(sessions)
    if fired:
        click.echo(f"{fired} timer(s) fired")


@main.command("digest-static")
def digest_static() -> None:
    """Write the static files' hashed copies (name-<md5>.ext, with gzip) and their manifest, which
    pages link with a year's immutable cache (webapp/web/assets.py); scripts/setup.sh runs it."""
    from webapp.web import assets
    click.echo(f"{assets.compile_digests()} static files under hashed names in {assets.STATIC}")


from webapp.cli.backup import COMMANDS as _BACKUP_COMMANDS
from webapp.cli.training import COMMANDS as _TRAINING_COMMANDS
from webapp.cli.users import COMMANDS as _USER_COMMANDS
from webapp.cli.versions import COMMANDS as _VERSION_COMMANDS

for _command in (*_VERSION_COMMANDS, *_USER_COMMANDS, *_TRAINING_COMMANDS, *_BACKUP_COMMANDS):
    main.add_command(_command)


def run() -> None:
    """The console script: ``main`` with database errors turned into a plain message (exit 2)."""
    from sqlalchemy.exc import OperationalError, ProgrammingError

    try:
        main(standalone_mode=True)
    except (OperationalError, ProgrammingError) as error:
        reason = str(getattr(error, "orig", error)).splitlines()[0]
        click.echo(f"the database is not ready ({reason}); run 'rule130 init-db' first, and check DATABASE_URL",
                   err=True)
        sys.exit(2)


if __name__ == "__main__":  # pragma: no cover
    run()
