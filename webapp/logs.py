"""Structured logs: JSON lines through the standard ``logging`` module, with the case number on
every line written while a case is being worked on.

The case number lives in a context variable (:func:`bind_case`): a unit of work on a case
(``cases.CaseRun``, used by officers' acts and by the timer worker) sets it, and
:func:`webapp.services.running.uow.perform` runs each unit in a copy of the context so it never leaks to
the next unit or request. :class:`CaseFilter` copies it onto every record (``record.case``).

One line per record, e.g.::

    {"ts": "2026-01-09T00:00:00.041+00:00", "level": "INFO", "logger": "rule130.timers",
     "case": "RMP/2026/0001", "message": "case RMP/2026/0001: timer bt_release_window fired, ..."}

``RULE130_LOG_FORMAT=text`` gives plain lines instead (``... [RMP/2026/0001] message``).
"""

from __future__ import annotations

import contextvars
import json
import logging
import os
from datetime import UTC, datetime

_case: contextvars.ContextVar[str | None] = contextvars.ContextVar("rule130_case", default=None)


def bind_case(case_number: str | None) -> None:
    """Name the case the current context works on (None: none) for every following log line."""
    _case.set(case_number)


def current_case() -> str | None:
    """The case number bound in this context, or None."""
    return _case.get()


class CaseFilter(logging.Filter):
    """Adds ``record.case`` (the bound case number, or None) to every record; never drops one."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "case"):
            record.case = _case.get()
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts (UTC, ms), level, logger, case (when bound), message, exc."""

    def format(self, record: logging.LogRecord) -> str:
        line = {"ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
                "level": record.levelname, "logger": record.name}
        case = getattr(record, "case", None)
        if case:
            line["case"] = case
        line["message"] = record.getMessage()
        if record.exc_info:
            line["exc"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s%(case_tag)s %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        case = getattr(record, "case", None)
        record.case_tag = f" [{case}]" if case else ""
        return super().format(record)


def configure(level: int = logging.INFO, fmt: str | None = None) -> None:
    """Send the root logger's records to stderr as JSON lines (or text, ``fmt="text"`` or env
    ``RULE130_LOG_FORMAT=text``), each with the bound case number. Idempotent: the handler is
    installed once per process."""
    fmt = fmt or os.environ.get("RULE130_LOG_FORMAT", "json")
    root = logging.getLogger()
    handler = next((h for h in root.handlers if getattr(h, "rule130", False)), None)
    if handler is None:
        handler = logging.StreamHandler()
        handler.rule130 = True  # type: ignore[attr-defined]
        handler.addFilter(CaseFilter())
        root.addHandler(handler)
    handler.setFormatter(TextFormatter() if fmt == "text" else JsonFormatter())
    root.setLevel(level)
    for noisy in ("spiff", "alembic"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
