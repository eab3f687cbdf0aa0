// pino JSON logs; API keys and Authorization headers never reach a log line.
import { pino, type Logger } from 'pino';

export type { Logger };

/** Buffered (async) writes: one syscall per request would cost more than the request itself. */
export function createLogger(level: string, sync = false): Logger {
  const destination = pino.destination({ dest: 1, sync, minLength: sync ? 0 : 4096 });
  const logger = pino({
    level,
    base: { service: 'sightflow' },
    redact: {
      paths: ['authorization', 'headers.authorization', 'req.headers.authorization', 'key', '*.key', 'apiKey', '*.apiKey', 'token'],
      censor: '[redacted]',
    },
  }, destination);
  requestLoggers.set(logger, pino({ level, base: { service: 'sightflow' } }, destination));
  return logger;
}

const requestLoggers = new WeakMap<Logger, Logger>();

/** Same destination and level, no redaction: for the request line, whose fields are never secret. */
export function requestLogger(log: Logger): Logger {
  return requestLoggers.get(log) ?? log;
}
