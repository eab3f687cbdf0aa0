"""Client (blocking) and AsyncClient (asyncio): the same resources and names over httpx, differing only
in how they wait. See _core.py for the retry policy and docs/clients.md for the whole contract."""
from __future__ import annotations

import asyncio
import json
import time
from typing import Any, AsyncIterator, Callable, Iterator, Mapping

import httpx

from ._core import TERMINAL_STATES, Config, Request, SSEParser, parse_response, retry_delay
from ._errors import APIConnectionError, APIError, APITimeoutError, StreamError, WaitTimeoutError
from ._generated import OPERATIONS
from ._resources import Collections, Models, Moments, Tasks, Vision, Webhooks

PageFactory = Callable[[Any], Request]


class _Base:
    def __init__(self, api_key: str | None = None, *, base_url: str | None = None, admin_token: str | None = None,
                 max_retries: int = 2, timeout: float = 60.0, max_retry_after: float = 60.0,
                 default_headers: Mapping[str, str] | None = None) -> None:
        self._config = Config(api_key, base_url, admin_token, max_retries, timeout, max_retry_after, default_headers)
        self.vision = Vision(self)
        self.tasks = Tasks(self)
        self.collections = Collections(self)
        self.models = Models(self)
        self.moments = Moments(self)
        self.webhooks = Webhooks()

    @property
    def base_url(self) -> str:
        return self._config.base_url

    def _request(self, req: Request, **opts: Any) -> Any:  # pragma: no cover - each client defines it
        raise NotImplementedError

    def project(self, **opts: Any) -> Any:
        """The key's project."""
        return self._request(Request("GET", "/v1/project"), **opts)

    def call(self, operation_id: str, *, path: Mapping[str, str] | None = None, query: Mapping[str, Any] | None = None,
             body: Any = None, **opts: Any) -> Any:
        """Any operation of the OpenAPI document by its operationId (sightflow._generated.OPERATIONS), with
        the same retries, Idempotency-Key and errors as every resource method. Operations that answer
        something other than JSON answer the httpx.Response."""
        spec = OPERATIONS.get(operation_id)
        if spec is None:
            raise KeyError(f"Unknown operation {operation_id}")
        raw = spec["response_type"] not in (None, "application/json")
        return self._request(Request(spec["method"], spec["path"], dict(path or {}), query=query, json=body,
                                     idempotency_key=spec["idempotency_key"], auth=spec["auth"], raw=raw), **opts)

    def paginate(self, operation_id: str, *, path: Mapping[str, str] | None = None, query: Mapping[str, Any] | None = None,
                 **opts: Any) -> Any:
        """Any list operation of the document (``admin.projects.list``, ...) as a list to iterate: the next page
        is asked for by ``cursor`` when the answer has ``next_cursor``, by ``offset`` when it has ``total``."""
        spec = OPERATIONS.get(operation_id)
        if spec is None:
            raise KeyError(f"Unknown operation {operation_id}")
        q = dict(query or {})

        def factory(key: Any) -> Request:
            extra = {} if key is None else {key[0]: key[1]}
            return Request(spec["method"], spec["path"], dict(path or {}), query={**q, **extra}, auth=spec["auth"])
        return self._pager(factory, "auto", opts)

    @staticmethod
    def _next_key(page: Mapping[str, Any], mode: str | None, previous_key: Any) -> Any:
        """The next page's cursor or offset, or None after the last page."""
        if mode is None or not page.get("has_more") or not page.get("data"):
            return None
        if mode == "cursor":
            return page.get("next_cursor")
        if mode == "auto":
            if page.get("next_cursor"):
                return ("cursor", page["next_cursor"])
            if "total" in page:
                return ("offset", int(page.get("offset", 0)) + len(page["data"]))
            return None
        return int(page.get("offset", previous_key or 0)) + len(page["data"])


def _poll_pause(task_id: str, task: Any, poll_interval: float, until: float | None, timeout: float | None,
                on_progress: Any) -> float | None:
    """wait()'s look at the task just fetched: None once it is terminal, else how long to sleep before the next
    look; WaitTimeoutError once ``until`` (the monotonic deadline) has passed."""
    if on_progress:
        on_progress(task)
    if task["status"] in TERMINAL_STATES:
        return None
    if until is not None and time.monotonic() >= until:
        raise WaitTimeoutError(f"Task {task_id} is still {task['status']} after {timeout} s")
    return poll_interval if until is None else max(0.0, min(poll_interval, until - time.monotonic()))


def _connection_error(req: Request, e: Exception) -> APIConnectionError:
    cls = APITimeoutError if isinstance(e, httpx.TimeoutException) else APIConnectionError
    return cls(f"{req.method} {req.path} failed: {e}")


class Client(_Base):
    """The blocking client. ``Client()`` reads SIGHTFLOW_API_KEY and SIGHTFLOW_BASE_URL."""

    def __init__(self, api_key: str | None = None, *, http_client: httpx.Client | None = None, **kwargs: Any) -> None:
        super().__init__(api_key, **kwargs)
        self._http = http_client or httpx.Client(timeout=self._config.timeout)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _request(self, req: Request, *, idempotency_key: str | None = None, timeout: float | None = None,
                 max_retries: int | None = None, extra_headers: Mapping[str, str] | None = None) -> Any:
        kw = self._config.build(req, idempotency_key, extra_headers)
        retries = self._config.max_retries if max_retries is None else max_retries
        attempt = 0
        while True:
            try:
                request = self._http.build_request(**kw, timeout=timeout if timeout is not None else self._config.timeout)
                res = self._http.send(request, stream=req.raw)
            except httpx.TransportError as e:
                wait = self._config.retry_wait(attempt, retries, None)
                if wait is None:
                    raise _connection_error(req, e) from e
                time.sleep(wait)
                attempt += 1
                continue
            if req.raw and res.is_success:
                return res
            if req.raw:
                res.read()
                res.close()
            wait = None if res.is_success else self._config.retry_wait(attempt, retries, res)
            if wait is not None:
                time.sleep(wait)
                attempt += 1
                continue
            return parse_response(res)

    def _pager(self, factory: PageFactory, mode: str | None, opts: Mapping[str, Any]) -> "Pager":
        return Pager(self, factory, mode, opts)

    def _stream(self, task_id: str, offset: int, max_retries: int | None) -> "TaskStream":
        return TaskStream(self, task_id, offset, max_retries)

    def _wait(self, task_id: str, poll_interval: float, timeout: float | None, on_progress: Any) -> Any:
        until = None if timeout is None else time.monotonic() + timeout
        while True:
            task = self.tasks.get(task_id)
            pause = _poll_pause(task_id, task, poll_interval, until, timeout, on_progress)
            if pause is None:
                return task
            time.sleep(pause)

    def _replay(self, task_id: str, offset: int, end_ms: Any, max_retries: int | None) -> Iterator[dict[str, Any]]:
        for chunk in TaskStream(self, task_id, offset, max_retries):
            if _past(chunk, end_ms):
                return
            yield chunk


class Pager:
    """A list: iterate for every item of every page; ``page()`` is the first page, ``pages()`` each page."""

    def __init__(self, client: Client, factory: PageFactory, mode: str | None, opts: Mapping[str, Any]) -> None:
        self._client, self._factory, self._mode, self._opts = client, factory, mode, dict(opts)

    def page(self) -> dict[str, Any]:
        return self._client._request(self._factory(None), **self._opts)

    def pages(self) -> Iterator[dict[str, Any]]:
        key: Any = None
        while True:
            page = self._client._request(self._factory(key), **self._opts)
            yield page
            key = _Base._next_key(page, self._mode, key)
            if key is None:
                return

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for page in self.pages():
            yield from page["data"]


def _transient(e: Exception) -> bool:
    if isinstance(e, (httpx.TransportError, APIConnectionError)):
        return True
    return isinstance(e, APIError) and (e.status in (408, 429) or e.status >= 500)


class _ResumedStream:
    """What TaskStream and AsyncTaskStream share: the archive offset (the parser's), the resumes, and when a
    failure is retried; they differ only in how they open, read and wait."""

    def __init__(self, client: _Base, task_id: str, offset: int, max_retries: int | None) -> None:
        self._client, self.task_id = client, task_id
        self._parser = SSEParser(offset)
        self._max_failures = client._config.max_retries + 3 if max_retries is None else max_retries
        self.resumes = 0
        self._failures = self._opened = 0

    @property
    def position(self) -> int:
        """The archive offset after the last whole event read: where to resume later."""
        return self._parser.offset

    def _reopen(self) -> tuple[int, Request]:
        """Before each connection: counts a resume (all but the first), starts the parser afresh; the offset it
        starts at and the request that opens it there."""
        if self._opened:
            self.resumes += 1
        self._opened += 1
        started = self._parser.offset
        self._parser.reset()
        return started, Request("GET", "/v1/video/tasks/{id}/stream", {"id": self.task_id},
                                            query={"offset": self._parser.offset}, raw=True)

    def _open_failed(self, e: Exception) -> float:
        """A connection that did not open: the wait before the next try, or the error (not transient, or too
        many failures in a row)."""
        if not _transient(e):
            raise e
        self._failures += 1
        if self._failures > self._max_failures:
            raise StreamError(f"Stream of {self.task_id} could not be resumed at offset {self._parser.offset}") from e
        return _delay(self._failures)

    def _ended(self, started: int) -> float | None:
        """A connection that ended without [DONE]: None when it made progress (reopen at once), else the wait
        before the next, or StreamError after too many in a row."""
        if self._parser.offset != started:
            return None
        self._failures += 1
        if self._failures > self._max_failures:
            raise StreamError(f"Stream of {self.task_id} ended {self._failures} times in a row at offset {self._parser.offset} without [DONE]")
        return _delay(self._failures)


class TaskStream(_ResumedStream):
    """A task's chunks in order, each once, resumed across drops by archive byte offset until [DONE]
    (docs/video.md, "The stream"). A connection that made progress is reopened at once; one that made none
    waits the usual backoff, and ``max_retries`` such failures in a row raise StreamError."""

    def __iter__(self) -> Iterator[dict[str, Any]]:
        self._failures = self._opened = 0
        while True:
            started, req = self._reopen()
            try:
                res = self._client._request(req, max_retries=0)
            except Exception as e:  # noqa: BLE001 - only transient ones are retried
                time.sleep(self._open_failed(e))
                continue
            try:
                for data in res.iter_bytes():
                    for event in self._parser.feed(data):
                        if event is None:
                            continue
                        if event == "[DONE]":
                            return
                        self._failures = 0
                        yield json.loads(event)
            except httpx.TransportError:
                pass
            finally:
                res.close()
            pause = self._ended(started)
            if pause is not None:
                time.sleep(pause)


def _past(chunk: Mapping[str, Any], end_ms: Any) -> bool:
    """Whether a replayed chunk lies past the moment's end (a chunk without a stream time, the terminal one, does not)."""
    t = (chunk.get("stream_info") or {}).get("stream_time_ms")
    return end_ms is not None and t is not None and t > end_ms


def _delay(failures: int) -> float:
    return retry_delay(failures - 1, None)


class AsyncClient(_Base):
    """The asyncio client: the same resources and names as Client; methods are coroutines, lists and
    streams are async iterables."""

    def __init__(self, api_key: str | None = None, *, http_client: httpx.AsyncClient | None = None, **kwargs: Any) -> None:
        super().__init__(api_key, **kwargs)
        self._http = http_client or httpx.AsyncClient(timeout=self._config.timeout)

    async def close(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    async def _request(self, req: Request, *, idempotency_key: str | None = None, timeout: float | None = None,
                       max_retries: int | None = None, extra_headers: Mapping[str, str] | None = None) -> Any:
        kw = self._config.build(req, idempotency_key, extra_headers)
        retries = self._config.max_retries if max_retries is None else max_retries
        attempt = 0
        while True:
            try:
                request = self._http.build_request(**kw, timeout=timeout if timeout is not None else self._config.timeout)
                res = await self._http.send(request, stream=req.raw)
            except httpx.TransportError as e:
                wait = self._config.retry_wait(attempt, retries, None)
                if wait is None:
                    raise _connection_error(req, e) from e
                await asyncio.sleep(wait)
                attempt += 1
                continue
            if req.raw and res.is_success:
                return res
            if req.raw:
                await res.aread()
                await res.aclose()
            wait = None if res.is_success else self._config.retry_wait(attempt, retries, res)
            if wait is not None:
                await asyncio.sleep(wait)
                attempt += 1
                continue
            return parse_response(res)

    def _pager(self, factory: PageFactory, mode: str | None, opts: Mapping[str, Any]) -> "AsyncPager":
        return AsyncPager(self, factory, mode, opts)

    def _stream(self, task_id: str, offset: int, max_retries: int | None) -> "AsyncTaskStream":
        return AsyncTaskStream(self, task_id, offset, max_retries)

    async def _wait(self, task_id: str, poll_interval: float, timeout: float | None, on_progress: Any) -> Any:
        until = None if timeout is None else time.monotonic() + timeout
        while True:
            task = await self.tasks.get(task_id)
            pause = _poll_pause(task_id, task, poll_interval, until, timeout, on_progress)
            if pause is None:
                return task
            await asyncio.sleep(pause)

    async def _replay(self, task_id: str, offset: int, end_ms: Any, max_retries: int | None) -> AsyncIterator[dict[str, Any]]:
        async for chunk in AsyncTaskStream(self, task_id, offset, max_retries):
            if _past(chunk, end_ms):
                return
            yield chunk


class AsyncPager:
    """A list: ``async for`` every item of every page; ``await pager`` (or ``await pager.page()``) is the first page."""

    def __init__(self, client: AsyncClient, factory: PageFactory, mode: str | None, opts: Mapping[str, Any]) -> None:
        self._client, self._factory, self._mode, self._opts = client, factory, mode, dict(opts)

    async def page(self) -> dict[str, Any]:
        return await self._client._request(self._factory(None), **self._opts)

    def __await__(self) -> Any:
        return self.page().__await__()

    async def pages(self) -> AsyncIterator[dict[str, Any]]:
        key: Any = None
        while True:
            page = await self._client._request(self._factory(key), **self._opts)
            yield page
            key = _Base._next_key(page, self._mode, key)
            if key is None:
                return

    async def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        async for page in self.pages():
            for item in page["data"]:
                yield item


class AsyncTaskStream(_ResumedStream):
    """TaskStream for AsyncClient: ``async for chunk in client.tasks.stream(id)``."""

    async def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        self._failures = self._opened = 0
        while True:
            started, req = self._reopen()
            try:
                res = await self._client._request(req, max_retries=0)
            except Exception as e:  # noqa: BLE001 - only transient ones are retried
                await asyncio.sleep(self._open_failed(e))
                continue
            try:
                async for data in res.aiter_bytes():
                    for event in self._parser.feed(data):
                        if event is None:
                            continue
                        if event == "[DONE]":
                            return
                        self._failures = 0
                        yield json.loads(event)
            except httpx.TransportError:
                pass
            finally:
                await res.aclose()
            pause = self._ended(started)
            if pause is not None:
                await asyncio.sleep(pause)
