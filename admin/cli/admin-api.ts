/**
 * The CLI's calls to a gateway's admin API with an admin API token (design.md §4.8): where and with
 * what from the environment, one request each with Node's fetch, and every failure as a
 * {@link CliError} whose message says what to do.
 */
import { errorCode } from '../../shared/error-code.js';

/** A failure the CLI reports as its message (one or more lines) and exit status 1. */
export class CliError extends Error {
  override name = 'CliError';
}

/** Where the admin API is and the token to call it with. */
export interface AdminApi {
  /** GATEHOUSE_ADMIN_URL: the admin API's origin (ADMIN_URL, or the admin port). */
  baseUrl: URL;
  /** GATEHOUSE_TOKEN: `ght_…`. */
  token: string;
}

/** How long one call may take, in ms, so a CI job never hangs on an unanswering gateway. */
const REQUEST_TIMEOUT_MS = 60_000;

/**
 * GATEHOUSE_ADMIN_URL and GATEHOUSE_TOKEN from `env`.
 * @throws {CliError} naming the variable that is missing or wrong.
 */
export function adminApiFromEnv(env: NodeJS.ProcessEnv): AdminApi {
  const url = env.GATEHOUSE_ADMIN_URL?.trim();
  const token = env.GATEHOUSE_TOKEN?.trim();
  if (!url) throw new CliError('GATEHOUSE_ADMIN_URL is not set: the origin of the gateway\'s admin API, such as https://admin.gateway.example.com (ADMIN_URL) or http://127.0.0.1:8081 (the admin port).');
  if (!token) throw new CliError('GATEHOUSE_TOKEN is not set: an admin API token (ght_…), made in the console under API tokens; read scope for export, write for plan and apply.');
  let baseUrl: URL;
  try {
    baseUrl = new URL(url);
  } catch {
    throw new CliError(`GATEHOUSE_ADMIN_URL is not a URL: ${url}`);
  }
  if (baseUrl.protocol !== 'http:' && baseUrl.protocol !== 'https:') throw new CliError(`GATEHOUSE_ADMIN_URL must be an http: or https: URL: ${url}`);
  return { baseUrl, token };
}

/**
 * Calls `method path` with the token, sending `body` (JSON text) when given, and resolves with the
 * parsed JSON answer of a 2xx.
 * @throws {CliError} when the gateway cannot be reached or answers anything else: its status, its
 *   `error` and each of its `fields` on a line of its own (`services[2].path: must start with /`).
 */
export async function callAdminApi(api: AdminApi, method: 'GET' | 'POST', path: string, body?: string): Promise<unknown> {
  const url = new URL(path, api.baseUrl);
  const headers: Record<string, string> = { accept: 'application/json', authorization: `Bearer ${api.token}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(url, { method, headers, body, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  } catch (error) {
    throw new CliError(`cannot reach ${url.origin}: ${reasonOf(error)}`);
  }
  const text = await response.text();
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    answer = undefined;
  }
  if (response.ok && answer !== undefined) return answer;
  throw new CliError(describeFailure(response.status, answer, text, url));
}

/** A refused call in words: the status and the API's error, its fields, and a hint for 401 and 403. */
function describeFailure(status: number, answer: unknown, text: string, url: URL): string {
  const { error, fields } = (typeof answer === 'object' && answer !== null ? answer : {}) as { error?: unknown; fields?: unknown };
  const lines = [`${url.origin}${url.pathname} answered ${status}: ${typeof error === 'string' ? error : text.slice(0, 200) || '(no body)'}`];
  if (typeof fields === 'object' && fields !== null) {
    for (const [field, reason] of Object.entries(fields)) lines.push(`  ${field}: ${String(reason)}`);
  }
  if (status === 401) lines.push('GATEHOUSE_TOKEN is not a live token of this gateway (unknown, expired or revoked).');
  if (status === 403 && error === 'Insufficient scope') lines.push('GATEHOUSE_TOKEN is a read token: plan and apply need a write token.');
  return lines.join('\n');
}

/** Why fetch failed: undici puts the system error (ECONNREFUSED …) in `cause`. */
function reasonOf(error: unknown): string {
  const cause = error instanceof Error ? error.cause : undefined;
  const code = errorCode(cause);
  if (code !== undefined) return code;
  if (cause instanceof Error) return cause.message;
  return error instanceof Error ? error.message : String(error);
}
