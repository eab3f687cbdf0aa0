// One SERVER span per HTTP request, made from the access-log record every request already makes (log.ts
// RequestRecord), the way the HTTP metrics are counted: app.ts wraps the access-log writer with it only while
// spans are exported, so a server without an OTLP endpoint runs none of this.
import { lineTraceId, type RequestLine } from '../base/request-log-line.js';
import { nextSpanId, recordSpan, type SpanRecord } from './spans.js';
import { startedTraceId, STARTED_FLAGS } from './traceparent.js';

/** The exchange's route for a request that matched none (http/exchange.ts). */
const UNMATCHED = '(unmatched)';

/** The request's span: named `METHOD /route/:pattern`, under the caller's span when it sent a traceparent. */
export function serverSpan(r: RequestLine): SpanRecord {
  const routed = r.route !== UNMATCHED;
  const attributes: SpanRecord['attributes'] = {
    'http.request.method': r.method,
    'url.path': r.path,
    'http.response.status_code': r.status,
    'sightflow.request_id': r.requestId,
  };
  if (routed) attributes['http.route'] = r.route;
  if (r.project !== undefined) attributes['sightflow.project_id'] = r.project;
  if (r.bytesIn) attributes['http.request.body.size'] = r.bytesIn;
  if (r.bytesOut) attributes['http.response.body.size'] = r.bytesOut;
  return {
    name: routed ? `${r.method} ${r.route}` : r.method,
    kind: 'server',
    traceId: lineTraceId(r) ?? startedTraceId(),
    spanId: r.spanId ?? nextSpanId(),
    parentSpanId: r.parentSpanId,
    flags: r.traceFlags ?? STARTED_FLAGS,
    startMs: r.startedMs,
    endMs: r.endedMs,
    attributes,
    // A 4xx is the client's error, not the server's span failing.
    error: r.status >= 500 ? `HTTP ${r.status}` : undefined,
  };
}

/** Wraps the access-log writer so that every logged request is also a span. */
export function spanningRequests<R extends RequestLine>(log: (r: R) => void): (r: R) => void {
  return (r) => {
    recordSpan(serverSpan(r));
    log(r);
  };
}
