"""Typed errors. Every error the server answers has the body {error: {type, code, message, param}} and an
x-request-id header; APIError carries all of them and its subclass names the status class."""
from __future__ import annotations

from typing import Any

import httpx


class SightflowError(Exception):
    """Base of every error this package raises."""


class APIError(SightflowError):
    status: int
    type: str
    code: str
    param: str | None
    request_id: str | None
    headers: httpx.Headers
    body: Any

    def __init__(self, status: int, body: Any, headers: httpx.Headers, fallback: str | None = None) -> None:
        err = body.get("error") if isinstance(body, dict) and isinstance(body.get("error"), dict) else {}
        self.status = status
        self.type = err.get("type") or "api_error"
        self.code = err.get("code") or "unknown"
        self.param = err.get("param")
        self.message = err.get("message") or fallback or f"HTTP {status}"
        self.request_id = headers.get("x-request-id")
        self.headers = headers
        self.body = body
        super().__init__(f"{status} {self.code}: {self.message}")


class BadRequestError(APIError): pass
class AuthenticationError(APIError): pass
class PermissionDeniedError(APIError): pass
class NotFoundError(APIError): pass
class RequestTimeoutError(APIError): pass
class ConflictError(APIError): pass
class PayloadTooLargeError(APIError): pass
class RangeNotSatisfiableError(APIError): pass
class UnprocessableEntityError(APIError): pass
class RateLimitError(APIError): pass
class InternalServerError(APIError): pass


class OverloadedError(InternalServerError):
    """503: the server's queue is full; Retry-After says when to come back."""


class APIConnectionError(SightflowError):
    """The request never got an answer (refused, reset, DNS), after every retry."""


class APITimeoutError(APIConnectionError):
    """The request took longer than its timeout, after every retry."""


class WebhookVerificationError(SightflowError):
    """A webhook delivery whose signature, timestamp or headers do not check out."""


class WaitTimeoutError(SightflowError):
    """wait() gave up before the task reached a terminal state."""


class StreamError(SightflowError):
    """A stream that could not be resumed (too many failed reconnects in a row)."""


_BY_STATUS: dict[int, type[APIError]] = {
    400: BadRequestError, 401: AuthenticationError, 403: PermissionDeniedError, 404: NotFoundError,
    408: RequestTimeoutError, 409: ConflictError, 413: PayloadTooLargeError, 416: RangeNotSatisfiableError,
    422: UnprocessableEntityError, 429: RateLimitError, 503: OverloadedError,
}


def error_for(status: int, body: Any, headers: httpx.Headers, fallback: str | None = None) -> APIError:
    cls = _BY_STATUS.get(status) or (InternalServerError if status >= 500 else APIError)
    return cls(status, body, headers, fallback)
