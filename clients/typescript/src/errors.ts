// Typed errors. Every error the server answers has the documented body
// {error: {type, code, message, param}} and an x-request-id header; an SightflowAPIError carries all of them,
// and its subclass says the status class, so callers branch with instanceof rather than numbers.

export class SightflowError extends Error {
  override name = 'SightflowError';
}

export interface ErrorBody {
  type?: string;
  code?: string;
  message?: string;
  param?: string | null;
}

export class APIError extends SightflowError {
  override name = 'APIError';
  readonly status: number;
  readonly type: string;
  readonly code: string;
  readonly param: string | null;
  readonly requestId: string | null;
  readonly headers: Headers;
  /** The parsed body, or its text when it was not JSON. */
  readonly body: unknown;

  constructor(status: number, body: unknown, headers: Headers, fallbackMessage?: string) {
    const e: ErrorBody =
      (body && typeof body === 'object' && 'error' in body ? (body as { error: ErrorBody }).error : undefined) ?? {};
    const message = e.message ?? fallbackMessage ?? `HTTP ${status}`;
    super(`${status} ${e.code ?? e.type ?? 'error'}: ${message}`);
    this.status = status;
    this.type = e.type ?? 'api_error';
    this.code = e.code ?? 'unknown';
    this.param = e.param ?? null;
    this.requestId = headers.get('x-request-id');
    this.headers = headers;
    this.body = body;
  }

  /** The subclass for a status (400 BadRequestError, 404 NotFoundError, 429 RateLimitError, ...). */
  static of(status: number, body: unknown, headers: Headers, fallbackMessage?: string): APIError {
    const C =
      status === 400
        ? BadRequestError
        : status === 401
          ? AuthenticationError
          : status === 403
            ? PermissionDeniedError
            : status === 404
              ? NotFoundError
              : status === 408
                ? RequestTimeoutError
                : status === 409
                  ? ConflictError
                  : status === 413
                    ? PayloadTooLargeError
                    : status === 416
                      ? RangeNotSatisfiableError
                      : status === 422
                        ? UnprocessableEntityError
                        : status === 429
                          ? RateLimitError
                          : status === 503
                            ? OverloadedError
                            : status >= 500
                              ? InternalServerError
                              : APIError;
    return new C(status, body, headers, fallbackMessage);
  }
}

export class BadRequestError extends APIError {
  override name = 'BadRequestError';
}
export class AuthenticationError extends APIError {
  override name = 'AuthenticationError';
}
export class PermissionDeniedError extends APIError {
  override name = 'PermissionDeniedError';
}
export class NotFoundError extends APIError {
  override name = 'NotFoundError';
}
export class RequestTimeoutError extends APIError {
  override name = 'RequestTimeoutError';
}
export class ConflictError extends APIError {
  override name = 'ConflictError';
}
export class PayloadTooLargeError extends APIError {
  override name = 'PayloadTooLargeError';
}
export class RangeNotSatisfiableError extends APIError {
  override name = 'RangeNotSatisfiableError';
}
export class UnprocessableEntityError extends APIError {
  override name = 'UnprocessableEntityError';
}
export class RateLimitError extends APIError {
  override name = 'RateLimitError';
}
export class InternalServerError extends APIError {
  override name = 'InternalServerError';
}
/** 503: the server's queue is full; Retry-After says when to come back. */
export class OverloadedError extends InternalServerError {
  override name = 'OverloadedError';
}

/** The request never got an answer (refused, reset, DNS), after every retry. */
export class APIConnectionError extends SightflowError {
  override name = 'APIConnectionError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** The request took longer than its timeout, after every retry. */
export class APITimeoutError extends APIConnectionError {
  override name = 'APITimeoutError';
}

/** The caller's AbortSignal fired. */
export class APIUserAbortError extends SightflowError {
  override name = 'APIUserAbortError';
}

/** A webhook delivery whose signature, timestamp or headers do not check out. */
export class WebhookVerificationError extends SightflowError {
  override name = 'WebhookVerificationError';
}

/** tasks.wait gave up before the task reached a terminal state. */
export class WaitTimeoutError extends SightflowError {
  override name = 'WaitTimeoutError';
}

/** A stream that could not be resumed (too many failed reconnects in a row). */
export class StreamError extends SightflowError {
  override name = 'StreamError';
}
