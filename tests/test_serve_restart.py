"""`rule130 serve` stopped with SIGTERM or Ctrl-C (SIGINT) frees the timer worker's lease, so a
server started again at once runs its timer worker; one started while another worker holds the
lease waits for it instead of running without a worker. Real processes on a SQLite file.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from webapp.services.jobs import timers
from webapp.store import db
from webapp.store.models import WorkerLease
from webapp.values import clock

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(os.name != "posix", reason="signals")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def lease_holder(url: str) -> str | None:
    engine = db.make_engine(url)
    try:
        with db.session_factory(engine)() as session:
            row = session.scalar(select(WorkerLease).where(WorkerLease.name == timers.LEASE_NAME))
            return row.holder if row is not None and row.expires_at > clock.now() else None
    finally:
        engine.dispose()


def wait_for(check, seconds: float = 30.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.2)
    return check()


def serve(url: str, port: int, *, sigint_ignored: bool = False) -> subprocess.Popen:
    """``rule130 serve`` in a child process; ``sigint_ignored``: started as a non-interactive shell
    starts a background job (``cmd &``), with SIGINT ignored."""
    ignore = (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if sigint_ignored else None
    return subprocess.Popen([sys.executable, "-c", "from webapp.cli import main; main()", "serve", "--port", str(port), "--database", url],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, preexec_fn=ignore)


@pytest.fixture
def url(tmp_path):
    url = f"sqlite:///{tmp_path / 'serve.db'}"
    db.upgrade(url)
    return url


@pytest.mark.parametrize("how, sigint_ignored", [(signal.SIGTERM, False), (signal.SIGINT, False), (signal.SIGINT, True)],
                         ids=["SIGTERM", "SIGINT", "SIGINT-ignored-at-start"])
def test_a_stopped_server_frees_the_lease_and_the_next_one_runs_its_worker_at_once(url, how, sigint_ignored):
    first = serve(url, free_port(), sigint_ignored=sigint_ignored)
    try:
        holder = wait_for(lambda: lease_holder(url))
        assert holder and f":{first.pid}:" in holder
        first.send_signal(how)
        output = first.communicate(timeout=60)[0]  # a stop under a loaded CI machine (its PDF browser starting) is slow
        assert first.returncode == 0, output
        assert "rule130 stopped" in output
    finally:
        if first.poll() is None:
            first.kill()
    assert lease_holder(url) is None  # freed: not left to expire in 30 s
    second = serve(url, free_port())
    try:
        holder = wait_for(lambda: lease_holder(url), 10)
        assert holder and f":{second.pid}:" in holder
    finally:
        second.send_signal(signal.SIGTERM)
        second.communicate(timeout=30)


def test_a_server_started_while_another_worker_holds_the_lease_takes_it_when_freed(url):
    engine = db.make_engine(url)
    sessions = db.session_factory(engine)
    with sessions() as session:  # another worker, alive for the next minute
        session.add(WorkerLease(name=timers.LEASE_NAME, holder="elsewhere:1",
                                expires_at=clock.now() + timedelta(seconds=60)))
        session.commit()
    server = serve(url, free_port())
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(server.stdout), daemon=True)
    reader.start()
    waiting = "in-process timer worker waiting: another timer worker (elsewhere:1) is running"
    try:
        # released only once the server has tried for the lease and said it waits (however slow
        # the machine is to start it), so the test sees both the wait and the taking over
        assert wait_for(lambda: any(waiting in line for line in lines), 60), "".join(lines)
        assert lease_holder(url) == "elsewhere:1"
        timers.release_lease(sessions, "elsewhere:1")  # that worker stops
        holder = wait_for(lambda: lease_holder(url), 15)
        assert holder and f":{server.pid}:" in holder
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
        reader.join(timeout=10)
        engine.dispose()
