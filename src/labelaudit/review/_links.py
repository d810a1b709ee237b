"""Reviewers' links (``review invite``) and where they point, so that invite and serve agree.

An invite link is ``<base>/login?token=...``. Its base is, in this order:

1. ``--base-url`` (the address reviewers use, e.g. ``https://review.example.org`` behind a
   proxy);
2. ``http://<host>:<--port>`` (the host of the last ``serve``, else 127.0.0.1);
3. the address the project was last served on (``serve`` records it when it starts);
4. the base of the previous invite;
5. ``http://127.0.0.1:8000``, the address ``serve`` uses by default.

The project keeps each reviewer's base. ``serve`` without ``--port`` runs on the port of
those links (when they agree), and warns, naming the reviewers, when a link cannot reach
the server it starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from labelaudit._errors import InvalidParameterError
from labelaudit.review._store import Reviewer, ReviewStore, as_store

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "Invitation", "http_url", "invite_base",
           "invite_reviewer", "record_invite", "record_serve", "serve_port",
           "unreachable_links"]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
_WILDCARD = ("0.0.0.0", "::", "")
_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def http_url(host: str, port: int) -> str:
    """The address of a server bound to ``host:port`` (all addresses: 127.0.0.1).

    Examples
    --------
    >>> http_url("0.0.0.0", 8765), http_url("::1", 80)
    ('http://127.0.0.1:8765', 'http://[::1]:80')
    """
    shown = DEFAULT_HOST if host in _WILDCARD else host
    if ":" in shown:
        shown = f"[{shown}]"
    return f"http://{shown}:{port}"


def _check_base(base_url: str) -> str:
    parts = urlsplit(base_url.strip())
    try:
        parts.port  # noqa: B018 - raises on a port that is not a number in range
    except ValueError:
        parts = parts._replace(netloc="")
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query:
        raise InvalidParameterError(
            f"--base-url {base_url!r} is not an address like http://127.0.0.1:8000 or "
            "https://review.example.org", param="base_url"
        )
    return base_url.strip().rstrip("/")


def invite_base(store: ReviewStore, *, base_url: str | None = None,
                port: int | None = None) -> str:
    """The base of a new invite link (see the module notes for the order)."""
    if base_url is not None:
        return _check_base(base_url)
    served = store.setting("served_at")
    if port is not None:
        host = served["host"] if served and served["host"] not in _WILDCARD else DEFAULT_HOST
        return http_url(host, port)
    if served:
        return http_url(served["host"], int(served["port"]))
    links = store.setting("invite_links", {})
    if links:
        return str(list(links.values())[-1])
    return http_url(DEFAULT_HOST, DEFAULT_PORT)


def record_invite(store: ReviewStore, name: str, base: str) -> None:
    """Keep the base of ``name``'s link (the latest invite last)."""
    links = dict(store.setting("invite_links", {}))
    links.pop(name, None)
    links[name] = base
    store.set_setting("invite_links", links)


def record_serve(store: ReviewStore, host: str, port: int) -> None:
    """Keep where the project is served, for the invites made from now on."""
    store.set_setting("served_at", {"host": host, "port": int(port)})


def _address(url: str) -> tuple[str, int] | None:
    """Host and port of a plain ``http`` link; None where a proxy may be in between."""
    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.hostname:
        return None
    try:
        return parts.hostname, parts.port or 80
    except ValueError:
        return None


def serve_port(store: ReviewStore) -> int:
    """The port ``serve`` uses without ``--port``: that of the invite links when they all
    agree, else 8000."""
    links = store.setting("invite_links", {})
    ports = {address[1] for address in map(_address, links.values()) if address is not None}
    return ports.pop() if len(ports) == 1 else DEFAULT_PORT


def unreachable_links(store: ReviewStore, host: str, port: int) -> dict[str, list[str]]:
    """Invite links (base -> reviewer names) that cannot reach a server on ``host:port``:
    another port, or a loopback address while the server binds another one (or the
    reverse). ``https`` links are left out: a proxy may forward them anywhere."""
    found: dict[str, list[str]] = {}
    for name, base in store.setting("invite_links", {}).items():
        address = _address(base)
        if address is None:
            continue
        link_host, link_port = address
        wrong_host = host not in _WILDCARD and (link_host in _LOOPBACK) != (host in _LOOPBACK)
        if link_port != port or wrong_host:
            found.setdefault(base, []).append(name)
    return found


@dataclass(frozen=True)
class Invitation:
    """A reviewer's personal link: shown once, since only the token's hash is stored."""

    reviewer: Reviewer
    token: str
    base: str

    @property
    def url(self) -> str:
        """The link to send the reviewer: ``<base>/login?token=...``."""
        return f"{self.base}/login?token={self.token}"


def invite_reviewer(db: ReviewStore | str | Path, name: str, *, admin: bool = False,
                    new_token: bool = False, base_url: str | None = None,
                    port: int | None = None) -> Invitation:
    """Add a reviewer (or an admin) to a project and make their personal link.

    Parameters
    ----------
    db : ReviewStore or path
        The project.
    name : str
        The reviewer's name, unique in the project.
    admin : bool, default=False
        An admin sees ``/admin`` and reviews nothing.
    new_token : bool, default=False
        Give an existing reviewer a new link (the old one stops working).
    base_url, port : optional
        Where the link points (see the module notes for the default).

    Returns
    -------
    Invitation
    """
    store = as_store(db)
    base = invite_base(store, base_url=base_url, port=port)
    reviewer, token = store.add_reviewer(name, role="admin" if admin else "reviewer",
                                         new_token=new_token)
    record_invite(store, reviewer.name, base)
    return Invitation(reviewer=reviewer, token=token, base=base)
