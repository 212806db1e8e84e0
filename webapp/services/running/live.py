"""Engine instances kept alive in this process between the transactions of their case.

Every act and every timer pass on a case loads its engine instance from the stored state and, once
the work is done, stores the new state (:class:`webapp.services.cases.cases.CaseRun`). Deserializing an
instance is a large part of the cost of a step (the benchmark's whole s1 case: about 19 of 151 ms
on SQLite, docs/benchmarks.md). This module keeps the instance a committed transaction stored,
so the next transaction of the same case in the same process can take it instead of reading the
state back.

The rules that keep it exact:

- an instance is kept only **after its transaction committed** (``after_commit``), together with
  the exact state text that transaction stored; a rollback keeps nothing;
- it is handed out only for that exact stored text (``case.state_json``), of the same process
  version; any other writer (another process, a version move, a restore) changes the text, and the
  stored state is read as before;
- :func:`take` removes it: one unit of work at a time owns an instance (a page that only reads
  takes it too, and the next step reads the stored state); so a failed or concurrent unit of work
  can never leave a changed instance behind;
- at most :data:`SIZE` instances are kept, least recently kept dropped first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from sqlalchemy import event
from sqlalchemy.orm import Session

SIZE = 64  # instances kept per process (each a few hundred KiB)
_PENDING = "rule130.live_pending"  # session.info key: {key: (version id, state text, instance, fingerprint)}

Key = tuple[str, int]  # (the database's URL, the case id)

_lock = threading.Lock()
_kept: OrderedDict[Key, tuple[int, str, Any]] = OrderedDict()


def _key(session: Session, case_id: int) -> Key:
    return (str(session.get_bind().engine.url), case_id)


def _fingerprint(workflow: Any) -> tuple[Any, ...]:
    """The state of every task of the instance and its subprocesses: an instance changed after its
    state was stored (which no unit of work should do) is not kept."""
    return tuple((len(wf.tasks), tuple(t.state for t in wf.tasks.values()))
                 for wf in (workflow, *workflow.subprocesses.values()))


def take(session: Session, case: Any) -> Any | None:
    """The kept instance of ``case`` (a :class:`webapp.store.models.Case`) whose stored state is
    exactly ``case.state_json`` on its process version, removed from the store; None when there
    is none (the caller reads the stored state)."""
    with _lock:
        kept = _kept.pop(_key(session, case.id), None)
    if kept is None:
        return None
    version_id, text, workflow = kept
    if version_id != case.process_version_id or text != case.state_json:
        return None
    return workflow


def keep_after_commit(session: Session, case: Any, workflow: Any) -> None:
    """Note that ``workflow`` is the instance whose state the session is about to store for
    ``case`` (``case.state_json``); it is kept once the session commits (the case's latest note
    wins)."""
    session.info.setdefault(_PENDING, {})[_key(session, case.id)] = (
        case.process_version_id, case.state_json, workflow, _fingerprint(workflow))


def clear() -> None:
    """Forget every kept instance (tests; after a restore of the database)."""
    with _lock:
        _kept.clear()


def kept_count() -> int:
    """How many instances are kept now."""
    with _lock:
        return len(_kept)


@event.listens_for(Session, "after_commit")
def _kept_on_commit(session: Session) -> None:
    pending = session.info.pop(_PENDING, None)
    if not pending:
        return
    with _lock:
        for key, (version_id, text, workflow, fingerprint) in pending.items():
            _kept.pop(key, None)
            if _fingerprint(workflow) == fingerprint:
                _kept[key] = (version_id, text, workflow)
        while len(_kept) > SIZE:
            _kept.popitem(last=False)


@event.listens_for(Session, "after_rollback")
def _nothing_on_rollback(session: Session) -> None:
    session.info.pop(_PENDING, None)
