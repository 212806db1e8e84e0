"""Documents fit their pages (issue 29, item 6): every kind of document the product issues, in
English and Hindi, of a live and of a training Panchayat, printed to PDF as an officer gets it
(``/cases/<id>/documents/<id>.pdf``), has the number of A4 pages expected of it, and each page of
a training document carries the TRAINING mark (a live one never does).

The cases are those of test_documents' text-layer test (they issue every kind, the 33-head case p88
included): in Panchayat RMP by its officers, and in training Panchayat TRN1 by its trainees
(``webapp.simulation.simulate.run_into``, as ``rule130 training --fill`` runs a scenario).
"""

from __future__ import annotations

import dataclasses

import pytest
from sqlalchemy import select

from webapp.services.cases import corrections
from webapp.services.panchayats import training
from webapp.services.papers import documents
from webapp.services.running import acts, uow
from webapp.simulation import scenario_file, simulate
from webapp.store.models import Case, User

from .conftest import FAST_HASH, PASSWORD, SCENARIOS
from .test_documents import (
    TEXT_LAYER_CASES,
    amend_the_notice,
    correct_the_notice,
    docs,
    login,
    pdf_pages,
    run_scenario,
    squeezed,
)

MARK = {"en": "TRAINING — not valid as an order or receipt", "hi": "प्रशिक्षण — आदेश या रसीद के रूप में मान्य नहीं"}
EVERY_PAGE_MARK = {"en": "TRAINING", "hi": "प्रशिक्षण"}
# pages of each document of a case (the others: one A4 page); p88 has 33 head of cattle
PAGES = {"p88": 2}


def training_case(sessions, virtual_clock, name: str) -> int:
    """Case ``name`` of TEXT_LAYER_CASES run in training Panchayat TRN1 by its trainees; its id."""
    with sessions() as session:
        training.create(session, "TRN1", "Training Panchayat", PASSWORD, password_method=FAST_HASH)
        session.commit()
    url = sessions.kw["bind"].url.render_as_string(hide_password=False)
    scenario = simulate.load_scenario(next(SCENARIOS.glob(f"{'s1' if name == 'cancelled notice' else name}-*.yaml")))
    end = None
    if name == "cancelled notice":  # s1 to the notice, then the notice's publication corrected
        scenario = dataclasses.replace(scenario, steps=scenario.steps[:1], expect={})
        end = scenario.steps[0].at
    [result] = simulate.run_into(url, [scenario], "TRN1", end=end)
    with sessions() as session:
        case_id = session.scalar(select(Case.id).where(Case.case_number == result.case_number))
        if name == "cancelled notice":
            secretary = session.scalar(select(User).where(User.username == "trn1-secretary"))
            act_id = acts.latest(session, case_id).id
    if name == "cancelled notice":
        virtual_clock.set(scenario_file._instant("2026-01-09T12:00:00+05:30", "at"))
        uow.perform(sessions, "correct_act", corrections.correct, secretary, case_id, act_id,
                    "full price typed as 1200 for 12000", case_id=case_id, user=secretary)
    return case_id


# every case in both Panchayats, but the amended notice only live: a training case's corrigendum
# notice is printed by the same page as its other documents, which the training cases check
COMBINATIONS = [(name, panchayat) for name in sorted(TEXT_LAYER_CASES) for panchayat in ("live", "training")
                if (name, panchayat) != ("amended notice", "training")]


@pytest.mark.parametrize(("name", "panchayat"), COMBINATIONS)
def test_every_kind_of_document_has_its_pages_and_a_training_one_says_so_on_each(
        name, panchayat, app, sessions, officers, virtual_clock):
    if panchayat == "live":
        if name == "cancelled notice":
            case_id = correct_the_notice(sessions, officers, virtual_clock)
        elif name == "amended notice":
            case_id = amend_the_notice(sessions, officers, virtual_clock)
        else:
            case_id = run_scenario(sessions, officers, virtual_clock, name)
    else:
        case_id = training_case(sessions, virtual_clock, name)
    found = docs(sessions, case_id)
    assert {row.kind for row in found.values()} == TEXT_LAYER_CASES[name]
    client = app.test_client()
    login(client, "sec" if panchayat == "live" else "trn1-secretary")
    for (_key, language), row in sorted(found.items()):
        response = client.get(f"/cases/{case_id}/documents/{row.id}.pdf")
        assert response.status_code == 200 and response.mimetype == "application/pdf"
        pages = pdf_pages(response.data)
        where = f"{row.number} ({language}, {panchayat})"
        assert len(pages) == PAGES.get(name, 1), f"{where}: {len(pages)} pages\n" + "\f".join(pages)
        if panchayat == "training":
            head = squeezed(f"{EVERY_PAGE_MARK[language]} · {row.number}")
            for number, page in enumerate(pages, start=1):
                assert head in squeezed(page), f"{where} page {number} lacks the TRAINING mark:\n{page}"
            # and the stored text's own marks, at the head of the first page and the foot of the last
            assert squeezed(MARK[language]) in squeezed(pages[0]) and squeezed(MARK[language]) in squeezed(pages[-1])
        else:
            assert not any(EVERY_PAGE_MARK[language] in page or "TRAINING" in page for page in pages), where
        # the whole SHA-256 line on the last page, after the text
        assert squeezed(documents.verify_line(row, True)) in squeezed(pages[-1]), f"{where}: the SHA-256 line is split"
