"""What Client and AsyncClient share: configuration, the retry policy, building a request, reading an
answer into a value or a typed error, the stream parser, uploads and webhook verification.

Retry policy (docs/clients.md, "Retries"): connection errors, timeouts, 408, 429 and 5xx are retried at
most ``max_retries`` times (2 by default) after min(0.5 * 2**n, 8) s less up to a quarter of jitter, never
sooner than the answer's Retry-After; any other 4xx is sent exactly once. A POST that takes an
Idempotency-Key gets one generated key that every retry repeats."""
from __future__ import annotations

import base64
import email.utils
import hashlib
import hmac
import io
import json
import os
import random
import struct
import time
import uuid
import zlib
from dataclasses import dataclass, field
from typing import Any, Mapping
from urllib.parse import quote

import httpx

from ._errors import WebhookVerificationError, error_for

DEFAULT_BASE_URL = "http://127.0.0.1:8080"
TERMINAL_STATES = ("succeeded", "failed", "cancelled")


@dataclass
class Request:
    method: str
    path: str
    path_params: Mapping[str, str] = field(default_factory=dict)
    query: Mapping[str, Any] | None = None
    json: Any = None
    data: Mapping[str, str] | None = None
    files: Mapping[str, tuple[str, bytes, str]] | None = None
    idempotency_key: bool = False
    auth: str = "key"
    # Hand back the response unread (streams, binary answers).
    raw: bool = False


def retry_after_seconds(headers: httpx.Headers) -> float | None:
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    v = headers.get("retry-after")
    if not v:
        return None
    try:
        return max(0.0, float(v))
    except ValueError:
        pass
    try:
        at = email.utils.parsedate_to_datetime(v)
        return max(0.0, at.timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def retry_delay(attempt: int, retry_after: float | None) -> float:
    """Seconds before retry ``attempt`` (0-based): min(0.5 * 2**n, 8) less up to a quarter, floored at Retry-After."""
    base = min(0.5 * 2 ** attempt, 8.0)
    return max(base * (1 - 0.25 * random.random()), retry_after or 0.0)


def is_retryable_status(status: int) -> bool:
    return status in (408, 429) or status >= 500


def fill_path(path: str, params: Mapping[str, str]) -> str:
    out = path
    for name in [p[1:-1] for p in _placeholders(path)]:
        v = params.get(name)
        if v is None or v == "":
            raise TypeError(f"Missing path parameter {name} for {path}")
        out = out.replace("{" + name + "}", quote(str(v), safe="/" if name == "path" else ""))
    return out


def _placeholders(path: str) -> list[str]:
    out, i = [], 0
    while (i := path.find("{", i)) >= 0:
        j = path.index("}", i)
        out.append(path[i:j + 1])
        i = j + 1
    return out


def encode_query(query: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for k, v in (query or {}).items():
        if v is None:
            continue
        if isinstance(v, (list, tuple)):
            out.extend((k, _text(x)) for x in v)
        elif isinstance(v, dict):
            out.append((k, json.dumps(v)))
        else:
            out.append((k, _text(v)))
    return out


def _text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


class Config:
    def __init__(self, api_key: str | None, base_url: str | None, admin_token: str | None, max_retries: int,
                 timeout: float, max_retry_after: float, default_headers: Mapping[str, str] | None) -> None:
        self.api_key = api_key or os.environ.get("SIGHTFLOW_API_KEY") or None
        self.base_url = (base_url or os.environ.get("SIGHTFLOW_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        self.admin_token = admin_token or os.environ.get("SIGHTFLOW_ADMIN_TOKEN") or None
        self.max_retries = max_retries
        self.timeout = timeout
        self.max_retry_after = max_retry_after
        self.default_headers = dict(default_headers or {})

    def build(self, req: Request, idempotency_key: str | None, headers: Mapping[str, str] | None) -> dict[str, Any]:
        """The keyword arguments of httpx's request() for one logical request (the same on every attempt)."""
        h = dict(self.default_headers)
        credential = self.admin_token if req.auth == "admin" else None if req.auth == "none" else self.api_key
        if credential:
            h["authorization"] = f"Bearer {credential}"
        h.update(headers or {})
        if req.idempotency_key and not any(k.lower() == "idempotency-key" for k in h):
            h["idempotency-key"] = idempotency_key or f"sf-{uuid.uuid4()}"
        kw: dict[str, Any] = {
            "method": req.method,
            "url": self.base_url + fill_path(req.path, req.path_params),
            "params": encode_query(req.query),
            "headers": h,
        }
        if req.json is not None:
            kw["json"] = req.json
        if req.files is not None:
            kw["files"] = req.files
            kw["data"] = req.data or {}
        return kw

    def retry_wait(self, attempt: int, max_retries: int, response: httpx.Response | None) -> float | None:
        """Seconds to wait before retrying, or None when this outcome is final."""
        if attempt >= max_retries:
            return None
        if response is None:
            return retry_delay(attempt, None)
        if not is_retryable_status(response.status_code):
            return None
        after = retry_after_seconds(response.headers)
        if after is not None and after > self.max_retry_after:
            return None
        return retry_delay(attempt, after)


def parse_response(res: httpx.Response) -> Any:
    """The answer's value (JSON parsed, None for an empty body), or raises its typed error."""
    text = res.text if res.status_code != 204 else ""
    parsed: Any = text
    if text and "json" in res.headers.get("content-type", ""):
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = text
    if res.is_success:
        return parsed if text else None
    raise error_for(res.status_code, parsed, res.headers, text[:500] if isinstance(parsed, str) and text else None)


class SSEParser:
    """Splits a result stream's bytes into events and counts the archive offset after each whole one
    (docs/video.md, "The stream"): resuming at that offset re-reads a cut event from its first byte."""

    def __init__(self, offset: int) -> None:
        self.offset = offset
        self._buf = b""

    def feed(self, data: bytes) -> list[str | None]:
        """The data of each whole event completed by these bytes (None for a comment-only event)."""
        self._buf += data
        out: list[str | None] = []
        while (i := self._buf.find(b"\n\n")) >= 0:
            block, self._buf = self._buf[:i], self._buf[i + 2:]
            self.offset += i + 2
            lines = [ln[6:] if ln.startswith("data: ") else ln[5:] for ln in block.decode("utf-8").split("\n") if ln.startswith("data:")]
            out.append("\n".join(lines) if lines else None)
        return out

    def reset(self) -> None:
        """A new connection: bytes of a cut event are read again from its start."""
        self._buf = b""


# ---- uploads ----

def _png(arr: Any) -> bytes:
    """A NumPy uint8 array (H x W gray, H x W x 3 RGB or H x W x 4 RGBA) as PNG bytes, with no imaging library."""
    if str(arr.dtype) != "uint8":
        raise TypeError(f"Expected a uint8 image array but received dtype {arr.dtype}")
    if arr.ndim == 2:
        channels = 1
    elif arr.ndim == 3 and arr.shape[2] in (1, 3, 4):
        channels = arr.shape[2]
    else:
        raise TypeError(f"Expected an image array of shape (H, W), (H, W, 3) or (H, W, 4) but received {arr.shape}")
    h, w = arr.shape[0], arr.shape[1]
    rows = arr.reshape(h, w * channels)
    raw = b"".join(b"\x00" + rows[y].tobytes() for y in range(h))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    color = {1: 0, 3: 2, 4: 6}[channels]
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, color, 0, 0, 0)) \
        + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b"")


def image_bytes(image: Any) -> tuple[str, bytes, str] | None:
    """(file name, bytes, content type) of an image given as a path, bytes, file object, NumPy array or PIL
    image; None for a URL or data URI string (sent as JSON)."""
    if isinstance(image, str) and (image.startswith(("http://", "https://", "data:")) or image.lower().startswith(("http://", "https://"))):
        return None
    if isinstance(image, (str, os.PathLike)):
        with open(image, "rb") as f:
            return os.path.basename(os.fspath(image)), f.read(), "application/octet-stream"
    if isinstance(image, (bytes, bytearray, memoryview)):
        return "upload", bytes(image), "application/octet-stream"
    module = type(image).__module__
    if module.startswith("PIL."):
        buf = io.BytesIO()
        img = image if image.mode in ("RGB", "RGBA", "L") else image.convert("RGB")
        img.save(buf, format="PNG")
        return "upload.png", buf.getvalue(), "image/png"
    if module.startswith("numpy"):
        return "upload.png", _png(image), "image/png"
    if hasattr(image, "read"):
        data = image.read()
        name = os.path.basename(str(getattr(image, "name", "upload")))
        return name or "upload", data if isinstance(data, bytes) else bytes(data), "application/octet-stream"
    raise TypeError(f"Expected an image URL, data URI, path, bytes, file object, NumPy array or PIL image but received {type(image).__name__}")


def image_request(path: str, image: Any, fields: Mapping[str, Any], path_params: Mapping[str, str] | None = None) -> Request:
    """An image route's request: JSON for a URL or data URI, else multipart with the image as a file part
    (the other fields as text parts, JSON where they are not strings)."""
    clean = {k: v for k, v in fields.items() if v is not None}
    upload = image_bytes(image)
    if upload is None:
        key = "image_base64" if image.startswith("data:") else "image"
        return Request("POST", path, path_params or {}, json={**clean, key: image})
    data = {k: v if isinstance(v, str) else json.dumps(v) for k, v in clean.items()}
    return Request("POST", path, path_params or {}, data=data, files={"image": upload})


def video_input(video: Any) -> dict[str, str]:
    if isinstance(video, str) and video.lower().startswith(("http://", "https://", "rtsp://", "rtsps://", "rtmp://")):
        return {"type": "video_url", "url": video}
    if isinstance(video, str) and video.startswith("data:"):
        return {"type": "video_base64", "data": video}
    if isinstance(video, (str, os.PathLike)):
        with open(video, "rb") as f:
            data = f.read()
    elif isinstance(video, (bytes, bytearray, memoryview)):
        data = bytes(video)
    elif hasattr(video, "read"):
        data = video.read()
    else:
        raise TypeError(f"Expected a video URL, path, bytes or file object but received {type(video).__name__}")
    return {"type": "video_base64", "data": base64.b64encode(data).decode("ascii")}


# ---- webhooks ----

def verify_webhook(headers: Mapping[str, str] | httpx.Headers, body: str | bytes, secret: str, *,
                   tolerance_seconds: int = 300, now: float | None = None) -> dict[str, Any]:
    """Checks a delivery (docs/video.md, "Webhooks": Standard Webhooks signing) and answers its payload;
    raises WebhookVerificationError when the signature, the timestamp's age or a header is wrong."""
    h = {k.lower(): v for k, v in headers.items()}
    msg_id, ts, sigs = h.get("webhook-id"), h.get("webhook-timestamp"), h.get("webhook-signature")
    if not msg_id or not ts or not sigs:
        raise WebhookVerificationError("Missing webhook-id, webhook-timestamp or webhook-signature header")
    if not ts.isdigit():
        raise WebhookVerificationError("webhook-timestamp is not unix seconds")
    current = time.time() if now is None else now
    if abs(current - int(ts)) > tolerance_seconds:
        raise WebhookVerificationError(f"webhook-timestamp is more than {tolerance_seconds} s from now")
    if not secret.startswith("whsec_"):
        raise WebhookVerificationError("The secret must start with whsec_")
    try:
        key = base64.b64decode(secret[6:], validate=True)
    except ValueError as e:
        raise WebhookVerificationError("The secret is not base64 after whsec_") from e
    raw = body.encode("utf-8") if isinstance(body, str) else body
    expected = base64.b64encode(hmac.new(key, f"{msg_id}.{ts}.".encode() + raw, hashlib.sha256).digest()).decode()
    ok = False
    for s in sigs.split(" "):
        version, _, sig = s.partition(",")
        if version == "v1" and hmac.compare_digest(sig, expected):
            ok = True
    if not ok:
        raise WebhookVerificationError("No signature matches the body")
    try:
        return json.loads(raw)
    except ValueError as e:
        raise WebhookVerificationError("The body is not JSON") from e
