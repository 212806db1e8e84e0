"""The tree as committed: no file carries a merge's conflict markers (a style sheet once kept them,
and the browser silently dropped the rules between them)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MARKER = re.compile(r"^(<{7}|>{7})( |$)|^={7}$", re.MULTILINE)


def test_no_tracked_file_carries_merge_conflict_markers():
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    found = []
    for name in filter(None, listed.decode().split("\0")):
        path = ROOT / name
        if not path.is_file() or path.suffix in {".png", ".pdf", ".ico", ".woff", ".woff2"}:
            continue
        text = path.read_bytes().decode("utf-8", errors="replace")
        found += [f"{name}:{text.count(chr(10), 0, m.start()) + 1}" for m in MARKER.finditer(text)]
    assert not found, f"merge conflict markers left in: {found}"
