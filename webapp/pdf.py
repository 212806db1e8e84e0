"""PDF of a stored document: WeasyPrint renders the document's exact stored HTML with
``static/documents.css``.

WeasyPrint needs Pango (Debian: libpango-1.0-0, libpangoft2-1.0-0, libharfbuzz-subset0) and, for
Hindi and the rupee sign, a Devanagari font (fonts-lohit-deva); ``scripts/setup-pdf.sh`` installs
them where they are missing. It is imported at the first PDF, not at start-up, so the rest of the
application runs where Pango is missing: the PDF is then refused with :class:`PdfUnavailable`
(HTTP 503) and the printable page still works.

The output depends only on the HTML, the stylesheet, the fonts and the WeasyPrint version: the same
stored document gives the same bytes on every reprint (WeasyPrint writes no creation date unless
the HTML names one). Nothing is fetched while rendering: any URL in the HTML is refused.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from .errors import Rule130Error

log = logging.getLogger("rule130.pdf")
logging.getLogger("weasyprint.progress").setLevel(logging.WARNING)  # one INFO line per layout step otherwise

STYLESHEET = Path(__file__).parent / "static" / "documents.css"
_weasyprint: Any = None
_stylesheet: Any = None


class PdfUnavailable(Rule130Error):
    """WeasyPrint or the system libraries it needs (Pango) are missing on this server (HTTP 503)."""

    code = "pdf_unavailable"
    status = 503


def _refuse_urls(url: str, *args: Any, **kwargs: Any) -> dict[str, Any]:
    raise ValueError(f"documents are rendered without fetching anything ({url})")


def _load() -> Any:
    global _weasyprint, _stylesheet
    if _weasyprint is None:
        try:
            import weasyprint
        except (ImportError, OSError) as error:  # OSError: Pango's shared libraries are not installed
            log.error("PDF rendering is unavailable: %s", error)
            raise PdfUnavailable("PDF rendering is not available on this server (WeasyPrint needs Pango: run "
                                 "scripts/setup-pdf.sh); the printable page of the document works") from error
        _stylesheet = weasyprint.CSS(filename=str(STYLESHEET), url_fetcher=_refuse_urls)
        _weasyprint = weasyprint
    return _weasyprint


def render(html: str) -> bytes:
    """The PDF (bytes) of a whole HTML page ``html`` (UTF-8 text with ``<meta charset="utf-8">``),
    laid out with ``static/documents.css``; A4 pages.

    Raises:
        PdfUnavailable: WeasyPrint cannot be loaded here.
    """
    weasyprint = _load()
    document = weasyprint.HTML(string=html, url_fetcher=_refuse_urls)
    return document.write_pdf(stylesheets=[_stylesheet])
