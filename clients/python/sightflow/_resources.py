"""The resources, shared by Client and AsyncClient: each method builds its request and hands it to the
client, which sends it (and answers a value, or a coroutine on AsyncClient). Lists, streams, waiting and
replays differ between the two and live in the clients."""
from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any, Mapping

from ._core import Request, image_bytes, image_request, verify_webhook, video_input

if TYPE_CHECKING:
    from ._client import _Base

# Keyword arguments every method takes besides the body's fields.
OPTION_NAMES = ("idempotency_key", "timeout", "max_retries", "extra_headers")


def _split(kwargs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    opts = {k: kwargs.pop(k) for k in OPTION_NAMES if k in kwargs}
    return kwargs, opts


def _index_item(item: Mapping[str, Any]) -> dict[str, Any]:
    image = item.get("image")
    upload = None if image is None else image_bytes(image)
    if upload is None:
        return dict(item)
    rest = {k: v for k, v in item.items() if k != "image"}
    return {**rest, "image_base64": base64.b64encode(upload[1]).decode("ascii")}


class _Resource:
    def __init__(self, client: "_Base") -> None:
        self._c = client


class Vision(_Resource):
    """POST /v1/vision/{detect,ocr,describe}. ``image`` is an http(s) URL, a data URI, a path, bytes, a file
    object, a NumPy uint8 array (RGB) or a PIL image; the other keywords are the body's fields."""

    def detect(self, image: Any, **params: Any) -> Any:
        fields, opts = _split(params)
        return self._c._request(image_request("/v1/vision/detect", image, fields), **opts)

    def ocr(self, image: Any, **params: Any) -> Any:
        fields, opts = _split(params)
        return self._c._request(image_request("/v1/vision/ocr", image, fields), **opts)

    def describe(self, image: Any, **params: Any) -> Any:
        fields, opts = _split(params)
        return self._c._request(image_request("/v1/vision/describe", image, fields), **opts)


class Tasks(_Resource):
    """Video tasks: /v1/video/process and /v1/video/tasks/*."""

    def create(self, body: Mapping[str, Any] | None = None, **params: Any) -> Any:
        """POST /v1/video/process with ``body`` and/or keyword fields (input, steps, model, tracker, webhook).
        One Idempotency-Key for every retry: a retried create answers the same task."""
        fields, opts = _split(params)
        return self._c._request(Request("POST", "/v1/video/process", json={**(body or {}), **fields}, idempotency_key=True), **opts)

    def process(self, video: Any, **params: Any) -> Any:
        """A task from a video (URL, live source URL, path, bytes or file object) and the other fields."""
        fields, opts = _split(params)
        return self.create({**fields, "input": [video_input(video)]}, **opts)

    def get(self, task_id: str, *, include: str | None = None, **opts: Any) -> Any:
        return self._c._request(Request("GET", "/v1/video/tasks/{id}", {"id": task_id}, query={"include": include}), **opts)

    def list(self, *, status: str | None = None, from_: str | int | None = None, to: str | int | None = None,
             limit: int | None = None, **opts: Any) -> Any:
        """The project's tasks, newest first: iterate for all of them (pages fetched as needed)."""
        query = {"status": status, "from": from_, "to": to, "limit": limit}
        return self._c._pager(lambda cursor: Request("GET", "/v1/video/tasks", query={**query, "cursor": cursor}), "cursor", opts)

    def cancel(self, task_id: str, **opts: Any) -> Any:
        return self._c._request(Request("POST", "/v1/video/tasks/{id}/cancel", {"id": task_id}), **opts)

    def results(self, task_id: str, **opts: Any) -> Any:
        return self._c._request(Request("GET", "/v1/video/tasks/{id}/results", {"id": task_id}), **opts)

    def stream(self, task_id: str, *, offset: int = 0, max_retries: int | None = None) -> Any:
        """The task's chunks in order, each once, resumed by byte offset across drops until [DONE]."""
        return self._c._stream(task_id, offset, max_retries)

    def wait(self, task_id: str, *, poll_interval: float = 1.0, timeout: float | None = None, on_progress: Any = None) -> Any:
        """Polls until the task is succeeded, failed or cancelled; answers its record."""
        return self._c._wait(task_id, poll_interval, timeout, on_progress)


class Collections(_Resource):
    """Vector collections: /v1/vectors/collections/*."""

    def create(self, name: str, **params: Any) -> Any:
        fields, opts = _split(params)
        return self._c._request(Request("POST", "/v1/vectors/collections", json={"name": name, **fields}, idempotency_key=True), **opts)

    def get(self, collection_id: str, **opts: Any) -> Any:
        return self._c._request(Request("GET", "/v1/vectors/collections/{id}", {"id": collection_id}), **opts)

    def list(self, **opts: Any) -> Any:
        return self._c._pager(lambda _: Request("GET", "/v1/vectors/collections"), None, opts)

    def delete(self, collection_id: str, **opts: Any) -> Any:
        return self._c._request(Request("DELETE", "/v1/vectors/collections/{id}", {"id": collection_id}), **opts)

    def index(self, collection_id: str, items: list[Mapping[str, Any]], **params: Any) -> Any:
        """Adds items ({text} / {image} / {image_base64} / {audio}, with id and metadata); one Idempotency-Key
        across retries. An item's ``image`` may be anything an image upload takes (a path, bytes, a file object,
        a NumPy array, a PIL image): it is sent as ``image_base64``."""
        fields, opts = _split(params)
        return self._c._request(Request("POST", "/v1/vectors/collections/{id}/index", {"id": collection_id},
                                        json={"items": [_index_item(i) for i in items], **fields}, idempotency_key=True), **opts)

    def search(self, collection_id: str, *, image: Any = None, **params: Any) -> Any:
        """Search by ``text``, ``audio`` or ``image`` (any image input), with filter, top_k, threshold, group_by."""
        fields, opts = _split(params)
        path = "/v1/vectors/collections/{id}/search"
        if image is None:
            req = Request("POST", path, {"id": collection_id}, json={k: v for k, v in fields.items() if v is not None})
        else:
            req = image_request(path, image, fields, {"id": collection_id})
        return self._c._request(req, **opts)

    def items(self, collection_id: str, *, limit: int | None = None, offset: int = 0, **opts: Any) -> Any:
        """The collection's items: iterate for all of them (pages fetched as needed)."""
        return self._c._pager(lambda off: Request("GET", "/v1/vectors/collections/{id}/items", {"id": collection_id},
                                                  query={"limit": limit, "offset": off if off is not None else offset}), "offset", opts)

    def delete_items(self, collection_id: str, *, ids: list[str] | None = None, filter: Mapping[str, Any] | None = None, **opts: Any) -> Any:
        body = {"ids": ids} if ids is not None else {"filter": filter}
        return self._c._request(Request("DELETE", "/v1/vectors/collections/{id}/items", {"id": collection_id}, json=body), **opts)


class Models(_Resource):
    def list(self, **opts: Any) -> Any:
        return self._c._pager(lambda _: Request("GET", "/v1/models"), None, opts)

    def get(self, model_id: str, **opts: Any) -> Any:
        return self._c._request(Request("GET", "/v1/models/{id}", {"id": model_id}), **opts)


class Moments(_Resource):
    def replay(self, hit: Mapping[str, Any], *, max_retries: int | None = None) -> Any:
        """The chunks of one moment (a search result's ``moment``, or the result itself): its task's stream from
        ``stream_offset`` up to the first chunk past ``end_ms`` (docs/moments.md, "Replaying a moment")."""
        m = hit.get("moment") or hit
        return self._c._replay(m["task_id"], int(m["stream_offset"]), m.get("end_ms"), max_retries)


class Webhooks:
    def verify(self, headers: Mapping[str, str], body: str | bytes, secret: str, *, tolerance_seconds: int = 300,
               now: float | None = None) -> dict[str, Any]:
        """Checks a delivery's signature and age and answers its payload (raises WebhookVerificationError)."""
        return verify_webhook(headers, body, secret, tolerance_seconds=tolerance_seconds, now=now)
