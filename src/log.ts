// pino JSON logs; API keys and Authorization headers never reach a log line.
import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'sightflow' },
    redact: {
      paths: ['authorization', 'headers.authorization', 'req.headers.authorization', 'key', '*.key', 'apiKey', '*.apiKey', 'token'],
      censor: '[redacted]',
    },
  });
}
