// pino JSON logs; API keys and Authorization headers never reach a log line.
import { pino, type Logger } from 'pino';
import { LogSink } from './log-sink.js';

export type { Logger };

/** One sink for every logger of the process, so lines from all of them stay in order. */
let stdoutSink: LogSink | null = null;

/** Buffered writes (log-sink.ts): one syscall per request would cost more than the request itself. */
export function createLogger(level: string): Logger {
  const destination = (stdoutSink ??= new LogSink(1));
  const logger = pino({
    level,
    base: { service: 'sightflow' },
    redact: {
      paths: ['authorization', 'headers.authorization', 'req.headers.authorization', 'key', '*.key', 'apiKey', '*.apiKey', 'token'],
      censor: '[redacted]',
    },
  }, destination);
  destinations.set(logger, destination);
  return logger;
}

const destinations = new WeakMap<Logger, { write(s: string): boolean }>();

export interface RequestRecord {
  requestId: string; method: string; route: string; path: string; status: number; ms: number; project?: string;
}

/**
 * The one-line-per-request log, in pino's JSON shape on the same destination, written without pino's
 * serializer: at ~20k requests/s that machinery cost more CPU than serving the request. Its fields are
 * never secret, so no redaction; user-supplied text (path, request id) is JSON-escaped.
 */
/** Printable ASCII without quote or backslash needs no escaping: the common case, without JSON.stringify. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
function jsonString(v: string): string {
  return PLAIN.test(v) ? `"${v}"` : JSON.stringify(v);
}

/** Route patterns and project ids repeat on every request: escape each once. */
const escapedOnce = new Map<string, string>();
function jsonStringOnce(v: string): string {
  let s = escapedOnce.get(v);
  if (s === undefined) {
    s = jsonString(v);
    if (escapedOnce.size < 10_000) escapedOnce.set(v, s);
  }
  return s;
}

export function requestLogger(log: Logger): (r: RequestRecord) => void {
  const dest = destinations.get(log);
  if (!dest) return (r) => log.info(r, 'request');
  const level = log.levels.values.info!;
  return (r) => {
    if (log.levelVal > level) return;
    const project = r.project === undefined ? '' : `,"project":${jsonStringOnce(r.project)}`;
    dest.write(`{"level":${level},"time":${Date.now()},"service":"sightflow","requestId":${jsonString(r.requestId)},"method":"${r.method}","route":${jsonStringOnce(r.route)},"path":${jsonString(r.path)},"status":${r.status},"ms":${r.ms}${project},"msg":"request"}\n`);
  };
}
