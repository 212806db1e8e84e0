"""No English on a Hindi page outside the officers' own entries (issue 29, item 4): the species on the
new case's check page, the time zone's name, the training Panchayat's officers; and the history in
words: a person by name, never a user number, and the SHA-256 values folded away."""

from __future__ import annotations

import lxml.html

from webapp import i18n
from webapp.i18n.formats import format_zone
from webapp.services.cases import overview
from webapp.services.panchayats import training

from .test_web_pages import ANIMALS, IMPOUNDED, at, login, text_of


def test_the_time_zone_is_named_in_the_readers_language():
    assert format_zone("Asia/Kolkata", "en") == "India Time"
    assert format_zone("Asia/Kolkata", "hi") == "भारत समय"
    assert format_zone(None, "hi") == "भारत समय"  # a Panchayat's default zone


def test_the_training_officers_names_are_shown_in_hindi_and_an_officers_own_name_as_written(app):
    assert {display for _suffix, _role, display in training.OFFICERS} == i18n.TRAINEE_NAMES
    with app.test_request_context(headers={"Accept-Language": "hi"}):
        from flask_babel import force_locale
        with force_locale("hi"):
            assert i18n.person("Trainee Secretary") == "प्रशिक्षु सचिव"
            assert i18n.person("Trainee Receiving Officer") == "प्रशिक्षु प्राप्तकर्ता अधिकारी"
            assert i18n.person("Kailash Meena") == "Kailash Meena"
        with force_locale("en"):
            assert i18n.person("Trainee Secretary") == "Trainee Secretary"


def test_the_history_names_the_receiving_officer_and_never_their_user_number():
    shown = overview._data('{"receiver": "Kailash Meena", "receiver_user_id": 5, "proceeds": "9000.00"}')
    assert shown == [("receiver", "Kailash Meena"), ("proceeds", "9000.00")]
    assert overview._data('{"receiver_user_id": 5}') == [("receiver_user_id", "5")]  # no name: the number stays


def test_the_hindi_check_page_of_a_new_case_names_the_species_and_the_zone_in_hindi(client, virtual_clock):
    virtual_clock.set(at("2026-01-05T10:05:00+05:30"))
    login(client, "pk")
    assert client.post("/language", data={"lang": "hi", "next": "/cases/new"}).status_code == 302
    form_page = text_of(client.get("/cases/new"))
    assert "भारत समय" in form_page and "Asia/Kolkata" not in form_page
    form = {"impounded_at": IMPOUNDED, "place_seized": "Bhimpura", "place_impounded": "Kanji House, Rampura",
            "nearest_village": "Bhimpura", "step": "check"}
    for n, (species, description, tag) in enumerate(ANIMALS, start=1):
        form.update({f"species-{n}": species, f"description-{n}": description, f"tag-{n}": tag})
    page = client.post("/cases/new", data=form)
    assert page.status_code == 200, text_of(page)
    doc = lxml.html.fromstring(page.get_data(as_text=True))
    animals = [" ".join(dd.text_content().split()) for dd in doc.xpath("//dd")][-2:]
    assert animals == ["गाय, brown cow, white patch on forehead, टैग RJ-1001",  # the description is the officer's
                       "गाय, black cow, left horn broken, टैग RJ-1002"]
