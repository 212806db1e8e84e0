"""The password rule (zxcvbn, webapp.services.people.passwords) wherever a password is set: rule130
create-user and set-password, the officer's own password page; deactivate-user; each ends the
user's sessions. Real app, real database, the real command line (click's runner)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from sqlalchemy import select
from werkzeug.security import check_password_hash

from webapp.cli import main
from webapp.errors import Refused
from webapp.services.people import passwords, users
from webapp.store.models import User

from .conftest import PASSWORD
from .test_web_pages import text_of

NEW = "tamarind kite seventeen"


@pytest.mark.parametrize("password, reason", [
    ("12345678", "it is one of the passwords people use most"),
    ("password", "it is one of the passwords people use most"),
    ("P@ssw0rd1", "it is one of the passwords people use most"),
    ("qwertyuiop", "it is one of the passwords people use most"),
    ("asdfghjkl;'", "it is a row of neighbouring keys on the keyboard"),
    ("zzzzzzzzzzzz", "it repeats the same characters"),
    ("abcdefghijk", "it is a run such as abcd or 1234"),
    ("rule130-demo", "it is made of the user name, the officer's name or the name of this system"),
    ("Rampura2026", "it is made of the user name, the officer's name or the name of this system"),
    ("newsec-2026", "it is made of the user name, the officer's name or the name of this system"),
])
def test_common_and_guessable_passwords_are_refused_with_the_reason(sessions, officers, password, reason):
    with sessions() as session:
        with pytest.raises(Refused) as refused:
            users.create_user(session, "newsec", password, "secretary", panchayat_code="RMP")
        assert refused.value.message == (f"this password is too easy to guess: {reason}. Use three or four words "
                                         "that do not belong together, or a longer sentence.")
        assert refused.value.field_errors == {"password": "too easy to guess"}
        assert session.scalar(select(User).where(User.username == "newsec")) is None


@pytest.mark.parametrize("password, message", [
    ("short1!", "the password must have at least 8 characters"),
    ("x" * 201, "the password must have at most 200 characters"),
])
def test_a_password_too_short_or_too_long_is_refused(password, message):
    with pytest.raises(Refused, match=message):
        passwords.check(password)


def test_the_test_and_demo_passwords_pass_the_rule():
    for password in (PASSWORD, "kanji-house-demo", "long enough password"):
        passwords.check(password, ["keeper", "Ramesh", "Rampura", "RMP"])


def _write(tmp_path, text):
    path = tmp_path / "password.txt"
    path.write_text(text + "\n")
    return str(path)


def test_create_user_on_the_command_line_refuses_a_weak_password(database_url, officers, tmp_path):
    result = CliRunner().invoke(main, ["create-user", "clerk", "--role", "secretary", "--panchayat", "RMP",
                                       "--password-file", _write(tmp_path, "password"), "--database", database_url])
    assert result.exit_code == 2
    assert "refused: this password is too easy to guess: it is one of the passwords people use most" in result.output
    result = CliRunner().invoke(main, ["create-user", "clerk", "--role", "secretary", "--panchayat", "RMP",
                                       "--password-file", _write(tmp_path, NEW), "--database", database_url])
    assert result.exit_code == 0, result.output


def _signed_in(app, username="sec", password=PASSWORD):
    client = app.test_client()
    assert client.post("/login", data={"username": username, "password": password}).status_code == 302
    return client


def test_set_password_on_the_command_line_checks_the_rule_and_ends_the_sessions(app, database_url, sessions,
                                                                                tmp_path):
    client = _signed_in(app)
    result = CliRunner().invoke(main, ["set-password", "sec", "--password-file", _write(tmp_path, "12345678"),
                                       "--database", database_url])
    assert result.exit_code == 2 and "too easy to guess" in result.output
    assert client.get("/tasks").status_code == 200  # refused: nothing changed
    result = CliRunner().invoke(main, ["set-password", "sec", "--password-file", _write(tmp_path, NEW),
                                       "--database", database_url])
    assert result.exit_code == 0, result.output
    assert client.get("/tasks").status_code == 302
    with sessions() as session:
        assert check_password_hash(session.scalar(select(User.password_hash).where(User.username == "sec")), NEW)
    _signed_in(app, password=NEW)
    result = CliRunner().invoke(main, ["set-password", "nobody", "--password-file", _write(tmp_path, NEW),
                                       "--database", database_url])
    assert result.exit_code == 2 and "refused: no user nobody" in result.output


def test_deactivate_user_ends_the_sessions_and_tokens_and_sign_in_answers_as_for_a_wrong_password(
        app, database_url, sessions):
    client = _signed_in(app)
    with sessions() as session:
        token = users.create_token(session, "sec")
        session.commit()
    result = CliRunner().invoke(main, ["deactivate-user", "sec", "--database", database_url])
    assert result.exit_code == 0, result.output
    assert client.get("/tasks").status_code == 302
    assert client.get("/api/v1/tasks", headers={"Authorization": f"Bearer {token}"}).status_code == 401
    refused = app.test_client().post("/login", data={"username": "sec", "password": PASSWORD})
    assert refused.status_code == 200 and "The user name or the password is not right" in text_of(refused)
    again = CliRunner().invoke(main, ["deactivate-user", "sec", "--database", database_url])
    assert again.exit_code == 2 and "refused: the user sec is already inactive" in again.output


def test_the_password_page_changes_the_password_and_ends_the_other_sessions(app, sessions):
    desk, phone = _signed_in(app), _signed_in(app)
    assert "Change your password" in text_of(desk.get("/account/password"))
    response = desk.post("/account/password", data={"current": PASSWORD, "password": NEW, "again": NEW})
    assert response.status_code == 302 and response.headers["Location"].endswith("/tasks")
    assert "Your password is changed. You are signed out on every other phone and computer." in text_of(
        desk.get("/tasks"))
    assert phone.get("/tasks").status_code == 302  # the other session ended
    assert desk.get("/tasks").status_code == 200  # this one goes on
    assert app.test_client().post("/login", data={"username": "sec", "password": PASSWORD}).status_code == 200
    _signed_in(app, password=NEW)


@pytest.mark.parametrize("form, message, field", [
    ({"current": "not it at all", "password": NEW, "again": NEW}, "the present password is not right", "current"),
    ({"current": PASSWORD, "password": NEW, "again": NEW + "!"}, "the two new passwords are not the same", "again"),
    ({"current": PASSWORD, "password": "password1", "again": "password1"},
     "this password is too easy to guess: it is one of the passwords people use most", "password"),
    ({"current": PASSWORD, "password": PASSWORD, "again": PASSWORD},
     "the new password is the present one; choose another", "password"),
])
def test_the_password_page_refuses_with_the_reason_and_changes_nothing(app, sessions, form, message, field):
    client = _signed_in(app)
    with sessions() as session:
        before = session.scalar(select(User).where(User.username == "sec"))
    response = client.post("/account/password", data=form)
    assert response.status_code == 422
    assert message in text_of(response)
    assert f'id="{field}-error"' in response.get_data(as_text=True)
    with sessions() as session:
        after = session.scalar(select(User).where(User.username == "sec"))
        assert (after.password_hash, after.session_key) == (before.password_hash, before.session_key)
    assert client.get("/tasks").status_code == 200


def test_the_password_page_speaks_hindi(app, sessions):
    client = _signed_in(app)
    client.post("/language", data={"lang": "hi", "next": "/account/password"})
    response = client.post("/account/password", data={"current": PASSWORD, "password": "password1",
                                                      "again": "password1"})
    page = text_of(response)
    assert response.status_code == 422
    assert "पासवर्ड बदलें" in page and "too easy" not in page


def test_wrong_present_passwords_on_the_password_page_are_limited(app):
    client = _signed_in(app)
    statuses = [client.post("/account/password", data={"current": f"guess number {n}", "password": NEW,
                                                       "again": NEW}).status_code for n in range(6)]
    assert statuses == [422] * 5 + [429]


def test_demo_data_uses_a_password_that_passes_the_rule(database_url, sessions):
    result = CliRunner().invoke(main, ["demo-data", "--database", database_url])
    assert result.exit_code == 0, result.output
    with sessions() as session:
        assert users.authenticate(session, "keeper", "kanji-house-demo") is not None


def test_new_passwords_the_rule_refuses_are_not_guesses_and_never_lock_the_officer_out(app):
    client = _signed_in(app)
    weak = [client.post("/account/password", data={"current": PASSWORD, "password": "password1",
                                                   "again": "password1"}).status_code for _ in range(6)]
    differ = client.post("/account/password", data={"current": PASSWORD, "password": NEW, "again": NEW + "x"})
    assert weak == [422] * 6 and differ.status_code == 422
    assert client.post("/account/password", data={"current": PASSWORD, "password": NEW,
                                                  "again": NEW}).status_code == 302
