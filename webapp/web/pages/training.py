"""The training Panchayat in the browser: its own clock for every request of its officers, the
TRAINING band on every page, and the page that moves its clock (:mod:`webapp.services.panchayats.training`).

An officer of a training Panchayat works on its clock: each request's legal instant (fixed on
arrival, :mod:`.act_instant`) is read the Panchayat's clock offset ahead, so deadlines, acts,
documents and the timers a request fires all see the training clock. The clock page moves it "to
the next timer" or "by N days" through a check step (the timers that will fall due, then Confirm),
never backwards. Works without JavaScript.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from flask import Blueprint, Flask, g, redirect, render_template, request, url_for

from webapp.errors import Refused, Rule130Error
from webapp.i18n import M_, MN_, flash_message
from webapp.i18n.formats import format_instant
from webapp.services.panchayats import training
from webapp.store.models import Case, Panchayat, User
from webapp.values import clock
from webapp.web.access.auth import signed_in_user
from webapp.web.context import db_session, login_required, sessions

bp = Blueprint("training", __name__)
_CLOCK_KEY = "_training_clock"


def use_clock_of(user: User | None) -> Panchayat | None:
    """Read the request's instant on the clock of ``user``'s training Panchayat, if they work in
    one (for the rest of the request); the Panchayat, or None for an officer of a live one."""
    if user is None or "training_panchayat" in g:
        known: Panchayat | None = g.get("training_panchayat")
        return known
    panchayat = training.of_user(db_session(), user)
    g.training_panchayat = panchayat
    if panchayat is not None and panchayat.clock_offset_seconds:
        installed = clock.installed(clock.FixedClock(clock.now() + training.offset(panchayat)))
        installed.__enter__()
        g.setdefault(_CLOCK_KEY, installed)
    return panchayat


def init_app(app: Flask) -> None:
    """Install the training clock for each signed-in officer's request, the band's context, and
    the clock page."""

    @app.before_request
    def _training_clock() -> None:
        if request.endpoint != "static" and not request.path.startswith("/api/"):  # the API's user: api_request.py
            use_clock_of(signed_in_user())

    @app.teardown_request
    def _restore_clock(_exc: BaseException | None) -> None:
        installed = g.pop(_CLOCK_KEY, None)
        if installed is not None:
            installed.__exit__(None, None, None)

    @app.context_processor
    def _band() -> dict[str, Any]:
        panchayat = g.get("training_panchayat")
        if panchayat is not None:
            return {"training_panchayat": panchayat, "training_now": clock.now()}
        return {"training_panchayat": _case_training_panchayat(), "training_now": None}

    app.register_blueprint(bp)


def _case_training_panchayat() -> Panchayat | None:
    """The training Panchayat of the case a page shows (``case_id`` in its address), for someone
    who is not its officer (an installation administrator): the page says TRAINING too."""
    case_id = (request.view_args or {}).get("case_id")
    if not isinstance(case_id, int):
        return None
    try:
        session = db_session()
        case = session.get(Case, case_id)
        panchayat = session.get(Panchayat, case.panchayat_id) if case is not None else None
    except Exception:  # the band must never turn a page (or an error page) into a 500
        return None
    return panchayat if panchayat is not None and panchayat.training else None


def _me() -> User:
    user = signed_in_user()
    assert user is not None  # login_required
    return user


@bp.route("/training/clock", methods=["GET"])
@login_required
def clock_page() -> Any:
    """The training clock: what it reads, the next timer, and the form to move it."""
    panchayat = use_clock_of(_me())
    if panchayat is None:
        return render_template("training/not_training.html"), 404
    return render_template("training/clock.html", panchayat=panchayat, now=clock.now(),
                           next_timer=training.next_timer(db_session(), panchayat), errors={}, days="")


@bp.route("/training/clock", methods=["POST"])
@login_required
def move() -> Any:
    """Step 1 (``step=check``): what the move will do. Step 2 (``step=confirm`` with the target
    instant shown): move the clock and fire the timers then due."""
    me = _me()
    panchayat = use_clock_of(me)
    if panchayat is None:
        return render_template("training/not_training.html"), 404
    session = db_session()
    if request.form.get("step") == "confirm":
        try:
            target = datetime.fromisoformat(request.form.get("to", ""))
            if target.tzinfo is None:
                raise ValueError
        except ValueError:
            flash_message(M_("the move was not understood; choose how far to move the clock again"), "error")
            return redirect(url_for("training.clock_page"))
        session.close()
        try:
            moved = training.move_clock(sessions(), me, target)
        except Rule130Error as error:
            flash_message(error.message, "error")
            return redirect(url_for("training.clock_page"))
        flash_message(M_("The training clock now reads %(to)s.",
                         to=format_instant(moved.moved_to, panchayat.timezone)), "success")
        for number, fired in moved.fired:
            flash_message(MN_("%(case)s: %(num)s timer fired.", "%(case)s: %(num)s timers fired.",
                              case=number, num=len(fired)), "follow")
        return redirect(url_for("training.clock_page"))
    days = request.form.get("days", "").strip()
    try:
        plan = training.plan_move(session, me, days=days or None,
                                  to_next_timer=request.form.get("how") == "next_timer")
    except Refused as refused:
        return render_template("training/clock.html", panchayat=panchayat, now=clock.now(),
                               next_timer=training.next_timer(session, panchayat), errors=refused.field_errors,
                               error=refused.message, then=refused.then, days=days), 422
    return render_template("training/check.html", panchayat=panchayat, plan=plan)
