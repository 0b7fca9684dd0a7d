"""One HTTP client, so one connection pool, per provider endpoint, shared by every agent on it.

Twelve agents on one server used to mean twelve clients, each loading the certificate bundle
(tens of milliseconds each) and opening its own connections. Now an `Endpoint` hands out the
one `httpx2.AsyncClient` of its origin (scheme, host and port; plus the injected transport in
tests), counted by its users and closed when the last one lets go. Clients are kept per event
loop, because a connection belongs to the loop that opened it.

A plain http:// endpoint gets a client that loads no certificates at all (it speaks no TLS);
should its server redirect to https, the request is refused rather than sent unverified.
https endpoints share one default SSL context per process, whose certificate bundle `warm()`
loads in a worker thread ahead of the first call.

httpx2 is imported on first use, so creating a model for a config check costs no import;
`warm()` pays it as a run makes its models, with what httpx2 itself imports late (httpcore2 when
a client is made, anyio's backend on the first connection).

`HttpProvider` is the set-up every provider of an HTTP API shares (base URL, network guard, key,
context window, prices, its share of the endpoint), `SdkProvider` that of one calling through
its vendor's SDK (a client per event loop, in a `PerLoop`); `json_object` reads a reply body
that must be a JSON object.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import threading
import weakref
from abc import abstractmethod
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar
from urllib.parse import urlparse

import msgspec
from msgspec import Struct

from moot.models.base import Capabilities
from moot.models.keys import read_key
from moot.models.network_guard import guard_network
from moot.models.pricing import Pricer
from moot.models.provider import Provider, ProviderError
from moot.types import FailureKind, ModelSettings, Spec

if TYPE_CHECKING:
    import ssl

    import httpx2

__all__ = [
    "Api",
    "Endpoint",
    "HttpProvider",
    "PerLoop",
    "SdkProvider",
    "json_object",
    "origin",
    "pool_size",
    "shown_url",
    "ssl_in_background",
    "warm",
]

T = TypeVar("T")

# Connections open at once to one endpoint from this process, whatever the number of agents
# and sessions (`moot batch`) on it: a request beyond waits for a free connection, within its
# call's timeout. Above the engine's default of 32 calls at once, so a single run never waits
# here; a batch of sessions on one server does, instead of flooding it.
MAX_CONNECTIONS = 64
MAX_KEEPALIVE = 64

_SSL_LOCK = threading.Lock()
_ssl_context: ssl.SSLContext | None = None


def shown_url(url: str) -> str:
    """`url` as a message may show it: no user, password, query or fragment."""
    parts = urlparse(url)
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 address
        host = f"[{host}]"
    try:
        port = f":{parts.port}" if parts.port is not None else ""
    except ValueError:  # not a number: the message is about that anyway
        port = ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


def origin(url: str) -> str:
    """`scheme://host:port` of `url`, the unit of connection sharing."""
    parts = urlparse(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"{parts.scheme}://{parts.hostname}:{port}"


def default_ssl_context() -> ssl.SSLContext:
    """The verifying SSL context all https clients share (the CA bundle is loaded once)."""
    global _ssl_context
    with _SSL_LOCK:
        if _ssl_context is None:
            import httpx2

            _ssl_context = httpx2.create_ssl_context()
        return _ssl_context


def warm(url: str) -> None:
    """Do ahead of time what the first call to `url` needs: import httpx2, the connection pool
    it imports when a client is made (httpcore2) and the async backend that pool loads on its
    first connection, here, on the calling thread; for https, start loading the certificate
    bundle in a worker thread (`ssl_in_background`).

    Loading the bundle runs in C without the interpreter's lock: beside the session's set-up,
    on another core, its 70 ms cost the first request nothing. An import holds the lock: in a
    worker thread beside the set-up it took it back and forth some thousand times, 80 ms of
    CPU, and sent the first request no sooner (issue 23)."""
    import httpcore2  # noqa: F401
    import httpx2  # noqa: F401

    with contextlib.suppress(ImportError):  # httpcore2's own business: it may change backend
        import anyio._backends._asyncio  # noqa: F401

    if urlparse(url).scheme == "https":
        ssl_in_background()


_SSL_THREAD: list[threading.Thread] = []  # the one that loads the bundle, once started
_SSL_THREAD_LOCK = threading.Lock()  # not _SSL_LOCK: the loading thread holds that one


def ssl_in_background() -> threading.Thread:
    """`default_ssl_context()` in a worker thread, started once per process: twelve agents on
    https endpoints load one bundle. Not a daemon: an interpreter exiting mid-load could crash;
    at worst, exit waits for the bundle."""
    with _SSL_THREAD_LOCK:
        if not _SSL_THREAD:
            thread = threading.Thread(target=_ssl_quietly, name="moot-ssl", daemon=False)
            _SSL_THREAD.append(thread)
            thread.start()
        return _SSL_THREAD[0]


def _ssl_quietly() -> None:
    with contextlib.suppress(Exception):  # the first https call does the same, and reports it
        default_ssl_context()


class _Shared(Struct):
    """One endpoint's client on one event loop, and how many models use it."""

    client: httpx2.AsyncClient
    users: int = 0


_POOLS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[Hashable, _Shared]] = (
    weakref.WeakKeyDictionary()
)


def pool_size(loop: asyncio.AbstractEventLoop | None = None) -> int:
    """How many shared clients are open on `loop` (the running one by default)."""
    return len(_POOLS.get(loop or asyncio.get_running_loop(), {}))


async def _refuse_tls_upgrade(request: httpx2.Request) -> None:
    # This client checks no certificate: it must never carry a request over TLS.
    if request.url.scheme != "http":
        raise ProviderError(
            FailureKind.BAD_REQUEST,
            f"an http:// endpoint redirected to {request.url.scheme}://{request.url.host}; "
            "set the base_url to that address so its certificate is checked",
        )


def _new_client(url: str, transport: httpx2.AsyncBaseTransport | None) -> httpx2.AsyncClient:
    import httpx2

    plain = urlparse(url).scheme == "http"
    hooks: dict[str, list[Any]] = {"request": [_refuse_tls_upgrade]} if plain else {}
    return httpx2.AsyncClient(
        transport=transport,
        # Plain http speaks no TLS: verify=False builds a bare context, no CA bundle read.
        verify=False if plain else default_ssl_context(),
        limits=httpx2.Limits(
            max_connections=MAX_CONNECTIONS, max_keepalive_connections=MAX_KEEPALIVE
        ),
        follow_redirects=True,  # as the SDKs' own clients do
        timeout=600.0,  # the SDKs' default; each call passes its own
        event_hooks=hooks,
    )


class Endpoint:
    """A model's share of its endpoint's client. `client()` inside the event loop; `release()`
    when the model closes."""

    def __init__(self, url: str, *, transport: httpx2.AsyncBaseTransport | None = None) -> None:
        self.url = url
        self.transport = transport
        self._key: Hashable = (origin(url), id(transport) if transport is not None else None)
        self._holding: weakref.WeakSet[asyncio.AbstractEventLoop] = weakref.WeakSet()

    def client(self) -> httpx2.AsyncClient:
        """The shared client of this endpoint on the running loop."""
        loop = asyncio.get_running_loop()
        pool = _POOLS.setdefault(loop, {})
        shared = pool.get(self._key)
        if shared is None:
            shared = pool[self._key] = _Shared(_new_client(self.url, self.transport))
        if loop not in self._holding:
            self._holding.add(loop)
            shared.users += 1
        return shared.client

    async def release(self) -> None:
        """Give up this model's share; the last user closes the client (on its own loop)."""
        running = asyncio.get_running_loop()
        for loop in list(self._holding):
            self._holding.discard(loop)
            pool = _POOLS.get(loop, {})
            shared = pool.get(self._key)
            if shared is None:
                continue
            shared.users -= 1
            if shared.users <= 0:
                del pool[self._key]
                if loop is running:
                    await shared.client.aclose()
                # on another loop: that loop's connections die with it


class PerLoop(Generic[T]):
    """One object per running event loop, made by `make` on first use there: an SDK client
    holds connections, and a connection belongs to the loop that opened it."""

    def __init__(self, make: Callable[[], T]) -> None:
        self._make = make
        self._made: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, T] = (
            weakref.WeakKeyDictionary()
        )

    def get(self) -> T:
        """The running loop's object, made now if it has none."""
        loop = asyncio.get_running_loop()
        made = self._made.get(loop)
        if made is None:
            made = self._made[loop] = self._make()
        return made

    def clear(self) -> None:
        self._made.clear()


def json_object(response: httpx2.Response, describe: Callable[[str], str]) -> dict[str, Any]:
    """The body of `response` as a JSON object; else a bad response, in the words of
    `describe(problem)`, the problem being "not JSON: <the body's start>" or "not an object"."""
    try:
        data = response.json()
    except ValueError:
        raise ProviderError(
            FailureKind.BAD_RESPONSE, describe(f"not JSON: {response.text[:200]!r}")
        ) from None
    if not isinstance(data, dict):
        raise ProviderError(FailureKind.BAD_RESPONSE, describe("not an object"))
    return data


class Api(Struct, frozen=True):
    """What an `HttpProvider` subclass says of itself: its `label` (in messages, for the key
    and the network guard, and the default price key `label:MODEL`), the `default_url` under
    `settings.base_url`, the variables holding its key, what it enforces (`capabilities`; the
    window is a default `options.context_window` overrides), the `model` name it sends (default:
    the spec's), its price keys and whether its tokens are `free`."""

    label: str
    default_url: str
    key_env: tuple[str, ...]
    capabilities: Capabilities
    key_required: bool = True
    model: str | None = None
    price_keys: tuple[str, ...] = ()
    free: bool = False


class HttpProvider(Provider):
    """A provider of an HTTP API at a base URL: the set-up they all share. A subclass writes
    `api` (read its options, raise ConfigError for a wrong one, say what it is) and, for what
    needs the key or the endpoint, `connected`. The base URL is `settings.base_url`, else the
    api's default, without a trailing slash; under tests a remote one is refused unless
    `transport` replaces the wire (`guard_network`); the key is read into `_key` (`read_key`);
    calls go through the endpoint's shared pool (`_endpoint`), which `aclose` lets go of;
    `warm_up` imports what its first call needs (`warm`)."""

    def __init__(
        self,
        spec: Spec,
        settings: ModelSettings,
        *,
        transport: httpx2.AsyncBaseTransport | None = None,
    ) -> None:
        api = self.api(spec, settings)
        base_url = (settings.base_url or api.default_url).rstrip("/")
        guard_network(base_url, provider=api.label, injected=transport is not None)
        self._key = read_key(settings, api.key_env, provider=api.label, required=api.key_required)
        window = int(settings.options.get("context_window", api.capabilities.context_window))
        price_keys = list(api.price_keys) or [f"{api.label}:{spec.name}"]
        super().__init__(
            str(spec),
            settings,
            msgspec.structs.replace(api.capabilities, context_window=window),
            label=api.label,
            endpoint=base_url,
            pricer=Pricer(str(spec), price_keys, settings, free=api.free),
        )
        self.model = spec.name if api.model is None else api.model
        self.base_url = base_url
        self._endpoint = Endpoint(base_url, transport=transport)
        self.connected()

    @abstractmethod
    def api(self, spec: Spec, settings: ModelSettings) -> Api:
        """What this provider is, from its spec and settings; called before any set-up."""

    def connected(self) -> None:
        """Set-up that needs the key, the base URL or the endpoint; called last."""

    def classify(self, exc: Exception) -> ProviderError:
        """As `Provider.classify`; a connection that failed names the URL it went to, so a
        wrong base_url or a server that is not up is seen at once."""
        error = super().classify(exc)
        connecting = error.kind is FailureKind.CONNECTION or "Connect" in type(exc).__name__
        url = shown_url(self.base_url)
        if not connecting or url in error.message:
            return error
        return ProviderError(
            error.kind, f"{error.message} (connecting to {url})", error.retry_after
        )

    def warm_up(self) -> None:
        warm(self.base_url)

    async def aclose(self) -> None:
        await self._endpoint.release()


class SdkProvider(HttpProvider, Generic[T]):
    """An HTTP provider that calls through its vendor's SDK (the module `sdk`, imported by
    `warm_up` as the run makes its models, or on the first call): one SDK client per event
    loop, made by `new_client` on the endpoint's shared connection pool, which the clients do
    not own."""

    sdk: ClassVar[str]

    def connected(self) -> None:
        self._clients: PerLoop[T] = PerLoop(self.new_client)

    @abstractmethod
    def new_client(self) -> T:
        """A new SDK client, on `self._endpoint.client()`."""

    def client(self) -> T:
        """The SDK client of the running loop, on the endpoint's shared connection pool."""
        return self._clients.get()

    def warm_up(self) -> None:
        importlib.import_module(self.sdk)
        super().warm_up()

    async def aclose(self) -> None:
        self._clients.clear()  # they do not own the shared pool: only release it
        await super().aclose()
