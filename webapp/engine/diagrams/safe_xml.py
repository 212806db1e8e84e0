"""Reading a diagram's file safely: untrusted bytes to an lxml tree, or a refusal in words.

lxml reads with entities, DTDs and the network off and a size limit; a DTD or entity declaration is
refused before lxml sees it; libxml2's well-formedness errors are said in words with their line; a
root element other than ``bpmn:definitions`` is refused. This is step 1 of the pipeline of
:func:`webapp.engine.diagrams.parser.examine`.
"""

from __future__ import annotations

import re

from lxml import etree

from webapp.engine.diagrams.elements import BPMN_NS
from webapp.engine.diagrams.problems import Phrasebook, Problem, refusal
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
# libxml2's well-formedness errors (a pattern) -> the words ({encoding}: the file's declared encoding)
_SYNTAX = Phrasebook([
    (r"Opening and ending tag mismatch: (?P<opened>\S+) line (?P<line>\d+) and (?P<closed>\S+)",
     "the element <{opened}> opened on line {line} is closed by </{closed}>"),
    (r"Premature end of data in tag (?P<tag>\S+) line (?P<line>\d+)",
     "the file ends before the element <{tag}> opened on line {line} is closed"),
    (r"Invalid bytes in character encoding",
     "the file says its text is {encoding} but holds bytes that are not {encoding}; save it as {encoding}"),
    (r"(?P<attribute>xmlns(?::\S+)?): '(?P<uri>.*)' is not a valid URI",
     'the namespace declared as {attribute}="{uri}" is not a valid URI (a namespace URI holds no spaces)'),
    (r"Namespace prefix (?P<prefix>\S+) on (?P<tag>\S+) is not defined",
     'the prefix {prefix} of <{prefix}:{tag}> is not declared (xmlns:{prefix}="…")'),
    (r"Namespace prefix (?P<prefix>\S+) for (?P<name>\S+) on (?P<tag>\S+) is not defined",
     "the prefix {prefix} of the attribute {prefix}:{name} on <{tag}> is not declared"),
    (r"Extra content at the end of the document", "there is content after the end of the root element"),
    (r"Document is empty", "the file holds no XML element"),
    (r"Start tag expected, '<' not found", "the file does not begin with an XML element"),
    (r"Attribute (?P<name>\S+) redefined", "an element has the attribute {name} twice"),
    (r"xmlParseEntityRef: no name|EntityRef: expecting ';'",
     "a '&' starts no character or entity reference; write &amp; for '&'"),
    (r"Couldn't find end of Start Tag (?P<tag>\S+)", "the tag <{tag}> is not closed with '>'"),
    (r"Unescaped '<' not allowed in attributes values", "an attribute value holds '<'; write &lt;"),
])


def _not_well_formed(error: etree.XMLSyntaxError, prolog: bytes = b"") -> InvalidDiagram:
    """lxml's syntax error as a refusal in words, its problem carrying the line."""
    text = " ".join((error.msg or str(error)).split())
    position = _POSITION.search(text)
    text = _POSITION.sub("", text)
    declared = _ENCODING.search(prolog)
    encoding = declared.group(1).decode("ascii").upper() if declared else "UTF-8"
    text = _SYNTAX.say(text, encoding=encoding) or text
    line = error.lineno if isinstance(error.lineno, int) and error.lineno > 0 else None
    where = f" (line {position.group(1)}, column {position.group(2)})" if position else ""
    message = f"{NOT_WELL_FORMED}: {text}{where}"
    return refusal(message, [Problem(message, line=line)], [message])
