"""Process drafts and deploys from the modeler page and the JSON API.

An administrator opens the current version of a process (or their saved draft), edits the diagram
and its JSON Schema forms, saves a draft (one per process, with who and when), validates and
deploys it with a note. Validation is the one pipeline of :mod:`webapp.engine.diagrams.parser`
(:func:`~webapp.engine.diagrams.parser.diagnose`, the same checks ``rule130 deploy`` runs); a deploy goes
through :func:`webapp.services.diagrams.repository.deploy`, like the command line's.

Forms travel as JSON text (what the administrator typed); a form that is not JSON is reported with
its line, like any other problem. Unreadable input (not XML, not BPMN, a DTD or entities, too large)
is refused before anything is stored.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.orm.exc import StaleDataError

import handlers
from webapp import i18n
from webapp.engine.diagrams import names
from webapp.engine.diagrams.parser import MAX_FORM_BYTES, examine
from webapp.engine.diagrams.problems import Problem, problems_of, refusal
from webapp.engine.diagrams.safe_xml import read_xml
from webapp.engine.diagrams.verdicts import Verdict
from webapp.errors import Conflict, InvalidDiagram, NotFound, NotPermitted, Rule130Error
from webapp.i18n import M_, MN_
from webapp.i18n import extract as i18n_extract
from webapp.services.diagrams import repository
from webapp.store.models import ProcessDraft, ProcessVersion, User
from webapp.values import clock

T = TypeVar("T")

FORM_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,98}\.json$")
MAX_FORMS = 100
DRAFT_CHANGED = M_("another administrator saved this draft after you opened it; nothing of yours was saved. "
                 "Reload the page to see their changes, then edit again.")


@dataclass
class Submission:
    """A diagram and its forms as sent by the page or the API, read but not yet checked.

    ``forms`` holds the forms that are JSON objects; ``form_texts`` every form's text as sent;
    ``problems`` the forms that could not be read (name, size, JSON syntax with its line).
    """

    bpmn_xml: bytes
    forms: dict[str, dict[str, Any]]
    form_texts: dict[str, str]
    problems: list[Problem]


def require_process_admin(user: User | None) -> User:
    """Only an installation-wide administrator edits and deploys processes (they run in every Panchayat).

    Raises:
        NotPermitted: any other user, including an administrator scoped to one Panchayat or Samiti (403).
    """
    if user is None or user.role != "administrator":
        raise NotPermitted(M_("only an administrator may edit, validate or deploy process diagrams"))
    if user.panchayat_id is not None or user.samiti_code is not None:
        raise NotPermitted(M_("only an installation-wide administrator may change process diagrams: a process "
                           "version runs in every Panchayat"))
    return user


def read_submission(bpmn: Any, forms: Any) -> Submission:
    """Read a diagram (text or bytes) and forms ({file name: JSON text or JSON object}).

    Raises:
        InvalidDiagram: the diagram is missing, or ``forms`` is not a mapping of names to forms.
    """
    if isinstance(bpmn, str):
        bpmn = bpmn.encode("utf-8")
    if not isinstance(bpmn, bytes) or not bpmn.strip():
        raise InvalidDiagram(M_("send the diagram: a BPMN 2.0 XML file (field 'bpmn')"))
    if forms is None:
        forms = {}
    if not isinstance(forms, dict):
        raise InvalidDiagram(M_("forms must be a mapping of file names to JSON Schema forms"))
    if len(forms) > MAX_FORMS:
        raise InvalidDiagram(M_("%(forms)s forms sent; at most %(MAX_FORMS)s are accepted", forms=len(forms), MAX_FORMS=MAX_FORMS))
    parsed: dict[str, dict[str, Any]] = {}
    texts: dict[str, str] = {}
    problems: list[Problem] = []
    for name, value in sorted(forms.items()):
        if not isinstance(name, str) or not FORM_NAME.match(name):
            problems.append(Problem(f"form file name {str(name)[:100]!r} is not allowed: use letters, digits, "
                                    "'_', '-' and '.', ending in .json (e.g. publish_notice.schema.json)"))
            continue
        text = value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)
        texts[name] = text
        if len(text.encode("utf-8")) > MAX_FORM_BYTES:
            problems.append(Problem(f"form {name} is larger than {MAX_FORM_BYTES} bytes"))
            continue
        try:
            schema = json.loads(text) if isinstance(value, str) else value
        except ValueError as error:
            line, column = getattr(error, "lineno", None), getattr(error, "colno", None)
            problems.append(Problem(f"form {name} is not JSON: {getattr(error, 'msg', error)}"
                                    + (f" (line {line}, column {column})" if line else "")))
            continue
        if not isinstance(schema, dict):
            problems.append(Problem(f"form {name} is not a JSON Schema: it must be a JSON object"))
            continue
        parsed[name] = schema
    return Submission(bpmn, parsed, texts, problems)


def verdict(submission: Submission, process_id: str = repository.PROCESS_ID) -> Verdict:
    """The verdict on a submission through the one pipeline (:func:`webapp.engine.diagrams.parser.examine`, the
    checks ``rule130 deploy`` runs), with the forms that could not be read among its problems.

    Returns:
        The Verdict: its problems are the forms' own problems first, then the diagram's errors and
        warnings (a user task naming an unreadable form is not also told the form is missing).
    """
    unread = set(submission.form_texts) - set(submission.forms)
    found = examine(submission.bpmn_xml, submission.forms, process_id, handlers.names(), unread_forms=unread)
    found.problems = submission.problems + found.problems
    return found


def check(submission: Submission, process_id: str = repository.PROCESS_ID) -> tuple[bool, list[Problem]]:
    """:func:`verdict` as (deployable, problems)."""
    found = verdict(submission, process_id)
    return found.deployable, found.problems


def current_version(session: Session, process_id: str) -> ProcessVersion:
    """The newest deployed version of ``process_id``.

    Raises:
        NotFound: the process was never deployed.
    """
    return repository.current(session, process_id)


def processes(session: Session) -> list[tuple[ProcessVersion, ProcessDraft | None]]:
    """Every deployed process: its current version and its draft (None when there is none)."""
    ids = session.scalars(select(ProcessVersion.process_id).distinct().order_by(ProcessVersion.process_id))
    return [(repository.current(session, pid), get_draft(session, pid)) for pid in ids]


def get_draft(session: Session, process_id: str) -> ProcessDraft | None:
    """The saved draft of ``process_id``, if any."""
    return session.scalar(select(ProcessDraft).where(ProcessDraft.process_id == process_id))


def source(session: Session, process_id: str) -> dict[str, Any]:
    """What the modeler opens: the draft when one is saved, else the current version.

    Returns:
        {"process_id", "version": {"id", "number", "deployed_by", "deployed_at", "note"},
        "draft": None | {"revision", "saved_by", "saved_at", "base_version"}, "bpmn": XML text,
        "forms": {file name: JSON text}}; instants in ISO 8601 UTC.
    Raises:
        NotFound: the process was never deployed.
    """
    version = current_version(session, process_id)
    draft = get_draft(session, process_id)
    if draft is not None:
        bpmn, forms = draft.bpmn_xml, json.loads(draft.forms_json)
    else:
        bpmn = version.bpmn_xml
        forms = {name: json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
                 for name, schema in json.loads(version.forms_json).items()}
    return {"process_id": process_id, "version": version_json(version), "draft": draft_json(session, draft),
            "bpmn": bpmn, "forms": forms}


MAX_LISTED_VERSIONS = 20


def versions_json(session: Session, process_id: str) -> list[dict[str, Any]]:
    """The newest :data:`MAX_LISTED_VERSIONS` versions of ``process_id``, newest first (:func:`version_json`)."""
    rows = session.scalars(select(ProcessVersion).where(ProcessVersion.process_id == process_id)
                           .order_by(ProcessVersion.version.desc()).limit(MAX_LISTED_VERSIONS))
    return [version_json(version) for version in rows]


def catalogue_hindi(bpmn_xml: str, forms: dict[str, str]) -> dict[str, str]:
    """{English text: Hindi} for the names of the diagram and the texts of its forms that have Hindi in
    the catalogue or in a deployed diagram (the modeler shows it beside the name and fills a form's Hindi
    fields with it when the form holds none of its own). Unreadable parts give nothing."""
    found: dict[str, str] = {}
    texts: set[str] = set()
    try:
        root = read_xml(bpmn_xml.encode("utf-8"))
        texts.update(names.catalogue_key(e) for e in names.named_elements(root))
    except InvalidDiagram:
        pass
    for text in forms.values():
        try:
            schema = json.loads(text)
        except ValueError:
            continue
        if isinstance(schema, dict):
            texts.update(i18n_extract.schema_texts(schema))
    deployed = i18n.deployed_names()
    for text in texts:
        hindi = i18n.catalogue_hindi(text) or deployed.get(text)
        if hindi:
            found[text] = hindi
    return found


def version_json(version: ProcessVersion) -> dict[str, Any]:
    """A version's identity for JSON: id, number, content hash, who, when (UTC), note."""
    return {"id": version.id, "process_id": version.process_id, "number": version.version,
            "content_hash": version.content_hash, "deployed_by": version.deployed_by,
            "deployed_at": version.deployed_at.isoformat(), "note": version.note}


def draft_json(session: Session, draft: ProcessDraft | None) -> dict[str, Any] | None:
    """A draft's identity for JSON (None for no draft): revision, who saved it, when (UTC), base version."""
    if draft is None:
        return None
    base = session.get(ProcessVersion, draft.base_version_id) if draft.base_version_id else None
    return {"revision": draft.revision, "saved_by": draft.saved_by, "saved_at": draft.saved_at.isoformat(),
            "base_version": base.version if base is not None else None}


def save_draft(session: Session, user: User, process_id: str, submission: Submission,
               revision: int | None) -> tuple[ProcessDraft, bool, list[Problem]]:
    """Store the submission as the process's draft (replacing the previous one of the same revision).

    A draft need not be deployable, but it must be readable: well-formed BPMN XML with no DTD, and
    every form JSON. The validation result comes back with it.

    Args:
        revision: the draft revision the administrator started from (None: they started from the
            current version, so no draft may exist yet).
    Returns:
        (draft, deployable, problems).
    Raises:
        NotPermitted: not an installation-wide administrator.
        NotFound: the process was never deployed.
        InvalidDiagram: unreadable XML or forms (nothing stored).
        Conflict: someone saved or deployed the draft since ``revision`` (nothing stored).
    """
    require_process_admin(user)
    version = current_version(session, process_id)
    try:
        read_xml(submission.bpmn_xml)
    except InvalidDiagram as error:
        raise refusal(M_("the draft was not saved: %(error)s", error=error.message), problems_of(error)) from None
    unreadable = [p for p in submission.problems]
    if unreadable:
        raise refusal(M_("the draft was not saved: a form cannot be read"), unreadable)
    draft = get_draft(session, process_id)
    if (draft.revision if draft is not None else None) != revision:
        raise Conflict(DRAFT_CHANGED if draft is not None or revision is None else
                       M_("this draft was deployed or discarded by another administrator after you opened it; "
                          "nothing of yours was saved. Reload the page to start from the current version."))
    if draft is None:
        draft = ProcessDraft(process_id=process_id, base_version_id=version.id)
        session.add(draft)
    draft.bpmn_xml = submission.bpmn_xml.decode("utf-8")
    draft.forms_json = json.dumps(submission.form_texts, ensure_ascii=False)
    draft.saved_by = user.username
    draft.saved_at = clock.now()
    session.flush()
    deployable, problems = check(submission, process_id)
    return draft, deployable, problems


def discard_draft(session: Session, user: User, process_id: str, revision: int | None) -> None:
    """Delete the process's draft (the page then opens the current version again).

    Raises:
        NotPermitted, NotFound (no draft), Conflict (saved by someone since ``revision``).
    """
    require_process_admin(user)
    draft = get_draft(session, process_id)
    if draft is None:
        raise NotFound(M_("there is no draft of %(process_id)s", process_id=process_id))
    if draft.revision != revision:
        raise Conflict(DRAFT_CHANGED)
    session.delete(draft)
    session.flush()


def deploy_draft(session: Session, user: User, process_id: str, revision: int | None,
                 note: str) -> tuple[ProcessVersion, bool]:
    """Deploy the saved draft as a new version (through :func:`repository.deploy`) and delete the draft.

    Returns:
        (version, created): ``created`` is False when the same content was already deployed.
    Raises:
        NotPermitted; NotFound (never deployed); Conflict (no draft, or a newer revision than the
        one the administrator saw: another administrator deployed or saved it first);
        InvalidDiagram with every problem (nothing deployed, the draft kept).
    """
    require_process_admin(user)
    version = current_version(session, process_id)
    draft = get_draft(session, process_id)
    if draft is None:
        raise Conflict(M_("there is no saved draft of %(process_id)s to deploy; it may have been deployed by another administrator (the current version is %(version)s, deployed by %(deployed_by)s). Reload the page.", process_id=process_id, version=version.version, deployed_by=version.deployed_by))
    if draft.revision != revision:
        raise Conflict(DRAFT_CHANGED)
    submission = read_submission(draft.bpmn_xml, json.loads(draft.forms_json))
    if submission.problems:
        raise refusal(MN_("%(num)s problem stops this diagram from running",
                          "%(num)s problems stop this diagram from running", num=len(submission.problems)),
                      submission.problems)
    deployed, created = deploy(session, user, process_id, submission, note)
    session.delete(draft)
    session.flush()
    return deployed, created


def deploy(session: Session, user: User, process_id: str, submission: Submission,
           note: str) -> tuple[ProcessVersion, bool]:
    """Deploy a submission as a new version of ``process_id`` (:func:`repository.deploy`), by ``user``.

    Raises:
        NotPermitted; InvalidDiagram with every problem (the forms' and the diagram's; nothing deployed).
    """
    require_process_admin(user)
    if submission.problems:
        _deployable, problems = check(submission, process_id)
        errors = [p for p in problems if p.severity == "error"]
        raise refusal(MN_("%(num)s problem stops this diagram from running",
                          "%(num)s problems stop this diagram from running", num=len(errors)), errors)
    return repository.deploy(session, submission.bpmn_xml, submission.forms, user.username, note, process_id)


def perform(sessions: sessionmaker[Session], fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run ``fn(session, ...)`` as one transaction: committed on success, rolled back on any refusal.

    Two administrators acting on the same draft at once: the loser's transaction fails on the draft's
    revision or on the version's unique number and content hash, and becomes a Conflict (409).
    """
    with sessions() as session:
        try:
            result = fn(session, *args, **kwargs)
            session.commit()
            return result
        except (StaleDataError, IntegrityError):
            session.rollback()
            error: Rule130Error = Conflict(M_("another administrator saved or deployed this process at the same "
                                           "moment; nothing of yours was saved or deployed. Reload the page "
                                           "to see the current version and draft."))
        except Rule130Error as refused:
            session.rollback()
            error = refused
    raise error
