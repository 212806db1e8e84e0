"""Watching the timer workers: the admin lag page, /metrics (Prometheus), JSON logs naming the case,
and the production start under gunicorn."""

from __future__ import annotations

import io
import json
import logging
import os
import socket
import subprocess
import sys
import time
import urllib.request
from datetime import datetime
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import FAST_HASH, PASSWORD
from webapp import logs
from webapp.services.cases import cases
from webapp.services.jobs import timers
from webapp.services.people import users
from webapp.services.running import uow
from webapp.store.models import Case

ROOT = Path(__file__).resolve().parents[1]


def impound(sessions, officer, day: str) -> Case:
    return uow.perform(sessions, "start_case", cases.start_case, officer,
                       impounded_at=datetime.fromisoformat(f"{day}T10:00:00+05:30"), place_seized="Bhimpura",
                       place_impounded="Kanji House", nearest_village="Bhimpura",
                       animals=[{"species": "cow", "description": "brown cow"}])


@pytest.fixture
def fired_three(sessions, officers, virtual_clock):
    """Three cases whose release timers (00:00 IST 2026-01-09) fired 1 s, 3 s and 10 s late, a fourth
    due at the same instant and not fired (overdue 10 s), and a fifth due a day later."""
    pk = officers["pound_keeper"]
    a, b, c, overdue = (impound(sessions, pk, "2026-01-05") for _ in range(4))
    virtual_clock.set(datetime.fromisoformat("2026-01-06T10:00:00+05:30"))
    impound(sessions, pk, "2026-01-06")
    for case, late in ((a, "01"), (b, "03"), (c, "10")):
        virtual_clock.set(datetime.fromisoformat(f"2026-01-09T00:00:{late}+05:30"))
        assert timers.fire_case(sessions, case.id) == 1
    return a, b, c, overdue


def sign_in(client, username: str) -> None:
    response = client.post("/login", data={"username": username, "password": PASSWORD})
    assert response.status_code == 302


def test_the_lag_page_shows_recent_firings_percentiles_and_overdue_timers(client, fired_three, officers):
    a, _b, c, overdue = fired_three
    assert client.get("/admin/timers").status_code == 302  # sign in first
    sign_in(client, "sec")
    assert client.get("/admin/timers").status_code == 403
    client.post("/logout")
    sign_in(client, "admin")
    page = client.get("/admin/timers")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert '<dd id="hour-count">3</dd>' in html
    assert '<dd id="p50">3.000 s</dd>' in html  # nearest rank of 1, 3, 10
    assert '<dd id="p99">10.0 s</dd>' in html
    assert '<dd id="overdue">1\n    (the oldest waiting 10.0 s)</dd>' in html
    rows = html.split('<table class="list" id="firings">')[1].split("</table>")[0].split("<tr>")[2:]
    assert len(rows) == 3
    newest = rows[0]
    assert c.case_number in newest and "Release window ends (3 days)" in newest and "bt_release_window" in newest
    assert "Friday, 9 January 2026 00:00:00.000" in newest and "Friday, 9 January 2026 00:00:10.000" in newest and "10.0 s" in newest
    assert a.case_number in rows[2] and "1.000 s" in rows[2]
    assert overdue.case_number not in html.split('id="firings"')[1]


def test_a_timer_already_due_when_armed_is_late_but_does_not_lag(sessions, officers, virtual_clock, fired_three):
    """A case recorded on 2026-01-20 for an impoundment on 2026-01-05: its release window ended on
    01-09 and its timer fires as it is armed, 11 days late (the history's lateness) with no lag for
    the workers (migration 0016); the page's percentiles and /metrics count the lag."""
    from sqlalchemy import select

    from webapp.services.jobs import monitoring
    from webapp.store.models import TimerFiring, User

    virtual_clock.set(datetime.fromisoformat("2026-01-20T12:00:00+05:30"))
    late = impound(sessions, officers["pound_keeper"], "2026-01-05")
    with sessions() as session:
        firing = session.scalars(select(TimerFiring).where(TimerFiring.case_id == late.id)).one()
        assert firing.element_id == "bt_release_window"
        assert firing.lateness_seconds == 11 * 86400 + 12 * 3600  # due 01-09 00:00 IST, fired 01-20 12:00 IST
        assert firing.lag_seconds == 0.0
        timely = session.scalars(select(TimerFiring).where(TimerFiring.case_id == fired_three[2].id)).one()
        assert (timely.lateness_seconds, timely.lag_seconds) == (10.0, 10.0)  # armed in advance: lag = lateness
        admin = session.get(User, officers["administrator"].id)
        report = monitoring.lag_report(session, admin, datetime.fromisoformat("2026-01-20T12:30:00+05:30"))
        assert (report.hour_count, report.p99_seconds) == (1, 0.0)
        buckets, total_sum, total = monitoring.timer_lag_histogram(session)
    assert (total, total_sum) == (4, 14.0) and dict(buckets)["0.05"] == 1


def test_the_lag_report_names_each_firing_through_the_public_overview_elements(sessions, fired_three, officers):
    """overview.elements (public, shared with the case page) maps an element id to its name and
    documentation; the lag report names each firing by it."""
    from webapp.services.cases import overview
    from webapp.services.jobs import monitoring
    from webapp.store.models import ProcessVersion, User

    with sessions() as session:
        bpmn = session.query(ProcessVersion).first().bpmn_xml
        found = overview.elements(bpmn)
        name, docs = found["bt_release_window"]
        assert name == "Release window ends (3 days)"
        assert docs.startswith("Rule 130 (heading) with Rule 2 (day): cattle not released within 3 days")
        assert found["ut_publish_notice"][0] == "Publish notice and open conditional auction"
        assert overview.clause_of(session.query(ProcessVersion).first(), "bt_release_window") == \
            "Rule 130 (heading) with Rule 2 (day)"
        admin = session.get(User, officers["administrator"].id)
        report = monitoring.lag_report(session, admin, datetime.fromisoformat("2026-01-09T00:01:00+05:30"))
    assert [(f.element_id, f.name) for f in report.recent] == [("bt_release_window", name)] * 3
    assert not hasattr(overview, "_elements")  # one name for it, the public one


def test_the_lag_page_keeps_to_the_administrators_scope(client, sessions, fired_three):
    with sessions() as session:
        users.create_user(session, "admin-far", PASSWORD, "administrator", samiti_code="SAM2",
                          password_method=FAST_HASH)
        session.commit()
    sign_in(client, "admin-far")
    html = client.get("/admin/timers").get_data(as_text=True)
    assert '<dd id="hour-count">0</dd>' in html and '<dd id="overdue">0</dd>' in html
    assert "No timer has fired yet." in html


def metrics_of(text: str) -> dict[tuple[str, tuple], float]:
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(text) for sample in family.samples}


def test_metrics_need_the_token_or_an_administrator_and_count_from_the_database(app, client, fired_three):
    assert client.get("/metrics").status_code == 401
    app.config["METRICS_TOKEN"] = "s3cret-scrape-token"
    assert client.get("/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 401
    sign_in(client, "sec")
    assert client.get("/metrics").status_code == 401  # an officer is not enough
    client.post("/logout")
    client.get("/health")
    response = client.get("/metrics", headers={"Authorization": "Bearer s3cret-scrape-token"})
    assert response.status_code == 200
    assert response.content_type.startswith("text/plain")
    found = metrics_of(response.get_data(as_text=True))
    assert found[("rule130_timers_fired_total", ())] == 3
    assert found[("rule130_timer_lag_seconds_count", ())] == 3
    assert found[("rule130_timer_lag_seconds_sum", ())] == 14
    assert found[("rule130_timer_lag_seconds_bucket", (("le", "0.5"),))] == 0
    assert found[("rule130_timer_lag_seconds_bucket", (("le", "1.0"),))] == 1
    assert found[("rule130_timer_lag_seconds_bucket", (("le", "5.0"),))] == 2
    assert found[("rule130_timer_lag_seconds_bucket", (("le", "10.0"),))] == 3
    assert found[("rule130_timer_lag_seconds_bucket", (("le", "+Inf"),))] == 3
    assert found[("rule130_timers_overdue", ())] == 1
    assert found[("rule130_timer_oldest_overdue_seconds", ())] == 10
    assert found[("rule130_tasks_completed_total", ())] == 0
    assert found[("rule130_request_duration_seconds_count", (("endpoint", "ops.health"), ("method", "GET")))] >= 1
    sign_in(client, "admin")
    assert client.get("/metrics").status_code == 200


@pytest.mark.parametrize("scope", [{"panchayat_code": "RMP"}, {"samiti_code": "SAM1"}], ids=["panchayat", "samiti"])
def test_metrics_are_refused_to_an_administrator_of_a_samiti_or_panchayat(client, sessions, fired_three, scope):
    """/metrics counts every Panchayat's timers and tasks: a scoped administrator is refused (403,
    naming why and where their own figures are), and is not shown a single figure."""
    with sessions() as session:
        users.create_user(session, "admin-scoped", PASSWORD, "administrator", password_method=FAST_HASH, **scope)
        session.commit()
    sign_in(client, "admin-scoped")
    response = client.get("/metrics")
    page = response.get_data(as_text=True)
    assert response.status_code == 403
    assert "/metrics shows the figures of the whole installation" in page and "Timers page" in page
    assert "rule130_timers_fired_total" not in page
    assert client.get("/admin/timers").status_code == 200  # their own scope's figures


def test_log_lines_about_a_case_carry_its_number_as_json(sessions, officers, virtual_clock):
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(logs.CaseFilter())
    handler.setFormatter(logs.JsonFormatter())
    logger = logging.getLogger("rule130")
    logger.addHandler(handler)
    previous = logger.level
    logger.setLevel(logging.INFO)
    try:
        case = impound(sessions, officers["pound_keeper"], "2026-01-05")
        assert logs.current_case() is None  # the unit of work's case did not leak out of it
        virtual_clock.set(datetime.fromisoformat("2026-01-09T00:00:02+05:30"))
        logging.getLogger("rule130.test").info("before the pass")
        assert timers.fire_due(sessions) == 1
        assert logs.current_case() is None
    finally:
        logger.removeHandler(handler)
        logger.setLevel(previous)
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    fired = [line for line in lines if "timer bt_release_window fired" in line["message"]]
    assert len(fired) == 1
    assert fired[0]["case"] == case.case_number == "RMP/2026/0001"
    assert fired[0]["logger"] == "rule130.timers" and fired[0]["level"] == "INFO"
    assert "late 2.000 s" in fired[0]["message"]
    assert next(line for line in lines if line["message"] == "before the pass").get("case") is None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_gunicorn_serves_health_and_metrics_from_several_workers(database_url, sessions, tmp_path):
    port = free_port()
    metrics_dir = tmp_path / "prometheus"
    metrics_dir.mkdir()
    env = {**os.environ, "DATABASE_URL": database_url, "RULE130_SECRET_KEY": "gunicorn-test",
           "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir), "RULE130_METRICS_TOKEN": "scrape"}
    server = subprocess.Popen([sys.executable, "-m", "gunicorn", "--workers", "2", "--bind", f"127.0.0.1:{port}",
                               "--control-socket", str(tmp_path / "gunicorn.ctl"),
                               "webapp.app:create_app()"], cwd=ROOT, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as response:
                    assert response.status == 200
                    assert json.loads(response.read()) == {"status": "ok", "database": "ok", "overdue_cases": 0,
                                                           "oldest_timer_lag_seconds": 0.0}
                    break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise
                time.sleep(0.2)
        for _ in range(5):
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5).read()
        request = urllib.request.Request(f"http://127.0.0.1:{port}/metrics",
                                         headers={"Authorization": "Bearer scrape"})
        with urllib.request.urlopen(request, timeout=10) as response:
            found = metrics_of(response.read().decode())
        # every /health answered, whichever worker process served it (multiprocess mode)
        assert found[("rule130_request_duration_seconds_count", (("endpoint", "ops.health"), ("method", "GET")))] >= 6
        assert found[("rule130_timers_fired_total", ())] == 0
    finally:
        server.terminate()
        output = server.communicate(timeout=30)[0].decode(errors="replace")
    assert "Booting worker" in output, output


def test_no_case_stays_bound_to_the_thread_after_a_request(client, sessions, officers, virtual_clock):
    """A web thread serves many requests: a case page binds its case for its log lines, and the
    next request on the thread starts with none — also one refused before the request hooks run
    (Flask-WTF's CSRF check logs "The CSRF token is missing." before them)."""
    case = impound(sessions, officers["pound_keeper"], "2026-01-05")
    sign_in(client, "sec")
    assert client.get(f"/cases/{case.id}").status_code == 200
    assert logs.current_case() is None
