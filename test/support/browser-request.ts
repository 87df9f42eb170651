/**
 * One request as a browser holding a cookie jar sends it, without following redirects: the jar's
 * cookies for the URL (by its SameSite rules, given where the request comes from), `Origin` on a
 * POST, and the answer's `Set-Cookie` stored back in the jar. For the steps of a flow a test looks
 * at one by one; browserless-login.ts walks whole sign-ins.
 */
import { request } from 'undici';
import type { IncomingHttpHeaders } from 'node:http';
import type { CookieJar } from './cookie-jar.js';

/** What a page navigation accepts (Chromium's `Accept` for a document). */
export const HTML_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

/** How the request is sent; defaults: a GET navigation typed by the user. */
export interface BrowserRequestOptions {
  method?: 'GET' | 'HEAD' | 'POST';
  /** Default {@link HTML_ACCEPT}; `application/json` for a script's call. */
  accept?: string;
  /** The page or redirect it comes from (SameSite, `Origin`); default: none for GET, the URL itself for POST. */
  initiator?: string;
  /** Replaces the jar's cookies (a test handing a browser someone else's cookie). */
  cookie?: string;
  /** More request headers. */
  headers?: Record<string, string>;
  /** A form body, sent as application/x-www-form-urlencoded. */
  form?: Record<string, string>;
}

/** The answer, body read. */
export interface BrowserResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** `Location` resolved against the request URL, or null. */
  location: string | null;
  /** Every `Set-Cookie` field. */
  setCookies: string[];
  body: string;
}

/** Sends one request to `url` as the browser holding `jar` would (module comment); stores its cookies. */
export async function browserRequest(jar: CookieJar, url: string, options: BrowserRequestOptions = {}): Promise<BrowserResponse> {
  const method = options.method ?? (options.form ? 'POST' : 'GET');
  const initiator = options.initiator ?? (method === 'POST' ? url : undefined);
  const headers: Record<string, string> = { accept: options.accept ?? HTML_ACCEPT, ...options.headers };
  const cookie = options.cookie ?? jar.header(url, initiator === undefined ? { method } : { method, initiator });
  if (cookie !== '') headers.cookie = cookie;
  if (method === 'POST') headers.origin = initiator === undefined ? 'null' : new URL(initiator).origin;
  let body: string | undefined;
  if (options.form) {
    body = new URLSearchParams(options.form).toString();
    headers['content-type'] = 'application/x-www-form-urlencoded';
  }
  const response = await request(url, { method, headers, body });
  const text = await response.body.text();
  const setCookie = response.headers['set-cookie'];
  const setCookies = typeof setCookie === 'string' ? [setCookie] : setCookie ?? [];
  jar.store(setCookies, url);
  const location = typeof response.headers.location === 'string' ? new URL(response.headers.location, url).href : null;
  return { status: response.statusCode, headers: response.headers, location, setCookies, body: text };
}
