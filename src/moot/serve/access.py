"""The token every request must carry, and the headers every response gets.

As Jupyter does: the URL printed at start carries `?token=`; the first visit with it sets a
cookie (HttpOnly, SameSite=Strict, so another site's form or script cannot send it), and every
later request may show either. A request with neither is refused with 403."""

from __future__ import annotations

import hmac
import ipaddress
from http.cookies import SimpleCookie
from urllib.parse import parse_qs

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from moot.serve.pages import CSP

__all__ = ["COOKIE", "TokenGate", "is_loopback"]

COOKIE = "moot_token"
_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    # same-origin: no other site sees a URL of ours (it may carry the token), and our own
    # form posts carry their Origin (no-referrer would send "null", refused below)
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
]


def is_loopback(host: str) -> bool:
    """Whether `host` names this machine only (no other machine can connect to it)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _same(given: str | None, token: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode(), token.encode())


class TokenGate:
    """ASGI middleware: a request without the token is 403; every response gets the CSP."""

    def __init__(self, app: ASGIApp, token: str | None) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        in_query = (query.get("token") or [None])[0]
        cookie = SimpleCookie()
        for name, value in scope.get("headers", []):
            if name == b"cookie":
                cookie.load(value.decode("latin-1"))
        in_cookie = cookie[COOKIE].value if COOKIE in cookie else None
        headers = dict(scope.get("headers", []))
        if not _same_site(scope, headers, needs_loopback=self.token is None):
            await _refuse(send)
            return
        token = self.token
        set_cookie = token is not None and _same(in_query, token) and not _same(in_cookie, token)
        if token is not None and not (_same(in_query, token) or _same(in_cookie, token)):
            await _refuse(send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", [])) + _HEADERS
                if set_cookie and token is not None:
                    value = f"{COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/"
                    headers.append((b"set-cookie", value.encode()))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)


def _host(value: str) -> str:
    """The host name of a Host or Origin header's value (no scheme, no port)."""
    value = value.split("://", 1)[-1]
    if value.startswith("["):
        return value[1:].split("]", 1)[0]
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def _same_site(scope: Scope, headers: dict[bytes, bytes], *, needs_loopback: bool) -> bool:
    """A post comes from this server's own pages (another site's form carries its Origin);
    without a token, the Host must name this machine (a DNS-rebound name is another site)."""
    host = headers.get(b"host", b"").decode("latin-1")
    if needs_loopback and not is_loopback(_host(host)):
        return False
    origin = headers.get(b"origin", b"").decode("latin-1")
    if scope.get("method") == "POST" and origin and origin.split("://", 1)[-1] != host:
        return False
    return True


async def _refuse(send: Send) -> None:
    body = b"403: this moot serve needs its token: open the URL it printed (with ?token=...)\n"
    await send(
        {
            "type": "http.response.start",
            "status": 403,
            "headers": [(b"content-type", b"text/plain; charset=utf-8"), *_HEADERS],
        }
    )
    await send({"type": "http.response.body", "body": body})
