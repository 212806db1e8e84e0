"""Languages: the Hindi catalogue covers every marked string and compiles; pages follow the chosen
language (remembered per user and, for visitors, in a cookie); dates and rupees come from Babel."""

from __future__ import annotations

import re
import shutil
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path

import lxml.html
from babel.messages.frontend import CommandLineInterface
from babel.messages.pofile import read_po
from babel.support import Translations

from webapp import i18n
from webapp.i18n import catalogues, formats
from webapp.store.models import User

from .conftest import PASSWORD
from .test_web_pages import at, publish_notice, start_case_on_page, task_link, text_of

ROOT = Path(__file__).resolve().parent.parent
HI_PO = ROOT / "webapp" / "translations" / "hi" / "LC_MESSAGES" / "messages.po"


def extract_pot(tmp_path: Path) -> Path:
    """A fresh messages.pot of every marked string (the same options as scripts/translations.sh)."""
    pot = tmp_path / "messages.pot"
    CommandLineInterface().run(["pybabel", "-q", "extract", "-F", str(ROOT / "babel.cfg"), "-k", "_l",
                                "-k", "lazy_gettext", "-k", "N_", "-k", "M_", "--no-location", "-o", str(pot), str(ROOT)])
    return pot


def test_every_user_visible_string_has_a_hindi_translation(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)  # babel.cfg's patterns are relative to the repository
    with extract_pot(tmp_path).open("rb") as f:
        template = read_po(f)
    with HI_PO.open("rb") as f:
        hindi = read_po(f, locale="hi")
    ids = [m.id for m in template if m.id]
    assert len(ids) > 250  # pages, messages, forms and diagram names were all extracted
    assert "Decide ownership claim" in [m.id for m in template]  # a JSON Schema form title
    assert "Publish notice and open conditional auction" in [m.id for m in template]  # a BPMN task name
    missing, fuzzy = [], []
    for message_id in ids:
        key = message_id[0] if isinstance(message_id, tuple) else message_id
        entry = hindi.get(key)
        strings = entry.string if entry is not None and isinstance(entry.string, tuple) else (
            (entry.string,) if entry is not None else ("",))
        if entry is None or not all(strings):
            missing.append(key)
        elif entry.fuzzy:
            fuzzy.append(key)
    assert missing == [], f"untranslated in {HI_PO.name}: {missing} (run scripts/translations.sh update)"
    assert fuzzy == [], f"fuzzy in {HI_PO.name}: {fuzzy}"
    problems = [(m.id, errors) for m, errors in hindi.check()]
    assert problems == [], problems  # placeholders (%(name)s) match the English


def test_the_hindi_catalogue_compiles_and_translates(tmp_path):
    target = tmp_path / "translations"
    shutil.copytree(HI_PO.parent.parent.parent, target, ignore=shutil.ignore_patterns("*.mo"))
    written = i18n.compile_catalogues(target)
    assert written == [target / "hi" / "LC_MESSAGES" / "messages.mo"]
    assert i18n.compile_catalogues(target) == []  # up to date: not compiled again
    catalogue = Translations.load(str(target), ["hi"])
    assert catalogue.gettext("Notice board") == "सूचना पट्ट"
    assert catalogue.gettext("Decide ownership claim") == "स्वामित्व के दावे का निर्णय करें"
    assert catalogue.ngettext("%(num)d bid", "%(num)d bids", 3) % {"num": 3} == "3 बोलियाँ"


def test_days_are_day_first_with_the_weekday_and_rupees_grouped_in_lakhs():
    assert formats.format_day(date(2026, 2, 8), "en") == "Sunday, 8 February 2026"
    assert formats.format_day(date(2026, 2, 8), "hi") == "रविवार, 8 फ़रवरी 2026"
    assert formats.format_day("2026-03-11", "hi") == "बुधवार, 11 मार्च 2026"
    instant = datetime.fromisoformat("2026-01-09T05:30:00+00:00")
    assert formats.format_instant(instant, "Asia/Kolkata", "en") == "Friday, 9 January 2026 11:00"
    assert formats.format_instant(instant, "Asia/Kolkata", "hi") == "शुक्रवार, 9 जनवरी 2026 11:00"
    assert formats.format_rupees(Decimal("123456"), "en") == "₹1,23,456.00"
    assert formats.format_rupees(Decimal("123456"), "hi") == "₹1,23,456.00"
    assert formats.format_rupees(Decimal("12345678.5"), "en") == "₹1,23,45,678.50"
    assert formats.format_rupees(Decimal("-500"), "en") == "-₹500.00"
    assert formats.format_rupees(None) == "—"
    # a locale whose full date is month first gets the project pattern
    assert formats.day_pattern("en_US") == formats.PROJECT_DAY_PATTERN
    assert formats.day_pattern("hi_IN") == "EEEE, d MMMM y"
    assert formats.days_in_text("the objection period ended on 2026-02-08", "hi") == \
        "the objection period ended on रविवार, 8 फ़रवरी 2026"


def test_a_visitor_switches_the_board_to_hindi_and_the_cookie_remembers_it(app, client, sessions, virtual_clock):
    case_id = start_case_on_page(client, virtual_clock)
    publish_notice(client, sessions, virtual_clock, case_id)
    public = app.test_client()
    page = public.get("/board")
    assert 'lang="en"' in page.get_data(as_text=True) and "Notice board" in text_of(page)
    switched = public.post("/language", data={"lang": "hi", "next": "/board"})
    assert switched.status_code == 302 and switched.headers["Location"] == "/board"
    assert "lang=hi" in switched.headers["Set-Cookie"]
    page = public.get("/board")
    html = page.get_data(as_text=True)
    text = text_of(page)
    assert '<html lang="hi">' in html and '<meta charset="utf-8">' in html
    assert "सूचना पट्ट" in text and "Notice board" not in text
    # the notice's last day for objections, as Babel formats it in Hindi
    assert "आपत्तियाँ रविवार, 8 फ़रवरी 2026 की समाप्ति तक" in text
    notice = text_of(public.get(f"/board/{case_id}"))
    assert "आपत्ति का अंतिम दिन रविवार, 8 फ़रवरी 2026" in notice
    assert "पूरे लॉट का पूरा मूल्य ₹12,000.00" in notice
    assert "शुक्रवार, 9 जनवरी 2026, शनिवार, 10 जनवरी 2026, और रविवार, 11 जनवरी 2026 को" in notice
    assert "गाय" in notice  # the species, in words of the catalogue
    # an unknown language or a foreign next page changes nothing harmful
    odd = public.post("/language", data={"lang": "fr", "next": "https://evil.example/"})
    assert odd.status_code == 302 and odd.headers["Location"] == "/board"
    assert "सूचना पट्ट" in text_of(public.get("/board"))


def test_an_officers_choice_is_stored_and_follows_them_to_another_browser(app, client, sessions, virtual_clock):
    case_id = start_case_on_page(client, virtual_clock)
    publish_notice(client, sessions, virtual_clock, case_id)  # signed in as the secretary
    assert client.post("/language", data={"lang": "hi", "next": f"/cases/{case_id}"}).status_code == 302
    with sessions() as session:
        assert session.query(User).filter_by(username="sec").one().language == "hi"
    other = app.test_client()  # another phone: no cookie, the stored choice applies after sign-in
    assert other.post("/login", data={"username": "sec", "password": PASSWORD}).status_code == 302
    page = other.get("/tasks")
    assert '<html lang="hi">' in page.get_data(as_text=True)
    assert "मेरे कार्य" in text_of(page) and "लॉग आउट" in text_of(page)
    # the task form: labels and help from the JSON Schema, in Hindi
    virtual_clock.set(at("2026-01-10T12:00:00+05:30"))
    assert "बोली दर्ज करें" in text_of(page) and "वैधानिक समय-सीमा: नीलामी का अंतिम दिन" in text_of(page)
    form = other.get(task_link(other, "बोली दर्ज करें"))
    doc = lxml.html.fromstring(form.get_data(as_text=True))
    labels = {label.get("for"): re.sub(r"\s+", " ", label.text_content()).strip() for label in doc.iter("label")}
    assert labels["f-bidder"].startswith("बोलीदाता") and labels["f-amount"].startswith("राशि (₹)")
    assert "पूरा मूल्य ₹12,000.00" in text_of(form)  # the case at a glance
    # a refusal in Hindi, the field error beside its field
    refused = other.post(form.request.path, data={"lock_version": doc.xpath("//input[@name='lock_version']/@value")[0],
                                                  "bidder": "", "amount": "9000"})
    assert refused.status_code == 422
    assert other.post("/language", data={"lang": "en", "next": "/tasks"}).status_code == 302
    assert "My tasks" in text_of(other.get("/tasks"))




def test_every_notification_template_fits_its_hindi_translation():
    from webapp.services.notify import deliveries
    from webapp.services.notify.notifications import TEMPLATES
    catalogue = catalogues.translations_for("hi")
    every = {**TEMPLATES, **{f"subject {k}": v for k, v in deliveries.SUBJECTS.items()},
             "subject": deliveries.EMAIL_SUBJECT, "subject without case": deliveries.EMAIL_SUBJECT_NO_CASE,
             "body": deliveries.EMAIL_BODY}
    for key, template in every.items():
        fields = set(re.findall(r"{(\w+)}", template))
        hindi = catalogue.gettext(template)
        assert hindi != template, key
        assert set(re.findall(r"{(\w+)}", hindi)) == fields, key


def test_an_officer_who_chose_hindi_is_notified_in_hindi(client, sessions, virtual_clock):
    from webapp.services.notify import notifications

    from .test_web_pages import pass_release_window
    with sessions() as session:
        session.query(User).filter_by(username="sec").one().language = "hi"
        session.commit()
    start_case_on_page(client, virtual_clock)
    pass_release_window(sessions, virtual_clock)  # the report is raised: the secretary is told
    with sessions() as session:
        sec = session.query(User).filter_by(username="sec").one()
        sarpanch = session.query(User).filter_by(username="sar").one()
        [to_secretary] = notifications.inbox(session, sec)
        assert to_secretary.message == ("RMP/2026/0001: छुड़ाने की अवधि बीत गई है; पत्रावली खुल गई है। "
                                        "सूचना प्रकाशित करें (नियम 130(क))।")
        assert notifications.inbox(session, sarpanch) == [] or all(
            "the release window has passed" in n.message for n in notifications.inbox(session, sarpanch))
    # a legal period's notices: the period, the consequence and the day in the reader's language
    from webapp.services.running.alerts import DEADLINES
    objection = DEADLINES["n_ice_period_ends"]
    ended = notifications.TEMPLATES["period_ended"]
    assert i18n.render_for("hi", ended, case="X", period=objection.name, last_day="2026-02-08") == \
        "X: आपत्ति अवधि समाप्त हो गई; उसका अंतिम दिन रविवार, 8 फ़रवरी 2026 था।"
    assert i18n.render_for("en", ended, case="X", period=objection.name, last_day="2026-02-08") == \
        "X: the objection period is over; its last day was Sunday, 8 February 2026."
    near = notifications.TEMPLATES["deadline_near"]
    assert i18n.render_for("hi", near, case="X", period=objection.name, last_day="2026-02-08", days_left=3,
                           consequence=objection.consequence) == (
        "X: आपत्ति अवधि का अंतिम दिन रविवार, 8 फ़रवरी 2026 है (आज सहित शेष दिन: 3); "
        "इसके बाद कोई आपत्ति स्वीकार नहीं की जाती (नियम 130(क))।")


def test_the_inbox_shows_every_notification_in_the_readers_current_language(client, sessions, virtual_clock):
    """A notification written while the secretary read English is shown in Hindi once they switch
    (and back); the stored message stays as written (the e-mail's text); a row written before its
    parameters were stored is shown as written."""
    from webapp.services.notify import notifications
    from webapp.store.models import Notification

    from .test_web_pages import login, pass_release_window
    english = ("RMP/2026/0001: the release window has passed; the file is open. "
               "Publish the notice (Rule 130(a)).")
    hindi = "RMP/2026/0001: छुड़ाने की अवधि बीत गई है; पत्रावली खुल गई है। सूचना प्रकाशित करें (नियम 130(क))।"
    start_case_on_page(client, virtual_clock)
    pass_release_window(sessions, virtual_clock)  # the secretary (English) is told the report is raised
    with sessions() as session:
        sec = session.query(User).filter_by(username="sec").one()
        [row] = [n for n in notifications.inbox(session, sec) if n.template == "report_raised"]
        assert row.message == english
        assert notifications.text(row, "hi") == hindi and notifications.text(row, "en") == english
        old = Notification(user_id=sec.id, case_id=row.case_id, template="report_raised", message="written before 0014",
                           created_at=row.created_at, params_json=None)
        session.add(old)
        session.commit()

    def messages() -> list[str]:
        doc = lxml.html.fromstring(client.get("/inbox").get_data(as_text=True))
        return [" ".join(span.text_content().split()) for span in doc.xpath("//ul[@class='inbox']//span[@class='msg']")]

    login(client, "sec")
    assert english in messages() and "written before 0014" in messages()
    client.post("/language", data={"lang": "hi", "next": "/inbox"})
    shown = messages()
    assert hindi in shown and english not in shown and "written before 0014" in shown
    with sessions() as session:  # the row itself is unchanged
        assert session.query(Notification).filter_by(template="report_raised", user_id=row.user_id,
                                                     params_json=row.params_json).one().message == english
    client.post("/language", data={"lang": "en", "next": "/inbox"})
    assert english in messages() and hindi not in messages()
