"""The officers' pages and API (issue 31, item 1), the first password changed at the first sign-in,
and the officers' CSV import and export as an attacker would send them (issue 34, item 5)."""

from __future__ import annotations

import codecs
import csv
import io

import lxml.html
import pytest
from sqlalchemy import func, select

from webapp.errors import Refused
from webapp.services.panchayats import officers as admin_officers
from webapp.services.panchayats import officers_csv
from webapp.services.people import users
from webapp.store.models import AuditEntry, User

from .conftest import FAST_HASH, PASSWORD


def login(client, username: str, password: str = PASSWORD):
    client.post("/logout")
    response = client.post("/login", data={"username": username, "password": password})
    assert response.status_code == 302, response.get_data(as_text=True)[:500]
    return response


def text_of(response) -> str:
    return " ".join(lxml.html.fromstring(response.get_data(as_text=True)).text_content().split())


@pytest.fixture
def rmp_admin(sessions, officers):
    with sessions() as session:
        users.create_user(session, "adm-rmp", PASSWORD, "administrator", display_name="RMP Admin",
                          panchayat_code="RMP", password_method=FAST_HASH)
        session.commit()


def count_users(sessions) -> int:
    with sessions() as session:
        return session.scalar(select(func.count()).select_from(User))


# -- pages -------------------------------------------------------------------------------------------

def test_a_new_officer_is_checked_then_confirmed_and_must_change_the_first_password(client, sessions):
    login(client, "admin")
    form = {"username": "sec-new", "display_name": "Naya Sachiv", "role": "secretary", "panchayat_code": "KHR"}
    checked = client.post("/admin/officers/new", data={**form, "step": "check"})
    assert checked.status_code == 200
    assert "Naya Sachiv (sec-new) becomes a secretary of Gram Panchayat KHR." in text_of(checked)
    assert count_users(sessions) == 8  # the check created nobody
    done = client.post("/admin/officers/new", data={**form, "step": "confirm"})
    assert done.status_code == 200 and done.headers["Cache-Control"] == "no-store"
    password = lxml.html.fromstring(done.get_data(as_text=True)).get_element_by_id("first-password").text
    assert count_users(sessions) == 9
    login(client, "sec-new", password)
    forced = client.get("/tasks")
    assert forced.status_code == 302 and forced.headers["Location"].endswith("/account/password")
    changed = client.post("/account/password", data={"current": password, "password": "mango tractor violin lake",
                                                     "again": "mango tractor violin lake"})
    assert changed.status_code == 302
    assert client.get("/tasks").status_code == 200
    with sessions() as session:
        assert session.scalar(select(User).where(User.username == "sec-new")).must_change_password is False


def test_a_refused_new_officer_comes_back_naming_the_field(client, sessions, rmp_admin):
    login(client, "adm-rmp")
    response = client.post("/admin/officers/new", data={"username": " SEC ", "role": "secretary",
                                                        "panchayat_code": "RMP", "step": "check"})
    assert response.status_code == 422
    assert "the user name SEC is taken by sec" in text_of(response)
    doc = lxml.html.fromstring(response.get_data(as_text=True))
    assert doc.get_element_by_id("username").get("aria-invalid") == "true"


def test_a_panchayat_administrator_cannot_open_or_act_on_another_panchayats_officer(client, rmp_admin):
    login(client, "adm-rmp")
    assert client.get("/admin/officers/sec-khr").status_code == 404
    assert client.post("/admin/officers/sec-khr/deactivate", data={"step": "confirm"}).status_code == 404
    listed = text_of(client.get("/admin/officers"))
    assert "sec-khr" not in listed and "sec" in listed
    response = client.post("/admin/officers/sec/transfer", data={"panchayat_code": "KHR", "step": "confirm"})
    assert response.status_code == 403


def test_officers_pages_are_for_administrators(client):
    login(client, "sec")
    assert client.get("/admin/officers").status_code == 403


def test_a_transfer_on_the_pages_is_checked_then_done(client, sessions, rmp_admin):
    login(client, "admin")
    checked = client.post("/admin/officers/sec-khr/transfer", data={"panchayat_code": "RMP", "step": "check"})
    assert checked.status_code == 200
    assert "sec-khr moves from Gram Panchayat Kheri to Gram Panchayat Rampura" in text_of(checked)
    done = client.post("/admin/officers/sec-khr/transfer", data={"panchayat_code": "RMP", "step": "confirm"})
    assert done.status_code == 302
    with sessions() as session:
        moved = session.scalar(select(User).where(User.username == "sec-khr"))
        assert users.panchayat(session, moved.panchayat_id).code == "RMP"
        [entry] = session.scalars(select(AuditEntry).where(AuditEntry.kind == "officer.transferred"))
        assert entry.actor == "admin"


def test_the_last_administrator_deactivating_themselves_is_refused_on_the_page(client, sessions):
    login(client, "admin")
    response = client.post("/admin/officers/admin/deactivate", data={"step": "check"})
    assert response.status_code == 422
    assert "you are the last active administrator of the whole installation" in text_of(response)


# -- API ----------------------------------------------------------------------------------------------

@pytest.fixture
def token(sessions, officers):
    def make(name):
        with sessions() as session:
            made = users.create_token(session, name)
            session.commit()
            return {"Authorization": f"Bearer {made}"}
    return make


def test_the_api_creates_with_a_dry_run_first(client, sessions, token):
    auth = token("admin")
    body = {"username": "pk-khr", "role": "pound_keeper", "panchayat": "KHR", "display_name": "Kheri PK"}
    dry = client.post("/api/v1/officers", json={**body, "dry_run": True}, headers=auth)
    assert dry.status_code == 200 and dry.json["dry_run"] is True and "first_password" not in dry.json
    assert dry.json["follows"][0] == "Kheri PK (pk-khr) becomes a pound keeper of Gram Panchayat KHR."
    made = client.post("/api/v1/officers", json=body, headers=auth)
    assert made.status_code == 201 and len(made.json["first_password"]) == 19
    listed = client.get("/api/v1/officers?q=pk-khr", headers=auth).json["officers"]
    assert listed == [{"username": "pk-khr", "display_name": "Kheri PK", "role": "pound_keeper", "panchayat": "KHR",
                       "samiti": None, "district": None, "active": True, "must_change_password": True}]


def test_the_api_refuses_outside_the_scope_and_names_the_field(client, sessions, token, rmp_admin):
    auth = token("adm-rmp")
    assert client.post("/api/v1/officers/sec-khr/deactivate", json={}, headers=auth).status_code == 404
    response = client.post("/api/v1/officers", json={"username": "x1", "role": "secretary", "panchayat": "KHR"},
                           headers=auth)
    assert response.status_code == 403 and "outside your scope" in response.json["error"]["message"]
    response = client.post("/api/v1/officers/adm-rmp/role", json={"role": "sarpanch"}, headers=auth)
    assert response.status_code == 403 and "your own role" in response.json["error"]["message"]
    response = client.post("/api/v1/officers", json={"username": "Sec", "role": "secretary", "panchayat": "RMP"},
                           headers=auth)
    assert response.status_code == 422 and response.json["error"]["fields"] == {"username": "taken"}
    assert client.get("/api/v1/officers", headers=token("sec")).status_code == 403


def test_the_api_resets_a_password_and_reactivates(client, sessions, token):
    auth = token("admin")
    assert client.post("/api/v1/officers/sec/deactivate", json={}, headers=auth).status_code == 200
    assert client.post("/api/v1/officers/sec/reactivate", json={"dry_run": True}, headers=auth).json["follows"] == [
        "sec may sign in again."]
    assert client.post("/api/v1/officers/sec/reactivate", json={}, headers=auth).status_code == 200
    reset = client.post("/api/v1/officers/sec/reset-password", json={}, headers=auth)
    assert reset.status_code == 200 and reset.headers["Cache-Control"] == "no-store"
    login(client, "sec", reset.json["first_password"])


# -- CSV ------------------------------------------------------------------------------------------------

GOOD = ("username,role,display_name,panchayat\n"
        "pk-khr,pound_keeper,=HYPERLINK(\"http://evil.example\"),KHR\n"
        "sar-khr,sarpanch,@SUM(A1:A2),KHR\n"
        "sec-khr2,secretary,रामलाल शर्मा,KHR\n")


def test_a_csv_is_checked_row_by_row_and_nothing_is_created_until_confirmed(sessions, officers):
    admin = officers["administrator"]
    text = ("Username,Role,Panchayat\n"
            "ok1,secretary,KHR\n"
            "SEC,secretary,RMP\n"
            "ok2,secretary,NOPE\n"
            "OK1 ,secretary,KHR\n"
            "ok3,boss,KHR\n")
    report = officers_csv.check_rows(sessions, admin, text)
    assert [(n, c) for n, c, _ in report.errors] == [(3, "username"), (4, "panchayat"), (5, "username"), (6, "role")]
    assert str(report.rows[3].errors["username"]).startswith("the same user name as row 2")
    before = count_users(sessions)
    with pytest.raises(officers_csv.ImportRefused, match="4 rows have errors; nothing was imported"):
        officers_csv.import_rows(sessions, admin, text, password_method=FAST_HASH)
    assert count_users(sessions) == before


def test_a_good_csv_creates_every_row_and_keeps_formula_cells_as_text(sessions, officers):
    made = officers_csv.import_rows(sessions, officers["administrator"], GOOD, password_method=FAST_HASH)
    assert [o.officer for o in made] == ["pk-khr", "sar-khr", "sec-khr2"]
    with sessions() as session:
        names = dict(session.execute(select(User.username, User.display_name)
                                     .where(User.username.in_(["pk-khr", "sar-khr", "sec-khr2"]))).all())
        assert names == {"pk-khr": '=HYPERLINK("http://evil.example")', "sar-khr": "@SUM(A1:A2)",
                         "sec-khr2": "रामलाल शर्मा"}
        exported = officers_csv.export(session, admin_officers.officers(session, None))
    assert exported.startswith(codecs.BOM_UTF8)
    rows = list(csv.reader(io.StringIO(exported[3:].decode("utf-8"))))
    cells = {row[0]: row[1] for row in rows[1:]}
    assert cells["pk-khr"] == "'=HYPERLINK(\"http://evil.example\")" and cells["sar-khr"] == "'@SUM(A1:A2)"
    assert all(not cell.startswith(("=", "+", "-", "@")) for row in rows for cell in row)


@pytest.mark.parametrize("encode", [
    lambda t: codecs.BOM_UTF8 + t.encode("utf-8"),
    lambda t: t.encode("utf-16"),  # with its byte-order mark
    lambda t: t.encode("utf-8"),
])
def test_utf8_with_or_without_bom_and_utf16_are_read(sessions, officers, encode):
    text = officers_csv.decode(encode(GOOD))
    report = officers_csv.check_rows(sessions, officers["administrator"], text)
    assert report.errors == [] and report.rows[2].cells["display_name"] == "रामलाल शर्मा"
    assert list(report.rows[0].cells) == ["username", "role", "display_name", "panchayat"]


def test_a_file_in_another_encoding_is_refused_naming_the_byte(sessions):
    with pytest.raises(Refused, match=r"not UTF-8 text \(byte 44 cannot be read\): save it .* as \"CSV UTF-8\""):
        officers_csv.decode("username,role,display_name\nab,secretary,Jos\u00e9\n".encode("cp1252"))


def test_a_file_over_10_mb_or_100000_rows_is_refused_naming_the_limit(sessions, officers):
    with pytest.raises(Refused, match=r"larger than 10 MB: import at most 10 MB \(and 100,000 officers\)"):
        officers_csv.decode(b"username,role\n" + b"a" * officers_csv.MAX_BYTES)
    rows = "username,role\n" + "".join(f"u{n},secretary\n" for n in range(100_001))
    with pytest.raises(Refused, match="more than 100,000 officer rows"):
        officers_csv.check_rows(sessions, officers["administrator"], rows)


def test_the_import_page_checks_then_confirms_all_rows(client, sessions):
    login(client, "admin")
    data = {"step": "check", "file": (io.BytesIO(codecs.BOM_UTF8 + GOOD.encode()), "officers.csv")}
    checked = client.post("/admin/officers/import", data=data, content_type="multipart/form-data")
    assert checked.status_code == 200 and "3 officers will be created" in text_of(checked)
    assert count_users(sessions) == 8
    text = lxml.html.fromstring(checked.get_data(as_text=True)).xpath("//input[@name='text']")[0].get("value")
    done = client.post("/admin/officers/import", data={"step": "confirm", "text": text},
                       content_type="multipart/form-data")
    assert done.status_code == 200 and "3 officers imported" in text_of(done)
    assert count_users(sessions) == 11


def test_the_import_page_lists_errors_by_row_and_column(client, sessions):
    login(client, "admin")
    bad = b"username,role,panchayat\nok1,secretary,KHR\nbad name,secretary,KHR\n"
    checked = client.post("/admin/officers/import", data={"step": "check", "file": (io.BytesIO(bad), "o.csv")},
                          content_type="multipart/form-data")
    assert checked.status_code == 422
    assert "row 3, column username" in text_of(checked) and "import-confirm" not in checked.get_data(as_text=True)


def test_the_import_api_checks_and_imports_all_or_none(client, sessions, token):
    auth = {**token("admin"), "Content-Type": "text/csv"}
    dry = client.post("/api/v1/officers/import?dry_run=true", data=GOOD.encode(), headers=auth)
    assert dry.status_code == 200 and dry.json["errors"] == []
    bad = GOOD + "SEC,secretary,x,RMP\n"
    refused = client.post("/api/v1/officers/import", data=bad.encode(), headers=auth)
    assert refused.status_code == 422
    assert refused.json["errors"] == [{"row": 5, "column": "username", "message":
                                       "the user name SEC is taken by sec (user names differing only in case or "
                                       "blanks are the same)"}]
    assert count_users(sessions) == 8
    made = client.post("/api/v1/officers/import", data=GOOD.encode(), headers=auth)
    assert made.status_code == 201 and len(made.json["created"]) == 3
    big = client.post("/api/v1/officers/import", data=b"username,role\n" + b"a" * officers_csv.MAX_BYTES,
                      headers=auth)
    assert big.status_code == 422 and "larger than 10 MB" in big.json["error"]["message"]
