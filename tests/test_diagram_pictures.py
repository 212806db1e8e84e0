"""The case diagram drawn on the server as SVG from the diagram's own layout (issue 32, item 4):
every flow node at the place its BPMN DI gives, the case's steps marked over the version's picture,
the picture cached under its digest, no bpmn-js on the case page, and a clear fallback in words for
diagrams of other modelling tools without DI or with odd DI."""

from __future__ import annotations

import re
from pathlib import Path

import lxml.html
import pytest
from lxml import etree

from webapp.engine.diagrams import drawing
from webapp.engine.diagrams.elements import BPMN_NS, BPMNDI_NS, DC_NS, FLOW_NODES
from webapp.services.diagrams import pictures, repository

from .test_web_pages import login, pass_release_window, start_case_on_page, text_of

ROOT = Path(__file__).resolve().parents[1]
BUNDLED = ROOT / "processes" / "rule130" / "rule130.bpmn"
CORPUS = ROOT / "tests" / "corpus" / "miwg"
SVG = "{http://www.w3.org/2000/svg}"


def svg_of(drawn: drawing.Drawing) -> etree._Element:
    return etree.fromstring(drawn.svg.encode("utf-8"))


def group(svg: etree._Element, element_id: str) -> etree._Element:
    found = svg.xpath(f'//s:g[@data-element-id="{element_id}"]', namespaces={"s": SVG[1:-1]})
    assert len(found) == 1, (element_id, len(found))
    return found[0]


def di_bounds(xml: bytes) -> dict[str, tuple[float, float, float, float]]:
    """element id -> (x, y, width, height) of its BPMNShape's dc:Bounds, read straight from the file."""
    root = etree.fromstring(xml)
    found = {}
    for shape in root.iter(f"{{{BPMNDI_NS}}}BPMNShape"):
        bounds = shape.find(f"{{{DC_NS}}}Bounds")
        found[shape.get("bpmnElement")] = tuple(float(bounds.get(k)) for k in ("x", "y", "width", "height"))
    return found


def test_every_flow_node_of_the_bundled_diagram_is_drawn_at_its_di_position():
    xml = BUNDLED.read_bytes()
    drawn = drawing.draw(xml)
    assert drawn.problem is None and drawn.undrawn == []
    svg = svg_of(drawn)
    root = etree.fromstring(xml)
    nodes = [e.get("id") for e in root.iter() if isinstance(e.tag, str) and e.tag.startswith(f"{{{BPMN_NS}}}")
             and etree.QName(e).localname in FLOW_NODES]
    assert len(nodes) == drawn.flow_nodes == 178
    bounds = di_bounds(xml)
    for node in nodes:  # every one, in its plane's group, with the file's own coordinates
        g = group(svg, node)
        assert tuple(float(g.get(k)) for k in ("data-x", "data-y", "data-width", "data-height")) == bounds[node], node
    # a few by their real figures: the release task, the first event, the timer on it, a gateway
    release = group(svg, "ut_release")
    rect = release.find(f"{SVG}rect")
    assert (rect.get("x"), rect.get("y"), rect.get("width"), rect.get("height"), rect.get("rx")) == \
        ("260", "20", "100", "80", "10")
    assert release.findtext(f"{SVG}title") == "Release cattle to owner"
    assert [t.text for t in release.iter(f"{SVG}tspan")] == ["Release", "cattle to", "owner"]  # wrapped in its box
    start = group(svg, "start_impounded").find(f"{SVG}circle")
    assert (start.get("cx"), start.get("cy"), start.get("r")) == ("150", "60", "18")  # 132 + 36/2, 42 + 36/2
    timer = group(svg, "bt_release_window")
    assert (timer.get("data-x"), timer.get("data-y")) == ("330", "82")
    assert timer.xpath('.//s:g[@class="timer-mark"]', namespaces={"s": SVG[1:-1]})  # the clock face
    gateways = [e.get("id") for e in root.iter(f"{{{BPMN_NS}}}exclusiveGateway")]
    assert group(svg, gateways[0]).xpath('.//s:path[@class="gateway-mark"]', namespaces={"s": SVG[1:-1]})
    # on the drawing, the first plane is moved by the margin: the shape's box is the file's + 20
    shape = drawn.shapes["ut_release"]
    assert (shape.kind, shape.x, shape.y, shape.width, shape.height) == ("task", 280.0, 40.0, 100.0, 80.0)
    # the bidding subprocess's own plane is drawn below the first, its nodes at their coordinates there
    assert group(svg, "b_start").get("data-x") == "112" and drawn.shapes["b_start"].y > drawn.shapes["sp_bidding"].y
    # every sequence flow with an edge is a path with an arrowhead; the lanes carry their roles as words
    flows = svg.xpath('//s:g[@class="flow"]/s:path', namespaces={"s": SVG[1:-1]})
    assert len(flows) == 177 and all(p.get("marker-end") == "url(#arrow)" for p in flows)
    assert "pound keeper" in "".join(group(svg, "lane_case_pound_keeper").itertext())
    # no script, no style attribute: it works as an image and under the Content-Security-Policy
    assert "<script" not in drawn.svg and " style=" not in drawn.svg


def test_the_hindi_picture_draws_the_diagrams_hindi_names_and_the_lanes_roles():
    xml = BUNDLED.read_text(encoding="utf-8")
    hindi = pictures.picture(xml, "hi")
    english = pictures.picture(xml, "en")
    svg = svg_of(hindi.drawing)
    label = "".join(group(svg, "ut_publish_notice").itertext())
    assert "सूचना" in label and "notice" not in label.lower(), label
    assert "कांजी हाउस प्रभारी" in " ".join(group(svg, "lane_case_pound_keeper").itertext())
    assert hindi.digest != english.digest and re.fullmatch(r"[0-9a-f]{16}", hindi.digest)
    assert pictures.picture(xml, "hi") is hindi  # cached per diagram and language


def test_the_marks_and_the_part_shown_around_the_active_step():
    drawn = pictures.picture(BUNDLED.read_text(encoding="utf-8"), "en").drawing
    found = pictures.marks(drawn, done=["start_impounded", "b_start"], active=["ut_publish_notice"],
                           waiting=["bt_overdue_publish", "not_in_the_diagram"])
    by_id = {m.id: m for m in found}
    # b_start lies inside the bidding subprocess's plane, drawn too: it is marked where it is drawn
    assert [m.state for m in found] == ["done", "done", "waiting", "active"]
    assert set(by_id) == {"start_impounded", "b_start", "bt_overdue_publish", "ut_publish_notice"}
    notice = drawn.shapes["ut_publish_notice"]
    mark = by_id["ut_publish_notice"]
    assert (mark.x, mark.y, mark.width, mark.height) == (notice.x - 6, notice.y - 6, notice.width + 12,
                                                         notice.height + 12)
    x, y, w, h = pictures.around(drawn, found)
    assert (w, h) == (520.0, 300.0)
    assert x <= mark.x and mark.x + mark.width <= x + w and y <= mark.y and mark.y + mark.height <= y + h
    assert pictures.around(drawn, pictures.marks(drawn, ["start_impounded"], [], [])) is None  # nothing active


# -- other modelling tools' diagrams (tests/corpus) and odd DI ---------------------------------------

@pytest.mark.parametrize("path", sorted(CORPUS.rglob("*.bpmn")), ids=lambda p: str(p.relative_to(CORPUS)))
def test_every_corpus_diagram_is_drawn_or_says_why_not(path):
    data = path.read_bytes()
    drawn = drawing.draw(data)
    if drawn.problem == "unreadable":
        assert drawn.svg == "" and drawn.detail  # the reason in words, from the safe reader
        return
    try:
        root = etree.fromstring(data, etree.XMLParser(resolve_entities=False, no_network=True))
    except etree.XMLSyntaxError:
        pytest.fail(f"{path}: read by draw but not by lxml")
    shapes = {s.get("bpmnElement") for s in root.iter(f"{{{BPMNDI_NS}}}BPMNShape")}
    ids = {e.get("id") for e in root.iter() if isinstance(e.tag, str) and e.get("id")}
    if not shapes & ids:
        assert drawn.problem == "no layout" and drawn.svg == ""
        return
    assert drawn.problem is None
    svg = svg_of(drawn)  # well-formed SVG
    drawn_ids = {g.get("data-element-id") for g in svg.iter(f"{SVG}g") if g.get("data-element-id")}
    assert set(drawn.shapes) <= drawn_ids
    assert len(drawn.shapes) >= 1


def test_the_corpus_files_that_are_not_well_formed_are_said_unreadable():
    for name in ("IBM Process Designer 8.0.1/A.3.0-export.bpmn", "GenMyModel 0.47/C.1.1-export.bpmn"):
        drawn = drawing.draw((CORPUS / name).read_bytes())
        assert drawn.problem == "unreadable" and "not well-formed" in drawn.detail, name


def test_a_bpmn_io_corpus_diagram_is_drawn_at_its_own_coordinates():
    path = CORPUS / "bpmn.io (Camunda Modeler) 18.6.1" / "C.1.1-export.bpmn"
    data = path.read_bytes()
    drawn = drawing.draw(data)
    assert drawn.problem is None and drawn.undrawn == []
    svg = svg_of(drawn)
    bounds = di_bounds(data)
    for element_id in drawn.shapes:
        g = group(svg, element_id)
        assert tuple(float(g.get(k)) for k in ("data-x", "data-y", "data-width", "data-height")) == bounds[element_id]


def without_di(xml: bytes) -> bytes:
    root = etree.fromstring(xml)
    for diagram in root.findall(f"{{{BPMNDI_NS}}}BPMNDiagram"):
        root.remove(diagram)
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")


def test_a_diagram_without_di_gives_no_picture_and_names_every_step_undrawn():
    drawn = drawing.draw(without_di(BUNDLED.read_bytes()))
    assert (drawn.svg, drawn.problem, drawn.flow_nodes, len(drawn.undrawn)) == ("", "no layout", 178, 178)


def test_odd_di_draws_what_it_can_and_names_what_it_cannot():
    text = BUNDLED.read_text(encoding="utf-8")
    odd = text.replace('<dc:Bounds x="260" y="20" width="100" height="80"/>',  # ut_release: bounds not numbers
                       '<dc:Bounds x="left" y="20" width="100" height="80"/>')
    odd = odd.replace('bpmnElement="svc_post_release"', 'bpmnElement="nowhere"')  # a shape of nothing
    odd = re.sub(r'(<bpmndi:BPMNEdge id="f_svc_overdue_publish_di" bpmnElement="f_svc_overdue_publish">\s*'
                 r'<di:waypoint x="1000" y="180"/>)\s*<di:waypoint x="1092" y="180"/>', r"\1", odd)  # one waypoint
    assert odd.count("left") and "nowhere" in odd
    drawn = drawing.draw(odd)
    assert drawn.problem is None
    assert drawn.undrawn == ["ut_release", "svc_post_release"]
    assert "ut_release" not in drawn.shapes and "start_impounded" in drawn.shapes
    assert 'data-element-id="f_svc_overdue_publish"' not in drawn.svg  # an edge of one point is not drawn
    svg_of(drawn)  # still well-formed


def test_names_are_escaped_in_the_svg():
    text = BUNDLED.read_text(encoding="utf-8").replace('name="Release cattle to owner"',
                                                       'name="Release &lt;b&gt; &amp; &quot;owner&quot;"', 1)
    drawn = drawing.draw(text)
    label = group(svg_of(drawn), "ut_release").findtext(f"{SVG}title")
    assert label == 'Release <b> & "owner"' and "<b>" not in drawn.svg


# -- the pages ---------------------------------------------------------------------------------------

def marks_on(html: str) -> dict[str, str]:
    """element id -> the state class of its mark on the case page's inline SVG."""
    doc = lxml.html.fromstring(html)
    found = {}
    for node in doc.xpath("//*[@id='case-picture']//*[@data-marks]"):
        classes = node.get("class").split()
        assert classes[0] == "mark"
        found[node.get("data-marks")] = classes[1]
    return found


def test_a_case_at_publish_notice_is_marked_on_the_drawn_picture_without_bpmn_js(client, sessions, virtual_clock):
    case_id = start_case_on_page(client, virtual_clock)
    pass_release_window(sessions, virtual_clock)  # the secretary's "Publish notice and open conditional auction"
    login(client, "sec")
    page = client.get(f"/cases/{case_id}")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    marks = marks_on(html)
    assert marks["ut_publish_notice"] == "active"
    assert marks == {"start_impounded": "done", "bt_release_window": "done", "svc_raise_report": "done",
                     "svc_notify_report": "done", "ut_publish_notice": "active",
                     # its timers (overdue, escalation) and the lot's message event wait
                     "bt_overdue_publish": "waiting", "bt_escalate_publish": "waiting",
                     "bm_lot_gone_before_notice": "waiting"}
    # no viewer on the first load: no bpmn-js, no diagram script, no diagram CSS
    assert "/vendor/bpmn-js/" not in html and "diagram" not in " ".join(re.findall(r'<script[^>]*src="([^"]+)"', html))
    assert "diagram.css" not in html and "diagram-" not in " ".join(re.findall(r'<link[^>]*href="([^"]+)"', html))
    doc = lxml.html.fromstring(html)
    svg = doc.get_element_by_id("case-picture").xpath(".//svg")[0]
    assert svg.get("data-part") == "active"
    x, y, w, h = (float(v) for v in svg.get("viewbox").split())
    notice = svg.xpath(".//*[@data-marks='ut_publish_notice']")[0]
    assert x <= float(notice.get("x")) and float(notice.get("x")) + float(notice.get("width")) <= x + w
    assert y <= float(notice.get("y")) and float(notice.get("y")) + float(notice.get("height")) <= y + h
    image = svg.xpath(".//image")[0].get("href")
    assert re.fullmatch(r"/processes/1/picture-en\.svg\?d=[0-9a-f]{16}", image)
    assert "Publish notice and open conditional auction" in text_of(page)  # in words, beside it
    # the picture: the version's, cached for a year under its digest; the interactive viewer is a link away
    picture = client.get(image)
    assert picture.status_code == 200 and picture.mimetype == "image/svg+xml"
    assert picture.headers["Cache-Control"] == "private, max-age=31536000, immutable"
    assert b'data-element-id="ut_publish_notice"' in picture.data
    assert client.get("/processes/1/picture-en.svg?d=0").headers["Cache-Control"] == "private, no-cache"
    assert client.get(image.replace("-en", "-xx")).status_code == 404
    assert client.get("/processes/999/picture-en.svg").status_code == 404
    assert doc.get_element_by_id("diagram-zoom").get("href") == f"/cases/{case_id}/diagram"
    assert "/vendor/bpmn-js/" in client.get(f"/cases/{case_id}/diagram").get_data(as_text=True)
    # the whole diagram, by a plain link
    whole = lxml.html.fromstring(client.get(f"/cases/{case_id}?diagram=whole").get_data(as_text=True))
    svg = whole.get_element_by_id("case-picture").xpath(".//svg")[0]
    assert svg.get("data-part") == "whole" and svg.get("viewbox") == "0 0 8660.0 3133.0"


def test_the_hindi_case_page_links_the_hindi_picture_and_translates_the_legend(client, sessions, virtual_clock):
    case_id = start_case_on_page(client, virtual_clock)
    login(client, "pk")
    assert client.post("/language", data={"lang": "hi", "next": "/tasks"}).status_code == 302
    html = client.get(f"/cases/{case_id}").get_data(as_text=True)
    assert "/processes/1/picture-hi.svg?d=" in html
    legend = lxml.html.fromstring(html).get_element_by_id("diagram-legend").text_content()
    assert "गोल कोनों वाले आयत कार्य हैं" in legend and "Rounded" not in legend
    assert marks_on(html)["ut_release"] == "active"


def test_a_version_without_di_gives_the_case_page_a_fallback_in_words(client, sessions, officers, virtual_clock):
    from webapp.services.cases import cases
    from webapp.services.running import uow

    bpmn, forms = repository.read_bundled()
    with sessions() as session:
        repository.deploy(session, without_di(bpmn), forms, "tests", note="no layout")
        session.commit()
    from datetime import datetime
    case = uow.perform(sessions, "start_case", cases.start_case, officers["pound_keeper"],
                       impounded_at=datetime.fromisoformat("2026-01-05T10:00:00+05:30"), place_seized="Bhimpura",
                       place_impounded="Kanji House", nearest_village="Bhimpura",
                       animals=[{"species": "cow", "description": "brown cow"}])
    login(client, "pk")
    page = client.get(f"/cases/{case.id}")
    assert page.status_code == 200
    doc = lxml.html.fromstring(page.get_data(as_text=True))
    assert "carries no layout (BPMN DI)" in doc.get_element_by_id("diagram-fallback").text_content()
    assert doc.xpath("//*[@id='case-picture']") == []
    assert "Active now: Release cattle to owner." in doc.get_element_by_id("diagram-steps").text_content()
    assert client.get("/processes/2/picture-en.svg").status_code == 404


def test_the_picture_needs_a_login(client):
    assert client.get("/processes/1/picture-en.svg").status_code in (302, 401)


@pytest.mark.parametrize("name", ["ARIS 10.2025.07/A.1.0-export.bpmn", "Trisotech BPMN Visio Add in 5.0.1/A.1.0-export.bpmn",
                                  "bpmn.io (Camunda Modeler) 18.6.1/C.2.0-export.bpmn"])
def test_a_corpus_diagram_with_its_di_taken_out_says_it_has_no_layout(name):
    data = (CORPUS / name).read_bytes()
    drawn = drawing.draw(without_di(data))
    assert drawn.problem == "no layout" and drawn.svg == ""
    assert drawn.flow_nodes == drawing.draw(data).flow_nodes == len(drawn.undrawn) > 0
