"""Every refusal says what can still be done, and by whom (issue 29, item 3): its ``then``
(webapp.errors.Rule130Error.then), a whole catalogue sentence shown under the refusal on a page and
sent as ``"then"`` by the API, in the reader's language.

- The refusal catalogue is read with ``ast``: every ``Refused``/``DeadlinePassed`` raised in
  ``webapp/services`` and ``webapp/web`` passes ``then=`` (or refuses form fields, whose next step is
  to correct them); every other refusal class carries a ``then`` of its own.
- Each next step is a sentence: a capital first letter, a full stop, and a Hindi translation that
  ends with the danda.
- A lawful dead end says so ("Nothing more can be done: …").
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from webapp import errors, i18n
from webapp.errors import CORRIGENDUM, FIX_FIELDS, Refused, Rule130Error
from webapp.i18n import catalogues
from webapp.services.running import acts
from webapp.services.tasks import rules

from .driver import ONE_COW, TWO_COWS, ist_midnight, publish, sell
from .test_corrections import correct

ROOT = Path(__file__).resolve().parent.parent
SCANNED = [ROOT / "webapp" / "services", ROOT / "webapp" / "web"]
NEEDS_THEN = {"Refused", "DeadlinePassed"}  # the classes with no next step of their own


def _name(call: ast.Call) -> str | None:
    return call.func.id if isinstance(call.func, ast.Name) else getattr(call.func, "attr", None)


def refusals_without_a_next_step(source: str, name: str) -> list[str]:
    """``file:line`` of each ``Refused(...)``/``DeadlinePassed(...)`` in ``source`` that passes no
    ``then=`` and refuses no form fields (a second argument or ``field_errors=``)."""
    found = []
    for call in ast.walk(ast.parse(source)):
        if not isinstance(call, ast.Call) or _name(call) not in NEEDS_THEN:
            continue
        keywords = {k.arg for k in call.keywords}
        if "then" in keywords or len(call.args) > 1 or "field_errors" in keywords:
            continue
        found.append(f"{name}:{call.lineno}")
    return found


def test_every_refusal_raised_by_a_service_or_page_names_its_next_step():
    problems, seen = [], 0
    for folder in SCANNED:
        for path in sorted(folder.rglob("*.py")):
            source = path.read_text(encoding="utf-8")
            seen += source.count("Refused(") + source.count("DeadlinePassed(")
            problems += refusals_without_a_next_step(source, path.relative_to(ROOT).as_posix())
    assert seen > 150  # the whole catalogue was read (services are in packages: rglob, not glob)
    assert problems == [], f"refusals that do not say what can still be done (give then=M_(...)): {problems}"


def test_the_scan_finds_a_refusal_without_a_next_step():
    source = '''
def f(x):
    raise Refused(M_("no"))
    raise DeadlinePassed(M_("late"), last_day=x)
    raise Refused(M_("bad field"), {"x": M_("wrong")})
    raise Refused(M_("no"), then=M_("The secretary can do it."))
    raise NotFound(M_("no such case"))
'''
    assert refusals_without_a_next_step(source, "x.py") == ["x.py:3", "x.py:4"]


def test_every_refusal_class_without_its_own_next_step_is_only_the_ones_the_scan_covers():
    classes = [c for c in vars(errors).values() if inspect.isclass(c) and issubclass(c, Rule130Error)]
    assert len(classes) >= 12
    without = sorted(c.__name__ for c in classes if c.default_then is None)
    assert without == ["DeadlinePassed", "Refused", "Rule130Error"]
    assert Refused(i18n.M_("bad"), {"amount": i18n.M_("not a number")}).then == FIX_FIELDS
    assert Refused(i18n.M_("bad")).then is None


def next_step_texts() -> list[str]:
    """The English template of every next step written in the code: ``then=M_("...")`` literals and
    the module constants given as ``then=`` (webapp.errors, rules, passwords) and as ``default_then``."""
    texts: list[str] = []
    for folder in [ROOT / "webapp"]:
        for path in sorted(folder.rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.keyword) and node.arg == "then" and isinstance(node.value, ast.Call) \
                        and _name(node.value) == "M_":
                    texts += [a.value for a in node.value.args[:1] if isinstance(a, ast.Constant)]
    for value in [*vars(errors).values(), *vars(rules).values()]:
        if isinstance(value, i18n.Message) and value.template[:1].isupper() and value.template.endswith("."):
            texts.append(value.template)
    texts += [c.default_then.template for c in vars(errors).values()
              if inspect.isclass(c) and issubclass(c, Rule130Error) and c.default_then is not None]
    return sorted(set(texts))


def test_every_next_step_is_a_whole_sentence_in_english_and_in_hindi():
    texts = next_step_texts()
    assert len(texts) > 50 and CORRIGENDUM.template in texts
    hindi = catalogues.translations_for("hi")
    not_sentences = [t for t in texts if not (t[:1].isupper() and t.endswith("."))]
    assert not_sentences == []
    untranslated = [t for t in texts if hindi.gettext(t) == t]
    assert untranslated == []
    no_danda = [t for t in texts if not hindi.gettext(t).endswith("।")]
    assert no_danda == []


# -- what an officer is told ----------------------------------------------------------------------------

def test_a_correction_past_its_window_names_the_corrigendum_in_english_and_hindi(drive):
    drive.start(TWO_COWS)
    drive.move("2026-01-06T09:00:00+05:30")
    drive.animal_event("death", tag="RJ-2")
    drive.move("2026-01-07T09:00:00+05:30")
    drive.animal_event("escape", tag="RJ-1")
    drive.move("2026-01-15T00:00:00+05:30")
    with pytest.raises(Refused, match="could be corrected until 2026-01-14") as refused:
        correct(drive)
    assert refused.value.then == ("A corrigendum can amend the names and amounts; a wrong ledger entry is undone "
                                  "by the secretary's reversing entry.")
    assert i18n.localize(refused.value.then, language="hi") == (
        "शुद्धि-पत्र से नाम और राशियाँ संशोधित की जा सकती हैं; गलत लेखा प्रविष्टि सचिव की "
        "उलट प्रविष्टि से निरस्त होती है।")


def test_a_decision_past_its_day_stands_and_the_refusal_names_the_appeal_and_its_last_day(drive):
    drive.start(ONE_COW)
    publish(drive)
    sell(drive)
    drive.fire_past(ist_midnight("2026-02-09"))
    drive.move("2026-02-09T11:00:00+05:30")
    drive.act("sarpanch", "ut_order_stand")
    drive.move("2026-02-10T10:00:00+05:30")
    with pytest.raises(Refused, match="a decision can be corrected only on the day it was made") as refused:
        correct(drive, role="sarpanch")
    then = refused.value.then
    assert then == ("The order stands; it is changed by appeal to the Samiti within 30 days (until 2026-03-11): "
                    "the secretary records the appeal.")
    assert i18n.localize(then, language="hi") == (
        "आदेश यथावत रहता है; इसे 30 दिन के भीतर (बुधवार, 11 मार्च 2026 तक) पंचायत समिति में अपील से ही बदला जा सकता है: "
        "अपील सचिव दर्ज करता है।")
    # the appeal period has ended: its timer, due at this instant, fires first (issue 34, item 3) and
    # the outcome is final; the decision stands, and only what it recorded wrongly can still be amended
    drive.move("2026-03-12T10:00:00+05:30")
    with pytest.raises(Refused, match="the case moved on after the act") as late:
        correct(drive, role="sarpanch")
    assert late.value.then == ("A corrigendum can amend the names and amounts; a wrong ledger entry is undone by the "
                               "secretary's reversing entry.")


def test_the_api_sends_the_next_step_and_the_hindi_page_shows_it(app, drive):
    from .deadline_races import make_tokens
    from .test_web_pages import login, text_of
    drive.start(ONE_COW)
    drive.move("2026-01-06T09:00:00+05:30")
    drive.animal_event("death", tag="RJ-9")
    drive.move("2026-01-14T09:00:00+05:30")  # 01-06 + 7 = 01-13 was the last day
    with drive.sessions() as s:
        act_id = acts.latest(s, drive.case_id).id
    client = app.test_client()
    head = {"Authorization": f"Bearer {make_tokens(drive.sessions, drive.officers)['pound_keeper']}"}
    api = client.post(f"/api/v1/cases/{drive.case_id}/corrections", headers=head,
                      json={"act": act_id, "reason": "wrong case"})
    assert api.status_code == 422
    assert api.get_json()["error"]["then"] == CORRIGENDUM.template
    login(client, "pk")
    form = {"act": str(act_id), "reason": "the cow of case 0002", "step": "check"}
    page = client.post(f"/cases/{drive.case_id}/corrections", data=form)
    assert page.status_code == 422
    text = text_of(page)
    assert "could be corrected until" in text
    assert ("What can be done: A corrigendum can amend the names and amounts; a wrong ledger entry is undone by "
            "the secretary's reversing entry.") in text
    client.post("/language", data={"lang": "hi", "next": "/tasks"})
    page = client.post(f"/cases/{drive.case_id}/corrections", data=form)
    assert page.status_code == 422
    assert "आगे क्या किया जा सकता है: शुद्धि-पत्र से नाम और राशियाँ संशोधित की जा सकती हैं" in text_of(page)
