"""The review web app: FastAPI with server-rendered pages, no build step.

Security model (the checks themselves are in :mod:`labelaudit.review._security`)
------------------------------------------------------------------------------
* Every reviewer (and admin) has a personal link ``/login?token=...``; the token is 256
  random bits, stored only as a SHA-256 hash. Opening the link signs nobody in: it shows
  whose link it is and a button that POSTs the token (CSRF-checked like every form, with a
  per-browser nonce cookie, so another site cannot sign a browser in as its own reviewer:
  no login CSRF). The POST sets an ``HttpOnly``, ``SameSite=Strict`` session cookie holding
  the token and redirects to a URL without it.
* Every page needs a valid token (cookie, or ``Authorization: Bearer``); static files
  (CSS, JS) are the only exception.
* Answer forms carry a CSRF token, an HMAC of the reviewer, the item and the reviewer's
  token hash under the project's secret; a POST whose ``Origin`` is another site is
  refused as well. A refused answer is echoed back shortened (80 characters at most).
* A reviewer answers only the item they were shown, once (a unique constraint).
* Pages are Jinja2 templates with autoescaping, so dataset text containing HTML is shown
  as text; a strict Content-Security-Policy forbids inline scripts on top of that.
* ``serve`` binds 127.0.0.1 unless told otherwise.
"""

# no `from __future__ import annotations`: FastAPI reads the routes' annotations at runtime
import math
import secrets
from pathlib import Path
from typing import Any

from labelaudit._errors import MissingExtraError
from labelaudit.review._protocol import NONE_OF_THESE, UNSURE
from labelaudit.review._queue import next_item, progress, record_answer
from labelaudit.review._security import (
    SECURITY_HEADERS,
    csrf_ok,
    csrf_token,
    hash_token,
    login_csrf,
)
from labelaudit.review._store import Reviewer, ReviewStore

__all__ = ["COOKIE", "LOGIN_COOKIE", "create_app"]

COOKIE = "labelaudit_review"
LOGIN_COOKIE = "labelaudit_login"  # the sign-in form's nonce, bound to this browser
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


def _shortcut(number: int, option: str) -> str:
    if option == NONE_OF_THESE:
        return "n"
    if option == UNSURE:
        return "u"
    return str(number) if number <= 9 else ""


class _Pages:
    """What every route needs: the project, its secret, the templates and the session."""

    def __init__(self, store: ReviewStore, jinja2: Any) -> None:
        self.store = store
        self.config = store.config
        self.secret = store.secret
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(_HERE / "templates"),
            autoescape=jinja2.select_autoescape(["html"], default=True),
            undefined=jinja2.StrictUndefined,
        )

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
    """Build the FastAPI app serving a review project.

    Parameters
    ----------
    db : path or ReviewStore
        The project file made by ``labelaudit review init``.

    Returns
    -------
    fastapi.FastAPI
    """
    fastapi, jinja2 = _imports()
    from fastapi import Request
    from fastapi.staticfiles import StaticFiles

    store = db if isinstance(db, ReviewStore) else ReviewStore.open(db)
    pages = _Pages(store, jinja2)
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
        response = pages.page("login.html", who=reviewer.name, admin=reviewer.role == "admin",
                              token=token, csrf=login_csrf(pages.secret, nonce, hash_token(token)))
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
        expected = login_csrf(pages.secret, nonce, hash_token(token))
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
    def review_page(request: Request) -> Any:
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
        }
        if assignment.state != "item" or assignment.item is None:
            return pages.page("state.html", state=assignment.state,
                              text=_STATE_TEXTS.get(assignment.state, ""), **common)
        item = assignment.item
        options = [{"value": option, "key": _shortcut(n, option),
                    "label": option if option not in (NONE_OF_THESE, UNSURE)
                    else option.capitalize()}
                   for n, option in enumerate(config.options, start=1)]
        return pages.page(
            "item.html", item=item, options=options, show_label=config.show_label,
            csrf=pages.form_csrf(reviewer, token_hash, f"answer:{item['item_pk']}"),
            qualification_index=assignment.qualification_index,
            qualification_total=assignment.qualification_total,
            instructions=config.instructions, **common,
        )

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
        if outcome.recorded:
            return RedirectResponse("/", status_code=303)
        return pages.message("Answer not recorded", outcome.message,
                             _REFUSED_ANSWER_CODES[outcome.status])

    @app.get("/admin")
    def admin(request: Request) -> Any:
        reviewer, token_hash = pages.session(request)
        if reviewer is None:
            return pages.unauthorised()
        if reviewer.role != "admin":
            return pages.message("Admins only", "This page is for the project's admin.", 403)
        from labelaudit.review._results import review_results

        results = review_results(store)
        done = progress(store)
        return pages.page(
            "admin.html", reviewer=reviewer, progress=done, results=results,
            counts=results.verdict_counts(), config=config,
            percent=int(math.floor(100 * done.share_complete)),
            reviewers=results.reviewers.to_dict("records"),
            items=results.items.head(200).to_dict("records"),
            logout_csrf=pages.form_csrf(reviewer, token_hash, "logout"),
            fmt=_fmt,
        )

    @app.get("/favicon.ico")
    def favicon() -> Any:
        return Response(status_code=204)


def _fmt(value: Any, digits: int = 2) -> str:
    """Format a number for a table cell ('' for missing values)."""
    if value is None:
        return ""
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        return f"{value:.{digits}f}"
    return str(value)
