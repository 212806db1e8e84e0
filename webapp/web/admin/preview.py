"""The modeler's preview of a task form: the officers' own task page (``officer/task.html``, its fields
built by :func:`webapp.web.pages.task_forms.form_fields`) for an example case, so an administrator sees the
form exactly as officers will, in either language, before deploying it. Nothing is read from or
written to a case; the example case's facts are fixed and say they are an example.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal
from types import SimpleNamespace
from typing import Any

from flask import render_template
from flask_babel import gettext

from webapp.i18n.formats import DEFAULT_TZ
from webapp.services.tasks.tasks import TaskView
from webapp.values.casefile import Animal, CaseFile
from webapp.web.pages.task_forms import form_fields  # the officers' own field builder, unchanged

EXAMPLE_CASE = "EXAMPLE/2026/0001"
EXAMPLE_INSTANT = datetime(2026, 1, 5, 4, 30, tzinfo=UTC)  # 10:00 in India


def _example_case() -> CaseFile:
    """One brown cow impounded on 5 January 2026 at 10:00 IST, tariff ₹500 fine and ₹50 a day."""
    cow = Animal(position=1, species="cow", description="brown cow", tag="RJ-1", fine=Decimal("500.00"),
                 feeding_per_day=Decimal("50.00"))
    return CaseFile(case_number=EXAMPLE_CASE, timezone=DEFAULT_TZ, impounded_at=EXAMPLE_INSTANT,
                    impounded_on=date(2026, 1, 5), place_seized="Bhimpura", place_impounded="Kanji House",
                    nearest_village="Bhimpura", animals=[cow])


def render(schema: dict[str, Any], task_name: str) -> str:
    """The task page of ``schema`` for the example case, in the current (forced) locale, as HTML text.
    ``task_name`` is the task's name as the modeler sends it (in the preview's language where the
    diagram has it); its to-do line is the catalogue's translation of it, as the heading's (the
    ``words`` filter), so that a Hindi preview never reads "Record bid।"."""
    view = TaskView(case_id=0, case_number=EXAMPLE_CASE, task_id="preview", element_id="preview", name=task_name,
                    lane="secretary", form_key=None, schema=schema, due=date(2026, 1, 8), deadline_label=None,
                    deadline=None, data={}, lock_version=0)
    row = SimpleNamespace(claimed_by_id=None, claimed_by=None, act_by=None, todo=gettext(task_name) if task_name else task_name)
    summary = SimpleNamespace(fees=SimpleNamespace(fine=Decimal("500.00"), pound_feeding=Decimal("150.00")))
    return render_template("officer/task.html", view=view, row=row, me_id=-1, fields=form_fields(schema, {}, {}),
                           error=None, other_errors={}, objector=None, cf=_example_case(), summary=summary,
                           lock_version=0, release_due=None)
