"""The training Panchayat (issue 21, item 1): TRN- case numbers, the TRAINING band, its own clock
moved from the browser through a check step (audited, never backwards), the timers then due fired
at the training clock by the page and by the worker, no e-mail or webhook, nothing on the public
board, the reset, and a live Panchayat beside it untouched."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from click.testing import CliRunner
from sqlalchemy import func, select

from webapp.cli import main
from webapp.services.jobs import timers
from webapp.services.notify import notifications
from webapp.services.panchayats import training
from webapp.store.models import (
    AuditEntry,
    Case,
    CaseDocument,
    CaseEvent,
    Delivery,
    Notification,
    NotificationPreference,
    Panchayat,
    User,
)

from .conftest import FAST_HASH, PASSWORD
from .test_web_pages import (
    ANIMALS,
    IMPOUNDED,
    at,
    complete,
    confirm_check,
    element_text,
    login,
    start_case_on_page,
    task_link,
    text_of,
)


def make_training(sessions) -> None:
    """Training Panchayat TRN1 with its trainees (``trn1-keeper`` …), as ``rule130 training`` makes
    it, every password PASSWORD."""
    with sessions() as session:
        training.create(session, "TRN1", "Training Panchayat", PASSWORD, password_method=FAST_HASH)
        session.commit()


def start_training_case(client, virtual_clock) -> int:
    virtual_clock.set(at("2026-01-05T10:05:00+05:30"))
    login(client, "trn1-keeper")
    form = {"impounded_at": IMPOUNDED, "place_seized": "Practice field", "place_impounded": "Practice pound",
            "nearest_village": "Practice village"}
    for n, (species, description, tag) in enumerate(ANIMALS, start=1):
        form.update({f"species-{n}": species, f"description-{n}": description, f"tag-{n}": tag})
    response = client.post("/cases/new", data=form)
    assert response.status_code == 302, text_of(response)
    return int(response.headers["Location"].rstrip("/").split("/")[-1])


def move(client, **form: str):
    """The clock page's form sent (the check page), then its Confirm pressed."""
    check = client.post("/training/clock", data={"step": "check", **form})
    assert check.status_code == 200, text_of(check)
    return check, confirm_check(client, check)


def test_a_training_case_is_numbered_apart_and_every_page_says_training(client, sessions, virtual_clock):
    make_training(sessions)
    case_id = start_training_case(client, virtual_clock)
    with sessions() as session:
        assert session.get(Case, case_id).case_number == "TRN-TRN1/2026/0001"
    page = client.get(f"/cases/{case_id}")
    assert element_text(page, "training-band").startswith(
        "TRAINING — Training Panchayat is a training Panchayat: nothing here is a real case, order or receipt.")
    assert "TRAINING" in element_text(client.get("/tasks"), "training-band")
    # a live Panchayat's officer sees no band, and its case numbers are as before
    live = start_case_on_page(client, virtual_clock)
    with sessions() as session:
        assert session.get(Case, live).case_number == "RMP/2026/0001"
    assert 'id="training-band"' not in client.get("/tasks").get_data(as_text=True)
    assert client.get("/training/clock").status_code == 404


def test_the_clock_moves_through_a_check_step_fires_what_falls_due_and_leaves_the_live_panchayat_alone(
        client, sessions, virtual_clock):
    make_training(sessions)
    live = start_case_on_page(client, virtual_clock)  # RMP, impounded 2026-01-05 10:00 IST
    case_id = start_training_case(client, virtual_clock)  # TRN1, the same instant
    virtual_clock.set(at("2026-01-05T12:00:00+05:30"))
    page = client.get("/training/clock")
    assert element_text(page, "training-now") == "Monday, 5 January 2026 12:00"
    assert element_text(page, "training-next") == "Next timer: Friday, 9 January 2026 00:00"  # the 3-day release window ends with 8 Jan

    check = client.post("/training/clock", data={"step": "check", "how": "next_timer"})
    assert element_text(check, "check-to") == "Friday, 9 January 2026 00:00"
    assert element_text(check, "check-follows") == (
        "TRN-TRN1/2026/0001: a timer due Friday, 9 January 2026 00:00 fires")
    with sessions() as session:  # the check step moved nothing
        assert session.scalar(select(Panchayat.clock_offset_seconds).where(Panchayat.code == "TRN1")) == 0
    done = confirm_check(client, check)
    assert done.status_code == 302
    with sessions() as session:
        trn = session.scalar(select(Panchayat).where(Panchayat.code == "TRN1"))
        # to one second past the window's end (2026-01-09 00:00 IST: the 3 days after the day of impoundment) from 12:00 IST
        assert timedelta(seconds=trn.clock_offset_seconds) == (at("2026-01-09T00:00:01+05:30")
                                                               - at("2026-01-05T12:00:00+05:30"))
        fired = [e.element_id for e in session.scalars(select(CaseEvent).where(
            CaseEvent.case_id == case_id, CaseEvent.kind == "timer"))]
        assert fired == ["bt_release_window"]
        assert session.scalars(select(CaseEvent).where(CaseEvent.case_id == live,
                                                       CaseEvent.kind == "timer")).all() == []
        [moved] = session.scalars(select(AuditEntry).where(AuditEntry.kind == "training.clock_moved")).all()
        assert moved.actor == "trn1-keeper" and '"panchayat":"TRN1"' in moved.detail_json
    # the trainee secretary now has the notice to publish, on the training clock's day
    login(client, "trn1-secretary")
    assert task_link(client, "Publish notice")
    assert "Friday, 9 January 2026 00:00" in element_text(client.get("/tasks"), "training-band")
    # the live secretary has nothing new: the release window of RMP's case still runs
    login(client, "sec")
    assert "Publish notice" not in text_of(client.get("/tasks"))


def test_the_training_clock_never_moves_backwards_and_refuses_bad_days(client, sessions, virtual_clock):
    make_training(sessions)
    start_training_case(client, virtual_clock)
    refused = client.post("/training/clock", data={"step": "check", "how": "days", "days": "0"})
    assert refused.status_code == 422
    assert "the clock moves by a whole number of days from 1 to 400, not '0'" in text_of(refused)
    check = client.post("/training/clock", data={"step": "check", "how": "days", "days": "२"})  # Devanagari 2
    assert element_text(check, "check-to") == "Wednesday, 7 January 2026 10:05"
    _, done = move(client, how="days", days="5")
    assert done.status_code == 302
    stale = confirm_check(client, check)  # the older check page (to 7 Jan) is now in the past
    assert stale.status_code == 302
    page = client.get("/training/clock")
    assert "it moves only forward" in text_of(page)
    with sessions() as session:
        trn = session.scalar(select(Panchayat).where(Panchayat.code == "TRN1"))
        assert trn.clock_offset_seconds == 5 * 86400
        assert session.scalar(select(func.count()).select_from(AuditEntry)
                              .where(AuditEntry.kind == "training.clock_moved")) == 1


@pytest.mark.both_databases
def test_the_worker_fires_training_timers_at_the_training_clock_and_live_ones_at_the_real_one(
        client, sessions, virtual_clock):
    make_training(sessions)
    live = start_case_on_page(client, virtual_clock)
    trn = start_training_case(client, virtual_clock)
    with sessions() as session:
        session.scalar(select(Panchayat).where(Panchayat.code == "TRN1")).clock_offset_seconds = 4 * 86400
        session.commit()
    virtual_clock.set(at("2026-01-06T10:00:00+05:30"))  # 1 day later on the real clock, 5 on the training one
    fired = timers.fire_due_cases(sessions)
    assert [(f.case_id, f.timers) for f in fired] == [(trn, ("bt_release_window",))]
    with sessions() as session:
        assert session.get(Case, live).next_timer_due == at("2026-01-09T00:00:00+05:30")
        training_next = session.get(Case, trn).next_timer_due  # its notice task's overdue timer
    # the worker sleeps until the next timer on the real clock: a training timer's instant less its offset
    assert training_next is not None
    assert timers.next_due(sessions) == min(training_next - timedelta(days=4), at("2026-01-09T00:00:00+05:30"))


def test_training_notifications_stay_in_the_inbox_and_training_notices_stay_off_the_public_board(
        client, sessions, virtual_clock):
    make_training(sessions)
    with sessions() as session:
        secretary = session.scalar(select(User).where(User.username == "trn1-secretary"))
        session.add(NotificationPreference(user_id=secretary.id, email_enabled=True,
                                           email_address="secretary@example.org", webhook_enabled=True,
                                           webhook_url="https://example.org/hook", updated_at=at("2026-01-01T00:00:00+00:00")))
        session.commit()
    case_id = start_training_case(client, virtual_clock)
    move(client, how="next_timer")  # the notice task: the secretary is told
    login(client, "trn1-secretary")
    assert "TRN-TRN1/2026/0001" in text_of(client.get("/inbox"))
    with sessions() as session:
        assert session.scalar(select(func.count()).select_from(Delivery)) == 0
    complete(client, task_link(client, "Publish notice"), objection_period_days="30", full_price="12000")
    with sessions() as session:
        assert session.get(Case, case_id).notice_last_day is not None
    assert "TRN-TRN1/2026/0001" in text_of(client.get("/board"))  # to its own officers, marked
    client.post("/logout")
    assert "TRN-TRN1/2026/0001" not in text_of(client.get("/board"))  # never to the public
    assert client.get(f"/board/{case_id}").status_code == 404


def test_a_reset_puts_the_cases_away_and_starts_afresh_on_the_real_clock(client, sessions, virtual_clock):
    make_training(sessions)
    first = start_training_case(client, virtual_clock)
    move(client, how="days", days="10")

    def secretarys_inbox() -> tuple[list[int | None], int]:
        with sessions() as session:
            secretary = session.scalar(select(User).where(User.username == "trn1-secretary"))
            return ([n.case_id for n in notifications.inbox(session, secretary)],
                    notifications.unread_count(session, secretary))

    told, unread = secretarys_inbox()
    assert first in told and unread >= 1  # "Publish notice" for the secretary, once the window closed
    result = CliRunner().invoke(main, ["training", "TRN1", "--reset", "--database",
                                       str(sessions.kw["bind"].url.render_as_string(hide_password=False))])
    assert result.exit_code == 0, result.output
    assert "training Panchayat TRN1 started afresh" in result.output
    login(client, "trn1-keeper")
    assert "TRN-TRN1/2026/0001" not in text_of(client.get("/cases"))
    assert client.get(f"/cases/{first}").status_code == 404
    assert secretarys_inbox() == ([], 0)  # no notification about a put-away case, nor a dead link to it
    with sessions() as session:  # kept, not deleted
        assert session.scalar(select(func.count()).select_from(Notification).where(Notification.case_id == first)) >= 1
    second = start_training_case(client, virtual_clock)
    with sessions() as session:
        assert session.get(Case, second).case_number == "TRN-TRN1/2026/0002"  # numbers go on
        fresh = session.scalar(select(Panchayat).where(Panchayat.code == "TRN1"))
        assert fresh.clock_offset_seconds == 0 and fresh.archived_at is None
        old = session.get(Panchayat, session.get(Case, first).panchayat_id)
        assert old.archived_at is not None and old.code.startswith("TRN1~")
    # the old case fires nothing, whatever the clock
    virtual_clock.set(at("2026-03-01T10:00:00+05:30"))
    assert first not in [f.case_id for f in timers.fire_due_cases(sessions)]


def test_the_training_command_makes_trainees_and_refuses_a_live_code(sessions, officers):
    url = sessions.kw["bind"].url.render_as_string(hide_password=False)
    made = CliRunner().invoke(main, ["training", "TRN9", "--password", "practice makes perfect", "--database", url])
    assert made.exit_code == 0, made.output
    assert "trn9-secretary" in made.output and "trn9-appellate" in made.output
    again = CliRunner().invoke(main, ["training", "TRN9", "--database", url])
    assert again.output.strip() == "training Panchayat TRN9 already present"
    live = CliRunner().invoke(main, ["training", "RMP", "--database", url])
    assert live.exit_code == 2
    assert "Panchayat RMP is a live Panchayat" in live.output
    with sessions() as session:
        for username in ("trn9-appellate", "trn9-receiver"):
            trainee = session.scalar(select(User).where(User.username == username))
            assert trainee.samiti_code == "TRAINING-TRN9" and trainee.panchayat_id is None
            assert training.of_user(session, trainee).code == "TRN9"
        assert training.of_user(session, session.scalar(select(User).where(User.username == "sec"))) is None


def test_a_training_paper_says_training_at_its_head_and_foot_on_the_page_and_in_the_pdf(
        client, sessions, virtual_clock):
    from .test_documents import pdf_text

    make_training(sessions)
    case_id = start_training_case(client, virtual_clock)
    move(client, how="next_timer")
    login(client, "trn1-secretary")
    complete(client, task_link(client, "Publish notice"), objection_period_days="30", full_price="12000")
    with sessions() as session:
        rows = {row.language: row for row in session.scalars(
            select(CaseDocument).where(CaseDocument.case_id == case_id, CaseDocument.kind == "notice"))}
    assert rows["en"].html.count("TRAINING — not valid as an order or receipt") == 2
    assert rows["hi"].html.count("प्रशिक्षण — आदेश या रसीद के रूप में मान्य नहीं") == 2
    page = text_of(client.get(f"/cases/{case_id}/documents/{rows['en'].id}"))
    assert page.count("TRAINING — not valid as an order or receipt") == 2
    pdf = client.get(f"/cases/{case_id}/documents/{rows['en'].id}.pdf")
    assert pdf.status_code == 200
    assert pdf_text(pdf.data).count("TRAINING — not valid as an order or receipt") == 2
    # a live Panchayat's paper carries no such mark
    live = start_case_on_page(client, virtual_clock)
    with sessions() as session:
        assert session.scalar(select(func.count()).select_from(CaseDocument).where(
            CaseDocument.case_id == live, CaseDocument.html.contains("TRAINING"))) == 0


def test_an_administrator_reading_a_training_case_sees_the_band_too(client, sessions, virtual_clock):
    make_training(sessions)
    case_id = start_training_case(client, virtual_clock)
    live = start_case_on_page(client, virtual_clock)
    login(client, "admin")
    band = element_text(client.get(f"/cases/{case_id}"), "training-band")
    assert band == ("TRAINING — Training Panchayat is a training Panchayat: nothing here is a real case, "
                    "order or receipt.")  # no clock link: the administrator does not work on its clock
    assert 'id="training-band"' not in client.get(f"/cases/{live}").get_data(as_text=True)


def test_a_case_is_filled_from_a_scenario_at_a_stage_on_the_training_clock(client, sessions, virtual_clock):
    from webapp.simulation.scenario_file import ScenarioError
    from webapp.simulation.training_fill import fill
    from webapp.values import casefile

    make_training(sessions)
    url = sessions.kw["bind"].url.render_as_string(hide_password=False)
    scenario = "tests/scenarios/s2-objection-proved-after-sale.yaml"
    # the training clock reads 2026-01-05 10:00 IST; the scenario's 3rd step (the objection) is at
    # 2026-03-20 11:00 IST: 75 days earlier lands it on 2026-01-04 11:00, the last such day not after now
    filled = fill(url, "TRN1", scenario, through_step=3)
    assert (filled.case_number, filled.shifted_days) == ("TRN-TRN1/2025/0001", -75)  # numbered in the year of impoundment
    assert filled.open_tasks == (("sarpanch", "Decide ownership claim"),)
    with sessions() as session:
        case = session.scalar(select(Case).where(Case.case_number == "TRN-TRN1/2025/0001"))
        cf = casefile.load(case.file_json)
        assert cf.impounded_at == at("2025-12-17T08:30:00+05:30")  # 2026-03-02 08:30, 75 days earlier
        assert [o.objector for o in cf.objections] == ["Ramesh"]
        assert cf.sale is not None and cf.sale.amount == Decimal("21000.00")
    login(client, "trn1-sarpanch")
    assert task_link(client, "Decide ownership claim")
    try:
        fill(url, "RMP", scenario, through_step=1)
    except ScenarioError as error:
        assert "RMP is not a training Panchayat" in str(error)
    else:
        raise AssertionError("a live Panchayat was filled")
    with sessions() as session:
        assert session.scalar(select(func.count()).select_from(Case).join(Panchayat)
                              .where(Panchayat.code == "RMP")) == 0


def test_a_move_sends_the_deadline_near_notices_that_fall_due_on_the_way(client, sessions, virtual_clock):
    from webapp.store.models import Notification

    make_training(sessions)
    case_id = start_training_case(client, virtual_clock)
    move(client, how="next_timer")  # 2026-01-09 00:00:01 IST: the notice to publish
    login(client, "trn1-secretary")
    complete(client, task_link(client, "Publish notice"), objection_period_days="30", full_price="12000")
    with sessions() as session:
        alert_at = session.get(Case, case_id).next_alert_at
    assert alert_at is not None
    move(client, how="days", days="28")  # past the objection period's reminder, before its end
    with sessions() as session:
        near = [n.message for n in session.scalars(select(Notification).where(
            Notification.case_id == case_id, Notification.template == "deadline_near"))]
        # the clock reads 2026-02-06: the 6th, 7th and 8th of February are left (secretary and sarpanch told)
        assert [m for m in near if "objection period" in m] == 2 * [
            "TRN-TRN1/2026/0001: the last day of the objection period is Sunday, 8 February 2026 (days left, "
            "counting today: 3); no objection is entertained after it (Rule 130(a))."]
        assert session.get(Case, case_id).next_alert_at != alert_at


def test_a_reset_leaves_nothing_for_the_health_check_or_the_reminders_of_the_live_installation(
        client, sessions, virtual_clock):
    """A put-away training case keeps its record but waits on nothing: once the real clock passes
    the instants its timers and reminders had, the health check and the metrics count no overdue
    timer, and no pass of the timer worker or the reminders visits it."""
    from webapp.services.jobs import monitoring, reminders

    make_training(sessions)
    first = start_training_case(client, virtual_clock)
    move(client, how="next_timer")  # the notice to publish, its overdue timer armed
    login(client, "trn1-secretary")
    complete(client, task_link(client, "Publish notice"), objection_period_days="30", full_price="12000")
    with sessions() as session:
        case = session.get(Case, first)
        assert case.next_timer_due is not None and case.next_alert_at is not None
    CliRunner().invoke(main, ["training", "TRN1", "--reset", "--database",
                              str(sessions.kw["bind"].url.render_as_string(hide_password=False))])
    virtual_clock.set(at("2026-06-01T10:00:00+05:30"))  # past every instant the case waited for
    now = virtual_clock.now()
    with sessions() as session:
        assert timers.overdue(session, now) == (0, 0.0)
        assert monitoring.counts(session, now)["overdue"] == 0
        case = session.get(Case, first)
        assert case.status == "running" and case.next_timer_due is None and case.next_alert_at is None
    assert timers.fire_due_cases(sessions) == []
    assert reminders.remind_due(sessions) == []


def test_the_firings_a_move_makes_count_as_no_worker_lag(client, sessions, virtual_clock):
    """Moving the clock 4 days fires the release window 10 hours after its instant on the training
    clock: the history keeps that lateness, but the timer worker did not lag (the move fired it
    as the clock passed it), so the lag the administrators and Prometheus see is 0 s."""
    from webapp.services.jobs import monitoring
    from webapp.store.models import TimerFiring

    make_training(sessions)
    case_id = start_training_case(client, virtual_clock)  # 2026-01-05 10:05 IST
    move(client, how="days", days="4")  # to 2026-01-09 10:05 IST; the window ended at 00:00
    with sessions() as session:
        [firing] = session.scalars(select(TimerFiring).where(TimerFiring.case_id == case_id)).all()
        assert (firing.element_id, firing.lateness_seconds, firing.lag_seconds) == (
            "bt_release_window", 10 * 3600 + 5 * 60, 0.0)
        buckets, lag_sum, total = monitoring.timer_lag_histogram(session)
        assert (lag_sum, total, buckets[0]) == (0.0, 1, ("0.05", 1))


def test_the_reminders_pass_sends_a_training_case_its_notice_on_the_training_clock(client, sessions, virtual_clock):
    """The delivery loop's reminders pass reads a training Panchayat's clock for its cases (as the
    timer worker does): a "deadline near" notice falls due as the training clock passes it, while
    a live case's waits for the real clock."""
    from webapp.services.jobs import reminders
    from webapp.store.models import Notification

    make_training(sessions)
    live = start_case_on_page(client, virtual_clock)
    trn = start_training_case(client, virtual_clock)
    move(client, how="next_timer")  # the training clock: 2026-01-09 00:00:01 IST
    login(client, "trn1-secretary")
    complete(client, task_link(client, "Publish notice"), objection_period_days="30", full_price="12000")
    move(client, how="days", days="25")  # 2026-02-03 00:00:01 IST: the objection period runs to 8 February
    with sessions() as session:
        alert_at = session.get(Case, trn).next_alert_at
        offset = timedelta(seconds=session.scalar(select(Panchayat.clock_offset_seconds)
                                                  .where(Panchayat.code == "TRN1")))
    assert alert_at == at("2026-02-06T00:00:00+05:30")  # the 3 last days of the period, counting today

    def objection_near() -> list[str]:
        with sessions() as session:
            return [n.message for n in session.scalars(select(Notification).where(
                Notification.case_id == trn, Notification.template == "deadline_near"))
                if "objection period" in n.message]

    assert objection_near() == []
    virtual_clock.set(alert_at - offset - timedelta(seconds=1))  # the training clock a second before it
    assert reminders.remind_due(sessions) == []
    # the real clock moves to the instant at which the training clock reads the notice's instant
    virtual_clock.set(alert_at - offset + timedelta(seconds=1))
    assert virtual_clock.now() < at("2026-01-09T00:00:00+05:30")  # the live case's window still runs
    assert reminders.remind_due(sessions) == [trn]
    assert objection_near() == 2 * [  # the secretary and the sarpanch told
        "TRN-TRN1/2026/0001: the last day of the objection period is Sunday, 8 February 2026 (days left, "
        "counting today: 3); no objection is entertained after it (Rule 130(a))."]
    with sessions() as session:
        assert session.scalar(select(func.count()).select_from(Notification)
                              .where(Notification.case_id == live)) == 0


def test_the_trainee_receiving_officer_works_on_the_training_clock_and_live_and_training_cases_never_meet(
        client, sessions, officers, virtual_clock):
    """The trainee sarpanch sends unsold cattle to a receiving officer: a live one is refused, the
    trainee receiving officer is found, and works under the band on the training clock. A live
    sarpanch cannot name the trainee."""
    from .driver import TWO_COWS, Driver, ist_midnight, publish, refused

    make_training(sessions)
    drive = Driver(sessions, officers, virtual_clock)  # a live case of RMP, unsold on 2026-01-12
    drive.start(TWO_COWS)
    drive.fire_past(ist_midnight("2026-01-09"))
    publish(drive)
    drive.fire_past(ist_midnight("2026-01-12"))
    for name in ("trn1-receiver", "Trainee Receiving Officer"):
        refused(drive, drive.act, "sarpanch", "ut_decide_unsold", {"choice": "cattle_fair", "receiver": name},
                match=f"{name} is a receiving officer for training: a live case goes only to a live receiving officer")
    refused(drive, drive.act, "sarpanch", "ut_decide_unsold", {"choice": "cattle_fair", "receiver": "Nobody Known"},
            match="no receiving officer is called Nobody Known")

    virtual_clock.set(at("2026-01-05T10:05:00+05:30"))
    case_id = start_training_case(client, virtual_clock)
    move(client, how="next_timer")  # 2026-01-09: the notice to publish
    login(client, "trn1-secretary")
    complete(client, task_link(client, "Publish notice"), objection_period_days="30", full_price="12000")
    move(client, how="next_timer")  # past the auction's last day (11 January) with no bid: unsold
    login(client, "trn1-sarpanch")
    link = task_link(client, "Decide unsold cattle")
    for name in ("recv", "Gram Panchayat Kishanpura"):  # the live receiving officer
        answer = complete(client, link, choice="cattle_fair", receiver=name)
        assert answer.status_code == 422
        assert (f"{name} is a live receiving officer: a training case goes only to a receiving officer of the "
                "training Panchayat") in text_of(answer)
    assert complete(client, link, choice="cattle_fair", receiver="Trainee Receiving Officer").status_code == 302
    with sessions() as session:
        receiver = session.scalar(select(User).where(User.username == "trn1-receiver"))
        assert session.get(Case, case_id).receiving_officer_id == receiver.id
    login(client, "trn1-receiver")
    tasks_page = client.get("/tasks")
    assert element_text(tasks_page, "training-band").startswith("TRAINING — Training Panchayat is a training")
    assert "Training clock: Monday, 12 January 2026 00:00" in element_text(tasks_page, "training-band")
    assert task_link(client, "Record sale and remittance")
    assert client.get("/training/clock").status_code == 200
