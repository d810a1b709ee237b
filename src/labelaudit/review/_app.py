"""The review web app: FastAPI with server-rendered pages, no build step.

Security model
--------------
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

import hmac
import math
import secrets
from hashlib import sha256
from pathlib import Path
from typing import Any

from labelaudit._errors import MissingExtraError
from labelaudit.review._protocol import NONE_OF_THESE, UNSURE
from labelaudit.review._queue import next_item, progress, record_answer
from labelaudit.review._store import Reviewer, ReviewStore, hash_token

__all__ = ["create_app", "COOKIE"]

COOKIE = "labelaudit_review"
LOGIN_COOKIE = "labelaudit_login"  # the sign-in form's nonce, bound to this browser
_HERE = Path(__file__).parent
_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
        "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


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


def csrf_token(secret: bytes, reviewer: Reviewer, token_hash: str, purpose: str) -> str:
    """The CSRF token for one form (``purpose`` names the item or the action)."""
    message = f"{purpose}:{reviewer.reviewer_pk}:{token_hash}".encode()
    return hmac.new(secret, message, sha256).hexdigest()


def login_csrf(secret: bytes, nonce: str, token_hash: str) -> str:
    """The CSRF token of the sign-in form: ties the form to the browser's nonce cookie."""
    return hmac.new(secret, f"login:{nonce}:{token_hash}".encode(), sha256).hexdigest()


def _same(given: str, expected: str) -> bool:
    """Constant-time comparison that any submitted text (non-ASCII too) can go through."""
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


def _shortcut(number: int, option: str) -> str:
    if option == NONE_OF_THESE:
        return "n"
    if option == UNSURE:
        return "u"
    return str(number) if number <= 9 else ""


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
    from fastapi.responses import HTMLResponse, RedirectResponse, Response
    from fastapi.staticfiles import StaticFiles

    store = db if isinstance(db, ReviewStore) else ReviewStore.open(db)
    config = store.config
    secret = store.secret
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(_HERE / "templates"),
        autoescape=jinja2.select_autoescape(["html"], default=True),
        undefined=jinja2.StrictUndefined,
    )
    app = fastapi.FastAPI(title="labelaudit review", docs_url=None, redoc_url=None,
                          openapi_url=None)
    app.mount("/static", StaticFiles(directory=_HERE / "static"), name="static")

    @app.middleware("http")
    async def security_headers(request: Request, call_next: Any) -> Any:
        response = await call_next(request)
        for key, value in _HEADERS.items():
            response.headers.setdefault(key, value)
        return response

    def page(name: str, status_code: int = 200, **context: Any) -> Any:
        body = env.get_template(name).render(title=config.title, **context)
        return HTMLResponse(body, status_code=status_code)

    def message(title: str, text: str, status_code: int, link: str | None = "/") -> Any:
        return page("message.html", status_code, heading=title, text=text, link=link)

    def session(request: Request) -> tuple[Reviewer | None, str]:
        token = request.cookies.get(COOKIE)
        header = request.headers.get("authorization", "")
        if not token and header.lower().startswith("bearer "):
            token = header[7:].strip()
        reviewer = store.reviewer_by_token(token)
        return reviewer, (hash_token(token) if reviewer and token else "")

    def unauthorised() -> Any:
        return message("Sign-in needed", "This page needs your personal review link. Ask the "
                       "project's admin for one (labelaudit review invite).", 401, link=None)

    def foreign_origin(request: Request) -> bool:
        origin = request.headers.get("origin")
        if not origin or origin == "null":
            return origin == "null"
        host = request.headers.get("host", "")
        return origin.split("://", 1)[-1] != host

    def invalid_link() -> Any:
        return message("Link not valid", "This review link is not valid (it may have been "
                       "replaced). Ask the project's admin for a new one.", 401, link=None)

    @app.get("/login")
    def login_page(request: Request, token: str = "") -> Any:
        """Whose link this is, and a button that signs in: a GET changes nothing."""
        reviewer = store.reviewer_by_token(token)
        if reviewer is None:
            return invalid_link()
        nonce = request.cookies.get(LOGIN_COOKIE, "")
        if not 20 <= len(nonce) <= 100:
            nonce = secrets.token_urlsafe(32)
        response = page("login.html", who=reviewer.name, admin=reviewer.role == "admin",
                        token=token, csrf=login_csrf(secret, nonce, hash_token(token)))
        response.set_cookie(LOGIN_COOKIE, nonce, httponly=True, samesite="strict",
                            path="/login", max_age=24 * 3600)
        return response

    @app.post("/login")
    def login(request: Request, token: str = fastapi.Form(""),
              csrf: str = fastapi.Form("")) -> Any:
        reviewer = store.reviewer_by_token(token)
        if reviewer is None:
            return invalid_link()
        nonce = request.cookies.get(LOGIN_COOKIE, "")
        expected = login_csrf(secret, nonce, hash_token(token))
        if not nonce or foreign_origin(request) or not _same(csrf, expected):
            return message("Request refused", "The sign-in form was not valid (CSRF check). "
                           "Open your personal link again and press the button.", 403,
                           link=None)
        target = "/admin" if reviewer.role == "admin" else "/"
        response = RedirectResponse(target, status_code=303)
        response.set_cookie(COOKIE, token, httponly=True, samesite="strict", path="/",
                            max_age=30 * 24 * 3600)
        response.delete_cookie(LOGIN_COOKIE, path="/login", httponly=True, samesite="strict")
        return response

    @app.post("/logout")
    def logout(request: Request, csrf: str = fastapi.Form("")) -> Any:
        reviewer, token_hash = session(request)
        if reviewer is None:
            return unauthorised()
        expected = csrf_token(secret, reviewer, token_hash, "logout")
        if foreign_origin(request) or not _same(csrf, expected):
            return message("Request refused", "The form was not valid (CSRF check).", 403)
        response = message("Signed out", "You are signed out. Open your personal link to "
                           "continue.", 200, link=None)
        response.delete_cookie(COOKIE, path="/")
        return response

    @app.get("/")
    def review_page(request: Request) -> Any:
        reviewer, token_hash = session(request)
        if reviewer is None:
            return unauthorised()
        if reviewer.role == "admin":
            return RedirectResponse("/admin", status_code=303)
        assignment = next_item(store, reviewer.reviewer_pk)
        done = progress(store, reviewer.reviewer_pk)
        logout_csrf = csrf_token(secret, reviewer, token_hash, "logout")
        common: dict[str, Any] = {
            "reviewer": reviewer, "progress": done, "logout_csrf": logout_csrf,
            "percent": int(math.floor(100 * done.share_complete)),
        }
        if assignment.state != "item" or assignment.item is None:
            texts = {
                "done": "There is nothing left for you to review. Thank you!",
                "waiting": "The remaining items are being reviewed by others right now. "
                           "Come back in a few minutes.",
                "failed": "You did not pass the qualification test, so there are no items "
                          "for you. Thank you for your time.",
                "suspended": "Your reviews are paused: too many answers on check items "
                             "disagreed with their known labels. Contact the project's admin.",
            }
            return page("state.html", state=assignment.state,
                        text=texts.get(assignment.state, ""), **common)
        item = assignment.item
        options = [{"value": option, "key": _shortcut(n, option),
                    "label": option if option not in (NONE_OF_THESE, UNSURE)
                    else option.capitalize()}
                   for n, option in enumerate(config.options, start=1)]
        purpose = f"answer:{item['item_pk']}"
        return page(
            "item.html", item=item, options=options, show_label=config.show_label,
            csrf=csrf_token(secret, reviewer, token_hash, purpose),
            qualification_index=assignment.qualification_index,
            qualification_total=assignment.qualification_total,
            instructions=config.instructions, **common,
        )

    @app.post("/answer")
    def answer(request: Request, item: int = fastapi.Form(...), answer: str = fastapi.Form(...),
               csrf: str = fastapi.Form("")) -> Any:
        reviewer, token_hash = session(request)
        if reviewer is None:
            return unauthorised()
        expected = csrf_token(secret, reviewer, token_hash, f"answer:{item}")
        if foreign_origin(request) or not _same(csrf, expected):
            return message("Request refused", "The form was not valid (CSRF check). Reload "
                           "the page and answer again.", 403)
        outcome = record_answer(store, reviewer.reviewer_pk, item, answer)
        if outcome.recorded:
            return RedirectResponse("/", status_code=303)
        codes = {"duplicate": 409, "item_full": 409, "invalid_answer": 400,
                 "unknown_item": 404, "not_shown": 403, "not_allowed": 403}
        return message("Answer not recorded", outcome.message, codes[outcome.status])

    @app.get("/admin")
    def admin(request: Request) -> Any:
        reviewer, token_hash = session(request)
        if reviewer is None:
            return unauthorised()
        if reviewer.role != "admin":
            return message("Admins only", "This page is for the project's admin.", 403)
        from labelaudit.review._results import review_results

        results = review_results(store)
        done = progress(store)
        return page(
            "admin.html", reviewer=reviewer, progress=done, results=results,
            counts=results.verdict_counts(), config=config,
            percent=int(math.floor(100 * done.share_complete)),
            reviewers=results.reviewers.to_dict("records"),
            items=results.items.head(200).to_dict("records"),
            logout_csrf=csrf_token(secret, reviewer, token_hash, "logout"),
            fmt=_fmt,
        )

    @app.get("/favicon.ico")
    def favicon() -> Any:
        return Response(status_code=204)

    return app


def _fmt(value: Any, digits: int = 2) -> str:
    """Format a number for a table cell ('' for missing values)."""
    if value is None:
        return ""
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        return f"{value:.{digits}f}"
    return str(value)
