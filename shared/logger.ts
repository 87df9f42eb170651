import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * The process logger (pino, JSON lines on stdout). Secrets never reach it: the redact list names
 * the fields that could carry them, as a second line of defence.
 */
export function createLogger(level: string, name: string): Logger {
  return pino({
    name,
    level,
    redact: {
      paths: ['*.cookie', '*.authorization', '*.idToken', '*.csrfToken', '*.sessionId', '*.clientSecret', '*.signing', '*.private_jwk'],
      censor: '[redacted]',
    },
  });
}
