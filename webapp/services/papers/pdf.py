"""PDF of a whole HTML page, printed by headless Chromium (Debian's ``chromium``) through Playwright.

Why Chromium: its print-to-PDF writes a *tagged* PDF (a structure tree, ``/MarkInfo``, ``/Lang``)
whose text layer reads back as the text of the page, Devanagari included (issue 20: WeasyPrint 70
mapped Hindi glyphs to garbled text).

One browser per process, started at the first PDF and shared by every request: a daemon thread
runs an asyncio loop that owns Playwright, the browser and one page; :func:`render` hands the page
to that thread and waits. An ``asyncio.Lock`` lets one PDF be printed at a time. A browser that
died (crashed, killed) is started again and the PDF retried once; one that does not answer within
:data:`RENDER_TIMEOUT` seconds is closed, and the next PDF starts a new one. The browser stays up
(about 0.5 GB; ``rule130 serve`` starts it at once: :meth:`Renderer.start`) unless
``RULE130_PDF_IDLE_SECONDS`` is set: then it is closed after that many seconds without a PDF, and
the next PDF starts it again (1–3 s). A forked process (gunicorn) starts its own.

The page is printed as it is: JavaScript off, every network request refused (the page must carry
its stylesheet; its fonts are the system's: fonts-lohit-deva, fonts-dejavu-core). The PDF is then
rewritten with pypdf so that it depends only on the page: Chromium writes the instant of printing
as the creation date, replaced here by the instants given (a document's issue and cancellation);
the title, subject and keywords come from the page's ``<title>`` and ``<meta name="description">``
/ ``<meta name="keywords">``, and the file identifier from the SHA-256 of the page. The same page
gives the same bytes on every reprint, as long as the Chromium version, the fonts and the page's
stylesheet stay the same.

Where Chromium (``RULE130_CHROMIUM``, default ``/usr/bin/chromium``) or the Python package
``playwright`` is missing, or the browser cannot start, :func:`render` raises
:class:`PdfUnavailable` (HTTP 503 with a message; the printable page of a document still works).
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import hashlib
import io
import logging
import os
import threading
import time
from datetime import UTC, datetime
from typing import Any

import lxml.html

from webapp.errors import Rule130Error
from webapp.i18n import M_

log = logging.getLogger("rule130.pdf")

CHROMIUM = "/usr/bin/chromium"  # Debian's package; RULE130_CHROMIUM names another executable
# MACHINE.md's recipe. No sandbox: the browser prints only pages this product made, with JavaScript
# and the network off (and Chromium's sandbox cannot start as root or in most containers).
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-extensions", "--mute-audio"]
RENDER_TIMEOUT = 15.0  # seconds the browser may take to start, and then to print one PDF, before it is taken as hung
WAIT_TIMEOUT = 60.0  # seconds a request waits in all, in line behind other PDFs included
IDLE_SECONDS = None  # by default the browser stays up (RULE130_PDF_IDLE_SECONDS closes it after that long unused)
RETRY_AFTER = 30.0  # after a failed start, seconds during which PDFs are refused without trying again

UNAVAILABLE = M_("PDF files cannot be made on this server: it needs the Chromium browser "
                 "(scripts/setup-pdf.sh installs it). The printable page of the document works.")
FAILED = M_("The PDF could not be made just now. Try again in a minute; the printable page of the document works.")


class PdfUnavailable(Rule130Error):
    """No PDF can be made here now: Chromium or Playwright is missing, the browser does not start,
    or it did not answer in time (HTTP 503)."""

    code = "pdf_unavailable"
    status = 503


class Renderer:
    """Prints pages to PDF with one long-lived Chromium (module docstring); thread-safe.

    Args:
        executable: the Chromium executable (path).
        render_timeout: seconds the browser may take to start, and then to print one PDF, before
            it is taken as hung (closed, and started again for the next PDF).
        idle_seconds: seconds without a PDF after which the browser is closed (None: never).
    """

    def __init__(self, executable: str = CHROMIUM, *, render_timeout: float = RENDER_TIMEOUT,
                 idle_seconds: float | None = IDLE_SECONDS) -> None:
        self.executable = executable
        self.render_timeout = render_timeout
        self.idle_seconds = idle_seconds
        self.pid = os.getpid()  # a forked child must not use its parent's thread or browser
        self.launches = 0  # browsers started so far (a restart after a crash counts)
        self._start_lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock: asyncio.Lock | None = None  # one PDF at a time (created in the loop's thread)
        self._playwright: Any = None
        self._browser: Any = None
        self._page: Any = None
        self._idle: asyncio.TimerHandle | None = None
        self._retry_after = 0.0
        self._last_used = 0.0  # time.monotonic() of the last PDF

    # -- the caller's side ----------------------------------------------------------------------

    def pdf(self, html: str) -> bytes:
        """Chromium's PDF of the page ``html`` (a whole HTML document, UTF-8 text), as printed:
        A4 unless the page's CSS ``@page`` says otherwise, backgrounds printed, tagged.

        Raises:
            PdfUnavailable: Chromium or Playwright is missing, the browser does not start, or it did
                not print within ``render_timeout`` seconds (it is then restarted for the next PDF).
        """
        if not (os.path.isfile(self.executable) and os.access(self.executable, os.X_OK)):
            log.error("PDF rendering is unavailable: no Chromium executable at %s", self.executable)
            raise PdfUnavailable(UNAVAILABLE)
        if time.monotonic() < self._retry_after:
            raise PdfUnavailable(UNAVAILABLE)
        future = asyncio.run_coroutine_threadsafe(self._print(html), self._ensure_loop())
        try:
            return future.result(WAIT_TIMEOUT)
        except concurrent.futures.TimeoutError:
            future.cancel()
            log.error("no PDF after %s s waiting (PDFs ahead of it, or a hung browser)", WAIT_TIMEOUT)
            raise PdfUnavailable(FAILED) from None

    def start(self) -> None:
        """Start the browser now, in the background (returns at once), so that the first PDF does
        not wait for it; a failure is logged, and the first PDF tries again."""
        if not os.path.isfile(self.executable):
            log.warning("no Chromium at %s: PDFs will answer 503", self.executable)
            return
        asyncio.run_coroutine_threadsafe(self._warm(), self._ensure_loop())

    def close(self, timeout: float = 10.0) -> None:
        """Close the browser and Playwright and stop the thread (the next :meth:`pdf` starts them
        again). Waits at most ``timeout`` seconds."""
        loop = self._loop
        if loop is None or self.pid != os.getpid() or not loop.is_running():
            return
        try:
            asyncio.run_coroutine_threadsafe(self._stop_locked(), loop).result(timeout)
        except Exception as error:  # at exit: the browser goes with the process anyway
            log.warning("closing the PDF browser: %s", error)
        loop.call_soon_threadsafe(loop.stop)
        self._loop = None

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self._start_lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                ready = threading.Event()

                def run() -> None:
                    asyncio.set_event_loop(loop)
                    self._lock = asyncio.Lock()
                    loop.call_soon(ready.set)
                    loop.run_forever()
                    loop.close()

                threading.Thread(target=run, name="rule130-pdf", daemon=True).start()
                ready.wait()
                self._loop = loop
            return self._loop

    # -- the browser's thread -------------------------------------------------------------------

    async def _print(self, html: str) -> bytes:
        assert self._lock is not None
        async with self._lock:
            if self._idle is not None:
                self._idle.cancel()
                self._idle = None
            try:
                return await self._print_retrying(html)
            finally:
                self._last_used = time.monotonic()
                if self._browser is not None and self.idle_seconds is not None:
                    self._idle = asyncio.get_running_loop().call_later(
                        self.idle_seconds, lambda: asyncio.ensure_future(self._stop_when_idle()))

    async def _print_retrying(self, html: str) -> bytes:
        """One PDF; a browser that fails (died, or its page broke) is replaced and the PDF tried once more."""
        for attempt in (1, 2):
            try:
                page = await self._ready_page()  # a launch is bounded by Playwright's own timeout
                return await asyncio.wait_for(self._print_on(page, html), self.render_timeout)
            except PdfUnavailable:
                raise
            except TimeoutError:
                log.error("Chromium did not print a PDF within %s s: restarting it", self.render_timeout)
                await self._stop()
                raise PdfUnavailable(FAILED) from None
            except Exception as error:  # playwright.Error: the browser died, or the page broke
                await self._stop()
                if attempt == 2:
                    log.error("Chromium failed twice to print a PDF: %s", error)
                    raise PdfUnavailable(FAILED) from error
                log.warning("Chromium failed to print a PDF (%s): starting a new browser", error)
        raise AssertionError("unreachable")

    async def _print_on(self, page: Any, html: str) -> bytes:
        await page.set_content(html, wait_until="load")
        printed: bytes = await page.pdf(print_background=True, prefer_css_page_size=True, tagged=True, format="A4")
        return printed

    async def _ready_page(self) -> Any:
        if self._page is not None and self._browser is not None and self._browser.is_connected():
            return self._page
        await self._stop()
        try:
            from playwright.async_api import async_playwright
        except ImportError as error:
            log.error("PDF rendering is unavailable: %s", error)
            raise PdfUnavailable(UNAVAILABLE) from error
        try:
            self._playwright = await async_playwright().start()
            self._browser = await self._playwright.chromium.launch(
                executable_path=self.executable, args=ARGS, headless=True, timeout=self.render_timeout * 1000)
        except Exception as error:  # not a Chromium, or it cannot start here (libraries, memory)
            log.error("PDF rendering is unavailable: Chromium at %s does not start: %s", self.executable, error)
            await self._stop()
            self._retry_after = time.monotonic() + RETRY_AFTER
            raise PdfUnavailable(UNAVAILABLE) from error
        self.launches += 1
        context = await self._browser.new_context(java_script_enabled=False, offline=True)
        await context.route("**/*", lambda route: route.abort())  # nothing is fetched while printing
        self._page = await context.new_page()
        self._page.set_default_timeout(self.render_timeout * 1000)
        return self._page

    async def _warm(self) -> None:
        assert self._lock is not None
        async with self._lock:
            try:
                await self._ready_page()
            except Exception as error:  # logged by _ready_page; the first PDF tries again
                log.warning("the PDF browser did not start in advance: %s", error)
            else:
                log.info("PDF browser started (Chromium at %s)", self.executable)

    async def _stop_when_idle(self) -> None:
        """Close the browser if no PDF was printed for ``idle_seconds`` (one may have come in since
        the timer fired: it then set a new timer)."""
        assert self._lock is not None and self.idle_seconds is not None
        async with self._lock:
            if time.monotonic() - self._last_used >= self.idle_seconds - 0.05:  # asyncio may fire a hair early
                self._idle = None
                await self._stop()

    async def _stop_locked(self) -> None:
        """:meth:`_stop` once no PDF is being printed."""
        assert self._lock is not None
        async with self._lock:
            self._idle = None
            await self._stop()

    async def _stop(self) -> None:
        """Close the page, the browser and Playwright, whatever state they are in."""
        page, browser, playwright = self._page, self._browser, self._playwright
        self._page = self._browser = self._playwright = None
        for close in (page and page.close, browser and browser.close, playwright and playwright.stop):
            if close is None:
                continue
            with contextlib.suppress(Exception):  # already gone: nothing more to close
                await asyncio.wait_for(close(), 5)


def finish(body: bytes, html: str, created: datetime, modified: datetime | None = None) -> bytes:
    """Chromium's PDF ``body`` of the page ``html`` made to depend only on the page: the creation
    and modification dates set to ``created`` and ``modified`` (aware instants; default
    ``created``), title, subject and keywords from the page's ``<title>`` and ``<meta
    name="description">`` / ``<meta name="keywords">``, the creator ``rule130``, the file
    identifier the first 16 bytes of the page's SHA-256, and the IDs of the structure elements
    numbered from 1 (Chromium numbers them on from the pages it printed before). pypdf rewrites
    the file; the structure tree and the text are kept.

    Raises:
        ValueError: ``created`` or ``modified`` is a naive datetime.
    """
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import ArrayObject, ByteStringObject

    head = lxml.html.document_fromstring(html).find("head")
    meta = {element.get("name"): element.get("content") or "" for element in head.iter("meta")
            if element.get("name")} if head is not None else {}
    title = head.findtext("title") if head is not None else None
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(body)))
    _renumber_structure_ids(writer)
    info = {"/Creator": "rule130", "/CreationDate": _pdf_date(created), "/ModDate": _pdf_date(modified or created)}
    for key, value in (("/Title", title), ("/Subject", meta.get("description")), ("/Keywords", meta.get("keywords"))):
        if value:
            info[key] = value
    writer.add_metadata(info)
    identifier = ByteStringObject(hashlib.sha256(html.encode("utf-8")).digest()[:16])
    writer._ID = ArrayObject([identifier, identifier])  # pypdf has no public setter; None writes no /ID
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _renumber_structure_ids(writer: Any) -> None:
    """Give the structure elements' IDs (Chromium's ``node00000123``: its accessibility node
    numbers, which depend on the pages the browser printed before) the numbers 1, 2, ... in the
    order of the structure tree, wherever they are named: each element's ``/ID``, the ``/Headers``
    of table cells and the ``/IDTree`` (a name tree: its entries sorted again, leaf sizes kept)."""
    from pypdf.generic import ArrayObject, DictionaryObject, TextStringObject

    tree = writer.root_object.get("/StructTreeRoot")
    if tree is None:
        return
    tree = tree.get_object()
    elements: list[DictionaryObject] = []
    seen: set[int] = set()
    pending: list[Any] = [tree.get("/K")]
    while pending:  # depth-first, in order, through /K: elements, arrays of kids, marked-content numbers
        node = pending.pop()
        node = node.get_object() if node is not None else None
        if isinstance(node, ArrayObject):
            pending.extend(reversed(node))
        elif isinstance(node, DictionaryObject) and id(node) not in seen:
            seen.add(id(node))
            elements.append(node)
            pending.append(node.get("/K"))
    renamed: dict[str, Any] = {}
    for element in elements:
        if "/ID" in element and str(element["/ID"]) not in renamed:
            renamed[str(element["/ID"])] = TextStringObject(f"node{len(renamed) + 1:08d}")

    def rename(value: Any) -> Any:
        return renamed.get(str(value), value)

    for element in elements:
        if "/ID" in element:
            element[_name("/ID")] = rename(element["/ID"])
        attributes = element.get("/A")
        attributes = attributes.get_object() if attributes is not None else None
        for attribute in attributes if isinstance(attributes, ArrayObject) else [attributes]:
            attribute = attribute.get_object() if attribute is not None else None
            if isinstance(attribute, DictionaryObject) and "/Headers" in attribute:
                headers: Any = attribute["/Headers"].get_object()  # an array of ids (PDF 32000-1, 14.8.5.7)
                attribute[_name("/Headers")] = ArrayObject(rename(h) for h in headers)

    id_tree = tree.get("/IDTree")
    if id_tree is None:
        return
    id_tree = id_tree.get_object()
    leaves: list[DictionaryObject] = []

    def collect(node: DictionaryObject) -> None:  # the leaves (/Names) in the tree's order
        for kid in node.get("/Kids", []):
            collect(kid.get_object())
        if "/Names" in node:
            leaves.append(node)

    collect(id_tree)
    entries = [(rename(names[i]), names[i + 1]) for leaf in leaves
               for names in [_array(leaf["/Names"])] for i in range(0, len(names) - 1, 2)]
    entries.sort(key=lambda entry: str(entry[0]))
    remaining = iter(entries)

    def refill(node: DictionaryObject) -> tuple[Any, Any] | None:  # its (first, last) keys, for /Limits
        bounds = [b for b in (refill(kid.get_object()) for kid in node.get("/Kids", [])) if b is not None]
        if "/Names" in node:
            mine = [next(remaining) for _ in range(len(_array(node["/Names"])) // 2)]
            node[_name("/Names")] = ArrayObject(item for entry in mine for item in entry)
            if mine:
                bounds.append((mine[0][0], mine[-1][0]))
        if not bounds:
            return None
        if "/Limits" in node:
            node[_name("/Limits")] = ArrayObject([bounds[0][0], bounds[-1][1]])
        return bounds[0][0], bounds[-1][1]

    refill(id_tree)


def _name(key: str) -> Any:
    from pypdf.generic import NameObject

    return NameObject(key)


def _pdf_date(instant: datetime) -> str:
    """A PDF date string (ISO 32000-1, 7.9.4) of an aware instant, in UTC."""
    if instant.tzinfo is None:
        raise ValueError(f"a PDF date needs an aware datetime: {instant!r}")
    return instant.astimezone(UTC).strftime("D:%Y%m%d%H%M%S+00'00'")


_shared: Renderer | None = None
_shared_lock = threading.Lock()


def shared() -> Renderer:
    """The process's renderer (created at the first call, again in a forked child) for the
    executable ``RULE130_CHROMIUM`` names (default :data:`CHROMIUM`), closing its browser after
    ``RULE130_PDF_IDLE_SECONDS`` seconds without a PDF when that is set (a positive number).

    Raises:
        ValueError: ``RULE130_PDF_IDLE_SECONDS`` is not a positive number.
    """
    global _shared
    with _shared_lock:
        if _shared is None or _shared.pid != os.getpid():
            _shared = Renderer(os.environ.get("RULE130_CHROMIUM") or CHROMIUM,
                               idle_seconds=_idle_setting(os.environ.get("RULE130_PDF_IDLE_SECONDS")))
        return _shared


def _idle_setting(text: str | None) -> float | None:
    if not text:
        return None
    try:
        seconds = float(text)
    except ValueError:
        seconds = float("nan")
    if not seconds > 0:
        raise ValueError(f"RULE130_PDF_IDLE_SECONDS must be a positive number of seconds, not {text!r}")
    return seconds


@atexit.register
def _close_shared() -> None:
    if _shared is not None:
        _shared.close(timeout=5)


def render(html: str, created: datetime, modified: datetime | None = None) -> bytes:
    """The PDF (bytes) of the whole HTML page ``html`` (UTF-8 text with ``<meta charset="utf-8">``
    and its stylesheet in a ``<style>`` element: nothing is fetched), printed by the process's
    Chromium (:func:`shared`) and made reproducible by :func:`finish` with the instants ``created``
    and ``modified`` (aware datetimes); tagged, A4 unless the page's ``@page`` says otherwise.
    About 0.1–0.2 s once the browser runs; the first PDF of a process also starts it (1–3 s; 5 s on
    a loaded machine) unless ``rule130 serve`` started it in advance.

    Raises:
        PdfUnavailable: no PDF can be made here now (Chromium or Playwright missing, the browser
            does not start or does not answer).
    """
    body = shared().pdf(html)
    return finish(body, html, created, modified)


def _array(value: Any) -> Any:
    """The array a PDF entry holds (``/Names`` of a name tree, PDF 32000-1, 7.9.6), through its
    indirect reference if it is one."""
    return value.get_object()
