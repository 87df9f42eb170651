import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

/**
 * The process logger (pino, JSON lines on stdout, or on `destination`). Secrets never reach it:
 * the redact list names the fields that could carry them, as a second line of defence.
 */
export function createLogger(level: string, name: string, destination?: DestinationStream): Logger {
  const options = {
    name,
    level,
    redact: {
      paths: ['*.cookie', '*.authorization', '*.idToken', '*.csrfToken', '*.sessionId', '*.clientSecret', '*.signing', '*.private_jwk'],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
