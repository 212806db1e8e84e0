"""Sign-in hardening and security headers: session renewal, cookie flags, password rehash, and a
Content-Security-Policy the diagram pages work under (the sign-in limits: test_signin_limits.py;
how long sessions last: test_sessions.py).

Real app, real database; time moves with the virtual clock.
"""

from __future__ import annotations

from pathlib import Path

import lxml.html
import pytest
from sqlalchemy import select

from webapp.services.people import users
from webapp.store.models import User

from .conftest import PASSWORD

TEMPLATES = Path(__file__).resolve().parents[1] / "webapp" / "templates"


def _post_login(client, username, password):
    return client.post("/login", data={"username": username, "password": password})


def test_the_session_is_renewed_at_sign_in(client):
    with client.session_transaction() as session:
        session["planted"] = "by an attacker"
    client.get("/login")
    with client.session_transaction() as session:
        before_csrf = session.get("csrf_token")
    assert _post_login(client, "sec", PASSWORD).status_code == 302
    with client.session_transaction() as session:
        assert "planted" not in session
        assert session.get("csrf_token") != before_csrf
        assert session.get("_user_id")


def test_the_session_cookie_is_secure_httponly_and_samesite(client):
    response = _post_login(client, "sec", PASSWORD)
    cookie = next(v for v in response.headers.getlist("Set-Cookie") if v.startswith("session="))
    flags = {part.strip().split("=")[0].lower(): part.strip() for part in cookie.split(";")}
    assert "secure" in flags and "httponly" in flags and flags["samesite"] == "SameSite=Lax"


def test_secure_cookies_can_be_turned_off_for_a_plain_http_run(database_url, officers, monkeypatch):
    from webapp import create_app
    monkeypatch.setenv("RULE130_SECURE_COOKIES", "0")
    app = create_app({"TESTING": True, "DATABASE_URL": database_url, "SECRET_KEY": "test",
                      "WTF_CSRF_ENABLED": False})
    try:
        response = _post_login(app.test_client(), "sec", PASSWORD)
        cookie = next(v for v in response.headers.getlist("Set-Cookie") if v.startswith("session="))
        assert "secure" not in cookie.lower() and "httponly" in cookie.lower()
    finally:
        app.extensions["rule130.engine"].dispose()


def test_an_older_password_hash_still_works_and_is_replaced_by_scrypt_at_sign_in(database_url, sessions, officers):
    from webapp import create_app
    app = create_app({"TESTING": True, "DATABASE_URL": database_url, "SECRET_KEY": "test",
                      "WTF_CSRF_ENABLED": False})  # the default method: scrypt
    assert app.config["PASSWORD_HASH_METHOD"] == "scrypt"
    client = app.test_client()
    with sessions() as session:
        before = session.scalar(select(User.password_hash).where(User.username == "sec"))
    assert before.startswith("pbkdf2:sha256:1000$")
    assert users.needs_rehash(before)
    assert _post_login(client, "sec", PASSWORD).status_code == 302
    with sessions() as session:
        after = session.scalar(select(User.password_hash).where(User.username == "sec"))
    assert after.startswith("scrypt:32768:8:1$") and not users.needs_rehash(after)
    client.post("/logout")
    assert _post_login(client, "sec", PASSWORD).status_code == 302
    client.post("/logout")
    assert _post_login(client, "sec", "wrong password").status_code == 200
    app.extensions["rule130.engine"].dispose()


def _csp(response) -> dict[str, str]:
    header = response.headers["Content-Security-Policy"]
    return {part.strip().split(" ", 1)[0]: part.strip().split(" ", 1)[1] for part in header.split(";")}


def test_the_diagram_page_has_a_csp_it_works_under(client):
    _post_login(client, "sec", PASSWORD)
    response = client.get("/processes/current")
    assert response.status_code == 200
    csp = _csp(response)
    assert csp["default-src"] == "'self'" and csp["script-src"] == "'self'" and csp["style-src"] == "'self'"
    assert csp["object-src"] == "'none'" and csp["frame-ancestors"] == "'none'"
    assert "unsafe-inline" not in response.headers["Content-Security-Policy"]
    doc = lxml.html.fromstring(response.get_data(as_text=True))
    scripts = doc.xpath("//script")
    assert scripts and all(s.get("src", "").startswith("/") and not (s.text or "").strip() for s in scripts)
    # everything the page loads comes from this site, and is served
    for url in [s.get("src") for s in scripts] + doc.xpath("//link[@rel='stylesheet']/@href"):
        assert url.startswith("/") and not url.startswith("//")
        assert client.get(url).status_code == 200, url
    assert response.headers["X-Frame-Options"] == "DENY"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"] == "same-origin"


@pytest.mark.parametrize("path", ["/login", "/board", "/api/v1/openapi.json", "/health"])
def test_every_response_carries_the_security_headers(client, path):
    response = client.get(path)
    assert "script-src 'self'" in response.headers["Content-Security-Policy"]
    assert response.headers["X-Content-Type-Options"] == "nosniff"


def test_no_template_has_an_inline_script_style_or_event_handler():
    """The policy forbids inline code: scripts and styles live in static files."""
    problems = []
    for path in sorted(TEMPLATES.rglob("*.html")):
        if path.relative_to(TEMPLATES).as_posix() == "documents/_pdf.html":
            # never served: the page headless Chromium prints a PDF from, with JavaScript off and every
            # request refused (webapp.services.papers.pdf), so its stylesheet is inlined in it
            continue
        text = path.read_text(encoding="utf-8")
        doc = lxml.html.fromstring(text) if text.strip() else None
        if doc is None:
            continue
        for script in doc.iter("script"):
            if not script.get("src") or (script.text or "").strip():
                problems.append(f"{path.name}: inline <script>")
        if doc.xpath("//style"):
            problems.append(f"{path.name}: <style> element")
        for element in doc.iter():
            if not isinstance(element.tag, str):
                continue
            for name in element.attrib:
                if name == "style" or name.lower().startswith("on"):
                    problems.append(f"{path.name}: {name}= attribute on <{element.tag}>")
    assert not problems, problems
