"""The review app's security checks: token hashes, CSRF tokens and the CSRF check.

* A reviewer's token is 256 random bits, stored only as its SHA-256 (:func:`hash_token`).
* Every form carries a CSRF token, an HMAC under the project's secret: of the reviewer, the
  form's purpose (the item, ``logout``) and the reviewer's token hash for a signed-in form
  (:func:`csrf_token`); of a per-browser nonce cookie and the token hash for the sign-in
  form (:func:`login_csrf`), so that another site cannot sign a browser in as its own
  reviewer (no login CSRF).
* :func:`csrf_ok` is the check every POST goes through: the submitted token must equal
  the expected one (in constant time) and the request must not come from another site
  (its ``Origin``).
* :data:`SECURITY_HEADERS` go on every response: a strict Content-Security-Policy (no
  inline scripts), no framing, no sniffing, no caching.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping

__all__ = ["SECURITY_HEADERS", "csrf_ok", "csrf_token", "foreign_origin", "hash_token",
           "login_csrf"]

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


def hash_token(token: str) -> str:
    """SHA-256 of a reviewer token (tokens are 256-bit random, so no slow hash is needed).

    Examples
    --------
    >>> hash_token("abc")[:12]
    'ba7816bf8f01'
    """
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def csrf_token(secret: bytes, reviewer_pk: int, token_hash: str, purpose: str) -> str:
    """The CSRF token of one form of a signed-in reviewer (``purpose``: the item or action).

    Examples
    --------
    >>> a = csrf_token(b"k", 1, hash_token("t"), "answer:3")
    >>> a == csrf_token(b"k", 1, hash_token("t"), "answer:4"), len(a)
    (False, 64)
    """
    message = f"{purpose}:{reviewer_pk}:{token_hash}".encode()
    return hmac.new(secret, message, hashlib.sha256).hexdigest()


def login_csrf(secret: bytes, nonce: str, token_hash: str) -> str:
    """The CSRF token of the sign-in form: ties the form to the browser's nonce cookie."""
    return hmac.new(secret, f"login:{nonce}:{token_hash}".encode(), hashlib.sha256).hexdigest()


def foreign_origin(headers: Mapping[str, str]) -> bool:
    """Whether a request's ``Origin`` is another site than its ``Host`` (``null`` is).

    Examples
    --------
    >>> foreign_origin({"origin": "http://evil.example", "host": "127.0.0.1:8000"})
    True
    >>> foreign_origin({"origin": "http://127.0.0.1:8000", "host": "127.0.0.1:8000"})
    False
    >>> foreign_origin({"host": "127.0.0.1:8000"})  # no Origin: the CSRF token decides
    False
    """
    origin = headers.get("origin")
    if not origin or origin == "null":
        return origin == "null"
    return origin.split("://", 1)[-1] != headers.get("host", "")


def csrf_ok(headers: Mapping[str, str], given: str, expected: str) -> bool:
    """The CSRF check of every POST: same site, and the form's token is the expected one.

    The comparison takes constant time and accepts any submitted text (non-ASCII too).

    Examples
    --------
    >>> csrf_ok({"host": "h"}, "abc", "abc"), csrf_ok({"host": "h"}, "é", "abc")
    (True, False)
    """
    if foreign_origin(headers):
        return False
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))
