"""What a handler may use: the case file, the instant, the task's form, the ledger, notifications."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from typing import Any, Protocol

from webapp.values import legal_time
from webapp.values.casefile import CaseFile


class Ledger(Protocol):
    """What a handler may do with the case ledger (:class:`webapp.services.money.ledger.CaseLedger`)."""

    def post(self, from_account: str, to_account: str, amount: Decimal, *, kind: str, clause: str,
             memo: str = "") -> object: ...

    def balance(self, account: str) -> Decimal: ...


@dataclass
class HandlerContext:
    """Everything a handler may read or do for one case during one engine run.

    Attributes:
        case_file: the case's facts (mutated in place; saved with the case in the same transaction).
        now: the current instant (UTC), from the product's clock.
        ledger: posts entries for this case and reads its balances (rupees, Decimal).
        notify: ``notify(roles, template, **params)`` writes in-app notifications to the officers
            of those roles within the case's scope.
        task_data: the data of the service task being run (includes submitted forms by name).
        task_name: the element id of that task.
        attached_to: for a task on the path of a boundary event (an overdue timer's notice), the
            user task the event is attached to: ``{"element_id", "name", "lane", "task_id",
            "ready": bool}``; None elsewhere.
    """

    case_file: CaseFile
    now: datetime
    ledger: Ledger
    notify: Callable[..., None]
    task_data: dict[str, Any] = field(default_factory=dict)
    task_name: str = ""
    attached_to: dict[str, Any] | None = None

    @property
    def today(self) -> date:
        """The local calendar day of :attr:`now` in the Panchayat's zone."""
        return legal_time.local_day(self.now, self.case_file.timezone)

    def form(self, key: str) -> dict[str, Any]:
        """The submitted form stored under ``key`` (the form file name without its suffix).

        Raises:
            KeyError: the form is not in the task's data.
        """
        value = self.task_data.get(key)
        if not isinstance(value, dict):
            raise KeyError(f"the form {key} is not in the task data of {self.task_name}")
        return value
