// The one error catalogue. Every error code a client can see (an HTTP error body, an MCP tool error, a video
// task's recorded `error` and its final stream chunk) is listed in `errorCatalogue` and built here, so the
// wire shape, the status table and docs/errors.md's code table all come from one place
// (test/unit/errors-catalogue.test.ts holds docs/errors.md to this file).

export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'conflict_error'
  | 'rate_limit_error'
  | 'overloaded_error'
  | 'api_error';

export interface ErrorBody {
  error: { type: ErrorType; code: string; message: string; param: string | null };
}

/** One catalogued code: the HTTP status and type it is sent with (null for codes that never travel as an
 * HTTP error: task records, final stream chunks, MCP tool results) and, in a few words, when it happens. */
export interface CatalogueEntry {
  readonly status: number | null;
  readonly type: ErrorType | null;
  readonly when: string;
}

/** Every client-visible error code. Constructors below take their status and type from here. */
export const errorCatalogue = {
  // 400
  invalid_model: {
    status: 400,
    type: 'invalid_request_error',
    when: 'a model file that does not load or run on the sample image',
  },
  model_checksum_mismatch: {
    status: 400,
    type: 'invalid_request_error',
    when: 'a downloaded model whose sha256 is not the one given',
  },
  invalid_json: { status: 400, type: 'invalid_request_error', when: 'the request body is not valid JSON' },
  invalid_request: {
    status: 400,
    type: 'invalid_request_error',
    when: "the body does not match the endpoint's schema",
  },
  invalid_parameter: {
    status: 400,
    type: 'invalid_request_error',
    when: 'one field or query parameter has a bad value',
  },
  unsupported_content_type: {
    status: 400,
    type: 'invalid_request_error',
    when: 'a JSON endpoint received another Content-Type',
  },
  invalid_image_input: {
    status: 400,
    type: 'invalid_request_error',
    when: 'both or neither of image and image_base64',
  },
  invalid_base64: { status: 400, type: 'invalid_request_error', when: 'a base64 field or data URI does not decode' },
  invalid_image_url: { status: 400, type: 'invalid_request_error', when: 'an image URL is not an http(s) URL' },
  unsupported_image_format: {
    status: 400,
    type: 'invalid_request_error',
    when: 'an image that is not JPEG, PNG or WEBP',
  },
  invalid_image: { status: 400, type: 'invalid_request_error', when: 'an image that cannot be decoded' },
  invalid_audio: { status: 400, type: 'invalid_request_error', when: 'audio that cannot be decoded' },
  image_too_large: { status: 400, type: 'invalid_request_error', when: 'an image over the pixel limit' },
  image_fetch_failed: {
    status: 400,
    type: 'invalid_request_error',
    when: 'an image or audio URL could not be fetched',
  },
  url_not_allowed: {
    status: 400,
    type: 'invalid_request_error',
    when: 'a URL that points to a private, loopback or link-local address',
  },
  unsupported_modality: {
    status: 400,
    type: 'invalid_request_error',
    when: "content the collection's model does not embed",
  },
  invalid_cursor: { status: 400, type: 'invalid_request_error', when: 'a pagination cursor this server did not issue' },
  unknown_class: { status: 400, type: 'invalid_request_error', when: 'a class name the detector does not know' },
  unknown_model: {
    status: 400,
    type: 'invalid_request_error',
    when: 'a model id this server does not serve for that task',
  },
  unsupported_language: {
    status: 400,
    type: 'invalid_request_error',
    when: 'a language the describer or OCR does not support',
  },
  // 400 (param `input`): a video the decoder refused; also recorded as a task's error
  input_not_found: { status: 400, type: 'invalid_request_error', when: 'the video input does not exist' },
  empty_input: { status: 400, type: 'invalid_request_error', when: 'the video input is empty' },
  invalid_video: {
    status: 400,
    type: 'invalid_request_error',
    when: 'the video input is not a video the decoder can open',
  },
  no_video_stream: { status: 400, type: 'invalid_request_error', when: 'the video input has no video stream' },
  unsupported_codec: { status: 400, type: 'invalid_request_error', when: "the video stream's codec is not supported" },
  decode_failed: { status: 400, type: 'invalid_request_error', when: 'decoding failed part way' },
  fetch_failed: { status: 400, type: 'invalid_request_error', when: 'the video URL could not be fetched' },
  source_limit_exceeded: {
    status: 400,
    type: 'invalid_request_error',
    when: 'a network video source broke a limit: a playlist over its size, or more requests than a source may make (a playlist that loops on itself)',
  },
  timeout: { status: 400, type: 'invalid_request_error', when: 'the video source stopped sending data for too long' },
  aborted: { status: 400, type: 'invalid_request_error', when: 'decoding was aborted' },
  // 401
  missing_api_key: { status: 401, type: 'authentication_error', when: 'no Authorization header' },
  invalid_api_key: { status: 401, type: 'authentication_error', when: 'a malformed or unknown API key' },
  disabled_api_key: { status: 401, type: 'authentication_error', when: 'a disabled API key' },
  invalid_admin_token: {
    status: 401,
    type: 'authentication_error',
    when: 'a missing or wrong admin token on the admin API',
  },
  // 403
  invalid_signature: {
    status: 403,
    type: 'permission_error',
    when: 'a presigned file link with a missing, expired or wrong signature',
  },
  // 404
  not_found: { status: 404, type: 'not_found_error', when: 'an unknown id, or an id of another project' },
  route_not_found: { status: 404, type: 'not_found_error', when: 'no route for the path' },
  results_not_ready: { status: 404, type: 'not_found_error', when: 'results of a video task that has not succeeded' },
  session_not_found: {
    status: 404,
    type: 'not_found_error',
    when: 'an MCP session that ended, expired or never existed',
  },
  // 405
  method_not_allowed: {
    status: 405,
    type: 'invalid_request_error',
    when: 'a wrong method on a known path (Allow header)',
  },
  // 408
  request_timeout: { status: 408, type: 'invalid_request_error', when: 'the request body did not arrive in time' },
  // 409
  model_exists: { status: 409, type: 'conflict_error', when: 'adding a model under an id that is already registered' },
  collection_exists: {
    status: 409,
    type: 'conflict_error',
    when: 'a vector collection name already used in the project',
  },
  duplicate_project_name: { status: 409, type: 'conflict_error', when: 'a project name already used' },
  task_finished: { status: 409, type: 'conflict_error', when: 'cancelling a video task that has already finished' },
  analytics_unavailable: {
    status: 409,
    type: 'conflict_error',
    when: 'analytics of a video task without an analytics step, a rule change on a finished task, a recount of one still running, or a heatmap of a task with no tracked box and no recorded frame size',
  },
  idempotency_conflict: {
    status: 409,
    type: 'conflict_error',
    when: 'an Idempotency-Key reused with another request, or its first request still running',
  },
  // 413
  payload_too_large: { status: 413, type: 'invalid_request_error', when: 'a body, image or video over its size limit' },
  // 416
  offset_out_of_range: {
    status: 416,
    type: 'invalid_request_error',
    when: 'a stream offset past the end of a finished task',
  },
  range_not_satisfiable: {
    status: 416,
    type: 'invalid_request_error',
    when: 'a Range header outside a stored file (Content-Range gives its size)',
  },
  // 429
  rate_limit_exceeded: { status: 429, type: 'rate_limit_error', when: 'the per-key rate limit (Retry-After)' },
  too_many_sessions: {
    status: 429,
    type: 'rate_limit_error',
    when: 'the key already holds its limit of open MCP sessions (Retry-After)',
  },
  // 502
  vlm_provider_error: { status: 502, type: 'api_error', when: 'the configured VLM failed and no fallback applies' },
  // 503
  overloaded: { status: 503, type: 'overloaded_error', when: 'an inference or work queue is full (Retry-After)' },
  not_ready: { status: 503, type: 'overloaded_error', when: 'a model or service is still starting (Retry-After)' },
  console_not_built: { status: 503, type: 'api_error', when: 'the web console has not been built' },
  gpu_unavailable: {
    status: 503,
    type: 'api_error',
    when: 'SIGHTFLOW_GPU_REQUIRED is set and the model could not start on its GPU provider (Retry-After)',
  },
  video_unavailable: {
    status: 503,
    type: 'api_error',
    when: 'this build of sightflow has no video decoding (native addon built without FFmpeg)',
  },
  settings_locked: {
    status: 503,
    type: 'api_error',
    when: 'the model settings file stayed locked by another process past the wait (Retry-After)',
  },
  // 500
  internal_error: {
    status: 500,
    type: 'api_error',
    when: 'a bug; never leaks a stack, the request id finds it in the log',
  },
  not_a_tool: { status: 500, type: 'api_error', when: 'a route called as an MCP tool did not answer JSON' },
  out_of_memory: { status: 500, type: 'api_error', when: 'the video decoder ran out of memory' },
  not_open: { status: 500, type: 'api_error', when: 'a read from a decoder that was already closed' },
  resume_mismatch: {
    status: 500,
    type: 'api_error',
    when: "a video task continued on another worker whose decoder could not find the checkpoint's frame again (the input, options or decoder differ)",
  },
  // MCP tool results (no HTTP status)
  cancelled: {
    status: null,
    type: 'api_error',
    when: 'an MCP tool call cancelled by the client or its session ending',
  },
  // A video task's recorded error and final stream chunk (no HTTP status); any code above may also appear there
  no_provider: { status: null, type: null, when: "no video provider serves the task's model" },
  provider_error: { status: null, type: null, when: 'the provider failed after the stream had started' },
  providers_failed: { status: null, type: null, when: 'every provider failed before the first chunk' },
  worker_shutdown: { status: null, type: null, when: 'the server shut down while the task was streaming' },
  worker_lost: { status: null, type: null, when: 'the worker stopped renewing its lease (crash or hang)' },
  source_lost: {
    status: null,
    type: null,
    when: 'a live video source dropped or stalled and did not come back within input[].reconnect',
  },
  source_changed: {
    status: null,
    type: null,
    when: "a video task's URL no longer served the same resource (length, ETag, Last-Modified) when another worker took it over, or between two requests of one run",
  },
} as const satisfies Record<string, CatalogueEntry>;

export type ErrorCode = keyof typeof errorCatalogue;
/** Codes that travel as an HTTP error body (an ApiError). */
export type HttpErrorCode = {
  [C in ErrorCode]: (typeof errorCatalogue)[C]['status'] extends number ? C : never;
}[ErrorCode];

export class ApiError extends Error {
  readonly status: number;
  readonly type: ErrorType;
  readonly code: string;
  readonly param: string | null;
  /** Extra response headers (Retry-After, WWW-Authenticate). */
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    type: ErrorType,
    code: string,
    message: string,
    param: string | null = null,
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.type = type;
    this.code = code;
    this.param = param;
    this.headers = headers;
  }

  toBody(): ErrorBody {
    return { error: { type: this.type, code: this.code, message: this.message, param: this.param } };
  }
}

/** What a fetched or decoded media field holds; it words the size and fetch errors. */
export type FetchedMedia = 'image' | 'audio' | 'video' | 'model';

/** An ApiError for a catalogued code, with the status and type the catalogue gives it. */
function make(
  code: HttpErrorCode,
  message: string,
  param: string | null = null,
  headers: Record<string, string> = {},
): ApiError {
  const entry = errorCatalogue[code] as CatalogueEntry & { status: number; type: ErrorType };
  return new ApiError(entry.status, entry.type, code, message, param, headers);
}

export const errors = {
  // 400
  invalid_model: {
    status: 400,
    type: 'invalid_request_error',
    when: 'a model file that does not load or run on the sample image',
  },
  model_checksum_mismatch: {
    status: 400,
    type: 'invalid_request_error',
    when: 'a downloaded model whose sha256 is not the one given',
  },
  invalidJson: (detail: string) => make('invalid_json', `Request body is not valid JSON: ${detail}`),
  invalidBody: (message: string, param: string | null) => make('invalid_request', message, param),
  invalidParam: (param: string, message: string) => make('invalid_parameter', message, param),
  unsupportedMediaType: (got: string, accepted: readonly string[] = ['application/json']) =>
    make(
      'unsupported_content_type',
      `Expected Content-Type ${accepted.length > 1 ? `${accepted.slice(0, -1).join(', ')} or ${accepted.at(-1)}` : accepted[0]} but received ${got || 'none'}`,
    ),
  imageInputCount: (received: 'both' | 'neither') =>
    make(
      'invalid_image_input',
      `Expected exactly one of image, image_base64 but received ${received}`,
      received === 'both' ? 'image_base64' : 'image',
    ),
  invalidBase64: (param: string) =>
    make('invalid_base64', `Expected ${param} to be a data URI or base64 string but it could not be decoded`, param),
  invalidImageUrl: (param: string, detail: string) =>
    make('invalid_image_url', `Expected ${param} to be an http(s) URL: ${detail}`, param),
  unsupportedImageFormat: (param: string, got: string) =>
    make('unsupported_image_format', `Expected a JPEG, PNG or WEBP image but received ${got}`, param),
  undecodableImage: (param: string, detail: string) =>
    make('invalid_image', `The image could not be decoded: ${detail}`, param),
  undecodableAudio: (param: string, detail: string) =>
    make(
      'invalid_audio',
      `Expected ${param} to be WAV, MP3, FLAC or OGG audio but it could not be decoded: ${detail}`,
      param,
    ),
  imageTooManyPixels: (param: string, pixels: number, limit: number) =>
    make('image_too_large', `Expected at most ${limit} pixels but the image has ${pixels}`, param),
  /** `media` words the message for the field that named the URL; the code stays image_fetch_failed for audio too. */
  imageFetchFailed: (param: string, detail: string, media: FetchedMedia = 'image') =>
    make('image_fetch_failed', `The ${media} URL could not be fetched: ${detail}`, param),
  urlNotAllowed: (param: string, detail: string) =>
    make(
      'url_not_allowed',
      `The URL points to a private, loopback or link-local address, which is not allowed: ${detail}`,
      param,
    ),
  unsupportedModality: (param: string, model: string, got: string, types: readonly string[]) =>
    make(
      'unsupported_modality',
      `Expected ${types.join(' or ')} content for ${param} (the collection's model ${model} embeds ${types.join(', ')}) but received ${got}`,
      param,
    ),
  invalidCursor: (param = 'cursor') => make('invalid_cursor', `The ${param} is not one this server issued`, param),
  /** A class name a detector does not know (POST /v1/detect `classes`, a video step's `when.classes`). */
  unknownClass: (param: string, name: unknown, labels: readonly string[]) =>
    make('unknown_class', `Unknown class ${JSON.stringify(name)}; valid classes: ${labels.join(', ')}`, param),
  unknownFeatureModel: (param: string, model: unknown, available: readonly string[]) =>
    make(
      'unknown_model',
      `Feature model ${JSON.stringify(model)} is not available on this server; available: ${available.join(', ')} (the default)`,
      param,
    ),
  /** A `model` the server does not serve for the task (detect, ocr, describe, a video step); lists those it does. */
  unknownModel: (param: string, model: unknown, task: string, available: readonly string[]) =>
    make(
      'unknown_model',
      `Unknown ${task} model ${JSON.stringify(model)}; models that serve ${task}: ${available.join(', ')}`,
      param,
    ),
  /** `task` is who refused it: the describer (builtin languages, or any code with a VLM) or OCR. */
  unsupportedLanguage: (task: 'describe' | 'ocr', language: string | undefined, supported: string) =>
    make(
      'unsupported_language',
      `Expected a language ${task === 'describe' ? 'the describer supports' : 'this server can read'} but received ${JSON.stringify(language)}; supported: ${supported}`,
      'language',
    ),
  // 401
  authentication: (code: 'missing_api_key' | 'invalid_api_key' | 'disabled_api_key', message: string) =>
    make(code, message, null, { 'WWW-Authenticate': 'Bearer' }),
  invalidAdminToken: () =>
    make(
      'invalid_admin_token',
      'Missing or invalid admin token; expected "Authorization: Bearer $SIGHTFLOW_ADMIN_TOKEN"',
      null,
      { 'WWW-Authenticate': 'Bearer' },
    ),
  // 403
  /** A presigned file link that is missing its parameters, has expired, or whose signature does not match. */
  invalidSignature: (message: string) => make('invalid_signature', message),
  // 404
  notFound: (what: string, id?: string) =>
    make('not_found', id === undefined ? `No such ${what}` : `No such ${what}: ${id}`),
  routeNotFound: (method: string, path: string) => make('route_not_found', `No route ${method} ${path}`),
  resultsNotReady: (taskId: string, status: string) =>
    make('results_not_ready', `Results of video task ${taskId} are available once it has succeeded; it is ${status}`),
  /** `param` is 'sessionId' when the id came in the legacy SSE transport's query string. */
  sessionNotFound: (id: string | undefined, idleS: number, param: string | null) =>
    make(
      'session_not_found',
      `No such MCP session: ${id}; it may have ended or expired (after ${idleS} s idle). Open a new one with an initialize request`,
      param,
    ),
  // 405
  methodNotAllowed: (method: string, path: string, allowed: string[]) =>
    make('method_not_allowed', `Method ${method} is not allowed on ${path}; allowed: ${allowed.join(', ')}`, null, {
      Allow: allowed.join(', '),
    }),
  // 409
  modelExists: (id: string) =>
    make('model_exists', `A model with id ${id} is already registered; remove it first or pick another --id`, 'id'),
  invalidModel: (detail: string) => make('invalid_model', `The model could not be used: ${detail}`, 'source'),
  modelChecksumMismatch: (got: string, expected: string) =>
    make(
      'model_checksum_mismatch',
      `The downloaded model has sha256 ${got} but ${expected} was expected; nothing was kept`,
      'sha256',
    ),
  collectionExists: (name: string) =>
    make('collection_exists', `A collection named ${JSON.stringify(name)} already exists in this project`, 'name'),
  duplicateProjectName: (name: string) =>
    make('duplicate_project_name', `A project named "${name}" already exists`, 'name'),
  analyticsUnavailable: (id: string, why: string) =>
    make('analytics_unavailable', `Analytics of video task ${id}: ${why}`),
  taskFinished: (id: string, status: string) =>
    make(
      'task_finished',
      `Video task ${id} already ${status}; only pending, running or streaming tasks can be cancelled`,
    ),
  /** `busy`: the first request with this key is still being processed (past the wait for its response). */
  idempotencyConflict: (busy: boolean) =>
    make(
      'idempotency_conflict',
      busy
        ? 'A request with this Idempotency-Key is still being processed; retry it later'
        : 'This Idempotency-Key was already used with a different request (method, path or body) within the last 24 hours',
      'Idempotency-Key',
    ),
  // 413
  payloadTooLarge: (what: string, limit: number) =>
    make('payload_too_large', `The ${what} is larger than the limit of ${limit} bytes`),
  // 416
  offsetOutOfRange: (offset: number, size: number) =>
    make('offset_out_of_range', `Offset ${offset} is beyond the ${size} bytes this finished stream emitted`, 'offset'),
  rangeNotSatisfiable: (size: number) =>
    make('range_not_satisfiable', `The requested Range is outside the file's ${size} bytes`, null, {
      'Content-Range': `bytes */${size}`,
    }),
  // 408
  requestTimeout: () => make('request_timeout', 'The request body did not arrive in time'),
  // 429
  rateLimited: (retryAfterS: number) =>
    make('rate_limit_exceeded', `Rate limit exceeded; retry after ${retryAfterS} s`, null, {
      'Retry-After': String(retryAfterS),
    }),
  tooManySessions: (limit: number, idleS: number, retryAfterS: number) =>
    make(
      'too_many_sessions',
      `This API key already has ${limit} open MCP sessions, the limit; end one (DELETE /mcp with its Mcp-Session-Id, or close its event stream) or let one expire after ${idleS} s idle`,
      null,
      { 'Retry-After': String(retryAfterS) },
    ),
  // 503
  overloaded: (what: string, retryAfterS = 1) =>
    make('overloaded', `The ${what} queue is full; retry after ${retryAfterS} s`, null, {
      'Retry-After': String(retryAfterS),
    }),
  notReady: (what: string) => make('not_ready', `${what} is not ready yet`, null, { 'Retry-After': '5' }),
  /** `message` says how to build it; the console's HTML page shows the same words. */
  consoleNotBuilt: (message: string) => make('console_not_built', message),
  gpuUnavailable: (model: string, where: string, detail: string) =>
    make(
      'gpu_unavailable',
      `Model ${model} could not start on ${where} (${detail}), and SIGHTFLOW_GPU_REQUIRED forbids running it on the CPU`,
      null,
      { 'Retry-After': '5' },
    ),
  /** The native addon loaded is the build without FFmpeg (sightflow_novideo.node): no video can be decoded. */
  videoUnavailable: () =>
    make(
      'video_unavailable',
      'This build of sightflow has no video decoding (native addon built without FFmpeg); video needs the full build of the addon',
    ),
  /** Another process held the data dir's model settings file past the wait (`detail` names the lock and its pid). */
  settingsLocked: (detail: string) =>
    make('settings_locked', `The model settings could not be changed: ${detail}`, null, { 'Retry-After': '5' }),
  // 502
  vlmProviderError: (detail: string) =>
    make('vlm_provider_error', `The vision-language model provider failed: ${detail}`),
  // 500
  internal: () => make('internal_error', 'An internal error occurred; the request id identifies it in the server log'),
  /** A route called as an MCP tool answered something other than JSON (a server bug, not the client's). */
  notATool: (method: string, path: string) =>
    make('not_a_tool', `${method} ${path} does not answer JSON, so it cannot be called as a tool`),
} as const;

/** What an answered error is made of: enough to make it again in another process. */
export interface ErrorFields {
  status: number;
  type: ErrorType;
  code: string;
  message: string;
  param: string | null;
  headers: Record<string, string>;
}

/**
 * An error another sightflow process answered (a front process relays its owner's), made again with the same
 * status, type, code, message, param and headers: the catalogue already made it there.
 */
export function relayedError(w: ErrorFields): ApiError {
  return new ApiError(w.status, w.type, w.code, w.message, w.param, w.headers);
}

export function isApiError(e: unknown): e is ApiError {
  return e instanceof ApiError;
}

/** A video decode failure: the decoder's stable reason as the code, on the `input` parameter. It is a 400
 * except for the decoder's own faults (out_of_memory, not_open, resume_mismatch). */
export type DecodeCode =
  | 'input_not_found'
  | 'empty_input'
  | 'invalid_video'
  | 'no_video_stream'
  | 'unsupported_codec'
  | 'decode_failed'
  | 'fetch_failed'
  | 'source_limit_exceeded'
  | 'timeout'
  | 'aborted'
  | 'out_of_memory'
  | 'not_open'
  | 'resume_mismatch';

export class DecodeError extends ApiError {
  /** `stack`, when given, is the caller's stack, so the log shows who read rather than the addon's callback. */
  constructor(code: DecodeCode, message: string, stack?: string) {
    const entry = errorCatalogue[code];
    super(entry.status, entry.type, code, message, 'input');
    this.name = 'DecodeError';
    if (stack) this.stack = `DecodeError: ${message}\n${stack.split('\n').slice(1).join('\n')}`;
  }
}

/** The `error` a failed video task records and sends in its final stream chunk. */
export interface TaskError {
  code: string;
  message: string;
}

/** Task errors that are not an ApiError: the worker and reaper write these into the task record. */
export const taskErrors = {
  /** `model` is the request's model hint or the task's model. */
  noProvider: (model: string | undefined): TaskError => ({
    code: 'no_provider' satisfies ErrorCode,
    message: `No video provider is available for model ${JSON.stringify(model)} (SIGHTFLOW_PROVIDERS)`,
  }),
  providerError: (provider: string, chunks: number, detail: string): TaskError => ({
    code: 'provider_error' satisfies ErrorCode,
    message: `Provider ${provider} failed after ${chunks} chunk(s): ${detail}`,
  }),
  /** `tried` holds one "name: reason" per provider, in the order tried. */
  providersFailed: (tried: readonly string[]): TaskError => ({
    code: 'providers_failed' satisfies ErrorCode,
    message: `All ${tried.length} provider(s) failed before the first chunk: ${tried.join('; ')}`,
  }),
  workerShutdown: (): TaskError => ({
    code: 'worker_shutdown' satisfies ErrorCode,
    message: 'The worker shut down while the task was streaming',
  }),
  workerLostBeforeFirstChunk: (attempts: number): TaskError => ({
    code: 'worker_lost' satisfies ErrorCode,
    message: `The worker stopped responding before the first chunk on each of ${attempts} attempts`,
  }),
  /** A continued file ended `frames` frames before the archive's last (it is not the file the task began). */
  inputEndedEarly: (frames: number): TaskError => ({
    code: 'resume_mismatch' satisfies ErrorCode,
    message: `The task cannot continue: its input ended ${frames} frame(s) before the archive's last frame`,
  }),
  workerLostMidStream: (chunks: number): TaskError => ({
    code: 'worker_lost' satisfies ErrorCode,
    message: `The worker stopped responding mid-stream after ${chunks} chunk(s) (lease expired); the partial stream stays replayable`,
  }),
} as const;

/** The body of an MCP tool call that was cancelled (a tool result, never an HTTP response). */
export function toolCancelledBody(): ErrorBody {
  return {
    error: {
      type: errorCatalogue.cancelled.type,
      code: 'cancelled',
      message: 'The tool call was cancelled',
      param: null,
    },
  };
}
