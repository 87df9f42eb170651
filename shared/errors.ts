import { errorCode } from './error-code.js';

/**
 * The gateway's client-facing failures: one stable `code` each, the HTTP status, and the exact
 * message of the interface (interface.md §7) or of design.md §5 where the interface leaves it open.
 * Callers match on `code`, never on message text.
 */

export const ERRORS = {
  MISSING_FIELDS: { status: 400, message: 'Missing required fields: name, path, targetUrl' },
  INVALID_JSON: { status: 400, message: 'Invalid JSON body' },
  BAD_REQUEST: { status: 400, message: 'Bad request' },
  NOT_AUTHENTICATED: { status: 401, message: 'Not authenticated' },
  ADMIN_REQUIRED: { status: 403, message: 'Admin access required' },
  INVALID_CSRF: { status: 403, message: 'Invalid CSRF token' },
  ACCESS_DENIED: { status: 403, message: 'Access denied' },
  INSUFFICIENT_SCOPE: { status: 403, message: 'Insufficient scope' },
  TOKENS_CANNOT_MANAGE_TOKENS: { status: 403, message: 'Tokens cannot manage tokens' },
  SESSIONS_SCOPE_REQUIRED: { status: 403, message: "Ending an administrator's sessions needs a token with the sessions scope" },
  SERVICE_NOT_FOUND: { status: 404, message: 'Service not found' },
  TOKEN_NOT_FOUND: { status: 404, message: 'Token not found' },
  SESSION_NOT_FOUND: { status: 404, message: 'Session not found' },
  NOT_FOUND: { status: 404, message: 'Not found' },
  METHOD_NOT_ALLOWED: { status: 405, message: 'Method not allowed' },
  REQUEST_TIMEOUT: { status: 408, message: 'Request timeout' },
  PATH_IN_USE: { status: 409, message: 'Path already in use' },
  PRECONDITION_FAILED: { status: 412, message: 'Precondition failed' },
  BODY_TOO_LARGE: { status: 413, message: 'Request body too large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'Content-Type must be application/json' },
  RATE_LIMITED: { status: 429, message: 'Too many requests, please try again later' },
  HEADER_FIELDS_TOO_LARGE: { status: 431, message: 'Request header fields too large' },
  INTERNAL: { status: 500, message: 'Internal server error' },
  BAD_GATEWAY: { status: 502, message: 'Bad gateway' },
  SERVICE_DISABLED: { status: 503, message: 'Service is disabled' },
  SERVICE_UNAVAILABLE: { status: 503, message: 'Service unavailable' },
  SESSION_STORE_UNAVAILABLE: { status: 503, message: 'Session store unavailable' },
  IDENTITY_PROVIDER_UNAVAILABLE: { status: 503, message: 'Identity provider unavailable' },
  GATEWAY_TIMEOUT: { status: 504, message: 'Gateway timeout' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERRORS;

/**
 * A failure the client may see. `message` defaults to the table's; `fields` carries per-field
 * validation reasons (design.md §5: `{ error, fields }`); `headers` are added to the response
 * (for example `Allow` on 405, `Retry-After` on 429).
 */
export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly fields: Record<string, string> | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(
    code: ErrorCode,
    options: { message?: string; fields?: Record<string, string>; headers?: Record<string, string> } = {},
  ) {
    super(options.message ?? ERRORS[code].message);
    this.name = 'GatewayError';
    this.code = code;
    this.status = ERRORS[code].status;
    this.fields = options.fields;
    this.headers = options.headers;
  }

  /** The JSON body the client receives: `{ "error": message }` plus `fields` when present. */
  toJSON(): { error: string; fields?: Record<string, string> } {
    return this.fields ? { error: this.message, fields: this.fields } : { error: this.message };
  }
}

/**
 * The code of the error a backend throws when it cannot be reached: Redis, the only backend
 * outside the process (shared/backends/redis/connection/redis-errors.ts).
 */
const BACKEND_UNAVAILABLE = 'REDIS_UNAVAILABLE';

/**
 * The GatewayError a failure answers with (design.md §5 "backend unavailable"): a GatewayError as
 * it is; a backend that cannot be reached (an error whose code, or a cause's, is
 * `REDIS_UNAVAILABLE`) 503 `Service unavailable`, whichever page or API path met it; undefined
 * for anything else, which is unexpected (the caller logs it and answers 500).
 */
export function gatewayErrorOf(error: unknown): GatewayError | undefined {
  if (error instanceof GatewayError) return error;
  return errorCode(error) === BACKEND_UNAVAILABLE ? new GatewayError('SERVICE_UNAVAILABLE') : undefined;
}
