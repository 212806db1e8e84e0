"""The process diagram pages: bpmn-js served from npm's package, the version's BPMN, a case's markers."""

from __future__ import annotations

import re
from datetime import datetime

import pytest

from webapp.services.cases import cases
from webapp.services.running import uow
from webapp.web.pages.diagrams import BPMN_JS_DIST

from .conftest import PASSWORD


def login(client, username):
    response = client.post("/login", data={"username": username, "password": PASSWORD})
    assert response.status_code in (302, 303)


@pytest.mark.skipif(not BPMN_JS_DIST.is_dir(), reason="npm ci has not installed bpmn-js")
def test_bpmn_js_is_served_from_the_npm_package(client):
    from webapp.web.pages.diagrams import bpmn_js_version

    version = bpmn_js_version()
    assert re.fullmatch(r"\d+\.\d+\.\d+", version)  # the installed package's own (package-lock.json)
    response = client.get(f"/vendor/bpmn-js/{version}/bpmn-navigated-viewer.production.min.js")
    assert response.status_code == 200
    assert b"BpmnJS" in response.data[:200000]
    # under its version, for a year and immutable: a new version is a new URL
    assert response.headers["Cache-Control"] == "public, max-age=31536000, immutable"
    assert client.get("/vendor/bpmn-js/0.0.1/bpmn-navigated-viewer.production.min.js").status_code == 404
    assert client.get(f"/vendor/bpmn-js/{version}/../../package.json").status_code == 404


def test_current_process_page_links_the_deployed_bpmn(client):
    login(client, "sec")
    page = client.get("/processes/current")
    assert page.status_code == 200
    assert b"version 1" in page.data
    xml = client.get("/processes/1/bpmn")
    assert xml.status_code == 200
    assert b'<bpmn:process id="rule130_case"' in xml.data
    assert b"BPMNShape" in xml.data  # the diagram carries its drawing (DI)


def test_case_diagram_marks_the_ready_task(client, sessions, officers, virtual_clock):
    case = uow.perform(sessions, "start_case", cases.start_case, officers["pound_keeper"],
                       impounded_at=datetime.fromisoformat("2026-01-05T10:00:00+05:30"), place_seized="Bhimpura",
                       place_impounded="Kanji House", nearest_village="Bhimpura",
                       animals=[{"species": "cow", "description": "brown cow"}])
    login(client, "pk")
    page = client.get(f"/cases/{case.id}/diagram")
    assert page.status_code == 200
    assert b'data-active="' in page.data and b"ut_release" in page.data
    assert b"start_impounded" in page.data  # done
    login(client, "sec-khr")
    assert client.get(f"/cases/{case.id}/diagram").status_code == 404


def test_diagram_pages_need_a_login(client):
    assert client.get("/processes/current").status_code in (302, 401)
    assert client.get("/processes/1/bpmn").status_code in (302, 401)


def test_the_viewer_draws_the_labels_in_hindi_and_the_download_is_the_diagram_as_deployed(client, sessions):
    from lxml import etree

    from webapp.store.models import ProcessVersion

    login(client, "sec")
    assert client.post("/language", data={"lang": "hi", "next": "/processes/current"}).status_code == 302
    page = client.get("/processes/current").get_data(as_text=True)
    assert 'data-src="/processes/1/bpmn?labels=hi"' in page  # the viewer asks for Hindi labels
    assert 'href="/processes/1/bpmn">' in page  # the download link: the file as deployed
    with sessions() as session:
        deployed = session.get(ProcessVersion, 1).bpmn_xml
    assert client.get("/processes/1/bpmn").get_data(as_text=True) == deployed
    assert client.get("/processes/1/bpmn?labels=xx").get_data(as_text=True) == deployed

    hindi = client.get("/processes/1/bpmn?labels=hi")
    assert hindi.status_code == 200 and hindi.mimetype == "application/xml"
    parser = etree.XMLParser(resolve_entities=False, no_network=True)
    root = etree.fromstring(hindi.data, parser)
    names = {el.get("id"): el.get("name") for el in root.iter() if isinstance(el.tag, str) and el.get("id")}
    assert names["ut_decide_unsold"] == "न बिके पशुओं का निर्णय करें"  # a task
    assert names["pool_rule130_auction"] == "नियम 130(ख): सशर्त नीलामी"  # a pool
    assert names["lane_case_pound_keeper"] == "कांजी हाउस प्रभारी"  # a lane: its role in words
    assert names["f_no_unsold"] == "नहीं"  # a gateway's flow
    # nothing but the names differs: the same elements, ids and drawing
    original = etree.fromstring(deployed.encode("utf-8"), parser)
    assert [(el.tag, el.get("id")) for el in root.iter()] == [(el.tag, el.get("id")) for el in original.iter()]
    assert [el.attrib for el in root.iter("{*}Bounds")] == [el.attrib for el in original.iter("{*}Bounds")]
