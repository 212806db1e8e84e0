"""Hindi as a Hindi-speaking officer writes it (issue 29, item 4; docs/glossary.md):

- no catalogue string has a wrong form found so far: a feminine noun with a masculine verb
  ("सूचना … जारी होता है", "नीलामी … भेजा गया"), a noun in the direct case before a postposition
  ("उचंत खाता में" for "उचंत खाते में"), two postpositions on a place ("तालाब के पास पर");
- what an act did is said in the past once it is confirmed (Follow.done), in the present on the
  check step;
- a sentence ends with its full stop: "।" in Hindi wherever the English ends with ".".
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

from webapp import i18n
from webapp.i18n import M_
from webapp.services.running.follows import FROM_ACCOUNT, PAST, TO_ACCOUNT, Follow

ROOT = Path(__file__).resolve().parent.parent
HI_PO = ROOT / "webapp" / "translations" / "hi" / "LC_MESSAGES" / "messages.po"
ABBREVIATIONS = {"No."}  # English abbreviations that end with a dot but are not sentences

# (what is wrong, a pattern that finds it in Hindi text)
WRONG_FORMS = [
    ("a feminine noun (सूचना, नीलामी, अपील, आपत्ति, राशि) as the subject of a masculine verb",
     re.compile(r"(सूचना|नीलामी|अपील|आपत्ति|राशि)(?:\s(?!के|की|का|में|से|को|पर|ने|और|या)\S+){0,3}\s"
                r"(जारी होता|जारी किया गया|भेजा गया|खोला गया|प्रकाशित हुआ)")),
    ("a masculine verb after a document of either gender (%(document)s: सूचना f., आदेश m.)",
     re.compile(r"%\(document\)s[^।;:]{0,30}(होता है|हुआ|किया गया)")),
    ("खाता in the direct case before a postposition (खाते में, खाते से, खाते को)",
     re.compile(r"खाता (में|से|को|पर|के|की|का)(\s|$|[।,;:)])")),
    ("two postpositions on a place (के पास पर, के पास में)", re.compile(r"के पास (पर|में)\b")),
    ("a place the officer wrote, then पर/में: the place may end with its own postposition (use से पकड़े)",
     re.compile(r"%\(seized\)s (पर|में) पकड़")),
]


def hindi_entries() -> list[tuple[str, str]]:
    with HI_PO.open("rb") as f:
        catalogue = read_po(f, locale="hi")
    found = []
    for message in catalogue:
        if not message.id:
            continue
        ids = message.id if isinstance(message.id, tuple) else (message.id,)
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        found += [(ids[min(i, len(ids) - 1)], s) for i, s in enumerate(strings) if s]
    return found


def wrong_forms(text: str) -> list[str]:
    return [what for what, pattern in WRONG_FORMS if pattern.search(text)]


@pytest.mark.parametrize("sentence, wrong", [
    ("सूचना RMP/N/1 जारी होता है", True), ("%(document)s %(number)s जारी होता है", True),
    ("₹500 स्वामी से उचंत खाता में जाते हैं", True), ("नीलामी बिक्री हेतु भेजा गया", True),
    ("तालाब के पास पर पकड़े गए", True), ("%(seized)s पर पकड़े और निरुद्ध", True),
    ("सशर्त नीलामी आज खोला गया", True), ("सूचना की अवधि समाप्त होने पर क्या होता है", False),
    ("दस्तावेज़ जारी हुआ: सूचना RMP/N/1", False), ("₹500 स्वामी से उचंत खाते में गए", False),
    ("तालाब के पास से पकड़े गए", False), ("सूचना प्रकाशित हुई", False),
])
def test_the_grammar_check_finds_the_wrong_forms_reported(sentence, wrong):
    assert bool(wrong_forms(sentence)) is wrong, sentence


def test_no_hindi_catalogue_string_has_a_wrong_form():
    entries = hindi_entries()
    assert len(entries) > 1000
    found = [(english, hindi, wrong_forms(hindi)) for english, hindi in entries if wrong_forms(hindi)]
    assert found == []


def test_a_hindi_sentence_ends_with_the_danda_where_the_english_ends_with_a_full_stop():
    entries = hindi_entries()
    missing = [(e, h) for e, h in entries
               if e.rstrip().endswith(".") and e.strip() not in ABBREVIATIONS and not h.rstrip().endswith("।")]
    assert missing == []
    western = [(e, h) for e, h in entries if h.rstrip().endswith(".") and not e.rstrip().endswith(("s", "min", "h"))]
    assert western == []  # a Hindi sentence never ends with "." (abbreviations such as "से." for seconds aside)
    extra = [(e, h) for e, h in entries if h.rstrip().endswith("।") and not e.rstrip().endswith((".", "?", "!"))]
    assert extra == []


def test_a_ledger_entry_puts_its_accounts_in_the_oblique_case():
    text = M_("%(amount)s goes %(source)s %(target)s (%(kind)s)", amount="₹500.00",
              source=M_(FROM_ACCOUNT["owner"]), target=M_(TO_ACCOUNT["suspense"]), kind=M_("fine"))
    assert text == "₹500.00 goes from the owner to the suspense account (fine)"
    assert i18n.localize(text, language="hi").startswith("₹500.00 स्वामी से उचंत खाते में जाते हैं (")
    done = Follow(text).done().text
    assert done == "₹500.00 went from the owner to the suspense account (fine)"
    assert i18n.localize(done, language="hi").startswith("₹500.00 स्वामी से उचंत खाते में गए (")


def test_what_a_confirmed_act_did_is_said_in_the_past():
    undone = Follow(M_("the act “%(act)s” is undone: the case is back as it was before it", act=M_("Death recorded")))
    assert i18n.localize(undone.text, language="hi").startswith("कार्य “मृत्यु")
    assert "पलटा जाता है" in i18n.localize(undone.text, language="hi")  # the check step: what will follow
    said = i18n.localize(undone.done().text, language="hi")
    assert "पलटा गया: प्रकरण उससे पहले की स्थिति में लौट आया" in said
    issued = Follow(M_("%(document)s %(number)s is issued", document=M_("Notice"), number="RMP/N/1"), 7).done()
    assert (issued.text, issued.document_id) == ("Notice RMP/N/1 was issued", 7)
    assert i18n.localize(issued.text, language="hi").startswith("दस्तावेज़ जारी हुआ: ")
    assert len(PAST) >= 20 and all(past != present for present, past in PAST.items())
    same = Follow(M_("the auction is now %(status)s", status=M_("open")))
    assert same.done() is same  # how things stand reads the same before and after
