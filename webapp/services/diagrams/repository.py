"""Process versions: deploy a diagram with its forms, find the current version, load a version.

A version is stored once (the BPMN, its forms and the serialized spec, with a content hash and a
number); instances refer to it and keep running on it after later deploys.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from threading import Lock
from typing import Any

from sqlalchemy import bindparam, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

import handlers
from webapp.engine.diagrams import names
from webapp.engine.diagrams.parser import load_forms, parse_process
from webapp.engine.diagrams.verdicts import ParsedProcess
from webapp.engine.execution import runtime
from webapp.errors import Conflict, InvalidDiagram, NotFound
from webapp.i18n import M_
from webapp.services.diagrams import versions
from webapp.store import txcache
from webapp.store.models import ProcessVersion, User, get_row
from webapp.values import clock, textguard

ROOT = Path(__file__).resolve().parents[3]
BUNDLED_PROCESS = ROOT / "processes" / "rule130"
BUNDLED_NOTE = "bundled Rule 130 process"  # stored in English; shown through stored_texts.MEMOS in the reader's language
PROCESS_ID = "rule130_case"


@dataclass
class LoadedVersion:
    """A deployed version ready to run: the parsed process and its stored spec; ``version``, its
    row, is read in the caller's session when first asked for (:func:`load_id` does not read it)."""

    version_id: int
    parsed: ParsedProcess
    spec_json: str
    _session: Session | None = field(default=None, repr=False)
    _version: ProcessVersion | None = field(default=None, repr=False)

    @property
    def version(self) -> ProcessVersion:
        """The version's row in the session the version was loaded in."""
        if self._version is None:
            if self._session is None:
                raise LookupError(f"process version {self.version_id} was loaded without a session to read its row")
            self._version = get_row(self._session, ProcessVersion, self.version_id)
        return self._version


_cache: dict[int, tuple[str, ParsedProcess, str]] = {}  # version id -> (content hash, parsed, spec)
_cache_lock = Lock()


def check(bpmn_xml: bytes, forms: dict[str, dict[str, Any]], process_id: str = PROCESS_ID) -> ParsedProcess:
    """Validate a diagram and its forms without deploying.

    Raises:
        InvalidDiagram: every problem, one per line (element id and line number where known).
    """
    return parse_process(bpmn_xml, forms, process_id, handler_names=handlers.names())


def deploy(session: Session, bpmn_xml: bytes, forms: dict[str, dict[str, Any]], deployed_by: str, note: str = "",
           process_id: str = PROCESS_ID, *, form_bytes: dict[str, bytes] | None = None) -> tuple[ProcessVersion, bool]:
    """Validate and store a version; the same content deployed again returns the existing version.

    The files are kept exactly as given for download (``form_bytes``: each form file's bytes by
    name, when the caller has them) and the deploy goes to the audit trail (``services.versions``).

    Returns:
        (version, created): ``created`` is False when identical content was already deployed.
    Raises:
        InvalidDiagram: the diagram or a form cannot run, or the note is longer than 2,000
            characters or holds a control character (nothing is stored).
    """
    note = check_note(note)
    parsed = check(bpmn_xml, forms, process_id)
    existing = session.scalar(select(ProcessVersion).where(ProcessVersion.process_id == process_id,
                                                           ProcessVersion.content_hash == parsed.content_hash)
                              .order_by(ProcessVersion.version.desc()).limit(1))
    if existing is not None:
        return existing, False
    number = (session.scalar(select(func.max(ProcessVersion.version))
                             .where(ProcessVersion.process_id == process_id)) or 0) + 1
    version = ProcessVersion(process_id=process_id, version=number, content_hash=parsed.content_hash,
                             bpmn_xml=bpmn_xml.decode("utf-8"),
                             forms_json=json.dumps(parsed.forms, ensure_ascii=False),
                             spec_json=runtime.spec_json(parsed), deployed_by=deployed_by,
                             deployed_at=clock.now(), note=note)
    session.add(version)
    session.flush()
    versions.record_deploy(session, version, form_bytes=form_bytes, bpmn_bytes=bpmn_xml)
    return version, True


NOTE_LIMIT = 2000


def check_note(note: str | None) -> str:
    """A deploy note as stored: stripped of surrounding blanks.

    Raises:
        InvalidDiagram: longer than 2,000 characters, or holding a control character (named).
    """
    note = (note or "").strip()
    if len(note) > NOTE_LIMIT:
        raise InvalidDiagram(M_("the note is longer than 2000 characters"))
    code = textguard.first_control(note)
    if code is not None:
        raise InvalidDiagram(M_("the note contains a control character (%(code)s); remove it and deploy again",
                                code=code))
    return note


def read_bundled() -> tuple[bytes, dict[str, dict[str, Any]]]:
    """The Rule 130 diagram and forms shipped in ``processes/rule130``."""
    return (BUNDLED_PROCESS / "rule130.bpmn").read_bytes(), load_forms(BUNDLED_PROCESS / "forms")


def deploy_bundled(session: Session, deployed_by: str = "setup") -> tuple[ProcessVersion, bool]:
    """Deploy the bundled Rule 130 process (a no-op when that content is already deployed)."""
    bpmn, forms = read_bundled()
    raw = {path.name: path.read_bytes() for path in (BUNDLED_PROCESS / "forms").glob("*.json")}
    return deploy(session, bpmn, forms, deployed_by, note=BUNDLED_NOTE, form_bytes=raw)


def _not_deployed(process_id: str) -> NotFound:
    return NotFound(M_("no version of %(process_id)s is deployed; run 'rule130 init-db' or 'rule130 deploy'", process_id=process_id))


def current(session: Session, process_id: str = PROCESS_ID) -> ProcessVersion:
    """The newest deployed version.

    Raises:
        NotFound: nothing deployed yet (run ``rule130 init-db``).
    """
    version = session.scalar(select(ProcessVersion).where(ProcessVersion.process_id == process_id)
                             .order_by(ProcessVersion.version.desc()).limit(1))
    if version is None:
        raise _not_deployed(process_id)
    return version


_CURRENT_ID = (select(ProcessVersion.id, ProcessVersion.content_hash).where(ProcessVersion.process_id == bindparam("process_id"))
               .order_by(ProcessVersion.version.desc()).limit(1))


def current_id(session: Session, process_id: str = PROCESS_ID) -> int:
    """The id of :func:`current`, read without the version's diagram, forms and spec (a new case
    needs only the id; :func:`load_id` loads it).

    Raises:
        NotFound: nothing deployed yet (run ``rule130 init-db``).
    """
    found = session.connection().execute(_CURRENT_ID, {"process_id": process_id}).first()
    if found is None:
        raise _not_deployed(process_id)
    note_content_hash(session, found[0], found[1])  # the new case's run loads it next (load_id)
    return int(found[0])


def load(version: ProcessVersion) -> LoadedVersion:
    """Parse a stored version once per process and keep it (versions are immutable).

    The cache keeps only plain values (the content hash, the parsed process, the spec): the
    returned :class:`LoadedVersion` carries ``version`` itself, the caller's session's instance,
    never an instance of a session that has since ended (which would be detached and expired).
    """
    content_hash = version.content_hash
    with _cache_lock:
        cached = _cache.get(version.id)
    if cached is not None and cached[0] == content_hash:
        return LoadedVersion(version.id, cached[1], cached[2], _version=version)
    forms = json.loads(version.forms_json)
    parsed = parse_process(version.bpmn_xml.encode("utf-8"), forms, version.process_id)
    with _cache_lock:
        _cache[version.id] = (content_hash, parsed, version.spec_json)
    return LoadedVersion(version.id, parsed, version.spec_json, _version=version)


_CONTENT_HASH = select(ProcessVersion.content_hash).where(ProcessVersion.id == bindparam("version_id"))
_HASHES = "content_hashes"  # txcache: version id -> content hash, read in this transaction with another row


def note_content_hash(session: Session, version_id: int, content_hash: str) -> None:
    """Note the content hash of version ``version_id`` as read in this transaction with another row
    (the case a unit of work loads, the current version's id): :func:`load_id` then reads nothing."""
    txcache.of(session, _HASHES)[version_id] = content_hash


def load_id(session: Session, version_id: int) -> LoadedVersion:
    """:func:`load` by the version's id: when the version is parsed already, only its content hash
    is read (not the diagram, forms and spec, some hundreds of KB): what every unit of work on a
    case does. ``version_id`` must name a stored version (a case's foreign key does).
    """
    content_hash = txcache.of(session, _HASHES).get(version_id)
    if content_hash is None:  # Core: one column, no ORM result (the row exists: a case's foreign key names it)
        content_hash = session.connection().execute(_CONTENT_HASH, {"version_id": version_id}).scalar()
    with _cache_lock:
        cached = _cache.get(version_id)
    if content_hash is not None and cached is not None and cached[0] == content_hash:
        return LoadedVersion(version_id, cached[1], cached[2], _session=session)
    return load(get_row(session, ProcessVersion, version_id))


# -- deploying an old version again ----------------------------------------------------------------------

def redeploy(session: Session, actor: User | str, process_id: str, number: int, note: str = "") -> ProcessVersion:
    """Deploy version ``number``'s files again as a new version (the next number), with the note
    ``"redeploy of v<number>"`` (and ``note`` after it). The files are checked again by today's
    validation pipeline; cases keep their versions (move them with :mod:`.migration`).

    Returns:
        the new version.
    Raises:
        NotPermitted: a user who is not an administrator. NotFound: no such version.
        InvalidDiagram: the old files no longer pass validation (e.g. a handler was withdrawn), or
            the note is too long or holds a control character (:func:`repository.check_note`).
        Conflict: another version got the next number first (the caller rolls back).
    """
    name = versions.actor_name(actor)
    note = check_note(note)
    old = versions.get_version(session, process_id, number)
    files = versions.version_files(session, old)
    forms = json.loads(old.forms_json)
    parsed = check(old.bpmn_xml.encode("utf-8"), forms, process_id)
    newest = session.scalar(select(func.max(ProcessVersion.version)).where(ProcessVersion.process_id == process_id)) or 0
    full_note = f"redeploy of v{number}" + (f": {note}" if note else "")
    version = ProcessVersion(process_id=process_id, version=newest + 1, content_hash=parsed.content_hash,
                             bpmn_xml=old.bpmn_xml, forms_json=old.forms_json, spec_json=old.spec_json,
                             deployed_by=name, deployed_at=clock.now(), note=full_note, redeploy_of=number)
    session.add(version)
    try:
        session.flush()
    except IntegrityError:  # (process, number) is unique: someone deployed the same number first
        raise Conflict(M_("another version of %(process_id)s was deployed at the same moment; nothing was deployed. Reload the versions and try again.", process_id=process_id)) from None
    versions._store_files(session, version, files)
    versions.audit(session, process_id, "redeploy", name, version_from=number, version_to=version.version, note=full_note,
          detail={"content_hash": version.content_hash, "files": sorted(files)})
    session.flush()
    return version


_names_seen: dict[int, tuple[tuple[int | None, int], dict[str, str]]] = {}  # id(sessions) -> (key, names)


def deployed_names(sessions: sessionmaker[Session]) -> dict[str, str]:
    """{English name: Hindi} of every deployed version's diagram (the Hindi its elements carry:
    :func:`webapp.engine.diagrams.names.hindi_names`), a newer version's over an older's. The diagrams are
    read again only when a version was added since the last call (one small query otherwise)."""
    with sessions() as session:
        newest, count = session.execute(select(func.max(ProcessVersion.id), func.count(ProcessVersion.id))).one()
        key = (newest, count)
        seen = _names_seen.get(id(sessions))
        if seen is not None and seen[0] == key:
            return seen[1]
        found: dict[str, str] = {}
        for xml in session.scalars(select(ProcessVersion.bpmn_xml).order_by(ProcessVersion.id)):
            found.update(names.hindi_names(xml))
    _names_seen[id(sessions)] = (key, found)
    return found
