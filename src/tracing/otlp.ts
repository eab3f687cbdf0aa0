// Span export over OTLP/HTTP (JSON) with the OpenTelemetry SDK. The packages are loaded here, by import(), and
// only when an endpoint is configured (app.ts startTracing): a process without one never loads them, and
// test/unit/house-rules.test.ts keeps every other file from importing them. Spans keep sightflow's own ids
// (the trace id of the request's log line, span ids from tracing/spans.ts): the SDK's id generator hands back
// the ids set just before each span starts, and the parent is the caller's span as a remote span context.
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { SpanRecord, SpanRecorder } from './spans.js';

export interface OtlpSettings {
  /** Where batches of spans are POSTed (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces). */
  url: string;
  /** Sent with every export (OTEL_EXPORTER_OTLP_HEADERS and _TRACES_HEADERS): a collector's credential. */
  headers: Record<string, string>;
  /** The resource's service.name. */
  serviceName: string;
  /** Longest a finished span waits before its batch is sent. */
  scheduleDelayMs: number;
}

/** How often a failing collector is reported in the log (the spans it refused are counted in between). */
const WARN_EVERY_MS = 60_000;

/**
 * A recorder that batches spans and sends them to the collector. `warn` hears of failed exports at most once
 * a minute; close() sends what is left, waiting at most `closeTimeoutMs` for a collector that does not answer.
 */
export async function openOtlpRecorder(
  o: OtlpSettings,
  version: string,
  closeTimeoutMs: number,
  warn: (err: unknown, droppedSpans: number) => void,
): Promise<SpanRecorder> {
  const [api, sdk, { OTLPTraceExporter }, { resourceFromAttributes }] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
  ]);
  const otlp = new OTLPTraceExporter({ url: o.url, headers: o.headers });
  let dropped = 0;
  let warnedAt = -Infinity;
  const exporter: SpanExporter = {
    export(spans: ReadableSpan[], done) {
      otlp.export(spans, (result) => {
        // ExportResultCode.SUCCESS is 0.
        if (result.code !== 0) {
          dropped += spans.length;
          const now = performance.now();
          if (now - warnedAt >= WARN_EVERY_MS) {
            warnedAt = now;
            warn(result.error, dropped);
            dropped = 0;
          }
        }
        done(result);
      });
    },
    shutdown: () => otlp.shutdown(),
    forceFlush: () => otlp.forceFlush(),
  };
  const next = { traceId: '', spanId: '' };
  const provider = new sdk.BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': o.serviceName, 'service.version': version }),
    idGenerator: { generateTraceId: () => next.traceId, generateSpanId: () => next.spanId },
    spanProcessors: [new sdk.BatchSpanProcessor(exporter, { scheduledDelayMillis: o.scheduleDelayMs })],
  });
  const tracer = provider.getTracer('sightflow', version);
  const KIND = { server: api.SpanKind.SERVER, consumer: api.SpanKind.CONSUMER } as const;

  return {
    record(s: SpanRecord): void {
      next.traceId = s.traceId;
      next.spanId = s.spanId;
      // The SDK's default sampler follows the parent's sampled flag: an unsampled caller's trace is not sent.
      const parent = s.parentSpanId
        ? api.trace.setSpanContext(api.ROOT_CONTEXT, {
            traceId: s.traceId,
            spanId: s.parentSpanId,
            traceFlags: parseInt(s.flags, 16),
            isRemote: true,
          })
        : api.ROOT_CONTEXT;
      const span = tracer.startSpan(
        s.name,
        { kind: KIND[s.kind], startTime: s.startMs, attributes: s.attributes },
        parent,
      );
      if (s.error !== undefined) span.setStatus({ code: api.SpanStatusCode.ERROR, message: s.error });
      span.end(s.endMs);
    },
    async close(): Promise<void> {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, closeTimeoutMs);
        timer.unref();
      });
      try {
        await Promise.race([provider.shutdown(), late]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
