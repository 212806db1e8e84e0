"""Paths no row can answer: a NUL or another control character in a text part, or a number beyond
what an id column holds, answer 404 on every route (routing refuses them before any view or query
runs) — never 500. On PostgreSQL, where a NUL in a query is an error, not "no row"."""

from __future__ import annotations

import re

import pytest

from webapp.services.people import users

from .conftest import FAST_HASH, PASSWORD

PART = re.compile(r"<(?:(\w+)(?:\([^)]*\))?:)?(\w+)>")
TEXT_VALUES = ("%00", "RMP%00", "a%01b", "%7F")
NUMBER_VALUES = ("2147483648", "99999999999999999999")


def _paths(rule, values) -> list[str]:
    """``rule`` with each of its parts replaced by each value (the other parts by a plain one)."""
    parts = PART.findall(rule.rule)
    plain = {name: "1" if converter == "int" else "x" for converter, name in parts}
    out = []
    for converter, name in parts:
        for value in values(converter):
            out.append(PART.sub(lambda m, value=value, name=name: value if m.group(2) == name else plain[m.group(2)],
                                rule.rule))
    return out


@pytest.fixture
def root(app, sessions):
    """An installation-wide administrator (every page is open to them) signed in, and their API token."""
    with sessions() as session:
        users.create_user(session, "root", PASSWORD, "administrator", password_method=FAST_HASH)
        token = users.create_token(session, "root")
        session.commit()
    client = app.test_client()
    assert client.post("/login", data={"username": "root", "password": PASSWORD}).status_code == 302
    return client, token


def test_a_control_character_or_an_oversized_id_in_any_path_is_not_found(app, root):
    app.testing, app.config["PROPAGATE_EXCEPTIONS"] = False, False  # answered as a user gets it
    client, token = root
    checked, wrong = 0, []
    for rule in app.url_map.iter_rules():
        paths = _paths(rule, lambda converter: NUMBER_VALUES if converter == "int" else TEXT_VALUES)
        for path in paths:
            for method in sorted((rule.methods or set()) - {"HEAD", "OPTIONS"}):
                headers = {"Authorization": f"Bearer {token}"} if path.startswith("/api/") else {}
                response = client.open(path, method=method, headers=headers)
                checked += 1
                if response.status_code != 404:
                    wrong.append(f"{method} {path}: {response.status_code}")
    assert checked > 150, checked  # every route with a part was tried
    assert not wrong, "\n".join(wrong)


def test_a_refused_path_says_not_found_in_the_api_and_on_a_page(root):
    client, token = root
    response = client.get("/api/v1/cases/%00", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 404
    assert response.get_json()["error"] == {"code": "not_found", "message": "no API endpoint /api/v1/cases/\x00"}
    page = client.get("/admin/processes/rule130_case%00/versions")
    assert page.status_code == 404 and "There is no such page" in page.get_data(as_text=True)


def test_the_largest_id_still_reaches_its_view(root):
    client, _token = root
    page = client.get("/admin/incidents/2147483647")
    assert page.status_code == 404 and "no incident 2147483647" in page.get_data(as_text=True)  # the view's answer
    assert client.get("/admin/incidents/2147483648").status_code == 404  # no route: the view is not reached
    assert "no incident" not in client.get("/admin/incidents/2147483648").get_data(as_text=True)
