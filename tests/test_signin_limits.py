"""Sign-in limits that stop guessing without locking out the office (webapp.web.access.signin_limits):
failed sign-ins counted per (address, name), per address and per name; a browser where the officer
signed in before held only to its own count; the same answer for known and unknown names; the
proxy's client address trusted only as configured (TRUSTED_PROXIES, Werkzeug's ProxyFix).

Real app, real database; each app has its own in-memory limiter counts.
"""

from __future__ import annotations

import statistics
import time

import pytest
from sqlalchemy import select

from webapp.services.people import users
from webapp.store.models import AuditEntry

from .conftest import FAST_HASH, PASSWORD
from .test_web_pages import text_of

WRONG = "not the password at all"


@pytest.fixture
def make_app(database_url, officers):
    """``make_app(**config)``: an app on the test database with the default limits unless given."""
    from webapp import create_app
    made = []

    def make(**config):
        app = create_app({"TESTING": True, "DATABASE_URL": database_url, "SECRET_KEY": "test",
                          "WTF_CSRF_ENABLED": False, "PASSWORD_HASH_METHOD": FAST_HASH, **config})
        made.append(app)
        return app

    yield make
    for app in made:
        app.extensions["rule130.engine"].dispose()


def _post(client, username, password, address="10.0.0.5", **headers):
    return client.post("/login", data={"username": username, "password": password},
                       environ_base={"REMOTE_ADDR": address}, headers=headers)


def test_failures_for_a_made_up_name_do_not_stop_the_secretary_at_the_same_address(make_app):
    app = make_app()
    stranger, secretary = app.test_client(), app.test_client()
    assert [_post(stranger, "made-up-name", WRONG).status_code for _ in range(10)] == [200] * 5 + [429] * 5
    assert _post(secretary, "sec", PASSWORD).status_code == 302


def test_guessing_one_officers_password_is_stopped_for_that_name_at_that_address(make_app):
    app = make_app()
    guesser = app.test_client()
    assert [_post(guesser, "sec", WRONG).status_code for _ in range(5)] == [200] * 5
    refused = _post(guesser, "sec", PASSWORD)  # the right password too: guessing must not be told apart
    assert refused.status_code == 429
    assert "Too many failed sign-ins for this user name. Wait a few minutes and try again." in text_of(refused)
    assert _post(app.test_client(), "pk", PASSWORD).status_code == 302  # another officer, the same address
    assert _post(app.test_client(), "sec", PASSWORD, address="10.0.0.9").status_code == 302  # another address


def test_a_browser_where_the_officer_signed_in_before_is_not_held_up_by_a_stranger(make_app):
    app = make_app(LOGIN_NAME_RATE_LIMIT="3 per minute")
    phone = app.test_client()
    assert _post(phone, "sec", PASSWORD).status_code == 302
    phone.post("/logout")
    stranger = app.test_client()
    assert [_post(stranger, "sec", WRONG).status_code for _ in range(6)] == [200] * 3 + [429] * 3
    for n in range(3):  # and from other addresses: the name's own count is full
        assert _post(app.test_client(), "sec", WRONG, address=f"10.0.1.{n}").status_code == 429
    assert _post(app.test_client(), "sec", PASSWORD, address="10.0.2.1").status_code == 429
    # her phone, at the stranger's address, signs her in
    assert _post(phone, "sec", PASSWORD).status_code == 302
    phone.post("/logout")
    # and guessing on her phone is counted on the phone: five failures, then 429
    assert [_post(phone, "sec", WRONG).status_code for _ in range(6)] == [200] * 5 + [429]


def test_the_device_cookie_is_signed_httponly_and_sent_to_the_sign_in_form_only(make_app):
    app = make_app(LOGIN_NAME_RATE_LIMIT="1 per minute")
    response = _post(app.test_client(), "sec", PASSWORD)
    cookie = next(v for v in response.headers.getlist("Set-Cookie") if v.startswith("rule130_device="))
    flags = {part.strip().split("=")[0].lower(): part.strip() for part in cookie.split(";")}
    assert flags["path"] == "Path=/login" and "httponly" in flags and "secure" in flags
    assert flags["samesite"] == "SameSite=Lax" and flags["max-age"] == f"Max-Age={90 * 86400}"
    assert _post(app.test_client(), "sec", WRONG).status_code == 200
    forged = app.test_client()  # a cookie not signed with the secret key trusts nothing
    forged.set_cookie("rule130_device", '{"n": "x", "u": ["sec"]}', path="/login")
    assert _post(forged, "sec", PASSWORD).status_code == 429


def test_a_wrong_password_and_an_unknown_name_get_the_same_answers(make_app):
    app = make_app()
    answers = {}
    for name in ("sec", "no-such-officer"):
        client = app.test_client()
        pages = [_post(client, name, WRONG) for _ in range(6)]
        answers[name] = [(page.status_code, text_of(page).replace(name, "NAME")) for page in pages]
    assert answers["sec"] == answers["no-such-officer"]
    assert [status for status, _ in answers["sec"]] == [200] * 5 + [429]
    assert "The user name or the password is not right. Try again." in answers["sec"][0][1]


def test_an_unknown_name_costs_a_password_hash_like_a_known_one(sessions, officers):
    """The same work either way: the time does not tell a known name (scrypt hashes) from an unknown one."""
    with sessions() as session:
        users.create_user(session, "timed", PASSWORD, "secretary", panchayat_code="RMP")  # scrypt
        session.commit()

    def seconds(name):
        with sessions() as session:
            started = time.perf_counter()
            assert users.sign_in(session, name, WRONG) is None
            return time.perf_counter() - started

    known = statistics.median(seconds("timed") for _ in range(5))
    unknown = statistics.median(seconds("nobody-at-all") for _ in range(5))
    assert 0.5 < unknown / known < 2, (known, unknown)


def test_one_address_trying_many_names_meets_the_address_ceiling(make_app):
    app = make_app(LOGIN_ADDRESS_RATE_LIMIT="3 per minute")
    client = app.test_client()
    assert [_post(client, f"name{n}", WRONG).status_code for n in range(4)] == [200, 200, 200, 429]
    assert "Too many sign-in attempts from your address" in text_of(_post(client, "name9", WRONG))
    assert _post(client, "sec", PASSWORD, address="10.0.0.6").status_code == 302


def test_forwarded_addresses_are_ignored_unless_proxies_are_trusted(make_app):
    app = make_app(LOGIN_RATE_LIMIT="2 per minute")
    assert app.config["TRUSTED_PROXIES"] == 0  # the default
    client = app.test_client()
    for forwarded in ("198.51.100.1", "198.51.100.2"):  # made up by the client: not believed
        assert _post(client, "sec", WRONG, address="10.0.0.5", **{"X-Forwarded-For": forwarded}).status_code == 200
    assert _post(client, "sec", PASSWORD, **{"X-Forwarded-For": "198.51.100.3"}).status_code == 429


def test_behind_a_trusted_proxy_each_client_has_its_own_count(make_app, sessions):
    app = make_app(LOGIN_RATE_LIMIT="2 per minute", TRUSTED_PROXIES=1)
    proxy = "127.0.0.1"  # every request comes from the proxy
    client = app.test_client()
    for _ in range(2):
        assert _post(client, "sec", WRONG, address=proxy, **{"X-Forwarded-For": "198.51.100.1"}).status_code == 200
    assert _post(client, "sec", PASSWORD, address=proxy, **{"X-Forwarded-For": "198.51.100.1"}).status_code == 429
    # the client's own first entry is not believed: the proxy's last one is the address
    office = _post(app.test_client(), "sec", PASSWORD, address=proxy,
                   **{"X-Forwarded-For": "198.51.100.1, 203.0.113.7"})
    assert office.status_code == 302
    with sessions() as session:
        entry = session.scalars(select(AuditEntry).where(AuditEntry.kind == "auth.sign_in")
                                .order_by(AuditEntry.id.desc())).first()
        assert '"address":"203.0.113.7"' in entry.detail_json


def test_trusted_proxies_must_be_a_whole_number(database_url, monkeypatch):
    from webapp import create_app
    monkeypatch.setenv("RULE130_TRUSTED_PROXIES", "yes")
    with pytest.raises(ValueError, match="RULE130_TRUSTED_PROXIES must be a whole number"):
        create_app({"TESTING": True, "DATABASE_URL": database_url, "SECRET_KEY": "test"})
