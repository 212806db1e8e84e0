"""Refusals, form labels and e-mails reach the officer in Hindi.

- Every refusal a service raises is a catalogue message (``M_(...)``), never a bare English text:
  the raise sites of ``webapp/services`` are read with ``ast`` and a literal or f-string message
  (or field error) fails the test naming its file and line.
- Every title, description and choice of the process's JSON Schema forms has a Hindi translation,
  and the Hindi task form shows them with Hindi validation messages.
- A refusal's message and an e-mail are in the reader's language.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import lxml.html
import pytest

from webapp import i18n
from webapp.errors import NotPermitted, Refused
from webapp.i18n import catalogues
from webapp.i18n.extract import schema_texts
from webapp.services.cases import cases
from webapp.services.notify import deliveries
from webapp.services.running import uow
from webapp.store.models import User

from .test_notify_channels import choose, release_window_passes, settings_for, smtp, start_case  # noqa: F401
from .test_web_pages import at, publish_notice, start_case_on_page, task_link, text_of

ROOT = Path(__file__).resolve().parent.parent
SERVICES = ROOT / "webapp" / "services"
FORMS = ROOT / "processes" / "rule130" / "forms"
REFUSALS = {"Refused", "NotFound", "NotPermitted", "Conflict", "DeadlinePassed", "CaseHeld", "InvalidDiagram",
            "refusal"}
DEVANAGARI = re.compile(r"[\u0900-\u097F]")


def bare_texts(node: ast.AST) -> list[ast.AST]:
    """The parts of a message expression that are English text not passed through the catalogue:
    a string literal, an f-string, or a concatenation or conditional containing one."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node]
    if isinstance(node, ast.JoinedStr):
        return [node]
    if isinstance(node, ast.BinOp):
        return bare_texts(node.left) + bare_texts(node.right)
    if isinstance(node, ast.IfExp):
        return bare_texts(node.body) + bare_texts(node.orelse)
    if isinstance(node, ast.Dict):
        return [part for value in node.values for part in bare_texts(value)]
    if isinstance(node, ast.DictComp):
        return bare_texts(node.value)
    return []


def untranslated_refusals(source: str, name: str) -> list[str]:
    """``file:line`` of each refusal in ``source`` whose message or field errors are bare text."""
    found = []
    for call in ast.walk(ast.parse(source)):
        if not isinstance(call, ast.Call):
            continue
        callee = call.func.id if isinstance(call.func, ast.Name) else getattr(call.func, "attr", None)
        if callee not in REFUSALS:
            continue
        for argument in call.args[:2]:
            found += [f"{name}:{part.lineno}" for part in bare_texts(argument)]
    return found


def test_every_refusal_a_service_raises_is_a_catalogue_message():
    problems = []
    for path in sorted(SERVICES.rglob("*.py")):  # services are in packages by purpose
        problems += untranslated_refusals(path.read_text(), path.relative_to(ROOT).as_posix())
    assert problems == [], f"refusals with English text not marked with M_(): {problems}"


def test_the_scan_finds_bare_english_in_a_refusal():
    source = '''
def f(x):
    raise Refused("plain")
    raise NotFound(f"no case {x}")
    raise Refused(M_("ok %(x)s", x=x), {"field": "bare"})
    raise Conflict(M_("fine") if x else "bare too")
    raise Refused(M_("fine"), {name: M_("fine") for name in x})
'''
    assert untranslated_refusals(source, "x.py") == ["x.py:3", "x.py:4", "x.py:5", "x.py:6"]


def test_a_refusal_is_english_for_the_api_and_hindi_on_a_page(sessions, officers):
    with pytest.raises(NotPermitted) as refused:
        uow.perform(sessions, "start_case", cases.start_case, officers["secretary"], impounded_at="2026-01-05T10:00",
                    place_seized="A", place_impounded="B", nearest_village="C", animals=[])
    message = refused.value.message
    assert message == "only the pound keeper may do this; you are signed in as secretary"  # the API's text
    assert i18n.localize(message, language="hi") == \
        "यह केवल कांजी हाउस प्रभारी कर सकता है; आपने सचिव के रूप में लॉग इन किया है"
    with pytest.raises(Refused) as refused:
        uow.perform(sessions, "start_case", cases.start_case, officers["pound_keeper"],
                    impounded_at="2026-01-05T10:00:00+05:30", place_seized="A", place_impounded="B",
                    nearest_village="C", animals=[{"species": "yak", "description": "d"}])
    assert refused.value.message == "animal 1: unknown species yak; known: cow, bullock, buffalo, camel, horse, goat, sheep"
    assert i18n.localize(refused.value.message, language="hi") == \
        "पशु 1: अज्ञात प्रजाति yak; ज्ञात प्रजातियाँ: गाय, बैल, भैंस, ऊँट, घोड़ा, बकरी, भेड़"


@pytest.mark.parametrize("form", sorted(p.name for p in FORMS.glob("*.schema.json")))
def test_every_label_help_and_choice_of_a_form_is_translated(form):
    catalogue = catalogues.translations_for("hi")
    texts = list(schema_texts(json.loads((FORMS / form).read_text())))
    assert texts, form
    untranslated = [text for text in texts if not DEVANAGARI.search(catalogue.gettext(text))]
    assert untranslated == [], f"{form}: no Hindi for {untranslated}"


def test_the_hindi_task_form_has_hindi_labels_help_and_validation_messages(app, client, sessions, virtual_clock):
    case_id = start_case_on_page(client, virtual_clock)
    publish_notice(client, sessions, virtual_clock, case_id)  # the secretary, signed in
    assert client.post("/language", data={"lang": "hi", "next": "/tasks"}).status_code == 302
    virtual_clock.set(at("2026-01-10T12:00:00+05:30"))
    link = task_link(client, "बोली दर्ज करें")
    page = client.get(link)
    doc = lxml.html.fromstring(page.get_data(as_text=True))
    labels = {label.get("for"): re.sub(r"\s+", " ", label.text_content()).strip() for label in doc.iter("label")}
    assert labels["f-bidder"].startswith("बोलीदाता") and labels["f-amount"].startswith("राशि (₹)")
    lock = doc.xpath("//input[@name='lock_version']/@value")[0]
    refused = client.post(link, data={"lock_version": lock, "bidder": "", "amount": "9000"})
    assert refused.status_code == 422
    assert field_errors(refused) == {"f-bidder-error": "यह जानकारी आवश्यक है"}
    assert "प्रपत्र में त्रुटियाँ हैं: बोलीदाता: यह जानकारी आवश्यक है" in text_of(refused)
    refused = client.post(link, data={"lock_version": lock, "bidder": "Bidder A", "amount": "12.345"})
    assert refused.status_code == 422
    assert field_errors(refused) == {"f-amount-error": "दशमलव के बाद बहुत अधिक अंक"}
    assert "बोली: रुपये में दशमलव के बाद अधिकतम दो अंक (पैसे) होते हैं, 12.345 नहीं" in text_of(refused)


def field_errors(response) -> dict[str, str]:
    doc = lxml.html.fromstring(response.get_data(as_text=True))
    return {p.get("id"): p.text_content().strip() for p in doc.xpath("//p[@class='field-error']")}


def test_an_email_to_an_officer_who_chose_hindi_is_in_hindi(sessions, officers, virtual_clock, smtp):  # noqa: F811
    with sessions() as session:
        session.get(User, officers["secretary"].id).language = "hi"
        session.commit()
    choose(sessions, officers["secretary"], email_enabled=True, email_address="secretary@rampura.example")
    start_case(sessions, officers)
    release_window_passes(sessions, virtual_clock)
    smtp.start()
    assert [o.result for o in deliveries.deliver_due(sessions, settings_for(smtp.port))] == ["sent"]
    [(_, rcpts, mail)] = smtp.mailbox.messages
    assert rcpts == ["secretary@rampura.example"]
    subject, body = mail["Subject"], mail.get_content()
    assert subject == "नियम 130 RMP/2026/0001: छुड़ाने की अवधि बीत गई", subject
    assert "RMP/2026/0001: छुड़ाने की अवधि बीत गई है; पत्रावली खुल गई है।" in body and "Case:" not in body, body


def test_every_ledger_memo_a_handler_writes_is_shown_in_hindi():
    """Each ``memo=`` a handler passes to a posting (an f-string with names, or a plain text, or
    either of a conditional) matches an entry of webapp.i18n.stored_texts.MEMOS, so the case page shows it in
    Hindi: found by reading handlers/*.py with ast, the names filled with a sample."""
    import ast
    from pathlib import Path

    from webapp.i18n.stored_texts import retranslate

    def samples(node):
        if isinstance(node, ast.IfExp):
            return samples(node.body) + samples(node.orelse)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node.value]
        if isinstance(node, ast.JoinedStr):
            return ["".join(part.value if isinstance(part, ast.Constant) else "Ram Lal" for part in node.values)]
        raise AssertionError(f"a memo that is not a text: {ast.dump(node)}")

    memos = []
    for path in sorted((Path(__file__).parents[1] / "handlers").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                memos += [text for kw in node.keywords if kw.arg == "memo" for text in samples(kw.value)]
    assert len(memos) >= 10
    untranslated = [text for text in memos if retranslate(text, language="hi") == text]
    assert untranslated == []
