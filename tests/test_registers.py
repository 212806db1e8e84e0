"""Registers and statements (webapp.services.reports.registers, webapp.web.pages.registers): the six shared
scenarios run by ``rule130 simulate --database`` into one database and one Panchayat, whose
statement reconciles to the paisa with the scenarios' own expected ledger figures; the pound
register, receipts and account of charges of those cases; CSV with exact Decimal text; and the
scope: another Panchayat's registers answer 404, a role that keeps none 403."""

from __future__ import annotations

import csv
import io
from collections import Counter
from datetime import UTC, date, timedelta
from decimal import Decimal

import pytest
from click.testing import CliRunner
from sqlalchemy import event, func, select

from webapp.cli import main
from webapp.services.people import users
from webapp.services.reports import registers, registers_csv
from webapp.simulation.simulate import load_scenario, run_scenarios
from webapp.store.models import Case, LedgerEntry, Panchayat
from webapp.values import legal_time

from .conftest import FAST_HASH, PASSWORD, SCENARIOS

SHARED = sorted(SCENARIOS.glob("s*.yaml"))
ACCOUNTS = ("suspense", "pound_account", "panchayat_fund")


def expected_closing() -> dict[str, Decimal]:
    """The sum over the six scenarios of each account's expected balance (their expect.ledger)."""
    totals = {account: Decimal("0.00") for account in ACCOUNTS}
    for path in SHARED:
        ledger = load_scenario(path).expect["ledger"]
        for account in ACCOUNTS:
            totals[account] += Decimal(str(ledger[account]))
    return totals


def whole_period(panchayat: Panchayat) -> registers.Period:
    """From the first impoundment's day to a year after the last (every timer has fired by then)."""
    days = [legal_time.local_day(load_scenario(p).case["impounded_at"], panchayat.timezone) for p in SHARED]
    return registers.Period(min(days), max(days) + timedelta(days=366), panchayat.timezone)


@pytest.fixture
def six(database_url, sessions):
    """The six shared scenarios run by the command line into one existing database."""
    assert len(SHARED) == 6, [p.name for p in SHARED]
    result = CliRunner().invoke(main, ["simulate", *map(str, SHARED), "--database", database_url])
    assert result.exit_code == 0, result.output
    return result


def test_six_scenarios_in_one_database_are_six_cases_whose_statement_reconciles_to_the_paisa(six, sessions):
    assert six.output.count("all expectations held") == 6
    closing = expected_closing()
    with sessions() as session:
        rows = session.execute(select(Case.case_number, Panchayat.code)
                               .join(Panchayat, Panchayat.id == Case.panchayat_id).order_by(Case.id)).all()
        assert [tuple(r) for r in rows] == [(f"TRN-SIM1/2026/{n:04d}", "SIM1") for n in range(1, 7)]
        panchayat = session.scalar(select(Panchayat).where(Panchayat.code == "SIM1"))
        period = whole_period(panchayat)
        statement = registers.statement(session, panchayat, period)
        assert [a.account for a in statement.accounts] == list(ACCOUNTS)
        for account in statement.accounts:
            # recomputed here from the lines, not taken from the service's own check
            received = sum((line.entry.amount for line in account.lines if line.direction == "in"), Decimal("0"))
            paid = sum((line.entry.amount for line in account.lines if line.direction == "out"), Decimal("0"))
            assert account.opening == Decimal("0.00"), account.account
            assert (account.received, account.paid) == (received, paid), account.account
            assert account.opening + received - paid == account.closing, account.account
            assert account.closing == closing[account.account], account.account
            assert account.lines[-1].balance == account.closing
        assert statement.reconciles
        assert statement.held == []  # every case ended: nothing left in suspense
        every_entry = session.scalars(select(LedgerEntry)).all()
        touching = {e.id for e in every_entry if {e.from_account, e.to_account} & set(ACCOUNTS)}
        listed = {line.entry.id for a in statement.accounts for line in a.lines}
        assert listed == touching  # every entry of the Panchayat's accounts is on the statement
    assert closing == {"suspense": Decimal("0.00"), "pound_account": Decimal("5780.00"),
                       "panchayat_fund": Decimal("31580.00")}


def test_two_consecutive_periods_chain_closing_to_opening(six, sessions):
    with sessions() as session:
        panchayat = session.scalar(select(Panchayat).where(Panchayat.code == "SIM1"))
        whole = whole_period(panchayat)
        split = date(2026, 3, 31)  # s1's money has left suspense; s2's auction money is still there
        first = registers.statement(session, panchayat, registers.Period(whole.first_day, split, panchayat.timezone))
        second = registers.statement(session, panchayat,
                                     registers.Period(split + timedelta(days=1), whole.last_day, panchayat.timezone))
        full = registers.statement(session, panchayat, whole)
    for a, b, c in zip(first.accounts, second.accounts, full.accounts, strict=False):
        assert a.reconciles and b.reconciles
        assert a.closing == b.opening
        assert a.received + b.received == c.received and a.paid + b.paid == c.paid
    assert {a.account: a.closing for a in first.accounts} == {
        "suspense": Decimal("21000.00"),  # s2: Bidder C's auction money, held until the case is final
        "pound_account": Decimal("1720.00"), "panchayat_fund": Decimal("10780.00")}  # s1 settled on 12 March
    assert first.held == [("TRN-SIM1/2026/0002", Decimal("21000.00"))]


def test_pound_register_receipts_and_charges_of_the_six_cases(six, sessions):
    with sessions() as session:
        panchayat = session.scalar(select(Panchayat).where(Panchayat.code == "SIM1"))
        rows = registers.pound_register(session, panchayat, whole_period(panchayat))
    scenarios = [load_scenario(p) for p in SHARED]
    assert len(rows) == sum(len(s.case["animals"]) for s in scenarios)
    by_case = Counter(r.case_number for r in rows)
    assert [by_case[f"TRN-SIM1/2026/{n:04d}"] for n in range(1, 7)] == [len(s.case["animals"]) for s in scenarios]
    disposals = {r.case_number: (r.disposal.kind, r.disposal.day, r.disposal.to) for r in rows}
    s1, s6 = scenarios[0], scenarios[5]
    assert disposals["TRN-SIM1/2026/0001"] == ("sold", date.fromisoformat(s1.expect["sale"]["day"]),
                                           s1.expect["sale"]["buyer"])
    release = next(step for step in s6.steps if step.do == "release_by_owner")
    assert disposals["TRN-SIM1/2026/0006"] == ("released", release.at.date(), release.fields["owner"])
    assert disposals["TRN-SIM1/2026/0002"][0] == disposals["TRN-SIM1/2026/0005"][0] == "delivered_to_objector"
    assert disposals["TRN-SIM1/2026/0003"][0] == "sold_by_receiver"
    assert rows[0].tag == "RJ-1001" and rows[0].fine == Decimal("500.00")
    with sessions() as session:
        panchayat = session.scalar(select(Panchayat).where(Panchayat.code == "SIM1"))
        period = whole_period(panchayat)
        receipts = registers.receipts(session, panchayat, period)
        charges = registers.charges(session, panchayat, period)
    assert receipts[0].number == "TRN-SIM1/2026/0001/R1"
    assert (receipts[0].payer, receipts[0].payer_name, receipts[0].account, receipts[0].amount) == (
        "buyer", "Bidder B", "suspense", Decimal("12500.00"))
    assert sorted(r.number for r in receipts if r.case_number == "TRN-SIM1/2026/0002") == [
        "TRN-SIM1/2026/0002/R1", "TRN-SIM1/2026/0002/R2", "TRN-SIM1/2026/0002/R3"]
    security = next(r for r in receipts if r.kind == "security")
    assert (security.payer_name, security.amount) == ("Objector K", Decimal("30000.00"))
    scenarios = [load_scenario(p) for p in SHARED]
    assert [r.case_number for r in charges] == [f"TRN-SIM1/2026/{n:04d}" for n in range(1, 7)]
    for row, scenario in zip(charges, scenarios, strict=False):
        fees, ledger = scenario.expect["fees"], scenario.expect["ledger"]
        assert (row.fine, row.pound_feeding, row.buyer_feeding) == (
            Decimal(fees["fine"]), Decimal(fees["pound_feeding"]), Decimal(fees["buyer_feeding"]))
        assert (row.suspense, row.pound_account, row.panchayat_fund) == tuple(Decimal(ledger[a]) for a in ACCOUNTS)
    assert (charges[2].remittance_proceeds, charges[2].remittance_expenses) == (Decimal("8200.00"), Decimal("700.00"))


def test_each_receipt_names_the_papers_issued_by_the_same_act(six, sessions):
    """The register's receipt number is the case's count of payments; the payer holds the document
    the act issued, numbered in its own series: the pairs an auditor joins on."""
    with sessions() as session:
        panchayat = session.scalar(select(Panchayat).where(Panchayat.code == "SIM1"))
        receipts = registers.receipts(session, panchayat, whole_period(panchayat))
    assert [(r.number, r.papers) for r in receipts] == [
        ("TRN-SIM1/2026/0001/R1", ["TRN-SIM1/2026/0001/R1"]),  # s1: the bid at full price, the sale receipt
        ("TRN-SIM1/2026/0002/R1", ["TRN-SIM1/2026/0002/R1"]),  # s2: the sale receipt
        ("TRN-SIM1/2026/0002/R2", ["TRN-SIM1/2026/0002/D1"]),  # s2: the owner pays F + C and Cb on delivery:
        ("TRN-SIM1/2026/0002/R3", ["TRN-SIM1/2026/0002/D1"]),  # two receipts, one delivery order
        ("TRN-SIM1/2026/0003/R1", ["TRN-SIM1/2026/0003/A1"]),  # s3: the remittance acknowledgement
        ("TRN-SIM1/2026/0004/R1", ["TRN-SIM1/2026/0004/R1"]),  # s4: the sale receipt
        ("TRN-SIM1/2026/0005/R1", ["TRN-SIM1/2026/0005/D1"]),  # s5: the security, the interim delivery order
        ("TRN-SIM1/2026/0006/R1", ["TRN-SIM1/2026/0006/R1"]),  # s6: the release receipt
        ("TRN-SIM1/2026/0005/R2", ["TRN-SIM1/2026/0005/D2"]),  # s5: F + C on the final delivery
    ]
    assert [(r.kind, r.at.isoformat()) for r in receipts if r.case_number == "TRN-SIM1/2026/0006"] == [
        ("fine_and_feeding", "2026-11-04T10:30:00+00:00")]


def test_the_papers_of_a_whole_register_take_one_query_not_one_per_receipt(six, sessions):
    with sessions() as session:
        panchayat = session.scalar(select(Panchayat).where(Panchayat.code == "SIM1"))
        statements: list[str] = []

        def count(_conn, _cursor, statement, *_args):
            statements.append(statement)

        engine = session.get_bind()
        event.listen(engine, "before_cursor_execute", count)
        try:
            january = registers.Period(date(2026, 1, 1), date(2026, 1, 31), panchayat.timezone)
            one = registers.receipts(session, panchayat, january)
            asked_for_one, statements[:] = len(statements), []
            every = registers.receipts(session, panchayat, whole_period(panchayat))
            asked_for_every = len(statements)
        finally:
            event.remove(engine, "before_cursor_execute", count)
    assert (len(one), len(every)) == (1, 9)
    assert asked_for_one == asked_for_every == 7  # entries, case files, ordinals, reversals, papers, cancelled papers, paper receipts
    assert sum("case_act" in s for s in statements) == 1


def test_several_runs_number_on_in_the_same_panchayat_and_a_misfit_is_refused(database_url, sessions):
    s6 = load_scenario(SCENARIOS / "s6-released-by-owner.yaml")
    first, second = run_scenarios([s6, s6], database_url)
    assert (first.case_number, second.case_number) == ("TRN-SIM1/2026/0001", "TRN-SIM1/2026/0002")
    assert first.mismatches == second.mismatches == []
    london = SCENARIOS / "p15-bid-after-close-london-dst.yaml"
    refused = CliRunner().invoke(main, ["simulate", str(SCENARIOS / "s1-no-objection-full-price.yaml"), str(london),
                                        "--database", database_url])
    assert refused.exit_code == 2
    assert "timezone is Europe/London, but the Panchayat SIM1 has Asia/Kolkata" in refused.output
    with sessions() as session:  # nothing ran, s1 included
        assert session.scalar(select(func.count(Case.id)).join(Panchayat).where(Panchayat.code == "SIM1")) == 2
    elsewhere = CliRunner().invoke(main, ["simulate", str(london), "--database", database_url, "--panchayat", "LDN"])
    assert elsewhere.exit_code == 0, elsewhere.output
    assert "case TRN-LDN/2026/0001" in elsewhere.output


def test_simulating_into_a_database_a_timer_worker_serves_is_refused(database_url, sessions):
    from datetime import datetime, timedelta

    from webapp.store.models import WorkerLease

    s6 = str(SCENARIOS / "s6-released-by-owner.yaml")
    with sessions() as session:  # a running server's worker: its lease runs into the wall-clock future
        session.add(WorkerLease(name="timer-worker", holder="host-a:4242",
                                expires_at=datetime.now(UTC) + timedelta(seconds=30)))
        session.commit()
    refused = CliRunner().invoke(main, ["simulate", s6, "--database", database_url])
    assert refused.exit_code == 2
    assert "a timer worker is running on this database (host-a:4242); stop the server or worker first" in refused.output
    with sessions() as session:
        assert session.scalar(select(Panchayat).where(Panchayat.code == "SIM1")) is None  # nothing ran
        session.get(WorkerLease, "timer-worker").expires_at = datetime.now(UTC) - timedelta(seconds=1)
        session.commit()
    ran = CliRunner().invoke(main, ["simulate", s6, "--database", database_url])  # the worker has stopped
    assert ran.exit_code == 0, ran.output


# -- pages, CSV and scope -----------------------------------------------------------------------------

def sign_in(app, username: str):
    client = app.test_client()
    response = client.post("/login", data={"username": username, "password": PASSWORD})
    assert response.status_code == 302
    return client


@pytest.fixture
def two_panchayats(app, database_url, sessions, officers):
    """s1 and s2 into RMP (Samiti SAM1), s6 into KHR (the same Samiti): real money in both. The
    simulator writes only into training Panchayats, so both are made training ones here (the
    registers of a Panchayat are the same either way)."""
    with sessions() as session:
        for panchayat in session.scalars(select(Panchayat).where(Panchayat.code.in_(("RMP", "KHR")))):
            panchayat.training = True
        session.commit()
    outcomes = run_scenarios([load_scenario(SCENARIOS / "s1-no-objection-full-price.yaml"),
                              load_scenario(SCENARIOS / "s2-objection-proved-after-sale.yaml")], database_url, "RMP")
    outcomes += run_scenarios([load_scenario(SCENARIOS / "s6-released-by-owner.yaml")], database_url, "KHR")
    assert [o.case_number for o in outcomes] == ["TRN-RMP/2026/0001", "TRN-RMP/2026/0002", "TRN-KHR/2026/0001"]
    with sessions() as session:
        users.create_user(session, "admin-sam1", PASSWORD, "administrator", samiti_code="SAM1",
                          password_method=FAST_HASH)
        users.create_user(session, "admin-rmp", PASSWORD, "administrator", panchayat_code="RMP",
                          password_method=FAST_HASH)
        users.create_user(session, "pk-far", PASSWORD, "pound_keeper", panchayat_code="FAR", password_method=FAST_HASH)
        session.commit()
    return app


YEAR = "from=2026-01-01&to=2026-12-31"


def test_statement_page_shows_indian_rupees_and_reconciles(two_panchayats):
    client = sign_in(two_panchayats, "sec")
    page = client.get(f"/registers/RMP/statement?{YEAR}")
    assert page.status_code == 200
    text = page.get_data(as_text=True)
    # s1 + s2: pound account 1,720.00 + 400.00; Panchayat fund 10,780.00 + 60.00
    assert 'id="closing-pound_account">₹2,120.00<' in text
    assert 'id="closing-panchayat_fund">₹10,840.00<' in text
    assert 'id="closing-suspense">₹0.00<' in text
    assert "KHR/2026" not in text  # Kheri's case is not on Rampura's books
    assert "style=" not in text and "<script" not in text  # CSP: no inline styles or scripts


def test_csv_has_exact_decimal_text_and_reconciles(two_panchayats):
    client = sign_in(two_panchayats, "sar")
    response = client.get(f"/registers/RMP/statement.csv?{YEAR}")
    assert response.status_code == 200 and response.mimetype == "text/csv"
    assert 'filename="RMP-statement-2026-01-01-2026-12-31.csv"' in response.headers["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))
    for account in ACCOUNTS:
        lines = [r for r in rows if r["account"] == account]
        opening, closing = lines[0], lines[-1]
        assert (opening["line"], closing["line"]) == ("opening", "closing")
        entries = [r for r in lines if r["line"] == "entry"]
        received = sum((Decimal(r["in"]) for r in entries if r["in"]), Decimal("0"))
        paid = sum((Decimal(r["out"]) for r in entries if r["out"]), Decimal("0"))
        assert Decimal(opening["balance"]) + received - paid == Decimal(closing["balance"])
        assert (closing["in"], closing["out"]) == (f"{received:.2f}", f"{paid:.2f}")
    assert next(r for r in rows if r["account"] == "pound_account" and r["line"] == "closing")["balance"] == "2120.00"
    first = next(r for r in rows if r["line"] == "entry")
    assert (first["at"], first["case_number"], first["counterparty_name"], first["in"]) == (
        "2026-01-10T15:00:00+05:30", "TRN-RMP/2026/0001", "Bidder B", "12500.00")
    pound = list(csv.DictReader(io.StringIO(client.get(f"/registers/RMP/pound.csv?{YEAR}").get_data(as_text=True))))
    assert [(r["case_number"], r["tag"], r["disposal"], r["fine"]) for r in pound][:2] == [
        ("TRN-RMP/2026/0001", "RJ-1001", "sold", "500.00"), ("TRN-RMP/2026/0001", "RJ-1002", "sold", "500.00")]


def test_the_receipts_page_and_csv_name_the_papers_of_each_receipt(two_panchayats):
    client = sign_in(two_panchayats, "sec")
    page = client.get(f"/registers/RMP/receipts?{YEAR}").get_data(as_text=True)
    assert page.count("papers: TRN-RMP/2026/0002/D1") == 2  # s2: F + C and Cb, paid on the one delivery
    assert ">TRN-RMP/2026/0001/R1</a><br><span class=\"muted papers\">papers: TRN-RMP/2026/0001/R1</span>" in page
    response = client.get(f"/registers/RMP/receipts.csv?{YEAR}")
    assert response.status_code == 200 and response.mimetype == "text/csv"
    lines = response.get_data(as_text=True).splitlines()
    assert lines[0] == ("receipt_number,received_at,case_number,payer,payer_name,account,amount,kind,clause,"
                        "reversed,papers")
    assert lines[1] == ("TRN-RMP/2026/0001/R1,2026-01-10T15:00:00+05:30,TRN-RMP/2026/0001,buyer,Bidder B,suspense,"
                        "12500.00,auction_money,Rule 130(b),,TRN-RMP/2026/0001/R1")
    rows = list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))
    assert [(r["receipt_number"], r["papers"]) for r in rows] == [
        ("TRN-RMP/2026/0001/R1", "TRN-RMP/2026/0001/R1"), ("TRN-RMP/2026/0002/R1", "TRN-RMP/2026/0002/R1"),
        ("TRN-RMP/2026/0002/R2", "TRN-RMP/2026/0002/D1"), ("TRN-RMP/2026/0002/R3", "TRN-RMP/2026/0002/D1")]
    kheri = sign_in(two_panchayats, "admin-sam1").get(f"/registers/KHR/receipts.csv?{YEAR}")
    assert kheri.get_data(as_text=True).splitlines()[1] == (
        "TRN-KHR/2026/0001/R1,2026-11-04T16:00:00+05:30,TRN-KHR/2026/0001,owner,Owner M,pound_account,900.00,"
        "fine_and_feeding,reading: release,,TRN-KHR/2026/0001/R1")  # s6: the release


def test_csv_cells_that_look_like_formulas_are_quoted():
    assert registers_csv.cell("=HYPERLINK(1)", "Asia/Kolkata") == "'=HYPERLINK(1)"
    assert registers_csv.cell(Decimal("-12.50"), "Asia/Kolkata") == "-12.50"
    assert registers_csv.cell(Decimal("1E+3"), "Asia/Kolkata") == "1000.00"


BAD_PERIODS = [
    ("from=2026-13-01", "from: 2026-13-01 is not a date"),
    ("from=2026-05-01&to=2026-04-01", "is after the last day"),
    ("from=1990-01-01&to=2026-01-01", "a period of at most 3660 days"),
]


def test_a_bad_period_is_refused_on_the_page_and_in_csv(two_panchayats):
    client = sign_in(two_panchayats, "sec")
    for query, message in BAD_PERIODS:
        page = client.get(f"/registers/RMP/receipts?{query}")
        assert page.status_code == 422, query
        assert message in page.get_data(as_text=True)
        assert 'id="receipts"' not in page.get_data(as_text=True)
        as_csv = client.get(f"/registers/RMP/receipts.csv?{query}")
        assert as_csv.status_code == 422 and message in as_csv.get_data(as_text=True)


NAMES = ("pound", "receipts", "charges", "suspense", "statement")


SCOPES = {"pk": {"RMP"}, "sec": {"RMP"}, "sar": {"RMP"}, "sec-khr": {"KHR"}, "pk-far": {"FAR"},
          "admin-rmp": {"RMP"}, "admin-sam1": {"RMP", "KHR"}, "admin": {"RMP", "KHR", "FAR"}}


def test_registers_of_a_panchayat_outside_the_scope_answer_404(two_panchayats):
    for username, allowed in SCOPES.items():
        client = sign_in(two_panchayats, username)
        for code in ("RMP", "KHR", "FAR", "NOPE"):
            want = 200 if code in allowed else 404
            for path in [f"/registers/{code}"] + [f"/registers/{code}/{n}{ext}" for n in NAMES for ext in ("", ".csv")]:
                assert client.get(f"{path}?{YEAR}").status_code == want, (username, path)
        listing = client.get("/registers")
        if len(allowed) == 1:
            assert listing.status_code == 302, username
            assert listing.headers["Location"].endswith(f"/registers/{next(iter(allowed))}")
        else:
            text = listing.get_data(as_text=True)
            assert listing.status_code == 200
            assert {code for code in ("RMP", "KHR", "FAR") if f'href="/registers/{code}"' in text} == allowed


def test_a_samiti_administrator_sees_only_its_panchayats_money(two_panchayats):
    client = sign_in(two_panchayats, "admin-sam1")
    kheri = client.get(f"/registers/KHR/receipts?{YEAR}").get_data(as_text=True)
    assert "TRN-KHR/2026/0001/R1" in kheri and "RMP/2026" not in kheri
    assert 'id="receipts-total">₹900.00<' in kheri  # s6: the owner paid fine and feeding


def test_roles_that_keep_no_registers_are_refused_with_403_and_an_unknown_register_is_404(two_panchayats):
    for username in ("app", "recv"):
        client = sign_in(two_panchayats, username)
        assert client.get("/registers").status_code == 403
        for code in ("RMP", "FAR", "NOPE"):  # the same answer whatever the code: nothing about codes leaks
            assert client.get(f"/registers/{code}/statement").status_code == 403
            assert client.get(f"/registers/{code}/statement.csv").status_code == 403
    client = sign_in(two_panchayats, "sec")
    assert client.get("/registers/RMP/ledger").status_code == 404
    assert client.get("/registers/RMP/ledger.csv").status_code == 404
