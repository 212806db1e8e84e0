"""A BPMN diagram drawn as SVG on the server from its own layout (BPMN DI), so a page shows it
without JavaScript (issue 32, item 4).

:func:`draw` reads the diagram with the safe parser (:func:`webapp.engine.diagrams.safe_xml.read_xml`:
entities, DTDs and the network off) and draws what its diagram interchange says: each
``bpmndi:BPMNShape``'s ``dc:Bounds`` (pools and lanes with their names in a band, tasks as rounded
rectangles with their names wrapped inside, events as circles — a timer with a clock face, a message
with an envelope, a signal with a triangle, an end event with a thick rim —, gateways as diamonds with
×, + or o) and each ``bpmndi:BPMNEdge``'s ``di:waypoint`` list (sequence flows with arrowheads, message
flows dashed), names at their ``bpmndi:BPMNLabel`` bounds when given. The coordinates are the file's
own: each plane is a ``<g>`` translated as a whole, and every element's ``<g>`` carries
``data-element-id`` (the BPMN id) and, for a shape, ``data-x``/``data-y``/``data-width``/``data-height``
as written in the file. A second plane (a collapsed subprocess drawn inside, as bpmn.io writes it) is
drawn below the first.

The SVG uses presentation attributes only (no ``style``, no script): it works as an ``<img>``, as a
document of its own and under a Content-Security-Policy without ``'unsafe-inline'``. Text is escaped.

A diagram without DI, or with DI that points nowhere, is not an error: the :class:`Drawing` says what
could not be drawn (``problem``, ``undrawn``) so a page can say it in words. No Flask here.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from html import escape
from typing import Any

from webapp.engine.diagrams import elements as el
from webapp.engine.diagrams.safe_xml import read_xml
from webapp.errors import Rule130Error

BPMN = f"{{{el.BPMN_NS}}}"
BPMNDI = f"{{{el.BPMNDI_NS}}}"
DC = f"{{{el.DC_NS}}}"
DI = f"{{{el.DI_NS}}}"

FONT = 12.0  # the labels' size, in the diagram's units (bpmn-js draws 12 px labels at scale 1)
LINE = 14.0  # their line height
MARGIN = 20.0  # around the drawing
PLANE_GAP = 60.0  # between two planes drawn one below the other
EVENTS = frozenset({"startEvent", "endEvent", "intermediateCatchEvent", "intermediateThrowEvent",
                    "boundaryEvent", "implicitThrowEvent"})
GATEWAYS = frozenset({"exclusiveGateway", "inclusiveGateway", "parallelGateway", "eventBasedGateway",
                      "complexGateway"})
SUBPROCESSES = frozenset({"subProcess", "transaction", "adHocSubProcess"})
INK, PAPER, FAINT = "#222", "#fff", "#888"

Label = Callable[[Any], str]


@dataclass(frozen=True)
class Shape:
    """A drawn shape: its BPMN ``id``, ``kind`` ("task", "event", "gateway", "lane", "pool",
    "other"), the BPMN element's local name (``tag``), its name as drawn, and its bounds on the
    drawing (the file's bounds moved with their plane; units of the diagram)."""

    id: str
    kind: str
    tag: str
    name: str
    x: float
    y: float
    width: float
    height: float


@dataclass(frozen=True)
class Drawing:
    """What :func:`draw` made.

    ``svg``: the ``<svg>`` element as text ("" when nothing could be drawn), its ``viewBox`` being
    ``0 0 width height``; ``shapes``: element id -> :class:`Shape` (pools, lanes, flow nodes);
    ``parents``: flow node id -> the id of the subprocess it lies in (to mark a step drawn only
    inside a collapsed subprocess); ``flow_nodes``: the flow nodes of the diagram's processes;
    ``undrawn``: the ids of those the layout does not place (no shape, or bounds that are not
    numbers); ``problem``: ``"unreadable"`` (the file is not BPMN XML; ``detail`` says why),
    ``"no layout"`` (no BPMN DI shape at all) or None.
    """

    svg: str
    width: float = 0.0
    height: float = 0.0
    shapes: dict[str, Shape] = field(default_factory=dict)
    parents: dict[str, str] = field(default_factory=dict)
    flow_nodes: int = 0
    undrawn: list[str] = field(default_factory=list)
    problem: str | None = None
    detail: str = ""


def plain_name(element: Any) -> str:
    """The element's name with its white space collapsed; a lane's role ``pound_keeper`` as words."""
    name = " ".join((element.get("name") or "").split())
    return name.replace("_", " ") if el.local(element) == "lane" else name


def draw(bpmn_xml: bytes | str, label: Label = plain_name) -> Drawing:
    """The diagram ``bpmn_xml`` drawn from its BPMN DI.

    Args:
        bpmn_xml: the file's bytes (or text); untrusted input is fine (read by the safe parser).
        label: the name to draw for a BPMN element (default: its name as written; a page passes
            the name in its language).
    Returns:
        A :class:`Drawing`; never raises for a bad file (``problem`` says what is wrong).
    """
    data = bpmn_xml.encode("utf-8") if isinstance(bpmn_xml, str) else bpmn_xml
    try:
        root = read_xml(data)
    except Rule130Error as error:
        return Drawing("", problem="unreadable", detail=str(error))
    by_id = {e.get("id"): e for e in root.iter() if isinstance(e.tag, str) and e.get("id")}
    nodes = [e for e in root.iter() if isinstance(e.tag, str) and etree_ns(e) == el.BPMN_NS
             and el.local(e) in el.FLOW_NODES and e.get("id")]
    parents = {n.get("id"): p.get("id") for n in nodes
               if (p := n.getparent()) is not None and el.local(p) in SUBPROCESSES and p.get("id")}
    canvas = _Canvas(by_id, label)
    planes = [p for p in root.iter(f"{BPMNDI}BPMNPlane")]
    top = 0.0
    for plane in planes:
        box = _extent(plane)
        if box is None:
            continue
        x0, y0, x1, y1 = box
        title = by_id.get(plane.get("bpmnElement") or "")
        heading = 0.0
        if top > 0 and title is not None and el.local(title) in SUBPROCESSES:
            heading = LINE * 2  # "Inside: <the subprocess's name>" above the plane
        dx, dy = MARGIN - x0, top + MARGIN + heading - y0
        canvas.plane(plane, dx, dy, title if heading else None, (x1 - x0, top + MARGIN))
        top += (y1 - y0) + heading + PLANE_GAP
    if not canvas.shapes:
        return Drawing("", flow_nodes=len(nodes), undrawn=[n.get("id") for n in nodes], parents=parents,
                       problem="no layout")
    width = max(canvas.right, 1.0) + MARGIN
    height = max(top - PLANE_GAP + 2 * MARGIN, 1.0)
    undrawn = [n.get("id") for n in nodes if n.get("id") not in canvas.shapes
               and not _inside_drawn(n.get("id"), parents, canvas.shapes)]
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_n(width)} {_n(height)}" '
           f'width="{_n(width)}" height="{_n(height)}" font-family="sans-serif" font-size="{_n(FONT)}">'
           f'<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" '
           f'orient="auto-start-reverse"><path d="M0 0L10 5L0 10z" fill="{INK}"/></marker>'
           f'<marker id="open-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" '
           f'orient="auto"><path d="M0 0L10 5L0 10z" fill="{PAPER}" stroke="{INK}"/></marker></defs>'
           f'<rect width="100%" height="100%" fill="{PAPER}"/>'
           + "".join(canvas.out) + "</svg>")
    return Drawing(svg, width, height, canvas.shapes, parents, len(nodes), undrawn)


def etree_ns(element: Any) -> str:
    tag = element.tag
    return tag[1:].split("}", 1)[0] if tag.startswith("{") else ""


def _inside_drawn(node_id: str, parents: dict[str, str], shapes: dict[str, Shape]) -> bool:
    """A node inside a subprocess that is drawn (collapsed, its inside not laid out) counts as drawn."""
    seen = set()
    up = parents.get(node_id)
    while up and up not in seen:
        if up in shapes:
            return True
        seen.add(up)
        up = parents.get(up)
    return False


def _n(value: float) -> str:
    """A coordinate, at most one decimal."""
    text = f"{round(value, 1):.1f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _a(text: str) -> str:
    return escape(text, quote=True)


def _number(node: Any, name: str) -> float | None:
    try:
        value = float(node.get(name))
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def _bounds(node: Any) -> tuple[float, float, float, float] | None:
    """``(x, y, width, height)`` of the ``dc:Bounds`` child, or None when missing or not numbers."""
    bounds = node.find(f"{DC}Bounds") if node is not None else None
    if bounds is None:
        return None
    values = [_number(bounds, k) for k in ("x", "y", "width", "height")]
    if any(v is None for v in values):
        return None
    x, y, w, h = (float(v) for v in values if v is not None)
    return (x, y, w, h) if w >= 0 and h >= 0 else None


def _waypoints(edge: Any) -> list[tuple[float, float]]:
    points = []
    for point in edge.iter(f"{DI}waypoint"):
        x, y = _number(point, "x"), _number(point, "y")
        if x is not None and y is not None:
            points.append((x, y))
    return points


def _extent(plane: Any) -> tuple[float, float, float, float] | None:
    """The box around every usable shape, waypoint and label of a plane, or None when it has none."""
    xs: list[float] = []
    ys: list[float] = []
    for shape in plane.iter(f"{BPMNDI}BPMNShape", f"{BPMNDI}BPMNLabel"):
        box = _bounds(shape)
        if box:
            xs += [box[0], box[0] + box[2]]
            ys += [box[1], box[1] + box[3]]
    for edge in plane.iter(f"{BPMNDI}BPMNEdge"):
        for x, y in _waypoints(edge):
            xs.append(x)
            ys.append(y)
    if not xs:
        return None
    return min(xs), min(ys), max(xs), max(ys)


def wrap(text: str, width: float, most: int) -> list[str]:
    """``text`` in lines of at most ``width`` units at :data:`FONT` (an estimate: 0.55 em a Latin
    letter, 0.62 em a Devanagari one), at most ``most`` lines, the last cut with "…"."""
    def wide(s: str) -> float:
        return sum(FONT * (0.62 if "\u0900" <= ch <= "\u097f" else 0.55) for ch in s)

    lines: list[str] = []
    current = ""
    for word in text.split():
        candidate = f"{current} {word}" if current else word
        if current and wide(candidate) > width:
            lines.append(current)
            current = word
        else:
            current = candidate
    if current:
        lines.append(current)
    if len(lines) > most >= 1:
        lines = lines[:most]
        lines[-1] = lines[-1].rstrip(".,") + "…"
    return lines


class _Canvas:
    """The SVG text of the planes drawn so far, with the shapes placed."""

    def __init__(self, by_id: dict[str, Any], label: Label) -> None:
        self.by_id = by_id
        self.label = label
        self.shapes: dict[str, Shape] = {}
        self.out: list[str] = []
        self.right = 0.0

    def name(self, element: Any) -> str:
        try:
            return " ".join(str(self.label(element) or "").split())
        except Exception:  # a label that cannot be made in the language: the name as written
            return plain_name(element)

    def plane(self, plane: Any, dx: float, dy: float, title: Any, size: tuple[float, float]) -> None:
        self.right = max(self.right, size[0] + MARGIN)
        self.out.append(f'<g class="plane" data-plane="{_a(plane.get("id") or "")}" '
                        f'transform="translate({_n(dx)} {_n(dy)})">')
        if title is not None:
            x0 = MARGIN - dx
            y0 = size[1] - dy
            self.out.append(f'<text x="{_n(x0)}" y="{_n(y0 + LINE)}" font-weight="bold">'
                            f'{_a(self.name(title))}</text>')
        shapes = list(plane.iter(f"{BPMNDI}BPMNShape"))
        # pools and lanes first (underneath), then edges, then the flow nodes over them
        back = [s for s in shapes if el.local(self.by_id.get(s.get("bpmnElement") or "", s)) in ("participant", "lane")]
        front = [s for s in shapes if s not in back]
        for shape in back:
            self.shape(shape, dx, dy)
        for edge in plane.iter(f"{BPMNDI}BPMNEdge"):
            self.edge(edge)
        for shape in front:
            self.shape(shape, dx, dy)
        self.out.append("</g>")

    def shape(self, di: Any, dx: float, dy: float) -> None:
        element = self.by_id.get(di.get("bpmnElement") or "")
        box = _bounds(di)
        if element is None or box is None:
            return
        tag = el.local(element)
        x, y, w, h = box
        name = self.name(element)
        if tag == "participant":
            kind = "pool"
        elif tag == "lane":
            kind = "lane"
        elif tag in el.ACTIVITIES:
            kind = "task"
        elif tag in EVENTS:
            kind = "event"
        elif tag in GATEWAYS:
            kind = "gateway"
        else:
            kind = "other"
        element_id = element.get("id")
        if element_id in self.shapes:
            return  # a second shape of the same element (odd DI): the first counts
        self.shapes[element_id] = Shape(element_id, kind, tag, name, x + dx, y + dy, w, h)
        self.out.append(f'<g class="el {kind}" data-element-id="{_a(element_id)}" data-x="{_n(x)}" '
                        f'data-y="{_n(y)}" data-width="{_n(w)}" data-height="{_n(h)}">')
        if name and kind != "lane" and kind != "pool":
            self.out.append(f"<title>{_a(name)}</title>")
        getattr(self, f"_{kind}")(element, di, x, y, w, h, name)
        self.out.append("</g>")

    # -- the shapes -----------------------------------------------------------------------------

    def _band(self, di: Any, x: float, y: float, w: float, h: float, name: str, fill: str) -> None:
        horizontal = di.get("isHorizontal") != "false"
        self.out.append(f'<rect x="{_n(x)}" y="{_n(y)}" width="{_n(w)}" height="{_n(h)}" fill="none" '
                        f'stroke="{FAINT}"/>')
        if horizontal:
            self.out.append(f'<rect x="{_n(x)}" y="{_n(y)}" width="30" height="{_n(h)}" fill="{fill}" '
                            f'stroke="{FAINT}"/>')
            cx, cy = x + 15, y + h / 2
            lines = wrap(name, max(h - 10, 20), 2)
            self.out.append(f'<text transform="rotate(-90 {_n(cx)} {_n(cy)})" text-anchor="middle" '
                            f'x="{_n(cx)}" y="{_n(cy + 4 - (len(lines) - 1) * LINE / 2)}">'
                            + self._lines(lines, cx) + "</text>")
        else:
            self.out.append(f'<rect x="{_n(x)}" y="{_n(y)}" width="{_n(w)}" height="30" fill="{fill}" '
                            f'stroke="{FAINT}"/>')
            self.out.append(f'<text text-anchor="middle" x="{_n(x + w / 2)}" y="{_n(y + 19)}">'
                            + self._lines(wrap(name, max(w - 10, 20), 1), x + w / 2) + "</text>")

    def _pool(self, element: Any, di: Any, x: float, y: float, w: float, h: float, name: str) -> None:
        self._band(di, x, y, w, h, name, "#f1f3f5")

    def _lane(self, element: Any, di: Any, x: float, y: float, w: float, h: float, name: str) -> None:
        self._band(di, x, y, w, h, name, "#f8f9fa")

    def _lines(self, lines: list[str], x: float) -> str:
        return "".join(f'<tspan x="{_n(x)}" dy="{0 if i == 0 else _n(LINE)}">{_a(line)}</tspan>'
                       for i, line in enumerate(lines))

    def _text_in(self, name: str, x: float, y: float, w: float, h: float) -> None:
        """A name wrapped and centred in the box."""
        lines = wrap(name, max(w - 8, 10), max(int((h - 4) // LINE), 1))
        if not lines:
            return
        cx = x + w / 2
        first = y + h / 2 - (len(lines) - 1) * LINE / 2 + FONT * 0.35
        self.out.append(f'<text text-anchor="middle" x="{_n(cx)}" y="{_n(first)}" fill="{INK}">'
                        + self._lines(lines, cx) + "</text>")

    def _outside_label(self, di: Any, name: str, x: float, y: float, w: float, h: float) -> None:
        """An event's or gateway's name: in its BPMNLabel's bounds, or centred below the shape."""
        if not name:
            return
        label = _bounds(di.find(f"{BPMNDI}BPMNLabel"))
        if label:
            lx, ly, lw, lh = label
            lw = max(lw, 90)
            lines = wrap(name, lw, max(int(lh // LINE) + 2, 2))
            cx = lx + label[2] / 2
            first = ly + FONT
        else:
            lines = wrap(name, 100, 3)
            cx = x + w / 2
            first = y + h + FONT + 2
        self.out.append(f'<text text-anchor="middle" x="{_n(cx)}" y="{_n(first)}" fill="{INK}">'
                        + self._lines(lines, cx) + "</text>")

    def _task(self, element: Any, di: Any, x: float, y: float, w: float, h: float, name: str) -> None:
        tag = el.local(element)
        width = "3" if tag == "callActivity" else "1.5"
        expanded = tag in SUBPROCESSES and di.get("isExpanded") == "true"
        self.out.append(f'<rect x="{_n(x)}" y="{_n(y)}" width="{_n(w)}" height="{_n(h)}" rx="10" '
                        f'fill="{"none" if expanded else PAPER}" stroke="{INK}" stroke-width="{width}"/>')
        if tag == "transaction":
            self.out.append(f'<rect x="{_n(x + 3)}" y="{_n(y + 3)}" width="{_n(max(w - 6, 0))}" '
                            f'height="{_n(max(h - 6, 0))}" rx="8" fill="none" stroke="{INK}"/>')
        if expanded:
            self.out.append(f'<text x="{_n(x + 8)}" y="{_n(y + 16)}" fill="{INK}">{_a(name)}</text>')
            return
        if tag in SUBPROCESSES or tag == "callActivity":  # collapsed: the + marker
            mx, my = x + w / 2, y + h - 8
            self.out.append(f'<rect x="{_n(mx - 6)}" y="{_n(my - 6)}" width="12" height="12" fill="{PAPER}" '
                            f'stroke="{INK}"/><path d="M{_n(mx - 4)} {_n(my)}H{_n(mx + 4)}M{_n(mx)} {_n(my - 4)}'
                            f'V{_n(my + 4)}" stroke="{INK}"/>')
            self._text_in(name, x, y, w, h - 12)
            return
        if tag == "userTask":  # a small figure in the corner: a task for a person
            self.out.append(f'<circle cx="{_n(x + 12)}" cy="{_n(y + 10)}" r="3" fill="none" stroke="{INK}"/>'
                            f'<path d="M{_n(x + 6)} {_n(y + 20)}q6 -8 12 0" fill="none" stroke="{INK}"/>')
        self._text_in(name, x, y + (6 if tag == "userTask" else 0), w, h - (6 if tag == "userTask" else 0))

    def _event(self, element: Any, di: Any, x: float, y: float, w: float, h: float, name: str) -> None:
        tag = el.local(element)
        cx, cy, r = x + w / 2, y + h / 2, min(w, h) / 2
        dashed = ' stroke-dasharray="4 3"' if tag == "boundaryEvent" and element.get("cancelActivity") == "false" else ""
        rim = "4" if tag == "endEvent" else "1.5"
        self.out.append(f'<circle cx="{_n(cx)}" cy="{_n(cy)}" r="{_n(r)}" fill="{PAPER}" stroke="{INK}" '
                        f'stroke-width="{rim}"{dashed}/>')
        if tag in ("intermediateCatchEvent", "intermediateThrowEvent", "boundaryEvent"):
            self.out.append(f'<circle cx="{_n(cx)}" cy="{_n(cy)}" r="{_n(max(r - 3, 0))}" fill="none" '
                            f'stroke="{INK}"{dashed}/>')
        kinds = {el.local(d) for d in element if isinstance(d.tag, str) and el.local(d).endswith("EventDefinition")}
        inner = max(r - 7, 2)
        if "timerEventDefinition" in kinds:  # a clock face: twelve ticks and two hands
            ticks = "".join(f"M{_n(cx + inner * 0.75 * math.sin(a))} {_n(cy - inner * 0.75 * math.cos(a))}"
                            f"L{_n(cx + inner * math.sin(a))} {_n(cy - inner * math.cos(a))}"
                            for a in (i * math.pi / 6 for i in range(12)))
            self.out.append(f'<g class="timer-mark"><circle cx="{_n(cx)}" cy="{_n(cy)}" r="{_n(inner)}" '
                            f'fill="{PAPER}" stroke="{INK}" stroke-width="1.5"/><path d="{ticks}" stroke="{INK}"/>'
                            f'<path d="M{_n(cx)} {_n(cy)}L{_n(cx)} {_n(cy - inner * 0.7)}M{_n(cx)} {_n(cy)}'
                            f'L{_n(cx + inner * 0.5)} {_n(cy)}" stroke="{INK}" stroke-width="1.5"/></g>')
        elif "messageEventDefinition" in kinds:
            ew, eh = inner * 1.5, inner
            filled = INK if tag in ("endEvent", "intermediateThrowEvent") else PAPER
            line = PAPER if filled == INK else INK
            self.out.append(f'<rect x="{_n(cx - ew / 2)}" y="{_n(cy - eh / 2)}" width="{_n(ew)}" height="{_n(eh)}" '
                            f'fill="{filled}" stroke="{INK}"/><path d="M{_n(cx - ew / 2)} {_n(cy - eh / 2)}'
                            f'L{_n(cx)} {_n(cy)}L{_n(cx + ew / 2)} {_n(cy - eh / 2)}" fill="none" stroke="{line}"/>')
        elif "signalEventDefinition" in kinds:
            filled = INK if tag in ("endEvent", "intermediateThrowEvent") else PAPER
            self.out.append(f'<path d="M{_n(cx)} {_n(cy - inner)}L{_n(cx + inner * 0.87)} {_n(cy + inner / 2)}'
                            f'L{_n(cx - inner * 0.87)} {_n(cy + inner / 2)}z" fill="{filled}" stroke="{INK}"/>')
        elif "terminateEventDefinition" in kinds:
            self.out.append(f'<circle cx="{_n(cx)}" cy="{_n(cy)}" r="{_n(inner)}" fill="{INK}"/>')
        elif kinds:  # error, escalation, conditional, …: a plain inner ring says "an event of some kind"
            self.out.append(f'<circle cx="{_n(cx)}" cy="{_n(cy)}" r="{_n(inner / 2)}" fill="none" stroke="{INK}"/>')
        self._outside_label(di, name, x, y, w, h)

    def _gateway(self, element: Any, di: Any, x: float, y: float, w: float, h: float, name: str) -> None:
        tag = el.local(element)
        cx, cy = x + w / 2, y + h / 2
        self.out.append(f'<path d="M{_n(cx)} {_n(y)}L{_n(x + w)} {_n(cy)}L{_n(cx)} {_n(y + h)}L{_n(x)} {_n(cy)}z" '
                        f'fill="{PAPER}" stroke="{INK}" stroke-width="1.5"/>')
        s = min(w, h) / 5
        if tag == "exclusiveGateway":
            self.out.append(f'<path class="gateway-mark" d="M{_n(cx - s)} {_n(cy - s)}L{_n(cx + s)} {_n(cy + s)}'
                            f'M{_n(cx + s)} {_n(cy - s)}L{_n(cx - s)} {_n(cy + s)}" stroke="{INK}" stroke-width="3"/>')
        elif tag == "parallelGateway":
            self.out.append(f'<path class="gateway-mark" d="M{_n(cx - s * 1.3)} {_n(cy)}H{_n(cx + s * 1.3)}'
                            f'M{_n(cx)} {_n(cy - s * 1.3)}V{_n(cy + s * 1.3)}" stroke="{INK}" stroke-width="3"/>')
        elif tag == "inclusiveGateway":
            self.out.append(f'<circle class="gateway-mark" cx="{_n(cx)}" cy="{_n(cy)}" r="{_n(s * 1.3)}" '
                            f'fill="none" stroke="{INK}" stroke-width="2.5"/>')
        elif tag == "eventBasedGateway":
            self.out.append(f'<circle class="gateway-mark" cx="{_n(cx)}" cy="{_n(cy)}" r="{_n(s * 1.5)}" fill="none" '
                            f'stroke="{INK}"/><circle cx="{_n(cx)}" cy="{_n(cy)}" r="{_n(s * 1.2)}" fill="none" '
                            f'stroke="{INK}"/>')
        elif tag == "complexGateway":
            self.out.append(f'<path class="gateway-mark" d="M{_n(cx - s)} {_n(cy)}H{_n(cx + s)}M{_n(cx)} {_n(cy - s)}'
                            f'V{_n(cy + s)}M{_n(cx - s * .7)} {_n(cy - s * .7)}L{_n(cx + s * .7)} {_n(cy + s * .7)}'
                            f'M{_n(cx + s * .7)} {_n(cy - s * .7)}L{_n(cx - s * .7)} {_n(cy + s * .7)}" '
                            f'stroke="{INK}" stroke-width="2.5"/>')
        self._outside_label(di, name, x, y, w, h)

    def _other(self, element: Any, di: Any, x: float, y: float, w: float, h: float, name: str) -> None:
        """Data objects, stores, text annotations, groups: a dashed outline with the name."""
        self.out.append(f'<rect x="{_n(x)}" y="{_n(y)}" width="{_n(w)}" height="{_n(h)}" fill="none" '
                        f'stroke="{FAINT}" stroke-dasharray="4 3"/>')
        text = name or " ".join((element.findtext(f"{BPMN}text") or "").split())
        if text:
            self._text_in(text, x, y, w, h)

    # -- the edges ------------------------------------------------------------------------------

    def edge(self, di: Any) -> None:
        element = self.by_id.get(di.get("bpmnElement") or "")
        points = _waypoints(di)
        if element is None or len(points) < 2:
            return
        tag = el.local(element)
        path = "M" + "L".join(f"{_n(x)} {_n(y)}" for x, y in points)
        if tag == "messageFlow":
            look = ' stroke-dasharray="6 4" marker-end="url(#open-arrow)"'
        elif tag in ("association", "dataInputAssociation", "dataOutputAssociation"):
            look = ' stroke-dasharray="2 3"' + (' marker-end="url(#arrow)"' if tag != "association" else "")
        else:
            look = ' marker-end="url(#arrow)"'
        name = self.name(element)
        self.out.append(f'<g class="flow" data-element-id="{_a(element.get("id"))}"><path d="{path}" fill="none" '
                        f'stroke="{INK}" stroke-width="1.5"{look}/>')
        if name:
            label = _bounds(di.find(f"{BPMNDI}BPMNLabel"))
            if label:
                lx, ly, lw, _lh = label
                cx, first = lx + lw / 2, ly + FONT
            else:  # beside the middle of the longest segment
                (ax, ay), (bx, by) = max(_segments(points), key=lambda s: abs(s[1][0] - s[0][0]) + abs(s[1][1] - s[0][1]))
                cx, first = (ax + bx) / 2, (ay + by) / 2 - 4
            lines = wrap(name, 100, 3)
            self.out.append(f'<text text-anchor="middle" x="{_n(cx)}" y="{_n(first)}" fill="{INK}">'
                            + self._lines(lines, cx) + "</text>")
        self.out.append("</g>")


def _segments(points: list[tuple[float, float]]) -> Iterator[tuple[tuple[float, float], tuple[float, float]]]:
    return itertools.pairwise(points)
