// sightflow-client: the TypeScript SDK for the sightflow API (docs/clients.md).
export { Sightflow, TERMINAL_STATES } from './client.js';
export type * from './client.js';
export {
  Transport,
  retryDelayMs,
  retryAfterSeconds,
  isRetryableStatus,
  type ClientOptions,
  type RequestOptions,
} from './core.js';
export * from './errors.js';
export { PagePromise, type Page } from './pagination.js';
export { TaskStream, type TaskChunk, type StreamOptions } from './stream.js';
export { verifyWebhook, type WebhookEvent, type VerifyOptions, type HeaderSource } from './webhooks.js';
export type { Uploadable } from './uploads.js';
export { OPERATIONS, type Operations, type OperationId, type OperationSpec } from './generated/api.js';
export type * from './generated/api.js';
export { Sightflow as default } from './client.js';
