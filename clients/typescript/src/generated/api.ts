// Generated from the sightflow OpenAPI document by clients/codegen/generate.ts: do not edit by hand.
// Document version 0.1.0; regenerate with `node --import tsx clients/codegen/generate.ts`.
/* eslint-disable */

export type AdminProject = {
  id: string;
  name: string;
  created_at: string;
};

export type Analytics = {
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
      margin_max_px?: number;
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
    join_samples?: number;
    min_samples?: number;
    margin_px?: number;
    margin_box?: number;
    margin_max_px?: number;
  };
  totals: AnalyticsTotals | null;
  frame_size: {
    width: number;
    height: number;
  } | null;
};

export type AnalyticsTotals = {
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

/** Each SSE event is "data: <chunk JSON>\n\n"; after the terminal chunk "data: [DONE]\n\n". Comments ": hb" keep idle streams open. Resume with Last-Event-ID or ?offset= (bytes). */
export type Chunk = {
  id: string;
  object: "mm.pipeline.chunk";
  model?: string;
  stream_info: {
    frame_index: number;
    total_frames: number | null;
    decoded_frames: number;
    dropped_frames: number;
    fps: number;
    elapsed_ms: number;
    stream_time_ms?: number;
    received_at_ms?: number;
    live?: boolean;
    reconnects?: number;
    gap_ms?: number;
  };
  delta: {
    results: Array<{
      index: number;
      targets: Array<{
        [key: string]: unknown;
      }>;
    }>;
  };
  analytics?: {
    events: Array<{
      [key: string]: unknown;
    }>;
    totals: {
      [key: string]: unknown;
    };
  };
  finish_reason: "stop" | "max_frames" | "error" | "cancelled" | null;
  usage?: {
    processed_frames: number;
    processing_time_ms: number;
    decoded_frames: number;
    dropped_frames: number;
  };
};

export type Collection = {
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

export type EmbeddingModel = {
  id: string;
  name: string;
  types: Array<string>;
  dimensions: number;
  metric: string;
};

export type Error = {
  error: {
    type: string;
    code: string;
    message: string;
    param: string | null;
  };
};

export type Item = {
  id: string;
  content_type: "image" | "text" | "audio";
  text?: string;
  metadata: {
    [key: string]: unknown;
  };
  content_url: string | null;
  created_at: string;
};

export type Key = {
  id: string;
  name: string;
  hint: string;
  created_at: string;
  last_used_at: string | null;
  disabled_at: string | null;
  status: "active" | "disabled";
};

/** A served model; runtime state fields may follow */
export type Model = {
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
    devices: Array<number> | null;
    engine: {
      kind: "binding" | "native";
      cuda_graphs: {
        on: boolean;
        note?: string;
      } | null;
      pinned_inputs: boolean | null;
    } | null;
    sessions: {
      loaded: number;
      max: number;
    } | null;
    batch: {
      max_size: number;
      max_delay_ms: number;
      sizes: Array<number> | null;
    } | null;
    warmup: {
      batch_sizes: Array<number>;
      ms: Array<number>;
    } | {
      skipped: string;
    } | null;
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
    devices: Array<number> | null;
    sessions: number | null;
    max_batch_size: number | null;
    max_batch_delay_ms: number | null;
    batch_sizes: "auto" | "all" | Array<number> | null;
    warmup: "auto" | "on" | "off" | null;
  };
  prepared?: boolean;
  sha256?: string | null;
  origin?: string | null;
  added_at?: string | null;
  [key: string]: unknown;
};

export type Moment = {
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

export type Project = {
  id: string;
  object: "project";
  name: string;
  created_at: string;
};

export type SearchResult = {
  id: string;
  score: number;
  content_type: "image" | "text" | "audio";
  text?: string;
  metadata: {
    [key: string]: unknown;
  };
  content_url: string | null;
  moment?: Moment;
};

export type Task = {
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
  attempts: number;
  resumes: number;
  input_url?: string;
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

export type TaskCreated = {
  id: string;
  status: "pending" | "running" | "streaming" | "succeeded" | "failed" | "cancelling" | "cancelled";
  stream_url: string;
  webhook?: {
    url: string;
    secret: string;
  };
};

export type TaskResults = {
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

/** Each operation's path parameters, query, JSON body and 2xx JSON answer. */
export interface Operations {
  /** GET /admin/v1/gpus: This node's NVIDIA cards now, from the driver's management library: utilisation, memory, NVDEC, power, temperature (an empty list without a driver) */
  "admin.gpus.list": {
    path: Record<string, never>;
    query: Record<string, never>;
    body: never;
    response: {
      object: "list";
      data: Array<{
        object: "gpu";
        index: number;
        uuid: string;
        name: string;
        error?: string;
        utilization?: number;
        memory_used_bytes?: number;
        memory_total_bytes?: number;
        decoder_utilization?: number;
        power_watts?: number;
        temperature_celsius?: number;
      }>;
      available: boolean;
      reason: string | null;
      driver_version: string | null;
    };
  };
  /** POST /admin/v1/models: Add a model from a URL or hub reference: download (resumed, checksum verified), run on the sample image, serve on every node */
  "admin.models.create": {
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
      sessions?: number;
      max_batch_size?: number;
      max_batch_delay_ms?: number;
      batch_sizes?: "auto" | "all" | Array<number>;
      warmup?: "auto" | "on" | "off";
      devices?: Array<number>;
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
        devices: Array<number> | null;
        sessions: number | null;
        max_batch_size: number | null;
        max_batch_delay_ms: number | null;
        batch_sizes: "auto" | "all" | Array<number> | null;
        warmup: "auto" | "on" | "off" | null;
      };
      serving: {
        state: "unloaded" | "loading" | "loaded";
        providers: Array<string> | null;
        devices: Array<number> | null;
        engine: {
          kind: "binding" | "native";
          cuda_graphs: {
            on: boolean;
            note?: string;
          } | null;
          pinned_inputs: boolean | null;
        } | null;
        sessions: {
          loaded: number;
          max: number;
        } | null;
        batch: {
          max_size: number;
          max_delay_ms: number;
          sizes: Array<number> | null;
        } | null;
        warmup: {
          batch_sizes: Array<number>;
          ms: Array<number>;
        } | {
          skipped: string;
        } | null;
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
  /** DELETE /admin/v1/models/{id}: Remove an added model (on every node) */
  "admin.models.delete": {
    path: { id: string };
    query: Record<string, never>;
    body: never;
    response: {
      id: string;
      object: "model";
      deleted: true;
    };
  };
  /** GET /admin/v1/models: List models (built-in and added) with their serving state */
  "admin.models.list": {
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
          devices: Array<number> | null;
          sessions: number | null;
          max_batch_size: number | null;
          max_batch_delay_ms: number | null;
          batch_sizes: "auto" | "all" | Array<number> | null;
          warmup: "auto" | "on" | "off" | null;
        };
        serving: {
          state: "unloaded" | "loading" | "loaded";
          providers: Array<string> | null;
          devices: Array<number> | null;
          engine: {
            kind: "binding" | "native";
            cuda_graphs: {
              on: boolean;
              note?: string;
            } | null;
            pinned_inputs: boolean | null;
          } | null;
          sessions: {
            loaded: number;
            max: number;
          } | null;
          batch: {
            max_size: number;
            max_delay_ms: number;
            sizes: Array<number> | null;
          } | null;
          warmup: {
            batch_sizes: Array<number>;
            ms: Array<number>;
          } | {
            skipped: string;
          } | null;
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
  /** POST /admin/v1/models/{id}/load: Load a model on this node now (its first session; on a GPU warmed up), rather than at its first run; answers once it is loaded */
  "admin.models.load": {
    path: { id: string };
    query: Record<string, never>;
    body: never;
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
        devices: Array<number> | null;
        sessions: number | null;
        max_batch_size: number | null;
        max_batch_delay_ms: number | null;
        batch_sizes: "auto" | "all" | Array<number> | null;
        warmup: "auto" | "on" | "off" | null;
      };
      serving: {
        state: "unloaded" | "loading" | "loaded";
        providers: Array<string> | null;
        devices: Array<number> | null;
        engine: {
          kind: "binding" | "native";
          cuda_graphs: {
            on: boolean;
            note?: string;
          } | null;
          pinned_inputs: boolean | null;
        } | null;
        sessions: {
          loaded: number;
          max: number;
        } | null;
        batch: {
          max_size: number;
          max_delay_ms: number;
          sizes: Array<number> | null;
        } | null;
        warmup: {
          batch_sizes: Array<number>;
          ms: Array<number>;
        } | {
          skipped: string;
        } | null;
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
    };
  };
  /** POST /admin/v1/models/{id}/unload: Unload a model on this node: its sessions and their memory (on a GPU, the card's) go once the runs queued or running on them finish (at most 60 s); its next run loads it again */
  "admin.models.unload": {
    path: { id: string };
    query: Record<string, never>;
    body: never;
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
        devices: Array<number> | null;
        sessions: number | null;
        max_batch_size: number | null;
        max_batch_delay_ms: number | null;
        batch_sizes: "auto" | "all" | Array<number> | null;
        warmup: "auto" | "on" | "off" | null;
      };
      serving: {
        state: "unloaded" | "loading" | "loaded";
        providers: Array<string> | null;
        devices: Array<number> | null;
        engine: {
          kind: "binding" | "native";
          cuda_graphs: {
            on: boolean;
            note?: string;
          } | null;
          pinned_inputs: boolean | null;
        } | null;
        sessions: {
          loaded: number;
          max: number;
        } | null;
        batch: {
          max_size: number;
          max_delay_ms: number;
          sizes: Array<number> | null;
        } | null;
        warmup: {
          batch_sizes: Array<number>;
          ms: Array<number>;
        } | {
          skipped: string;
        } | null;
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
    };
  };
  /** PATCH /admin/v1/models/{id}: Change a model's serving settings while it runs (built in or added; on every node): the fields given change, null puts one back to the server's default; queue_depth, max_batch_delay_ms, idle_unload_s and preload alone (and sessions on a GPU provider) apply to the running model in place; any other field makes its sessions load again with them */
  "admin.models.update": {
    path: { id: string };
    query: Record<string, never>;
    body: {
      preload?: boolean | null;
      idle_unload_s?: number | null;
      providers?: Array<"tensorrt" | "cuda" | "cpu"> | null;
      queue_depth?: number | null;
      sessions?: number | null;
      max_batch_size?: number | null;
      max_batch_delay_ms?: number | null;
      batch_sizes?: "auto" | "all" | Array<number> | null;
      warmup?: "auto" | "on" | "off" | null;
      devices?: Array<number> | null;
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
        devices: Array<number> | null;
        sessions: number | null;
        max_batch_size: number | null;
        max_batch_delay_ms: number | null;
        batch_sizes: "auto" | "all" | Array<number> | null;
        warmup: "auto" | "on" | "off" | null;
      };
      serving: {
        state: "unloaded" | "loading" | "loaded";
        providers: Array<string> | null;
        devices: Array<number> | null;
        engine: {
          kind: "binding" | "native";
          cuda_graphs: {
            on: boolean;
            note?: string;
          } | null;
          pinned_inputs: boolean | null;
        } | null;
        sessions: {
          loaded: number;
          max: number;
        } | null;
        batch: {
          max_size: number;
          max_delay_ms: number;
          sizes: Array<number> | null;
        } | null;
        warmup: {
          batch_sizes: Array<number>;
          ms: Array<number>;
        } | {
          skipped: string;
        } | null;
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
    };
  };
  /** POST /admin/v1/projects: Create a project */
  "admin.projects.create": {
    path: Record<string, never>;
    query: Record<string, never>;
    body: {
      name: string;
    };
    response: AdminProject;
  };
  /** POST /admin/v1/projects/{id}/keys: Create an API key (the full key is returned only here) */
  "admin.projects.keys.create": {
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
  "admin.projects.keys.disable": {
    path: { id: string; key_id: string };
    query: Record<string, never>;
    body: never;
    response: Key;
  };
  /** GET /admin/v1/projects/{id}/keys: List a project's API keys */
  "admin.projects.keys.list": {
    path: { id: string };
    query: Record<string, never>;
    body: never;
    response: {
      object: "list";
      data: Array<Key>;
    };
  };
  /** GET /admin/v1/projects: List projects */
  "admin.projects.list": {
    path: Record<string, never>;
    query: Record<string, never>;
    body: never;
    response: {
      object: "list";
      data: Array<AdminProject>;
    };
  };
  /** GET /admin/v1/projects/{id}/usage: Daily usage totals (UTC days; default the last 30 days) */
  "admin.projects.usage.list": {
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
  /** GET /console/{path}: Web console assets; page paths fall back to index.html */
  "console.files.get": {
    path: { path: string };
    query: Record<string, never>;
    body: never;
    response: Response;
  };
  /** GET /console: Web console (the page is public; its data needs the admin token) */
  "console.get": {
    path: Record<string, never>;
    query: Record<string, never>;
    body: never;
    response: Response;
  };
  /** GET /v1/files/{path}: Download a stored file through a presigned link (expires, sig); supports Range */
  "files.get": {
    path: { path: string };
    query: Record<string, never>;
    body: never;
    response: void;
  };
  /** DELETE /mcp: Ends a Streamable HTTP MCP session (Mcp-Session-Id) */
  "mcp.delete": {
    path: Record<string, never>;
    query: Record<string, never>;
    body: never;
    response: Response;
  };
  /** POST /mcp/messages: MCP legacy HTTP+SSE: a client message for the session in ?sessionId=; replies go out on its event stream */
  "mcp.messages.post": {
    path: Record<string, never>;
    query: Record<string, never>;
    body: unknown;
    response: Response;
  };
  /** POST /mcp: MCP Streamable HTTP: an initialize request opens a session (Mcp-Session-Id in the reply); later messages carry that header */
  "mcp.post": {
    path: Record<string, never>;
    query: Record<string, never>;
    body: unknown;
    response: Response;
  };
  /** GET /mcp: MCP event stream: with Mcp-Session-Id, a Streamable HTTP session's server messages; without it, a legacy HTTP+SSE session (first event: endpoint) */
  "mcp.stream": {
    path: Record<string, never>;
    query: Record<string, never>;
    body: never;
    response: Response;
  };
  /** GET /v1/models/{id}: One served model */
  "models.get": {
    path: { id: string };
    query: Record<string, never>;
    body: never;
    response: Model;
  };
  /** GET /v1/models: List every served model (detect, ocr, describe, embed) */
  "models.list": {
    path: Record<string, never>;
    query: Record<string, never>;
    body: never;
    response: {
      object: "list";
      data: Array<Model>;
    };
  };
  /** GET /v1/project: The API key's project */
  "project.get": {
    path: Record<string, never>;
    query: Record<string, never>;
    body: never;
    response: Project;
  };
  /** GET /v1/projects/{id}: A project (only the key's own; others are 404) */
  "projects.get": {
    path: { id: string };
    query: Record<string, never>;
    body: never;
    response: Project;
  };
  /** GET /healthz: Process is up */
  "system.health": {
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
  /** GET /openapi.json: This API description (OpenAPI 3.1) */
  "system.openapi": {
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
  "system.ready": {
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
  /** POST /v1/vectors/collections: Create a collection */
  "vectors.collections.create": {
    path: Record<string, never>;
    query: Record<string, never>;
    body: {
      name: string;
      description?: string | null;
      model_id?: string;
    };
    response: Collection;
  };
  /** DELETE /v1/vectors/collections/{id}: Delete a collection with its items, vectors, index and files */
  "vectors.collections.delete": {
    path: { id: string };
    query: Record<string, never>;
    body: never;
    response: {
      id: string;
      object: "vectors.collection";
      deleted: true;
    };
  };
  /** GET /v1/vectors/collections/{id}: Collection details */
  "vectors.collections.get": {
    path: { id: string };
    query: Record<string, never>;
    body: never;
    response: Collection;
  };
  /** POST /v1/vectors/collections/{id}/index: Embed and index 1-100 items (each exactly one of image, image_base64, text, audio); an item with the id of one the collection holds replaces it */
  "vectors.collections.index": {
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
  /** DELETE /v1/vectors/collections/{id}/items: Delete items by id */
  "vectors.collections.items.delete": {
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
  /** GET /v1/vectors/collections/{id}/items/{item_id}: One item, with a presigned content URL for media */
  "vectors.collections.items.get": {
    path: { id: string; item_id: string };
    query: Record<string, never>;
    body: never;
    response: Item;
  };
  /** GET /v1/vectors/collections/{id}/items: List items (limit 1-100, default 20; offset), oldest first, with presigned content URLs for media */
  "vectors.collections.items.list": {
    path: { id: string };
    query: {
      limit?: string | number | boolean;
      offset?: string | number | boolean;
    };
    body: never;
    response: {
      object: "list";
      data: Array<Item>;
      total: number;
      limit: number;
      offset: number;
      has_more: boolean;
    };
  };
  /** PATCH /v1/vectors/collections/{id}/items/{item_id}: Update an item's metadata (JSON merge patch: null removes a key); its vector and content stay */
  "vectors.collections.items.update": {
    path: { id: string; item_id: string };
    query: Record<string, never>;
    body: {
      metadata: {
        [key: string]: unknown;
      };
    };
    response: Item;
  };
  /** GET /v1/vectors/collections: List the project's collections */
  "vectors.collections.list": {
    path: Record<string, never>;
    query: Record<string, never>;
    body: never;
    response: {
      object: "list";
      data: Array<Collection>;
    };
  };
  /** POST /v1/vectors/collections/{id}/search: Nearest items to a query of any modality (exactly one of image, image_base64, text, audio), optionally among the items whose metadata match a filter */
  "vectors.collections.search": {
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
      results?: Array<SearchResult>;
      videos?: Array<{
        video: string;
        score: number;
        moments: Array<Moment>;
      }>;
      model: string;
      usage: {
        input_tokens: number;
      };
    };
  };
  /** GET /v1/vectors/models: List embedding models */
  "vectors.models.list": {
    path: Record<string, never>;
    query: Record<string, never>;
    body: never;
    response: {
      models: Array<EmbeddingModel>;
    };
  };
  /** POST /v1/video/process: Enqueue a video task (one input element in v1); base64 input is staged before any worker reads it */
  "video.process": {
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
            margin_max_px?: number;
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
          join_samples?: number;
          min_samples?: number;
          margin_px?: number;
          margin_box?: number;
          margin_max_px?: number;
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
      publish?: {
        mqtt?: {
          camera: string;
        };
      };
      webhook?: {
        url: string;
        secret?: string;
        events?: Array<"line.crossed" | "zone.entered" | "zone.exited" | "zone.dwell" | "zone.crowded">;
      };
    };
    response: TaskCreated;
  };
  /** GET /v1/video/tasks/{id}/analytics: A task's analytics totals so far (running tasks too), without reading its stream */
  "video.tasks.analytics.get": {
    path: { id: string };
    query: Record<string, never>;
    body: never;
    response: Analytics;
  };
  /** POST /v1/video/tasks/{id}/analytics/recount: Count a finished task's stored tracks again (no decoding), with new rules or its own */
  "video.tasks.analytics.recount": {
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
          margin_max_px?: number;
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
        join_samples?: number;
        min_samples?: number;
        margin_px?: number;
        margin_box?: number;
        margin_max_px?: number;
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
          margin_max_px?: number;
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
        join_samples?: number;
        min_samples?: number;
        margin_px?: number;
        margin_box?: number;
        margin_max_px?: number;
      };
      frames: number;
      events: number;
      totals: AnalyticsTotals;
      recount_ms: number;
      source: "track_log" | "archive";
    };
  };
  /** PUT /v1/video/tasks/{id}/analytics: Change the analytics rules of a pending or running task: from its next sampled frame, version + 1; totals of removed rules stay */
  "video.tasks.analytics.update": {
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
          margin_max_px?: number;
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
        join_samples?: number;
        min_samples?: number;
        margin_px?: number;
        margin_box?: number;
        margin_max_px?: number;
      };
    };
    response: Analytics;
  };
  /** POST /v1/video/tasks/{id}/cancel: Cancel: pending -> cancelled at once; running/streaming -> cancelling, cancelled at the next chunk boundary */
  "video.tasks.cancel": {
    path: { id: string };
    query: Record<string, never>;
    body: never;
    response: Task;
  };
  /** GET /v1/video/tasks/{id}: A video task's status record (include=request echoes the body, include=webhook_deliveries lists webhook deliveries) */
  "video.tasks.get": {
    path: { id: string };
    query: {
      include?: string | number | boolean;
    };
    body: never;
    response: Task;
  };
  /** GET /v1/video/tasks/{id}/heatmap.png: A PNG heatmap of where the task's tracks were (their anchors, one point per track and sampled frame), for a running task too */
  "video.tasks.heatmap.get": {
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
  /** GET /v1/video/tasks: List the project's video tasks, newest first (status, from, to, cursor, limit) */
  "video.tasks.list": {
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
      data: Array<Task>;
      has_more: boolean;
      next_cursor: string | null;
    };
  };
  /** GET /v1/video/tasks/{id}/results: Per-track summary of a succeeded task (404 until it has succeeded) */
  "video.tasks.results.get": {
    path: { id: string };
    query: Record<string, never>;
    body: never;
    response: TaskResults;
  };
  /** GET /v1/video/tasks/{id}/stream: Server-sent events: archived chunks from a byte offset (Last-Event-ID or ?offset=), then live ones */
  "video.tasks.stream": {
    path: { id: string };
    query: {
      offset?: string | number | boolean;
      event_ids?: "true" | "false" | number | boolean;
    };
    body: never;
    response: Response;
  };
  /** POST /v1/vision/describe: Describe an image in English or Chinese (built-in describer) */
  "vision.describe": {
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
  "vision.detect": {
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
  "vision.ocr": {
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
  "admin.gpus.list": { method: "GET", path: "/admin/v1/gpus", pathParams: [], idempotencyKey: false, auth: "admin", responseType: "application/json", bodyTypes: [] },
  "admin.models.create": { method: "POST", path: "/admin/v1/models", pathParams: [], idempotencyKey: false, auth: "admin", responseType: "application/json", bodyTypes: [] },
  "admin.models.delete": { method: "DELETE", path: "/admin/v1/models/{id}", pathParams: ["id"], idempotencyKey: false, auth: "admin", responseType: "application/json", bodyTypes: [] },
  "admin.models.list": { method: "GET", path: "/admin/v1/models", pathParams: [], idempotencyKey: false, auth: "admin", responseType: "application/json", bodyTypes: [] },
  "admin.models.load": { method: "POST", path: "/admin/v1/models/{id}/load", pathParams: ["id"], idempotencyKey: false, auth: "admin", responseType: "application/json", bodyTypes: [] },
  "admin.models.unload": { method: "POST", path: "/admin/v1/models/{id}/unload", pathParams: ["id"], idempotencyKey: false, auth: "admin", responseType: "application/json", bodyTypes: [] },
  "admin.models.update": { method: "PATCH", path: "/admin/v1/models/{id}", pathParams: ["id"], idempotencyKey: false, auth: "admin", responseType: "application/json", bodyTypes: [] },
  "admin.projects.create": { method: "POST", path: "/admin/v1/projects", pathParams: [], idempotencyKey: false, auth: "admin", responseType: "application/json", bodyTypes: [] },
  "admin.projects.keys.create": { method: "POST", path: "/admin/v1/projects/{id}/keys", pathParams: ["id"], idempotencyKey: false, auth: "admin", responseType: "application/json", bodyTypes: [] },
  "admin.projects.keys.disable": { method: "POST", path: "/admin/v1/projects/{id}/keys/{key_id}/disable", pathParams: ["id","key_id"], idempotencyKey: false, auth: "admin", responseType: "application/json", bodyTypes: [] },
  "admin.projects.keys.list": { method: "GET", path: "/admin/v1/projects/{id}/keys", pathParams: ["id"], idempotencyKey: false, auth: "admin", responseType: "application/json", bodyTypes: [] },
  "admin.projects.list": { method: "GET", path: "/admin/v1/projects", pathParams: [], idempotencyKey: false, auth: "admin", responseType: "application/json", bodyTypes: [] },
  "admin.projects.usage.list": { method: "GET", path: "/admin/v1/projects/{id}/usage", pathParams: ["id"], idempotencyKey: false, auth: "admin", responseType: "application/json", bodyTypes: [] },
  "console.files.get": { method: "GET", path: "/console/{path}", pathParams: ["path"], idempotencyKey: false, auth: "none", responseType: "text/html", bodyTypes: [] },
  "console.get": { method: "GET", path: "/console", pathParams: [], idempotencyKey: false, auth: "none", responseType: "text/html", bodyTypes: [] },
  "files.get": { method: "GET", path: "/v1/files/{path}", pathParams: ["path"], idempotencyKey: false, auth: "none", responseType: null, bodyTypes: [] },
  "mcp.delete": { method: "DELETE", path: "/mcp", pathParams: [], idempotencyKey: false, auth: "key", responseType: "text/plain", bodyTypes: [] },
  "mcp.messages.post": { method: "POST", path: "/mcp/messages", pathParams: [], idempotencyKey: false, auth: "key", responseType: "text/plain", bodyTypes: [] },
  "mcp.post": { method: "POST", path: "/mcp", pathParams: [], idempotencyKey: false, auth: "key", responseType: "text/event-stream", bodyTypes: [] },
  "mcp.stream": { method: "GET", path: "/mcp", pathParams: [], idempotencyKey: false, auth: "key", responseType: "text/event-stream", bodyTypes: [] },
  "models.get": { method: "GET", path: "/v1/models/{id}", pathParams: ["id"], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: [] },
  "models.list": { method: "GET", path: "/v1/models", pathParams: [], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: [] },
  "project.get": { method: "GET", path: "/v1/project", pathParams: [], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: [] },
  "projects.get": { method: "GET", path: "/v1/projects/{id}", pathParams: ["id"], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: [] },
  "system.health": { method: "GET", path: "/healthz", pathParams: [], idempotencyKey: false, auth: "none", responseType: "application/json", bodyTypes: [] },
  "system.openapi": { method: "GET", path: "/openapi.json", pathParams: [], idempotencyKey: false, auth: "none", responseType: "application/json", bodyTypes: [] },
  "system.ready": { method: "GET", path: "/readyz", pathParams: [], idempotencyKey: false, auth: "none", responseType: "application/json", bodyTypes: [] },
  "vectors.collections.create": { method: "POST", path: "/v1/vectors/collections", pathParams: [], idempotencyKey: true, auth: "key", responseType: "application/json", bodyTypes: [] },
  "vectors.collections.delete": { method: "DELETE", path: "/v1/vectors/collections/{id}", pathParams: ["id"], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: [] },
  "vectors.collections.get": { method: "GET", path: "/v1/vectors/collections/{id}", pathParams: ["id"], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: [] },
  "vectors.collections.index": { method: "POST", path: "/v1/vectors/collections/{id}/index", pathParams: ["id"], idempotencyKey: true, auth: "key", responseType: "application/json", bodyTypes: [] },
  "vectors.collections.items.delete": { method: "DELETE", path: "/v1/vectors/collections/{id}/items", pathParams: ["id"], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: [] },
  "vectors.collections.items.get": { method: "GET", path: "/v1/vectors/collections/{id}/items/{item_id}", pathParams: ["id","item_id"], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: [] },
  "vectors.collections.items.list": { method: "GET", path: "/v1/vectors/collections/{id}/items", pathParams: ["id"], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: [] },
  "vectors.collections.items.update": { method: "PATCH", path: "/v1/vectors/collections/{id}/items/{item_id}", pathParams: ["id","item_id"], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: [] },
  "vectors.collections.list": { method: "GET", path: "/v1/vectors/collections", pathParams: [], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: [] },
  "vectors.collections.search": { method: "POST", path: "/v1/vectors/collections/{id}/search", pathParams: ["id"], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: ["multipart/form-data","image/jpeg","image/png","image/webp"] },
  "vectors.models.list": { method: "GET", path: "/v1/vectors/models", pathParams: [], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: [] },
  "video.process": { method: "POST", path: "/v1/video/process", pathParams: [], idempotencyKey: true, auth: "key", responseType: "application/json", bodyTypes: [] },
  "video.tasks.analytics.get": { method: "GET", path: "/v1/video/tasks/{id}/analytics", pathParams: ["id"], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: [] },
  "video.tasks.analytics.recount": { method: "POST", path: "/v1/video/tasks/{id}/analytics/recount", pathParams: ["id"], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: [] },
  "video.tasks.analytics.update": { method: "PUT", path: "/v1/video/tasks/{id}/analytics", pathParams: ["id"], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: [] },
  "video.tasks.cancel": { method: "POST", path: "/v1/video/tasks/{id}/cancel", pathParams: ["id"], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: [] },
  "video.tasks.get": { method: "GET", path: "/v1/video/tasks/{id}", pathParams: ["id"], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: [] },
  "video.tasks.heatmap.get": { method: "GET", path: "/v1/video/tasks/{id}/heatmap.png", pathParams: ["id"], idempotencyKey: false, auth: "key", responseType: "image/png", bodyTypes: [] },
  "video.tasks.list": { method: "GET", path: "/v1/video/tasks", pathParams: [], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: [] },
  "video.tasks.results.get": { method: "GET", path: "/v1/video/tasks/{id}/results", pathParams: ["id"], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: [] },
  "video.tasks.stream": { method: "GET", path: "/v1/video/tasks/{id}/stream", pathParams: ["id"], idempotencyKey: false, auth: "key", responseType: "text/event-stream", bodyTypes: [] },
  "vision.describe": { method: "POST", path: "/v1/vision/describe", pathParams: [], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: ["multipart/form-data","image/jpeg","image/png","image/webp"] },
  "vision.detect": { method: "POST", path: "/v1/vision/detect", pathParams: [], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: ["multipart/form-data","image/jpeg","image/png","image/webp"] },
  "vision.ocr": { method: "POST", path: "/v1/vision/ocr", pathParams: [], idempotencyKey: false, auth: "key", responseType: "application/json", bodyTypes: ["multipart/form-data","image/jpeg","image/png","image/webp"] },
};
