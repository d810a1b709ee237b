"""Serving a review project (``labelaudit review serve``): bind the address, then run.

:func:`open_server` does everything that can fail in a way the user can fix before the
server starts: it opens the project, builds the app, binds ``host:port`` (a port in use, a
port that needs root, an unknown host or one that is not this machine's is one clear
error), records the address for the invites made from now on, and lists what the user
should know (:attr:`ReviewServer.notices`: the app is exposed beyond this machine, or
invite links point elsewhere). :meth:`ReviewServer.run` then serves until interrupted.
"""

from __future__ import annotations

import errno
import socket
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from labelaudit._errors import InvalidParameterError, LabelAuditError, MissingExtraError
from labelaudit.review._links import (
    DEFAULT_HOST,
    http_url,
    record_serve,
    serve_port,
    unreachable_links,
)
from labelaudit.review._store import ReviewStore, as_store

__all__ = ["ReviewServer", "open_server", "serve"]

_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def _bind(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port``, or a one-line error saying what to do."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
    except (OSError, UnicodeError) as exc:
        raise InvalidParameterError(
            f"cannot serve on {host}:{port}: the host {host!r} is unknown "
            f"({getattr(exc, 'strerror', None) or exc}); use --host 127.0.0.1 (this machine) "
            "or 0.0.0.0 (every address)") from None
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except OSError as exc:
        sock.close()
        reasons: dict[int | None, str] = {
            errno.EADDRINUSE: f"port {port} is already in use (another server, or this "
                              "project served already?); stop that one or choose another "
                              "--port",
            errno.EACCES: f"no permission to use port {port} (ports below 1024 need root); "
                          "choose another --port, e.g. 8000",
            errno.EADDRNOTAVAIL: f"{host} is not an address of this machine; use --host "
                                 "127.0.0.1 (this machine) or 0.0.0.0 (every address)",
        }
        raise InvalidParameterError(
            f"cannot serve on {host}:{port}: {reasons.get(exc.errno, exc.strerror or str(exc))}"
        ) from None
    return sock


@dataclass
class ReviewServer:
    """A review app bound to its address, ready to :meth:`run`.

    Attributes
    ----------
    store : ReviewStore
    host, port : str, int
        The bound address.
    notices : list of str
        What the user should know before reviewers come: the app is reachable beyond this
        machine, or invite links point to another address (naming the reviewers and the
        fix).
    """

    store: ReviewStore
    host: str
    port: int
    app: Any = field(repr=False)
    sock: socket.socket = field(repr=False)
    notices: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        """The address to open (``http://127.0.0.1:PORT`` for a server on every address)."""
        return http_url(self.host, self.port)

    def run(self) -> None:
        """Serve until interrupted (Ctrl-C); the socket is closed afterwards."""
        import uvicorn

        server = uvicorn.Server(uvicorn.Config(self.app, host=self.host, port=self.port,
                                               log_level="warning", access_log=False))
        try:
            server.run(sockets=[self.sock])
        except SystemExit:  # uvicorn exits on a failed startup; say it in one line below
            pass
        finally:
            self.sock.close()
        if not server.started:
            raise LabelAuditError(f"the review server did not start on {self.url} (see the "
                                  "messages above)")


def _notices(store: ReviewStore, host: str, port: int) -> list[str]:
    notices = []
    if host not in _LOOPBACK:
        notices.append(f"binding {host} exposes the app beyond this machine; use HTTPS in "
                       "front of it")
    url = http_url(host, port)
    for base, names in unreachable_links(store, host, port).items():
        shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        there = urlsplit(base)
        notices.append(
            f"the invite links of {shown} point to {base}, which does not reach this server "
            f"({url}); serve with --host {there.hostname} --port {there.port or 80} instead, "
            f"or give them new links: labelaudit review invite --db {store.path} --name NAME "
            f"--new-token --port {port}")
    return notices


def open_server(db: ReviewStore | str | Path, *, host: str = DEFAULT_HOST,
                port: int | None = None) -> ReviewServer:
    """Build a project's web app and bind it to ``host:port``, ready to run.

    Parameters
    ----------
    db : ReviewStore or path
        The project.
    host : str, default="127.0.0.1"
        The address to bind; ``0.0.0.0`` exposes the app to the network (put HTTPS in
        front of it).
    port : int, optional
        Default: the port of the project's invite links when they agree, else 8000.

    Returns
    -------
    ReviewServer
        Bound, with the address recorded for new invites; call :meth:`ReviewServer.run`.
    """
    try:
        import uvicorn  # noqa: F401 - checked before anything is bound
    except ImportError:  # pragma: no cover - depends on the environment
        raise MissingExtraError("uvicorn", "review") from None
    from labelaudit.review._app import create_app

    store = as_store(db)
    port = port if port is not None else serve_port(store)
    app = create_app(store)
    sock = _bind(host, port)
    record_serve(store, host, port)
    return ReviewServer(store=store, host=host, port=port, app=app, sock=sock,
                        notices=_notices(store, host, port))


def serve(db: ReviewStore | str | Path, *, host: str = DEFAULT_HOST,
          port: int | None = None) -> None:
    """Serve a review project until interrupted (:func:`open_server`, then run it).

    The server's notices come as :class:`UserWarning`.
    """
    server = open_server(db, host=host, port=port)
    for notice in server.notices:
        warnings.warn(notice, UserWarning, stacklevel=2)
    server.run()
