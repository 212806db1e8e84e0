"""Control characters (and lone surrogates) in submitted text: refused wherever text enters the product.

A NUL (U+0000) or another control character in a name or a note is never intended: PostgreSQL
cannot store a NUL in a text column (the act would fail after its checks passed), and a page or a
PDF would carry it on. Tab, line feed and carriage return are ordinary text in a text area; a
one-line field (a name, a tag, a place) refuses them, and invisible characters too
(:func:`check_one_line`). Used by the services
(so the simulator and the CLI are covered) and by a hook on every web request (forms, query
strings and JSON bodies, so every field of every page and API call is covered).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from typing import Any

from webapp.errors import Refused
from webapp.i18n import M_

# C0 controls and DEL, less \t \n \r; the bidirectional embedding, override and isolate controls
# (U+202A-U+202E, U+2066-U+2069), which make a name show reversed ("\u202eevil" reads "live") in
# pages, registers and documents; and lone surrogates (U+D800-U+DFFF, from a JSON "\ud800"), which
# are not text: no encoding can store them
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
# what ends a line: CR, LF, VT, FF, NEL, the line and paragraph separators (as str.splitlines, less
# the information separators U+001C-U+001E, which CONTROL refuses anyway)
LINE_BREAK = re.compile("[\r\n\x0b\x0c\x85\u2028\u2029]")


def is_blank(text: Any) -> bool:
    """True when ``text`` is None, or text made only of whitespace and invisible format characters
    (Unicode category Cf: zero-width space U+200B, joiners U+200C/U+200D, BOM U+FEFF, soft hyphen...),
    which a reader cannot see: a required field holding only these is empty."""
    if text is None:
        return True
    return isinstance(text, str) and all(ch.isspace() or unicodedata.category(ch) == "Cf" for ch in text)


# Kept in names: the zero-width non-joiner and joiner (U+200C, U+200D), which choose how Devanagari
# letters join (क्‍ष, र्‍), so a name typed on a Hindi keyboard may carry them.
JOINERS = "\u200c\u200d"


def first_invisible(text: str) -> str | None:
    """The first tab or invisible format character (Unicode category Cf: zero-width space U+200B,
    word joiner U+2060, BOM U+FEFF, soft hyphen U+00AD, direction marks...) of ``text`` other than
    :data:`JOINERS`, as ``U+XXXX``; None when there is none."""
    for ch in text:
        if ch == "\t" or (unicodedata.category(ch) == "Cf" and ch not in JOINERS):
            return f"U+{ord(ch):04X}"
    return None


def check_one_line(value: Any, field: str, label: Any) -> None:
    """Refuse a single-line field (a name, a tag, a place) whose text holds a line break: a tag
    ``T\\r\\n1`` would be stored and never found as ``T1``; or a tab or an invisible character
    (:func:`first_invisible`): "Ramu" and "Ramu" with a zero-width space look the same on every
    page, register and receipt, yet would be two names (two objectors, a tag never found).

    Args:
        field: the field's name (the key of the field error); label: how the message names it.
    Raises:
        Refused: naming the field's label (and the character), with ``{field: ...}`` as the field error.
    """
    if not isinstance(value, str):
        return
    if LINE_BREAK.search(value):
        raise Refused(M_("%(label)s must be on one line; remove the line break and send it again", label=label),
                      {field: M_("must be on one line")})
    code = None if is_blank(value) else first_invisible(value)  # a blank value is the caller's: no value
    if code is not None:
        raise Refused(M_("%(label)s contains a tab or an invisible character (%(code)s); remove it and send it "
                         "again", label=label, code=code), {field: M_("contains an invisible character")})


def first_control(text: str) -> str | None:
    """The first control character of ``text`` as ``U+XXXX``, or None when there is none."""
    found = CONTROL.search(text)
    return f"U+{ord(found.group()):04X}" if found else None


def check(value: Any, field: str, label: Any = None) -> None:
    """Refuse ``value`` (any JSON-like value: text, list, dict) when any text in it holds a control
    character.

    Args:
        field: the field's name as the caller knows it (``place_seized``, ``animals[0].tag``).
        label: how the message names it (default: the field's name).
    Raises:
        Refused: naming the field and the character, with ``{field: ...}`` as the field error.
    """
    for where, text in _texts(value, field):
        code = first_control(text)
        if code is not None:
            named = label if label is not None and where == field else where
            if "D800" <= code[2:] <= "DFFF":
                raise Refused(M_("%(label)s contains a character that is not valid text (%(code)s); remove it "
                                 "and send it again", label=named, code=code),
                              {where.split("[")[0].split(".")[0]: M_("contains a character that is not valid text")})
            raise Refused(M_("%(label)s contains a control character (%(code)s); remove it and send it again",
                             label=named, code=code),
                          {where.split("[")[0].split(".")[0]: M_("contains a control character")})


def _texts(value: Any, where: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and first_control(key):
                yield where, key
            yield from _texts(item, f"{where}.{key}" if where else str(key))
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from _texts(item, f"{where}[{index}]")


def required_line(value: Any, label: str, field: str) -> str:
    """``value`` as a required one-line text of at most 200 characters, stripped: refused (naming
    ``label``, with the error at ``field``) when it is not text, blank (zero-width characters alone
    count as blank), holds a control character or a line break, or is longer.

    Raises:
        Refused: as above.
    """
    if value is not None and not isinstance(value, str):
        raise Refused(M_("%(label)s must be text", label=label), {field: M_("not text")})
    text = (value or "").strip()
    check(text, field, label)
    if is_blank(text):  # zero-width characters alone are as empty as spaces
        raise Refused(M_("%(label)s is required", label=label), {field: M_("this field is required")})
    check_one_line(text, field, label)
    if len(text) > 200:
        raise Refused(M_("%(label)s is longer than 200 characters", label=label), {field: M_("too long")})
    return text
