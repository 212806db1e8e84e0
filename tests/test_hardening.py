"""Bad input found by a new user: huge ids, absurd dates, loose amounts, unknown fields, bad
scenario tariffs, a busy port; and a timer that fires in the same run that arms it is recorded."""

from __future__ import annotations

import functools
import operator
import re
import socket
from datetime import datetime, timedelta

import pytest
from click.testing import CliRunner

from webapp.cli import main
from webapp.errors import Refused
from webapp.services.cases import cases
from webapp.services.money.amounts import parse_amount
from webapp.services.running import uow
from webapp.services.tasks import tasks
from webapp.store.models import TimerFiring
from webapp.values import clock

from .conftest import PASSWORD

IMPOUNDED = datetime.fromisoformat("2026-01-05T10:00:00+05:30")
COW = [{"species": "cow", "description": "brown cow"}]


def start(sessions, officers, when=IMPOUNDED):
    return uow.perform(sessions, "start_case", cases.start_case, officers["pound_keeper"], impounded_at=when,
                       place_seized="Bhimpura", place_impounded="Kanji House", nearest_village="Bhimpura",
                       animals=COW)


@pytest.mark.parametrize("url", ["/cases/9223372036854775808", "/cases/9223372036854775808/notice",
                                 "/cases/9223372036854775808/diagram", "/board/9223372036854775808",
                                 "/cases/99999999999999999999999999/tasks/x"])
def test_ids_beyond_64_bits_are_not_found(client, url):
    client.post("/login", data={"username": "sec", "password": PASSWORD})
    assert client.get(url).status_code == 404


@pytest.mark.parametrize("when, message", [
    ("0001-01-01T00:00:00+05:30", "valid date and time"),
    ("1900-01-01T00:00:00+05:30", "more than 366 days ago"),
])
def test_impoundment_long_ago_is_refused(sessions, officers, virtual_clock, when, message):
    with pytest.raises(Refused) as refused:
        start(sessions, officers, when)
    assert message in refused.value.message


@pytest.mark.parametrize("text", ["1e3", "1E+1", "1_0", "١٢٣", "+12", "12.", ".5", "NaN", "0x10", "12,00", "1,0000",
                                  "1,,000", ",100", "100,", "1,00,0000", "12,34,56", "१२००.००५", "₹", "1,000,00", "３０"])
def test_amounts_are_decimals_only(text):
    with pytest.raises(Refused) as refused:
        parse_amount(text, "amount")
    assert repr(text) in refused.value.message or "two decimals" in refused.value.message


@pytest.mark.parametrize("text, amount", [
    ("1,00,000", "100000.00"), ("12,34,567.50", "1234567.50"), ("1,00,00,000", "10000000.00"),
    ("100,000", "100000.00"), ("1,234,567.5", "1234567.50"), ("1,000", "1000.00"),
    ("₹1,23,456.00", "123456.00"), ("₹ 1200", "1200.00"),  # as the pages show amounts
    ("१२०००", "12000.00"), ("१,२०,५००.५०", "120500.50"),  # Devanagari digits, as a Hindi keyboard types them
])
def test_amounts_written_as_the_pages_show_them_are_read_exactly(text, amount):
    assert str(parse_amount(text, "amount")) == amount


def test_a_refused_grouped_amount_names_what_was_typed():
    with pytest.raises(Refused) as refused:
        parse_amount("-1,00,000", "amount")
    assert refused.value.message == "amount: an amount cannot be negative (-1,00,000)"
    with pytest.raises(Refused) as refused:
        parse_amount("१,२००.५५५", "amount")
    assert refused.value.message == "amount: rupees take at most two decimals (paise), not १,२००.५५५"


def test_plain_amounts_are_read_exactly():
    assert str(parse_amount(" 12000.5 ", "amount")) == "12000.50"
    assert str(parse_amount(7, "amount")) == "7.00"


def test_the_largest_amount_is_accepted_and_one_paisa_more_is_refused_naming_it():
    assert str(parse_amount("999999999999.99", "amount")) == "999999999999.99"
    with pytest.raises(Refused) as refused:
        parse_amount("1000000000000.00", "amount")
    assert refused.value.message == "amount: 1000000000000.00 is too large; the largest amount is 999999999999.99"


def test_a_form_field_the_schema_does_not_have_is_refused(sessions, officers, virtual_clock):
    case = start(sessions, officers)
    virtual_clock.set(datetime.fromisoformat("2026-01-09T11:00:00+05:30"))
    with pytest.raises(Refused) as refused:
        uow.perform(sessions, "publish_notice", tasks.act, officers["secretary"], case.id, "ut_publish_notice",
                    {"objection_period_days": 30, "full_price": "12000", "x": 1})
    assert "no field x" in refused.value.message
    with pytest.raises(Refused) as refused:
        uow.perform(sessions, "publish_notice", tasks.act, officers["secretary"], case.id, "ut_publish_notice",
                    {"objection_period_days": 30, "full_price": 12000.5})
    assert "as text" in refused.value.message


def test_a_timer_due_when_the_case_starts_is_recorded(sessions, officers, virtual_clock):
    """A case recorded after its release window passed: the timer fires at once and is in the history."""
    virtual_clock.set(IMPOUNDED + timedelta(days=5))
    case = start(sessions, officers)
    with sessions() as session:
        firings = session.query(TimerFiring).filter_by(case_id=case.id).all()
        assert [(f.element_id, f.due_at.isoformat()) for f in firings] == [
            ("bt_release_window", "2026-01-08T18:30:00+00:00")]
        assert firings[0].lateness_seconds == pytest.approx((clock.now() - firings[0].due_at).total_seconds())
        names = [(e.kind, e.name) for e in cases.history(session, case)]
    assert ("timer", "Release window ends (3 days)") in names


def test_simulate_refuses_a_bad_tariff_as_an_invalid_file(tmp_path):
    scenario = tmp_path / "bad.yaml"
    scenario.write_text("""name: bad
tariff:
  cow: {fine: "-500", feeding_per_day: "60.00"}
case:
  impounded_at: 2026-01-05T10:00:00+05:30
  place_seized: A
  place_impounded: B
  nearest_village: C
  animals:
    - {species: cow, description: x}
steps: []
expect: {outcome: eaten}
""")
    result = CliRunner().invoke(main, ["simulate", str(scenario)])
    assert result.exit_code == 2
    assert "tariff.cow: fine: an amount cannot be negative" in result.output


@pytest.mark.parametrize("instant, message", [
    ("2026-02-31T11:00:00+05:30", "'2026-02-31T11:00:00+05:30' is not a real date and time (day is out of range for month)"),
    ("2026-01-05T10:00:00", "'2026-01-05T10:00:00' is not a date and time with a UTC offset")])
def test_simulate_names_an_impossible_date_apart_from_a_missing_offset(tmp_path, instant, message):
    scenario = tmp_path / "bad.yaml"
    scenario.write_text(f"""name: bad
tariff:
  cow: {{fine: "500.00", feeding_per_day: "60.00"}}
case:
  impounded_at: "{instant}"
  place_seized: A
  place_impounded: B
  nearest_village: C
  animals:
    - {{species: cow, description: x}}
steps: []
expect: {{outcome: released}}
""")
    result = CliRunner().invoke(main, ["simulate", str(scenario)])
    assert result.exit_code == 2 and message in result.output, result.output


def test_serve_on_a_busy_port_says_so(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = CliRunner().invoke(main, ["serve", "--port", str(port), "--no-worker",
                                           "--database", f"sqlite:///{tmp_path / 'x.db'}"])
    assert result.exit_code == 2
    assert f"cannot serve on 127.0.0.1:{port}" in result.output


@pytest.mark.parametrize("value", ["²", "٣", "9" * 30])
def test_posted_numbers_that_are_not_plain_ids_get_no_500(client, sessions, virtual_clock, value):
    from .test_web_pages import login, pass_release_window, start_case_on_page, task_link

    case_id = start_case_on_page(client, virtual_clock)
    assert client.post(f"/cases/{case_id}/animal-events", data={"kind": "death", "animal": value}).status_code == 422
    pass_release_window(sessions, virtual_clock)
    login(client, "sec")
    link = task_link(client, "Publish notice")
    response = client.post(link, data={"lock_version": value, "objection_period_days": "30", "full_price": "x"})
    assert response.status_code == 422
    assert client.post("/inbox/read", data={"id": value}).status_code == 302
    assert client.get(f"/processes/{value}/bpmn").status_code == 404


@pytest.mark.parametrize("animals", [5, "cow"])
def test_animals_that_are_not_a_list_are_refused(sessions, officers, virtual_clock, animals):
    with pytest.raises(Refused, match="must be a list"):
        uow.perform(sessions, "start_case", cases.start_case, officers["pound_keeper"], impounded_at=IMPOUNDED,
                    place_seized="Bhimpura", place_impounded="Kanji House", nearest_village="Bhimpura",
                    animals=animals)


# -- control characters in submitted text --------------------------------------------------------

def test_a_nul_in_any_submitted_text_is_refused_naming_the_field_and_nothing_is_saved(client, sessions, officers,
                                                                                    virtual_clock):
    from tests.test_web_pages import IMPOUNDED, login, text_of
    from webapp.store.models import Case

    login(client, "pk")
    virtual_clock.set(datetime.fromisoformat("2026-01-05T10:05:00+05:30"))
    form = {"impounded_at": IMPOUNDED, "place_seized": "Bhim\x00pura", "place_impounded": "Kanji House",
            "nearest_village": "Bhimpura", "species-1": "cow", "description-1": "brown cow"}
    page = client.post("/cases/new", data=form)
    assert page.status_code == 422
    assert "Place seized contains a control character (U+0000)" in text_of(page)  # the label, not the name
    page = client.post("/cases/new", data={**form, "place_seized": "Bhimpura", "description-1": "brown\x1bcow"})
    assert page.status_code == 422 and "Description of animal 1 contains a control character (U+001B)" in text_of(page)
    with sessions() as session:
        assert session.query(Case).count() == 0
    # a tab in a one-line field is a paste's leftover, as a line break is: refused, naming it
    tabbed = client.post("/cases/new", data={**form, "place_seized": "Bhimpura\tnear the well"})
    assert tabbed.status_code == 422
    assert "the place seized contains a tab or an invisible character (U+0009)" in text_of(tabbed)
    spaced = client.post("/cases/new", data={**form, "place_seized": "Bhimpura near the well"})
    assert spaced.status_code == 302
    with sessions() as session:
        assert session.query(Case).count() == 1


def test_the_services_refuse_control_characters_from_any_caller(sessions, officers, virtual_clock):
    # the simulator and the CLI reach the services without the web hook
    from webapp.errors import Refused
    from webapp.services.cases import cases
    from webapp.services.running import uow
    from webapp.store.models import Case

    base = {"impounded_at": datetime.fromisoformat("2026-01-05T10:00:00+05:30"), "place_seized": "Bhimpura",
            "place_impounded": "Kanji House", "nearest_village": "Bhimpura",
            "animals": [{"species": "cow", "description": "brown cow", "tag": "RJ-1"}]}
    for change, named in (({"place_seized": "Bhim\x00pura"}, "the place seized contains a control character (U+0000)"),
                          ({"animals": [{"species": "cow", "description": "cow", "tag": "RJ\x00"}]},
                           "animals[0].tag contains a control character (U+0000)"),
                          # a right-to-left override shows "\u202eevil" as "live" on every page
                          ({"nearest_village": "\u202eevil"}, "contains a control character (U+202E)"),
                          ({"place_impounded": "Kanji \u2066House\u2069"}, "contains a control character (U+2066)")):
        with pytest.raises(Refused) as refused:
            uow.perform(sessions, "start_case", cases.start_case, officers["pound_keeper"], **{**base, **change})
        assert named in str(refused.value.message)
    with pytest.raises(Refused) as refused:
        uow.perform(sessions, "start_case", cases.start_case, officers["pound_keeper"],
                    **{**base, "animals": [{"species": "cow", "description": "cow", "fine": "1.00"}]})
    assert "animal 1: unknown field fine" in str(refused.value.message)
    with sessions() as session:
        assert session.query(Case).count() == 0


def test_the_cli_refuses_a_malformed_panchayat_and_a_backup_into_a_missing_folder(database_url, sessions, tmp_path):
    runner = CliRunner()
    for args, message in ((["A/B"], "the Panchayat code must be 1 to 16 letters or digits (A-Z, 0-9), not 'A/B'"),
                          (["R M P"], "not 'R M P'"), ([""], "not ''"), (["X" * 17], "1 to 16 letters or digits"),
                          (["OK1", "--samiti", "S/1"], "the Samiti code must be 1 to 32 letters, digits or hyphens"),
                          (["OK1", "--name", "  "], "the Panchayat's name must be 1 to 200 characters"),
                          # every case of the Panchayat would fail on these (a 500 on each page)
                          (["OK1", "--timezone", "Mars/Olympus"], "unknown time zone 'Mars/Olympus'; give an IANA zone name"),
                          (["OK1", "--appeal-period-days", "-5"],
                           "appeal_period_days must be a whole number of days from 1 to 365, not -5"),
                          (["OK1", "--appeal-period-days", "100000"], "from 1 to 365, not 100000")):
        options = {"--name": "Rampura", "--samiti": "SAM1"}
        rest = args[1:]
        for flag, value in zip(rest[::2], rest[1::2], strict=False):
            options[flag] = value
        argv = ["create-panchayat", args[0], *functools.reduce(operator.iadd, ([k, v] for k, v in options.items()), []),
                "--database", database_url]
        result = runner.invoke(main, argv)
        assert result.exit_code == 2, (args, result.output)
        assert message in result.output, (args, result.output)
    result = runner.invoke(main, ["backup", str(tmp_path / "missing" / "x.db"), "--database", database_url])
    assert result.exit_code == 2 and "does not exist; create it first" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("username, message", [
    ("SEC", "the user sec already exists"),  # the fixture's "sec" in capitals
    ("\u0455ec", "a user name is made of the letters a-z and A-Z, digits, '.', '-' and '_' (no spaces)"),
    ("new sec", "(no spaces), not 'new sec'"),
])
def test_a_user_name_is_plain_and_unique_whatever_its_letter_case(sessions, officers, username, message):
    from webapp.errors import Refused
    from webapp.services.people import users

    with sessions() as session, pytest.raises(Refused, match=re.escape(message)):
        users.create_user(session, username, PASSWORD, "secretary", panchayat_code="RMP")


def test_an_officer_of_a_samiti_no_panchayat_is_in_is_refused(sessions, officers):
    from webapp.errors import Refused
    from webapp.services.people import users

    with sessions() as session:
        for role in ("appellate_authority", "administrator"):
            with pytest.raises(Refused, match="no Panchayat is in Samiti NOSUCH; add its Panchayats first"):
                users.create_user(session, f"x-{role}", PASSWORD, role, samiti_code="NOSUCH")
        made = users.create_user(session, "app2", PASSWORD, "appellate_authority", samiti_code="SAM2",
                                 password_method="pbkdf2:sha256:1000")
        assert made.samiti_code == "SAM2"

