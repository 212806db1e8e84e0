"""Validity by the BPMN 2.0 XSD, every error in plain words.

The schema is the one SpiffWorkflow 3.2.0 validates with (``SpiffWorkflow.spiff.parser.process.VALIDATOR``):
the OMG's BPMN 2.0 XSDs (BPMN20.xsd with Semantic.xsd, BPMNDI.xsd, DC.xsd, DI.xsd, as SpiffWorkflow ships
them; they match the OMG files of https://www.omg.org/spec/BPMN/20100501/ but for white space) with
SpiffWorkflow's extension schema imported for the ``spiffworkflow:`` elements inside
``extensionElements``. lxml (libxml2) validates; its schema files are read from the installed package,
never the network.

libxml2 stops at nothing: :func:`problems` reports every error of its log, each about the element it
names (found by the log's XPath) in words — kind, name and id, and the path when the line is shared —
instead of its ``Element '{namespace}name'`` wording.
"""

from __future__ import annotations

import re
import threading
from typing import Any

from lxml import etree
from SpiffWorkflow.spiff.parser.process import VALIDATOR

from webapp.engine.diagrams import elements as el
from webapp.engine.diagrams.problems import Problem

_lock = threading.Lock()  # the schema keeps its error log on itself: one validation at a time
_ELEMENT = re.compile(r"^Element '(?P<element>[^']*)'(?:, attribute '(?P<attribute>[^']*)')?: (?P<rest>.*)$", re.S)
_CLARK = re.compile(r"\{([^}]*)\}([\w.\-]+)")
_LIST = re.compile(r"Expected is (?:one of )?\( (?P<items>.*?) \)")
_OPTIONAL = {"documentation", "extensionElements", "extension"}
TYPE_WORDS = {
    "xs:ID": "identifier (an XML name: it begins with a letter or '_' and holds no spaces or colons)",
    "xs:IDREF": "reference to an identifier (an XML name: it begins with a letter or '_' and holds no spaces or "
                "colons)",
    "xs:IDREFS": "list of references to identifiers",
    "xs:QName": "qualified name (prefix:name, the prefix declared in the file)",
    "xs:boolean": "boolean (true or false)",
    "xs:integer": "whole number", "xs:int": "whole number", "xs:nonNegativeInteger": "whole number of 0 or more",
    "xs:positiveInteger": "whole number of 1 or more",
    "xs:double": "number", "xs:float": "number", "xs:decimal": "number",
    "xs:anyURI": "URI", "xs:NCName": "XML name without a colon", "xs:dateTime": "date and time",
}


def validate(root: Any) -> list[Any]:
    """Validate ``root`` by the schema; returns libxml2's error log entries (empty: valid)."""
    with _lock:
        if VALIDATOR.validator.validate(root):
            return []
        return list(VALIDATOR.validator.error_log)


def problems(root: Any) -> list[Problem]:
    """Every XSD error of the document as a Problem in plain words (empty when the file is valid BPMN 2.0),
    then the warnings of what is read as SpiffWorkflow reads it (:func:`read_as_spiffworkflow`).

    Each problem names the element (kind, name, id) the error is about, or the element around it with an id
    when it has none; a problem inside a process marked not executable says so.
    """
    read_as = read_as_spiffworkflow(root)
    entries = validate(root)
    if not entries:
        return read_as
    prefixes = _prefixes(root)
    found: list[Problem] = []
    seen: set[tuple[Any, ...]] = set()
    undeclared: set[tuple[Any, ...]] = set()
    for entry in entries:
        element = _element_at(root, entry.path, prefixes)
        match = _ELEMENT.match(entry.message or "")
        attribute = _attribute_words(match.group("attribute"), element) if match and match.group("attribute") else None
        rest = (match.group("rest") if match else entry.message or "").strip()
        key = (id(element), attribute)
        if "has no corresponding namespace declaration" in rest:
            undeclared.add(key)
        elif "is not a valid value of the atomic type 'xs:QName'" in rest and key in undeclared:
            continue  # libxml2 says it twice: the undeclared prefix is the reason
        message = _words(element, attribute, rest, root)
        if (key, message) in seen:
            continue
        seen.add((key, message))
        element_id, line, where = el.where(element, root) if element is not None else (None, entry.line, None)
        found.append(Problem(message + _not_executable(element), element_id, line or entry.line, path=where))
    return found + read_as


def read_as_spiffworkflow(root: Any) -> list[Problem]:
    """Rewrite, in place, what SpiffWorkflow's validator rewrites before it validates, and warn of it.

    bpmn-js writes a correlation property's retrieval expression as ``bpmn:formalExpression`` where BPMN 2.0
    has ``bpmn:messagePath``; SpiffWorkflow 3.2.0 (``BpmnValidator.preprocess``) reads it as messagePath,
    and so does this check. Returns a warning for each (they do not stop a deploy).
    """
    found = []
    for expression in root.iterfind(f".//{{{el.BPMN_NS}}}correlationPropertyRetrievalExpression/"
                                    f"{{{el.BPMN_NS}}}formalExpression"):
        expression.tag = f"{{{el.BPMN_NS}}}messagePath"
        element_id, line, where = el.where(expression, root)
        found.append(Problem(f"{el.describe(expression.getparent(), root)} holds a bpmn:formalExpression where BPMN "
                             "2.0 has bpmn:messagePath (bpmn-js writes it so); it is read as messagePath, as "
                             "SpiffWorkflow reads it", element_id, line, "warning", where))
    return found


def _prefixes(root: Any) -> dict[str, str]:
    """Every prefix the document declares (for the XPaths of libxml2's log)."""
    found: dict[str, str] = {}
    for element in root.iter():
        if isinstance(element.tag, str):
            for prefix, namespace in element.nsmap.items():
                if prefix and prefix not in found:
                    found[prefix] = namespace
    return found


def _element_at(root: Any, xpath: str | None, prefixes: dict[str, str]) -> Any:
    if not xpath:
        return None
    try:
        found = root.getroottree().xpath(xpath, namespaces=prefixes)
    except (etree.XPathError, TypeError, ValueError):
        return None
    return found[0] if isinstance(found, list) and found and isinstance(getattr(found[0], "tag", None), str) \
        else None


def _clark(text: str, element: Any) -> str:
    """``{namespace}name`` notation rewritten as ``prefix:name`` (BPMN model names without a prefix)."""
    def one(match: re.Match[str]) -> str:
        namespace, name = match.group(1), match.group(2)
        return name if namespace == el.BPMN_NS else el.qualified(namespace, name, element)
    return _CLARK.sub(one, text)


def _attribute_words(attribute: str, element: Any) -> str:
    return _clark(attribute, element)


def _expected(rest: str, element: Any, drop_optional: bool) -> list[str]:
    match = _LIST.search(rest)
    if not match:
        return []
    items = [i.strip() for i in match.group("items").split(",") if i.strip()]
    words = []
    for item in items:
        if item.startswith("##other"):
            words.append("an element of another namespace than BPMN's")
            continue
        plain = _clark(item, element)
        if drop_optional and plain.rpartition(":")[2] in _OPTIONAL:
            continue
        words.append(plain)
    if len(items) >= 10:  # libxml2 lists at most ten
        words.append("…")
    return words


def _subject(element: Any, root: Any) -> str:
    return el.describe(element, root) if element is not None else "an element"


def _words(element: Any, attribute: str | None, rest: str, root: Any) -> str:
    """libxml2's ``rest`` (what follows ``Element '...':``) as a sentence about ``element``."""
    subject = _subject(element, root)
    spiff = element is not None and etree.QName(element).namespace == el.SPIFF_NS
    schema = "SpiffWorkflow's extension schema (spiffworkflow.xsd)" if spiff else "the BPMN 2.0 schema"
    if rest.startswith("This element is not expected"):
        expected = _expected(rest, element, drop_optional=False)
        parent = element.getparent() if element is not None else None
        named = element is not None and (element.get("id") or el.name_of(element))
        inside = f" inside {el.describe(parent, root)}" if parent is not None and named else ""
        tail = f"; at this place it expects {', '.join(expected)}" if expected else ""
        return (f"{subject} is not allowed at this place{inside} by {schema} (it fixes which elements may appear "
                f"and in what order){tail}")
    if rest.startswith("Missing child element"):
        expected = _expected(rest, element, drop_optional=True) or _expected(rest, element, drop_optional=False)
        return f"{subject} lacks a child element that {schema} requires here: {' or '.join(expected)}"
    required = re.match(r"The attribute '([^']*)' is required but missing", rest)
    if required:
        return f"{subject} has no {_clark(required.group(1), element)} attribute, which {schema} requires"
    if re.match(r"The attribute '([^']*)' is not allowed", rest):
        return f"{subject} has the attribute {attribute}, which {schema} does not allow on {_a(_kind(element))}"
    undeclared = re.match(r"The QName value '([^']*)' has no corresponding namespace declaration in scope", rest)
    if undeclared:
        value = undeclared.group(1)
        prefix = value.partition(":")[0]
        return (f"{subject}: the {_of(attribute)} '{value}' uses the prefix {prefix}, which the file does not "
                f"declare; declare it (xmlns:{prefix}=\"…\") or write the value with a declared prefix")
    atomic = re.match(r"'(?P<value>.*)' is not a valid value of the atomic type '(?P<type>[^']*)'", rest, re.S)
    if atomic:
        value, type_name = atomic.group("value"), atomic.group("type")
        if type_name == "xs:ID" and _is_ncname(value):
            return (f"{subject}: its id '{value}' is also the id of another element; every id in a file must be "
                    "unique")
        words = TYPE_WORDS.get(type_name, f"value of the type {type_name}")
        return f"{subject}: the {_of(attribute)} '{_short(value)}' is not a valid {words}"
    enumeration = re.match(r"\[facet 'enumeration'\] The value '(?P<value>[^']*)' is not an element of the set "
                           r"\{(?P<set>.*)\}", rest)
    if enumeration:
        allowed = ", ".join(v.strip().strip("'") for v in enumeration.group("set").split(","))
        return (f"{subject}: the {_of(attribute)} '{enumeration.group('value')}' is not one of the values "
                f"{schema} allows ({allowed})")
    facet = re.match(r"\[facet '(?P<facet>\w+)'\] The value '(?P<value>[^']*)'", rest)
    if facet:
        return (f"{subject}: the {_of(attribute)} '{_short(facet.group('value'))}' does not meet {schema}'s "
                f"{facet.group('facet')} restriction")
    if rest.startswith("No matching global element declaration available, but demanded by the strict wildcard"):
        element_ns = etree.QName(element).namespace if element is not None else None
        container = element.getparent() if element is not None else None
        advice = ("remove it (the diagram interchange schema takes only declared elements in its extension)"
                  if container is not None and etree.QName(container).namespace == el.DI_NS else
                  "remove it, or keep tool data inside bpmn:extensionElements")
        return (f"{subject} is an element of namespace {element_ns or '(none)'} that no schema known here "
                f"declares, and {schema} checks the elements at this place strictly; {advice}")
    if rest.startswith("Character content other than whitespace is not allowed"):
        return f"{subject} holds text, which {schema} does not allow in {_a(_kind(element))}"
    if rest.startswith("Element content is not allowed"):
        return f"{subject} holds elements, which {schema} does not allow in it"
    if re.match(r"No matching global declaration available for the validation root", rest):
        return "the file's root element is not bpmn:definitions of BPMN 2.0"
    # Anything else libxml2 says: its sentence, with names as a BPMN file writes them.
    sentence = _clark(rest, element).rstrip(". ")
    return f"{subject} is not valid by {schema}: {sentence}"


def _kind(element: Any) -> str:
    return el.kind(element) if element is not None else "element"


def _a(words: str) -> str:
    """``a task``, ``an exclusive gateway``, ``the extension element <x:y>``."""
    if words.startswith("extension element"):
        return f"the {words}"
    return f"{'an' if words[:1].lower() in 'aeiou' else 'a'} {words}"


def _of(attribute: str | None) -> str:
    return f"attribute {attribute}" if attribute else "content"


def _short(value: str, limit: int = 80) -> str:
    value = " ".join(value.split())
    return value if len(value) <= limit else value[:limit - 1] + "…"


_NCNAME = re.compile(r"^[A-Za-z_][\w.\-]*$")


def _is_ncname(value: str) -> bool:
    return bool(_NCNAME.match(value))


def _not_executable(element: Any) -> str:
    """``; it is in process X, which is not executable`` for an element of a process marked not executable."""
    process = el.process_of(element) if element is not None else None
    if process is None or (process.get("isExecutable") or "").strip() not in ("false", "0"):
        return ""
    return f" (it is in {el.describe(process)}, which is not executable)"
