// W3C Trace Context (traceparent: version-traceid-parentid-flags). A request that brings a valid
// `traceparent` joins that trace; one without starts a trace whose id comes from its request id (both are
// 32 hex characters of per-process randomness and a counter, so starting one costs nothing per request).
// The trace id goes into the request's access-log line (`trace_id`) and, with a fresh span id, into the
// `traceparent` of the calls the request makes (the VLM, remote video providers, webhooks) and of the video
// task it queues, so the worker that runs the task logs and forwards the same trace. While spans are exported
// (tracing/spans.ts) a call names the exported span that makes it (the request's, or the worker's task span)
// as its parent instead of an id no span has, so the exported trace has no gaps.
import { randomBytes } from 'node:crypto';
import { nextRequestId } from '../http/request-id.js';
import { nextSpanId, spansOn } from './spans.js';

export interface TraceContext {
  traceId: string;
  flags: string;
}
/** A parsed traceparent: its trace and the caller's span id (`parent-id`). */
export interface Traceparent extends TraceContext {
  parentId: string;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

/**
 * The trace a `traceparent` header names, or null when it is absent or invalid (version ff, all-zero ids,
 * or anything after the flags in version 00): the request then starts its own trace, as the standard asks.
 */
export function parseTraceparent(header: string | undefined): Traceparent | null {
  if (!header) return null;
  const m = TRACEPARENT.exec(header.trim());
  if (!m || m[1] === 'ff' || m[2] === ZERO_TRACE || m[3] === ZERO_SPAN || (m[1] === '00' && m[5] !== undefined))
    return null;
  return { traceId: m[2]!, flags: m[4]!, parentId: m[3]! };
}

/**
 * A fresh trace id, for a request that starts a trace under a request id its client named: the hex of a new
 * server request id (`req_` and 32 hex characters, http/request-id.ts). A server-made request id's own hex
 * serves as its trace id (http/exchange.ts).
 */
export function startedTraceId(): string {
  return nextRequestId().slice(4);
}

/** Sampled: this process records the trace (its ids are in the logs). */
export const STARTED_FLAGS = '01';

/** The `traceparent` of a call made within a trace: the same trace, a new span id for the call. */
export function childTraceparent(t: TraceContext): string {
  return `00-${t.traceId}-${randomBytes(8).toString('hex')}-${t.flags}`;
}

/** The `traceparent` of a call made by the span `spanId` of a trace. */
export function spanTraceparent(t: TraceContext, spanId: string): string {
  return `00-${t.traceId}-${spanId}-${t.flags}`;
}

/**
 * `{traceparent}` headers for a call made within the trace a stored traceparent names; none without one.
 * While spans are exported the stored traceparent already names the exported span that makes the call, and
 * goes as it is.
 */
export function callTraceparent(stored: string | null | undefined): Record<string, string> {
  const t = parseTraceparent(stored ?? undefined);
  if (!t) return {};
  return { traceparent: spansOn ? spanTraceparent(t, t.parentId) : childTraceparent(t) };
}

/** The ids of a span of work done for a stored traceparent (a queued task): under its span, else a new trace. */
export interface SpanIds {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  flags: string;
}
export function spanUnder(stored: string | undefined): SpanIds {
  const t = parseTraceparent(stored);
  const spanId = nextSpanId();
  return t
    ? { traceId: t.traceId, spanId, parentSpanId: t.parentId, flags: t.flags }
    : { traceId: startedTraceId(), spanId, flags: STARTED_FLAGS };
}

/** The trace id in a traceparent this process wrote or accepted (for a worker's log lines). */
export function traceIdOf(traceparent: string | undefined): string | undefined {
  return parseTraceparent(traceparent)?.traceId;
}
