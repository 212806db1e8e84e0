"""Deadline races: acts at the last millisecond of each legal window against the firing timer.

Run from the repository root (not part of the unit suite; tests/test_act_instant.py runs a few):

    .venv/bin/python tests/bench/races.py --races 200                 # SQLite and PostgreSQL
    .venv/bin/python tests/bench/races.py --races 50 --store sqlite --window auction

Each race (tests/deadline_races.py) carries a new case to the end of a window (release, auction,
objection, appeal, return), then sends the officer's act through the JSON API arriving within the
window's last millisecond while a timer worker, its clock just past the end, fires the window's
timer. ``raw`` races run the worker with no settle time (the two really race: either may win);
``settled`` ones with the product's default (the worker stays behind the clock). Printed per
window, store and mode: races, how often the act won (2xx) and the timer won (refused), and the
races whose answer disagreed with the case (must be 0). Exit 1 when any disagreed.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from timer_lag import fresh_database

from tests import deadline_races
from webapp import create_app
from webapp.services.diagrams import repository
from webapp.services.jobs import timers
from webapp.services.people import users
from webapp.store import db

POSTGRES = "postgresql://postgres@127.0.0.1:5432/test"
FAST_HASH = "pbkdf2:sha256:1000"


def world(url: str):
    """Sessions, officers, a Flask app and API tokens on a migrated database at ``url``."""
    engine = db.make_engine(url)
    sessions = db.session_factory(engine)
    with sessions() as session:
        repository.deploy_bundled(session, "races")
        users.create_panchayat(session, "RMP", "Rampura", "SAM1", district="Jaipur")
        officers = {role: users.create_user(session, name, "kanji-house race bench 130", role, display_name=name,
                                            panchayat_code="RMP", password_method=FAST_HASH)
                    for role, name in (("pound_keeper", "pk"), ("secretary", "sec"), ("sarpanch", "sar"))}
        session.commit()
    app = create_app({"TESTING": True, "DATABASE_URL": url, "SECRET_KEY": "races", "WTF_CSRF_ENABLED": False})
    return engine, sessions, officers, app, deadline_races.make_tokens(sessions, officers)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--races", type=int, default=200, help="races per window, store and mode")
    parser.add_argument("--store", choices=("sqlite", "postgresql", "both"), default="both")
    parser.add_argument("--window", choices=deadline_races.WINDOWS, action="append")
    parser.add_argument("--mode", choices=("raw", "settled"), action="append")
    parser.add_argument("--seed", type=int, default=130)
    args = parser.parse_args()
    stores = ("sqlite", "postgresql") if args.store == "both" else (args.store,)
    windows, modes = args.window or deadline_races.WINDOWS, args.mode or ("raw", "settled")
    rng = random.Random(args.seed)
    print(f"{'window':<10} {'store':<11} {'mode':<8} {'races':>5} {'act won':>8} {'timer won':>9} "
          f"{'disagree':>8} {'seconds':>8}")
    bad = 0
    for store in stores:
        url, drop = fresh_database(POSTGRES if store == "postgresql" else None)
        engine, sessions, officers, app, tokens = world(url)
        try:
            for kind in windows:
                for mode in modes:
                    settle = 0.0 if mode == "raw" else timers.SETTLE_SECONDS
                    started = time.monotonic()
                    results = [deadline_races.race(app, sessions, officers, tokens, kind, settle=settle, rng=rng)
                               for _ in range(args.races)]
                    won = sum(1 for r in results if 200 <= r.status < 300)
                    wrong = [r for r in results if r.problems]
                    bad += len(wrong)
                    print(f"{kind:<10} {store:<11} {mode:<8} {len(results):>5} {won:>8} {len(results) - won:>9} "
                          f"{len(wrong):>8} {time.monotonic() - started:>8.1f}", flush=True)
                    for r in wrong[:3]:
                        print(f"    {r.status}: {'; '.join(r.problems)}", flush=True)
        finally:
            app.extensions["rule130.engine"].dispose()
            engine.dispose()
            drop()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
