# Generated from the sightflow OpenAPI document by clients/codegen/generate.ts: do not edit by hand.
# Document version 0.1.0; regenerate with `node --import tsx clients/codegen/generate.ts`.
from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict


class AdminProject(TypedDict):
    id: str
    name: str
    created_at: str


class AnalyticsParametersLines(TypedDict):
    id: str
    points: list[Any]
    classes: NotRequired[list[str]]
    anchor: NotRequired[Literal["bottom_center", "center", "top_center", "top_left", "top_right", "bottom_left", "bottom_right"]]
    min_samples: NotRequired[int]
    margin_px: NotRequired[float]
    margin_box: NotRequired[float]
    margin_max_px: NotRequired[float]


class AnalyticsParametersZones(TypedDict):
    id: str
    polygon: list[list[Any]]
    classes: NotRequired[list[str]]
    anchor: NotRequired[Literal["bottom_center", "center", "top_center", "top_left", "top_right", "bottom_left", "bottom_right"]]
    dwell_ms: NotRequired[int]
    max_occupancy: NotRequired[int]
    crowd_ms: NotRequired[int]
    min_samples: NotRequired[int]
    margin_px: NotRequired[float]
    margin_box: NotRequired[float]


class AnalyticsParametersSpeed(TypedDict):
    image: list[list[Any]]
    ground: list[list[Any]]
    window_ms: NotRequired[int]


class AnalyticsParameters(TypedDict):
    """Parameters of an analytics step: counting lines, zones, dwell, crowding and speed on the tracks of the detect step before it"""
    lines: NotRequired[list["AnalyticsParametersLines"]]
    zones: NotRequired[list["AnalyticsParametersZones"]]
    anchor: NotRequired[Literal["bottom_center", "center", "top_center", "top_left", "top_right", "bottom_left", "bottom_right"]]
    units: NotRequired[Literal["pixels", "relative"]]
    interval_ms: NotRequired[int]
    speed: NotRequired["AnalyticsParametersSpeed"]
    lost_samples: NotRequired[int]
    join_samples: NotRequired[int]
    min_samples: NotRequired[int]
    margin_px: NotRequired[float]
    margin_box: NotRequired[float]
    margin_max_px: NotRequired[float]


class AnalyticsFrameSize(TypedDict):
    width: int
    height: int


class Analytics(TypedDict):
    object: Literal["video.analytics"]
    task_id: str
    status: str
    version: int
    parameters: "AnalyticsParameters"
    totals: "AnalyticsTotals" | None
    frame_size: "AnalyticsFrameSize" | None


class AnalyticsTotals(TypedDict):
    version: int
    lines: dict[str, Any]
    zones: dict[str, Any]
    transitions: dict[str, Any]


class ChunkStreamInfo(TypedDict):
    frame_index: int
    total_frames: int | None
    decoded_frames: int
    dropped_frames: int
    fps: float
    elapsed_ms: int
    stream_time_ms: NotRequired[int]
    received_at_ms: NotRequired[int]
    live: NotRequired[bool]
    reconnects: NotRequired[int]
    gap_ms: NotRequired[int]


class ChunkDeltaResults(TypedDict):
    index: int
    targets: list[dict[str, Any]]


class ChunkDelta(TypedDict):
    results: list["ChunkDeltaResults"]


class ChunkAnalytics(TypedDict):
    """With an analytics step: this frame's events and the running totals; the terminal chunk carries the full summary"""
    events: list[dict[str, Any]]
    totals: dict[str, Any]


class ChunkUsage(TypedDict):
    processed_frames: int
    processing_time_ms: int
    decoded_frames: int
    dropped_frames: int


class Chunk(TypedDict):
    """Each SSE event is "data: <chunk JSON>\\n\\n"; after the terminal chunk "data: [DONE]\\n\\n". Comments ": hb" keep idle streams open. Resume with Last-Event-ID or ?offset= (bytes)."""
    id: str
    object: Literal["mm.pipeline.chunk"]
    model: NotRequired[str]
    stream_info: "ChunkStreamInfo"
    delta: "ChunkDelta"
    analytics: NotRequired["ChunkAnalytics"]
    finish_reason: Literal["stop", "max_frames", "error", "cancelled"] | None
    usage: NotRequired["ChunkUsage"]


class Collection(TypedDict):
    id: str
    object: Literal["vectors.collection"]
    name: str
    description: str | None
    model_id: str
    dimensions: float
    metric: str
    item_count: float
    created_at: str


class EmbeddingModel(TypedDict):
    id: str
    name: str
    types: list[str]
    dimensions: float
    metric: str


class ErrorError(TypedDict):
    type: str
    code: str
    message: str
    param: str | None


class Error(TypedDict):
    error: "ErrorError"


class Item(TypedDict):
    id: str
    content_type: Literal["image", "text", "audio"]
    text: NotRequired[str]
    metadata: dict[str, Any]
    content_url: str | None
    created_at: str


class Key(TypedDict):
    id: str
    name: str
    hint: str
    created_at: str
    last_used_at: str | None
    disabled_at: str | None
    status: Literal["active", "disabled"]


class ModelServingEngineCudaGraphs(TypedDict):
    on: bool
    note: NotRequired[str]


class ModelServingEngine(TypedDict):
    kind: Literal["binding", "native"]
    cuda_graphs: "ModelServingEngineCudaGraphs" | None
    pinned_inputs: bool | None


class ModelServingSessions(TypedDict):
    loaded: int
    max: int


class ModelServingBatch(TypedDict):
    max_size: int
    max_delay_ms: float
    sizes: list[int] | None


class ModelServingWarmup(TypedDict):
    batch_sizes: list[int]
    ms: list[float]


class ModelServingWarmup2(TypedDict):
    skipped: str


class ModelServing(TypedDict):
    """Registered models: loaded or not, memory, requests, p50 latency"""
    state: Literal["unloaded", "loading", "loaded"]
    providers: list[str] | None
    devices: list[int] | None
    engine: "ModelServingEngine" | None
    sessions: "ModelServingSessions" | None
    batch: "ModelServingBatch" | None
    warmup: "ModelServingWarmup" | "ModelServingWarmup2" | None
    memory_bytes: float | None
    loaded_at: str | None
    last_used_at: str | None
    requests: int
    errors: int
    p50_ms: float | None
    queue_depth: int
    pending: int
    idle_unload_s: float
    unloads: int


class ModelSettings(TypedDict):
    preload: bool
    idle_unload_s: float | None
    providers: list[str] | None
    queue_depth: float | None
    devices: list[int] | None
    sessions: int | None
    max_batch_size: int | None
    max_batch_delay_ms: float | None
    batch_sizes: Literal["auto", "all"] | list[int] | None
    warmup: Literal["auto", "on", "off"] | None


class Model(TypedDict):
    """A served model; runtime state fields may follow"""
    id: str
    object: Literal["model"]
    task: Literal["detect", "ocr", "describe", "embed"]
    default: bool
    source: Literal["builtin", "bring-your-own", "external"]
    description: NotRequired[str]
    types: NotRequired[list[str]]
    labels_count: NotRequired[int]
    labels: NotRequired[list[str]]
    input_size: NotRequired[list[Any]]
    layout: NotRequired[str]
    error: NotRequired[str]
    serving: NotRequired["ModelServing"]
    settings: NotRequired["ModelSettings"]
    prepared: NotRequired[bool]
    sha256: NotRequired[str | None]
    origin: NotRequired[str | None]
    added_at: NotRequired[str | None]


Moment = TypedDict("Moment", {
    "task_id": str,
    "video": str,
    "kind": Literal["segment", "track"],
    "start_ms": float,
    "end_ms": float,
    "score": float,
    "thumbnail_url": str | None,
    "stream_offset": int,
    "item_ids": list[str],
    "track_id": NotRequired[int],
    "class": NotRequired[str],
})


class Project(TypedDict):
    id: str
    object: Literal["project"]
    name: str
    created_at: str


class SearchResult(TypedDict):
    id: str
    score: float
    content_type: Literal["image", "text", "audio"]
    text: NotRequired[str]
    metadata: dict[str, Any]
    content_url: str | None
    moment: NotRequired["Moment"]


class TaskProgress(TypedDict):
    frame_index: int | None
    decoded_frames: int
    dropped_frames: int
    total_frames: int | None
    processed_frames: int
    processed_fps: float | None


class TaskUsage(TypedDict):
    processed_frames: int
    processing_time_ms: int


class TaskError(TypedDict):
    code: str
    message: str


class TaskIndex(TypedDict):
    """With an index step: the items it has written so far (segments and tracks)"""
    collection: str
    items_added: int
    segments: int
    tracks: int


class TaskWebhookDeliveries(TypedDict):
    id: str
    event: str
    status: Literal["pending", "delivered", "failed"]
    attempts: int
    last_status_code: int | None
    last_error: str | None
    created_at: str
    last_attempt_at: str | None
    delivered_at: str | None
    next_attempt_at: str | None


class Task(TypedDict):
    id: str
    object: Literal["video.task"]
    status: Literal["pending", "running", "streaming", "succeeded", "failed", "cancelling", "cancelled"]
    created_at: str
    started_at: str | None
    finished_at: str | None
    model: str
    stream_url: str
    progress: "TaskProgress"
    usage: "TaskUsage" | None
    error: "TaskError" | None
    attempts: int
    resumes: int
    input_url: NotRequired[str]
    index: NotRequired["TaskIndex"]
    request: NotRequired[dict[str, Any]]
    webhook_deliveries: NotRequired[list["TaskWebhookDeliveries"]]


class TaskCreatedWebhook(TypedDict):
    """With a webhook but no secret in the request: the generated signing secret, shown only here"""
    url: str
    secret: str


class TaskCreated(TypedDict):
    id: str
    status: Literal["pending", "running", "streaming", "succeeded", "failed", "cancelling", "cancelled"]
    stream_url: str
    webhook: NotRequired["TaskCreatedWebhook"]


class TaskResultsUsage(TypedDict):
    processed_frames: int
    processing_time_ms: int


TaskResultsTracks = TypedDict("TaskResultsTracks", {
    "track_id": int,
    "class": str,
    "first_frame": int,
    "last_frame": int,
    "frames_seen": int,
    "best_confidence": float,
    "feature_digest": NotRequired[str],
})


class TaskResults(TypedDict):
    id: str
    object: Literal["mm.pipeline.result"]
    model: str
    usage: "TaskResultsUsage"
    tracks: list["TaskResultsTracks"]
    analytics: NotRequired[dict[str, Any]]


__all__ = ["AdminProject", "Analytics", "AnalyticsFrameSize", "AnalyticsParameters", "AnalyticsParametersLines", "AnalyticsParametersSpeed", "AnalyticsParametersZones", "AnalyticsTotals", "Chunk", "ChunkAnalytics", "ChunkDelta", "ChunkDeltaResults", "ChunkStreamInfo", "ChunkUsage", "Collection", "EmbeddingModel", "Error", "ErrorError", "Item", "Key", "Model", "ModelServing", "ModelServingBatch", "ModelServingEngine", "ModelServingEngineCudaGraphs", "ModelServingSessions", "ModelServingWarmup", "ModelServingWarmup2", "ModelSettings", "Moment", "Project", "SearchResult", "Task", "TaskCreated", "TaskCreatedWebhook", "TaskError", "TaskIndex", "TaskProgress", "TaskResults", "TaskResultsTracks", "TaskResultsUsage", "TaskUsage", "TaskWebhookDeliveries", "OPERATIONS", "RESPONSE_SCHEMAS"]

# Every operation of the document: method, path, path parameters, whether it takes Idempotency-Key,
# the credential it needs and the content type of its 2xx answer.
OPERATIONS: dict[str, dict[str, Any]] = {
    "admin.gpus.list": {"method": "GET", "path": "/admin/v1/gpus", "path_params": (), "idempotency_key": False, "auth": "admin", "response_type": "application/json"},
    "admin.models.create": {"method": "POST", "path": "/admin/v1/models", "path_params": (), "idempotency_key": False, "auth": "admin", "response_type": "application/json"},
    "admin.models.delete": {"method": "DELETE", "path": "/admin/v1/models/{id}", "path_params": ("id",), "idempotency_key": False, "auth": "admin", "response_type": "application/json"},
    "admin.models.list": {"method": "GET", "path": "/admin/v1/models", "path_params": (), "idempotency_key": False, "auth": "admin", "response_type": "application/json"},
    "admin.models.load": {"method": "POST", "path": "/admin/v1/models/{id}/load", "path_params": ("id",), "idempotency_key": False, "auth": "admin", "response_type": "application/json"},
    "admin.models.unload": {"method": "POST", "path": "/admin/v1/models/{id}/unload", "path_params": ("id",), "idempotency_key": False, "auth": "admin", "response_type": "application/json"},
    "admin.models.update": {"method": "PATCH", "path": "/admin/v1/models/{id}", "path_params": ("id",), "idempotency_key": False, "auth": "admin", "response_type": "application/json"},
    "admin.projects.create": {"method": "POST", "path": "/admin/v1/projects", "path_params": (), "idempotency_key": False, "auth": "admin", "response_type": "application/json"},
    "admin.projects.keys.create": {"method": "POST", "path": "/admin/v1/projects/{id}/keys", "path_params": ("id",), "idempotency_key": False, "auth": "admin", "response_type": "application/json"},
    "admin.projects.keys.disable": {"method": "POST", "path": "/admin/v1/projects/{id}/keys/{key_id}/disable", "path_params": ("id", "key_id",), "idempotency_key": False, "auth": "admin", "response_type": "application/json"},
    "admin.projects.keys.list": {"method": "GET", "path": "/admin/v1/projects/{id}/keys", "path_params": ("id",), "idempotency_key": False, "auth": "admin", "response_type": "application/json"},
    "admin.projects.list": {"method": "GET", "path": "/admin/v1/projects", "path_params": (), "idempotency_key": False, "auth": "admin", "response_type": "application/json"},
    "admin.projects.usage.list": {"method": "GET", "path": "/admin/v1/projects/{id}/usage", "path_params": ("id",), "idempotency_key": False, "auth": "admin", "response_type": "application/json"},
    "console.files.get": {"method": "GET", "path": "/console/{path}", "path_params": ("path",), "idempotency_key": False, "auth": "none", "response_type": "text/html"},
    "console.get": {"method": "GET", "path": "/console", "path_params": (), "idempotency_key": False, "auth": "none", "response_type": "text/html"},
    "files.get": {"method": "GET", "path": "/v1/files/{path}", "path_params": ("path",), "idempotency_key": False, "auth": "none", "response_type": None},
    "mcp.delete": {"method": "DELETE", "path": "/mcp", "path_params": (), "idempotency_key": False, "auth": "key", "response_type": "text/plain"},
    "mcp.messages.post": {"method": "POST", "path": "/mcp/messages", "path_params": (), "idempotency_key": False, "auth": "key", "response_type": "text/plain"},
    "mcp.post": {"method": "POST", "path": "/mcp", "path_params": (), "idempotency_key": False, "auth": "key", "response_type": "text/event-stream"},
    "mcp.stream": {"method": "GET", "path": "/mcp", "path_params": (), "idempotency_key": False, "auth": "key", "response_type": "text/event-stream"},
    "models.get": {"method": "GET", "path": "/v1/models/{id}", "path_params": ("id",), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
    "models.list": {"method": "GET", "path": "/v1/models", "path_params": (), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
    "project.get": {"method": "GET", "path": "/v1/project", "path_params": (), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
    "projects.get": {"method": "GET", "path": "/v1/projects/{id}", "path_params": ("id",), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
    "system.health": {"method": "GET", "path": "/healthz", "path_params": (), "idempotency_key": False, "auth": "none", "response_type": "application/json"},
    "system.openapi": {"method": "GET", "path": "/openapi.json", "path_params": (), "idempotency_key": False, "auth": "none", "response_type": "application/json"},
    "system.ready": {"method": "GET", "path": "/readyz", "path_params": (), "idempotency_key": False, "auth": "none", "response_type": "application/json"},
    "vectors.collections.create": {"method": "POST", "path": "/v1/vectors/collections", "path_params": (), "idempotency_key": True, "auth": "key", "response_type": "application/json"},
    "vectors.collections.delete": {"method": "DELETE", "path": "/v1/vectors/collections/{id}", "path_params": ("id",), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
    "vectors.collections.get": {"method": "GET", "path": "/v1/vectors/collections/{id}", "path_params": ("id",), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
    "vectors.collections.index": {"method": "POST", "path": "/v1/vectors/collections/{id}/index", "path_params": ("id",), "idempotency_key": True, "auth": "key", "response_type": "application/json"},
    "vectors.collections.items.delete": {"method": "DELETE", "path": "/v1/vectors/collections/{id}/items", "path_params": ("id",), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
    "vectors.collections.items.get": {"method": "GET", "path": "/v1/vectors/collections/{id}/items/{item_id}", "path_params": ("id", "item_id",), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
    "vectors.collections.items.list": {"method": "GET", "path": "/v1/vectors/collections/{id}/items", "path_params": ("id",), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
    "vectors.collections.items.update": {"method": "PATCH", "path": "/v1/vectors/collections/{id}/items/{item_id}", "path_params": ("id", "item_id",), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
    "vectors.collections.list": {"method": "GET", "path": "/v1/vectors/collections", "path_params": (), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
    "vectors.collections.search": {"method": "POST", "path": "/v1/vectors/collections/{id}/search", "path_params": ("id",), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
    "vectors.models.list": {"method": "GET", "path": "/v1/vectors/models", "path_params": (), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
    "video.process": {"method": "POST", "path": "/v1/video/process", "path_params": (), "idempotency_key": True, "auth": "key", "response_type": "application/json"},
    "video.tasks.analytics.get": {"method": "GET", "path": "/v1/video/tasks/{id}/analytics", "path_params": ("id",), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
    "video.tasks.analytics.recount": {"method": "POST", "path": "/v1/video/tasks/{id}/analytics/recount", "path_params": ("id",), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
    "video.tasks.analytics.update": {"method": "PUT", "path": "/v1/video/tasks/{id}/analytics", "path_params": ("id",), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
    "video.tasks.cancel": {"method": "POST", "path": "/v1/video/tasks/{id}/cancel", "path_params": ("id",), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
    "video.tasks.get": {"method": "GET", "path": "/v1/video/tasks/{id}", "path_params": ("id",), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
    "video.tasks.heatmap.get": {"method": "GET", "path": "/v1/video/tasks/{id}/heatmap.png", "path_params": ("id",), "idempotency_key": False, "auth": "key", "response_type": "image/png"},
    "video.tasks.list": {"method": "GET", "path": "/v1/video/tasks", "path_params": (), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
    "video.tasks.results.get": {"method": "GET", "path": "/v1/video/tasks/{id}/results", "path_params": ("id",), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
    "video.tasks.stream": {"method": "GET", "path": "/v1/video/tasks/{id}/stream", "path_params": ("id",), "idempotency_key": False, "auth": "key", "response_type": "text/event-stream"},
    "vision.describe": {"method": "POST", "path": "/v1/vision/describe", "path_params": (), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
    "vision.detect": {"method": "POST", "path": "/v1/vision/detect", "path_params": (), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
    "vision.ocr": {"method": "POST", "path": "/v1/vision/ocr", "path_params": (), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
}

# The named schema each operation answers, where its 2xx answer is one.
RESPONSE_SCHEMAS: dict[str, str] = {
    "admin.projects.create": "AdminProject",
    "admin.projects.keys.disable": "Key",
    "models.get": "Model",
    "project.get": "Project",
    "projects.get": "Project",
    "vectors.collections.create": "Collection",
    "vectors.collections.get": "Collection",
    "vectors.collections.items.get": "Item",
    "vectors.collections.items.update": "Item",
    "video.process": "TaskCreated",
    "video.tasks.analytics.get": "Analytics",
    "video.tasks.analytics.update": "Analytics",
    "video.tasks.cancel": "Task",
    "video.tasks.get": "Task",
    "video.tasks.results.get": "TaskResults",
}
