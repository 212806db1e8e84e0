"""The OpenAPI description is in step with the routes; API tokens are scoped, revocable, hashed.

Real SQLite (or PostgreSQL), the real app and command line; no mocks.
"""

from __future__ import annotations

import hashlib

import pytest
from click.testing import CliRunner
from sqlalchemy import select

from webapp.cli import main as cli
from webapp.services.people import users
from webapp.store.models import ApiToken, User
from webapp.web.api import openapi

from .conftest import PASSWORD


def test_every_api_route_is_described_and_every_description_is_served(app):
    served_only, described_only = openapi.undocumented(app)
    assert not served_only, (
        "these API routes are not in the OpenAPI description: add each (method, path, parameters, "
        f"request body, responses) to webapp/web/openapi.yaml: {sorted(served_only)}")
    assert not described_only, (
        "webapp/web/openapi.yaml describes operations the app does not serve: remove them or add the "
        f"route: {sorted(described_only)}")
    # the check itself sees the real routes (a broken iteration would pass vacuously)
    assert ("POST", "/api/v1/cases/{case_ref}/tasks/{task_id}") in openapi.route_operations(app)
    assert len(openapi.route_operations(app)) >= 11


def test_the_description_is_served_without_a_token(client):
    response = client.get("/api/v1/openapi.json")
    assert response.status_code == 200
    body = response.json
    assert body["openapi"].startswith("3.")
    assert body["paths"]["/api/v1/cases"]["post"]["operationId"] == "start_case"
    assert body["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"


def test_the_path_conversion_matches_flask_rules():
    assert openapi.openapi_path("/api/v1/cases/<path:case_ref>/tasks/<task_id>") == \
        "/api/v1/cases/{case_ref}/tasks/{task_id}"
    assert openapi.openapi_path("/x/<int(signed=True):n>") == "/x/{n}"


def _me(client, token):
    return client.get("/api/v1/me", headers={"Authorization": f"Bearer {token}"})


def test_a_token_is_stored_hashed_and_scoped_to_its_users_role_and_panchayat(client, sessions):
    with sessions() as session:
        row, token = users.issue_token(session, "sec", "accounts export")
        session.commit()
        stored = session.get(ApiToken, row.id)
        sec = session.scalar(select(User).where(User.username == "sec"))
        assert stored.token_hash == hashlib.sha256(token.encode()).hexdigest()
        assert token not in (stored.token_hash, stored.label)
        assert (stored.role, stored.panchayat_id) == ("secretary", sec.panchayat_id)
    assert _me(client, token).json["role"] == "secretary"


def test_a_token_stops_working_when_its_user_changes_role_or_panchayat(client, sessions):
    with sessions() as session:
        token = users.create_token(session, "sec")
        other = users.create_token(session, "sar")
        session.commit()
    assert _me(client, token).status_code == 200
    with sessions() as session:
        sec = session.scalar(select(User).where(User.username == "sec"))
        sec.role = "sarpanch"
        sar = session.scalar(select(User).where(User.username == "sar"))
        sar.panchayat_id = session.scalar(select(User.panchayat_id).where(User.username == "sec-khr"))
        session.commit()
    assert _me(client, token).status_code == 401
    assert _me(client, other).status_code == 401


def test_revoke_token_on_the_command_line(client, sessions, database_url):
    runner = CliRunner()
    made = runner.invoke(cli, ["create-token", "pk", "--label", "scale", "--database", database_url])
    assert made.exit_code == 0, made.output
    token = made.stdout.strip().splitlines()[-1]
    assert _me(client, token).status_code == 200
    listed = runner.invoke(cli, ["list-tokens", "--database", database_url])
    line = next(line for line in listed.stdout.splitlines() if "\tpk\t" in line)
    token_id = line.split("\t")[0]
    assert line.endswith("\tactive\tscale") and token not in listed.stdout
    revoked = runner.invoke(cli, ["revoke-token", token_id, "--database", database_url])
    assert revoked.exit_code == 0 and f"token {token_id} revoked" in revoked.stdout
    response = _me(client, token)
    assert response.status_code == 401 and response.json["error"]["code"] == "unauthorized"
    again = runner.invoke(cli, ["revoke-token", token_id, "--database", database_url])
    assert again.exit_code == 2 and "already revoked" in again.stderr
    unknown = runner.invoke(cli, ["revoke-token", "999999", "--database", database_url])
    assert unknown.exit_code == 2 and "no API token 999999" in unknown.stderr


def _login(client, username):
    response = client.post("/login", data={"username": username, "password": PASSWORD})
    assert response.status_code == 302, response.get_data(as_text=True)


def test_an_administrator_revokes_a_token_on_the_tokens_page(app, client, sessions):
    with sessions() as session:
        row, token = users.issue_token(session, "pk", "weighbridge")
        session.commit()
    _login(client, "admin")
    page = client.get("/admin/tokens")
    assert page.status_code == 200 and "weighbridge" in page.get_data(as_text=True)
    assert token not in page.get_data(as_text=True)
    response = client.post(f"/admin/tokens/{row.id}/revoke")
    assert response.status_code == 302
    assert _me(client, token).status_code == 401
    assert "revoked" in client.get("/admin/tokens").get_data(as_text=True)
    assert client.post(f"/admin/tokens/{row.id}/revoke").status_code == 422
    assert client.post("/admin/tokens/99999999999999999999/revoke").status_code == 404


@pytest.mark.parametrize("username", ["sec", "pk", "app"])
def test_only_administrators_open_the_tokens_page(client, username):
    _login(client, username)
    assert client.get("/admin/tokens").status_code == 403


def test_a_panchayat_administrator_sees_and_revokes_only_their_panchayats_tokens(client, sessions):
    with sessions() as session:
        users.create_user(session, "admin-khr", PASSWORD, "administrator", panchayat_code="KHR",
                          password_method="pbkdf2:sha256:1000")
        rmp, _ = users.issue_token(session, "sec", "rmp")
        khr, khr_token = users.issue_token(session, "sec-khr", "khr")
        session.commit()
    _login(client, "admin-khr")
    page = client.get("/admin/tokens").get_data(as_text=True)
    assert "sec-khr" in page and "<td>sec</td>" not in page
    assert client.post(f"/admin/tokens/{rmp.id}/revoke").status_code == 404
    assert client.post(f"/admin/tokens/{khr.id}/revoke").status_code == 302
    assert _me(client, khr_token).status_code == 401


def test_the_tokens_page_needs_a_sign_in(client):
    response = client.get("/admin/tokens")
    assert response.status_code == 302 and "/login" in response.headers["Location"]
