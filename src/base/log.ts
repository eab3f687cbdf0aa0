// pino JSON logs; API keys and Authorization headers never reach a log line.
import { pino, type Logger } from 'pino';
import { LogSink } from './log-sink.js';
import { lineTraceId, RequestLineWriter, type RequestLine } from './request-log-line.js';

export type { Logger };

/** One sink for every logger of the process, so lines from all of them stay in order. */
let stdoutSink: LogSink | null = null;

/** Buffered writes (log-sink.ts): one syscall per request would cost more than the request itself. */
export function createLogger(level: string): Logger {
  const destination = (stdoutSink ??= new LogSink(1));
  const logger = pino(
    {
      level,
      base: { service: 'sightflow' },
      redact: {
        paths: [
          'authorization',
          'headers.authorization',
          'req.headers.authorization',
          'key',
          '*.key',
          'apiKey',
          '*.apiKey',
          'token',
        ],
        censor: '[redacted]',
      },
    },
    destination,
  );
  destinations.set(logger, destination);
  return logger;
}

const destinations = new WeakMap<Logger, LogSink>();

export type { RequestLine as RequestRecord };

/**
 * The one-line-per-request log, in pino's JSON shape on the same destination, written without pino's
 * serializer (request-log-line.ts): at ~100k requests/s that machinery cost more CPU than serving the
 * request. Its fields are never secret, so no redaction; user-supplied text (path, request id) is escaped.
 */
export function requestLogger(log: Logger): (r: RequestLine) => void {
  const dest = destinations.get(log);
  const level = log.levels.values.info!;
  if (!dest) {
    return (r) =>
      log.info(
        {
          requestId: r.requestId,
          trace_id: lineTraceId(r),
          method: r.method,
          route: r.route,
          path: r.path,
          status: r.status,
          ms: Math.round((r.endedMs - r.startedMs) * 100) / 100,
          project: r.project,
        },
        'request',
      );
  }
  const writer = new RequestLineWriter(dest, level, 'sightflow');
  return (r) => {
    if (log.levelVal > level) return;
    writer.write(r);
  };
}
