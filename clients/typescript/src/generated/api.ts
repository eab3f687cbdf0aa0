// Generated from the sightflow OpenAPI document by clients/codegen/generate.ts: do not edit by hand.
// Document version 0.1.0; regenerate with `node --import tsx clients/codegen/generate.ts`.
/* eslint-disable */

export type Error = {
  error: {
    type: string;
    code: string;
    message: string;
    param: string | null;
  };
};

/** Each operation's path parameters, query, JSON body and 2xx JSON answer. */
export interface Operations {
  /** DELETE /admin/v1/models/{id}: Remove an added model (on every node) */
  delete_admin_v1_models_id: {
    path: { id: string };
    query: Record<string, never>;
    body: never;
    response: {
      id: string;
      object: "model";
      deleted: true;
    };
  };
  /** DELETE /mcp: Ends a Streamable HTTP MCP session (Mcp-Session-Id) */
  delete_mcp: {
    path: Record<string, never>;
    query: Record<string, never>;
    body: never;
    response: Response;
  };
  /** DELETE /v1/vectors/collections/{id}: Delete a collection with its items, vectors, index and files */
  delete_v1_vectors_collections_id: {
    path: { id: string };
    query: Record<string, never>;
    body: never;
    response: {
      id: string;
      object: "vectors.collection";
      deleted: true;
    };
  };
  /** DELETE /v1/vectors/collections/{id}/items: Delete items by id */
  delete_v1_vectors_collections_id_items: {
    path: { id: string };
    query: Record<string, never>;
    body: {
      ids?: Array<string>;
      filter?: {
        [key: string]: unknown;
      };
    };
    response: {
      deleted: number;
      not_found: Array<string>;
    };
  };
  /** GET /admin/v1/models: List models (built-in and added) with their serving state */
  get_admin_v1_models: {
    path: Record<string, never>;
    query: Record<string, never>;
    body: never;
    response: {
      object: "list";
      data: Array<{
        id: string;
        object: "model";
        task: string;
        description: string;
        builtin: boolean;
        prepared: boolean;
        sha256: string | null;
        origin: string | null;
        added_at: string | null;
        labels: number;
        settings: {
          preload: boolean;
          idle_unload_s: number | null;
          providers: Array<string> | null;
          queue_depth: number | null;
        };
        serving: {
          state: "unloaded" | "loading" | "loaded";
          providers: Array<string> | null;
          memory_bytes: number | null;
          loaded_at: string | null;
          last_used_at: string | null;
          requests: number;
          errors: number;
          p50_ms: number | null;
          queue_depth: number;
          pending: number;
          idle_unload_s: number;
          unloads: number;
        };
      }>;
    };
  };
  /** GET /admin/v1/projects: List projects */
  get_admin_v1_projects: {
    path: Record<string, never>;
    query: Record<string, never>;
    body: never;
    response: {
      object: "list";
      data: Array<{
        id: string;
        name: string;
        created_at: string;
      }>;
    };
  };
  /** GET /admin/v1/projects/{id}/keys: List a project's API keys */
  get_admin_v1_projects_id_keys: {
    path: { id: string };
    query: Record<string, never>;
    body: never;
    response: {
      object: "list";
      data: Array<{
        id: string;
        name: string;
        hint: string;
        created_at: string;
        last_used_at: string | null;
        disabled_at: string | null;
        status: "active" | "disabled";
      }>;
    };
  };
  /** GET /admin/v1/projects/{id}/usage: Daily usage totals (UTC days; default the last 30 days) */
  get_admin_v1_projects_id_usage: {
    path: { id: string };
    query: {
      from?: string | number | boolean;
      to?: string | number | boolean;
    };
    body: never;
    response: {
      object: "list";
      project_id: string;
      from: string;
      to: string;
      data: Array<{
        day: string;
        requests: number;
        input_tokens: number;
        output_tokens: number;
        frames: number;
        ms: number;
      }>;
    };
  };
  /** GET /console: Web console (the page is public; its data needs the admin token) */
  get_console: {
    path: Record<string, never>;
    query: Record<string, never>;
    body: never;
    response: Response;
  };
  /** GET /console/{path}: Web console assets; page paths fall back to index.html */
  get_console_path: {
    path: { path: string };
    query: Record<string, never>;
    body: never;
    response: Response;
  };
  /** GET /healthz: Process is up */
  get_healthz: {
    path: Record<string, never>;
    query: Record<string, never>;
    body: never;
    response: {
      status: "ok" | "not_ready";
      checks?: {
        [key: string]: boolean;
      };
    };
  };
  /** GET /mcp: MCP event stream: with Mcp-Session-Id, a Streamable HTTP session's server messages; without it, a legacy HTTP+SSE session (first event: endpoint) */
  get_mcp: {
    path: Record<string, never>;
    query: Record<string, never>;
    body: never;
    response: Response;
  };
  /** GET /openapi.json: This API description (OpenAPI 3.1) */
  get_openapi_json: {
    path: Record<string, never>;
    query: Record<string, never>;
    body: never;
    response: {
      openapi: "3.1.0";
      info: {
        title: string;
        version: string;
        [key: string]: unknown;
      };
      paths: {
        [key: string]: unknown;
      };
      [key: string]: unknown;
    };
  };
  /** GET /readyz: Database reachable and models ready */
  get_readyz: {
    path: Record<string, never>;
    query: Record<string, never>;
    body: never;
    response: {
      status: "ok" | "not_ready";
      checks?: {
        [key: string]: boolean;
      };
    };
  };
  /** GET /v1/files/{path}: Download a stored file through a presigned link (expires, sig); supports Range */
  get_v1_files_path: {
    path: { path: string };
    query: Record<string, never>;
    body: never;
    response: void;
  };
  /** GET /v1/models: List every served model (detect, ocr, describe, embed) */
  get_v1_models: {
    path: Record<string, never>;
    query: Record<string, never>;
    body: never;
    response: {
      object: "list";
      data: Array<{
        id: string;
        object: "model";
        task: "detect" | "ocr" | "describe" | "embed";
        default: boolean;
        source: "builtin" | "bring-your-own" | "external";
        description?: string;
        types?: Array<string>;
        labels_count?: number;
        labels?: Array<string>;
        input_size?: [number, number];
        layout?: string;
        error?: string;
        serving?: {
          state: "unloaded" | "loading" | "loaded";
          providers: Array<string> | null;
          memory_bytes: number | null;
          loaded_at: string | null;
          last_used_at: string | null;
          requests: number;
          errors: number;
          p50_ms: number | null;
          queue_depth: number;
          pending: number;
          idle_unload_s: number;
          unloads: number;
        };
        settings?: {
          preload: boolean;
          idle_unload_s: number | null;
          providers: Array<string> | null;
          queue_depth: number | null;
        };
        prepared?: boolean;
        sha256?: string | null;
        origin?: string | null;
        added_at?: string | null;
        [key: string]: unknown;
      }>;
    };
  };
  /** GET /v1/models/{id}: One served model */
  get_v1_models_id: {
    path: { id: string };
    query: Record<string, never>;
    body: never;
    response: {
      id: string;
      object: "model";
      task: "detect" | "ocr" | "describe" | "embed";
      default: boolean;
      source: "builtin" | "bring-your-own" | "external";
      description?: string;
      types?: Array<string>;
      labels_count?: number;
      labels?: Array<string>;
      input_size?: [number, number];
      layout?: string;
      error?: string;
      serving?: {
        state: "unloaded" | "loading" | "loaded";
        providers: Array<string> | null;
        memory_bytes: number | null;
        loaded_at: string | null;
        last_used_at: string | null;
        requests: number;
        errors: number;
        p50_ms: number | null;
        queue_depth: number;
        pending: number;
        idle_unload_s: number;
        unloads: number;
      };
      settings?: {
        preload: boolean;
        idle_unload_s: number | null;
        providers: Array<string> | null;
        queue_depth: number | null;
      };
      prepared?: boolean;
      sha256?: string | null;
      origin?: string | null;
      added_at?: string | null;
      [key: string]: unknown;
    };
  };
  /** GET /v1/project: The API key's project */
  get_v1_project: {
    path: Record<string, never>;
    query: Record<string, never>;
    body: never;
    response: {
      id: string;
      object: "project";
      name: string;
      created_at: string;
    };
  };
  /** GET /v1/projects/{id}: A project (only the key's own; others are 404) */
  get_v1_projects_id: {
    path: { id: string };
    query: Record<string, never>;
    body: never;
    response: {
      id: string;
      object: "project";
      name: string;
      created_at: string;
    };
  };
  /** GET /v1/vectors/collections: List the project's collections */
  get_v1_vectors_collections: {
    path: Record<string, never>;
    query: Record<string, never>;
    body: never;
    response: {
      object: "list";
      data: Array<{
        id: string;
        object: "vectors.collection";
        name: string;
        description: string | null;
        model_id: string;
        dimensions: number;
        metric: string;
        item_count: number;
        created_at: string;
      }>;
    };
  };
  /** GET /v1/vectors/collections/{id}: Collection details */
  get_v1_vectors_collections_id: {
    path: { id: string };
    query: Record<string, never>;
    body: never;
    response: {
      id: string;
      object: "vectors.collection";
      name: string;
      description: string | null;
      model_id: string;
      dimensions: number;
      metric: string;
      item_count: number;
      created_at: string;
    };
  };
  /** GET /v1/vectors/collections/{id}/items: List items (limit 1-100, default 20; offset), oldest first, with presigned content URLs for media */
  get_v1_vectors_collections_id_items: {
    path: { id: string };
    query: {
      limit?: string | number | boolean;
      offset?: string | number | boolean;
    };
    body: never;
    response: {
      object: "list";
      data: Array<{
        id: string;
        content_type: "image" | "text" | "audio";
        text?: string;
        metadata: {
          [key: string]: unknown;
        };
        content_url: string | null;
        created_at: string;
      }>;
      total: number;
      limit: number;
      offset: number;
      has_more: boolean;
    };
  };
  /** GET /v1/vectors/collections/{id}/items/{item_id}: One item, with a presigned content URL for media */
  get_v1_vectors_collections_id_items_item_id: {
    path: { id: string; item_id: string };
    query: Record<string, never>;
    body: never;
    response: {
      id: string;
      content_type: "image" | "text" | "audio";
      text?: string;
      metadata: {
        [key: string]: unknown;
      };
      content_url: string | null;
      created_at: string;
    };
  };
  /** GET /v1/vectors/models: List embedding models */
  get_v1_vectors_models: {
    path: Record<string, never>;
    query: Record<string, never>;
    body: never;
    response: {
      models: Array<{
        id: string;
        name: string;
        types: Array<string>;
        dimensions: number;
        metric: string;
      }>;
    };
  };
  /** GET /v1/video/tasks: List the project's video tasks, newest first (status, from, to, cursor, limit) */
  get_v1_video_tasks: {
    path: Record<string, never>;
    query: {
      status?: string | number | boolean;
      from?: string | number | boolean;
      to?: string | number | boolean;
      cursor?: string | number | boolean;
      limit?: string | number | boolean;
    };
    body: never;
    response: {
      object: "list";
      data: Array<{
        id: string;
        object: "video.task";
        status: "pending" | "running" | "streaming" | "succeeded" | "failed" | "cancelling" | "cancelled";
        created_at: string;
        started_at: string | null;
        finished_at: string | null;
        model: string;
        stream_url: string;
        progress: {
          frame_index: number | null;
          decoded_frames: number;
          dropped_frames: number;
          total_frames: number | null;
          processed_frames: number;
          processed_fps: number | null;
        };
        usage: {
          processed_frames: number;
          processing_time_ms: number;
        } | null;
        error: {
          code: string;
          message: string;
        } | null;
        index?: {
          collection: string;
          items_added: number;
          segments: number;
          tracks: number;
        };
        request?: {
          [key: string]: unknown;
        };
        webhook_deliveries?: Array<{
          id: string;
          event: string;
          status: "pending" | "delivered" | "failed";
          attempts: number;
          last_status_code: number | null;
          last_error: string | null;
          created_at: string;
          last_attempt_at: string | null;
          delivered_at: string | null;
          next_attempt_at: string | null;
        }>;
      }>;
      has_more: boolean;
      next_cursor: string | null;
    };
  };
  /** GET /v1/video/tasks/{id}: A video task's status record (include=request echoes the body, include=webhook_deliveries lists webhook deliveries) */
  get_v1_video_tasks_id: {
    path: { id: string };
    query: {
      include?: string | number | boolean;
    };
    body: never;
    response: {
      id: string;
      object: "video.task";
      status: "pending" | "running" | "streaming" | "succeeded" | "failed" | "cancelling" | "cancelled";
      created_at: string;
      started_at: string | null;
      finished_at: string | null;
      model: string;
      stream_url: string;
      progress: {
        frame_index: number | null;
        decoded_frames: number;
        dropped_frames: number;
        total_frames: number | null;
        processed_frames: number;
        processed_fps: number | null;
      };
      usage: {
        processed_frames: number;
        processing_time_ms: number;
      } | null;
      error: {
        code: string;
        message: string;
      } | null;
      index?: {
        collection: string;
        items_added: number;
        segments: number;
        tracks: number;
      };
      request?: {
        [key: string]: unknown;
      };
      webhook_deliveries?: Array<{
        id: string;
        event: string;
        status: "pending" | "delivered" | "failed";
        attempts: number;
        last_status_code: number | null;
        last_error: string | null;
        created_at: string;
        last_attempt_at: string | null;
        delivered_at: string | null;
        next_attempt_at: string | null;
      }>;
    };
  };
  /** GET /v1/video/tasks/{id}/analytics: A task's analytics totals so far (running tasks too), without reading its stream */
  get_v1_video_tasks_id_analytics: {
    path: { id: string };
    query: Record<string, never>;
    body: never;
    response: {
      object: "video.analytics";
      task_id: string;
      status: string;
      version: number;
      parameters: {
        lines?: Array<{
          id: string;
          points: [[number, number], [number, number]];
          classes?: Array<string>;
          anchor?: "bottom_center" | "center" | "top_center" | "top_left" | "top_right" | "bottom_left" | "bottom_right";
          min_samples?: number;
          margin_px?: number;
          margin_box?: number;
        }>;
        zones?: Array<{
          id: string;
          polygon: Array<[number, number]>;
          classes?: Array<string>;
          anchor?: "bottom_center" | "center" | "top_center" | "top_left" | "top_right" | "bottom_left" | "bottom_right";
          dwell_ms?: number;
          max_occupancy?: number;
          crowd_ms?: number;
          min_samples?: number;
          margin_px?: number;
          margin_box?: number;
        }>;
        anchor?: "bottom_center" | "center" | "top_center" | "top_left" | "top_right" | "bottom_left" | "bottom_right";
        units?: "pixels" | "relative";
        interval_ms?: number;
        speed?: {
          image: Array<[number, number]>;
          ground: Array<[number, number]>;
          window_ms?: number;
        };
        lost_samples?: number;
        min_samples?: number;
        margin_px?: number;
        margin_box?: number;
      };
      totals: {
        version: number;
        lines: {
          [key: string]: {
            [key: string]: unknown;
          };
        };
        zones: {
          [key: string]: {
            [key: string]: unknown;
          };
        };
        transitions: {
          [key: string]: {
            [key: string]: number;
          };
        };
      } | null;
      frame_size: {
        width: number;
        height: number;
      } | null;
    };
  };
  /** GET /v1/video/tasks/{id}/heatmap.png: A PNG heatmap of where the task's tracks were (their anchors, one point per track and sampled frame), for a running task too */
  get_v1_video_tasks_id_heatmap_png: {
    path: { id: string };
    query: {
      classes?: string | number | boolean;
      anchor?: "bottom_center" | "center" | "top_center" | "top_left" | "top_right" | "bottom_left" | "bottom_right" | number | boolean;
      width?: string | number | boolean;
      from_ms?: string | number | boolean;
      to_ms?: string | number | boolean;
    };
    body: never;
    response: Response;
  };
  /** GET /v1/video/tasks/{id}/results: Per-track summary of a succeeded task (404 until it has succeeded) */
  get_v1_video_tasks_id_results: {
    path: { id: string };
    query: Record<string, never>;
    body: never;
    response: {
      id: string;
      object: "mm.pipeline.result";
      model: string;
      usage: {
        processed_frames: number;
        processing_time_ms: number;
      };
      tracks: Array<{
        track_id: number;
        class: string;
        first_frame: number;
        last_frame: number;
        frames_seen: number;
        best_confidence: number;
        feature_digest?: string;
      }>;
      analytics?: {
        [key: string]: unknown;
      };
    };
  };
  /** GET /v1/video/tasks/{id}/stream: Server-sent events: archived chunks from a byte offset (Last-Event-ID or ?offset=), then live ones */
  get_v1_video_tasks_id_stream: {
    path: { id: string };
    query: {
      offset?: string | number | boolean;
      event_ids?: "true" | "false" | number | boolean;
    };
    body: never;
    response: Response;
  };
  /** PATCH /v1/vectors/collections/{id}/items/{item_id}: Update an item's metadata (JSON merge patch: null removes a key); its vector and content stay */
  patch_v1_vectors_collections_id_items_item_id: {
    path: { id: string; item_id: string };
    query: Record<string, never>;
    body: {
      metadata: {
        [key: string]: unknown;
      };
    };
    response: {
      id: string;
      content_type: "image" | "text" | "audio";
      text?: string;
      metadata: {
        [key: string]: unknown;
      };
      content_url: string | null;
      created_at: string;
    };
  };
  /** POST /admin/v1/models: Add a model from a URL or hub reference: download (resumed, checksum verified), run on the sample image, serve on every node */
  post_admin_v1_models: {
    path: Record<string, never>;
    query: Record<string, never>;
    body: {
      source: string;
      id?: string;
      task?: "detect" | "embed-image" | "embed-text" | "other";
      labels?: Array<string>;
      sha256?: string;
      preload?: boolean;
      idle_unload_s?: number;
      providers?: Array<"tensorrt" | "cuda" | "cpu">;
      queue_depth?: number;
    };
    response: {
      id: string;
      object: "model";
      task: string;
      description: string;
      builtin: boolean;
      prepared: boolean;
      sha256: string | null;
      origin: string | null;
      added_at: string | null;
      labels: number;
      settings: {
        preload: boolean;
        idle_unload_s: number | null;
        providers: Array<string> | null;
        queue_depth: number | null;
      };
      serving: {
        state: "unloaded" | "loading" | "loaded";
        providers: Array<string> | null;
        memory_bytes: number | null;
        loaded_at: string | null;
        last_used_at: string | null;
        requests: number;
        errors: number;
        p50_ms: number | null;
        queue_depth: number;
        pending: number;
        idle_unload_s: number;
        unloads: number;
      };
      check: {
        summary: string;
        ms: number;
        objects?: Array<{
          class: string;
          confidence: number;
          bbox: Array<number>;
        }>;
      };
    };
  };
  /** POST /admin/v1/projects: Create a project */
  post_admin_v1_projects: {
    path: Record<string, never>;
    query: Record<string, never>;
    body: {
      name: string;
    };
    response: {
      id: string;
      name: string;
      created_at: string;
    };
  };
  /** POST /admin/v1/projects/{id}/keys: Create an API key (the full key is returned only here) */
  post_admin_v1_projects_id_keys: {
    path: { id: string };
    query: Record<string, never>;
    body: {
      name: string;
    };
    response: {
      id: string;
      name: string;
      hint: string;
      created_at: string;
      last_used_at: string | null;
      disabled_at: string | null;
      status: "active" | "disabled";
      key: string;
    };
  };
  /** POST /admin/v1/projects/{id}/keys/{key_id}/disable: Disable an API key (effective within 5 s) */
  post_admin_v1_projects_id_keys_key_id_disable: {
    path: { id: string; key_id: string };
    query: Record<string, never>;
    body: never;
    response: {
      id: string;
      name: string;
      hint: string;
      created_at: string;
      last_used_at: string | null;
      disabled_at: string | null;
      status: "active" | "disabled";
    };
  };
  /** POST /mcp: MCP Streamable HTTP: an initialize request opens a session (Mcp-Session-Id in the reply); later messages carry that header */
  post_mcp: {
    path: Record<string, never>;
    query: Record<string, never>;
    body: unknown;
    response: Response;
  };
  /** POST /mcp/messages: MCP legacy HTTP+SSE: a client message for the session in ?sessionId=; replies go out on its event stream */
  post_mcp_messages: {
    path: Record<string, never>;
    query: Record<string, never>;
    body: unknown;
    response: Response;
  };
  /** POST /v1/vectors/collections: Create a collection */
  post_v1_vectors_collections: {
    path: Record<string, never>;
    query: Record<string, never>;
    body: {
      name: string;
      description?: string | null;
      model_id?: string;
    };
    response: {
      id: string;
      object: "vectors.collection";
      name: string;
      description: string | null;
      model_id: string;
      dimensions: number;
      metric: string;
      item_count: number;
      created_at: string;
    };
  };
  /** POST /v1/vectors/collections/{id}/index: Embed and index 1-100 items (each exactly one of image, image_base64, text, audio); an item with the id of one the collection holds replaces it */
  post_v1_vectors_collections_id_index: {
    path: { id: string };
    query: Record<string, never>;
    body: {
      items: Array<{
        image?: string | null;
        image_base64?: string | null;
        text?: string | null;
        audio?: string | null;
        id?: string;
        metadata?: {
          [key: string]: unknown;
        };
      }>;
    };
    response: {
      indexed: number;
      ids: Array<string>;
      model: string;
      usage: {
        input_tokens: number;
      };
    };
  };
  /** POST /v1/vectors/collections/{id}/search: Nearest items to a query of any modality (exactly one of image, image_base64, text, audio), optionally among the items whose metadata match a filter */
  post_v1_vectors_collections_id_search: {
    path: { id: string };
    query: {
      text?: string | null | number | boolean;
      audio?: string | null | number | boolean;
      filter?: {
        [key: string]: unknown;
      };
      top_k?: number | boolean;
      threshold?: number | boolean;
      group_by?: "video" | number | boolean;
      merge_gap_ms?: number | boolean;
    };
    body: {
      image?: string | null;
      image_base64?: string | null;
      text?: string | null;
      audio?: string | null;
      filter?: {
        [key: string]: unknown;
      };
      top_k?: number;
      threshold?: number;
      group_by?: "video";
      merge_gap_ms?: number;
    };
    response: {
      results?: Array<{
        id: string;
        score: number;
        content_type: "image" | "text" | "audio";
        text?: string;
        metadata: {
          [key: string]: unknown;
        };
        content_url: string | null;
        moment?: {
          task_id: string;
          video: string;
          kind: "segment" | "track";
          start_ms: number;
          end_ms: number;
          score: number;
          thumbnail_url: string | null;
          stream_offset: number;
          item_ids: Array<string>;
          track_id?: number;
          class?: string;
        };
      }>;
      videos?: Array<{
        video: string;
        score: number;
        moments: Array<{
          task_id: string;
          video: string;
          kind: "segment" | "track";
          start_ms: number;
          end_ms: number;
          score: number;
          thumbnail_url: string | null;
          stream_offset: number;
          item_ids: Array<string>;
          track_id?: number;
          class?: string;
        }>;
      }>;
      model: string;
      usage: {
        input_tokens: number;
      };
    };
  };
  /** POST /v1/video/process: Enqueue a video task (one input element in v1); base64 input is staged before any worker reads it */
  post_v1_video_process: {
    path: Record<string, never>;
    query: Record<string, never>;
    body: {
      input: Array<{
        type: "video_url" | "video_base64";
        url?: string;
        reconnect?: {
          max_attempts?: number;
          max_seconds?: number;
        };
        stall_timeout_seconds?: number;
        data?: string;
        sampling?: {
          mode: "fps";
          value: number;
        } | {
          mode: "interval";
          value: number;
        } | {
          mode: "keyframe";
        };
        range?: {
          start?: number;
          end?: number;
          unit?: "seconds" | "frames";
        };
        max_frames?: number;
      }>;
      steps: Array<{
        model: "detect";
        parameters?: {
          model?: string;
          classes?: Array<string>;
          confidence_threshold?: number;
        };
        when?: {
          class_is?: Array<string>;
          min_confidence?: number;
        };
      } | {
        model: "ocr";
        parameters?: {
          model?: string;
          language?: string;
        };
        when?: {
          class_is?: Array<string>;
          min_confidence?: number;
        };
      } | {
        model: "feature";
        parameters?: {
          model?: string;
        };
        when?: {
          class_is?: Array<string>;
          min_confidence?: number;
        };
      } | {
        model: "analytics";
        parameters: {
          lines?: Array<{
            id: string;
            points: [[number, number], [number, number]];
            classes?: Array<string>;
            anchor?: "bottom_center" | "center" | "top_center" | "top_left" | "top_right" | "bottom_left" | "bottom_right";
            min_samples?: number;
            margin_px?: number;
            margin_box?: number;
          }>;
          zones?: Array<{
            id: string;
            polygon: Array<[number, number]>;
            classes?: Array<string>;
            anchor?: "bottom_center" | "center" | "top_center" | "top_left" | "top_right" | "bottom_left" | "bottom_right";
            dwell_ms?: number;
            max_occupancy?: number;
            crowd_ms?: number;
            min_samples?: number;
            margin_px?: number;
            margin_box?: number;
          }>;
          anchor?: "bottom_center" | "center" | "top_center" | "top_left" | "top_right" | "bottom_left" | "bottom_right";
          units?: "pixels" | "relative";
          interval_ms?: number;
          speed?: {
            image: Array<[number, number]>;
            ground: Array<[number, number]>;
            window_ms?: number;
          };
          lost_samples?: number;
          min_samples?: number;
          margin_px?: number;
          margin_box?: number;
        };
      } | {
        model: "index";
        parameters: {
          collection: string;
          per?: Array<"segment" | "track">;
          segment_ms?: number;
          segmenting?: "scene" | "fixed";
          video_id?: string;
        };
        when?: unknown;
      }>;
      model?: string;
      tracker?: {
        type?: "sort" | "bytetrack";
        max_age?: number;
        min_hits?: number;
        iou_threshold?: number;
      };
      webhook?: {
        url: string;
        secret?: string;
        events?: Array<"line.crossed" | "zone.entered" | "zone.exited" | "zone.dwell" | "zone.crowded">;
      };
    };
    response: {
      id: string;
      status: "pending" | "running" | "streaming" | "succeeded" | "failed" | "cancelling" | "cancelled";
      stream_url: string;
      webhook?: {
        url: string;
        secret: string;
      };
    };
  };
  /** POST /v1/video/tasks/{id}/analytics/recount: Count a finished task's stored tracks again (no decoding), with new rules or its own */
  post_v1_video_tasks_id_analytics_recount: {
    path: { id: string };
    query: Record<string, never>;
    body: {
      parameters?: {
        lines?: Array<{
          id: string;
          points: [[number, number], [number, number]];
          classes?: Array<string>;
          anchor?: "bottom_center" | "center" | "top_center" | "top_left" | "top_right" | "bottom_left" | "bottom_right";
          min_samples?: number;
          margin_px?: number;
          margin_box?: number;
        }>;
        zones?: Array<{
          id: string;
          polygon: Array<[number, number]>;
          classes?: Array<string>;
          anchor?: "bottom_center" | "center" | "top_center" | "top_left" | "top_right" | "bottom_left" | "bottom_right";
          dwell_ms?: number;
          max_occupancy?: number;
          crowd_ms?: number;
          min_samples?: number;
          margin_px?: number;
          margin_box?: number;
        }>;
        anchor?: "bottom_center" | "center" | "top_center" | "top_left" | "top_right" | "bottom_left" | "bottom_right";
        units?: "pixels" | "relative";
        interval_ms?: number;
        speed?: {
          image: Array<[number, number]>;
          ground: Array<[number, number]>;
          window_ms?: number;
        };
        lost_samples?: number;
        min_samples?: number;
        margin_px?: number;
        margin_box?: number;
      };
    };
    response: {
      object: "video.analytics.recount";
      task_id: string;
      parameters: {
        lines?: Array<{
          id: string;
          points: [[number, number], [number, number]];
          classes?: Array<string>;
          anchor?: "bottom_center" | "center" | "top_center" | "top_left" | "top_right" | "bottom_left" | "bottom_right";
          min_samples?: number;
          margin_px?: number;
          margin_box?: number;
        }>;
        zones?: Array<{
          id: string;
          polygon: Array<[number, number]>;
          classes?: Array<string>;
          anchor?: "bottom_center" | "center" | "top_center" | "top_left" | "top_right" | "bottom_left" | "bottom_right";
          dwell_ms?: number;
          max_occupancy?: number;
          crowd_ms?: number;
          min_samples?: number;
          margin_px?: number;
          margin_box?: number;
        }>;
        anchor?: "bottom_center" | "center" | "top_center" | "top_left" | "top_right" | "bottom_left" | "bottom_right";
        units?: "pixels" | "relative";
        interval_ms?: number;
        speed?: {
          image: Array<[number, number]>;
          ground: Array<[number, number]>;
          window_ms?: number;
        };
        lost_samples?: number;
        min_samples?: number;
        margin_px?: number;
        margin_box?: number;
      };
      frames: number;
      events: number;
      totals: {
        version: number;
        lines: {
          [key: string]: {
            [key: string]: unknown;
          };
        };
        zones: {
          [key: string]: {
            [key: string]: unknown;
          };
        };
        transitions: {
          [key: string]: {
            [key: string]: number;
          };
        };
      };
      recount_ms: number;
      source: "track_log" | "archive";
    };
  };
  /** POST /v1/video/tasks/{id}/cancel: Cancel: pending -> cancelled at once; running/streaming -> cancelling, cancelled at the next chunk boundary */
  post_v1_video_tasks_id_cancel: {
    path: { id: string };
    query: Record<string, never>;
    body: never;
    response: {
      id: string;
      object: "video.task";
      status: "pending" | "running" | "streaming" | "succeeded" | "failed" | "cancelling" | "cancelled";
      created_at: string;
      started_at: string | null;
      finished_at: string | null;
      model: string;
      stream_url: string;
      progress: {
        frame_index: number | null;
        decoded_frames: number;
        dropped_frames: number;
        total_frames: number | null;
        processed_frames: number;
        processed_fps: number | null;
      };
      usage: {
        processed_frames: number;
        processing_time_ms: number;
      } | null;
      error: {
        code: string;
        message: string;
      } | null;
      index?: {
        collection: string;
        items_added: number;
        segments: number;
        tracks: number;
      };
      request?: {
        [key: string]: unknown;
      };
      webhook_deliveries?: Array<{
        id: string;
        event: string;
        status: "pending" | "delivered" | "failed";
        attempts: number;
        last_status_code: number | null;
        last_error: string | null;
        created_at: string;
        last_attempt_at: string | null;
        delivered_at: string | null;
        next_attempt_at: string | null;
      }>;
    };
  };
  /** POST /v1/vision/describe: Describe an image in English or Chinese (built-in describer) */
  post_v1_vision_describe: {
    path: Record<string, never>;
    query: {
      model?: string | number | boolean;
      prompt?: string | number | boolean;
      language?: string | number | boolean;
      detail?: "low" | "high" | number | boolean;
    };
    body: {
      image?: string | null;
      image_base64?: string | null;
      model?: string;
      prompt?: string;
      language?: string;
      detail?: "low" | "high";
    };
    response: {
      description: string;
      model: string;
      usage: {
        input_tokens: number;
        output_tokens: number;
      };
    };
  };
  /** POST /v1/vision/detect: Detect objects (COCO classes) with boxes in source-image pixels */
  post_v1_vision_detect: {
    path: Record<string, never>;
    query: {
      model?: string | number | boolean;
      classes?: Array<string> | number | boolean;
      confidence_threshold?: number | boolean;
    };
    body: {
      image?: string | null;
      image_base64?: string | null;
      model?: string;
      classes?: Array<string>;
      confidence_threshold?: number;
    };
    response: {
      objects: Array<{
        class: string;
        confidence: number;
        bbox: [number, number, number, number];
        attributes: {
          color?: string;
        };
      }>;
      model: string;
      usage: {
        input_tokens: number;
        output_tokens: number;
      };
    };
  };
  /** POST /v1/vision/ocr: Extract text: full text in reading order and line blocks with boxes */
  post_v1_vision_ocr: {
    path: Record<string, never>;
    query: {
      model?: string | number | boolean;
      language?: string | number | boolean;
    };
    body: {
      image?: string | null;
      image_base64?: string | null;
      model?: string;
      language?: string;
    };
    response: {
      text: string;
      blocks: Array<{
        text: string;
        bbox: [number, number, number, number];
        confidence: number;
      }>;
      model: string;
      usage: {
        input_tokens: number;
        output_tokens: number;
      };
    };
  };
  /** PUT /v1/video/tasks/{id}/analytics: Change the analytics rules of a pending or running task: from its next sampled frame, version + 1; totals of removed rules stay */
  put_v1_video_tasks_id_analytics: {
    path: { id: string };
    query: Record<string, never>;
    body: {
      parameters: {
        lines?: Array<{
          id: string;
          points: [[number, number], [number, number]];
          classes?: Array<string>;
          anchor?: "bottom_center" | "center" | "top_center" | "top_left" | "top_right" | "bottom_left" | "bottom_right";
          min_samples?: number;
          margin_px?: number;
          margin_box?: number;
        }>;
        zones?: Array<{
          id: string;
          polygon: Array<[number, number]>;
          classes?: Array<string>;
          anchor?: "bottom_center" | "center" | "top_center" | "top_left" | "top_right" | "bottom_left" | "bottom_right";
          dwell_ms?: number;
          max_occupancy?: number;
          crowd_ms?: number;
          min_samples?: number;
          margin_px?: number;
          margin_box?: number;
        }>;
        anchor?: "bottom_center" | "center" | "top_center" | "top_left" | "top_right" | "bottom_left" | "bottom_right";
        units?: "pixels" | "relative";
        interval_ms?: number;
        speed?: {
          image: Array<[number, number]>;
          ground: Array<[number, number]>;
          window_ms?: number;
        };
        lost_samples?: number;
        min_samples?: number;
        margin_px?: number;
        margin_box?: number;
      };
    };
    response: {
      object: "video.analytics";
      task_id: string;
      status: string;
      version: number;
      parameters: {
        lines?: Array<{
          id: string;
          points: [[number, number], [number, number]];
          classes?: Array<string>;
          anchor?: "bottom_center" | "center" | "top_center" | "top_left" | "top_right" | "bottom_left" | "bottom_right";
          min_samples?: number;
          margin_px?: number;
          margin_box?: number;
        }>;
        zones?: Array<{
          id: string;
          polygon: Array<[number, number]>;
          classes?: Array<string>;
          anchor?: "bottom_center" | "center" | "top_center" | "top_left" | "top_right" | "bottom_left" | "bottom_right";
          dwell_ms?: number;
          max_occupancy?: number;
          crowd_ms?: number;
          min_samples?: number;
          margin_px?: number;
          margin_box?: number;
        }>;
        anchor?: "bottom_center" | "center" | "top_center" | "top_left" | "top_right" | "bottom_left" | "bottom_right";
        units?: "pixels" | "relative";
        interval_ms?: number;
        speed?: {
          image: Array<[number, number]>;
          ground: Array<[number, number]>;
          window_ms?: number;
        };
        lost_samples?: number;
        min_samples?: number;
        margin_px?: number;
        margin_box?: number;
      };
      totals: {
        version: number;
        lines: {
          [key: string]: {
            [key: string]: unknown;
          };
        };
        zones: {
          [key: string]: {
            [key: string]: unknown;
          };
        };
        transitions: {
          [key: string]: {
            [key: string]: number;
          };
        };
      } | null;
      frame_size: {
        width: number;
        height: number;
      } | null;
    };
  };
}

export type OperationId = keyof Operations;

export interface OperationSpec {
  method: string;
  path: string;
  pathParams: readonly string[];
  idempotencyKey: boolean;
  auth: 'key' | 'admin' | 'none';
  /** Content type of the 2xx answer (null: no body). */
  responseType: string | null;
  /** Request body types besides JSON. */
  bodyTypes: readonly string[];
}

export const OPERATIONS: { readonly [K in OperationId]: OperationSpec } = {
  delete_admin_v1_models_id: { method: "DELETE", path: "/admin/v1/models/{id}", pathParams: ["id"], idempotencyKey: false, auth: "admin", responseType: "application/json", bodyTypes: [] },
  delete_mcp: { method: "DELETE", path: "/mcp", pathParams: [], idempotencyKey: false, auth: "key", responseType: "text/plain", bodyTypes: [] },
  delete_v1_vectors_collections_id: { method: "DELETE", path: "/v1/vectors/collections/{id}", pathParams: ["id"], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: [] },
  delete_v1_vectors_collections_id_items: { method: "DELETE", path: "/v1/vectors/collections/{id}/items", pathParams: ["id"], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: [] },
  get_admin_v1_models: { method: "GET", path: "/admin/v1/models", pathParams: [], idempotencyKey: false, auth: "admin", responseType: "application/json", bodyTypes: [] },
  get_admin_v1_projects: { method: "GET", path: "/admin/v1/projects", pathParams: [], idempotencyKey: false, auth: "admin", responseType: "application/json", bodyTypes: [] },
  get_admin_v1_projects_id_keys: { method: "GET", path: "/admin/v1/projects/{id}/keys", pathParams: ["id"], idempotencyKey: false, auth: "admin", responseType: "application/json", bodyTypes: [] },
  get_admin_v1_projects_id_usage: { method: "GET", path: "/admin/v1/projects/{id}/usage", pathParams: ["id"], idempotencyKey: false, auth: "admin", responseType: "application/json", bodyTypes: [] },
  get_console: { method: "GET", path: "/console", pathParams: [], idempotencyKey: false, auth: "none", responseType: "text/html", bodyTypes: [] },
  get_console_path: { method: "GET", path: "/console/{path}", pathParams: ["path"], idempotencyKey: false, auth: "none", responseType: "text/html", bodyTypes: [] },
  get_healthz: { method: "GET", path: "/healthz", pathParams: [], idempotencyKey: false, auth: "none", responseType: "application/json", bodyTypes: [] },
  get_mcp: { method: "GET", path: "/mcp", pathParams: [], idempotencyKey: false, auth: "key", responseType: "text/event-stream", bodyTypes: [] },
  get_openapi_json: { method: "GET", path: "/openapi.json", pathParams: [], idempotencyKey: false, auth: "none", responseType: "application/json", bodyTypes: [] },
  get_readyz: { method: "GET", path: "/readyz", pathParams: [], idempotencyKey: false, auth: "none", responseType: "application/json", bodyTypes: [] },
  get_v1_files_path: { method: "GET", path: "/v1/files/{path}", pathParams: ["path"], idempotencyKey: false, auth: "none", responseType: null, bodyTypes: [] },
  get_v1_models: { method: "GET", path: "/v1/models", pathParams: [], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: [] },
  get_v1_models_id: { method: "GET", path: "/v1/models/{id}", pathParams: ["id"], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: [] },
  get_v1_project: { method: "GET", path: "/v1/project", pathParams: [], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: [] },
  get_v1_projects_id: { method: "GET", path: "/v1/projects/{id}", pathParams: ["id"], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: [] },
  get_v1_vectors_collections: { method: "GET", path: "/v1/vectors/collections", pathParams: [], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: [] },
  get_v1_vectors_collections_id: { method: "GET", path: "/v1/vectors/collections/{id}", pathParams: ["id"], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: [] },
  get_v1_vectors_collections_id_items: { method: "GET", path: "/v1/vectors/collections/{id}/items", pathParams: ["id"], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: [] },
  get_v1_vectors_collections_id_items_item_id: { method: "GET", path: "/v1/vectors/collections/{id}/items/{item_id}", pathParams: ["id","item_id"], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: [] },
  get_v1_vectors_models: { method: "GET", path: "/v1/vectors/models", pathParams: [], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: [] },
  get_v1_video_tasks: { method: "GET", path: "/v1/video/tasks", pathParams: [], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: [] },
  get_v1_video_tasks_id: { method: "GET", path: "/v1/video/tasks/{id}", pathParams: ["id"], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: [] },
  get_v1_video_tasks_id_analytics: { method: "GET", path: "/v1/video/tasks/{id}/analytics", pathParams: ["id"], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: [] },
  get_v1_video_tasks_id_heatmap_png: { method: "GET", path: "/v1/video/tasks/{id}/heatmap.png", pathParams: ["id"], idempotencyKey: false, auth: "key", responseType: "image/png", bodyTypes: [] },
  get_v1_video_tasks_id_results: { method: "GET", path: "/v1/video/tasks/{id}/results", pathParams: ["id"], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: [] },
  get_v1_video_tasks_id_stream: { method: "GET", path: "/v1/video/tasks/{id}/stream", pathParams: ["id"], idempotencyKey: false, auth: "key", responseType: "text/event-stream", bodyTypes: [] },
  patch_v1_vectors_collections_id_items_item_id: { method: "PATCH", path: "/v1/vectors/collections/{id}/items/{item_id}", pathParams: ["id","item_id"], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: [] },
  post_admin_v1_models: { method: "POST", path: "/admin/v1/models", pathParams: [], idempotencyKey: false, auth: "admin", responseType: "application/json", bodyTypes: [] },
  post_admin_v1_projects: { method: "POST", path: "/admin/v1/projects", pathParams: [], idempotencyKey: false, auth: "admin", responseType: "application/json", bodyTypes: [] },
  post_admin_v1_projects_id_keys: { method: "POST", path: "/admin/v1/projects/{id}/keys", pathParams: ["id"], idempotencyKey: false, auth: "admin", responseType: "application/json", bodyTypes: [] },
  post_admin_v1_projects_id_keys_key_id_disable: { method: "POST", path: "/admin/v1/projects/{id}/keys/{key_id}/disable", pathParams: ["id","key_id"], idempotencyKey: false, auth: "admin", responseType: "application/json", bodyTypes: [] },
  post_mcp: { method: "POST", path: "/mcp", pathParams: [], idempotencyKey: false, auth: "key", responseType: "text/event-stream", bodyTypes: [] },
  post_mcp_messages: { method: "POST", path: "/mcp/messages", pathParams: [], idempotencyKey: false, auth: "key", responseType: "text/plain", bodyTypes: [] },
  post_v1_vectors_collections: { method: "POST", path: "/v1/vectors/collections", pathParams: [], idempotencyKey: true, auth: "key", responseType: "application/json", bodyTypes: [] },
  post_v1_vectors_collections_id_index: { method: "POST", path: "/v1/vectors/collections/{id}/index", pathParams: ["id"], idempotencyKey: true, auth: "key", responseType: "application/json", bodyTypes: [] },
  post_v1_vectors_collections_id_search: { method: "POST", path: "/v1/vectors/collections/{id}/search", pathParams: ["id"], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: ["multipart/form-data","image/jpeg","image/png","image/webp"] },
  post_v1_video_process: { method: "POST", path: "/v1/video/process", pathParams: [], idempotencyKey: true, auth: "key", responseType: "application/json", bodyTypes: [] },
  post_v1_video_tasks_id_analytics_recount: { method: "POST", path: "/v1/video/tasks/{id}/analytics/recount", pathParams: ["id"], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: [] },
  post_v1_video_tasks_id_cancel: { method: "POST", path: "/v1/video/tasks/{id}/cancel", pathParams: ["id"], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: [] },
  post_v1_vision_describe: { method: "POST", path: "/v1/vision/describe", pathParams: [], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: ["multipart/form-data","image/jpeg","image/png","image/webp"] },
  post_v1_vision_detect: { method: "POST", path: "/v1/vision/detect", pathParams: [], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: ["multipart/form-data","image/jpeg","image/png","image/webp"] },
  post_v1_vision_ocr: { method: "POST", path: "/v1/vision/ocr", pathParams: [], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: ["multipart/form-data","image/jpeg","image/png","image/webp"] },
  put_v1_video_tasks_id_analytics: { method: "PUT", path: "/v1/video/tasks/{id}/analytics", pathParams: ["id"], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: [] },
};
