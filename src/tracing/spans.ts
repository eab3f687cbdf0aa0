// Spans for export over OTLP. Nothing here loads the OpenTelemetry packages: tracing/otlp.ts does, by import(),
// only when an endpoint is configured, and hands its recorder to startSpanExport(). Until then `spansOn` is
// false and recording is never reached: a server without an endpoint pays a boolean read where a request
// ends and where it names the parent of a call it makes (tracing/traceparent.ts), and nothing else.
import { randomBytes } from 'node:crypto';

export type SpanKind = 'server' | 'consumer';

/** One finished span, with sightflow's own ids (the trace's, the span's and its parent's). */
export interface SpanRecord {
  name: string;
  kind: SpanKind;
  /** 32 lower-case hex characters. */
  traceId: string;
  /** 16 lower-case hex characters. */
  spanId: string;
  /** The span that called this one (16 hex characters); absent: the trace's root. */
  parentSpanId?: string;
  /** The trace's W3C flags (2 hex characters): an unsampled trace (`00`) is not exported. */
  flags: string;
  /** performance.now() at the span's start and end (the exporter turns them into wall-clock time). */
  startMs: number;
  endMs: number;
  attributes: Record<string, string | number | boolean>;
  /** Set when the span failed (a 5xx answer, a failed task): exported with an error status and this message. */
  error?: string;
}

/** Where finished spans go (tracing/otlp.ts): batched in memory, flushed by close(). */
export interface SpanRecorder {
  record(s: SpanRecord): void;
  close(): Promise<void>;
}

/** Whether this process exports spans. Read on paths that would otherwise make no span id; set at start. */
export let spansOn = false;
let recorder: SpanRecorder | null = null;

/** Sends this process's spans to `r` from now on (one recorder per process: a second start replaces the first). */
export function startSpanExport(r: SpanRecorder): void {
  recorder = r;
  spansOn = true;
}

/** Stops recording and flushes what was recorded (the app's close path, after its last task has ended). */
export async function stopSpanExport(r: SpanRecorder): Promise<void> {
  if (recorder === r) {
    recorder = null;
    spansOn = false;
  }
  await r.close();
}

export function recordSpan(s: SpanRecord): void {
  recorder?.record(s);
}

/**
 * Span ids: a random per-process prefix (distinct across the processes of one trace) and a counter, 16 hex
 * characters, never all zero (the counter starts at 1). Made only while spans are exported.
 */
let spanPrefix = randomBytes(4).toString('hex');
let spanCounter = 0;
export function nextSpanId(): string {
  if (++spanCounter > 0xffffffff) {
    spanPrefix = randomBytes(4).toString('hex');
    spanCounter = 1;
  }
  return spanPrefix + spanCounter.toString(16).padStart(8, '0');
}
