# Generated from the sightflow OpenAPI document by clients/codegen/generate.ts: do not edit by hand.
# Document version 0.1.0; regenerate with `node --import tsx clients/codegen/generate.ts`.
from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict


class Error(TypedDict):
    error: dict[str, Any]


# Every operation of the document: method, path, path parameters, whether it takes Idempotency-Key,
# the credential it needs and the content type of its 2xx answer.
OPERATIONS: dict[str, dict[str, Any]] = {
    "delete_admin_v1_models_id": {"method": "DELETE", "path": "/admin/v1/models/{id}", "path_params": ("id",), "idempotency_key": False, "auth": "admin", "response_type": "application/json"},
    "delete_mcp": {"method": "DELETE", "path": "/mcp", "path_params": (), "idempotency_key": False, "auth": "key", "response_type": "text/plain"},
    "delete_v1_vectors_collections_id": {"method": "DELETE", "path": "/v1/vectors/collections/{id}", "path_params": ("id",), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
    "delete_v1_vectors_collections_id_items": {"method": "DELETE", "path": "/v1/vectors/collections/{id}/items", "path_params": ("id",), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
    "get_admin_v1_models": {"method": "GET", "path": "/admin/v1/models", "path_params": (), "idempotency_key": False, "auth": "admin", "response_type": "application/json"},
    "get_admin_v1_projects": {"method": "GET", "path": "/admin/v1/projects", "path_params": (), "idempotency_key": False, "auth": "admin", "response_type": "application/json"},
    "get_admin_v1_projects_id_keys": {"method": "GET", "path": "/admin/v1/projects/{id}/keys", "path_params": ("id",), "idempotency_key": False, "auth": "admin", "response_type": "application/json"},
    "get_admin_v1_projects_id_usage": {"method": "GET", "path": "/admin/v1/projects/{id}/usage", "path_params": ("id",), "idempotency_key": False, "auth": "admin", "response_type": "application/json"},
    "get_console": {"method": "GET", "path": "/console", "path_params": (), "idempotency_key": False, "auth": "none", "response_type": "text/html"},
    "get_console_path": {"method": "GET", "path": "/console/{path}", "path_params": ("path",), "idempotency_key": False, "auth": "none", "response_type": "text/html"},
    "get_healthz": {"method": "GET", "path": "/healthz", "path_params": (), "idempotency_key": False, "auth": "none", "response_type": "application/json"},
    "get_mcp": {"method": "GET", "path": "/mcp", "path_params": (), "idempotency_key": False, "auth": "key", "response_type": "text/event-stream"},
    "get_openapi_json": {"method": "GET", "path": "/openapi.json", "path_params": (), "idempotency_key": False, "auth": "none", "response_type": "application/json"},
    "get_readyz": {"method": "GET", "path": "/readyz", "path_params": (), "idempotency_key": False, "auth": "none", "response_type": "application/json"},
    "get_v1_files_path": {"method": "GET", "path": "/v1/files/{path}", "path_params": ("path",), "idempotency_key": False, "auth": "none", "response_type": None},
    "get_v1_models": {"method": "GET", "path": "/v1/models", "path_params": (), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
    "get_v1_models_id": {"method": "GET", "path": "/v1/models/{id}", "path_params": ("id",), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
    "get_v1_project": {"method": "GET", "path": "/v1/project", "path_params": (), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
    "get_v1_projects_id": {"method": "GET", "path": "/v1/projects/{id}", "path_params": ("id",), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
    "get_v1_vectors_collections": {"method": "GET", "path": "/v1/vectors/collections", "path_params": (), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
    "get_v1_vectors_collections_id": {"method": "GET", "path": "/v1/vectors/collections/{id}", "path_params": ("id",), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
    "get_v1_vectors_collections_id_items": {"method": "GET", "path": "/v1/vectors/collections/{id}/items", "path_params": ("id",), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
    "get_v1_vectors_collections_id_items_item_id": {"method": "GET", "path": "/v1/vectors/collections/{id}/items/{item_id}", "path_params": ("id", "item_id",), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
    "get_v1_vectors_models": {"method": "GET", "path": "/v1/vectors/models", "path_params": (), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
    "get_v1_video_tasks": {"method": "GET", "path": "/v1/video/tasks", "path_params": (), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
    "get_v1_video_tasks_id": {"method": "GET", "path": "/v1/video/tasks/{id}", "path_params": ("id",), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
    "get_v1_video_tasks_id_analytics": {"method": "GET", "path": "/v1/video/tasks/{id}/analytics", "path_params": ("id",), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
    "get_v1_video_tasks_id_heatmap_png": {"method": "GET", "path": "/v1/video/tasks/{id}/heatmap.png", "path_params": ("id",), "idempotency_key": False, "auth": "key", "response_type": "image/png"},
    "get_v1_video_tasks_id_results": {"method": "GET", "path": "/v1/video/tasks/{id}/results", "path_params": ("id",), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
    "get_v1_video_tasks_id_stream": {"method": "GET", "path": "/v1/video/tasks/{id}/stream", "path_params": ("id",), "idempotency_key": False, "auth": "key", "response_type": "text/event-stream"},
    "patch_v1_vectors_collections_id_items_item_id": {"method": "PATCH", "path": "/v1/vectors/collections/{id}/items/{item_id}", "path_params": ("id", "item_id",), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
    "post_admin_v1_models": {"method": "POST", "path": "/admin/v1/models", "path_params": (), "idempotency_key": False, "auth": "admin", "response_type": "application/json"},
    "post_admin_v1_projects": {"method": "POST", "path": "/admin/v1/projects", "path_params": (), "idempotency_key": False, "auth": "admin", "response_type": "application/json"},
    "post_admin_v1_projects_id_keys": {"method": "POST", "path": "/admin/v1/projects/{id}/keys", "path_params": ("id",), "idempotency_key": False, "auth": "admin", "response_type": "application/json"},
    "post_admin_v1_projects_id_keys_key_id_disable": {"method": "POST", "path": "/admin/v1/projects/{id}/keys/{key_id}/disable", "path_params": ("id", "key_id",), "idempotency_key": False, "auth": "admin", "response_type": "application/json"},
    "post_mcp": {"method": "POST", "path": "/mcp", "path_params": (), "idempotency_key": False, "auth": "key", "response_type": "text/event-stream"},
    "post_mcp_messages": {"method": "POST", "path": "/mcp/messages", "path_params": (), "idempotency_key": False, "auth": "key", "response_type": "text/plain"},
    "post_v1_vectors_collections": {"method": "POST", "path": "/v1/vectors/collections", "path_params": (), "idempotency_key": True, "auth": "key", "response_type": "application/json"},
    "post_v1_vectors_collections_id_index": {"method": "POST", "path": "/v1/vectors/collections/{id}/index", "path_params": ("id",), "idempotency_key": True, "auth": "key", "response_type": "application/json"},
    "post_v1_vectors_collections_id_search": {"method": "POST", "path": "/v1/vectors/collections/{id}/search", "path_params": ("id",), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
    "post_v1_video_process": {"method": "POST", "path": "/v1/video/process", "path_params": (), "idempotency_key": True, "auth": "key", "response_type": "application/json"},
    "post_v1_video_tasks_id_analytics_recount": {"method": "POST", "path": "/v1/video/tasks/{id}/analytics/recount", "path_params": ("id",), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
    "post_v1_video_tasks_id_cancel": {"method": "POST", "path": "/v1/video/tasks/{id}/cancel", "path_params": ("id",), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
    "post_v1_vision_describe": {"method": "POST", "path": "/v1/vision/describe", "path_params": (), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
    "post_v1_vision_detect": {"method": "POST", "path": "/v1/vision/detect", "path_params": (), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
    "post_v1_vision_ocr": {"method": "POST", "path": "/v1/vision/ocr", "path_params": (), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
    "put_v1_video_tasks_id_analytics": {"method": "PUT", "path": "/v1/video/tasks/{id}/analytics", "path_params": ("id",), "idempotency_key": False, "auth": "key", "response_type": "application/json"},
}

# The named schema each operation answers, where its 2xx answer is one.
RESPONSE_SCHEMAS: dict[str, str] = {
}
