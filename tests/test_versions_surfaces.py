"""Process versions on the command line, the administrators' pages and the JSON API: the same
service calls (tests/test_versions.py) behind each, administrators only, CSRF on every form."""

from __future__ import annotations

import io
import zipfile

from click.testing import CliRunner

from webapp.cli import main
from webapp.services.diagrams import repository, versions
from webapp.services.people import users

from .conftest import PASSWORD
from .driver import ONE_COW, Driver, ist_midnight
from .test_versions import BUNDLED, deploy_v2, sold_and_waiting
from .test_web_pages import login, text_of

P = repository.PROCESS_ID



def two_cases(drive, sessions, officers):
    """RMP/2026/0001 sold and waiting on its objection period with an objection to decide (cannot
    move to version 2); RMP/2026/0002 waiting for its notice (can move)."""
    sold_and_waiting(drive)
    drive.object("Objector O")
    other = Driver(sessions, officers, drive.clock)
    other.start(ONE_COW, impounded_at="2026-01-12T09:00:00+05:30")
    deploy_v2(sessions)
    return other


def cli(database_url, *args):
    return CliRunner().invoke(main, [*args, "--database", database_url], catch_exceptions=False)


# -- command line -------------------------------------------------------------------------------------

def test_cli_lists_versions_diffs_and_migrates_with_exit_codes(drive, sessions, officers, database_url):
    other = two_cases(drive, sessions, officers)
    listed = cli(database_url, "versions", "--audit")
    assert listed.exit_code == 0
    lines = listed.output.splitlines()
    assert lines[0].startswith("v2 (current)  2026-01-12 04:30 UTC  by admin  ")
    assert "1 running case(s)" not in lines[0] and "0 running case(s)  13 file(s)  — reminders" in lines[0]
    assert lines[1].startswith("v1  ") and "2 running case(s)  13 file(s)  — bundled Rule 130 process" in lines[1]
    assert "deploy   v2         by admin  reminders" in listed.output

    diff = cli(database_url, "diff", "1", "2")
    assert diff.exit_code == 0
    assert "  added    n_svc_remind_decide (serviceTask) 'Remind the sarpanch: decide the claim'" in diff.output
    assert "  changed  nf_to_decide (sequenceFlow) ''" in diff.output
    assert "  form changed  decide_objection.schema.json: fields added: remarks" in diff.output
    assert cli(database_url, "diff", "1", "7").exit_code == 2

    dry = cli(database_url, "migrate", "--to", "2", "--dry-run")
    assert dry.exit_code == 2
    assert dry.output.splitlines() == [
        "RMP/2026/0001: version 1 -> 2: cannot move: task 'Objection to decide' (n_mg_decide) changed in version 2 "
        "(its conditions, its default flow, its outgoing flows) and is already completed; task 'Decide ownership "
        "claim' (ut_decide_objection) changed in version 2 (its incoming flows) and is ready (open)",
        "RMP/2026/0002: version 1 -> 2: can move",
        "1 of 2 case(s) can move to version 2"]
    assert cli(database_url, "migrate", "--to", "2", "--dry-run", "--case", "RMP/2026/0002").exit_code == 0

    refused = cli(database_url, "migrate", "--to", "2", "--case", "RMP/2026/0001")
    assert refused.exit_code == 2
    assert "refused: case RMP/2026/0001 cannot move to version 2" in refused.output
    assert "  task 'Decide ownership claim' (ut_decide_objection) changed in version 2 (its incoming flows) and is ready (open)" in refused.output

    due = other.case().next_timer_due
    moved = cli(database_url, "migrate", "--to", "2", "--case", "RMP/2026/0002", "--by", "ops")
    assert (moved.exit_code, moved.output) == (0, "moved RMP/2026/0002 from version 1 to 2\n")
    assert other.case().next_timer_due == due == ist_midnight("2026-01-16")
    again = cli(database_url, "migrate", "--to", "2")
    assert again.exit_code == 2  # RMP/2026/0001 still cannot move
    assert again.output.splitlines()[-1] == "0 of 2 running case(s) moved to version 2"

    redeployed = cli(database_url, "redeploy", "1", "--note", "back to the bundled diagram")
    assert (redeployed.exit_code, redeployed.output) == (
        0, "deployed rule130_case version 3 (redeploy of v1: back to the bundled diagram)\n")
    assert cli(database_url, "redeploy", "9").exit_code == 2
    bad_note = cli(database_url, "redeploy", "1", "--note", "tab\tis fine, bell\x07 is not")
    assert bad_note.exit_code == 2
    assert "the note contains a control character (U+0007); remove it and deploy again" in bad_note.output


# -- pages ---------------------------------------------------------------------------------------------

def test_admin_pages_list_compare_download_redeploy_and_move(drive, sessions, officers, client):
    two_cases(drive, sessions, officers)
    login(client, "admin")
    page = text_of(client.get("/admin/processes"))
    assert "rule130_case 2 2 v1: 2" in page
    versions_page = client.get(f"/admin/processes/{P}/versions")
    assert versions_page.status_code == 200
    assert "2 (current) Monday, 12 January 2026 10:00 admin reminders" in text_of(versions_page)

    zipped = client.get(f"/admin/processes/{P}/versions/1/download")
    assert zipped.headers["Content-Disposition"] == 'attachment; filename="rule130_case-v1.zip"'
    archive = zipfile.ZipFile(io.BytesIO(zipped.data))
    assert archive.read("rule130_case.bpmn") == (BUNDLED / "rule130.bpmn").read_bytes()

    diff = text_of(client.get(f"/admin/processes/{P}/versions/diff?a=1&b=2"))
    assert "Elements added (4)" in diff and "n_svc_remind_period serviceTask Remind the sarpanch: period over" in diff
    assert "nf_timer_end sequenceFlow flow n_ice_period_ends -> n_end_period n_ice_period_ends -> n_svc_remind_period" in diff
    assert client.get(f"/admin/processes/{P}/versions/diff?a=1").status_code == 422
    assert client.get(f"/admin/processes/{P}/versions/diff?a=1&b=8").status_code == 404

    plan = text_of(client.get(f"/admin/processes/{P}/versions/2/migrate"))
    assert "1 of 2 running case(s) can move." in plan
    assert "RMP/2026/0002 1 yes bt_release_window: Friday, 16 January 2026 00:00 Move" in plan
    assert "RMP/2026/0001 1 no task 'Objection to decide' (n_mg_decide) changed" in plan
    moved = client.post(f"/admin/processes/{P}/versions/2/migrate", data={}, follow_redirects=True)
    assert "1 case(s) moved to version 2: RMP/2026/0002; 1 could not move (see below)." in text_of(moved)
    client.post("/language", data={"lang": "hi", "next": "/tasks"})
    again = client.post(f"/admin/processes/{P}/versions/2/migrate", data={}, follow_redirects=True)
    assert "कोई प्रकरण संस्करण 2 पर स्थानांतरित नहीं हुआ; 1 स्थानांतरित नहीं हो सके (नीचे देखें)।" in text_of(again)
    client.post("/language", data={"lang": "en", "next": "/tasks"})
    refused = client.post(f"/admin/processes/{P}/versions/2/migrate", data={"case": "RMP/2026/0001"},
                          follow_redirects=True)
    assert "case RMP/2026/0001 cannot move to version 2: task 'Objection to decide'" in text_of(refused)

    redeployed = client.post(f"/admin/processes/{P}/versions/1/redeploy", data={"note": "rollback"},
                             follow_redirects=True)
    assert "Version 1 deployed again as version 3." in text_of(redeployed)
    assert "3 (current) Monday, 12 January 2026 10:00 admin redeploy of v1: rollback" in text_of(redeployed)
    trail = text_of(client.get("/admin/processes"))
    assert "redeploy rule130_case v1 → v3 admin redeploy of v1: rollback" in trail
    assert "move rule130_case v1 → v2 admin RMP/2026/0002" in trail


def test_officers_get_403_and_forms_need_a_csrf_token(sessions, officers, app, client, database_url):
    login(client, "sar")
    for url in ("/admin/processes", f"/admin/processes/{P}/versions", f"/admin/processes/{P}/versions/1/download",
                f"/admin/processes/{P}/versions/1/migrate"):
        response = client.get(url)
        assert response.status_code == 403, url
        if url != "/admin/processes":  # the processes page itself is the modeler's (its own refusal text)
            assert "only an administrator may manage process versions" in text_of(response)
    assert client.post(f"/admin/processes/{P}/versions/1/redeploy").status_code == 403
    assert client.get("/admin/processes", follow_redirects=False).status_code == 403
    client.post("/logout")
    assert client.get("/admin/processes").status_code == 302  # to the sign-in page

    app.config["WTF_CSRF_ENABLED"] = True
    guarded = app.test_client()
    guarded.post("/login", data={"username": "admin", "password": PASSWORD})  # refused too: no token
    with guarded.session_transaction() as flask_session:
        flask_session["_user_id"] = str(officers["administrator"].id)
        flask_session["_fresh"] = True
    response = guarded.post(f"/admin/processes/{P}/versions/1/redeploy", data={"note": "x"})
    assert response.status_code == 400 and "nothing was saved" in text_of(response)
    assert cli(database_url, "versions").output.startswith("v1 (current)")


# -- JSON API ---------------------------------------------------------------------------------------------

def test_api_versions_diff_migration_and_audit(drive, sessions, officers, app):
    two_cases(drive, sessions, officers)
    with sessions() as session:
        admin = users.create_token(session, "admin")
        officer = users.create_token(session, "sec")
        session.commit()
    client = app.test_client()
    h = {"Authorization": f"Bearer {admin}"}
    listed = client.get("/api/v1/processes", headers=h).get_json()
    assert listed == {"processes": [{"process": P, "current_version": 2, "versions": 2,
                                     "running_cases": {"1": 2}}]}
    v = client.get(f"/api/v1/processes/{P}/versions", headers=h).get_json()["versions"]
    assert [(x["version"], x["current"], x["note"], x["running_cases"], len(x["files"])) for x in v] == [
        (2, True, "reminders", 0, 13), (1, False, "bundled Rule 130 process", 2, 13)]
    assert client.get(f"/api/v1/processes/{P}/versions/2/download", headers=h).data[:2] == b"PK"
    diff = client.get(f"/api/v1/processes/{P}/versions/diff?a=1&b=2", headers=h).get_json()
    assert [e["id"] for e in diff["elements"]["added"]] == [
        "n_svc_remind_period", "nf_remind_period_end", "n_svc_remind_decide", "nf_remind_decide"]
    assert diff["forms"]["changed"][0]["fields_added"] == ["remarks"]

    plan = client.get(f"/api/v1/processes/{P}/versions/2/migration", headers=h).get_json()
    assert [(c["case_number"], c["movable"]) for c in plan["cases"]] == [("RMP/2026/0001", False), ("RMP/2026/0002", True)]
    assert plan["cases"][1]["timers"] == [{"element_id": "bt_release_window", "due": "2026-01-15T18:30:00+00:00"}]
    refused = client.post(f"/api/v1/processes/{P}/versions/2/migration", json={"case": "RMP/2026/0001"}, headers=h)
    assert refused.status_code == 422
    assert refused.get_json()["error"]["message"].startswith("case RMP/2026/0001 cannot move to version 2")
    assert client.post(f"/api/v1/processes/{P}/versions/2/migration", json={"case": 5}, headers=h).status_code == 422
    assert client.post(f"/api/v1/processes/{P}/versions/2/migration", json=[1], headers=h).status_code == 400
    moved = client.post(f"/api/v1/processes/{P}/versions/2/migration", json={}, headers=h).get_json()
    assert moved["moved"] == 1 and [c["moved"] for c in moved["cases"]] == [False, True]
    redeployed = client.post(f"/api/v1/processes/{P}/versions/1/redeploy", json={"note": "rollback"}, headers=h)
    assert (redeployed.status_code, redeployed.get_json()["version"], redeployed.get_json()["note"]) == (
        201, 3, "redeploy of v1: rollback")
    audit = client.get(f"/api/v1/processes/{P}/audit", headers=h).get_json()["audit"]
    assert [(a["action"], a["version_from"], a["version_to"]) for a in audit] == [
        ("redeploy", 1, 3), ("move", 1, 2), ("deploy", None, 2), ("deploy", None, 1)]

    o = {"Authorization": f"Bearer {officer}"}
    forbidden = client.post(f"/api/v1/processes/{P}/versions/1/redeploy", json={}, headers=o)
    assert (forbidden.status_code, forbidden.get_json()["error"]["code"]) == (403, "forbidden")
    assert client.get(f"/api/v1/processes/{P}/versions", headers=o).status_code == 403
    assert client.get(f"/api/v1/processes/{P}/versions").status_code == 401
    assert len(client.get(f"/api/v1/processes/{P}/versions", headers=h).get_json()["versions"]) == 3


def test_a_panchayat_administrator_may_not_manage_versions(sessions, officers, client):
    with sessions() as session:
        users.create_user(session, "admin-khr", PASSWORD, "administrator", panchayat_code="KHR",
                          password_method="pbkdf2:sha256:1000")
        token = users.create_token(session, "admin-khr")
        session.commit()
    login(client, "admin-khr")
    response = client.post(f"/admin/processes/{P}/versions/1/redeploy", data={"note": "x"})
    assert response.status_code == 403
    assert "only an installation-wide administrator may manage process versions" in text_of(response)
    api = client.get(f"/api/v1/processes/{P}/versions", headers={"Authorization": f"Bearer {token}"})
    assert api.status_code == 403 and "installation-wide" in api.get_json()["error"]["message"]
    with sessions() as session:
        assert [v.number for v in versions.list_versions(session, P)] == [1]
