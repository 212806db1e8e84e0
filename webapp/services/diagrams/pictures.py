"""A deployed version's diagram as a picture drawn on the server (issue 32, item 4): the SVG of
:func:`webapp.engine.diagrams.drawing.draw` with the names in a page's language, cached per
diagram and language (a deployed version never changes), and a case's marks over it.

The picture of a version is the same for every case, so a page links it under its digest
(``Picture.digest``) and the browser keeps it for a year; what belongs to one case — which steps
are completed, active and waiting — is a few outlines drawn over it (:func:`marks`), in the page
itself. The interactive viewer (bpmn-js) is for the page that asks to zoom.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from webapp.engine.diagrams import drawing, names
from webapp.i18n.catalogues import translations_for

STATES = ("done", "waiting", "active")  # drawn in this order: the active step on top
PAD = 6.0  # how far a mark's outline stands off its shape, in the diagram's units
AROUND = (520.0, 300.0)  # the least width and height shown around the active steps, in the diagram's units


@dataclass(frozen=True)
class Picture:
    """A version's drawing in one language: ``drawing`` (:class:`~webapp.engine.diagrams.drawing.Drawing`)
    and ``digest``, the first 16 hex digits of the SHA-256 of its SVG (the picture's URL carries it)."""

    drawing: drawing.Drawing
    digest: str
    language: str


@dataclass(frozen=True)
class Mark:
    """An outline over one drawn shape: the element ``id`` it marks (``marks`` the case's step it
    stands for, when that step lies inside a collapsed subprocess), ``state`` (done, active,
    waiting), ``kind`` (task, event, gateway, …) and the outline's box on the drawing."""

    id: str
    marks: str
    state: str
    kind: str
    x: float
    y: float
    width: float
    height: float

    @property
    def cx(self) -> float:
        return self.x + self.width / 2

    @property
    def cy(self) -> float:
        return self.y + self.height / 2

    @property
    def diamond(self) -> str:
        """The outline of a gateway: a diamond through the box's edges' middles (SVG points)."""
        x, y, w, h = self.x, self.y, self.width, self.height
        return f"{x + w / 2:.1f},{y:.1f} {x + w:.1f},{y + h / 2:.1f} {x + w / 2:.1f},{y + h:.1f} {x:.1f},{y + h / 2:.1f}"


def labeller(language: str) -> drawing.Label:
    """The name to draw for an element in ``language``: English as written (a lane's role as words);
    Hindi the element's own Hindi name (``rule130:name``, :func:`webapp.engine.diagrams.names.own_hindi`),
    else the catalogue's (with the deployed diagrams' names), else as written."""
    if language != "hi":
        return drawing.plain_name
    catalogue = translations_for("hi")

    def hindi(element: Any) -> str:
        own = names.own_hindi(element)
        if own:
            return own
        key = names.catalogue_key(element)
        return str(catalogue.gettext(key)) if key else ""
    return hindi


@lru_cache(maxsize=16)
def picture(bpmn_xml: str, language: str) -> Picture:
    """The picture of the diagram ``bpmn_xml`` (a version's ``bpmn_xml``) with its names in
    ``language`` ("en" or "hi"). Cached per diagram text and language (shared: do not change it);
    never raises (a diagram that cannot be drawn has ``drawing.problem`` set)."""
    drawn = drawing.draw(bpmn_xml, labeller(language))
    digest = hashlib.sha256(drawn.svg.encode("utf-8")).hexdigest()[:16]
    return Picture(drawn, digest, language)


def marks(drawn: drawing.Drawing, done: Iterable[str], active: Iterable[str], waiting: Iterable[str]) -> list[Mark]:
    """The outlines of a case's marks over ``drawn``: each completed, active and waiting element
    the drawing places (one inside a collapsed subprocess marks the subprocess), done first and the
    active last; a shape is marked once, by its latest state in that order (active over waiting over
    done). Elements the drawing does not place are left out (the page lists the steps in words)."""
    chosen: dict[str, tuple[str, str]] = {}
    for state, ids in (("done", done), ("waiting", waiting), ("active", active)):
        for element_id in ids:
            shape_id = _drawn(drawn, element_id)
            if shape_id is not None:
                chosen[shape_id] = (state, element_id)
    found = []
    for shape_id, (state, element_id) in chosen.items():
        shape = drawn.shapes[shape_id]
        if shape.kind in ("lane", "pool"):
            continue
        found.append(Mark(shape_id, element_id, state, shape.kind, shape.x - PAD, shape.y - PAD,
                          shape.width + 2 * PAD, shape.height + 2 * PAD))
    found.sort(key=lambda mark: STATES.index(mark.state))
    return found


def _drawn(drawn: drawing.Drawing, element_id: str) -> str | None:
    """The id of the shape that shows ``element_id``: its own, or its nearest drawn subprocess's."""
    seen: set[str] = set()
    current: str | None = element_id
    while current and current not in seen:
        if current in drawn.shapes:
            return current
        seen.add(current)
        current = drawn.parents.get(current)
    return None


def around(drawn: drawing.Drawing, found: list[Mark]) -> tuple[float, float, float, float] | None:
    """The part of the drawing to show first: the box around the active marks (else the waiting
    ones), at least :data:`AROUND` and inside the drawing, as ``(x, y, width, height)``; None when
    nothing is active or waiting (show the whole drawing)."""
    chosen = [m for m in found if m.state == "active"] or [m for m in found if m.state == "waiting"]
    if not chosen:
        return None
    x0 = min(m.x for m in chosen) - 40
    y0 = min(m.y for m in chosen) - 40
    x1 = max(m.x + m.width for m in chosen) + 40
    y1 = max(m.y + m.height for m in chosen) + 60  # room for an event's name below it
    width, height = max(x1 - x0, AROUND[0]), max(y1 - y0, AROUND[1])
    x0 -= (width - (x1 - x0)) / 2
    y0 -= (height - (y1 - y0)) / 2
    width, height = min(width, drawn.width), min(height, drawn.height)
    x0 = min(max(x0, 0.0), drawn.width - width)
    y0 = min(max(y0, 0.0), drawn.height - height)
    return round(x0, 1), round(y0, 1), round(width, 1), round(height, 1)
