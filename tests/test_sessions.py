"""Signed-in sessions end with their officer: signing out, a new password, deactivation and a change
of role or Panchayat end every session of the user at once (in every server process); a session
ends after the idle timeout and after its absolute lifetime (webapp.web.access.sessions,
webapp.store.session_keys).

Real app, real database (SQLite, or PostgreSQL with RULE130_TEST_POSTGRES); time moves with the
virtual clock, or with time-machine where Flask's own signature age is checked.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from sqlalchemy import select

from webapp.services.notify import preferences
from webapp.services.people import users
from webapp.store.models import Panchayat, User

from .conftest import FAST_HASH, PASSWORD
from .test_web_pages import start_case_on_page, text_of


@pytest.fixture
def default_client(database_url, officers):
    """A client of an app with the default idle timeout and lifetime (the shared ``app`` fixture's
    sessions last a year, for tests that move the clock by days)."""
    from webapp import create_app
    app = create_app({"TESTING": True, "DATABASE_URL": database_url, "SECRET_KEY": "test",
                      "WTF_CSRF_ENABLED": False, "PASSWORD_HASH_METHOD": FAST_HASH})
    yield app.test_client()
    app.extensions["rule130.engine"].dispose()


def _sign_in(client, username: str = "sec"):
    response = client.post("/login", data={"username": username, "password": PASSWORD})
    assert response.status_code == 302, response.get_data(as_text=True)[:300]
    return response


def _copy_cookie(source, target) -> None:
    """What someone who copied the session cookie off a shared phone holds."""
    target.set_cookie("session", source.get_cookie("session").value)


def _signed_out(response) -> bool:
    return response.status_code == 302 and "/login" in response.headers["Location"]


def test_a_copied_cookie_no_longer_reads_or_writes_after_sign_out(app, client, sessions, virtual_clock):
    case_id = start_case_on_page(client, virtual_clock)
    copy = app.test_client()
    _copy_cookie(client, copy)
    assert copy.get("/tasks").status_code == 200 and copy.get(f"/cases/{case_id}").status_code == 200
    client.post("/logout")
    assert _signed_out(copy.get("/tasks"))
    assert _signed_out(copy.get(f"/cases/{case_id}"))
    saved = copy.post("/preferences", data={"email_enabled": "1", "email_address": "thief@example.org"})
    assert _signed_out(saved)
    with sessions() as session:
        keeper = session.scalar(select(User).where(User.username == "pk"))
        assert preferences.get(session, keeper).email_address != "thief@example.org"


def test_signing_out_on_one_device_ends_the_session_on_every_other(app, officers):
    phone, desk, other_officer = app.test_client(), app.test_client(), app.test_client()
    _sign_in(phone)
    _sign_in(desk)
    _sign_in(other_officer, "pk")
    assert desk.get("/tasks").status_code == 200
    phone.post("/logout")
    response = desk.get("/tasks", follow_redirects=True)
    assert "Your session has ended. Please sign in again." in text_of(response)
    assert other_officer.get("/tasks").status_code == 200  # another officer's session is their own
    _sign_in(desk)  # signing in again works at once
    assert desk.get("/tasks").status_code == 200


def test_signing_out_in_one_server_process_ends_the_session_in_another(database_url, officers):
    """The key lives in the database: two application processes (two apps) see the same."""
    from webapp import create_app
    config = {"TESTING": True, "DATABASE_URL": database_url, "SECRET_KEY": "test", "WTF_CSRF_ENABLED": False,
              "PASSWORD_HASH_METHOD": FAST_HASH}
    first, second = create_app(config), create_app(config)
    try:
        one, two = first.test_client(), second.test_client()
        _sign_in(one)
        _copy_cookie(one, two)
        assert two.get("/tasks").status_code == 200
        one.post("/logout")
        assert _signed_out(two.get("/tasks"))
    finally:
        first.extensions["rule130.engine"].dispose()
        second.extensions["rule130.engine"].dispose()


def _set_password(user: User, _session) -> None:
    user.password_hash = users.generate_password_hash("a new password for Rampura", method=FAST_HASH)


def _deactivate(user: User, _session) -> None:
    user.active = False


def _new_role(user: User, _session) -> None:
    user.role = "sarpanch"


def _new_panchayat(user: User, session) -> None:
    user.panchayat_id = session.scalar(select(Panchayat.id).where(Panchayat.code == "KHR"))


@pytest.mark.parametrize("change", [_set_password, _deactivate, _new_role, _new_panchayat])
def test_a_new_password_deactivation_or_a_new_role_or_panchayat_ends_every_session(app, sessions, change):
    phone, desk = app.test_client(), app.test_client()
    _sign_in(phone)
    _sign_in(desk)
    with sessions() as session:  # as the command line, or an administrator's page, would
        change(session.scalar(select(User).where(User.username == "sec")), session)
        session.commit()
    for client in (phone, desk):
        assert _signed_out(client.get("/tasks"))


def test_a_change_that_ends_nothing_keeps_the_sessions(app, sessions):
    client = app.test_client()
    _sign_in(client)
    with sessions() as session:
        user = session.scalar(select(User).where(User.username == "sec"))
        user.display_name, user.language, user.role = "Secretary R.", "hi", "secretary"  # the same role
        session.commit()
    assert client.get("/tasks").status_code == 200


def test_a_stronger_hash_at_sign_in_keeps_the_officers_other_sessions(app, database_url, sessions):
    from webapp import create_app
    desk = app.test_client()  # the fixture's app keeps the fixture's pbkdf2 hashes
    _sign_in(desk)
    with sessions() as session:
        key = session.scalar(select(User.session_key).where(User.username == "sec"))
    scrypt_app = create_app({"TESTING": True, "DATABASE_URL": database_url, "SECRET_KEY": "test",
                             "WTF_CSRF_ENABLED": False})  # scrypt: the pbkdf2 hash is replaced at sign-in
    try:
        phone = scrypt_app.test_client()
        _sign_in(phone)
        with sessions() as session:
            after = session.scalar(select(User).where(User.username == "sec"))
            assert after.password_hash.startswith("scrypt:") and after.session_key == key
        assert desk.get("/tasks").status_code == 200 and phone.get("/tasks").status_code == 200
    finally:
        scrypt_app.extensions["rule130.engine"].dispose()


def test_deactivation_also_ends_the_users_api_tokens(client, sessions):
    with sessions() as session:
        token = users.create_token(session, "sec")
        session.commit()
    headers = {"Authorization": f"Bearer {token}"}
    assert client.get("/api/v1/tasks", headers=headers).status_code == 200
    with sessions() as session:
        session.scalar(select(User).where(User.username == "sec")).active = False
        session.commit()
    assert client.get("/api/v1/tasks", headers=headers).status_code == 401


def test_a_session_unused_for_the_idle_timeout_ends(default_client, virtual_clock):
    assert default_client.application.config["SESSION_IDLE_MINUTES"] == 30  # the default, for shared phones
    _sign_in(default_client)
    for _ in range(3):  # in use: 29 minutes between pages, for 87 minutes
        virtual_clock.advance(timedelta(minutes=29))
        assert default_client.get("/tasks").status_code == 200
    virtual_clock.advance(timedelta(minutes=30, seconds=1))
    response = default_client.get("/tasks")
    assert _signed_out(response)
    page = text_of(default_client.get(response.headers["Location"]))
    assert "You were signed out after 30 minutes without use. Please sign in again." in page
    assert _signed_out(default_client.get("/tasks"))  # the user is forgotten, not only refused once


def test_a_session_ends_after_its_lifetime_however_busy(default_client, virtual_clock):
    assert default_client.application.config["SESSION_LIFETIME_HOURS"] == 12
    _sign_in(default_client)
    for _ in range(47):  # a page every 15 minutes for 11 h 45 min
        virtual_clock.advance(timedelta(minutes=15))
        assert default_client.get("/tasks").status_code == 200
    virtual_clock.advance(timedelta(minutes=15, seconds=1))
    response = default_client.get("/tasks")
    assert _signed_out(response)
    assert "a session lasts at most 12 hours" in text_of(default_client.get(response.headers["Location"]))


def test_the_timeouts_are_set_in_configuration(database_url, officers, virtual_clock, monkeypatch):
    from webapp import create_app
    monkeypatch.setenv("RULE130_SESSION_IDLE_MINUTES", "5")
    app = create_app({"TESTING": True, "DATABASE_URL": database_url, "SECRET_KEY": "test",
                      "WTF_CSRF_ENABLED": False, "PASSWORD_HASH_METHOD": FAST_HASH, "SESSION_LIFETIME_HOURS": 1})
    try:
        assert (app.config["SESSION_IDLE_MINUTES"], app.config["SESSION_LIFETIME_HOURS"]) == (5, 1)
        assert app.config["PERMANENT_SESSION_LIFETIME"] == timedelta(hours=1)
        client = app.test_client()
        _sign_in(client)
        virtual_clock.advance(timedelta(minutes=5, seconds=1))
        assert _signed_out(client.get("/tasks"))
    finally:
        app.extensions["rule130.engine"].dispose()


@pytest.mark.parametrize("value", ["0", "-3", "half an hour"])
def test_a_timeout_that_is_not_a_whole_number_of_minutes_is_refused_at_start(database_url, monkeypatch, value):
    from webapp import create_app
    monkeypatch.setenv("RULE130_SESSION_IDLE_MINUTES", value)
    with pytest.raises(ValueError, match="RULE130_SESSION_IDLE_MINUTES must be a whole number of at least 1"):
        create_app({"TESTING": True, "DATABASE_URL": database_url, "SECRET_KEY": "test"})


def test_a_cookie_signed_30_days_ago_is_refused(default_client):
    _sign_in(default_client)
    assert default_client.get("/tasks").status_code == 200
    with time_machine.travel(datetime.now(UTC) + timedelta(days=30)):
        assert _signed_out(default_client.get("/tasks"))


def test_a_session_from_before_session_keys_is_refused(client, officers):
    """A cookie that names only the user's id (as sessions did before) signs nobody in."""
    _sign_in(client)
    with client.session_transaction() as cookie:
        assert cookie["_user_id"].startswith(f"{officers['secretary'].id}:")
        cookie["_user_id"] = str(officers["secretary"].id)
    assert _signed_out(client.get("/tasks"))
