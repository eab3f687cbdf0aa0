// pino JSON logs; API keys and Authorization headers never reach a log line.
import { pino, type Logger } from 'pino';

export type { Logger };

/** Buffered (async) writes: one syscall per request would cost more than the request itself. */
export function createLogger(level: string, sync = false): Logger {
  return pino({
    level,
    base: { service: 'sightflow' },
    redact: {
      paths: ['authorization', 'headers.authorization', 'req.headers.authorization', 'key', '*.key', 'apiKey', '*.apiKey', 'token'],
      censor: '[redacted]',
    },
  }, pino.destination({ dest: 1, sync, minLength: sync ? 0 : 4096 }));
}
