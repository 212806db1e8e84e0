"""Issue 22, item 2: the modeler keeps an administrator out of JSON and never loses Hindi.

- Every name in the diagram (task, event, gateway, flow, lane) needs its Hindi: a deploy with a name
  that has none is refused naming the element by name and id — the same words from the modeler, the
  API and ``rule130 deploy``; the Hindi given in the modeler travels in the diagram, and Hindi pages
  show it once it is deployed. Names of the bundled diagram have their Hindi in the catalogue.
- A form's labels have their Hindi in the form (``translations``), shown on the officer's task page;
  the modeler's preview is that page, rendered by the server for administrators only.
- The badge says the server's verdict with proper plurals; a form that is not JSON is not also "not in
  the deployment"; the page's source names the versions, newest first.
"""

from __future__ import annotations

import json
from datetime import datetime

import pytest
from click.testing import CliRunner
from lxml import etree
from sqlalchemy import func, select

from webapp.cli import main as cli
from webapp.engine.diagrams import names
from webapp.services.cases import cases
from webapp.services.diagrams import repository
from webapp.store.models import ProcessVersion, User

from .bpmn_names import renamed
from .conftest import PASSWORD

PAGE = "/admin/processes/rule130_case"
NEW_NAME = "Release the cattle to their owner"
NEW_HINDI = "पशु उनके स्वामी को सौंपें"
REFUSAL = (f"user task '{NEW_NAME}' (id ut_release) has no Hindi name; Hindi pages would show it in English. "
           "Give its Hindi in the modeler (Hindi name, beside its name) or as "
           f'<rule130:name lang="hi" of="{NEW_NAME}">…</rule130:name> in its extension elements')


@pytest.fixture(scope="module")
def bundled():
    bpmn, forms = repository.read_bundled()
    return bpmn.decode("utf-8"), forms


def _texts(forms):
    return {name: json.dumps(schema, indent=2, ensure_ascii=False) for name, schema in forms.items()}


def _login(client, username):
    client.post("/logout")
    assert client.post("/login", data={"username": username, "password": PASSWORD}).status_code == 302


@pytest.fixture
def admin(client):
    _login(client, "admin")
    return client


def _versions(sessions) -> int:
    with sessions() as session:
        return session.scalar(select(func.count()).select_from(ProcessVersion))


def test_every_name_of_the_bundled_diagram_has_its_hindi_in_the_catalogue(bundled):
    text, _forms = bundled
    root = etree.fromstring(text.encode())
    found = list(names.named_elements(root))
    assert len(found) > 60  # tasks, events, gateways, flows and lanes
    from webapp.i18n import catalogue_hindi
    assert [e.get("id") for e in found if not catalogue_hindi(names.catalogue_key(e))] == []
    assert catalogue_hindi("pound keeper") and catalogue_hindi("Release cattle to owner")


def test_a_renamed_task_without_hindi_is_refused_alike_by_the_modeler_the_api_and_the_cli(
        admin, sessions, bundled, tmp_path, database_url):
    text, forms = bundled
    changed = renamed(text, "ut_release", NEW_NAME)
    texts = _texts(forms)
    # the modeler: validation and the deploy of the saved draft
    checked = admin.post(f"{PAGE}/validate", json={"bpmn": changed, "forms": texts})
    assert checked.status_code == 422
    body = checked.get_json()
    assert body["badge"] == "Not valid: 1 problem"
    assert body["error"]["message"] == "1 problem stops this diagram from running"
    assert [(p["element_id"], p["message"]) for p in body["error"]["problems"]] == [("ut_release", REFUSAL)]
    saved = admin.post(f"{PAGE}/draft", json={"bpmn": changed, "forms": texts, "revision": None}).get_json()
    assert saved["valid"] is False and saved["badge"] == "Not valid: 1 problem"
    refused = admin.post(f"{PAGE}/deploy", json={"revision": saved["draft"]["revision"], "note": "rename"})
    assert refused.status_code == 422
    assert [p["message"] for p in refused.get_json()["error"]["problems"]] == [REFUSAL]
    # the API
    with sessions() as session:
        from webapp.services.people import users
        token = users.create_token(session, "admin")
        session.commit()
    api = admin.post("/api/v1/process-versions", json={"bpmn": changed, "forms": forms, "note": "rename"},
                     headers={"Authorization": f"Bearer {token}"})
    assert api.status_code == 422
    assert [p["message"] for p in api.get_json()["error"]["problems"]] == [REFUSAL]
    # the command line
    (tmp_path / "forms").mkdir()
    (tmp_path / "rule130.bpmn").write_text(changed, encoding="utf-8")
    for name, schema in forms.items():
        (tmp_path / "forms" / name).write_text(json.dumps(schema), encoding="utf-8")
    result = CliRunner().invoke(cli, ["deploy", str(tmp_path), "--note", "rename", "--database", database_url])
    assert result.exit_code == 2
    assert "refused: 1 problem stops this diagram from running" in result.output
    line = etree.fromstring(changed.encode()).xpath("//*[@id='ut_release']")[0].sourceline
    assert f"error: ut_release, line {line}: {REFUSAL}" in result.output
    assert _versions(sessions) == 1  # nothing deployed anywhere


def test_the_hindi_given_in_the_modeler_is_deployed_and_hindi_pages_show_it(admin, client, sessions, bundled,
                                                                            virtual_clock):
    text, forms = bundled
    changed = renamed(text, "ut_release", NEW_NAME, NEW_HINDI)
    saved = admin.post(f"{PAGE}/draft", json={"bpmn": changed, "forms": _texts(forms), "revision": None}).get_json()
    assert saved["valid"] is True and saved["problems"] == [] and saved["badge"] == "Valid"
    deployed = admin.post(f"{PAGE}/deploy", json={"revision": saved["draft"]["revision"], "note": "clearer name"})
    assert deployed.status_code == 201 and deployed.get_json()["version"]["number"] == 2
    with sessions() as session:
        stored = session.scalar(select(ProcessVersion).where(ProcessVersion.version == 2))
        assert names.hindi_names(stored.bpmn_xml) == {NEW_NAME: NEW_HINDI}
        keeper = session.scalars(select(User).where(User.username == "pk")).one()
        keeper.language = "hi"
        case = cases.start_case(session, keeper, impounded_at=datetime.fromisoformat("2026-01-05T10:00:00+05:30"),
                                place_seized="Bhimpura", place_impounded="Kanji House, Rampura",
                                nearest_village="Bhimpura",
                                animals=[{"species": "cow", "description": "brown cow", "tag": "RJ-1"}])
        session.commit()
        case_id = case.id
    _login(client, "pk")
    page = client.get("/tasks").get_data(as_text=True)
    assert NEW_HINDI in page and NEW_NAME not in page
    assert NEW_HINDI in client.get(f"/cases/{case_id}").get_data(as_text=True)
    # the modeler's source now names version 2 first, and the Hindi of the names it knows
    _login(client, "admin")
    source = client.get(f"{PAGE}/source").get_json()
    assert [v["number"] for v in source["versions"]] == [2, 1]
    assert source["versions"][0]["note"] == "clearer name" and source["draft"] is None
    assert source["hindi"][NEW_NAME] == NEW_HINDI
    assert source["hindi"]["Publish notice and open conditional auction"]  # from the catalogue


FORM = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Record bid",
    "type": "object",
    "properties": {
        "bidder": {"type": "string", "title": "Name of the bidder", "maxLength": 200,
                   "translations": {"hi": {"title": "बोली लगाने वाले का नाम"}}},
        "kind": {"type": "string", "title": "Kind of bid", "enum": ["open", "sealed_cover"],
                 "translations": {"hi": {"enum": {"sealed_cover": "मुहरबंद लिफ़ाफ़ा"}}}},
    },
    "required": ["bidder"],
    "allOf": [{"if": {"properties": {"kind": {"const": "sealed_cover"}}}, "then": {"required": ["kind"]}}],
}


def test_the_preview_is_the_officers_task_form_in_either_language(admin):
    english = admin.post(f"{PAGE}/forms/preview", json={"schema": FORM, "language": "en", "task": "Record bid"})
    assert english.status_code == 200
    html = english.get_json()["html"]
    doc = etree.HTML(html)
    labels = [" ".join("".join(label.itertext()).split()) for label in doc.xpath("//form[@class='card']//label")]
    assert labels[0] == "Name of the bidder *(required)"
    assert "sealed cover" in labels
    assert doc.xpath("//input[@id='f-bidder']/@maxlength") == ["200"]
    hindi = etree.HTML(admin.post(f"{PAGE}/forms/preview",
                                  json={"schema": json.dumps(FORM), "language": "hi"}).get_json()["html"])
    labels = [" ".join("".join(label.itertext()).split()) for label in hindi.xpath("//form[@class='card']//label")]
    assert labels[0].startswith("बोली लगाने वाले का नाम *")
    assert "मुहरबंद लिफ़ाफ़ा" in labels
    assert hindi.xpath("//html/@lang") == ["hi"]
    bad = admin.post(f"{PAGE}/forms/preview", json={"schema": "{not json", "language": "hi"})
    assert bad.status_code == 422 and bad.get_json()["error"]["message"].startswith("the form is not JSON")


def test_the_preview_is_for_administrators_only_and_needs_the_csrf_token(client, app):
    _login(client, "sec")
    assert client.post(f"{PAGE}/forms/preview", json={"schema": FORM}).status_code == 403
    _login(client, "admin")
    app.config["WTF_CSRF_ENABLED"] = True
    try:
        refused = client.post(f"{PAGE}/forms/preview", json={"schema": FORM, "language": "en"})
        assert refused.status_code == 400
    finally:
        app.config["WTF_CSRF_ENABLED"] = False


def test_a_form_keeps_keywords_the_editor_does_not_know_through_a_draft_and_a_deploy(admin, sessions, bundled):
    text, forms = bundled
    texts = _texts(forms)
    bid = dict(forms["record_bid.schema.json"])
    bid["allOf"] = [{"if": {"properties": {"bidder": {"const": "x"}}}, "then": {"required": ["amount"]}}]
    bid["properties"] = {**bid["properties"], "bidder": {**bid["properties"]["bidder"],
                                                         "translations": {"hi": {"title": "बोलीदाता"}}}}
    texts["record_bid.schema.json"] = json.dumps(bid, indent=2, ensure_ascii=False)
    saved = admin.post(f"{PAGE}/draft", json={"bpmn": text, "forms": texts, "revision": None}).get_json()
    assert saved["valid"] is True, saved
    deployed = admin.post(f"{PAGE}/deploy", json={"revision": saved["draft"]["revision"], "note": "Hindi label"})
    assert deployed.status_code == 201
    with sessions() as session:
        stored = json.loads(session.scalar(select(ProcessVersion.forms_json).where(ProcessVersion.version == 2)))
    assert stored["record_bid.schema.json"]["allOf"] == bid["allOf"]
    assert stored["record_bid.schema.json"]["properties"]["bidder"]["translations"] == {"hi": {"title": "बोलीदाता"}}


def test_a_form_that_is_not_json_is_not_also_missing_from_the_deployment(admin, bundled):
    text, forms = bundled
    texts = _texts(forms)
    texts["record_bid.schema.json"] = texts["record_bid.schema.json"].replace('"title"', '"title" "', 1)
    body = admin.post(f"{PAGE}/validate", json={"bpmn": text, "forms": texts}).get_json()
    messages = [p["message"] for p in body["error"]["problems"]]
    assert len(messages) == 1 and messages[0].startswith("form record_bid.schema.json is not JSON: ")
    assert body["badge"] == "Not valid: 1 problem"


def test_the_badge_counts_in_the_language_of_the_page(admin, bundled, sessions):
    text, forms = bundled
    two = renamed(renamed(text, "ut_release", NEW_NAME), "ut_publish_notice", "Publish the notice")
    assert admin.post(f"{PAGE}/validate", json={"bpmn": two, "forms": forms}).get_json()["badge"] == \
        "Not valid: 2 problems"
    admin.post("/language", data={"lang": "hi", "next": "/"})
    assert admin.post(f"{PAGE}/validate", json={"bpmn": two, "forms": forms}).get_json()["badge"] == \
        "मान्य नहीं: 2 समस्याएँ"
    one = renamed(text, "ut_release", NEW_NAME)
    assert admin.post(f"{PAGE}/validate", json={"bpmn": one, "forms": forms}).get_json()["badge"] == \
        "मान्य नहीं: 1 समस्या"
    assert admin.post(f"{PAGE}/validate", json={"bpmn": text, "forms": forms}).get_json()["badge"] == "मान्य"
