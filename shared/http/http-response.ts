import type { ServerResponse } from 'node:http';
import { GatewayError } from '../errors.js';
import { html } from '../pages/html.js';
import { requestIdOf, withRequestId } from './request-id.js';
import { isGrpcRequest, sendGrpcFailure } from './grpc-failure.js';

/**
 * Writes `body` as a JSON response with `status`. Adds `Cache-Control: no-store` because every
 * JSON answer of the gateway is per-user or live.
 */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string | string[]> = {},
): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    ...withRequestId(res, headers),
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(payload),
    'cache-control': 'no-store',
  });
  res.end(payload);
}

/**
 * Writes a {@link GatewayError} as `{ "error": message }` (interface.md §2.6) with its status and
 * headers; to a gRPC or gRPC-Web call (by its request's `Content-Type`) as a gRPC status instead
 * (grpc-failure.ts), which is all its client can read.
 */
export function sendError(res: ServerResponse, error: GatewayError): void {
  const contentType = res.req?.headers['content-type'];
  if (isGrpcRequest(contentType)) sendGrpcFailure(res, error, contentType!);
  else sendJson(res, error.status, error.toJSON(), error.headers);
}

/** `text/html` in an `Accept` value, in any case (RFC 9110 §12.5.1); compiled once. */
const HTML_MEDIA_TYPE = /text\/html/i;

/**
 * True when a request's `Accept` field value names `text/html`: a browser navigating, which gets
 * a page where an API client gets JSON.
 */
export function acceptsHtml(accept: string | undefined): boolean {
  return accept !== undefined && HTML_MEDIA_TYPE.test(accept);
}

/**
 * Writes an HTML page; `Cache-Control: no-store` since pages show who is signed in. An error page
 * (4xx, 5xx) names the request's id (`X-Request-Id`, design.md §3.10) for the person to quote.
 */
export function sendHtml(
  res: ServerResponse,
  status: number,
  page: string,
  headers: Record<string, string | string[]> = {},
): void {
  const requestId = status >= 400 ? requestIdOf(res) : undefined;
  const html = requestId !== undefined ? withRequestIdLine(page, requestId) : page;
  res.writeHead(status, {
    ...withRequestId(res, headers),
    'content-type': 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(html),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'content-security-policy': "default-src 'self'; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'",
  });
  res.end(html);
}

/** Sends a 302 to `location` (interface.md §4.1 uses 302 for every redirect). */
export function redirect(res: ServerResponse, location: string, headers: Record<string, string | string[]> = {}): void {
  res.writeHead(302, { ...withRequestId(res, headers), location, 'content-length': 0, 'cache-control': 'no-store' });
  res.end();
}

/** `page` with a line naming `requestId` at the end of its main content (shared/pages/layout.ts). */
function withRequestIdLine(page: string, requestId: string): string {
  const end = page.lastIndexOf('</main>');
  if (end === -1) return page;
  const line = String(html`<p class="request-id">Request id <code>${requestId}</code>: quote it when you report this.</p>`);
  return page.slice(0, end) + line + page.slice(end);
}
