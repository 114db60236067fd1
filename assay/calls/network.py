"""The network policy of every host and judge client: which addresses may never be reached, how much of a reply
is read. One source of truth (``[hosts]`` in the settings), applied twice:

- when a host or judge file is loaded: a URL whose host is a blocked address, in any spelling the resolver
  accepts (decimal, hex or octal IPv4, bracketed or IPv4-mapped IPv6), or that carries userinfo
  (``http://a@b``) is refused, naming the file and field (``check_url``);
- when a connection opens: every address the host name resolves to is checked again (``vetted_addresses``),
  so a name that resolves to a metadata address (DNS rebinding) gets nothing, not even a TCP handshake.

The clients that apply it are built in ``assay.calls.guarded_http``.
"""

import ipaddress
import socket
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

import httpx

from assay.calls.errors import BlockedAddress

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
SETTING = "hosts.blocked_networks"

_EMBEDDING_PREFIXES = (
    ipaddress.IPv6Network("64:ff9b::/96"),  # NAT64
    ipaddress.IPv6Network("::ffff:0:0:0/96"),  # IPv4-translated (SIIT)
)


@dataclass(frozen=True)
class NetworkPolicy:
    blocked_networks: tuple[IPNetwork, ...]
    max_reply_bytes: int

    @classmethod
    def from_settings(cls, blocked_networks: Iterable[str], max_reply_bytes: int) -> "NetworkPolicy":
        networks = tuple(ipaddress.ip_network(value, strict=False) for value in blocked_networks)
        return cls(networks, max_reply_bytes)

    def blocking_network(self, address: IPAddress) -> IPNetwork | None:
        """The blocked network holding ``address``, or the IPv4 address embedded in it; None when allowed."""
        candidates = [address]
        if isinstance(address, ipaddress.IPv6Address):
            embedded = embedded_ipv4(address)
            if embedded is not None:
                candidates.append(embedded)
        for candidate in candidates:
            for network in self.blocked_networks:
                if candidate.version == network.version and candidate in network:
                    return network
        return None


def current_policy() -> NetworkPolicy:
    """The policy of the current settings (``[hosts]`` in assay.toml, ``ASSAY_HOSTS__*``)."""
    from assay.config import load_settings

    hosts = load_settings().hosts
    return NetworkPolicy.from_settings(hosts.blocked_networks, hosts.max_reply_bytes)


def embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries (IPv4-mapped, 6to4, Teredo, NAT64, IPv4-compatible), if any."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    value = int(address)
    if any(address in prefix for prefix in _EMBEDDING_PREFIXES) or 1 < value < 2**32:
        return ipaddress.IPv4Address(value & 0xFFFFFFFF)
    return None


def shown(address: IPAddress) -> str:
    """The address as written, with the IPv4 address it carries when it is IPv6 (``::ffff:a9fe:a9fe``)."""
    embedded = embedded_ipv4(address) if isinstance(address, ipaddress.IPv6Address) else None
    return str(address) if embedded is None else f"{address} (IPv4 {embedded})"


def literal_address(host: str) -> IPAddress | None:
    """The address ``host`` spells, as the resolver reads it (``inet_aton`` accepts ``2852039166``,
    ``0xa9.0xfe.0xa9.0xfe``, ``0251.0376.0251.0376``, ``169.254.43518``); None for a name."""
    text = unquote(host).strip().strip("[]").rstrip(".").split("%", 1)[0]
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        pass
    try:
        return ipaddress.IPv4Address(socket.inet_aton(text))
    except (OSError, ValueError):
        return None


def url_refusal(url: str, policy: NetworkPolicy) -> str | None:
    """Why ``url`` may not be used by a host or judge client, or None. Parsed by the standard library and by
    httpx (the clients' parser), so a URL the two read differently cannot slip between them."""
    if "://" not in url:  # a bare host:port, as ollama takes it
        url = f"http://{url}"
    try:
        parts = urlsplit(url)
        parsed = httpx.URL(url)
    except (ValueError, httpx.InvalidURL) as error:
        return f"{url!r} is not a valid URL: {error}"
    if "@" in parts.netloc or parsed.userinfo:
        return (
            f"{url!r} holds userinfo (text before '@' in the address): refused, as it hides the real host; "
            "put credentials in an environment variable named by secret_ref"
        )
    for host in {parts.hostname or "", parsed.host}:
        address = literal_address(host) if host else None
        network = None if address is None else policy.blocking_network(address)
        if network is not None:
            return f"{url!r} is the address {shown(address)}, in the blocked network {network} (setting {SETTING})"
    return None


def check_url(url: str, field: str, policy: NetworkPolicy | None = None) -> None:
    """Raise ``ValueError`` naming ``field`` when ``url`` is refused by the policy; an empty URL passes."""
    if not url:
        return
    reason = url_refusal(url, policy or current_policy())
    if reason is not None:
        raise ValueError(f"field {field!r}: {reason}")


def vetted_addresses(host: str, addresses: Sequence[str], policy: NetworkPolicy) -> list[str]:
    """The resolved ``addresses`` of ``host`` (duplicates dropped), or ``BlockedAddress`` when any of them is
    blocked: a name that resolves to a metadata address is refused outright, not retried elsewhere."""
    vetted: list[str] = []
    for text in addresses:
        address = ipaddress.ip_address(text.split("%", 1)[0])
        network = policy.blocking_network(address)
        if network is not None:
            raise BlockedAddress(
                f"connection to {host} refused: it resolves to {shown(address)}, in the blocked network {network} "
                f"(setting {SETTING}); nothing was sent"
            )
        if text not in vetted:
            vetted.append(text)
    return vetted


def check_resolved(url: str, policy: NetworkPolicy | None = None) -> None:
    """For clients whose connections Assay does not open itself (h2ogpte's urllib3 pool and websocket):
    ``BlockedAddress`` when ``url`` is refused or its host resolves to a blocked address now. A resolver that
    answers differently a moment later (DNS rebinding) is not caught here, unlike the guarded transports."""
    policy = policy or current_policy()
    reason = url_refusal(url, policy)
    if reason is not None:
        raise BlockedAddress(f"connection refused: {reason}; nothing was sent")
    host = urlsplit(url if "://" in url else f"http://{url}").hostname
    try:
        found = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM) if host else []
    except OSError:
        return  # unresolvable: the client reports it when it tries
    vetted_addresses(host or "", [str(info[4][0]) for info in found], policy)
