"""Process versions as administrators see them: list, download, compare, redeploy, audit trail.

Every deploy is an immutable version (number, content hash, who, when, note and its files exactly
as deployed). :func:`record_deploy` is called by :func:`webapp.services.diagrams.repository.deploy` for each
new version; :func:`redeploy` stores an old version's files again under a new number. Cases keep the
version they started on (``Case.process_version_id``); moving them is :mod:`.migration`.
The process-level history (deploy, redeploy, move) is the ``process_audit`` table.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from lxml import etree
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from webapp.engine.diagrams.parser import FORM_PROPERTY, NS
from webapp.engine.diagrams.safe_xml import read_xml
from webapp.errors import NotFound, NotPermitted, Refused
from webapp.i18n import M_
from webapp.store.models import Case, ProcessAudit, ProcessVersion, ProcessVersionFile, User
from webapp.values import clock

FORMS_DIR = "forms/"


# -- who may ----------------------------------------------------------------------------------------

def actor_name(actor: User | str) -> str:
    """The name recorded for ``actor``: a user must be an installation-wide administrator (no
    Panchayat or Samiti scope: versions and moves concern every Panchayat's cases); a plain name
    (the command line, run by the installation's operator) is taken as given.

    Raises:
        NotPermitted: a user who is not an installation-wide administrator.
    """
    if isinstance(actor, User):
        if actor.role != "administrator":
            raise NotPermitted(M_("only an administrator may manage process versions; you are signed in as %(role)s",
                                  role=M_(actor.role.replace("_", " "))))
        if actor.panchayat_id is not None or actor.samiti_code:
            # A process version and its running cases span every Panchayat: not one scope's to change.
            raise NotPermitted(M_("only an installation-wide administrator may manage process versions; "
                               "yours is limited to one Panchayat or Samiti"))
        return actor.username
    return str(actor)


def audit(session: Session, process_id: str, action: str, actor: str, *, version_from: int | None = None,
          version_to: int | None = None, case_id: int | None = None, note: str = "",
          detail: dict[str, Any] | None = None) -> ProcessAudit:
    """Append one row to the process audit trail (at the clock's now)."""
    row = ProcessAudit(at=clock.now(), process_id=process_id, action=action, actor=actor,
                       version_from=version_from, version_to=version_to, case_id=case_id, note=note,
                       detail_json=json.dumps(detail or {}, default=str, ensure_ascii=False))
    session.add(row)
    return row


# -- storing a version's files ------------------------------------------------------------------------

def bpmn_path(process_id: str) -> str:
    """The BPMN file's name inside a version's files and its download (``<process id>.bpmn``)."""
    return f"{process_id}.bpmn"


def canonical_form_bytes(form: dict[str, Any]) -> bytes:
    """A form as file bytes when its original bytes were not given (indented JSON, UTF-8)."""
    return (json.dumps(form, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def record_deploy(session: Session, version: ProcessVersion, *, form_bytes: dict[str, bytes] | None = None,
                  bpmn_bytes: bytes | None = None) -> None:
    """Store a new version's files and its "deploy" (or "redeploy") audit row.

    Args:
        version: the version just flushed by ``repository.deploy``.
        form_bytes: each form file's bytes as uploaded, by form name; a form without them is stored
            as :func:`canonical_form_bytes`. Bytes that do not parse to the stored form are refused.
        bpmn_bytes: the BPMN bytes as uploaded (default: the stored XML, UTF-8).
    Raises:
        Refused: given form bytes that are not the form that was checked.
    """
    forms = json.loads(version.forms_json)
    contents = {bpmn_path(version.process_id): bpmn_bytes if bpmn_bytes is not None
                else version.bpmn_xml.encode("utf-8")}
    for name in sorted(forms):
        raw = (form_bytes or {}).get(name)
        if raw is not None and json.loads(raw) != forms[name]:
            raise Refused(M_("form %(name)s: the bytes given are not the form that was checked", name=name),
                          then=M_("The administrator can check the diagram again and deploy what was checked."))
        contents[FORMS_DIR + name] = raw if raw is not None else canonical_form_bytes(forms[name])
    _store_files(session, version, contents)
    action = "redeploy" if version.redeploy_of is not None else "deploy"
    audit(session, version.process_id, action, version.deployed_by, version_to=version.version,
          version_from=version.redeploy_of, note=version.note,
          detail={"content_hash": version.content_hash, "files": sorted(contents)})


def _store_files(session: Session, version: ProcessVersion, contents: dict[str, bytes]) -> None:
    for path, content in contents.items():
        session.add(ProcessVersionFile(process_version_id=version.id, path=path, content=content,
                                       sha256=hashlib.sha256(content).hexdigest()))
    session.flush()


# -- reading --------------------------------------------------------------------------------------

@dataclass
class ProcessSummary:
    """One process: its newest version and how many cases run on each version."""

    process_id: str
    current: int
    versions: int
    running_cases: dict[int, int]  # version number -> running cases


@dataclass
class VersionFile:
    path: str
    size: int  # bytes
    sha256: str


@dataclass
class VersionInfo:
    """A deployed version as listed: number, content hash, who, when (UTC), note, files, cases."""

    process_id: str
    number: int
    content_hash: str
    deployed_by: str
    deployed_at: datetime
    note: str
    redeploy_of: int | None
    current: bool
    running_cases: int
    files: list[VersionFile] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        """The API's shape (docs/api.md): instants as ISO 8601 UTC."""
        return {"process": self.process_id, "version": self.number, "content_hash": self.content_hash,
                "deployed_by": self.deployed_by, "deployed_at": self.deployed_at.isoformat(),
                "note": self.note, "redeploy_of": self.redeploy_of, "current": self.current,
                "running_cases": self.running_cases,
                "files": [{"path": f.path, "size": f.size, "sha256": f.sha256} for f in self.files]}


def _running_by_version(session: Session, process_id: str) -> dict[int, int]:
    rows = session.execute(select(ProcessVersion.version, func.count(Case.id))
                           .join(Case, Case.process_version_id == ProcessVersion.id)
                           .where(ProcessVersion.process_id == process_id, Case.status == "running")
                           .group_by(ProcessVersion.version))
    return {number: count for number, count in rows}


def processes(session: Session) -> list[ProcessSummary]:
    """Every process with a deployed version, by process id."""
    rows = session.execute(select(ProcessVersion.process_id, func.max(ProcessVersion.version),
                                  func.count(ProcessVersion.id)).group_by(ProcessVersion.process_id)
                           .order_by(ProcessVersion.process_id))
    return [ProcessSummary(pid, current, count, _running_by_version(session, pid)) for pid, current, count in rows]


def get_version(session: Session, process_id: str, number: int) -> ProcessVersion:
    """Version ``number`` of ``process_id``.

    Raises:
        NotFound: no such version.
    """
    version = None
    if isinstance(number, int) and 0 < number < 2**31:
        version = session.scalar(select(ProcessVersion).where(ProcessVersion.process_id == process_id,
                                                              ProcessVersion.version == number))
    if version is None:
        raise NotFound(M_("process %(process_id)s has no version %(number)s", process_id=process_id, number=number))
    return version


def list_versions(session: Session, process_id: str) -> list[VersionInfo]:
    """Every version of ``process_id``, newest first, with its files and running cases.

    Raises:
        NotFound: the process has no version.
    """
    versions = list(session.scalars(select(ProcessVersion).where(ProcessVersion.process_id == process_id)
                                    .order_by(ProcessVersion.version.desc())))
    if not versions:
        raise NotFound(M_("no version of process %(process_id)s is deployed", process_id=process_id))
    running = _running_by_version(session, process_id)
    files: dict[int, list[VersionFile]] = {}
    for row in session.execute(select(ProcessVersionFile.process_version_id, ProcessVersionFile.path,
                                      func.length(ProcessVersionFile.content), ProcessVersionFile.sha256)
                               .where(ProcessVersionFile.process_version_id.in_([v.id for v in versions]))
                               .order_by(ProcessVersionFile.path)):
        files.setdefault(row[0], []).append(VersionFile(row[1], row[2], row[3]))
    newest = versions[0].version
    return [VersionInfo(v.process_id, v.version, v.content_hash, v.deployed_by, v.deployed_at, v.note,
                        v.redeploy_of, v.version == newest, running.get(v.version, 0), files.get(v.id, []))
            for v in versions]


def version_files(session: Session, version: ProcessVersion) -> dict[str, bytes]:
    """The version's files exactly as deployed, by path (``<process>.bpmn``, ``forms/<name>``)."""
    rows = session.scalars(select(ProcessVersionFile).where(ProcessVersionFile.process_version_id == version.id)
                           .order_by(ProcessVersionFile.path))
    return {row.path: row.content for row in rows}


def download(session: Session, process_id: str, number: int) -> tuple[str, bytes]:
    """A zip of version ``number``'s files, byte for byte as deployed (``rule130 deploy`` accepts
    the unpacked folder). The zip itself is the same bytes on every download (entries dated with
    the deploy instant, in path order).

    Returns:
        (file name, zip bytes), e.g. ``("rule130_case-v2.zip", b"PK...")``.
    Raises:
        NotFound: no such version.
    """
    version = get_version(session, process_id, number)
    stamp = version.deployed_at.utctimetuple()[:6]
    stamp = (max(stamp[0], 1980), *stamp[1:])
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, content in version_files(session, version).items():
            info = zipfile.ZipInfo(path, date_time=stamp)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, content)
    return f"{process_id}-v{number}.zip", buffer.getvalue()


def trail(session: Session, process_id: str | None = None, limit: int = 200) -> list[ProcessAudit]:
    """The process audit trail, newest first (all processes when ``process_id`` is None)."""
    query = select(ProcessAudit).order_by(ProcessAudit.id.desc()).limit(limit)  # in the order written
    if process_id is not None:
        query = query.where(ProcessAudit.process_id == process_id)
    return list(session.scalars(query))


# -- comparing two versions ---------------------------------------------------------------------------

FIELDS = ("type", "process", "name", "documentation", "lane", "timer", "condition", "form", "operator",
          "script", "flow", "default", "attached_to", "called_process", "message")


@dataclass
class FieldChange:
    field: str
    before: str | None
    after: str | None


@dataclass
class ElementChange:
    """One BPMN element (by id) added, removed or changed between two versions."""

    element_id: str
    type: str
    name: str
    changes: list[FieldChange] = field(default_factory=list)  # empty for added/removed

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.element_id, "type": self.type, "name": self.name}
        if self.changes:
            out["changes"] = [{"field": c.field, "before": c.before, "after": c.after} for c in self.changes]
        return out


@dataclass
class FormChange:
    """A form (by file name) changed: JSON Schema properties added, removed and changed; other keys."""

    name: str
    fields_added: list[str]
    fields_removed: list[str]
    fields_changed: list[str]
    other_changed: list[str]

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "fields_added": self.fields_added, "fields_removed": self.fields_removed,
                "fields_changed": self.fields_changed, "other_changed": self.other_changed}


@dataclass
class VersionDiff:
    """What changed from version ``a`` to version ``b`` of one process."""

    process_id: str
    a: int
    b: int
    same_content: bool
    added: list[ElementChange]
    removed: list[ElementChange]
    changed: list[ElementChange]
    forms_added: list[str]
    forms_removed: list[str]
    forms_changed: list[FormChange]
    layout_changed: bool

    def as_json(self) -> dict[str, Any]:
        return {"process": self.process_id, "a": self.a, "b": self.b, "same_content": self.same_content,
                "elements": {"added": [e.as_json() for e in self.added],
                             "removed": [e.as_json() for e in self.removed],
                             "changed": [e.as_json() for e in self.changed]},
                "forms": {"added": self.forms_added, "removed": self.forms_removed,
                          "changed": [f.as_json() for f in self.forms_changed]},
                "layout_changed": self.layout_changed}

    def lines(self) -> list[str]:
        """The diff as plain lines (the command line prints these)."""
        out = [f"{self.process_id}: version {self.a} -> version {self.b}"]
        if self.same_content:
            out.append("  same content (identical BPMN and forms)")
        for e in self.added:
            out.append(f"  added    {e.element_id} ({e.type}) {e.name!r}")
        for e in self.removed:
            out.append(f"  removed  {e.element_id} ({e.type}) {e.name!r}")
        for e in self.changed:
            out.append(f"  changed  {e.element_id} ({e.type}) {e.name!r}")
            for c in e.changes:
                out.append(f"           {c.field}: {c.before!r} -> {c.after!r}")
        for name in self.forms_added:
            out.append(f"  form added    {name}")
        for name in self.forms_removed:
            out.append(f"  form removed  {name}")
        for f in self.forms_changed:
            parts = [f"{label} {', '.join(items)}" for label, items in
                     (("fields added:", f.fields_added), ("fields removed:", f.fields_removed),
                      ("fields changed:", f.fields_changed), ("other keys changed:", f.other_changed)) if items]
            out.append(f"  form changed  {f.name}: {'; '.join(parts)}")
        if self.layout_changed:
            out.append("  layout (diagram drawing) changed")
        return out


_SKIP = {"laneSet", "lane", "extensionElements", "documentation", "conditionExpression", "incoming", "outgoing",
         "flowNodeRef", "script", "timeDate", "timeDuration", "timeCycle", "definitions"}


def _text(element: etree._Element | None) -> str | None:
    if element is None:
        return None
    return " ".join("".join(element.itertext()).split()) or None


def _elements(xml: str) -> tuple[dict[str, dict[str, str | None]], bytes]:
    """Every identified BPMN element (flow nodes, flows, processes, messages ...) with the fields
    the diff compares, and the diagram-interchange (layout) part serialized for comparison."""
    root = read_xml(xml.encode("utf-8"))
    lanes: dict[str, str] = {}
    for lane in root.iter(f"{{{NS['bpmn']}}}lane"):
        for ref in lane.findall("bpmn:flowNodeRef", NS):
            lanes[(ref.text or "").strip()] = lane.get("name") or lane.get("id")
    out: dict[str, dict[str, str | None]] = {}
    for el in root.iter():
        if not isinstance(el.tag, str) or etree.QName(el).namespace != NS["bpmn"]:
            continue
        kind = etree.QName(el).localname
        if not el.get("id") or kind in _SKIP or kind.endswith("EventDefinition"):
            continue
        process = next((a.get("id") for a in el.iterancestors(f"{{{NS['bpmn']}}}process")), None)
        timers = [f"{etree.QName(t).localname}: {_text(t)}" for t in
                  el.xpath("bpmn:timerEventDefinition/*[local-name()='timeDate' or local-name()='timeDuration' "
                           "or local-name()='timeCycle']", namespaces=NS)]
        form = el.xpath(f"bpmn:extensionElements/spiffworkflow:properties/spiffworkflow:property"
                        f"[@name='{FORM_PROPERTY}']/@value", namespaces=NS)
        operator = el.find("bpmn:extensionElements/spiffworkflow:serviceTaskOperator", NS)
        op_text = None
        if operator is not None:
            params = [f"{p.get('id')}={p.get('value')}" for p in operator.iter(f"{{{NS['spiffworkflow']}}}parameter")]
            op_text = operator.get("id") + (f"({', '.join(sorted(params))})" if params else "")
        scripts = [f"{etree.QName(s).localname}: {_text(s)}" for s in
                   el.xpath("bpmn:script | bpmn:extensionElements/spiffworkflow:preScript | "
                            "bpmn:extensionElements/spiffworkflow:postScript", namespaces=NS)]
        messages = el.xpath("bpmn:messageEventDefinition/@messageRef", namespaces=NS)
        out[el.get("id")] = {
            "type": kind,
            "process": process if kind != "process" else None,
            "name": el.get("name"),
            "documentation": " / ".join(filter(None, (_text(d) for d in el.findall("bpmn:documentation", NS)))) or None,
            "lane": lanes.get(el.get("id")),
            "timer": "; ".join(timers) or None,
            "condition": _text(el.find("bpmn:conditionExpression", NS)),
            "form": form[0] if form else None,
            "operator": op_text,
            "script": "; ".join(scripts) or None,
            "flow": f"{el.get('sourceRef')} -> {el.get('targetRef')}" if kind == "sequenceFlow" else None,
            "default": el.get("default"),
            "attached_to": el.get("attachedToRef"),
            "called_process": el.get("calledElement"),
            "message": ", ".join(messages) or None,
        }
    # exclusive C14N: a namespace declared on the root but unused in the drawing (rule130's Hindi names)
    # is no change of layout
    layout = b"".join(etree.tostring(d, method="c14n", exclusive=True)
                      for d in root.findall("{http://www.omg.org/spec/BPMN/20100524/DI}BPMNDiagram"))
    return out, layout


def _form_change(name: str, before: dict[str, Any], after: dict[str, Any]) -> FormChange:
    props_a, props_b = before.get("properties") or {}, after.get("properties") or {}
    other = sorted(k for k in set(before) | set(after) if k != "properties" and before.get(k) != after.get(k))
    return FormChange(name, sorted(set(props_b) - set(props_a)), sorted(set(props_a) - set(props_b)),
                      sorted(k for k in set(props_a) & set(props_b) if props_a[k] != props_b[k]), other)


def compare(session: Session, process_id: str, a: int, b: int) -> VersionDiff:
    """What changed from version ``a`` to version ``b``: BPMN elements (by id) added, removed and
    changed, with each changed field (name, documentation, timer expression, condition, lane, form,
    operator and parameters, script, flow ends, type ...); forms added, removed and changed.

    Raises:
        NotFound: either version does not exist.
    """
    va, vb = get_version(session, process_id, a), get_version(session, process_id, b)
    ea, layout_a = _elements(va.bpmn_xml)
    eb, layout_b = _elements(vb.bpmn_xml)

    def label(values: dict[str, str | None], element_id: str) -> ElementChange:
        return ElementChange(element_id, values["type"] or "", values["name"] or "")

    added = [label(eb[i], i) for i in eb if i not in ea]
    removed = [label(ea[i], i) for i in ea if i not in eb]
    changed = []
    for i in ea:
        if i in eb and ea[i] != eb[i]:
            change = label(eb[i], i)
            change.changes = [FieldChange(f, ea[i][f], eb[i][f]) for f in FIELDS if ea[i][f] != eb[i][f]]
            changed.append(change)
    fa, fb = json.loads(va.forms_json), json.loads(vb.forms_json)
    return VersionDiff(process_id, a, b, va.content_hash == vb.content_hash, added, removed, changed,
                       sorted(set(fb) - set(fa)), sorted(set(fa) - set(fb)),
                       [_form_change(n, fa[n], fb[n]) for n in sorted(set(fa) & set(fb)) if fa[n] != fb[n]],
                       layout_a != layout_b)
