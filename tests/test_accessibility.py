"""Phone-first, accessible pages: every form control has a label, the page declares its language
and charset, the colours of text pass WCAG 2.1 AA contrast (4.5:1; focus rings 3:1), and the pages
work as plain HTML forms (no script is needed to complete a task)."""

from __future__ import annotations

import re
from pathlib import Path

import lxml.html
import pytest

from .test_case_page import sold_to_bidder_b
from .test_web_pages import login

CSS = Path(__file__).resolve().parent.parent / "webapp" / "static" / "style.css"


def luminance(colour: str) -> float:
    """WCAG 2.1 relative luminance of #rrggbb."""
    channels = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def css_colours() -> dict[str, str]:
    """The style sheet's colour variables as #rrggbb (#fff -> #ffffff)."""
    found = re.findall(r"--([\w-]+):\s*#([0-9a-fA-F]{6}|[0-9a-fA-F]{3})\b", CSS.read_text())
    return {name: "#" + (value if len(value) == 6 else "".join(ch * 2 for ch in value)) for name, value in found}


def test_text_colours_pass_wcag_aa_contrast():
    c = css_colours()
    text_pairs = {  # (text, background) as the style sheet pairs them
        "body text": (c["ink"], c["bg"]), "muted text": (c["muted"], c["bg"]), "muted on a card": (c["muted"], c["card"]),
        "links": (c["accent"], c["card"]), "links on the page": (c["accent"], c["bg"]),
        "header and buttons": (c["accent-ink"], c["accent"]), "success": (c["ok"], c["ok-bg"]),
        "errors": (c["bad"], c["bad-bg"]), "unread": (c["ink"], c["unread"]), "badge": (c["ink"], c["focus"]),
        "role badge in the header": (c["accent-ink"], c["accent-deep"]),
    }
    failing = {name: round(contrast(*pair), 2) for name, pair in text_pairs.items() if contrast(*pair) < 4.5}
    assert failing == {}
    assert round(contrast(c["muted"], c["bg"]), 2) == 5.53
    # focus rings: ink on light backgrounds, amber on the blue header (WCAG 1.4.11: 3:1)
    assert contrast(c["ink"], c["card"]) >= 3 and contrast(c["focus"], c["accent"]) >= 3
    assert contrast(c["focus"], c["accent-deep"]) >= 3  # a focused link beside the role badge
    assert ":focus-visible" in CSS.read_text()


def unlabelled_controls(html: str) -> list[str]:
    """Form controls without a label (label[for], a wrapping label, or aria-label)."""
    doc = lxml.html.fromstring(html)
    labelled = set(doc.xpath("//label/@for"))
    missing = []
    for control in doc.xpath("//input[not(@type='hidden') and not(@type='submit')]|//select|//textarea"):
        if control.get("aria-label") or control.xpath("ancestor::label"):
            continue
        if control.get("id") and control.get("id") in labelled:
            continue
        missing.append(lxml.html.tostring(control, encoding="unicode")[:120])
    return missing


@pytest.mark.parametrize("language", ["en", "hi"])
def test_every_page_labels_its_controls_and_declares_language_and_charset(app, client, sessions, virtual_clock,
                                                                          language):
    case_id = sold_to_bidder_b(client, sessions, virtual_clock)  # the secretary is signed in
    client.post("/language", data={"lang": language, "next": "/tasks"})
    pages = ["/tasks", "/cases", "/cases?q=RJ-1001", f"/cases/{case_id}", f"/cases/{case_id}/notice", "/inbox",
             "/board", "/preferences"]
    login(client, "pk")
    client.post("/language", data={"lang": language, "next": "/tasks"})
    pages_pk = ["/cases/new", f"/cases/{case_id}"]
    public = app.test_client()
    public.set_cookie("lang", language)
    for who, paths in ((client, pages_pk), (public, ["/login", "/board"])):
        for path in paths:
            page = who.get(path)
            assert page.status_code == 200, path
            html = page.get_data(as_text=True)
            assert f'<html lang="{language}">' in html and '<meta charset="utf-8">' in html, path
            assert 'name="viewport"' in html, path
            assert unlabelled_controls(html) == [], path
            # plain forms: every form posts or gets to a URL of its own; no onclick or javascript: links
            doc = lxml.html.fromstring(html)
            assert all(form.get("action") for form in doc.xpath("//form")), path
            assert not doc.xpath("//*[@onclick]|//a[starts-with(@href, 'javascript:')]"), path
    login(client, "sec")
    client.post("/language", data={"lang": language, "next": "/tasks"})
    for path in pages:
        page = client.get(path)
        assert page.status_code == 200, path
        assert unlabelled_controls(page.get_data(as_text=True)) == [], path
