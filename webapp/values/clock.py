"""The product's one clock.

Every "now" in the product comes from :func:`now`. The web application and the timer worker use
the system clock; the case simulator and tests install a :class:`VirtualClock` so that legal
deadlines, ledger entries and SpiffWorkflow's timer evaluation all see the same instant
(SpiffWorkflow reads ``datetime.now`` itself; :mod:`webapp.engine.timers` points it here).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """Return the current instant, offset-aware, in UTC."""


class SystemClock:
    """The wall clock: ``datetime.now(timezone.utc)``."""

    def now(self) -> datetime:
        return datetime.now(UTC)


class VirtualClock:
    """A clock that stands still until moved; used by the simulator and tests.

    Args:
        start: the first instant; must be offset-aware.
    Raises:
        ValueError: a naive datetime.
    """

    def __init__(self, start: datetime) -> None:
        self._now = _aware(start)

    def now(self) -> datetime:
        return self._now

    def set(self, instant: datetime) -> None:
        """Move to ``instant`` (offset-aware). The simulator may step back by a microsecond after
        firing a timer just past its due instant, to check an act at that exact instant."""
        self._now = _aware(instant)

    def advance(self, delta: timedelta) -> None:
        self.set(self._now + delta)


class OffsetClock:
    """The wall clock shifted by a fixed offset: time runs at real speed from a chosen instant.

    For tests and benchmarks of the timer worker against real elapsed time (e.g. a few seconds
    before a local midnight, when the legal periods' timers fall due).

    Args:
        start: the instant the clock reads now (offset-aware).
    """

    def __init__(self, start: datetime) -> None:
        self.offset = timedelta(0)
        self.set(start)

    def now(self) -> datetime:
        return datetime.now(UTC) + self.offset

    def set(self, instant: datetime) -> None:
        """From now on read ``instant`` plus the real time elapsed since this call."""
        self.offset = _aware(instant) - datetime.now(UTC)


class FixedClock:
    """A clock that reads one instant: the legal instant of one act (see :func:`fixed`).

    Args:
        instant: the instant (offset-aware).
    Raises:
        ValueError: a naive datetime.
    """

    def __init__(self, instant: datetime) -> None:
        self._now = _aware(instant)

    def now(self) -> datetime:
        return self._now


class LaggingClock:
    """Another clock read ``lag`` behind: the timer worker's clock (see
    :func:`webapp.services.jobs.timers.run_worker`), so that an act whose request arrived before a
    deadline, and is still being applied, is applied before the deadline's timer fires.

    Args:
        base: the clock to follow. lag: how far behind (a non-negative timedelta).
    """

    def __init__(self, base: Clock, lag: timedelta) -> None:
        self.base, self.lag = base, lag

    def now(self) -> datetime:
        return self.base.now() - self.lag


class ShiftedClock:
    """Another clock read ``offset`` ahead: a training Panchayat's own clock
    (:func:`webapp.services.panchayats.training.clock_for`), the real clock moved forward by the trainer.

    Args:
        base: the clock to follow. offset: how far ahead (a timedelta; a training clock's is never
            negative, :func:`webapp.services.panchayats.training.move_clock`).
    """

    def __init__(self, base: Clock, offset: timedelta) -> None:
        self.base, self.offset = base, offset

    def now(self) -> datetime:
        return self.base.now() + self.offset


class NotAheadOfRealTime:
    """Another clock, never read ahead of the wall clock: ``min(base.now(), the system clock)``.

    The long-running timer worker and the delivery loop read through it
    (:func:`webapp.services.jobs.timers.run_worker`, :func:`webapp.services.jobs.delivery_worker.run_loop`), so
    that in a live database no timer fires, and no reminder is sent, before its instant on the real
    clock, whatever clock the thread was given (a virtual clock installed by mistake moves nothing
    early; one behind the wall clock, as the tests and the demo use, is read as it is).

    Args:
        base: the clock to follow while it is not ahead of the wall clock.
    """

    def __init__(self, base: Clock) -> None:
        self.base = base

    def now(self) -> datetime:
        return min(self.base.now(), datetime.now(UTC))


def _aware(instant: datetime) -> datetime:
    if instant.tzinfo is None or instant.utcoffset() is None:
        raise ValueError(f"a naive datetime is not an instant: {instant!r}")
    return instant.astimezone(UTC)


SYSTEM = SystemClock()  # the real clock, stateless: one for every context
_current: contextvars.ContextVar[Clock] = contextvars.ContextVar("rule130_clock", default=SYSTEM)


def now() -> datetime:
    """The current instant from the installed clock (UTC, offset-aware)."""
    return _current.get().now()


def current() -> Clock:
    return _current.get()


@contextlib.contextmanager
def installed(clock: Clock) -> Iterator[Clock]:
    """Install ``clock`` for the current context (thread or task) while the block runs."""
    token = _current.set(clock)
    try:
        yield clock
    finally:
        _current.reset(token)


@contextlib.contextmanager
def fixed(instant: datetime | None = None) -> Iterator[datetime]:
    """Fix "now" for the block: every :func:`now` inside it reads one instant (RULE130.md,
    "One instant per act"): the legal instant of an act, used for every deadline check it makes,
    stamped on it, on its documents and its ledger entries, and the instant up to which the
    engine fires timers while it is applied.

    Args:
        instant: the instant to fix (offset-aware); None: the installed clock's now. Inside a block
            already fixed, the outer instant stays (an act is judged at one instant however many
            units of work it runs), and ``instant`` is ignored.
    Yields:
        the fixed instant (UTC).
    Raises:
        ValueError: a naive datetime.
    """
    outer = _current.get()
    if isinstance(outer, FixedClock):
        yield outer.now()
        return
    with installed(FixedClock(outer.now() if instant is None else instant)) as fixed_clock:
        yield fixed_clock.now()


def install(clock: Clock) -> None:
    """Install ``clock`` for the rest of the current context."""
    _current.set(clock)
