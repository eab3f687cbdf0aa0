"""sightflow: the Python client for the sightflow API (docs/clients.md).

    from sightflow import Client
    client = Client()                      # SIGHTFLOW_API_KEY, SIGHTFLOW_BASE_URL
    print(client.vision.detect("photo.jpg")["objects"])
"""
from ._client import AsyncClient, AsyncPager, AsyncTaskStream, Client, Pager, TaskStream
from ._core import TERMINAL_STATES, verify_webhook
from ._errors import (
    APIConnectionError, APIError, APITimeoutError, AuthenticationError, BadRequestError, ConflictError,
    InternalServerError, NotFoundError, OverloadedError, PayloadTooLargeError, PermissionDeniedError,
    RangeNotSatisfiableError, RateLimitError, RequestTimeoutError, SightflowError, StreamError,
    UnprocessableEntityError, WaitTimeoutError, WebhookVerificationError,
)
from ._generated import OPERATIONS

__version__ = "0.1.0"

__all__ = [
    "Client", "AsyncClient", "Pager", "AsyncPager", "TaskStream", "AsyncTaskStream", "TERMINAL_STATES", "OPERATIONS",
    "verify_webhook", "SightflowError", "APIError", "BadRequestError", "AuthenticationError", "PermissionDeniedError",
    "NotFoundError", "RequestTimeoutError", "ConflictError", "PayloadTooLargeError", "RangeNotSatisfiableError",
    "UnprocessableEntityError", "RateLimitError", "InternalServerError", "OverloadedError", "APIConnectionError",
    "APITimeoutError", "WebhookVerificationError", "WaitTimeoutError", "StreamError",
]
