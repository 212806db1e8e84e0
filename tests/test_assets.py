"""Pages fast on a village connection (issue 32, item 4; webapp/web/assets.py): responses compressed,
static files linked under content-hashed names with a year's immutable cache, and never an old
hashed copy for a file that changed since its manifest was written."""

from __future__ import annotations

import gzip
import hashlib
import os
import re
import shutil

from webapp.web import assets


def test_pages_are_compressed_for_a_browser_that_accepts_it(client):
    plain = client.get("/board")
    packed = client.get("/board", headers={"Accept-Encoding": "gzip"})
    assert packed.headers["Content-Encoding"] == "gzip"
    assert "Accept-Encoding" in packed.headers["Vary"]
    assert gzip.decompress(packed.data) == plain.data
    assert len(packed.data) < len(plain.data)


def test_a_page_links_the_hashed_style_sheet_which_is_cached_for_a_year_as_immutable(client):
    assert assets.manifest_is_current(), "scripts/setup.sh runs rule130 digest-static"
    html = client.get("/board").get_data(as_text=True)
    link = re.search(r'href="(/static/style-([0-9a-f]{32})\.css)"', html)
    assert link, "the page links style.css under its hashed name"
    assert link.group(2) == hashlib.md5((assets.STATIC / "style.css").read_bytes()).hexdigest()
    served = client.get(link.group(1))
    assert served.status_code == 200
    assert served.headers["Cache-Control"] == "max-age=315360000, public, immutable"
    assert served.headers["X-Content-Type-Options"] == "nosniff"
    assert served.data == (assets.STATIC / "style.css").read_bytes()
    packed = client.get(link.group(1), headers={"Accept-Encoding": "gzip"})
    assert packed.headers["Content-Encoding"] == "gzip" and gzip.decompress(packed.data) == served.data
    # the plain name stays served, for a minute only
    assert client.get("/static/style.css").headers["Cache-Control"] == "max-age=60, public"


def test_a_manifest_older_than_a_file_it_lists_is_not_used(tmp_path):
    static = tmp_path / "static"
    static.mkdir()
    shutil.copy(assets.STATIC / "style.css", static / "style.css")
    (static / "app.js").write_text("console.log(1);\n", encoding="utf-8")
    assert assets.compile_digests(static) == 2
    assert assets.manifest_is_current(static)
    written = (static / "cache_manifest.json").stat().st_mtime
    os.utime(static / "cache_manifest.json", (written - 5, written - 5))  # app.js edited after it
    assert not assets.manifest_is_current(static)
    assert assets.compile_digests(static) == 2  # compiled again: old copies gone, the new one listed
    assert assets.manifest_is_current(static)
    assert len(list(static.glob("app-*.js"))) == 1
