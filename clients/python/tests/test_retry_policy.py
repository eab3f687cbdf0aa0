"""The Python SDK's retry policy as numbers (docs/clients.md, "Retries"), the same as the TypeScript one."""
from __future__ import annotations

import email.utils
import time
from unittest import mock

import httpx

from sightflow._core import is_retryable_status, retry_after_seconds, retry_delay


def test_backoff_jitter_and_retry_after_floor() -> None:
    for n, s in enumerate([0.5, 1, 2, 4, 8, 8]):
        with mock.patch("random.random", return_value=0.0):
            assert retry_delay(n, None) == s
        for _ in range(50):
            assert s * 0.75 <= retry_delay(n, None) <= s
    with mock.patch("random.random", return_value=0.0):
        assert retry_delay(0, 1.0) == 1.0
        assert retry_delay(5, 1.0) == 8.0


def test_retried_statuses() -> None:
    assert all(is_retryable_status(s) for s in (408, 429, 500, 502, 503, 504))
    assert not any(is_retryable_status(s) for s in (400, 401, 403, 404, 405, 409, 413, 416, 422))


def test_retry_after_forms() -> None:
    assert retry_after_seconds(httpx.Headers({"retry-after": "3"})) == 3
    assert retry_after_seconds(httpx.Headers({"retry-after": "3", "retry-after-ms": "250"})) == 0.25
    at = retry_after_seconds(httpx.Headers({"retry-after": email.utils.formatdate(time.time() + 5, usegmt=True)}))
    assert at is not None and 3 < at <= 5
    assert retry_after_seconds(httpx.Headers({"retry-after": "soon"})) is None
    assert retry_after_seconds(httpx.Headers()) is None
