// The one error catalogue. Every error that reaches a client is an ApiError built here, so the wire
// shape and the status table (README "Errors") live in one place.

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

export class ApiError extends Error {
  readonly status: number;
  readonly type: ErrorType;
  readonly code: string;
  readonly param: string | null;
  /** Extra response headers (Retry-After, WWW-Authenticate). */
  readonly headers: Record<string, string>;

  constructor(status: number, type: ErrorType, code: string, message: string, param: string | null = null, headers: Record<string, string> = {}) {
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
export type FetchedMedia = 'image' | 'audio' | 'video';

const invalid = (code: string, message: string, param: string | null = null) =>
  new ApiError(400, 'invalid_request_error', code, message, param);

export const errors = {
  // 400
  invalidJson: (detail: string) => invalid('invalid_json', `Request body is not valid JSON: ${detail}`),
  invalidBody: (message: string, param: string | null) => invalid('invalid_request', message, param),
  invalidParam: (param: string, message: string) => invalid('invalid_parameter', message, param),
  unsupportedMediaType: (got: string) =>
    invalid('unsupported_content_type', `Expected Content-Type application/json but received ${got || 'none'}`),
  imageInputCount: (received: 'both' | 'neither') =>
    invalid('invalid_image_input', `Expected exactly one of image, image_base64 but received ${received}`, received === 'both' ? 'image_base64' : 'image'),
  invalidBase64: (param: string) => invalid('invalid_base64', `Expected ${param} to be a data URI or base64 string but it could not be decoded`, param),
  invalidImageUrl: (param: string, detail: string) => invalid('invalid_image_url', `Expected ${param} to be an http(s) URL: ${detail}`, param),
  unsupportedImageFormat: (param: string, got: string) =>
    invalid('unsupported_image_format', `Expected a JPEG, PNG or WEBP image but received ${got}`, param),
  undecodableImage: (param: string, detail: string) => invalid('invalid_image', `The image could not be decoded: ${detail}`, param),
  undecodableAudio: (param: string, detail: string) =>
    invalid('invalid_audio', `Expected ${param} to be WAV, MP3, FLAC or OGG audio but it could not be decoded: ${detail}`, param),
  imageTooManyPixels: (param: string, pixels: number, limit: number) =>
    invalid('image_too_large', `Expected at most ${limit} pixels but the image has ${pixels}`, param),
  /** `media` words the message for the field that named the URL; the code stays image_fetch_failed for audio too. */
  imageFetchFailed: (param: string, detail: string, media: FetchedMedia = 'image') =>
    invalid('image_fetch_failed', `The ${media} URL could not be fetched: ${detail}`, param),
  urlNotAllowed: (param: string, detail: string) =>
    invalid('url_not_allowed', `The URL points to a private, loopback or link-local address, which is not allowed: ${detail}`, param),
  unsupportedModality: (param: string, model: string, got: string, types: readonly string[]) =>
    invalid('unsupported_modality', `Expected ${types.join(' or ')} content for ${param} (the collection's model ${model} embeds ${types.join(', ')}) but received ${got}`, param),
  invalidCursor: (param = 'cursor') => invalid('invalid_cursor', `The ${param} is not one this server issued`, param),
  /** A class name a detector does not know (POST /v1/detect `classes`, a video step's `when.classes`). */
  unknownClass: (param: string, name: unknown, labels: readonly string[]) =>
    invalid('unknown_class', `Unknown class ${JSON.stringify(name)}; valid classes: ${labels.join(', ')}`, param),
  unknownFeatureModel: (param: string, model: unknown, available: readonly string[]) =>
    invalid('unknown_model', `Feature model ${JSON.stringify(model)} is not available on this server; available: ${available.join(', ')} (the default)`, param),
  /** `task` is who refused it: the describer (builtin languages, or any code with a VLM) or OCR. */
  unsupportedLanguage: (task: 'describe' | 'ocr', language: string | undefined, supported: string) =>
    invalid('unsupported_language',
      `Expected a language ${task === 'describe' ? 'the describer supports' : 'this server can read'} but received ${JSON.stringify(language)}; supported: ${supported}`, 'language'),
  // 401
  authentication: (code: 'missing_api_key' | 'invalid_api_key' | 'disabled_api_key', message: string) =>
    new ApiError(401, 'authentication_error', code, message, null, { 'WWW-Authenticate': 'Bearer' }),
  invalidAdminToken: () =>
    new ApiError(401, 'authentication_error', 'invalid_admin_token', 'Missing or invalid admin token; expected "Authorization: Bearer $SIGHTFLOW_ADMIN_TOKEN"', null, { 'WWW-Authenticate': 'Bearer' }),
  // 403
  forbidden: (code: string, message: string) => new ApiError(403, 'permission_error', code, message),
  // 404
  notFound: (what: string, id?: string) =>
    new ApiError(404, 'not_found_error', 'not_found', id === undefined ? `No such ${what}` : `No such ${what}: ${id}`),
  routeNotFound: (method: string, path: string) =>
    new ApiError(404, 'not_found_error', 'route_not_found', `No route ${method} ${path}`),
  resultsNotReady: (taskId: string, status: string) =>
    new ApiError(404, 'not_found_error', 'results_not_ready', `Results of video task ${taskId} are available once it has succeeded; it is ${status}`),
  /** `param` is 'sessionId' when the id came in the legacy SSE transport's query string. */
  sessionNotFound: (id: string | undefined, idleS: number, param: string | null) =>
    new ApiError(404, 'not_found_error', 'session_not_found',
      `No such MCP session: ${id}; it may have ended or expired (after ${idleS} s idle). Open a new one with an initialize request`, param),
  // 405
  methodNotAllowed: (method: string, path: string, allowed: string[]) =>
    new ApiError(405, 'invalid_request_error', 'method_not_allowed', `Method ${method} is not allowed on ${path}; allowed: ${allowed.join(', ')}`, null, { Allow: allowed.join(', ') }),
  // 409
  conflict: (code: string, message: string, param: string | null = null) => new ApiError(409, 'conflict_error', code, message, param),
  // 413
  payloadTooLarge: (what: string, limit: number) =>
    new ApiError(413, 'invalid_request_error', 'payload_too_large', `The ${what} is larger than the limit of ${limit} bytes`),
  // 416
  offsetOutOfRange: (offset: number, size: number) =>
    new ApiError(416, 'invalid_request_error', 'offset_out_of_range', `Offset ${offset} is beyond the ${size} bytes this finished stream emitted`, 'offset'),
  // 408
  requestTimeout: () => new ApiError(408, 'invalid_request_error', 'request_timeout', 'The request body did not arrive in time'),
  // 429
  rateLimited: (retryAfterS: number) =>
    new ApiError(429, 'rate_limit_error', 'rate_limit_exceeded', `Rate limit exceeded; retry after ${retryAfterS} s`, null, { 'Retry-After': String(retryAfterS) }),
  tooManySessions: (limit: number, idleS: number, retryAfterS: number) =>
    new ApiError(429, 'rate_limit_error', 'too_many_sessions',
      `This API key already has ${limit} open MCP sessions, the limit; end one (DELETE /mcp with its Mcp-Session-Id, or close its event stream) or let one expire after ${idleS} s idle`,
      null, { 'Retry-After': String(retryAfterS) }),
  // 503
  overloaded: (what: string, retryAfterS = 1) =>
    new ApiError(503, 'overloaded_error', 'overloaded', `The ${what} queue is full; retry after ${retryAfterS} s`, null, { 'Retry-After': String(retryAfterS) }),
  notReady: (what: string) => new ApiError(503, 'overloaded_error', 'not_ready', `${what} is not ready yet`, null, { 'Retry-After': '5' }),
  // 502
  vlmProviderError: (detail: string) => new ApiError(502, 'api_error', 'vlm_provider_error', `The vision-language model provider failed: ${detail}`),
  // 500
  internal: () => new ApiError(500, 'api_error', 'internal_error', 'An internal error occurred; the request id identifies it in the server log'),
  /** A route called as an MCP tool answered something other than JSON (a server bug, not the client's). */
  notATool: (method: string, path: string) =>
    new ApiError(500, 'api_error', 'not_a_tool', `${method} ${path} does not answer JSON, so it cannot be called as a tool`),
} as const;

export function isApiError(e: unknown): e is ApiError {
  return e instanceof ApiError;
}
