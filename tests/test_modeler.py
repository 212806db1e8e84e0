"""The administrators' modeler: its page and bundle, drafts, validation and deploys through the page's
JSON endpoints, and ``POST /api/v1/process-versions`` — the same pipeline as ``rule130 deploy``.

Each refusal asserts the exact problem (element id, line, message) and that nothing changed: no new
version, and for unreadable input no draft either.
"""

from __future__ import annotations

import io
import json
import re
import threading
from pathlib import Path

import pytest
from lxml import etree
from sqlalchemy import func, select

from webapp.engine.diagrams.parser import USE_PERIOD_END
from webapp.errors import Conflict
from webapp.services.diagrams import drafts, repository
from webapp.services.people import users
from webapp.store.models import ProcessDraft, ProcessVersion

from .bpmn_names import renamed
from .conftest import PASSWORD

ROOT = Path(__file__).resolve().parents[1]
BUNDLE = ROOT / "webapp" / "static" / "modeler"
PAGE = "/admin/processes/rule130_case"
CONDITION = '<bpmn:conditionExpression xsi:type="bpmn:tFormalExpression">bid["full_price_reached"]'
NOTICE_TIMER = 'period_end(notice["published_at"], notice["objection_period_days"], timezone)'
ROLES = "(pound_keeper, secretary, sarpanch, appellate_authority, receiving_officer)"


@pytest.fixture(scope="module")
def bundled():
    bpmn, forms = repository.read_bundled()
    return bpmn.decode("utf-8"), forms


def _texts(forms: dict[str, dict]) -> dict[str, str]:
    return {name: json.dumps(schema, indent=2) for name, schema in forms.items()}


def _login(client, username: str) -> None:
    client.post("/logout")
    response = client.post("/login", data={"username": username, "password": PASSWORD})
    assert response.status_code == 302


@pytest.fixture
def admin(client):
    _login(client, "admin")
    return client


@pytest.fixture
def tokens(sessions, officers):
    with sessions() as session:
        made = {role: users.create_token(session, officers[role].username)
                for role in ("administrator", "secretary")}
        session.commit()
    return made


def _counts(sessions) -> tuple[int, int]:
    with sessions() as session:
        return (session.scalar(select(func.count()).select_from(ProcessVersion)),
                session.scalar(select(func.count()).select_from(ProcessDraft)))


def _line(text: str, element_id: str, child: str | None = None) -> int:
    element = etree.fromstring(text.encode()).xpath("//*[@id=$id]", id=element_id)[0]
    if child:
        element = element.find(f".//{{http://www.omg.org/spec/BPMN/20100524/MODEL}}{child}")
    return element.sourceline


# -- the page and its bundle ----------------------------------------------------------------------------------

def test_the_bundle_is_built_by_the_setup_and_the_page_loads_it_as_files(admin):
    assert (BUNDLE / "modeler.js").stat().st_size > 100_000, "scripts/setup.sh runs npm run build"
    page = admin.get(PAGE)
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    # the bundle under its content-hashed name (rule130 digest-static), else its plain one
    assert re.search(r'<script src="/static/modeler/modeler(-[0-9a-f]{32})?\.js" defer></script>', html)
    assert re.search(r'href="/static/modeler/modeler(-[0-9a-f]{32})?\.css"', html)
    # No inline script (a Content-Security-Policy without 'unsafe-inline' keeps working).
    doc = etree.HTML(html)
    assert all(script.get("src") for script in doc.iter("script"))
    app_div = doc.xpath("//*[@id='modeler-app']")[0]
    assert app_div.get("data-source-url") == "/admin/processes/rule130_case/source"
    assert app_div.get("data-csrf-token")
    texts = json.loads(app_div.get("data-texts"))  # the script's texts, in the page's language
    assert texts["validating"] == "Validating…" and texts["deployed"].startswith("Deployed as version %(number)s")
    bundle = admin.get("/static/modeler/modeler.js").get_data(as_text=True)
    # the spiffworkflow and rule130 (Hindi names) moddle descriptors and the properties panel are inside; no
    # linter of its own (its verdict disagreed with the server's: the badge shows the server's verdict)
    assert "http://spiffworkflow.org/bpmn/schema/1.0/core" in bundle and "urn:rule130:bpmn:names" in bundle
    assert "formJsonSchemaFilename" in bundle and "bio-properties-panel" in bundle
    assert "no-implicit-split" not in bundle
    assert admin.get("/static/modeler/modeler.css").status_code == 200


def test_only_installation_administrators_reach_the_modeler(client, app, sessions, tokens):
    assert client.get(PAGE).status_code == 302  # to the sign-in page
    assert client.post(f"{PAGE}/validate", json={}).status_code == 401
    _login(client, "sec")
    assert client.get("/admin/processes").status_code == 403
    page = client.get(PAGE)
    assert page.status_code == 403 and "only an administrator" in page.get_data(as_text=True)
    for path in ("/source", "/validate", "/draft", "/draft/discard", "/deploy"):
        call = client.get if path == "/source" else client.post
        response = call(PAGE + path, json={"bpmn": "<x/>", "revision": None})
        assert response.status_code == 403, path
        assert response.get_json()["error"]["code"] == "forbidden"
    response = client.post("/api/v1/process-versions", json={"bpmn": "<x/>", "dry_run": True},
                           headers={"Authorization": f"Bearer {tokens['secretary']}"})
    assert response.status_code == 403
    assert response.get_json()["error"]["message"] == ("only an administrator may edit, validate or deploy "
                                                       "process diagrams")
    # an administrator scoped to one Panchayat changes no installation-wide process
    with sessions() as session:
        users.create_user(session, "rmp-admin", PASSWORD, "administrator", panchayat_code="RMP",
                          password_method="pbkdf2:sha256:1000")
        session.commit()
    _login(client, "rmp-admin")
    assert client.get(PAGE).status_code == 403
    assert _counts(sessions) == (1, 0)


def test_every_post_needs_the_csrf_token_header(database_url, sessions, officers):
    from webapp import create_app
    app = create_app({"TESTING": True, "DATABASE_URL": database_url, "SECRET_KEY": "test"})
    client = app.test_client()
    page = client.get("/login").get_data(as_text=True)
    token = etree.HTML(page).xpath("//input[@name='csrf_token']/@value")[0]
    client.post("/login", data={"username": "admin", "password": PASSWORD, "csrf_token": token})
    html = client.get(PAGE).get_data(as_text=True)
    csrf = etree.HTML(html).xpath("//*[@id='modeler-app']/@data-csrf-token")[0]
    refused = client.post(f"{PAGE}/validate", json={"bpmn": "<x/>"})
    assert refused.status_code == 400
    assert refused.get_json() is None or refused.get_json()["error"]["code"] in ("csrf_failed", "error")
    accepted = client.post(f"{PAGE}/validate", json={"bpmn": "<x/>"}, headers={"X-CSRFToken": csrf})
    assert accepted.status_code == 422
    app.extensions["rule130.engine"].dispose()


# -- drafts and deploys through the page ------------------------------------------------------------------------

def test_the_page_opens_the_current_version_with_its_forms(admin, bundled):
    text, forms = bundled
    source = admin.get(f"{PAGE}/source").get_json()
    assert source["version"]["number"] == 1 and source["draft"] is None
    assert source["bpmn"] == text
    assert sorted(source["forms"]) == sorted(forms) and len(forms) == 12
    assert json.loads(source["forms"]["publish_notice.schema.json"]) == forms["publish_notice.schema.json"]
    listing = admin.get("/admin/processes").get_data(as_text=True)
    assert "rule130_case" in listing and 'href="/admin/processes/rule130_case"' in listing
    assert admin.get("/admin/processes/no_such_process").status_code == 404


def test_save_a_draft_then_deploy_it_as_version_2(admin, sessions, bundled):
    text, forms = bundled
    changed = renamed(text, "ut_release", "Release the cattle to their owner", "पशु उनके स्वामी को सौंपें")
    assert changed != text
    texts = _texts(forms)
    saved = admin.post(f"{PAGE}/draft", json={"bpmn": changed, "forms": texts, "revision": None})
    assert saved.status_code == 200, saved.get_json()
    body = saved.get_json()
    assert body["valid"] is True and body["problems"] == []
    assert body["draft"]["revision"] == 1 and body["draft"]["saved_by"] == "admin"
    assert body["draft"]["base_version"] == 1
    # the page now opens the draft
    source = admin.get(f"{PAGE}/source").get_json()
    assert source["draft"]["revision"] == 1 and "Release the cattle to their owner" in source["bpmn"]
    assert source["forms"] == texts
    # a save from a stale page (revision None) is refused and changes nothing
    stale = admin.post(f"{PAGE}/draft", json={"bpmn": text, "forms": texts, "revision": None})
    assert stale.status_code == 409
    assert "another administrator saved this draft" in stale.get_json()["error"]["message"]
    assert admin.post(f"{PAGE}/draft", json={"bpmn": changed, "forms": texts, "revision": 1}) \
        .get_json()["draft"]["revision"] == 2
    deployed = admin.post(f"{PAGE}/deploy", json={"revision": 2, "note": "clearer name for the release task"})
    assert deployed.status_code == 201, deployed.get_json()
    version = deployed.get_json()["version"]
    assert version["number"] == 2 and deployed.get_json()["created"] is True
    assert version["deployed_by"] == "admin" and version["note"] == "clearer name for the release task"
    with sessions() as session:
        stored = session.scalar(select(ProcessVersion).where(ProcessVersion.version == 2))
        assert "Release the cattle to their owner" in stored.bpmn_xml
        assert json.loads(stored.forms_json) == forms
        assert repository.current(session).version == 2
    assert _counts(sessions) == (2, 0)  # the draft is gone
    # deploying the same draft again (a second administrator, a double click) deploys nothing
    again = admin.post(f"{PAGE}/deploy", json={"revision": 2, "note": "again"})
    assert again.status_code == 409
    assert again.get_json()["error"]["message"].startswith(
        "there is no saved draft of rule130_case to deploy; it may have been deployed by another administrator "
        "(the current version is 2, deployed by admin)")
    assert _counts(sessions) == (2, 0)
    assert admin.get(f"{PAGE}/source").get_json()["version"]["number"] == 2


def test_a_draft_with_problems_is_saved_but_not_deployed(admin, sessions, bundled):
    text, forms = bundled
    bad = text.replace('id="notice.publish"', 'id="notice.steal_the_cattle"')
    saved = admin.post(f"{PAGE}/draft", json={"bpmn": bad, "forms": _texts(forms), "revision": None}).get_json()
    assert saved["valid"] is False
    problem = {"element_id": "svc_publish_notice", "line": _line(bad, "svc_publish_notice"),
               "message": "service task 'Publish notice in the nearest village' calls 'notice.steal_the_cattle', "
                          "which is not a registered handler",
               "severity": "error"}
    assert saved["problems"] == [problem]
    refused = admin.post(f"{PAGE}/deploy", json={"revision": 1, "note": "try"})
    assert refused.status_code == 422
    assert refused.get_json()["error"]["problems"] == [problem]
    assert _counts(sessions) == (1, 1)  # nothing deployed; the draft is kept to be fixed
    assert admin.post(f"{PAGE}/draft/discard", json={"revision": 1}).get_json() == {"discarded": True}
    assert _counts(sessions) == (1, 0)


# -- bad input: the same refusals through the page and the API ----------------------------------------------------

def _replace(old: str, new: str):
    def change(text, forms):
        assert old in text
        return text.replace(old, new), forms
    return change


def _forms(name: str, value):
    def change(text, forms):
        changed = dict(forms)
        if value is None:
            del changed[name]
        else:
            changed[name] = value
        return text, changed
    return change


def _whole(document: str):
    return lambda text, forms: (document, forms)


XXE = ('<?xml version="1.0"?>\n<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>\n'
       '<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d" targetNamespace="t">'
       '<bpmn:process id="rule130_case" isExecutable="true"><bpmn:documentation>&e;</bpmn:documentation>'
       '</bpmn:process></bpmn:definitions>')
LAUGHS = ('<?xml version="1.0"?>\n<!DOCTYPE lolz [\n<!ENTITY lol0 "lol">\n'
          + "".join(f'<!ENTITY lol{i} "{("&lol" + str(i - 1) + ";") * 10}">\n' for i in range(1, 10))
          + ']>\n<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d" '
            'targetNamespace="t"><bpmn:process id="rule130_case" isExecutable="true">'
            '<bpmn:documentation>&lol9;</bpmn:documentation></bpmn:process></bpmn:definitions>')
SANDBOX = "sequence flow 'yes': the conditionExpression is refused by the sandbox: "
NOTICE_EVENT = "intermediate catch event 'Objection period ends'"
SARPANCH_TASKS = {"ut_order_stand": "Order that the auction stand", "ut_pay_feeding_charges": "Pay feeding charges",
                  "ut_decide_objection": "Decide ownership claim", "ut_decide_unsold": "Decide unsold cattle"}

# (change, [(element id, line: (text) -> int | None, message)], readable: a draft of it may be saved)
BAD = {
    "malformed-xml": (_whole('<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL">\n'
                             '<bpmn:process id="rule130_case">\n</bpmn:definitions>'),
                      [(None, lambda t: 3, "the file is not well-formed XML: the element <process> opened on line "
                                           "2 is closed by </definitions> (line 3, column 20)")], False),
    "not-bpmn": (_whole('<?xml version="1.0"?>\n<html><body>hello</body></html>'),
                 [(None, lambda t: 2, "the file is not BPMN 2.0: its root element is not bpmn:definitions")], False),
    "xxe": (_whole(XXE), [(None, lambda t: 2, "the file declares a DTD or entities; BPMN files must not")], False),
    "billion-laughs": (_whole(LAUGHS),
                       [(None, lambda t: 2, "the file declares a DTD or entities; BPMN files must not")], False),
    "__import__": (_replace(CONDITION, CONDITION.split(">")[0] + ">__import__('os').system('id')"),
                   [("bf_full", lambda t: _line(t, "bf_full", "conditionExpression"),
                     SANDBOX + "the name '__import__' is not available in diagram scripts")], True),
    "open": (_replace(CONDITION, CONDITION.split(">")[0] + ">open('/etc/passwd')"),
             [("bf_full", lambda t: _line(t, "bf_full", "conditionExpression"),
               SANDBOX + "the name 'open' is not available in diagram scripts")], True),
    "().__class__": (_replace(CONDITION, CONDITION.split(">")[0] + ">().__class__"),
                     [("bf_full", lambda t: _line(t, "bf_full", "conditionExpression"),
                       SANDBOX + 'Line 1: "__class__" is an invalid attribute name because it starts with "_".')],
                     True),
    "P29D": (_replace(NOTICE_TIMER, "&quot;P29D&quot;"),
             [("n_ice_period_ends", lambda t: _line(t, "n_ice_period_ends", "timeDate"),
               f"{NOTICE_EVENT}: timer expression '\"P29D\"' is not a legal period; {USE_PERIOD_END}")], True),
    "P30D": (_replace(NOTICE_TIMER, "&quot;P30D&quot;"),
             [("n_ice_period_ends", lambda t: _line(t, "n_ice_period_ends", "timeDate"),
               f"{NOTICE_EVENT}: timer expression '\"P30D\"' is not a legal period; {USE_PERIOD_END}")], True),
    "no-lane": (_replace("<bpmn:flowNodeRef>ut_order_stand</bpmn:flowNodeRef>", ""),
                [("ut_order_stand", lambda t: _line(t, "ut_order_stand"),
                  f"user task 'Order that the auction stand' has no lane; put it in the lane of the role that does "
                  f"it {ROLES}")], True),
    "lane-not-a-role": (_replace('name="sarpanch"', 'name="headman"'),
                        [(task, (lambda task: lambda t: _line(t, task))(task),
                          f"user task '{name}' is in lane 'headman', which is not a role {ROLES}")
                         for task, name in SARPANCH_TASKS.items()], True),
    "form-missing": (_forms("record_bid.schema.json", None),
                     [("ut_record_bid", lambda t: _line(t, "ut_record_bid"),
                       "user task 'Record bid' names form record_bid.schema.json, which is not in the deployment")],
                     True),
    "form-not-a-schema": (_forms("record_bid.schema.json", {"type": 12}),
                          [(None, lambda t: None, "form record_bid.schema.json is not a valid JSON Schema: 12 is not "
                                                  "valid under any of the given schemas")], True),
    "form-not-json": (_forms("record_bid.schema.json", "{ not json"),
                      # the form is sent but not JSON: that is its one problem (never "not in the deployment")
                      [(None, lambda t: None, "form record_bid.schema.json is not JSON: Expecting property name "
                                              "enclosed in double quotes (line 1, column 3)")], False),
    "unregistered-handler": (_replace('id="notice.publish"', 'id="notice.steal_the_cattle"'),
                             [("svc_publish_notice", lambda t: _line(t, "svc_publish_notice"),
                               "service task 'Publish notice in the nearest village' calls "
                               "'notice.steal_the_cattle', which is not a registered handler")],
                             True),
}


def _expected(case: str, text: str) -> list[dict]:
    return [{"element_id": element_id, "line": line(text), "message": message, "severity": "error"}
            for element_id, line, message in BAD[case][1]]


def _form_texts(forms: dict) -> dict[str, str]:
    return {name: value if isinstance(value, str) else json.dumps(value) for name, value in forms.items()}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_input_is_refused_by_the_page_with_its_problems_and_changes_nothing(admin, sessions, bundled, case):
    text, forms = BAD[case][0](*bundled)
    body = {"bpmn": text, "forms": _form_texts(forms)}
    expected = _expected(case, text)
    validated = admin.post(f"{PAGE}/validate", json=body)
    assert validated.status_code == 422
    assert validated.get_json()["error"]["problems"] == expected
    assert "root:" not in validated.get_data(as_text=True) and "lollol" not in validated.get_data(as_text=True)
    saved = admin.post(f"{PAGE}/draft", json={**body, "revision": None})
    if BAD[case][2]:  # a readable draft is kept (to be fixed later) but cannot be deployed
        assert saved.status_code == 200 and saved.get_json()["problems"] == expected
        deployed = admin.post(f"{PAGE}/deploy", json={"revision": 1, "note": case})
        assert deployed.status_code == 422 and deployed.get_json()["error"]["problems"] == expected
        assert _counts(sessions) == (1, 1)
    else:  # unreadable: nothing is saved at all
        assert saved.status_code == 422, saved.get_json()
        assert saved.get_json()["error"]["message"].startswith("the draft was not saved: ")
        assert _counts(sessions) == (1, 0)


@pytest.mark.parametrize("case", list(BAD))
def test_bad_input_is_refused_by_the_api_with_every_problem(client, sessions, tokens, bundled, case):
    text, forms = BAD[case][0](*bundled)
    for dry_run in (True, False):
        response = client.post("/api/v1/process-versions",
                               json={"bpmn": text, "forms": forms, "note": case, "dry_run": dry_run},
                               headers={"Authorization": f"Bearer {tokens['administrator']}"})
        assert response.status_code == 422
        error = response.get_json()["error"]
        assert error["code"] == "invalid_diagram"
        assert error["problems"] == _expected(case, text)
    assert _counts(sessions) == (1, 0)


def test_a_50_mb_upload_is_refused_by_size_before_it_is_read(admin, client, sessions, tokens):
    big = b"<bpmn:definitions>" + b" " * (50 * 1024 * 1024) + b"</bpmn:definitions>"
    page = admin.post(f"{PAGE}/validate", data=big, content_type="application/json")
    assert page.status_code == 413
    assert page.get_json()["error"] == {"code": "too_large", "message": "the upload is larger than the limit of "
                                        "2 MB; nothing was read, saved or deployed"}
    saved = admin.post(f"{PAGE}/draft", data=big, content_type="application/json")
    assert saved.status_code == 413
    headers = {"Authorization": f"Bearer {tokens['administrator']}"}
    api = client.post("/api/v1/process-versions", data={"bpmn": (io.BytesIO(big), "big.bpmn")},
                      content_type="multipart/form-data", headers=headers)
    assert api.status_code == 413 and api.get_json()["error"]["code"] == "too_large"
    assert "Traceback" not in api.get_data(as_text=True)
    assert _counts(sessions) == (1, 0)


# -- the API deploys ----------------------------------------------------------------------------------------------

def test_the_api_validates_and_deploys_a_new_version(client, sessions, tokens, bundled):
    text, forms = bundled
    headers = {"Authorization": f"Bearer {tokens['administrator']}"}
    changed = renamed(text, "ut_release", "Owner takes the cattle back", "स्वामी पशु वापस ले जाता है")
    dry = client.post("/api/v1/process-versions", json={"bpmn": changed, "forms": forms, "dry_run": True},
                      headers=headers)
    assert dry.status_code == 200
    answer = dry.get_json()
    assert {k: answer[k] for k in ("valid", "process_id", "problems")} == {
        "valid": True, "process_id": "rule130_case", "problems": []}
    # the verdict: what is true of the file, as the CLI and the modeler say it
    assert {k: answer["verdict"][k] for k in ("kind", "well_formed", "xsd_valid", "process_id", "checked")} == {
        "kind": "deployable", "well_formed": True, "xsd_valid": True, "process_id": "rule130_case",
        "checked": "rule130_case"}
    assert answer["verdict"]["processes"][0] == {"id": "rule130_case", "executable": True, "name": (
        "Rule 130: disposal of cattle not released within 3 days"), "pool": (
        "Rule 130: disposal of cattle not released within 3 days")}
    assert answer["verdict"]["summary"].startswith("well-formed XML; valid BPMN 2.0; 5 processes: ")
    assert answer["verdict"]["summary"].endswith("; rule130_case can run here")
    assert _counts(sessions) == (1, 0)
    # multipart: the .bpmn file and the forms as files
    files = [(io.BytesIO(json.dumps(schema).encode()), name) for name, schema in forms.items()]
    deployed = client.post("/api/v1/process-versions", headers=headers, content_type="multipart/form-data",
                           data={"bpmn": (io.BytesIO(changed.encode()), "rule130.bpmn"), "forms": files,
                                 "note": "renamed the release task"})
    assert deployed.status_code == 201, deployed.get_json()
    version = deployed.get_json()["version"]
    assert (version["number"], version["deployed_by"], version["note"]) == (2, "admin", "renamed the release task")
    again = client.post("/api/v1/process-versions", json={"bpmn": changed, "forms": forms, "note": "again"},
                        headers=headers)
    assert again.status_code == 200
    assert again.get_json()["created"] is False and again.get_json()["version"]["number"] == 2
    assert _counts(sessions) == (2, 0)
    with sessions() as session:
        assert repository.current(session).note == "renamed the release task"


@pytest.mark.both_databases
def test_two_administrators_deploying_the_same_draft_at_once_make_one_version(admin, sessions, officers, bundled):
    text, forms = bundled
    changed = renamed(text, "ut_release", "Owner takes the cattle back", "स्वामी पशु वापस ले जाता है")
    assert admin.post(f"{PAGE}/draft", json={"bpmn": changed, "forms": _texts(forms), "revision": None}) \
        .get_json()["draft"]["revision"] == 1
    start = threading.Barrier(2)
    outcomes: list = []

    def deploy(note: str) -> None:
        start.wait()
        try:
            version, created = drafts.perform(sessions, drafts.deploy_draft, officers["administrator"],
                                              "rule130_case", 1, note)
            outcomes.append((version.version, created))
        except Conflict as conflict:
            outcomes.append(conflict.message)

    threads = [threading.Thread(target=deploy, args=(note,)) for note in ("first", "second")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(outcomes) == 2 and outcomes.count((2, True)) == 1
    [refusal] = [o for o in outcomes if isinstance(o, str)]
    assert refusal.startswith(("there is no saved draft of rule130_case to deploy",
                               "another administrator saved or deployed this process at the same moment"))
    assert _counts(sessions) == (2, 0)


def _spiff_elements(xml: bytes) -> list[tuple[str, dict, str]]:
    """Every spiffworkflow element in document order: (tag, attributes, text)."""
    root = etree.fromstring(xml)
    return [(etree.QName(e).localname, dict(e.attrib), (e.text or "").strip())
            for e in root.iter("{http://spiffworkflow.org/bpmn/schema/1.0/core}*")]


def test_the_modelers_descriptor_round_trips_the_spiffworkflow_extensions(bundled):
    """The modeler's save (bpmn-moddle with webapp/assets/modeler/spiffworkflow.json, run in node) keeps
    every form file, service operator, parameter and message variable, and its output deploys."""
    import shutil
    import subprocess

    import handlers
    from webapp.engine.diagrams.parser import diagnose

    node = shutil.which("node")
    assert node, "scripts/setup.sh installs Node.js with npm"
    text, forms = bundled
    saved = subprocess.run([node, str(ROOT / "webapp" / "assets" / "modeler" / "roundtrip.mjs")],
                           input=text.encode(), capture_output=True, check=True, timeout=60).stdout
    assert saved != text.encode()  # really re-serialized
    before, after = _spiff_elements(text.encode()), _spiff_elements(saved)
    assert after == before
    assert sum(1 for tag, attrs, _ in after if tag == "property" and attrs["name"] == "formJsonSchemaFilename") == 12
    assert ("serviceTaskOperator", {"id": "notice.publish", "resultVariable": "notice"}, "") in after
    assert diagnose(saved, forms, handlers.names(), "rule130_case") == (True, [])
