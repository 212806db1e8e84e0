"""A phone layout that holds (issue 29, item 1): every page the product serves, as each visitor who
sees it (the axe walker's plan, tests/browser/test_axe_in_browser.py), in English and in Hindi, at
360 px in Debian's chromium. A page fails, naming the page and the element, on:

- an element wider than the viewport (sticking out to the right or the left), unless an ancestor
  clips or scrolls it (the diagram's canvas, a scrolling box): that ancestor is measured instead;
- an ordinary word broken across two lines: each visible text node's words (split at spaces and at
  the break points a hyphen, slash or dash gives) are measured with ``Range.getClientRects``; a word
  whose rectangles lie on more than one line is broken, unless it is a long unbroken string (20
  characters or more, or wider than a phone's line) that does not fit its line box: a 60-character
  tag or a SHA-256 may wrap, there is no other way to show it;
- a table caption, a table header or a form label (or legend) narrower than its longest word;
- two labels overlapping on the case diagram (bpmn-js's ``.djs-label`` texts, once drawn);
- a form control out of shape: a radio button or check box larger than 32 px (drawn as a big
  centred circle), or a box to type in narrower than 120 px.

The findings by kind are printed and written to build/layout.json."""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

from playwright.sync_api import Page

from .conftest import SCREENSHOTS
from .test_axe_in_browser import LANGUAGES, build_world, open_as, switch_language, visits
from .test_officers_in_browser import PHONE

ROOT = Path(__file__).resolve().parents[2]
REPORT = ROOT / "build" / "layout.json"
# desktop tools, said so in the axe walker's plan: the administrator's modeler is checked at 1280 px only
DESKTOP_ONLY = {"modeler"}

MEASURE = r"""() => {
  const vw = document.documentElement.clientWidth;
  const found = [];
  const name = (el) => {
    let s = el.tagName.toLowerCase();
    if (el.id) return s + '#' + el.id;
    if (el.classList.length) s += '.' + [...el.classList].slice(0, 2).join('.');
    const up = el.parentElement && el.parentElement.closest('[id]');
    return (up ? up.tagName.toLowerCase() + '#' + up.id + ' ' : '') + s;
  };
  const shown = (el) => {
    const cs = getComputedStyle(el);
    if (cs.visibility === 'hidden' || cs.display === 'none') return false;
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0;
  };
  const hidden = (el) => el.closest('.visually-hidden, .skip, [hidden], details:not([open]) > :not(summary), noscript, script, style, option, textarea, svg, .djs-container');
  // words: runs between spaces and the break points a hyphen, slash or dash gives
  const WORD = /[^\s\-\/\u2010-\u2015\u00b7]+[\-\/\u2010-\u2015]?/gu;
  const probe = document.createElement('span');
  probe.style.cssText = 'position:absolute;left:-9999px;top:0;white-space:nowrap;visibility:hidden';
  document.body.appendChild(probe);
  const natural = (word, el) => {
    const cs = getComputedStyle(el);
    probe.style.font = cs.font; probe.style.letterSpacing = cs.letterSpacing;
    probe.style.textTransform = cs.textTransform;
    probe.textContent = word;
    return probe.getBoundingClientRect().width;
  };
  const contentWidth = (el) => {
    const cs = getComputedStyle(el);
    return el.getBoundingClientRect().width - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight)
      - parseFloat(cs.borderLeftWidth) - parseFloat(cs.borderRightWidth);
  };
  const lineBox = (el) => {  // the nearest block-level box the word's line lies in
    let box = el;
    while (box && box !== document.body && getComputedStyle(box).display.startsWith('inline')) box = box.parentElement;
    return box || document.body;
  };

  // 1. wider than the viewport
  const clipped = (el) => {
    for (let up = el.parentElement; up && up !== document.body; up = up.parentElement) {
      const ox = getComputedStyle(up).overflowX;
      if (ox !== 'visible') return true;
    }
    return false;
  };
  for (const el of document.body.querySelectorAll('*')) {
    if (hidden(el) || !shown(el) || clipped(el)) continue;
    const r = el.getBoundingClientRect();
    if (r.right > vw + 1 || r.left < -1) {
      const parent = el.parentElement;
      const pr = parent.getBoundingClientRect();
      if (parent !== document.body && (pr.right > vw + 1 || pr.left < -1) && !clipped(parent)) continue; // the outermost
      found.push({kind: 'wider than the viewport', element: name(el),
                  detail: `${Math.round(r.left)}..${Math.round(r.right)} px of ${vw}`});
    }
  }
  if (document.documentElement.scrollWidth > vw + 1)
    found.push({kind: 'wider than the viewport', element: 'html',
                detail: `the page scrolls sideways: ${document.documentElement.scrollWidth} px of ${vw}`});

  // 2. words broken across lines
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const el = node.parentElement;
    if (!el || hidden(el) || !shown(el)) continue;
    for (const m of node.data.matchAll(WORD)) {
      const word = m[0];
      if (word.length < 2) continue;
      range.setStart(node, m.index); range.setEnd(node, m.index + word.length);
      const rects = [...range.getClientRects()].filter(r => r.width > 0);
      if (rects.length < 2) continue;
      const tops = rects.map(r => r.top), h = Math.min(...rects.map(r => r.height));
      if (Math.max(...tops) - Math.min(...tops) < h / 2) continue;  // one line
      const box = lineBox(el);
      const wide = natural(word.replace(/[\-\/\u2010-\u2015]$/u, ''), el);
      // a long unbroken string (a tag, a hash, a 60-character name) wider than its line may wrap
      if (wide > contentWidth(box) + 1 && (word.length >= 20 || wide > vw - 40)) continue;
      found.push({kind: 'word broken across lines', element: name(el),
                  detail: `"${word}" (${Math.round(wide)} px) in ${Math.round(contentWidth(box))} px`});
    }
  }

  // 3. captions, headers and labels narrower than their longest word
  for (const el of document.body.querySelectorAll('caption, th, label, legend')) {
    if (hidden(el) || !shown(el)) continue;
    const texts = [], inside = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let t = inside.nextNode(); t; t = inside.nextNode()) if (!hidden(t.parentElement)) texts.push(t.data);
    const words = (texts.join('').match(WORD) || []).map(w => w.replace(/[\-\/\u2010-\u2015]$/u, ''));
    if (!words.length) continue;
    const longest = words.reduce((a, b) => natural(a, el) >= natural(b, el) ? a : b);
    const need = natural(longest, el), have = contentWidth(el);
    if (need > have + 2 && need <= vw - 32)  // 2 px: collapsed borders are half what the style says
      found.push({kind: 'caption, header or label narrower than its longest word', element: name(el),
                  detail: `"${longest}" needs ${Math.round(need)} px, has ${Math.round(have)} px`});
  }

  // 5. form controls out of shape: a radio or check box drawn as a big circle or square, a box to
  // type in too narrow to read what is typed
  for (const el of document.body.querySelectorAll('input, select, textarea')) {
    if (el.type === 'hidden' || hidden(el) || !shown(el)) continue;
    const r = el.getBoundingClientRect();
    if ((el.type === 'radio' || el.type === 'checkbox') && (r.width > 32 || r.height > 32))
      found.push({kind: 'form control out of shape', element: name(el) + `[name=${el.name}]`,
                  detail: `a ${el.type} of ${Math.round(r.width)} × ${Math.round(r.height)} px`});
    else if (el.type !== 'radio' && el.type !== 'checkbox' && r.width < 120)
      found.push({kind: 'form control out of shape', element: name(el) + `[name=${el.name}]`,
                  detail: `${Math.round(r.width)} px wide, too narrow to read what is typed`});
  }

  // 4. labels overlapping on the diagram
  const labels = [...document.querySelectorAll('.djs-container .djs-label')]
    .map(t => ({t, r: t.getBoundingClientRect()})).filter(x => x.r.width > 0 && x.t.textContent.trim());
  for (let i = 0; i < labels.length; i++) for (let j = i + 1; j < labels.length; j++) {
    const a = labels[i].r, b = labels[j].r;
    const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
    const hh = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
    if (w > 1 && hh > 1) {
      const id = (t) => t.closest('[data-element-id]')?.getAttribute('data-element-id');
      found.push({kind: 'labels overlapping on the diagram', element: `${id(labels[i].t)} / ${id(labels[j].t)}`,
                  detail: `"${labels[i].t.textContent.trim()}" and "${labels[j].t.textContent.trim()}"`});
    }
  }
  probe.remove();
  return found;
}"""


def measure(page: Page, where: str) -> list[dict]:
    """What does not hold on the page as it stands at its viewport, each finding under ``where``."""
    return [{**finding, "where": where} for finding in page.evaluate(MEASURE)]


def describe(findings: list[dict]) -> str:
    return "\n".join(f"{f['where']}: {f['kind']}: {f['element']} — {f['detail']}" for f in findings)


def test_every_page_holds_at_360_px_in_both_languages(app, client, browser, live_server, sessions, officers,
                                                      virtual_clock):
    started = time.monotonic()
    world = build_world(client, sessions, officers, virtual_clock)
    plan = {language: visits(world, sessions, language) for language in LANGUAGES}
    findings: list[dict] = []
    pages = 0
    for username in plan["en"]:
        page = open_as(browser, live_server, username)
        page.set_viewport_size(PHONE)
        for language in LANGUAGES:
            switch_language(page, language)
            for label, target, _widths in plan[language][username]:
                if label in DESKTOP_ONLY:
                    continue
                where = f"{username or 'public'} · {label} · {language}"
                page.set_viewport_size(PHONE)
                if callable(target):
                    target(page, live_server)
                else:
                    status = page.goto(live_server + target).status
                    assert status == (404 if label.startswith("not found") else 200), f"{where}: {status}"
                assert page.locator("html").get_attribute("lang") == language, f"{where}: not in {language}"
                findings.extend(measure(page, where))
                if label == "case page":  # the secretary's, of the sold case: the first screen, for docs/screenshots
                    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
                    page.evaluate("window.scrollTo(0, 0)")
                    page.screenshot(path=str(SCREENSHOTS / f"case-page-360-{language}.png"))
                    page.locator("#money").screenshot(path=str(SCREENSHOTS / f"case-money-360-{language}.png"))
                pages += 1
        page.context.close()
    elapsed = time.monotonic() - started
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    REPORT.write_text(json.dumps({"pages": pages, "findings": findings, "seconds": round(elapsed, 1)},
                                 ensure_ascii=False, indent=1))
    counts = Counter(f["kind"] for f in findings)
    print(f"\nlayout at 360 px: {pages} pages in {elapsed:.0f} s, {len(findings)} findings")
    print("\n".join(f"{n:5}  {kind}" for kind, n in counts.most_common()))
    assert pages > 60, f"only {pages} pages visited"
    assert findings == [], f"{len(findings)} places where the 360 px layout does not hold:\n{describe(findings)}"
