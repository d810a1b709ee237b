"""The review web app (FastAPI, server-rendered pages), the reviewers' links, and serving it.

Security: each personal link ``/login?token=...`` (256 random bits, stored as a SHA-256 hash)
shows a button that POSTs the token, CSRF-checked with a per-browser nonce cookie (another
site cannot sign a browser in as its reviewer); that sets an ``HttpOnly``, ``SameSite=Strict``
cookie and redirects to a URL without the token. Every page but static files needs the token;
every form carries :func:`csrf_token` and :func:`csrf_ok` refuses another site's ``Origin``.
A reviewer answers only the item shown, once; a refused answer is echoed shortened (80
characters). Jinja2 autoescapes, :data:`SECURITY_HEADERS` forbid inline scripts, framing,
sniffing and caching, and ``serve`` binds 127.0.0.1 unless told otherwise.

An invite link's base: ``--base-url``; ``http://<host>:<--port>`` (host of the last ``serve``,
else 127.0.0.1); the address last served on; the previous invite's base; 127.0.0.1:8000.
``serve`` without ``--port`` uses the links' port when they agree and warns, naming the
reviewers, when a link cannot reach it. :func:`open_server` does all that can fail first.
"""

# no `from __future__ import annotations`: FastAPI reads the routes' annotations at runtime
import errno
import hashlib
import hmac
import math
import secrets
import socket
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from labelaudit._errors import InvalidParameterError, LabelAuditError, MissingExtraError
from labelaudit.review._evidence import hide_items, stored_evidence
from labelaudit.review._protocol import NONE_OF_THESE, UNSURE
from labelaudit.review._results import review_results
from labelaudit.review._store import (
    Reviewer,
    ReviewStore,
    answered_item,
    as_store,
    hash_token,
    next_item,
    progress,
    record_answer,
    unanswered_ids,
)

COOKIE = "labelaudit_review"
LOGIN_COOKIE = "labelaudit_login"  # the sign-in form's nonce, bound to this browser
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
_WILDCARD = ("0.0.0.0", "::", "")
_LOOPBACK = ("127.0.0.1", "localhost", "::1")

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
        "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


def csrf_token(secret: bytes, reviewer_pk: int | str, token_hash: str, purpose: str) -> str:
    """The CSRF token of one form (``purpose``); sign-in passes the nonce as ``reviewer_pk``.

    >>> a = csrf_token(b"k", 1, hash_token("t"), "answer:3")
    >>> a == csrf_token(b"k", 1, hash_token("t"), "answer:4"), len(a)
    (False, 64)
    """
    message = f"{purpose}:{reviewer_pk}:{token_hash}".encode()
    return hmac.new(secret, message, hashlib.sha256).hexdigest()


def foreign_origin(headers: Mapping[str, str]) -> bool:
    """Whether a request's ``Origin`` is another site than its ``Host`` (``null`` is).

    >>> [foreign_origin({"origin": o, "host": "h:80"}) for o in ("http://evil.example", "http://h:80")]
    [True, False]
    >>> foreign_origin({"host": "127.0.0.1:8000"})  # no Origin: the CSRF token decides
    False
    """
    origin = headers.get("origin")
    if not origin or origin == "null":
        return origin == "null"
    return origin.split("://", 1)[-1] != headers.get("host", "")


def csrf_ok(headers: Mapping[str, str], given: str, expected: str) -> bool:
    """The CSRF check of every POST: same site, and the expected token (constant time).

    >>> csrf_ok({"host": "h"}, "abc", "abc"), csrf_ok({"host": "h"}, "é", "abc")
    (True, False)
    """
    if foreign_origin(headers):
        return False
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


def http_url(host: str, port: int) -> str:
    """The address of a server bound to ``host:port`` (all addresses: 127.0.0.1).

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
            "https://review.example.org", param="base_url")
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
    """The port ``serve`` uses without ``--port``: the invite links' when they agree, else 8000."""
    links = store.setting("invite_links", {})
    ports = {address[1] for address in map(_address, links.values()) if address is not None}
    return ports.pop() if len(ports) == 1 else DEFAULT_PORT


def unreachable_links(store: ReviewStore, host: str, port: int) -> dict[str, list[str]]:
    """Invite links (base -> names) that miss ``host:port``; ``https`` ones may be proxied."""
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
    name : str
        The reviewer's name, unique in the project.
    admin : bool
        An admin sees ``/admin`` and reviews nothing.
    new_token : bool
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
    links = dict(store.setting("invite_links", {}))  # each reviewer's base, the latest last
    links.pop(reviewer.name, None)
    links[reviewer.name] = base
    store.set_setting("invite_links", links)
    return Invitation(reviewer=reviewer, token=token, base=base)


_HERE = Path(__file__).parent
_STATE_TEXTS = {
    "done": "There is nothing left for you to review. Thank you!",
    "waiting": "The remaining items are being reviewed by others right now. "
               "Come back in a few minutes.",
    "failed": "You did not pass the qualification test, so there are no items "
              "for you. Thank you for your time.",
    "suspended": "Your reviews are paused: too many answers on check items "
                 "disagreed with their known labels. Contact the project's admin.",
}
_REFUSED_ANSWER_CODES = {"duplicate": 409, "item_full": 409, "invalid_answer": 400,
                         "unknown_item": 404, "not_shown": 403, "not_allowed": 403}


def _imports() -> tuple[Any, Any]:
    try:
        import fastapi
        import jinja2
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingExtraError(exc.name or "fastapi", "review") from None
    import importlib.util

    if not (importlib.util.find_spec("python_multipart") or importlib.util.find_spec("multipart")):
        raise MissingExtraError("python-multipart", "review")  # FastAPI's forms need it
    return fastapi, jinja2


class _Pages:
    """What every route needs: the project, its secret, the templates and the session."""

    def __init__(self, store: ReviewStore, jinja2: Any) -> None:
        self.store = store
        self.config = store.config
        self.secret = store.secret
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(_HERE / "templates"),
            autoescape=jinja2.select_autoescape(["html"], default=True),
            undefined=jinja2.StrictUndefined)

    def page(self, name: str, status_code: int = 200, **context: Any) -> Any:
        from fastapi.responses import HTMLResponse

        body = self.env.get_template(name).render(title=self.config.title, **context)
        return HTMLResponse(body, status_code=status_code)

    def message(self, title: str, text: str, status_code: int, link: str | None = "/") -> Any:
        return self.page("message.html", status_code, heading=title, text=text, link=link)

    def session(self, request: Any) -> tuple[Reviewer | None, str]:
        """The signed-in reviewer (session cookie or bearer token) and their token hash."""
        token = request.cookies.get(COOKIE)
        header = request.headers.get("authorization", "")
        if not token and header.lower().startswith("bearer "):
            token = header[7:].strip()
        reviewer = self.store.reviewer_by_token(token)
        return reviewer, (hash_token(token) if reviewer and token else "")

    def form_csrf(self, reviewer: Reviewer, token_hash: str, purpose: str) -> str:
        return csrf_token(self.secret, reviewer.reviewer_pk, token_hash, purpose)

    def unauthorised(self) -> Any:
        return self.message("Sign-in needed", "This page needs your personal review link. "
                            "Ask the project's admin for one (labelaudit review invite).", 401,
                            link=None)

    def invalid_link(self) -> Any:
        return self.message("Link not valid", "This review link is not valid (it may have "
                            "been replaced). Ask the project's admin for a new one.", 401,
                            link=None)


def create_app(db: str | Path | ReviewStore) -> Any:
    """The FastAPI app serving a review project (a :class:`ReviewStore` or its file)."""
    fastapi, jinja2 = _imports()
    from fastapi import Request
    from fastapi.staticfiles import StaticFiles

    pages = _Pages(as_store(db), jinja2)
    app = fastapi.FastAPI(title="labelaudit review", docs_url=None, redoc_url=None,
                          openapi_url=None)
    app.mount("/static", StaticFiles(directory=_HERE / "static"), name="static")

    @app.middleware("http")
    async def security_headers(request: Request, call_next: Any) -> Any:
        response = await call_next(request)
        for key, value in SECURITY_HEADERS.items():
            response.headers.setdefault(key, value)
        return response

    _sign_in_routes(app, pages, fastapi)
    _review_routes(app, pages, fastapi)
    return app


def _sign_in_routes(app: Any, pages: _Pages, fastapi: Any) -> None:
    """``/login`` (GET shows whose link it is, POST signs in) and ``/logout``."""
    from fastapi import Request
    from fastapi.responses import RedirectResponse

    @app.get("/login")
    def login_page(request: Request, token: str = "") -> Any:
        """Whose link this is, and a button that signs in: a GET changes nothing."""
        reviewer = pages.store.reviewer_by_token(token)
        if reviewer is None:
            return pages.invalid_link()
        nonce = request.cookies.get(LOGIN_COOKIE, "")
        if not 20 <= len(nonce) <= 100:
            nonce = secrets.token_urlsafe(32)
        csrf = csrf_token(pages.secret, nonce, hash_token(token), "login")
        response = pages.page("login.html", who=reviewer.name, admin=reviewer.role == "admin",
                              token=token, csrf=csrf)
        response.set_cookie(LOGIN_COOKIE, nonce, httponly=True, samesite="strict",
                            path="/login", max_age=24 * 3600)
        return response

    @app.post("/login")
    def login(request: Request, token: str = fastapi.Form(""),
              csrf: str = fastapi.Form("")) -> Any:
        reviewer = pages.store.reviewer_by_token(token)
        if reviewer is None:
            return pages.invalid_link()
        nonce = request.cookies.get(LOGIN_COOKIE, "")
        expected = csrf_token(pages.secret, nonce, hash_token(token), "login")
        if not nonce or not csrf_ok(request.headers, csrf, expected):
            return pages.message("Request refused", "The sign-in form was not valid (CSRF "
                                 "check). Open your personal link again and press the button.",
                                 403, link=None)
        target = "/admin" if reviewer.role == "admin" else "/"
        response = RedirectResponse(target, status_code=303)
        response.set_cookie(COOKIE, token, httponly=True, samesite="strict", path="/",
                            max_age=30 * 24 * 3600)
        response.delete_cookie(LOGIN_COOKIE, path="/login", httponly=True, samesite="strict")
        return response

    @app.post("/logout")
    def logout(request: Request, csrf: str = fastapi.Form("")) -> Any:
        reviewer, token_hash = pages.session(request)
        if reviewer is None:
            return pages.unauthorised()
        expected = pages.form_csrf(reviewer, token_hash, "logout")
        if not csrf_ok(request.headers, csrf, expected):
            return pages.message("Request refused", "The form was not valid (CSRF check).", 403)
        response = pages.message("Signed out", "You are signed out. Open your personal link "
                                 "to continue.", 200, link=None)
        response.delete_cookie(COOKIE, path="/")
        return response


def _review_routes(app: Any, pages: _Pages, fastapi: Any) -> None:
    """``/`` (the next item), ``/answer``, ``/admin`` and ``/favicon.ico``."""
    from fastapi import Request
    from fastapi.responses import RedirectResponse, Response

    store, config = pages.store, pages.config

    @app.get("/")
    def review_page(request: Request, after: str = "") -> Any:
        reviewer, token_hash = pages.session(request)
        if reviewer is None:
            return pages.unauthorised()
        if reviewer.role == "admin":
            return RedirectResponse("/admin", status_code=303)
        assignment = next_item(store, reviewer.reviewer_pk)
        done = progress(store, reviewer.reviewer_pk)
        common: dict[str, Any] = {
            "reviewer": reviewer, "progress": done,
            "logout_csrf": pages.form_csrf(reviewer, token_hash, "logout"),
            "percent": int(math.floor(100 * done.share_complete)),
            "answered": (_answered_panel(store, reviewer.reviewer_pk, int(after))
                         if after.isdigit() and not config.show_label else None),
        }
        if assignment.state != "item" or assignment.item is None:
            return pages.page("state.html", state=assignment.state,
                              text=_STATE_TEXTS.get(assignment.state, ""), **common)
        item = assignment.item
        keys = {NONE_OF_THESE: "n", UNSURE: "u"}  # keyboard shortcuts; labels 1 to 9
        options = [{"value": option, "key": keys.get(option, str(n) if n <= 9 else ""),
                    "label": option.capitalize() if option in keys else option}
                   for n, option in enumerate(config.options, start=1)]
        # the evidence names the suggested label: beside the item only where the given label
        # is shown too; a blind reviewer sees it after answering (``after``), never before
        evidence = _evidence_of(item) if config.show_label else None
        return pages.page(
            "item.html", item=item, options=options, show_label=config.show_label,
            evidence=evidence,
            csrf=pages.form_csrf(reviewer, token_hash, f"answer:{item['item_pk']}"),
            qualification_index=assignment.qualification_index,
            qualification_total=assignment.qualification_total,
            instructions=config.instructions, **common)

    @app.post("/answer")
    def answer(request: Request, item: int = fastapi.Form(...), answer: str = fastapi.Form(...),
               csrf: str = fastapi.Form("")) -> Any:
        reviewer, token_hash = pages.session(request)
        if reviewer is None:
            return pages.unauthorised()
        expected = pages.form_csrf(reviewer, token_hash, f"answer:{item}")
        if not csrf_ok(request.headers, csrf, expected):
            return pages.message("Request refused", "The form was not valid (CSRF check). "
                                 "Reload the page and answer again.", 403)
        outcome = record_answer(store, reviewer.reviewer_pk, item, answer)
        if outcome.recorded:  # a blind review shows the answered item's evidence next
            return RedirectResponse("/" if config.show_label else f"/?after={item}",
                                    status_code=303)
        return pages.message("Answer not recorded", outcome.message,
                             _REFUSED_ANSWER_CODES[outcome.status])

    @app.get("/admin")
    def admin(request: Request) -> Any:
        reviewer, token_hash = pages.session(request)
        if reviewer is None:
            return pages.unauthorised()
        if reviewer.role != "admin":
            return pages.message("Admins only", "This page is for the project's admin.", 403)
        results = review_results(store)
        done = progress(store)
        return pages.page(
            "admin.html", reviewer=reviewer, progress=done, results=results,
            counts=results.verdict_counts(), config=config,
            percent=int(math.floor(100 * done.share_complete)),
            reviewers=results.reviewers.to_dict("records"),
            items=results.items.head(200).to_dict("records"),
            logout_csrf=pages.form_csrf(reviewer, token_hash, "logout"),
            fmt=_fmt)

    @app.get("/favicon.ico")
    def favicon() -> Any:
        return Response(status_code=204)


def _evidence_of(item: Any) -> dict[str, Any] | None:
    """An item row's evidence (None for none, or a project file this labelaudit could not
    bring up to date, which lacks the column)."""
    return stored_evidence(item["evidence"]) if "evidence" in item.keys() else None


def _answered_panel(store: ReviewStore, reviewer_pk: int, item_pk: int,
                    ) -> dict[str, Any] | None:
    """What a blind reviewer sees after answering ``item_pk``: its text, their answer and its
    evidence, without neighbours or duplicates that are items they have still to answer
    (their labels would give those away). None unless they answered it and it has evidence."""
    found = answered_item(store, reviewer_pk, item_pk)
    if found is None:  # not answered (yet): showing it would lead the answer
        return None
    item, answer = found
    evidence = _evidence_of(item)
    if evidence is None:
        return None
    text = str(item["text"])
    return {"text": text if len(text) <= 160 else text[:159] + "…", "answer": answer,
            "evidence": hide_items(evidence, unanswered_ids(store, reviewer_pk))}


def _fmt(value: Any, digits: int = 2) -> str:
    """Format a number for a table cell ('' for missing values)."""
    if value is None:
        return ""
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        return f"{value:.{digits}f}"
    return str(value)


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
    """A review app bound to ``host:port``; ``notices``: exposed app, invite links missing it."""

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
    host : str
        The address to bind; ``0.0.0.0`` exposes the app to the network (put HTTPS before it).
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
    store = as_store(db)
    port = port if port is not None else serve_port(store)
    app = create_app(store)
    sock = _bind(host, port)
    store.set_setting("served_at", {"host": host, "port": int(port)})  # for the next invites
    return ReviewServer(store=store, host=host, port=port, app=app, sock=sock,
                        notices=_notices(store, host, port))


def serve(db: ReviewStore | str | Path, *, host: str = DEFAULT_HOST,
          port: int | None = None) -> None:
    """Serve a project until interrupted (:func:`open_server`, run); notices are UserWarnings."""
    server = open_server(db, host=host, port=port)
    for notice in server.notices:
        warnings.warn(notice, UserWarning, stacklevel=2)
    server.run()
