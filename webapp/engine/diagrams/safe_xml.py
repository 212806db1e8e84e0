"""Reading a diagram's file safely: untrusted bytes to an lxml tree, or a refusal in words.

lxml reads with entities, DTDs and the network off and a size limit; a DTD or entity declaration is
refused before lxml sees it; libxml2's well-formedness errors are said in words with their line; a
root element other than ``bpmn:definitions`` is refused. This is step 1 of the pipeline of
:func:`webapp.engine.diagrams.parser.examine`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from lxml import etree

from webapp.engine.diagrams.elements import BPMN_NS
from webapp.engine.diagrams.problems import Problem, refusal
from webapp.errors import InvalidDiagram

MAX_BPMN_BYTES = 2 * 1024 * 1024
DTD_REFUSED = "the file declares a DTD or entities; BPMN files must not"
NOT_BPMN = "the file is not BPMN 2.0: its root element is not bpmn:definitions"
NOT_WELL_FORMED = "the file is not well-formed XML"


def safe_xml_parser() -> etree.XMLParser:
    """An lxml parser that never expands entities, loads DTDs or touches the network."""
    return etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False,
                           dtd_validation=False, huge_tree=False, remove_comments=False)


def read_xml(bpmn_xml: bytes) -> etree._Element:
    """Parse untrusted BPMN XML safely.

    Raises:
        InvalidDiagram: too large, malformed (lxml's error in words, with its line), carrying a DTD /
            entity declarations, or with a root element other than bpmn:definitions.
    """
    if len(bpmn_xml) > MAX_BPMN_BYTES:
        raise InvalidDiagram(f"the diagram is {len(bpmn_xml)} bytes; the limit is {MAX_BPMN_BYTES}")
    # A DTD is refused before lxml sees it: libxml2 would otherwise stop a "billion laughs" file with
    # its own amplification error, a message that does not say what to remove.
    first_element = _FIRST_ELEMENT.search(bpmn_xml)
    prolog = bpmn_xml[:first_element.start() if first_element else len(bpmn_xml)].upper()
    if b"<!DOCTYPE" in prolog or b"<!ENTITY" in prolog:
        start = prolog.find(b"<!DOCTYPE") if b"<!DOCTYPE" in prolog else prolog.find(b"<!ENTITY")
        raise refusal(DTD_REFUSED, [Problem(DTD_REFUSED, line=bpmn_xml[:start].count(b"\n") + 1)], [DTD_REFUSED])
    try:
        root = etree.fromstring(bpmn_xml, safe_xml_parser())
    except etree.XMLSyntaxError as error:
        raise _not_well_formed(error, prolog) from None
    if root.getroottree().docinfo.internalDTD is not None:
        raise refusal(DTD_REFUSED, [Problem(DTD_REFUSED)], [DTD_REFUSED])
    if etree.QName(root).namespace != BPMN_NS or etree.QName(root).localname != "definitions":
        raise refusal(NOT_BPMN, [Problem(NOT_BPMN, line=root.sourceline)], [NOT_BPMN])
    return root


_FIRST_ELEMENT = re.compile(rb"<[A-Za-z_:]")
_POSITION = re.compile(r", line (\d+), column (\d+)$")
_ENCODING = re.compile(rb"""encoding\s*=\s*["']([A-Za-z0-9._-]+)["']""", re.I)
# libxml2's well-formedness errors, in words: (its message, ours)
_SYNTAX: list[tuple[re.Pattern[str], Callable[[re.Match[str], str], str]]] = [
    (re.compile(r"Opening and ending tag mismatch: (\S+) line (\d+) and (\S+)"),
     lambda m, enc: f"the element <{m[1]}> opened on line {m[2]} is closed by </{m[3]}>"),
    (re.compile(r"Premature end of data in tag (\S+) line (\d+)"),
     lambda m, enc: f"the file ends before the element <{m[1]}> opened on line {m[2]} is closed"),
    (re.compile(r"Invalid bytes in character encoding"),
     lambda m, enc: f"the file says its text is {enc} but holds bytes that are not {enc}; save it as {enc}"),
    (re.compile(r"xmlns:?(\S*): '(.*)' is not a valid URI"),
     lambda m, enc: f"the namespace declared as xmlns{':' + m[1] if m[1] else ''}=\"{m[2]}\" is not a valid URI "
                    "(a namespace URI holds no spaces)"),
    (re.compile(r"Namespace prefix (\S+) on (\S+) is not defined"),
     lambda m, enc: f"the prefix {m[1]} of <{m[1]}:{m[2]}> is not declared (xmlns:{m[1]}=\"…\")"),
    (re.compile(r"Namespace prefix (\S+) for (\S+) on (\S+) is not defined"),
     lambda m, enc: f"the prefix {m[1]} of the attribute {m[1]}:{m[2]} on <{m[3]}> is not declared"),
    (re.compile(r"Extra content at the end of the document"),
     lambda m, enc: "there is content after the end of the root element"),
    (re.compile(r"Document is empty"), lambda m, enc: "the file holds no XML element"),
    (re.compile(r"Start tag expected, '<' not found"), lambda m, enc: "the file does not begin with an XML element"),
    (re.compile(r"Attribute (\S+) redefined"), lambda m, enc: f"an element has the attribute {m[1]} twice"),
    (re.compile(r"xmlParseEntityRef: no name|EntityRef: expecting ';'"),
     lambda m, enc: "a '&' starts no character or entity reference; write &amp; for '&'"),
    (re.compile(r"Couldn't find end of Start Tag (\S+)"), lambda m, enc: f"the tag <{m[1]}> is not closed with '>'"),
    (re.compile(r"Unescaped '<' not allowed in attributes values"),
     lambda m, enc: "an attribute value holds '<'; write &lt;"),
]


def _not_well_formed(error: etree.XMLSyntaxError, prolog: bytes = b"") -> InvalidDiagram:
    """lxml's syntax error as a refusal in words, its problem carrying the line."""
    text = " ".join((error.msg or str(error)).split())
    position = _POSITION.search(text)
    text = _POSITION.sub("", text)
    declared = _ENCODING.search(prolog)
    encoding = declared.group(1).decode("ascii").upper() if declared else "UTF-8"
    for pattern, words in _SYNTAX:
        match = pattern.search(text)
        if match:
            text = words(match, encoding)
            break
    line = error.lineno if isinstance(error.lineno, int) and error.lineno > 0 else None
    where = f" (line {position.group(1)}, column {position.group(2)})" if position else ""
    message = f"{NOT_WELL_FORMED}: {text}{where}"
    return refusal(message, [Problem(message, line=line)], [message])
