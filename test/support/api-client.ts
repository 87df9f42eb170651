import { request } from 'undici';
import type { SignedIn } from './sessions.js';

/** What a request needs of a signed-in client: its session cookie and CSRF token. */
type Credentials = Pick<SignedIn, 'cookie' | 'csrfToken'>;

/** One HTTP answer, body read as text and parsed as JSON when it is JSON. */
export interface ApiResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** Parsed JSON (tests read arbitrary shapes), or undefined when the answer is not JSON. */
  json: any;
}

export interface CallOptions {
  /** Whose session cookie to send; none when absent. */
  as?: Credentials;
  /** The X-CSRF-Token to send; default: the session's own on POST/PUT/PATCH/DELETE; null: none. */
  csrf?: string | null;
  /** An `Authorization` value, sent as is (`Bearer ght_…` for an admin API token, design.md §4.8). */
  authorization?: string;
  /** Other request headers (`if-match`, say), sent as they are. */
  headers?: Record<string, string>;
  /** Sent as JSON with Content-Type application/json. */
  json?: unknown;
  /** Raw body, sent with `contentType` (if any). */
  body?: string | Buffer;
  contentType?: string;
}

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * A tiny client for the gateway's JSON API in tests: `call('POST', '/api/services', { as, json })`.
 * Never throws on an error status; the test asserts it.
 */
export function apiClient(baseUrl: string) {
  return async function call(method: string, path: string, options: CallOptions = {}): Promise<ApiResponse> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.as) headers.cookie = options.as.cookie;
    if (options.authorization !== undefined) headers.authorization = options.authorization;
    const csrf = options.csrf === undefined && MUTATING.has(method) ? options.as?.csrfToken : options.csrf;
    if (csrf) headers['x-csrf-token'] = csrf;
    let body = options.body;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers['content-type'] = 'application/json';
    }
    if (options.contentType) headers['content-type'] = options.contentType;
    const response = await request(baseUrl + path, { method: method as 'GET', headers, body });
    const text = await response.body.text();
    const isJson = String(response.headers['content-type'] ?? '').startsWith('application/json');
    return { status: response.statusCode, headers: response.headers, text, json: isJson ? JSON.parse(text) : undefined };
  };
}

/** What {@link apiClient} returns: `call(method, path, options)`. */
export type ApiCall = ReturnType<typeof apiClient>;

/**
 * Registers a service through `baseUrl`'s admin API as `admin` (session cookie and CSRF token);
 * returns its id.
 * @throws when the API does not answer 201.
 */
export async function createService(baseUrl: string, admin: Credentials, fields: Record<string, unknown>): Promise<string> {
  const created = await apiClient(baseUrl)('POST', '/api/services', { as: admin, json: fields });
  if (created.status !== 201) throw new Error(`creating a service: ${created.status} ${created.text}`);
  return created.json.id as string;
}
