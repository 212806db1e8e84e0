"""An appeal names the decision it is against (Rule 130(e) proviso): the sarpanch's order that the
auction stand, with its day, or the Panchayat's order on the objection of a named objector, with its
day — on the case page before it is filed (the form's heading) and at its check, in the case's
appeals once filed, and in the appellate authority's decision — in English and in Hindi.

Scenarios run through the services as ``webapp.simulation.simulate`` runs them (tests/test_documents.py,
``run_scenario``); the pages are read through the Flask test client."""

from __future__ import annotations

import re

import lxml.html
import pytest

from webapp.simulation import scenario_file

from .test_documents import docs, html_text, login, run_scenario
from .test_web_pages import text_of


def heading(client, case_id: int) -> str:
    root = lxml.html.document_fromstring(client.get(f"/cases/{case_id}").get_data(as_text=True))
    form = root.xpath(f'//form[@action="/cases/{case_id}/appeals"]')[0]
    return re.sub(r"\s+", " ", form.find(".//h3").text_content()).strip()


def test_an_appeal_against_the_order_that_the_auction_stand_names_the_order_and_its_day(app, sessions, officers,
                                                                                          virtual_clock):
    # s4: no objection in time; the sarpanch orders on 2026-09-05 that the auction stand; Late Claimant
    # appeals on 2026-09-20; the appellate authority dismisses the appeal on 2026-10-10
    case_id = run_scenario(sessions, officers, virtual_clock, "s4", until_step=4)
    client = app.test_client()
    login(client, "sec")
    assert heading(client, case_id) == ("File an appeal against the order that the auction stand "
                                        "(Saturday, 5 September 2026)")
    check = client.post(f"/cases/{case_id}/appeals", data={"appellant": "Late Claimant", "step": "check"})
    assert "Check: File an appeal against the order that the auction stand (Saturday, 5 September 2026)" \
        in text_of(check)
    client.post("/language", data={"lang": "hi"})
    assert heading(client, case_id) == "नीलामी यथावत रखने के आदेश (शनिवार, 5 सितंबर 2026) के विरुद्ध अपील दर्ज करें"

    case_id = run_scenario(sessions, officers, virtual_clock, "s4")
    client.post("/language", data={"lang": "en"})
    assert ("Appellant Late Claimant, filed Sunday, 20 September 2026, against the order that the auction stand "
            "(Saturday, 5 September 2026) — upheld") in text_of(client.get(f"/cases/{case_id}"))
    found = docs(sessions, case_id)
    assert ("Late Claimant appealed on Sunday, 20 September 2026 against the order that the auction stand "
            "(Saturday, 5 September 2026), made by Gram Panchayat Rampura (Rule 130(e) proviso).") \
        in html_text(found["appeal_decision:1", "en"])
    assert ("Late Claimant ने रविवार, 20 सितंबर 2026 को ग्राम पंचायत Rampura द्वारा दिए गए नीलामी यथावत रखने के आदेश "
            "(शनिवार, 5 सितंबर 2026) के विरुद्ध अपील की") in html_text(found["appeal_decision:1", "hi"])


@pytest.mark.parametrize(("scenario", "appellant", "objector", "decided", "filed", "filed_iso", "decided_hi", "filed_hi"), [
    # p02: Ramesh's claim proved on 2026-03-20; the buyer, Bidder C, appeals against that order on 2026-04-10
    ("p02", "Bidder C", "Ramesh", "Friday, 20 March 2026", "Friday, 10 April 2026", "2026-04-10",
     "शुक्रवार, 20 मार्च 2026", "शुक्रवार, 10 अप्रैल 2026"),
    # p03: Mohan's claim not proved on 2026-04-25; Mohan appeals against the order on his own claim on 2026-05-10
    ("p03", "Mohan", "Mohan", "Saturday, 25 April 2026", "Sunday, 10 May 2026", "2026-05-10",
     "शनिवार, 25 अप्रैल 2026", "रविवार, 10 मई 2026"),
])
def test_an_appeal_against_an_order_on_an_objection_names_the_objector_and_the_day(
        app, sessions, officers, virtual_clock, scenario, appellant, objector, decided, filed, filed_iso, decided_hi,
        filed_hi):
    steps = {"p02": 5, "p03": 4}[scenario]  # up to the appeal: the decision on the objection made
    case_id = run_scenario(sessions, officers, virtual_clock, scenario, until_step=steps)
    virtual_clock.set(scenario_file._instant(f"{filed_iso}T10:00:00+05:30", "at"))  # the day the appeal is filed
    client = app.test_client()
    login(client, "sec")
    against = f"the order on the objection of {objector} ({decided})"
    assert heading(client, case_id) == f"File an appeal against {against}"
    check = client.post(f"/cases/{case_id}/appeals", data={"appellant": appellant, "step": "check"})
    text = text_of(check)
    assert f"Check: File an appeal against {against}" in text
    assert f"the appeal of {appellant} against {against} is recorded on {filed}" in text
    client.post("/language", data={"lang": "hi"})
    assert heading(client, case_id) == f"{objector} की आपत्ति पर आदेश ({decided_hi}) के विरुद्ध अपील दर्ज करें"

    case_id = run_scenario(sessions, officers, virtual_clock, scenario, until_step=steps + 1)
    assert (f"{appellant}, प्रस्तुत {filed_hi}, {objector} की आपत्ति पर आदेश ({decided_hi}) के विरुद्ध"
            in text_of(client.get(f"/cases/{case_id}")))
    client.post("/language", data={"lang": "en"})
    assert f"Appellant {appellant}, filed {filed}, against {against} — pending" \
        in text_of(client.get(f"/cases/{case_id}"))

    case_id = run_scenario(sessions, officers, virtual_clock, scenario, until_step=steps + 2)
    found = docs(sessions, case_id)
    assert (f"{appellant} appealed on {filed} against {against}, made by Gram Panchayat Rampura "
            "(Rule 130(e) proviso).") in html_text(found["appeal_decision:1", "en"])
    assert (f"{appellant} ने {filed_hi} को ग्राम पंचायत Rampura द्वारा दिए गए {objector} की आपत्ति पर आदेश "
            f"({decided_hi}) के विरुद्ध अपील की") in html_text(found["appeal_decision:1", "hi"])
