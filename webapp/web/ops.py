"""Operations: a health check of the database and the timer worker's lag (no log-in, no case data)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, jsonify
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from webapp.services.jobs import timers
from webapp.values import clock
from webapp.web.context import db_session

bp = Blueprint("ops", __name__)
LAG_LIMIT_SECONDS = 60.0


@bp.get("/health")
def health() -> Any:
    """200 ``{"status": "ok", ...}`` when the database answers and no timer is overdue by more than a
    minute; 503 ``{"status": "degraded" | "down", ...}`` otherwise (for a load balancer or monitor)."""
    try:
        db_session().execute(text("SELECT 1"))
        count, lag = timers.overdue(db_session(), clock.now())
    except SQLAlchemyError:
        return jsonify({"status": "down", "database": "unreachable"}), 503
    status = "ok" if lag <= LAG_LIMIT_SECONDS else "degraded"
    body = {"status": status, "database": "ok", "overdue_cases": count, "oldest_timer_lag_seconds": round(lag, 3)}
    return jsonify(body), 200 if status == "ok" else 503
