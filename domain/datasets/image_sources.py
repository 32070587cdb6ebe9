"""Which images an uploaded example may point at: an https:// or http:// address of a public host, or the image
itself in a data:image/...;base64 URL.

Whatever later opens an example's images (a trainer, a page) must never be sent to the server's own files or to
addresses only the server can reach, so a file:// URL, a bare path, any other scheme, and an address whose host is
loopback, private, link-local or unspecified are refused at upload. A host given by name is not resolved (there is
no DNS lookup at upload): only `localhost` and addresses written as numbers are judged by their host.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit

WEB_SCHEMES = ("https", "http")
ALLOWED = "an image is an https:// or http:// address of a public host, or a data:image/...;base64 URL"
# Where a content part names its image: {"type": "image_url", "image_url": {"url": ...}} (OpenAI chat),
# {"type": "input_image", "image_url": ...} (OpenAI responses), {"type": "image", "image" | "url" | "path": ...}
# (Hugging Face chat templates). A part with none of them is a placeholder for the example's "images".
REFERENCE_KEYS = ("image_url", "image", "url", "path", "file")
SHOWN_CHARACTERS = 60
_DATA_IMAGE = re.compile(r"data:image/[a-z0-9.+-]+;base64,[a-z0-9+/=\s]*", re.IGNORECASE)
_NOT_IN_AN_ADDRESS = re.compile(r"[\s\\\x00-\x1f\x7f]")
# Hosts written as numbers the way inet_aton reads them (127.1, 0x7f.0.0.1, 2130706433): each is an IPv4 address.
_NUMERIC_HOST = re.compile(r"(?:0x[0-9a-f]*|[0-9]+)(?:\.(?:0x[0-9a-f]*|[0-9]+)){0,3}", re.IGNORECASE)


def image_reference_problem(reference: Any) -> str | None:
    """Why an image may not be taken from `reference`, in words; None when it may.

    >>> image_reference_problem("https://images.example/cat.png") is None
    True
    >>> image_reference_problem("http://127.0.0.1/cat.png").split(":")[:2]
    ['is http', '//127.0.0.1/cat.png, whose host 127.0.0.1 is a loopback address, not a public one']
    """
    if isinstance(reference, Mapping):  # {"url": ...}, as OpenAI's image_url gives it
        reference = reference.get("url")
    if not isinstance(reference, str) or not reference.strip():
        return f"has no image address: {ALLOWED}."
    shown = _shown(reference)
    if _DATA_IMAGE.fullmatch(reference):
        return None
    if _NOT_IN_AN_ADDRESS.search(reference.strip()):
        return f"is {shown}, which is not a well-formed address: {ALLOWED}."
    try:
        parts = urlsplit(reference.strip())
        parts.port  # noqa: B018 - a port that is no number raises here
    except ValueError:
        return f"is {shown}, which is not a well-formed address: {ALLOWED}."
    if parts.scheme.lower() not in WEB_SCHEMES:
        return f"is {shown}: {ALLOWED}."
    if parts.username is not None or parts.password is not None:
        return f"is {shown}, an address with a user name or password in it: {ALLOWED}."
    host = (parts.hostname or "").rstrip(".")
    if not host:
        return f"is {shown}, an address without a host: {ALLOWED}."
    kind = _non_public_kind(host)
    if kind is not None:
        return f"is {shown}, whose host {host} is {kind}, not a public one: {ALLOWED}."
    return None


def part_image_references(part: Mapping[str, Any]) -> Iterator[Any]:
    """What an image content part names as its image (nothing for a placeholder such as {"type": "image"})."""
    for key in REFERENCE_KEYS:
        if part.get(key) is not None:
            yield part[key]


def _non_public_kind(host: str) -> str | None:
    """'a loopback address', 'a private address', ... for a host the server alone (or no one) reaches."""
    if host.lower() == "localhost" or host.lower().endswith(".localhost"):
        return "a loopback address"
    address = _address(host)
    if address is None:
        return None  # a name: not resolved here
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if address.is_unspecified:
        return "an unspecified address"
    if address.is_loopback:
        return "a loopback address"
    if address.is_link_local:
        return "a link-local address"
    if address.is_private:
        return "a private address"
    if not address.is_global or address.is_multicast:
        return "a reserved address"
    return None


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    if not _NUMERIC_HOST.fullmatch(host):
        return None
    return _inet_aton(host)


def _inet_aton(host: str) -> ipaddress.IPv4Address | None:
    """An IPv4 address in the older forms clients still accept: 1 to 4 parts, each decimal, 0x hex or 0 octal,
    the last filling the bytes left (127.1 is 127.0.0.1). None when it is no address at all."""
    numbers = []
    for part in host.split("."):
        lowered = part.lower()
        try:
            if lowered.startswith("0x"):
                numbers.append(int(lowered[2:] or "0", 16))
            elif len(part) > 1 and part.startswith("0"):
                numbers.append(int(part, 8))
            else:
                numbers.append(int(part, 10))
        except ValueError:
            return None
    *leading, last = numbers
    if any(number > 255 for number in leading) or last >= 256 ** (4 - len(leading)):
        return None
    value = last
    for position, number in enumerate(leading):
        value += number << (8 * (3 - position))
    return ipaddress.IPv4Address(value)


def _shown(reference: str) -> str:
    text = reference.strip()
    if text.lower().startswith("data:"):
        text = text.split(",", 1)[0] + ",..."
    return text if len(text) <= SHOWN_CHARACTERS else text[: SHOWN_CHARACTERS - 3] + "..."
