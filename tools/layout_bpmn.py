"""Lay out a BPMN file's diagram (BPMN DI) so modelling tools can draw it.

The Rule 130 diagram is written as semantics first; this tool (re)generates its collaboration
(one pool per process, lanes as in the laneSets) and the DI shapes and edges: columns by the
longest path from the start event, rows by lane, boundary events on their task's lower edge,
collapsed subprocesses drawn on a plane of their own. Run it after editing the XML by hand:

    .venv/bin/python tools/layout_bpmn.py processes/rule130/rule130.bpmn

It rewrites the file in place; the semantics are untouched (checked by re-parsing).
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

from lxml import etree

BPMN = "http://www.omg.org/spec/BPMN/20100524/MODEL"
BPMNDI = "http://www.omg.org/spec/BPMN/20100524/DI"
DC = "http://www.omg.org/spec/DD/20100524/DC"
DI = "http://www.omg.org/spec/DD/20100524/DI"
NSMAP = {"bpmn": BPMN, "bpmndi": BPMNDI, "dc": DC, "di": DI}

COL_W, ROW_H, LANE_HEADER, POOL_HEADER = 160, 120, 30, 30
SIZES = {"task": (100, 80), "event": (36, 36), "gateway": (50, 50)}
FLOW_NODES = {"startEvent", "endEvent", "intermediateCatchEvent", "intermediateThrowEvent", "boundaryEvent",
              "userTask", "serviceTask", "scriptTask", "manualTask", "task", "sendTask", "receiveTask",
              "businessRuleTask", "callActivity", "subProcess", "exclusiveGateway", "parallelGateway",
              "eventBasedGateway", "inclusiveGateway"}


def q(ns: str, tag: str) -> str:
    return f"{{{ns}}}{tag}"


def kind(node: etree._Element) -> str:
    local = etree.QName(node).localname
    if local.endswith("Event"):
        return "event"
    if local.endswith("Gateway"):
        return "gateway"
    return "task"


def size(node: etree._Element) -> tuple[int, int]:
    return SIZES[kind(node)]


def layout_container(container: etree._Element, lanes: list[tuple[str, list[str]]] | None):
    """Positions (relative to the container's origin) for the container's direct flow nodes."""
    nodes = {n.get("id"): n for n in container if isinstance(n.tag, str) and etree.QName(n).localname in FLOW_NODES}
    flows = [f for f in container if isinstance(f.tag, str) and etree.QName(f).localname == "sequenceFlow"]
    attached = {n.get("id"): n.get("attachedToRef") for n in nodes.values()
                if etree.QName(n).localname == "boundaryEvent"}
    outgoing: dict[str, list[str]] = defaultdict(list)
    for f in flows:
        src = f.get("sourceRef")
        outgoing[attached.get(src, src)].append(f.get("targetRef"))
    starts = [i for i, n in nodes.items() if etree.QName(n).localname == "startEvent"] or list(nodes)[:1]
    # longest path over a DFS tree without back edges
    column: dict[str, int] = {}
    back: set[tuple[str, str]] = set()
    state: dict[str, int] = {}

    def dfs(node_id: str) -> None:
        state[node_id] = 1
        for target in outgoing.get(node_id, []):
            if state.get(target) == 1:
                back.add((node_id, target))
            elif state.get(target) is None:
                dfs(target)
        state[node_id] = 2

    for s in starts:
        dfs(s)
    for n in nodes:
        if n not in state and n not in attached:
            dfs(n)
    order = [n for n in nodes if n not in attached]
    for _ in range(len(order) + 1):
        changed = False
        for n in order:
            column.setdefault(n, 0)
        for src in order:
            for target in outgoing.get(src, []):
                if (src, target) in back or target not in column:
                    continue
                if column[target] < column[src] + 1:
                    column[target] = column[src] + 1
                    changed = True
        if not changed:
            break
    lane_of: dict[str, int] = {}
    for index, (_, refs) in enumerate(lanes or []):
        for ref in refs:
            lane_of[ref] = index
    lane_count = max(1, len(lanes or []))
    slots: dict[tuple[int, int], int] = defaultdict(int)
    sub_row: dict[str, int] = {}
    for n in sorted(order, key=lambda i: (column[i], order.index(i))):
        key = (lane_of.get(n, 0), column[n])
        sub_row[n] = slots[key]
        slots[key] += 1
    rows_per_lane = [max([slots[(lane, c)] for (lane, c) in slots if lane == index] or [1])
                     for index in range(lane_count)]
    lane_top = [0]
    for rows in rows_per_lane:
        lane_top.append(lane_top[-1] + rows * ROW_H)
    header = LANE_HEADER if lanes else 0
    bounds: dict[str, tuple[float, float, float, float]] = {}
    for n in order:
        w, h = size(nodes[n])
        cx = header + 40 + column[n] * COL_W + 50
        cy = lane_top[lane_of.get(n, 0)] + sub_row[n] * ROW_H + ROW_H / 2
        bounds[n] = (cx - w / 2, cy - h / 2, w, h)
    per_host: dict[str, int] = defaultdict(int)
    for b, host in attached.items():
        hx, hy, hw, hh = bounds[host]
        index = per_host[host]
        per_host[host] += 1
        bounds[b] = (hx + hw - 30 - index * 40, hy + hh - 18, 36, 36)
    width = header + 80 + (max(column.values(), default=0) + 1) * COL_W
    height = lane_top[-1]
    return nodes, flows, bounds, back, attached, width, height, lane_top


def add_shape(plane, element_id, x, y, w, h, **attrs):
    shape = etree.SubElement(plane, q(BPMNDI, "BPMNShape"), id=f"{element_id}_di", bpmnElement=element_id)
    for k, v in attrs.items():
        shape.set(k, v)
    etree.SubElement(shape, q(DC, "Bounds"), x=f"{x:.0f}", y=f"{y:.0f}", width=f"{w:.0f}", height=f"{h:.0f}")
    return shape


def add_edges(plane, flows, bounds, back, attached, ox, oy):
    for f in flows:
        s, t = f.get("sourceRef"), f.get("targetRef")
        if s not in bounds or t not in bounds:
            continue
        sx, sy, sw, sh = bounds[s]
        tx, ty, tw, th = bounds[t]
        edge = etree.SubElement(plane, q(BPMNDI, "BPMNEdge"), id=f"{f.get('id')}_di", bpmnElement=f.get("id"))
        if s in attached:
            start = (sx + sw / 2, sy + sh)
            points = [start, (start[0], ty + th / 2 if ty > sy else sy + sh + 20)]
            if ty > sy:
                points.append((tx, ty + th / 2))
            else:
                points += [(tx + tw / 2, sy + sh + 20), (tx + tw / 2, ty + th)]
        elif ((s, t) in back) or (tx <= sx):
            below = max(sy + sh, ty + th) + 20
            points = [(sx + sw / 2, sy + sh), (sx + sw / 2, below), (tx + tw / 2, below), (tx + tw / 2, ty + th)]
        else:
            a, b = (sx + sw, sy + sh / 2), (tx, ty + th / 2)
            mid = (a[0] + b[0]) / 2 if abs(a[1] - b[1]) > 1 else a[0]
            points = [a, (mid, a[1]), (mid, b[1]), b] if abs(a[1] - b[1]) > 1 else [a, b]
        for x, y in points:
            etree.SubElement(edge, q(DI, "waypoint"), x=f"{x + ox:.0f}", y=f"{y + oy:.0f}")


def relayout(path: Path) -> None:
    parser = etree.XMLParser(remove_blank_text=True, resolve_entities=False, no_network=True)
    tree = etree.parse(str(path), parser)
    root = tree.getroot()
    for old in root.findall(q(BPMNDI, "BPMNDiagram")) + root.findall(q(BPMN, "collaboration")):
        root.remove(old)
    processes = root.findall(q(BPMN, "process"))
    collaboration = etree.Element(q(BPMN, "collaboration"), id="rule130_collaboration")
    first_process = processes[0]
    first_process.addprevious(collaboration)
    diagram = etree.SubElement(root, q(BPMNDI, "BPMNDiagram"), id="rule130_diagram")
    plane = etree.SubElement(diagram, q(BPMNDI, "BPMNPlane"), id="rule130_plane", bpmnElement="rule130_collaboration")
    pool_y = 0.0
    subplanes = []
    for process in processes:
        pid = process.get("id")
        participant = etree.SubElement(collaboration, q(BPMN, "participant"), id=f"pool_{pid}",
                                       name=process.get("name"), processRef=pid)
        lanes = [(lane.get("id"), [r.text for r in lane.findall(q(BPMN, "flowNodeRef"))])
                 for lane in process.iter(q(BPMN, "lane"))]
        nodes, flows, bounds, back, attached, width, height, lane_top = layout_container(process, lanes)
        ox, oy = POOL_HEADER, pool_y
        add_shape(plane, participant.get("id"), 0, pool_y, width + POOL_HEADER, height, isHorizontal="true")
        for index, (lane_id, _) in enumerate(lanes):
            add_shape(plane, lane_id, POOL_HEADER, pool_y + lane_top[index], width, lane_top[index + 1] - lane_top[index],
                      isHorizontal="true")
        for n, (x, y, w, h) in bounds.items():
            attrs = {}
            if etree.QName(nodes[n]).localname == "exclusiveGateway":
                attrs["isMarkerVisible"] = "true"
            if etree.QName(nodes[n]).localname == "subProcess":
                attrs["isExpanded"] = "false"
                subplanes.append(nodes[n])
            add_shape(plane, n, x + ox, y + oy, w, h, **attrs)
        add_edges(plane, flows, bounds, back, attached, ox, oy)
        pool_y += height + 40
    for sub in subplanes:
        sub_diagram = etree.SubElement(root, q(BPMNDI, "BPMNDiagram"), id=f"{sub.get('id')}_diagram")
        sub_plane = etree.SubElement(sub_diagram, q(BPMNDI, "BPMNPlane"), id=f"{sub.get('id')}_plane",
                                     bpmnElement=sub.get("id"))
        nodes, flows, bounds, back, attached, *_ = layout_container(sub, None)
        for n, (x, y, w, h) in bounds.items():
            add_shape(sub_plane, n, x + 40, y + 40, w, h)
        add_edges(sub_plane, flows, bounds, back, attached, 40, 40)
    etree.cleanup_namespaces(root, top_nsmap={"bpmndi": BPMNDI, "dc": DC, "di": DI})
    etree.indent(tree, space="  ")
    tree.write(str(path), xml_declaration=True, encoding="UTF-8", pretty_print=True)


if __name__ == "__main__":
    for name in sys.argv[1:]:
        relayout(Path(name))
        print(f"laid out {name}")
