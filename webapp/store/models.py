"""The tables. Instants are stored in UTC and read back offset-aware; money is NUMERIC(14, 2)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any, TypeVar

from sqlalchemy import (
    BigInteger,
    Date,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    Numeric,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
    false,
    text,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, relationship


class UTCDateTime(TypeDecorator[datetime]):
    """An offset-aware instant stored as UTC (SQLite keeps no offset; PostgreSQL uses timestamptz)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"refusing to store a naive datetime: {value!r}")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: Any | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        instant: datetime = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        return instant


class Base(DeclarativeBase):
    pass


class Panchayat(Base):
    __tablename__ = "panchayat"
    id: Mapped[int] = mapped_column(primary_key=True)
    code: Mapped[str] = mapped_column(String(16), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    samiti_code: Mapped[str] = mapped_column(String(32), index=True)
    district: Mapped[str] = mapped_column(String(100), default="", index=True)  # indexed: 0025_oversight
    timezone: Mapped[str] = mapped_column(String(64), default="Asia/Kolkata")
    appeal_period_days: Mapped[int] = mapped_column(Integer, default=30)
    return_period_days: Mapped[int] = mapped_column(Integer, default=7)
    appellate_forum: Mapped[str] = mapped_column(String(200), default="Vikas Adhikari, Panchayat Samiti")
    # a training Panchayat (migration 0020): the only kind of Panchayat the simulator writes into
    # (``rule130 create-panchayat --training``, or the one ``rule130 simulate`` makes itself); its
    # cases may run on a virtual clock. Every other Panchayat is live.
    training: Mapped[bool] = mapped_column(default=False, server_default=false())
    # a training Panchayat's own clock (migration 0021): how far it runs ahead of the real clock, in
    # whole seconds, moved only forward (webapp.services.panchayats.training); 0 for every live Panchayat
    clock_offset_seconds: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    # a training Panchayat put away by a reset (migration 0021): its cases stay, out of every list,
    # and fire no timer again; None for every other Panchayat
    archived_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # the local day the Panchayat was constituted (migration 0022); a paper case brought in may not
    # record a fact dated before it (webapp.services.intake.paper_cases); None: not recorded
    established_on: Mapped[date | None] = mapped_column(Date)

    @property
    def clock_ahead(self) -> timedelta:
        """How far this Panchayat's clock runs ahead of the real clock: zero for a live Panchayat."""
        return timedelta(seconds=self.clock_offset_seconds or 0) if self.training else timedelta(0)


class CaseNumberSequence(Base):
    """The last case number a Panchayat gave in one year of impoundment (``CODE/YEAR/NNNN``): each
    year's cases are numbered from 0001 (migration 0017)."""

    __tablename__ = "case_number_sequence"
    panchayat_id: Mapped[int] = mapped_column(ForeignKey("panchayat.id"), primary_key=True)
    year: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    last: Mapped[int] = mapped_column(Integer)


class User(Base):
    __tablename__ = "app_user"
    id: Mapped[int] = mapped_column(primary_key=True)
    username: Mapped[str] = mapped_column(String(80), unique=True)
    display_name: Mapped[str] = mapped_column(String(200))
    password_hash: Mapped[str] = mapped_column(String(255))
    role: Mapped[str] = mapped_column(String(32))
    panchayat_id: Mapped[int | None] = mapped_column(ForeignKey("panchayat.id"), index=True)
    samiti_code: Mapped[str | None] = mapped_column(String(32))
    language: Mapped[str] = mapped_column(String(8), default="en")
    active: Mapped[bool] = mapped_column(default=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    # the key every signed-in session of this user carries (webapp.web.access.sessions); a new key
    # (webapp.store.session_keys) ends them all; None until the first sign-in
    session_key: Mapped[str | None] = mapped_column(String(64))
    # made by the simulator (migration 0020): no usable password, never signs in, gets no API token,
    # is never offered as the holder of a task and hears only of training Panchayats' cases
    # (webapp.services.people.users.create_simulator_user)
    simulated: Mapped[bool] = mapped_column(default=False, server_default=false())
    # a District (migration 0024_officers): for an administrator of a District, the ``panchayat.district``
    # they manage, with ``samiti_code`` set to webapp.services.people.users.DISTRICT_SCOPE; for a district
    # officer (0025_oversight), the District whose Panchayats the oversight pages show them; NULL otherwise
    district: Mapped[str | None] = mapped_column(String(100))
    # signs in with a first password an administrator gave (a new officer, a reset; migration 0024_officers):
    # must choose their own before anything else (webapp.web.access.account)
    must_change_password: Mapped[bool] = mapped_column(default=False, server_default=false())


class ApiToken(Base):
    __tablename__ = "api_token"
    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("app_user.id"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    # the scope the token was made for (its user's then); a user whose role or scope changed
    # since cannot use it (webapp.services.people.users.user_for_token)
    role: Mapped[str] = mapped_column(String(32), server_default="")
    panchayat_id: Mapped[int | None] = mapped_column(ForeignKey("panchayat.id"))
    samiti_code: Mapped[str | None] = mapped_column(String(32))
    district: Mapped[str | None] = mapped_column(String(100))  # migration 0024_officers
    label: Mapped[str] = mapped_column(String(200), server_default="")
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class ProcessVersion(Base):
    """One deployed version of a process: the BPMN and its forms, hashed together, stored once."""

    __tablename__ = "process_version"
    # A redeploy stores the same content again under a new number: the hash is indexed, not unique.
    __table_args__ = (UniqueConstraint("process_id", "version"),
                      Index("ix_process_version_content_hash", "process_id", "content_hash"))
    id: Mapped[int] = mapped_column(primary_key=True)
    process_id: Mapped[str] = mapped_column(String(100))
    version: Mapped[int] = mapped_column(Integer)
    content_hash: Mapped[str] = mapped_column(String(64))
    # The large texts are read only when used: a case's unit of work needs the version's id and
    # hash (the parsed process is cached per process), not its diagram.
    bpmn_xml: Mapped[str] = mapped_column(Text, deferred=True)
    forms_json: Mapped[str] = mapped_column(Text, deferred=True)
    spec_json: Mapped[str] = mapped_column(Text, deferred=True)
    deployed_by: Mapped[str] = mapped_column(String(80))
    deployed_at: Mapped[datetime] = mapped_column(UTCDateTime())
    note: Mapped[str] = mapped_column(Text, default="")
    redeploy_of: Mapped[int | None] = mapped_column(Integer)  # the version number redeployed, if any


class ProcessDraft(Base):
    """An administrator's unfinished edit of a process (one per process): the BPMN and the forms' JSON
    text as last saved, the version it started from, who saved it and when. ``revision`` counts
    saves, so two administrators cannot overwrite each other's work unnoticed."""

    __tablename__ = "process_draft"
    id: Mapped[int] = mapped_column(primary_key=True)
    process_id: Mapped[str] = mapped_column(String(100), unique=True)
    base_version_id: Mapped[int | None] = mapped_column(ForeignKey("process_version.id"))
    bpmn_xml: Mapped[str] = mapped_column(Text)
    forms_json: Mapped[str] = mapped_column(Text)  # {file name: JSON text as the administrator wrote it}
    saved_by: Mapped[str] = mapped_column(String(80))
    saved_at: Mapped[datetime] = mapped_column(UTCDateTime())
    revision: Mapped[int] = mapped_column(Integer, default=1)

    __mapper_args__ = {"version_id_col": revision}  # noqa: RUF012 (a mapper setting, read once by SQLAlchemy)


class Case(Base):
    """One Rule 130 case: a process instance, its case file, and the columns lists need."""

    __tablename__ = "case_instance"
    __table_args__ = (Index("ix_case_next_timer_due", "next_timer_due"),
                      UniqueConstraint("panchayat_id", "submission_key", name="uq_case_submission_key"),
                      # the oversight pages' count of running cases and cattle held per Panchayat (0022)
                      Index("ix_case_oversight", "panchayat_id", "status", "cattle_held"))
    id: Mapped[int] = mapped_column(primary_key=True)
    case_number: Mapped[str] = mapped_column(String(40), unique=True)
    panchayat_id: Mapped[int] = mapped_column(ForeignKey("panchayat.id"), index=True)
    process_version_id: Mapped[int] = mapped_column(ForeignKey("process_version.id"))
    status: Mapped[str] = mapped_column(String(16), default="running")  # running | completed
    outcome: Mapped[str] = mapped_column(String(32), default="pending")
    file_json: Mapped[str] = mapped_column(Text)
    state_json: Mapped[str] = mapped_column(Text)
    next_timer_due: Mapped[datetime | None] = mapped_column(UTCDateTime())
    next_alert_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), index=True)  # next "deadline near"
    receiving_officer_id: Mapped[int | None] = mapped_column(ForeignKey("app_user.id"), index=True)
    notice_last_day: Mapped[str | None] = mapped_column(String(10))  # local date, for the notice board
    lock_version: Mapped[int] = mapped_column(Integer, default=1)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())
    closed_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    held_incident_id: Mapped[int | None] = mapped_column(Integer)  # the open incident holding the case
    # F + C not covered by the money of the case (RULE130.md (e)); kept in step with the case file
    shortfall: Mapped[Decimal] = mapped_column(Numeric(14, 2), default=Decimal("0.00"), server_default="0")
    # the key of the form or API call that started the case: the same one sent twice starts one case
    submission_key: Mapped[str | None] = mapped_column(String(80))
    submission_hash: Mapped[str | None] = mapped_column(String(64))  # SHA-256 of what that call sent
    # head of cattle in the pound now (webapp.values.pound.cattle_in_pound), kept in step with the
    # case file on every save (migration 0025_oversight)
    cattle_held: Mapped[int] = mapped_column(Integer, default=0, server_default="0")

    __mapper_args__ = {"version_id_col": lock_version}  # noqa: RUF012 (a mapper setting, read once by SQLAlchemy)


class CaseEvent(Base):
    """The case's history: tasks completed, timers fired, refusals, notifications."""

    __tablename__ = "case_event"
    id: Mapped[int] = mapped_column(primary_key=True)
    case_id: Mapped[int] = mapped_column(ForeignKey("case_instance.id"), index=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime())
    kind: Mapped[str] = mapped_column(String(16))  # start | task | timer | refusal | notification | act
    name: Mapped[str] = mapped_column(String(200))
    element_id: Mapped[str | None] = mapped_column(String(100))
    actor_role: Mapped[str | None] = mapped_column(String(32))
    actor_user_id: Mapped[int | None] = mapped_column(ForeignKey("app_user.id"))
    detail_json: Mapped[str] = mapped_column(Text, default="{}")


class TimerFiring(Base):
    __tablename__ = "timer_firing"
    id: Mapped[int] = mapped_column(primary_key=True)
    case_id: Mapped[int] = mapped_column(ForeignKey("case_instance.id"), index=True)
    element_id: Mapped[str] = mapped_column(String(100))
    due_at: Mapped[datetime] = mapped_column(UTCDateTime())
    fired_at: Mapped[datetime] = mapped_column(UTCDateTime())
    lateness_seconds: Mapped[float] = mapped_column()
    # The timer worker's lag: the firing instant minus the later of the due instant and the instant
    # the timer was armed (a timer already due when armed, as on a case recorded days after the
    # impoundment, lags from its arming, not from its due instant). NULL on firings recorded before
    # migration 0016, whose lateness stands in for it.
    lag_seconds: Mapped[float | None] = mapped_column(nullable=True)


class LedgerEntry(Base):
    """One movement of money: ``amount`` rupees from ``from_account`` to ``to_account``.

    Never edited or deleted (an ORM guard in webapp.services.money.ledger and a database trigger refuse
    it): a correction is a new entry with ``reversal_of`` naming the entry it reverses and a
    ``reason``."""

    __tablename__ = "ledger_entry"
    # the oversight pages: each Panchayat's account balances and its receipts of a month, read from
    # this index alone (migration 0025_oversight)
    __table_args__ = (Index("ix_ledger_oversight", "panchayat_id", "at", "from_account", "to_account", "amount"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    case_id: Mapped[int] = mapped_column(ForeignKey("case_instance.id"), index=True)
    panchayat_id: Mapped[int] = mapped_column(ForeignKey("panchayat.id"), index=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime())
    from_account: Mapped[str] = mapped_column(String(32))
    to_account: Mapped[str] = mapped_column(String(32))
    amount: Mapped[Decimal] = mapped_column(Numeric(14, 2))
    kind: Mapped[str] = mapped_column(String(40))
    clause: Mapped[str] = mapped_column(String(100))
    element_id: Mapped[str | None] = mapped_column(String(100))
    officer_id: Mapped[int | None] = mapped_column(ForeignKey("app_user.id"))
    memo: Mapped[str] = mapped_column(Text, default="")
    reversal_of: Mapped[int | None] = mapped_column(ForeignKey("ledger_entry.id"), unique=True)
    reason: Mapped[str] = mapped_column(Text, default="", server_default="")


class PanchayatBalance(Base):
    """The balance of each of a Panchayat's accounts (money in less money out, rupees): what its
    ledger entries add up to, kept by a database trigger on every new entry in the same
    transaction (migration 0025_oversight), so the oversight pages read one row per Panchayat
    instead of its whole ledger. A Panchayat with no entry has no row (its balances are zero)."""

    __tablename__ = "panchayat_balance"
    panchayat_id: Mapped[int] = mapped_column(ForeignKey("panchayat.id"), primary_key=True, autoincrement=False)
    suspense: Mapped[Decimal] = mapped_column(Numeric(14, 2), default=Decimal("0.00"), server_default="0")
    pound_account: Mapped[Decimal] = mapped_column(Numeric(14, 2), default=Decimal("0.00"), server_default="0")
    panchayat_fund: Mapped[Decimal] = mapped_column(Numeric(14, 2), default=Decimal("0.00"), server_default="0")


class TariffRate(Base):
    """The fine per head and the feeding per head per day of one species, in force from
    ``effective_from`` (a local calendar day) for one Panchayat, or for every Panchayat without
    one of its own when ``panchayat_id`` is None (webapp.services.money.tariffs). Rows are only added."""

    __tablename__ = "tariff_rate"
    __table_args__ = (Index("ix_tariff_rate_lookup", "panchayat_id", "species", "effective_from"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    panchayat_id: Mapped[int | None] = mapped_column(ForeignKey("panchayat.id"))
    species: Mapped[str] = mapped_column(String(32))
    fine: Mapped[Decimal] = mapped_column(Numeric(14, 2))
    feeding_per_day: Mapped[Decimal] = mapped_column(Numeric(14, 2))
    effective_from: Mapped[date] = mapped_column(Date)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    created_by: Mapped[str] = mapped_column(String(80))
    note: Mapped[str] = mapped_column(Text, default="", server_default="")


class Notification(Base):
    __tablename__ = "notification"
    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("app_user.id"), index=True)
    case_id: Mapped[int | None] = mapped_column(ForeignKey("case_instance.id"))
    template: Mapped[str] = mapped_column(String(64))
    message: Mapped[str] = mapped_column(Text)  # as written, in the recipient's language then (e-mail, history)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    read_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # the template's parameters (JSON object of texts, with "case"): the inbox renders the message
    # in the reader's current language; NULL on rows written before 0014 (shown as written)
    params_json: Mapped[str | None] = mapped_column(Text)


class WorkerLease(Base):
    """Who runs the timer worker (one at a time on SQLite)."""

    __tablename__ = "worker_lease"
    name: Mapped[str] = mapped_column(String(40), primary_key=True)
    holder: Mapped[str] = mapped_column(String(200))
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())


class NotificationPreference(Base):
    """A user's notification channels beyond the in-app inbox (which is always on)."""

    __tablename__ = "notification_preference"
    user_id: Mapped[int] = mapped_column(ForeignKey("app_user.id"), primary_key=True)
    email_enabled: Mapped[bool] = mapped_column(default=False)
    email_address: Mapped[str] = mapped_column(String(254), default="")
    webhook_enabled: Mapped[bool] = mapped_column(default=False)
    webhook_url: Mapped[str] = mapped_column(String(500), default="")
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())


class Delivery(Base):
    """The outbox: one notification sent over one channel (e-mail or webhook), with its retries.

    Written in the transaction of the case change that caused the notification; a delivery worker
    sends it afterwards. ``status``: pending | sending (claimed until ``next_attempt_at``) | sent |
    failed (gave up after the last attempt).
    """

    __tablename__ = "delivery"
    __table_args__ = (UniqueConstraint("notification_id", "channel"),
                      Index("ix_delivery_status_next", "status", "next_attempt_at"))
    id: Mapped[int] = mapped_column(primary_key=True)
    notification_id: Mapped[int] = mapped_column(ForeignKey("notification.id"), index=True)
    channel: Mapped[str] = mapped_column(String(16))  # email | webhook
    target: Mapped[str] = mapped_column(String(500))  # the address or URL at the time of writing
    status: Mapped[str] = mapped_column(String(16), default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(UTCDateTime())
    last_error: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    notification: Mapped[Notification] = relationship()  # lets the row be added before its notification's id exists


class DeadlineReminder(Base):
    """A "deadline near" notice sent for one armed legal timer (its element and due instant), once."""

    __tablename__ = "deadline_reminder"
    __table_args__ = (UniqueConstraint("case_id", "element_id", "due_at"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    case_id: Mapped[int] = mapped_column(ForeignKey("case_instance.id"), index=True)
    element_id: Mapped[str] = mapped_column(String(100))
    due_at: Mapped[datetime] = mapped_column(UTCDateTime())
    sent_at: Mapped[datetime] = mapped_column(UTCDateTime())


class Incident(Base):
    """A step of a case that failed (webapp.services.jobs.incidents): the case is held until it is handled."""

    __tablename__ = "incident"
    id: Mapped[int] = mapped_column(primary_key=True)
    case_id: Mapped[int] = mapped_column(ForeignKey("case_instance.id"), index=True)
    element_id: Mapped[str | None] = mapped_column(String(100))
    element_name: Mapped[str | None] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(32))  # handler_error | script_refused | timer_expression | ledger_invariant
    message: Mapped[str] = mapped_column(Text)
    data_json: Mapped[str] = mapped_column(Text, default="{}")
    action: Mapped[str] = mapped_column(String(64))  # what was being done: fire_timers, complete_task, ...
    raised_at: Mapped[datetime] = mapped_column(UTCDateTime())
    status: Mapped[str] = mapped_column(String(16), default="open", index=True)  # open | retried | skipped
    attempts: Mapped[int] = mapped_column(Integer, default=1)
    actor_user_id: Mapped[int | None] = mapped_column(ForeignKey("app_user.id"))
    resolved_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    resolved_by_id: Mapped[int | None] = mapped_column(ForeignKey("app_user.id"))
    resolution_note: Mapped[str] = mapped_column(Text, default="")


class AuditEntry(Base):
    """One entry of the tamper-evident audit trail (webapp.services.audit): ``hash`` is the SHA-256
    of the entry's canonical JSON and the previous entry's hash. Appended only, never edited."""

    __tablename__ = "audit_entry"
    id: Mapped[int] = mapped_column(primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, unique=True)  # 1, 2, 3 ... with no gap; unique: no fork
    at: Mapped[datetime] = mapped_column(UTCDateTime())
    kind: Mapped[str] = mapped_column(String(40))
    actor: Mapped[str | None] = mapped_column(String(80))
    case_id: Mapped[int | None] = mapped_column(Integer, index=True)  # no foreign key: the trail outlives rows
    detail_json: Mapped[str] = mapped_column(Text)
    prev_hash: Mapped[str] = mapped_column(String(64))
    hash: Mapped[str] = mapped_column(String(64))


class CaseTask(Base):
    """A user task of a case as "My tasks" lists it: one row per SpiffWorkflow task that was ever
    READY, kept in step with the engine in the same transaction (webapp.services.running.uow re-syncs it on
    every flush that changes a case's state). ``state``: ready | completed | cancelled. Dates are
    local calendar dates of the case's Panchayat; ``act_by`` is the earlier of the service-level
    ``due_on`` and the legal ``deadline_on`` (the list's order)."""

    __tablename__ = "case_task"
    __table_args__ = (
        UniqueConstraint("case_id", "task_id"),
        Index("ix_case_task_case_state", "case_id", "state"),
        Index("ix_case_task_scope", "panchayat_id", "state", "lane", "act_by"),
        Index("ix_case_task_receiver", "receiver_id", "state", "act_by"),
        Index("ix_case_task_claimed", "claimed_by", "state"),
        # the oversight pages: open tasks per Panchayat by stage with their cases (from the index
        # alone), and those past a legal deadline (0025_oversight, 0026_oversight_tasks)
        Index("ix_case_task_oversight", "panchayat_id", "state", "element_id", "case_id", "deadline_on"),
    )
    id: Mapped[int] = mapped_column(primary_key=True)
    case_id: Mapped[int] = mapped_column(ForeignKey("case_instance.id"))
    case_number: Mapped[str] = mapped_column(String(40))
    panchayat_id: Mapped[int] = mapped_column(ForeignKey("panchayat.id"))
    receiver_id: Mapped[int | None] = mapped_column(ForeignKey("app_user.id"))
    process_version_id: Mapped[int] = mapped_column(ForeignKey("process_version.id"))
    task_id: Mapped[str] = mapped_column(String(36))  # SpiffWorkflow task UUID
    element_id: Mapped[str] = mapped_column(String(100))  # the task spec's BPMN id
    title: Mapped[str] = mapped_column(String(200))
    lane: Mapped[str] = mapped_column(String(32))
    subject: Mapped[str | None] = mapped_column(String(200))  # the objector, appellant or buyer it concerns
    state: Mapped[str] = mapped_column(String(16))
    ready_since: Mapped[datetime] = mapped_column(UTCDateTime())
    due_on: Mapped[date | None] = mapped_column(Date)
    deadline_label: Mapped[str | None] = mapped_column(String(40))
    deadline_on: Mapped[date | None] = mapped_column(Date)
    act_by: Mapped[date | None] = mapped_column(Date)
    claimed_by: Mapped[int | None] = mapped_column(ForeignKey("app_user.id"))
    claimed_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    assigned_to: Mapped[int | None] = mapped_column(ForeignKey("app_user.id"))
    assigned_by: Mapped[int | None] = mapped_column(ForeignKey("app_user.id"))
    assigned_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    completed_by: Mapped[int | None] = mapped_column(ForeignKey("app_user.id"))
    escalated_at: Mapped[datetime | None] = mapped_column(UTCDateTime())  # escalated to the sarpanch (overdue)


class ProcessVersionFile(Base):
    """A file of a deployed version exactly as deployed (the BPMN and each form), for download."""

    __tablename__ = "process_version_file"
    __table_args__ = (UniqueConstraint("process_version_id", "path"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    process_version_id: Mapped[int] = mapped_column(ForeignKey("process_version.id"), index=True)
    path: Mapped[str] = mapped_column(String(200))  # e.g. rule130.bpmn, forms/record_bid.schema.json
    content: Mapped[bytes] = mapped_column(LargeBinary)
    sha256: Mapped[str] = mapped_column(String(64))


class ProcessAudit(Base):
    """The process-level audit trail: deploys, redeploys and cases moved between versions."""

    __tablename__ = "process_audit"
    id: Mapped[int] = mapped_column(primary_key=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)
    process_id: Mapped[str] = mapped_column(String(100), index=True)
    action: Mapped[str] = mapped_column(String(16))  # deploy | redeploy | move
    actor: Mapped[str] = mapped_column(String(80))
    version_from: Mapped[int | None] = mapped_column(Integer)
    version_to: Mapped[int | None] = mapped_column(Integer)
    case_id: Mapped[int | None] = mapped_column(ForeignKey("case_instance.id"), index=True)
    note: Mapped[str] = mapped_column(Text, default="")
    detail_json: Mapped[str] = mapped_column(Text, default="{}")


class CaseDocument(Base):
    """A document of a case exactly as issued, in one language: the notice of clause (a), the sale
    receipt of (b), an order on an objection (c), a delivery order ((c) Explanation, (d)), the
    remittance acknowledgement ((b) proviso). ``html`` is the issued text, never changed;
    ``sha256`` is the SHA-256 (hex) of its UTF-8 bytes. ``key`` names the act within the case
    (``notice``, ``sale_receipt:1``, ``objection_order:2`` ...); each key is issued once per language."""

    __tablename__ = "case_document"
    __table_args__ = (UniqueConstraint("case_id", "key", "language"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    case_id: Mapped[int] = mapped_column(ForeignKey("case_instance.id"), index=True)
    key: Mapped[str] = mapped_column(String(40))
    kind: Mapped[str] = mapped_column(String(32))
    number: Mapped[str] = mapped_column(String(60))  # e.g. RMP/2026/0001/R1, the same in both languages
    language: Mapped[str] = mapped_column(String(8))  # en | hi
    title: Mapped[str] = mapped_column(String(200))  # in the document's language
    clause: Mapped[str] = mapped_column(String(100))
    issued_at: Mapped[datetime] = mapped_column(UTCDateTime())
    issued_by: Mapped[int | None] = mapped_column(ForeignKey("app_user.id"))
    html: Mapped[str] = mapped_column(Text)
    sha256: Mapped[str] = mapped_column(String(64))
    # Set once, by a correction of the act that issued it (webapp.services.cases.corrections): the text,
    # number and hash stay as issued; the document is shown and printed with the word CANCELLED,
    # the reason and the day. A document issued again after a correction has the key ``<key>#<n>``.
    cancelled_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    cancelled_by: Mapped[int | None] = mapped_column(ForeignKey("app_user.id"))
    cancel_reason: Mapped[str | None] = mapped_column(Text)
    # produced when a running paper case was brought in (migration 0022), for an act recorded on
    # paper: ``number`` is then the paper's own number, and the text says "entered from the paper file"
    from_paper: Mapped[bool] = mapped_column(default=False, server_default=false())


class PaperReceipt(Base):
    """A paper receipt of money received in a case brought in from the paper file (issue 31, item
    2): its own number as written on the paper (``number``; ``number_key`` is its upper-case form
    without spaces, unique in the Panchayat, so that no two receipts and no issued document share a
    number), the rupees, the instant on the paper, and the ledger entry the replay posted for it."""

    __tablename__ = "paper_receipt"
    __table_args__ = (UniqueConstraint("panchayat_id", "number_key"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    case_id: Mapped[int] = mapped_column(ForeignKey("case_instance.id"), index=True)
    panchayat_id: Mapped[int] = mapped_column(ForeignKey("panchayat.id"))
    number: Mapped[str] = mapped_column(String(60))
    number_key: Mapped[str] = mapped_column(String(60))
    amount: Mapped[Decimal] = mapped_column(Numeric(14, 2))
    received_at: Mapped[datetime] = mapped_column(UTCDateTime())
    kind: Mapped[str] = mapped_column(String(40))  # the ledger entry's kind: auction_money, security ...
    ledger_entry_id: Mapped[int] = mapped_column(ForeignKey("ledger_entry.id"), unique=True)
    entered_by: Mapped[int] = mapped_column(ForeignKey("app_user.id"))
    entered_at: Mapped[datetime] = mapped_column(UTCDateTime())


class CaseAct(Base):
    """An act an officer recorded on a case (a task completed, an objection or appeal filed, a
    death, escape or birth), with what the case was just before it, so that a clerical mistake can
    be corrected (webapp.services.cases.corrections; RULE130.md "Correcting a clerical mistake").

    ``before`` is the case row as the act found it (engine state, case file, status, outcome, the
    list columns), as zlib-compressed JSON; None once the act can no longer be corrected nor
    amended (webapp.services.jobs.snapshots: from the day after its last day for a corrigendum). ``marks_json`` holds the highest ids of the case's
    history rows, ledger entries, documents and task rows, and of all notifications, before the
    act: the rows above them, up to ``last_event_id`` in the history, are the act's. ``at`` is
    the act's one instant (UTC). Set once by a correction: ``corrected_at``, ``corrected_by``,
    ``correction_reason``, ``correction_event_id``."""

    __tablename__ = "case_act"
    __table_args__ = (Index("ix_case_act_case", "case_id", "id"),
                      # the acts that still keep their snapshot, by instant (webapp.services.jobs.snapshots)
                      Index("ix_case_act_snapshot", "at", postgresql_where=text("before IS NOT NULL"),
                            sqlite_where=text("before IS NOT NULL")))
    id: Mapped[int] = mapped_column(primary_key=True)
    case_id: Mapped[int] = mapped_column(ForeignKey("case_instance.id"))
    at: Mapped[datetime] = mapped_column(UTCDateTime())
    name: Mapped[str] = mapped_column(String(200))  # as the history names it, e.g. "Record bid"
    element_id: Mapped[str | None] = mapped_column(String(100))
    actor_user_id: Mapped[int | None] = mapped_column(ForeignKey("app_user.id"))
    actor_role: Mapped[str | None] = mapped_column(String(32))
    process_version_id: Mapped[int] = mapped_column(ForeignKey("process_version.id"))
    before: Mapped[bytes | None] = mapped_column(LargeBinary)  # None once let go (0027_snapshot_lifetime)
    marks_json: Mapped[str] = mapped_column(Text)
    last_event_id: Mapped[int | None] = mapped_column(Integer)
    corrected_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    corrected_by: Mapped[int | None] = mapped_column(ForeignKey("app_user.id"))
    correction_reason: Mapped[str | None] = mapped_column(Text)
    correction_event_id: Mapped[int | None] = mapped_column(Integer)



class ReplayScope(Base):
    """A case whose history rows and documents a corrigendum's replay may delete, inside a savepoint
    that is always rolled back (webapp.store.append_only.replaying): never a committed row."""

    __tablename__ = "replay_scope"
    case_id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)

Row = TypeVar("Row", bound=Base)


def get_row(session: Session, model: type[Row], key: Any) -> Row:
    """The row of ``model`` with primary key ``key``, which a foreign key or the caller's own earlier
    read guarantees (the Panchayat of a case, the user of a session). Raises LookupError naming the
    table and key when it is not there: a defect, never an officer's mistake."""
    found = session.get(model, key)
    if found is None:
        raise LookupError(f"no {model.__tablename__} row {key!r}")
    return found
