import { errorCode } from '../../../error-code.js';

/**
 * ioredis errors carry the failed command's arguments (`command.args`), and for a session write
 * or an access-log batch those hold secrets (CSRF token, ID token, query strings). Errors leaving
 * shared/backends/redis/ are therefore rebuilt from the original's name, code and message only.
 */
export class RedisUnavailableError extends Error {
  /** Stable code callers match on. */
  readonly code = 'REDIS_UNAVAILABLE';
  /** The original error's code (`ECONNREFUSED`, `ETIMEDOUT`…) when it had one. */
  readonly causeCode: string | undefined;

  constructor(operation: string, cause: unknown) {
    super(`${operation} failed: ${summary(cause)}`);
    this.name = 'RedisUnavailableError';
    this.causeCode = errorCode(cause);
  }
}

/** `name: message` of an error, without any of its other properties. */
export function summary(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}
