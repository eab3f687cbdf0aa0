// HTTP metrics, recorded from the access-log record every request already makes (log.ts RequestRecord):
// per route pattern and method a plain array of counts by status and one latency histogram, found with one
// Map lookup by the route's (interned) pattern string. Nothing is built per request; prom-client reads the
// arrays when scraped. Routes are patterns (`/v1/video/tasks/:id`), never paths, and unknown methods are
// counted as OTHER, so the label sets are bounded by the route table.
import { collected, type Sample } from './registry.js';
import { HistogramSeries, LATENCY_BUCKETS } from './series.js';

/** What a request adds to the HTTP metrics (a front process sends these to `serve`). */
export interface ObservedRequest {
  method: string;
  route: string;
  status: number;
  startedMs: number;
  endedMs: number;
  bytesIn?: number;
  bytesOut?: number;
}

const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']);

class RouteSeries {
  /** Requests by status code (index); index 0 also takes codes outside 0-599. */
  readonly statuses = new Float64Array(600);
  readonly duration = new HistogramSeries(LATENCY_BUCKETS);
  bytesIn = 0;
  bytesOut = 0;
  constructor(
    readonly method: string,
    readonly route: string,
  ) {}
}

/** The series last made for each route pattern (most routes take one method). */
const byRoute = new Map<string, RouteSeries>();
/** Every series, by `method route`. */
const all = new Map<string, RouteSeries>();

function seriesFor(method: string, route: string): RouteSeries {
  const m = METHODS.has(method) ? method : 'OTHER';
  const key = `${m} ${route}`;
  let s = all.get(key);
  if (!s) all.set(key, (s = new RouteSeries(m, route)));
  byRoute.set(route, s);
  return s;
}

export function observeRequest(r: ObservedRequest): void {
  let s = byRoute.get(r.route);
  if (s === undefined || s.method !== r.method) s = seriesFor(r.method, r.route);
  const st = r.status;
  s.statuses[st >= 0 && st < 600 ? st : 0]!++;
  s.duration.observe((r.endedMs - r.startedMs) / 1000);
  s.bytesIn += r.bytesIn ?? 0;
  s.bytesOut += r.bytesOut ?? 0;
}

/** Wraps the access-log writer so that every logged request is also counted. */
export function countingRequests<R extends ObservedRequest>(log: (r: R) => void): (r: R) => void {
  return (r) => {
    observeRequest(r);
    log(r);
  };
}

collected(
  'sightflow_http_requests_total',
  'HTTP requests answered, by route pattern, method and status code (499: the client went away first)',
  'counter',
  () => {
    const out: Sample[] = [];
    for (const s of all.values()) {
      for (let code = 0; code < 600; code++) {
        const n = s.statuses[code]!;
        if (n > 0) out.push({ labels: { route: s.route, method: s.method, status: String(code) }, value: n });
      }
    }
    return out;
  },
);

collected(
  'sightflow_http_request_duration_seconds',
  "Time from a request's arrival to its answer (a streamed answer: to its end), by route pattern and method",
  'histogram',
  () => {
    const out: Sample[] = [];
    for (const s of all.values())
      s.duration.samples('sightflow_http_request_duration_seconds', { route: s.route, method: s.method }, out);
    return out;
  },
);

const bytesCollector = (pick: (s: RouteSeries) => number) => () => {
  const out: Sample[] = [];
  for (const s of all.values()) out.push({ labels: { route: s.route, method: s.method }, value: pick(s) });
  return out;
};
collected(
  'sightflow_http_request_body_bytes_total',
  'Request body bytes read, by route pattern and method (counted when the request is answered)',
  'counter',
  bytesCollector((s) => s.bytesIn),
);
collected(
  'sightflow_http_response_body_bytes_total',
  "Response body bytes handed to the socket, by route pattern and method (headers not counted; a stream's bytes counted when it ends)",
  'counter',
  bytesCollector((s) => s.bytesOut),
);

let inFlight: Array<() => number> = [];
/** A server's count of requests in flight, summed over this process's servers. */
export function watchInFlight(read: () => number): () => void {
  inFlight.push(read);
  return () => {
    inFlight = inFlight.filter((f) => f !== read);
  };
}
collected('sightflow_http_requests_in_flight', 'HTTP requests received and not yet answered', 'gauge', () => [
  { value: inFlight.reduce((n, f) => n + f(), 0) },
]);
