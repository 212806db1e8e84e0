"""Notification channels against real servers on loopback: e-mail to an aiosmtpd SMTP server, a
webhook to an http.server checking the HMAC-SHA256 signature; the delivery rows through a failing
then recovering server (attempts, back-off instants on the virtual clock); a case step that
commits while SMTP is down; the preferences and delivery-log pages."""

from __future__ import annotations

import email
import hashlib
import hmac
import json
import socket
import threading
from datetime import datetime, timedelta
from email import policy
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from aiosmtpd.controller import Controller
from sqlalchemy import select

from webapp.services.cases import cases
from webapp.services.jobs import timers
from webapp.services.notify import channels, deliveries, preferences
from webapp.services.people import users
from webapp.services.running import uow
from webapp.services.tasks import tasks
from webapp.store.models import Case, Delivery, Notification, User

from .conftest import FAST_HASH, PASSWORD

IST = "+05:30"
SECRET = "webhook-test-secret"


def at(text: str) -> datetime:
    return datetime.fromisoformat(text + IST)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Mailbox:
    """An aiosmtpd handler that keeps every message it accepts."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, list[str], email.message.EmailMessage]] = []

    async def handle_DATA(self, server, session, envelope):
        parsed = email.message_from_bytes(envelope.original_content or envelope.content, policy=policy.default)
        self.messages.append((envelope.mail_from, list(envelope.rcpt_tos), parsed))
        return "250 Message accepted for delivery"


class SmtpServer:
    """A real SMTP server on 127.0.0.1:``port``, started and stopped on demand."""

    def __init__(self, port: int) -> None:
        self.port, self.mailbox, self.controller = port, Mailbox(), None

    def start(self) -> None:
        self.controller = Controller(self.mailbox, hostname="127.0.0.1", port=self.port)
        self.controller.start()

    def stop(self) -> None:
        if self.controller is not None:
            self.controller.stop()
            self.controller = None


@pytest.fixture
def smtp():
    server = SmtpServer(free_port())
    yield server
    server.stop()


def settings_for(port: int, **more) -> channels.ChannelSettings:
    return channels.ChannelSettings(smtp_host="127.0.0.1", smtp_port=port, smtp_from="pound@rampura.example",
                                    smtp_timeout=5, webhook_secret=SECRET, webhook_timeout=5,
                                    webhook_allow_private=True, **more)  # the test's hook server is on 127.0.0.1


class Hook(BaseHTTPRequestHandler):
    """Records each POST; answers with the status at the head of ``server.statuses`` (200 when empty)."""

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.server.received.append((dict(self.headers), body))
        status = self.server.statuses.pop(0) if self.server.statuses else 200
        self.send_response(status)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def hook_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    server.received, server.statuses = [], []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def choose(sessions, user: User, **choices) -> None:
    uow.perform(sessions, "save_preferences", preferences.save, user, preferences.Choices(**choices),
                channels.ChannelSettings(webhook_secret=SECRET, webhook_allow_private=True))


def start_case(sessions, officers) -> Case:
    return uow.perform(sessions, "start_case", cases.start_case, officers["pound_keeper"],
                       impounded_at=at("2026-01-05T10:00:00"), place_seized="Bhimpura",
                       place_impounded="Kanji House, Rampura", nearest_village="Bhimpura",
                       animals=[{"species": "cow", "description": "brown cow", "tag": "RJ-1001"}])


def release_window_passes(sessions, virtual_clock) -> None:
    """The release window of a case impounded on 05-01 ends at 00:00 IST of 09-01: the file opens."""
    virtual_clock.set(at("2026-01-09T00:00:01"))
    assert timers.fire_due(sessions) == 1


def deliveries_of(sessions) -> list[Delivery]:
    with sessions() as session:
        return list(session.scalars(select(Delivery).order_by(Delivery.id)))


def test_an_email_reaches_a_real_smtp_server_with_recipient_subject_and_case_number(
        sessions, officers, virtual_clock, smtp):
    smtp.start()
    choose(sessions, officers["secretary"], email_enabled=True, email_address="secretary@rampura.example")
    case = start_case(sessions, officers)
    release_window_passes(sessions, virtual_clock)
    [row] = deliveries_of(sessions)
    assert (row.channel, row.target, row.status, row.attempts) == ("email", "secretary@rampura.example", "pending", 0)
    outcomes = deliveries.deliver_due(sessions, settings_for(smtp.port))
    assert [(o.channel, o.result) for o in outcomes] == [("email", "sent")]
    [(sender, rcpts, message)] = smtp.mailbox.messages
    assert sender == "pound@rampura.example"
    assert rcpts == ["secretary@rampura.example"]
    assert message["To"] == "secretary@rampura.example"
    assert message["Subject"] == f"Rule 130 {case.case_number}: the release window has passed"
    assert message["Message-ID"].startswith(f"<rule130-delivery-{row.id}@")
    body = message.get_content()
    assert f"{case.case_number}: the release window has passed; the file is open" in body
    assert "Secretary," in body
    [row] = deliveries_of(sessions)
    assert (row.status, row.attempts, row.last_error) == ("sent", 1, "")
    assert row.sent_at == at("2026-01-09T00:00:01")
    assert deliveries.deliver_due(sessions, settings_for(smtp.port)) == []  # sent once
    assert len(smtp.mailbox.messages) == 1


def test_smtp_down_then_back_retries_with_exponential_backoff_and_sends_once(sessions, officers, virtual_clock, smtp):
    settings = settings_for(smtp.port, backoff_seconds=60, max_attempts=5)
    choose(sessions, officers["secretary"], email_enabled=True, email_address="secretary@rampura.example")
    start_case(sessions, officers)
    release_window_passes(sessions, virtual_clock)
    t0 = virtual_clock.now()

    # attempt 1 at t0: refused (nothing listens on the port)
    assert [o.result for o in deliveries.deliver_due(sessions, settings)] == ["retry"]
    [row] = deliveries_of(sessions)
    assert (row.status, row.attempts, row.next_attempt_at) == ("pending", 1, t0 + timedelta(seconds=60))
    assert f"SMTP 127.0.0.1:{smtp.port}: ConnectionRefusedError" in row.last_error

    virtual_clock.set(t0 + timedelta(seconds=59))  # not yet due
    assert deliveries.deliver_due(sessions, settings) == []
    virtual_clock.set(t0 + timedelta(seconds=60))  # attempt 2: still down, wait doubles
    assert [o.result for o in deliveries.deliver_due(sessions, settings)] == ["retry"]
    [row] = deliveries_of(sessions)
    assert (row.attempts, row.next_attempt_at) == (2, t0 + timedelta(seconds=60 + 120))

    smtp.start()  # the server is back; nothing is sent before the back-off instant
    virtual_clock.set(t0 + timedelta(seconds=179))
    assert deliveries.deliver_due(sessions, settings) == []
    assert smtp.mailbox.messages == []
    virtual_clock.set(t0 + timedelta(seconds=180))
    assert [o.result for o in deliveries.deliver_due(sessions, settings)] == ["sent"]
    [row] = deliveries_of(sessions)
    assert (row.status, row.attempts, row.last_error, row.sent_at) == ("sent", 3, "", t0 + timedelta(seconds=180))
    assert len(smtp.mailbox.messages) == 1
    virtual_clock.set(t0 + timedelta(days=1))
    assert deliveries.deliver_due(sessions, settings) == []
    assert len(smtp.mailbox.messages) == 1


def test_a_delivery_gives_up_after_the_last_attempt(sessions, officers, virtual_clock, smtp):
    settings = settings_for(smtp.port, backoff_seconds=10, max_attempts=3, backoff_max_seconds=15)
    choose(sessions, officers["secretary"], email_enabled=True, email_address="secretary@rampura.example")
    start_case(sessions, officers)
    release_window_passes(sessions, virtual_clock)
    t0 = virtual_clock.now()
    results, instants = [], []
    for _ in range(5):
        results += [o.result for o in deliveries.deliver_due(sessions, settings)]
        [row] = deliveries_of(sessions)
        instants.append(row.next_attempt_at - t0)
        virtual_clock.set(row.next_attempt_at)
    assert results == ["retry", "retry", "failed"]
    assert instants[:2] == [timedelta(seconds=10), timedelta(seconds=10 + 15)]  # 10, then 20 capped at 15
    [row] = deliveries_of(sessions)
    assert (row.status, row.attempts) == ("failed", 3)
    assert "ConnectionRefusedError" in row.last_error


def test_a_case_step_commits_while_smtp_is_down(sessions, officers, virtual_clock, smtp):
    settings = settings_for(smtp.port)
    for role in ("secretary", "sarpanch"):
        choose(sessions, officers[role], email_enabled=True, email_address=f"{role}@rampura.example")
    case = start_case(sessions, officers)
    release_window_passes(sessions, virtual_clock)
    assert [o.result for o in deliveries.deliver_due(sessions, settings)] == ["retry"]  # SMTP down
    virtual_clock.set(at("2026-01-09T11:00:00"))
    with sessions() as session:
        [task] = tasks.case_tasks(session, session.get(Case, case.id))
    uow.perform(sessions, "complete_task", tasks.complete_task, officers["secretary"], case.id, task.task_id,
                {"objection_period_days": "30", "full_price": "12000.00"})
    with sessions() as session:
        stored = session.get(Case, case.id)
        ready = sorted(t.element_id for t in tasks.case_tasks(session, stored))
        notes = session.scalars(select(Notification).order_by(Notification.id)).all()
    assert ready == ["ut_record_bid"]  # the notice is published, the auction open
    assert stored.notice_last_day == "2026-02-08"
    assert [d.status for d in deliveries_of(sessions)].count("pending") == len(deliveries_of(sessions))
    assert len(deliveries_of(sessions)) == len([n for n in notes if n.user_id in
                                                (officers["secretary"].id, officers["sarpanch"].id)])


def test_a_crash_between_send_and_mark_sends_again_with_the_same_message_id(sessions, officers, virtual_clock, smtp):
    """At least once: a sender that dies after the server took the message sends it again after its
    claim expires; the Message-ID (the delivery id) lets the mailbox see the duplicate."""
    smtp.start()
    settings = settings_for(smtp.port, claim_seconds=120)
    choose(sessions, officers["secretary"], email_enabled=True, email_address="secretary@rampura.example")
    start_case(sessions, officers)
    release_window_passes(sessions, virtual_clock)
    t0 = virtual_clock.now()
    claimed = deliveries._claim(sessions, settings, set())
    with sessions() as session:
        deliveries._send(session, settings, session.get(Delivery, claimed))  # sent; then the sender "dies"
    [row] = deliveries_of(sessions)
    assert (row.status, row.attempts, row.next_attempt_at) == ("sending", 1, t0 + timedelta(seconds=120))
    assert deliveries.deliver_due(sessions, settings) == []  # claimed by the dead sender until its claim ends
    virtual_clock.set(t0 + timedelta(seconds=120))
    assert [o.result for o in deliveries.deliver_due(sessions, settings)] == ["sent"]
    [row] = deliveries_of(sessions)
    assert (row.status, row.attempts) == ("sent", 2)
    ids = [m["Message-ID"] for _, _, m in smtp.mailbox.messages]
    assert len(ids) == 2 and ids[0] == ids[1]


def test_a_claimed_delivery_is_not_claimed_twice(sessions, officers, virtual_clock, smtp):
    settings = settings_for(smtp.port)
    choose(sessions, officers["secretary"], email_enabled=True, email_address="secretary@rampura.example")
    start_case(sessions, officers)
    release_window_passes(sessions, virtual_clock)
    first = deliveries._claim(sessions, settings, set())
    assert first is not None
    assert deliveries._claim(sessions, settings, set()) is None


def test_webhook_is_signed_with_hmac_sha256_over_the_body(sessions, officers, virtual_clock, smtp, hook_server):
    url = f"http://127.0.0.1:{hook_server.server_address[1]}/rule130"
    choose(sessions, officers["secretary"], webhook_enabled=True, webhook_url=url)
    case = start_case(sessions, officers)
    release_window_passes(sessions, virtual_clock)
    hook_server.statuses = [500]  # the receiver fails once
    settings = settings_for(smtp.port, backoff_seconds=30)
    assert [(o.channel, o.result) for o in deliveries.deliver_due(sessions, settings)] == [("webhook", "retry")]
    [row] = deliveries_of(sessions)
    assert "HTTP 500" in row.last_error and row.next_attempt_at == virtual_clock.now() + timedelta(seconds=30)
    virtual_clock.advance(timedelta(seconds=30))
    assert [o.result for o in deliveries.deliver_due(sessions, settings)] == ["sent"]
    assert len(hook_server.received) == 2
    headers, body = hook_server.received[-1]
    expected = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(headers["X-Rule130-Signature"], expected)
    assert headers["X-Rule130-Delivery"] == str(row.id)
    payload = json.loads(body)
    assert payload["case_number"] == case.case_number
    assert payload["template"] == "report_raised"
    assert payload["user"] == "sec"
    # a body altered in transit no longer matches the signature
    assert hmac.new(SECRET.encode(), body + b" ", hashlib.sha256).hexdigest() != expected[len("sha256="):]


def test_users_with_only_the_inbox_get_no_deliveries(sessions, officers, virtual_clock):
    start_case(sessions, officers)
    release_window_passes(sessions, virtual_clock)
    with sessions() as session:
        assert session.scalars(select(Notification)).all()
    assert deliveries_of(sessions) == []


def test_settings_come_from_the_environment_and_refuse_a_bad_mode(monkeypatch):
    monkeypatch.setenv("RULE130_SMTP_HOST", "mail.example")
    monkeypatch.setenv("RULE130_SMTP_PORT", "587")
    monkeypatch.setenv("RULE130_SMTP_SECURITY", "STARTTLS")
    monkeypatch.setenv("RULE130_SMTP_USER", "pound")
    monkeypatch.setenv("RULE130_SMTP_PASSWORD", "s3cret")
    loaded = channels.ChannelSettings.load()
    assert (loaded.smtp_host, loaded.smtp_port, loaded.smtp_security, loaded.smtp_user, loaded.smtp_password) == (
        "mail.example", 587, "starttls", "pound", "s3cret")
    assert channels.ChannelSettings.load({"SMTP_PORT": 465, "SMTP_SECURITY": "ssl"}).smtp_port == 465
    monkeypatch.setenv("RULE130_SMTP_SECURITY", "tls1")
    with pytest.raises(ValueError, match="RULE130_SMTP_SECURITY must be one of none, starttls, ssl"):
        channels.ChannelSettings.load()


# -- pages ----------------------------------------------------------------------------------------

def login(client, username: str) -> None:
    response = client.post("/login", data={"username": username, "password": PASSWORD})
    assert response.status_code == 302


def test_preferences_page_saves_channels_and_refuses_bad_input_changing_nothing(client, sessions, officers):
    login(client, "sec")
    page = client.get("/preferences")
    assert page.status_code == 200 and b"Always on." in page.data
    bad = client.post("/preferences", data={"email_enabled": "1", "email_address": "not an address"})
    assert bad.status_code == 422
    assert b"give one e-mail address of the form name@example.org" in bad.data
    no_secret = client.post("/preferences", data={"webhook_enabled": "1", "webhook_url": "https://hook.example/x"})
    assert no_secret.status_code == 422 and b"RULE130_WEBHOOK_SECRET" in no_secret.data
    with sessions() as session:
        assert preferences.get(session, session.get(User, officers["secretary"].id)) == preferences.Choices()
    good = client.post("/preferences", data={"email_enabled": "1", "email_address": " sec@rampura.example "})
    assert good.status_code == 302
    with sessions() as session:
        assert preferences.get(session, session.get(User, officers["secretary"].id)) == preferences.Choices(
            True, "sec@rampura.example", False, "")
    assert b'value="sec@rampura.example"' in client.get("/preferences").data


def test_webhook_preferences_need_the_configured_secret_and_an_http_url(app, client, sessions, officers):
    app.config["WEBHOOK_SECRET"] = SECRET
    login(client, "sec")
    bad = client.post("/preferences", data={"webhook_enabled": "1", "webhook_url": "file:///etc/passwd"})
    assert bad.status_code == 422 and b"http:// or https://" in bad.data
    ok = client.post("/preferences", data={"webhook_enabled": "1", "webhook_url": "https://hook.example/x"})
    assert ok.status_code == 302
    with sessions() as session:
        assert preferences.get(session, session.get(User, officers["secretary"].id)).webhook_url == \
            "https://hook.example/x"


@pytest.mark.parametrize("url, address", [("http://127.0.0.1:8026/hook", "127.0.0.1"),
                                          ("http://169.254.169.254/latest/meta-data/", "169.254.169.254"),
                                          ("http://[::1]:5391/logout", "::1"), ("http://localhost/x", None),
                                          ("http://10.1.2.3/x", "10.1.2.3")])
def test_a_webhook_into_this_machines_network_is_refused(app, client, sessions, officers, url, address):
    app.config["WEBHOOK_SECRET"] = SECRET
    login(client, "sec")
    page = client.post("/preferences", data={"webhook_enabled": "1", "webhook_url": url})
    assert page.status_code == 422
    assert f"the webhook address {url} reaches {address or ''}".encode() in page.data
    assert b"inside this machine&#39;s network; give a public address" in page.data
    with sessions() as session:
        assert preferences.get(session, session.get(User, officers["secretary"].id)).webhook_url == ""


def test_a_webhook_saved_while_allowed_is_not_sent_inside_once_disallowed(sessions, officers, virtual_clock, hook_server):
    url = f"http://127.0.0.1:{hook_server.server_port}/hook"
    choose(sessions, officers["secretary"], webhook_enabled=True, webhook_url=url)  # allowed then
    start_case(sessions, officers)
    release_window_passes(sessions, virtual_clock)
    [outcome] = deliveries.deliver_due(sessions, channels.ChannelSettings(webhook_secret=SECRET))
    assert outcome.result == "retry" and hook_server.received == []
    with sessions() as session:
        [row] = session.scalars(select(Delivery))
        assert row.last_error.startswith(f"webhook {url}: the address 127.0.0.1 is inside this machine's network")


def test_delivery_log_is_for_administrators_and_shows_status_and_error(client, sessions, officers, virtual_clock,
                                                                        smtp):
    choose(sessions, officers["secretary"], email_enabled=True, email_address="secretary@rampura.example")
    case = start_case(sessions, officers)
    release_window_passes(sessions, virtual_clock)
    deliveries.deliver_due(sessions, settings_for(smtp.port))  # refused: nothing listens
    login(client, "sec")
    assert client.get("/admin/deliveries").status_code == 403
    client.post("/logout")
    login(client, "admin")
    page = client.get("/admin/deliveries")
    assert page.status_code == 200
    text = page.get_data(as_text=True)
    assert case.case_number in text and "secretary@rampura.example" in text
    assert "ConnectionRefusedError" in text and "pending (1)" in text
    assert client.get("/admin/deliveries?status=sent").get_data(as_text=True).count("<tr class=") == 0


def test_unread_badge_on_every_page_and_mark_read(client, sessions, officers, virtual_clock):
    start_case(sessions, officers)
    release_window_passes(sessions, virtual_clock)
    login(client, "sec")
    for path in ("/tasks", "/cases", "/preferences", "/inbox"):
        assert b'title="unread notifications">1</span>' in client.get(path).data, path
    with sessions() as session:
        [note] = session.scalars(select(Notification).where(Notification.user_id == officers["secretary"].id))
    assert client.post("/inbox/read", data={"id": str(note.id)}).status_code == 302
    assert b'title="unread notifications"' not in client.get("/tasks").data
    with sessions() as session:
        assert session.get(Notification, note.id).read_at is not None


def test_another_users_notification_is_not_marked_read_and_the_inbox_says_so(client, sessions, officers,
                                                                            virtual_clock):
    start_case(sessions, officers)
    release_window_passes(sessions, virtual_clock)
    with sessions() as session:
        [theirs] = session.scalars(select(Notification).where(Notification.user_id == officers["secretary"].id))
    login(client, "sar")  # the sarpanch posts the secretary's notification id
    response = client.post("/inbox/read", data={"id": str(theirs.id)}, follow_redirects=True)
    page = response.get_data(as_text=True)
    assert f"There is no notification {theirs.id} in your inbox." in page
    assert "Marked as read." not in page
    with sessions() as session:
        assert session.get(Notification, theirs.id).read_at is None  # still unread for the secretary
    for beyond in ("2147483648", "999999999999"):  # no id column holds it: the same answer, never a 500
        assert client.post("/inbox/read", data={"id": beyond}, follow_redirects=True).status_code == 200


def test_the_delivery_log_shows_each_administrator_only_the_users_they_manage(client, sessions, officers,
                                                                             virtual_clock, smtp):
    with sessions() as session:
        for name, scope in (("pk-khr", {"panchayat_code": "KHR"}),):
            users.create_user(session, name, PASSWORD, "pound_keeper", password_method=FAST_HASH, **scope)
        for name, scope in (("admin-rmp", {"panchayat_code": "RMP"}), ("admin-sam1", {"samiti_code": "SAM1"}),
                            ("admin-sam2", {"samiti_code": "SAM2"})):
            users.create_user(session, name, PASSWORD, "administrator", password_method=FAST_HASH, **scope)
        session.commit()
        khr_keeper = session.scalar(select(User).where(User.username == "pk-khr"))
    choose(sessions, officers["secretary"], email_enabled=True, email_address="secretary@rampura.example")
    choose(sessions, officers["other_secretary"], email_enabled=True, email_address="secretary@kheri.example")
    rampura = start_case(sessions, officers)
    kheri = start_case(sessions, {"pound_keeper": khr_keeper})
    virtual_clock.set(at("2026-01-09T00:00:01"))
    assert timers.fire_due(sessions) == 2  # both files open: each secretary gets "report raised" by e-mail
    # nothing listens on the port yet: one attempt, then failed
    assert {o.result for o in deliveries.deliver_due(sessions, settings_for(smtp.port, max_attempts=1))} == {"failed"}
    by_target = {d.target: d.id for d in deliveries_of(sessions)}
    rampura_id, kheri_id = by_target["secretary@rampura.example"], by_target["secretary@kheri.example"]

    def shown(username: str) -> tuple[set[str], str]:
        login(client, username)
        text = client.get("/admin/deliveries").get_data(as_text=True)
        client.post("/logout")
        return {case.case_number for case in (rampura, kheri) if case.case_number in text}, text

    assert shown("admin")[0] == {rampura.case_number, kheri.case_number}  # installation-wide
    assert shown("admin-sam1")[0] == {rampura.case_number, kheri.case_number}  # both Panchayats are in SAM1
    seen, text = shown("admin-rmp")
    assert seen == {rampura.case_number} and "secretary@kheri.example" not in text and "failed (1)" in text
    seen, text = shown("admin-sam2")
    assert seen == set() and "No deliveries." in text and "failed (0)" in text

    # sending again: another scope's delivery is not found and stays failed; one's own is due now
    login(client, "admin-rmp")
    assert client.post(f"/admin/deliveries/{kheri_id}/retry").status_code == 404
    response = client.post(f"/admin/deliveries/{rampura_id}/retry")
    assert response.status_code == 302 and response.headers["Location"].endswith("/admin/deliveries")
    assert {d.id: d.status for d in deliveries_of(sessions)} == {rampura_id: "pending", kheri_id: "failed"}
    refused = client.post(f"/admin/deliveries/{rampura_id}/retry", follow_redirects=True)
    assert "only a failed or waiting delivery" not in refused.get_data(as_text=True)  # pending: brought forward
    smtp.start()
    outcomes = deliveries.deliver_due(sessions, settings_for(smtp.port))
    assert [(o.delivery_id, o.result) for o in outcomes] == [(rampura_id, "sent")]
    assert [rcpt for _, rcpt, _ in smtp.mailbox.messages] == [["secretary@rampura.example"]]
    again = client.post(f"/admin/deliveries/{rampura_id}/retry", follow_redirects=True).get_data(as_text=True)
    assert f"delivery {rampura_id} is sent; only a failed or waiting delivery is sent again" in again
    with sessions() as session:
        sent = session.get(Delivery, rampura_id)
        assert (sent.status, sent.attempts) == ("sent", 2)


def test_the_delivery_log_in_hindi_translates_its_own_texts_and_keeps_a_servers_error(
        client, sessions, officers, virtual_clock, hook_server):
    """On a Hindi page the statuses, channels, headings, explanation, the notification and the
    product's own error texts are Hindi; what a server answered (an HTTP reason, a socket error) stays."""
    import re

    import lxml.html

    choose(sessions, officers["secretary"], email_enabled=True, email_address="secretary@rampura.example",
           webhook_enabled=True, webhook_url=f"http://127.0.0.1:{hook_server.server_port}/hook")
    start_case(sessions, officers)
    hook_server.statuses = [500]
    release_window_passes(sessions, virtual_clock)
    unconfigured = channels.ChannelSettings(webhook_secret=SECRET, max_attempts=1,  # no SMTP host: e-mail fails
                                            webhook_allow_private=True)
    outcomes = deliveries.deliver_due(sessions, unconfigured)
    assert sorted(o.result for o in outcomes) == ["failed", "failed"]
    login(client, "admin")
    client.post("/language", data={"lang": "hi", "next": "/admin/deliveries"})
    page = client.get("/admin/deliveries")
    doc = lxml.html.fromstring(page.get_data(as_text=True))
    for node in doc.xpath("//script|//style|//head"):
        node.drop_tree()
    text = re.sub(r"\s+", " ", doc.text_content())
    assert "सूचनाओं का प्रेषण" in text and "विफल (2)" in text and "लंबित (0)" in text  # heading, statuses
    assert "ई-मेल या वेबहुक से भेजी गई हर सूचना" in text  # the explanation
    rows = {" ".join(row.xpath("td")[2].text_content().split()): [" ".join(td.text_content().split())
                                                                   for td in row.xpath("td")]
            for row in doc.xpath("//table[contains(@class,'deliveries')]/tbody/tr")}
    email, hook = rows["ई-मेल"], rows["वेबहुक"]
    assert email[1] == hook[1] == "विफल"
    notice = "RMP/2026/0001: छुड़ाने की अवधि बीत गई है; पत्रावली खुल गई है। सूचना प्रकाशित करें (नियम 130(क))।"
    assert email[5] == hook[5] == notice  # written for an English reader, shown to this Hindi one in Hindi
    assert email[9] == "ई-मेल स्थापित नहीं है (RULE130_SMTP_HOST खाली है)"
    url = f"http://127.0.0.1:{hook_server.server_port}/hook"
    assert hook[9] == f"वेबहुक {url}: HTTP 500 Internal Server Error"  # the server's reason as it said it
    for english in ("is not configured", "webhook http", "the release window"):
        assert english not in text, english
    with sessions() as session:  # stored in English, as the product wrote it
        assert sorted(d.last_error for d in session.scalars(select(Delivery))) == [
            "e-mail is not configured (RULE130_SMTP_HOST is empty)", f"webhook {url}: HTTP 500 Internal Server Error"]
    client.post("/language", data={"lang": "en", "next": "/admin/deliveries"})
    english_page = client.get("/admin/deliveries").get_data(as_text=True)
    assert "e-mail is not configured (RULE130_SMTP_HOST is empty)" in english_page
    assert f"webhook {url}: HTTP 500 Internal Server Error" in english_page
    assert channels.error_text("SMTP 127.0.0.1:25: ConnectionRefusedError: [Errno 111] Connection refused", "hi") == \
        "SMTP 127.0.0.1:25: ConnectionRefusedError: [Errno 111] Connection refused"  # a server's error: as it is
    assert channels.error_text(f"webhook {url}: timed out", "hi") == f"वेबहुक {url}: timed out"
