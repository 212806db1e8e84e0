"""Test helpers: rename an element of a BPMN text and give (or not) its Hindi, as the modeler writes it
(``<rule130:name lang="hi" of="...">`` in the element's extension elements: webapp/engine/diagrams/names.py)."""

from __future__ import annotations

from lxml import etree

from webapp.engine.diagrams.names import NAME_TAG, NAMES_NS

BPMN_NS = "http://www.omg.org/spec/BPMN/20100524/MODEL"


def renamed(text: str, element_id: str, name: str, hindi: str | None = None) -> str:
    """``text`` with element ``element_id`` named ``name``, and with ``hindi`` as its Hindi when given."""
    if hindi is not None and f'xmlns:rule130="{NAMES_NS}"' not in text:  # declared on the root, as bpmn-js does
        text = text.replace("<bpmn:definitions ", f'<bpmn:definitions xmlns:rule130="{NAMES_NS}" ', 1)
    root = etree.fromstring(text.encode("utf-8"))
    element = root.xpath("//*[@id=$id]", id=element_id)[0]
    element.set("name", name)
    if hindi is not None:
        extensions = element.find(f"{{{BPMN_NS}}}extensionElements")
        if extensions is None:
            extensions = etree.Element(f"{{{BPMN_NS}}}extensionElements")
            documentation = element.find(f"{{{BPMN_NS}}}documentation")
            element.insert(0 if documentation is None else element.index(documentation) + 1, extensions)
        made = etree.SubElement(extensions, NAME_TAG, lang="hi", of=name)
        made.text = hindi
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8").decode("utf-8")
