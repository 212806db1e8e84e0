"""The Hindi names of a diagram's elements, held in the diagram itself (no Flask here).

Officers read the names of tasks, events, gateways, flows and lanes on Hindi pages, so every name in
the process that runs needs its Hindi. A name has Hindi when

- the element carries it as an extension element of this project::

      <bpmn:extensionElements>
        <rule130:name lang="hi" of="Record the bid">बोली दर्ज करें</rule130:name>
      </bpmn:extensionElements>

  (``of`` is the English name it translates: once the English name changes, the old Hindi no longer
  counts, and the administrator is asked for the Hindi of the new name); or
- the catalogue has it (``webapp/translations/hi/LC_MESSAGES/messages.po``: the names of the bundled
  diagram, extracted by ``webapp/i18n/extract.py``; a lane's role as words, ``pound keeper``).

The Hindi travels with the diagram: the draft, the deployed version and its downloaded file hold
it, and ``rule130 deploy``, the modeler and the API refuse a name without Hindi alike
(:func:`missing_hindi`, called by :func:`webapp.engine.diagrams.parser.check_project_rules`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from lxml import etree

from webapp.engine.diagrams import elements as el
from webapp.engine.diagrams.problems import Problem

NAMES_NS = "urn:rule130:bpmn:names"
NAME_TAG = f"{{{NAMES_NS}}}name"
LANGUAGE = "hi"
# The elements whose names officers read as text or on the drawn diagram (webapp.i18n.extract).
NAMED = ("task", "userTask", "manualTask", "serviceTask", "scriptTask", "sendTask", "receiveTask",
         "businessRuleTask", "callActivity", "subProcess", "transaction", "startEvent", "endEvent", "boundaryEvent",
         "intermediateCatchEvent", "intermediateThrowEvent", "exclusiveGateway", "inclusiveGateway",
         "parallelGateway", "eventBasedGateway", "complexGateway", "sequenceFlow", "lane")


def words(name: str | None) -> str:
    """A name with its white space collapsed (as the pages show it); a lane's role keeps its "_"."""
    return " ".join((name or "").split())


def catalogue_key(element: Any) -> str:
    """The catalogue entry that holds the element's Hindi: its name, or for a lane its role as words."""
    name = words(element.get("name"))
    return name.replace("_", " ") if el.local(element) == "lane" else name


def own_hindi(element: Any, language: str = LANGUAGE) -> str | None:
    """The Hindi the element itself carries for its current name (``<rule130:name lang="hi" of=...>``),
    or None (none, blank, or written for another English name)."""
    name = words(element.get("name"))
    extensions = element.find(f"{{{el.BPMN_NS}}}extensionElements")
    if extensions is None:
        return None
    for found in extensions.iter(NAME_TAG):
        text = words(found.text)
        if found.get("lang") == language and text and words(found.get("of")) == name:
            return text
    return None


def named_elements(root: Any, scope: set[Any] | None = None) -> Iterator[Any]:
    """Every element of :data:`NAMED` with a name, in document order (within ``scope`` when given)."""
    tags = [f"{{{el.BPMN_NS}}}{kind}" for kind in NAMED]
    for element in root.iter(*tags):
        if (scope is None or element in scope) and words(element.get("name")):
            yield element


def missing_hindi(root: Any, scope: set[Any], catalogue: Callable[[str], str | None],
                  roles: Iterable[str] = ()) -> list[Problem]:
    """One error per named element of the process that runs whose name has no Hindi.

    Args:
        root: the parsed document.
        scope: the elements that would run (:func:`webapp.engine.diagrams.elements.scope`).
        catalogue: the catalogue's Hindi of an English text, or None when it has none.
        roles: the roles a lane may be; a lane named otherwise is refused for that (by the lane
            rule of :func:`webapp.engine.diagrams.parser.check_project_rules`), not told twice.
    Returns:
        Problems naming each element by kind, name and id, with the remedy.
    """
    problems = []
    known_roles = set(roles)
    for element in named_elements(root, scope):
        if own_hindi(element) or catalogue(catalogue_key(element)):
            continue
        if known_roles and el.local(element) == "lane" and words(element.get("name")) not in known_roles:
            continue
        element_id, line, path = el.where(element)
        problems.append(Problem(
            f"{el.describe(element)} (id {element.get('id') or '?'}) has no Hindi name; Hindi pages would show it "
            "in English. Give its Hindi in the modeler (Hindi name, beside its name) or as "
            f'<rule130:name lang="hi" of="{words(element.get("name"))}">…</rule130:name> in its extension elements',
            element_id, line, "error", path))
    return problems


def hindi_names(bpmn_xml: bytes | str) -> dict[str, str]:
    """English text -> Hindi of every name the diagram carries Hindi for (its ``rule130:name``
    extensions that match the current name); the catalogue key of a lane is its role as words.
    Unreadable XML gives an empty mapping (a deployed version is always readable)."""
    data = bpmn_xml.encode("utf-8") if isinstance(bpmn_xml, str) else bpmn_xml
    try:
        root = etree.fromstring(data, etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False))
    except etree.XMLSyntaxError:
        return {}
    found = {}
    for element in named_elements(root):
        hindi = own_hindi(element)
        if hindi:
            found[catalogue_key(element)] = hindi
    return found
