"""Notification channels beyond the inbox: e-mail through SMTP and a signed webhook.

Settings come from the environment (``RULE130_*``, see docs/operations.md) or a mapping such as
the Flask config (same names without the ``RULE130_`` prefix). Sending uses the standard library
(``smtplib``, ``email.message``, ``urllib.request``, ``hmac``); each send either returns or raises
:class:`SendFailed` with a message for the delivery log.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import smtplib
import socket
import ssl
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formatdate
from typing import Any

from webapp.errors import Refused
from webapp.i18n import M_, N_
from webapp.i18n.stored_texts import retranslate
from webapp.values import textguard

SECURITY_MODES = ("none", "starttls", "ssl")
SIGNATURE_HEADER = "X-Rule130-Signature"
DELIVERY_HEADER = "X-Rule130-Delivery"
_ISO_DAY = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_EMAIL = re.compile(r"^[^@\s<>(),;:\"]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9-]{1,63})+$")


class SendFailed(Exception):
    """A channel could not hand the message over; the text goes to the delivery's ``last_error``."""


# The product's own texts of a failed delivery, stored in English in ``Delivery.last_error`` and shown
# in the reader's language on the delivery log (webapp.i18n.stored_texts.retranslate); what a server answered (an
# SMTP error, an HTTP reason, a socket error) is a value inside them and stays as the server said it.
NO_SMTP = N_("e-mail is not configured (RULE130_SMTP_HOST is empty)")
NO_WEBHOOK_SECRET = N_("webhooks are not configured (RULE130_WEBHOOK_SECRET is empty)")
WEBHOOK_HTTP = N_("webhook %(url)s: HTTP %(status)s")
WEBHOOK_FAILED = N_("webhook %(url)s: %(reason)s")
WEBHOOK_INSIDE = N_("webhook %(url)s: the address %(address)s is inside this machine's network; webhooks go to "
                    "public addresses (RULE130_WEBHOOK_ALLOW_PRIVATE=1 allows others)")
UNKNOWN_CHANNEL = N_("unknown channel %(channel)s")  # raised by webapp.services.notify.deliveries
ERROR_TEXTS = (NO_SMTP, NO_WEBHOOK_SECRET, WEBHOOK_INSIDE, WEBHOOK_HTTP, WEBHOOK_FAILED, UNKNOWN_CHANNEL)  # most specific first


@dataclass(frozen=True)
class ChannelSettings:
    """Where and how notifications leave the product.

    Attributes:
        smtp_host: the SMTP server ("" = e-mail not configured; e-mail deliveries then fail and retry).
        smtp_port: TCP port (default 25; 587 for STARTTLS, 465 for SSL are usual).
        smtp_security: ``none`` | ``starttls`` | ``ssl`` (implicit TLS).
        smtp_user, smtp_password: credentials for SMTP AUTH ("" = no AUTH).
        smtp_from: the From address.
        smtp_cafile: a CA bundle for the server's certificate ("" = the system's).
        smtp_timeout: seconds per connection.
        webhook_secret: the HMAC-SHA256 key for webhook signatures ("" = webhooks not offered).
        webhook_timeout: seconds per webhook request.
        webhook_allow_private: send webhooks to loopback, private, link-local and other non-public
            addresses too (default False: an officer's webhook address must not reach this machine
            or its network, e.g. 127.0.0.1 or 169.254.169.254).
        max_attempts: attempts before a delivery is marked failed.
        backoff_seconds: the wait after the first failed attempt; doubled after each (exponential).
        backoff_max_seconds: the longest wait between attempts.
        claim_seconds: how long a claimed delivery is reserved for one sender before another may retry it.
    """

    smtp_host: str = ""
    smtp_port: int = 25
    smtp_security: str = "none"
    smtp_user: str = ""
    smtp_password: str = ""
    smtp_from: str = "rule130@localhost"
    smtp_cafile: str = ""
    smtp_timeout: float = 30.0
    webhook_secret: str = ""
    webhook_timeout: float = 15.0
    webhook_allow_private: bool = False
    max_attempts: int = 8
    backoff_seconds: float = 60.0
    backoff_max_seconds: float = 6 * 3600.0
    claim_seconds: float = 120.0

    @classmethod
    def load(cls, config: Mapping[str, Any] | None = None) -> ChannelSettings:
        """Read ``RULE130_SMTP_HOST`` ... from the environment, overridden by ``config`` keys without
        the prefix (``SMTP_HOST`` ...). Raises ValueError naming a malformed value."""
        def value(name: str, default: Any) -> Any:
            if config is not None and name in config:
                return config[name]
            return os.environ.get(f"RULE130_{name}", default)

        try:
            settings = cls(
                smtp_host=str(value("SMTP_HOST", "")),
                smtp_port=int(value("SMTP_PORT", 25)),
                smtp_security=str(value("SMTP_SECURITY", "none")).lower(),
                smtp_user=str(value("SMTP_USER", "")),
                smtp_password=str(value("SMTP_PASSWORD", "")),
                smtp_from=str(value("SMTP_FROM", "rule130@localhost")),
                smtp_cafile=str(value("SMTP_CAFILE", "")),
                smtp_timeout=float(value("SMTP_TIMEOUT", 30.0)),
                webhook_secret=str(value("WEBHOOK_SECRET", "")),
                webhook_timeout=float(value("WEBHOOK_TIMEOUT", 15.0)),
                webhook_allow_private=str(value("WEBHOOK_ALLOW_PRIVATE", "")).strip().lower() in ("1", "true", "yes"),
                max_attempts=int(value("DELIVERY_MAX_ATTEMPTS", 8)),
                backoff_seconds=float(value("DELIVERY_BACKOFF_SECONDS", 60.0)),
                backoff_max_seconds=float(value("DELIVERY_BACKOFF_MAX_SECONDS", 6 * 3600.0)),
                claim_seconds=float(value("DELIVERY_CLAIM_SECONDS", 120.0)),
            )
        except (TypeError, ValueError) as error:
            raise ValueError(f"notification settings: {error}") from None
        if settings.smtp_security not in SECURITY_MODES:
            raise ValueError(f"RULE130_SMTP_SECURITY must be one of {', '.join(SECURITY_MODES)}, "
                             f"not {settings.smtp_security!r}")
        if settings.max_attempts < 1 or settings.backoff_seconds <= 0 or settings.claim_seconds <= 0:
            raise ValueError("notification settings: attempts, back-off and claim time must be positive")
        return settings


def dayfirst(text: str) -> str:
    """ISO dates in ``text`` (2026-02-08) written day first (08-02-2026), as the pages show them."""
    return _ISO_DAY.sub(lambda m: f"{m.group(3)}-{m.group(2)}-{m.group(1)}", text)


def check_email(address: str) -> str:
    """A plausible single e-mail address, stripped.

    Raises:
        Refused: empty, too long, or not of the form name@domain.tld.
    """
    address = (address or "").strip()
    if not address or len(address) > 254 or not _EMAIL.match(address):
        raise Refused(M_("give one e-mail address of the form name@example.org"), {"email_address": M_("not an e-mail address")})
    return address


def check_url(url: str, settings: ChannelSettings | None = None) -> str:
    """A webhook URL: http or https with a host, at most 500 characters, whose host is not (and does
    not resolve to) a non-public address unless ``settings.webhook_allow_private`` (see
    :func:`inside_address`; a host that does not resolve now is let through: sending checks again).

    Raises:
        Refused: anything else (the message names the problem).
    """
    from urllib.parse import urlsplit
    url = (url or "").strip()
    textguard.check_one_line(url, "webhook_url", M_("the webhook address"))
    parts = urlsplit(url) if len(url) <= 500 else None
    try:
        host = parts.hostname if parts is not None else None
    except ValueError:  # e.g. an unclosed "[" of an IPv6 literal
        host = None
    if parts is None or parts.scheme not in ("http", "https") or not host:
        raise Refused(M_("the webhook address must be an http:// or https:// URL of at most 500 characters"),
                      {"webhook_url": M_("not an http(s) URL")})
    if not (settings or ChannelSettings()).webhook_allow_private:
        inside = inside_address(host)
        if inside is not None:
            raise Refused(M_("the webhook address %(url)s reaches %(address)s, inside this machine's network; "
                             "give a public address", url=url, address=inside),
                          {"webhook_url": M_("not a public address")})
    return url


def inside_address(host: str) -> str | None:
    """The first address of ``host`` (an IP literal or a name, resolved now) that is not a public
    one — loopback, private, link-local, multicast, reserved or unspecified — else None (also when
    the name does not resolve)."""
    import ipaddress

    try:
        addresses = [host] if _is_ip(host) else sorted({info[4][0] for info in socket.getaddrinfo(host, None)})
    except (OSError, UnicodeError):
        return None
    for address in addresses:
        ip: ipaddress.IPv4Address | ipaddress.IPv6Address = ipaddress.ip_address(str(address).split("%")[0])
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        if not ip.is_global or ip.is_multicast:
            return str(ip)
    return None


def _is_ip(host: str) -> bool:
    import ipaddress
    try:
        ipaddress.ip_address(host.split("%")[0])
        return True
    except ValueError:
        return False


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A webhook is not followed to another address (which :func:`inside_address` did not check)."""

    def redirect_request(self, *_args: Any, **_kwargs: Any) -> None:
        return None


# -- e-mail ---------------------------------------------------------------------------------------

def email_message(settings: ChannelSettings, to: str, subject: str, body: str, message_id: str) -> EmailMessage:
    """The message as sent: From, To, Subject, Date, a Message-ID stable per delivery, plain text."""
    message = EmailMessage()
    message["From"] = settings.smtp_from
    message["To"] = to
    message["Subject"] = subject
    message["Date"] = formatdate(usegmt=True)
    message["Message-ID"] = message_id
    message.set_content(body)
    return message


def error_text(text: str, language: str | None = None) -> str:
    """A delivery's ``last_error`` for people: the product's own text (:data:`ERROR_TEXTS`) in
    ``language`` (default the current request's), its values (an address, a server's answer) as
    they are; any other text (an SMTP server's error) unchanged."""
    return retranslate(text, ERROR_TEXTS, language)


def send_email(settings: ChannelSettings, message: EmailMessage) -> None:
    """Hand ``message`` to the configured SMTP server (STARTTLS or SSL, AUTH when a user is set).

    Raises:
        SendFailed: not configured, refused connection, TLS or AUTH failure, recipient refused, timeout.
    """
    if not settings.smtp_host:
        raise SendFailed(NO_SMTP)
    context = ssl.create_default_context(cafile=settings.smtp_cafile or None)
    try:
        if settings.smtp_security == "ssl":
            client: smtplib.SMTP = smtplib.SMTP_SSL(settings.smtp_host, settings.smtp_port,
                                                    timeout=settings.smtp_timeout, context=context)
        else:
            client = smtplib.SMTP(settings.smtp_host, settings.smtp_port, timeout=settings.smtp_timeout)
        with client:
            if settings.smtp_security == "starttls":
                client.starttls(context=context)
            if settings.smtp_user:
                client.login(settings.smtp_user, settings.smtp_password)
            client.send_message(message)
    except (smtplib.SMTPException, OSError, ssl.SSLError) as error:
        raise SendFailed(f"SMTP {settings.smtp_host}:{settings.smtp_port}: {error.__class__.__name__}: {error}"
                         ) from None


# -- webhook --------------------------------------------------------------------------------------

def signature(secret: str, body: bytes) -> str:
    """``sha256=<hex>``: HMAC-SHA256 of the exact request body with the configured secret."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def webhook_body(payload: dict[str, Any]) -> bytes:
    """The JSON body of a webhook request (UTF-8, keys sorted, so the signature is reproducible)."""
    return json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()


def send_webhook(settings: ChannelSettings, url: str, body: bytes, delivery_id: int) -> None:
    """POST ``body`` (JSON) to ``url`` with ``X-Rule130-Signature`` and ``X-Rule130-Delivery``.

    A 2xx answer is success; a redirect is not followed. Raises:
        SendFailed: no secret configured, an address inside this machine's network (unless
            ``webhook_allow_private``), connection failure, timeout, or a non-2xx status.
    """
    if not settings.webhook_secret:
        raise SendFailed(NO_WEBHOOK_SECRET)
    if not settings.webhook_allow_private:
        from urllib.parse import urlsplit
        inside = inside_address(urlsplit(url).hostname or "")
        if inside is not None:  # the name may resolve otherwise now than when the address was saved
            raise SendFailed(WEBHOOK_INSIDE % {"url": url, "address": inside})
    request = urllib.request.Request(url, data=body, method="POST", headers={
        "Content-Type": "application/json; charset=utf-8",
        SIGNATURE_HEADER: signature(settings.webhook_secret, body),
        DELIVERY_HEADER: str(delivery_id),
        "User-Agent": "rule130-notify",
    })
    try:
        opener = urllib.request.build_opener(_NoRedirect)
        with opener.open(request, timeout=settings.webhook_timeout) as response:  # http(s) only (check_url)
            status = response.status
    except urllib.error.HTTPError as error:
        raise SendFailed(WEBHOOK_HTTP % {"url": url, "status": f"{error.code} {error.reason}"}) from None
    except (TimeoutError, urllib.error.URLError, OSError) as error:
        raise SendFailed(WEBHOOK_FAILED % {"url": url, "reason": getattr(error, "reason", error)}) from None
    if not 200 <= status < 300:
        raise SendFailed(WEBHOOK_HTTP % {"url": url, "status": status})
