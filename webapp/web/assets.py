"""Pages fast on a village connection: responses compressed, static files under content-hashed names
with a long, immutable cache (issue 32, item 4).

- **Compression**: Flask-Compress compresses HTML, JSON, CSS and JavaScript responses (zstd, br,
  gzip or deflate, as the browser accepts). The form token in a page is signed afresh on every
  response (Flask-WTF), so compression gives no BREACH-style oracle on it.
- **Hashed names**: Flask-Static-Digest writes ``style-<md5>.css`` beside ``style.css`` (with its
  gzip copy) and a ``cache_manifest.json``; templates ask ``static_url_for('static', filename=…)``
  and get the hashed name. ``rule130 digest-static`` (run by ``scripts/setup.sh``) compiles them.
  A manifest older than any file it lists is not used — a page then links the plain names, which
  are never cached for long — so an edited style sheet is never hidden behind an old hashed name.
- **Serving**: WhiteNoise serves ``webapp/static`` under ``/static/``: a hashed name with
  ``Cache-Control: max-age=31536000, immutable`` (a warm page makes no request for it at all), the
  plain names for a minute; the pre-compressed copy when the browser accepts it.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import re
from pathlib import Path
from typing import Any

from flask import Flask

STATIC = Path(__file__).resolve().parents[1] / "static"
MANIFEST = STATIC / "cache_manifest.json"
# Flask-Static-Digest's names: the md5 of the content before the extension
HASHED = re.compile(r"-[0-9a-f]{32}\.[A-Za-z0-9]+(?:\.gz)?$")
NOT_DIGESTED = [".map", ".txt", ".gz", ".br"]  # source maps and licences are not linked from pages
YEAR = 365 * 24 * 3600
log = logging.getLogger(__name__)


def compile_digests(static: Path = STATIC) -> int:
    """Write the hashed copies (and their gzip) of every static file, and the manifest; old copies
    removed first. Returns the number of files in the manifest. Source: Flask-Static-Digest's
    ``digester.compile`` (md5 of the content in the name)."""
    from flask_static_digest import digester
    folder = str(static) + "/"
    with contextlib.redirect_stdout(io.StringIO()):  # the library prints where it wrote
        digester.clean(folder, NOT_DIGESTED, gzip_files=True, brotli_files=False)
        digester.compile(folder, folder, NOT_DIGESTED, gzip_files=True, brotli_files=False)
    return len(json.loads((static / "cache_manifest.json").read_text(encoding="utf-8")))


def manifest_is_current(static: Path = STATIC) -> bool:
    """True when the manifest exists and no file it lists is newer than it (its hashed copies then
    hold what the plain files hold)."""
    manifest = static / "cache_manifest.json"
    try:
        listed: dict[str, str] = json.loads(manifest.read_text(encoding="utf-8"))
        written = manifest.stat().st_mtime
        return all((static / plain).stat().st_mtime <= written and (static / hashed).is_file()
                   for plain, hashed in listed.items())
    except (OSError, ValueError):
        return False


def _immutable(path: str, url: str) -> bool:
    """WhiteNoise's test: a hashed name never changes its content."""
    return bool(HASHED.search(url))


def _headers(headers: Any, path: str, url: str) -> None:
    """What Flask's responses carry too (webapp/web/access/hardening.py): no type sniffing."""
    headers["X-Content-Type-Options"] = "nosniff"


def init_app(app: Flask) -> None:
    """Compress the responses of ``app``, give its templates ``static_url_for`` and serve
    ``webapp/static`` through WhiteNoise (the wrapping WSGI application)."""
    from flask_compress import Compress
    from flask_static_digest import FlaskStaticDigest
    from whitenoise import WhiteNoise

    app.config.setdefault("COMPRESS_MIMETYPES", ["text/html", "text/css", "text/csv", "text/javascript",
                                                 "application/javascript", "application/json", "application/xml",
                                                 "text/xml", "image/svg+xml"])
    app.config.setdefault("COMPRESS_MIN_SIZE", 500)
    Compress(app)
    digests = FlaskStaticDigest(app)
    if not manifest_is_current():
        if MANIFEST.exists():
            log.warning("static files changed since %s was written: serving their plain names "
                        "(run rule130 digest-static)", MANIFEST)
        digests.manifests.clear()
    served: Any = WhiteNoise(app.wsgi_app, root=str(STATIC), prefix="static/", max_age=60,
                             immutable_file_test=_immutable, add_headers_function=_headers)
    app.wsgi_app = served  # type: ignore[method-assign]
