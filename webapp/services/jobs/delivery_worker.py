"""The notification delivery loop: due "deadline near" notices sent, then due deliveries made.

It runs in a thread of ``rule130 serve`` and of the timer worker, or alone (``rule130 notify-worker``
or the like: :mod:`webapp.cli`); what a delivery is and how it is made is
:mod:`webapp.services.notify.deliveries`'s, the reminders :mod:`webapp.services.jobs.reminders`'s.
"""

from __future__ import annotations

import logging
import threading

from sqlalchemy.orm import Session, sessionmaker

from webapp.services.jobs import reminders
from webapp.services.notify import channels, deliveries
from webapp.values import clock

log = logging.getLogger("rule130.notify")


def run_loop(sessions: sessionmaker[Session], settings: channels.ChannelSettings, stop: threading.Event, *,
             max_sleep: float = 5.0) -> None:
    """Send due "deadline near" notices (:func:`.reminders.remind_due`) and deliver until ``stop`` is
    set; sleep until the next due attempt (at most ``max_sleep`` s).

    Several loops may run at once (each claim is a compare-and-set); database errors are logged and
    retried on the next pass. The loop never reads the clock ahead of the wall clock
    (:class:`webapp.values.clock.NotAheadOfRealTime`): no reminder is sent before its instant.
    """
    with clock.installed(clock.NotAheadOfRealTime(clock.current())):
        _loop(sessions, settings, stop, max_sleep)


def _loop(sessions: sessionmaker[Session], settings: channels.ChannelSettings, stop: threading.Event,
          max_sleep: float) -> None:
    """:func:`run_loop` on the clock it installed."""
    log.info("notification delivery started")
    while not stop.is_set():
        try:
            reminders.remind_due(sessions)
            deliveries.deliver_due(sessions, settings)
            upcoming = deliveries.next_attempt(sessions)
        except Exception:  # the database away for a moment must not end the loop
            log.exception("notification delivery pass failed; retrying")
            upcoming = None
        wait = max_sleep
        if upcoming is not None:
            wait = min(max_sleep, max(0.05, (upcoming - clock.now()).total_seconds()))
        stop.wait(wait)
    log.info("notification delivery stopped")


def start_thread(sessions: sessionmaker[Session], settings: channels.ChannelSettings,
                 stop: threading.Event) -> threading.Thread:
    """Run :func:`run_loop` in a daemon thread (the timer worker and ``rule130 serve`` do this)."""
    thread = threading.Thread(target=run_loop, args=(sessions, settings, stop), name="rule130-delivery",
                              daemon=True)
    thread.start()
    return thread
